"""spec=draft's draft model file: the user's path, or the synthetic recipe written into the
cache; nothing for the other spec types; refused where the target's vocabulary differs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError
from benchkit.models.draft import provide_draft_model
from benchkit.models.synthetic import SynthRecipe, model_path_for
from tests.unit.models.test_vocab import TOKENS, gguf_file

Compose = Callable[..., BenchConfig]


def test_no_draft_file_unless_spec_is_draft(compose_cfg: Compose) -> None:
    assert provide_draft_model(compose_cfg()) is None
    assert provide_draft_model(compose_cfg("spec=ngram")) is None
    assert provide_draft_model(compose_cfg("mtp=true", "model=tiny-mtp")) is None


def test_synthetic_draft_is_written_into_the_cache(
    compose_cfg: Compose, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path))
    path = provide_draft_model(compose_cfg("spec=draft"))
    # The same file tiny-moe as a target uses: one copy in the cache.
    assert path == model_path_for(SynthRecipe(), tmp_path)
    assert path is not None and path.stat().st_size > 0


def test_draft_path_is_used_as_given_and_checked(compose_cfg: Compose, tmp_path: Path) -> None:
    mine = tmp_path / "draft.gguf"
    mine.write_bytes(b"GGUF")
    assert provide_draft_model(compose_cfg("spec=draft", f"spec.draft_model.path={mine}")) == mine
    with pytest.raises(UserError, match=r"spec\.draft_model\.path=.*does not exist"):
        provide_draft_model(compose_cfg("spec=draft", f"spec.draft_model.path={tmp_path}/no"))


def test_a_draft_of_another_vocabulary_is_refused_before_a_server_starts(
    compose_cfg: Compose, tmp_path: Path
) -> None:
    target = gguf_file(tmp_path / "target.gguf", TOKENS)
    other = gguf_file(tmp_path / "other.gguf", TOKENS[:100])
    cfg = compose_cfg("spec=draft", f"spec.draft_model.path={other}")
    assert provide_draft_model(cfg) == other  # without the target's file, nothing to compare
    with pytest.raises(UserError, match=r"does not share the vocabulary of the target tiny-moe"):
        provide_draft_model(cfg, target)
    same = gguf_file(tmp_path / "same.gguf", TOKENS)
    assert provide_draft_model(compose_cfg("spec=draft", f"spec.draft_model.path={same}"), target)

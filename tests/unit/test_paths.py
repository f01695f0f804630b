"""benchkit.paths: the cache root and llama-quantize as config keys over the environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchkit import paths
from benchkit.errors import UserError
from benchkit.models.synthetic import find_quantize


@pytest.fixture(autouse=True)
def _no_job_config() -> Iterator[None]:
    # The keys are process-wide: leave none behind for the next test.
    paths.use_config(cache_dir=None, llama_quantize=None)
    yield
    paths.use_config(cache_dir=None, llama_quantize=None)


def test_cache_dir_without_a_job_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path / "env"))
    assert paths.cache_dir() == tmp_path / "env"
    monkeypatch.delenv("BENCHKIT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "xdg" / "benchkit"


def test_the_jobs_cache_dir_key_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path / "env"))
    paths.use_config(cache_dir=str(tmp_path / "key"), llama_quantize=None)
    assert paths.cache_dir() == tmp_path / "key"
    # The next job in the same process leaves the key unset: back to the environment.
    paths.use_config(cache_dir=None, llama_quantize=None)
    assert paths.cache_dir() == tmp_path / "env"


def test_the_llama_quantize_key_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, env = tmp_path / "key-quantize", tmp_path / "env-quantize"
    key.touch()
    env.touch()
    monkeypatch.setenv("BENCHKIT_LLAMA_QUANTIZE", str(env))
    assert find_quantize() == env
    paths.use_config(cache_dir=None, llama_quantize=str(key))
    assert find_quantize() == key


def test_a_missing_llama_quantize_names_the_key_it_came_from(tmp_path: Path) -> None:
    paths.use_config(cache_dir=None, llama_quantize=str(tmp_path / "nope"))
    with pytest.raises(UserError, match=r"^llama_quantize=.* is not a file"):
        find_quantize()

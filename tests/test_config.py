"""Config composition: defaults, overrides, and compose-time errors that name the culprit."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hydra.errors import HydraException

from benchkit.config.schema import BackendName, BenchConfig, CacheType, FlashAttn, OutputPolicy
from benchkit.paths import repo_root

Compose = Callable[..., BenchConfig]


def test_defaults_are_the_default_study(compose_cfg: Compose) -> None:
    cfg = compose_cfg()
    assert cfg.backend.name is BackendName.cpu
    assert cfg.model.name == "tiny-moe"
    assert cfg.model.synthetic is not None and cfg.model.synthetic.arch == "qwen3moe"
    assert cfg.workload.fixture == "mini"
    assert cfg.slots == 4 and cfg.mtp is False and cfg.repeats == 1
    assert cfg.workload.output_policy is OutputPolicy.fixture


def test_sampling_profiles(compose_cfg: Compose) -> None:
    q = compose_cfg("sampling=qwen-recommended").sampling
    assert (q.temperature, q.top_p, q.top_k, q.presence_penalty) == (0.7, 0.8, 20, 1.5)
    u = compose_cfg("sampling=unspecified").sampling
    assert u.send is False
    g = compose_cfg("sampling=greedy").sampling
    assert g.temperature == 0.0 and g.top_k == 1


def test_seed_server_profile(compose_cfg: Compose) -> None:
    s = compose_cfg("server=seed").server
    assert (s.batch, s.ubatch) == (4096, 2048)
    assert s.flash_attn is FlashAttn.on
    assert s.cache_type_k is CacheType.q8_0 and s.cache_type_v is CacheType.q8_0


def test_overrides_reach_typed_config(compose_cfg: Compose) -> None:
    cfg = compose_cfg("slots=3", "backend=hip", "server.ubatch=1024", "mtp=true")
    assert cfg.slots == 3 and cfg.mtp is True
    assert cfg.backend.name is BackendName.hip
    assert cfg.backend.device_env == "HIP_VISIBLE_DEVICES"
    assert cfg.server.ubatch == 1024


def test_cache_and_quantize_keys_default_to_the_environment(compose_cfg: Compose) -> None:
    # Unset keys (null in conf/config.yaml) leave benchkit.paths on its environment fallback.
    cfg = compose_cfg()
    assert cfg.cache_dir is None and cfg.llama_quantize is None
    cfg = compose_cfg("cache_dir=/tmp/bk-cache", "llama_quantize=/opt/llama-quantize")
    assert cfg.cache_dir == "/tmp/bk-cache" and cfg.llama_quantize == "/opt/llama-quantize"


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("slotz=3", "slotz"),
        ("server.batchh=3", "batchh"),
        ("backend=foo", "backend/foo"),
        ("server.flash_attn=maybe", "maybe"),
        ("slots=abc", "slots"),
    ],
)
def test_bad_overrides_fail_at_compose_naming_the_key(
    compose_cfg: Compose, override: str, named: str
) -> None:
    with pytest.raises((HydraException, Exception)) as err:
        compose_cfg(override)
    text = str(err.value) + str(err.value.__cause__ or "")
    assert named in text


def test_cli_cfg_job_and_misspelt_key() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "benchkit", "slots=3", "--cfg", "job"],
        capture_output=True, text=True, cwd=repo_root(), check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "\nslots: 3\n" in "\n" + ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "benchkit", "slotz=3"],
        capture_output=True, text=True, cwd=repo_root(), check=False,
    )  # fmt: skip
    assert bad.returncode != 0
    assert "slotz" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_sweep_whose_report_cannot_be_written_exits_non_zero(tmp_path: Path) -> None:
    """A hostile user's sweep with `study.anchors=[/tmp/nope]` measured its job, wrote no
    report (the anchor is no folder) and exited 0; now it exits 1 and says so."""
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit", "-m", "slots=0", "workload.units=2",
         f"study.anchors=[{tmp_path / 'nope'}]", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, cwd=repo_root(), check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "the sweep's report could not be rendered" in proc.stderr
    assert "Traceback" not in proc.stderr

"""An engine job (backend=vllm / sglang) end to end through benchkit's job runner, with
tests/engine_standin.py standing in for the engine: neither vLLM nor SGLang can run on a CPU
machine. This checks benchkit's wiring (command line to process, API key through the
environment only, identity through /v1/models and /server_info, replay, /metrics under
llama-server's keys, one-sentence failures), not the engines."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config import BenchConfig
from benchkit.job import JobContext, run_job
from benchkit.paths import repo_root
from benchkit.server import engines

STANDIN = repo_root() / "tests" / "engine_standin.py"


@pytest.fixture
def gpu_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine_unavailable wants nvidia-smi or rocm-smi: pretend this machine has one."""
    real = shutil.which
    monkeypatch.setattr(
        engines, "which", lambda n: "/usr/bin/nvidia-smi" if n == "nvidia-smi" else real(n)
    )


def run(
    compose_cfg: Callable[..., BenchConfig], tmp_path: Path, engine: str, *extra: str
) -> tuple[dict, dict]:  # type: ignore[type-arg]
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir(exist_ok=True)
    (ckpt / "config.json").write_text("{}")
    cfg = compose_cfg(
        f"backend={engine}",
        f"backend.launcher=[{sys.executable},{STANDIN},{engine}]",
        f"model.path={ckpt}",
        "workload.units=1",
        "slots=2",
        "resume=false",
        *extra,
    )
    job = tmp_path / "job"
    result = run_job(cfg, JobContext(job_dir=job, label="0", alias_tag="t-0"))
    argv_file = tmp_path / "argv.json"
    seen = json.loads(argv_file.read_text()) if argv_file.exists() else {}
    return result, seen


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_an_engine_job_runs_through_benchkits_wiring(
    engine: str,
    compose_cfg: Callable[..., BenchConfig],
    tmp_path: Path,
    gpu_here: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STANDIN_ARGS_OUT", str(tmp_path / "argv.json"))
    monkeypatch.setenv("BENCHKIT_API_KEY", "sk-standin-secret")
    result, seen = run(compose_cfg, tmp_path, engine)
    assert result["status"] == "complete", result["reason"]
    m = result["metrics"]
    assert m["units_completed"] == m["units_planned"] == 1 and m["calls_failed"] == 0
    slots_flag = "--max-num-seqs" if engine == "vllm" else "--max-running-requests"
    argv = seen["argv"]
    assert argv[argv.index(slots_flag) + 1] == "2"
    alias = result["provenance"]["server"]["alias"]
    assert argv[argv.index("--served-model-name") + 1] == alias
    assert result["provenance"]["server"]["props"]["total_slots"] == 2
    assert result["provenance"]["server_build"]["engine"] == engine
    # The key reached the engine (vLLM: environment; SGLang: a --config file) but no argv.
    assert "sk-standin-secret" not in " ".join(argv)
    if engine == "vllm":
        assert seen["vllm_api_key_set"]
    else:
        assert "--config" in argv and not Path(argv[argv.index("--config") + 1]).exists()
    assert m["server"]["engine"] == engine
    assert m["server"]["tokens_predicted"] == m["completion_tokens"]
    for f in (tmp_path / "job").rglob("*"):
        if f.is_file():
            assert "sk-standin-secret" not in f.read_text(errors="replace"), f


def test_an_engine_that_runs_another_slot_count_is_not_measured(
    compose_cfg: Callable[..., BenchConfig],
    tmp_path: Path,
    gpu_here: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STANDIN_SLOTS_OFF", "1")
    result, _ = run(compose_cfg, tmp_path, "sglang")
    assert result["status"] == "failed"
    assert (
        "not this job's" in result["reason"]
        and "3 sequences at once, expected 2" in (result["reason"])
    )
    assert not (tmp_path / "job" / "calls.jsonl").read_text().strip()


def test_without_a_gpu_an_engine_job_is_unavailable_with_the_reason(
    compose_cfg: Callable[..., BenchConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shutil.which
    monkeypatch.setattr(
        engines, "which", lambda n: None if n in ("nvidia-smi", "rocm-smi", "amd-smi") else real(n)
    )
    result, _ = run(compose_cfg, tmp_path, "vllm")
    assert result["status"] == "unavailable"
    assert result["reason"].startswith("no CUDA or ROCm device: vLLM needs an NVIDIA or AMD GPU")

"""An engine job (backend=vllm / sglang) end to end through benchkit's job runner, with
tests/engine_standin.py standing in for the engine: neither vLLM nor SGLang can run on a CPU
machine. This checks benchkit's wiring (command line to process, API key through the
environment only, identity through /v1/models and /server_info, replay, /metrics under
llama-server's keys, one-sentence failures), not the engines."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.server import vllm_sglang
from tests.unit.server.conftest import run


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
        vllm_sglang,
        "which",
        lambda n: None if n in ("nvidia-smi", "rocm-smi", "amd-smi") else real(n),
    )
    result, _ = run(compose_cfg, tmp_path, "vllm")
    assert result["status"] == "unavailable"
    assert result["reason"].startswith("no CUDA or ROCm device: vLLM needs an NVIDIA or AMD GPU")

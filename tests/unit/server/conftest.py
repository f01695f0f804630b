"""Engine jobs without a GPU: tests/engine_standin.py stands in for vLLM and SGLang (and, as
an OpenAI-compatible server with /props, for a server someone else started)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.job.record import JobContext
from benchkit.job.run import run_job
from benchkit.paths import repo_root
from benchkit.server import vllm_sglang

STANDIN = repo_root() / "tests" / "engine_standin.py"


@pytest.fixture
def gpu_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine_unavailable wants nvidia-smi or rocm-smi: pretend this machine has one."""
    real = shutil.which
    monkeypatch.setattr(
        vllm_sglang, "which", lambda n: "/usr/bin/nvidia-smi" if n == "nvidia-smi" else real(n)
    )


def run(
    compose_cfg: Callable[..., BenchConfig], tmp_path: Path, engine: str, *extra: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One job of `engine` (vllm or sglang) on the stand-in: (result, what the stand-in was
    started with, when STANDIN_ARGS_OUT=<tmp_path>/argv.json is set)."""
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

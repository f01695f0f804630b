"""A disk that fills during a job (issue #31): the replay stops with one sentence, what was
measured is the result, and result.json still fits (benchkit.job.folder keeps room for it).
The engine stand-in serves the calls: what is tested is the disk, not the server (the real
llama-server on a full tmpfs: tests/reliability/test_job_trust.py)."""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.client.replay import RecordSink
from benchkit.config.schema import BenchConfig
from tests.unit.server.conftest import run

Compose = Callable[..., BenchConfig]


def test_a_full_disk_in_the_replay_is_a_sentence_and_a_written_result(
    compose_cfg: Compose,
    tmp_path: Path,
    gpu_here: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """calls.jsonl's second write hits ENOSPC: the replay stops, the first call stays, and
    result.json (room kept for it) says why in one sentence."""

    real = RecordSink.write
    done: list[int] = []

    def write(self: RecordSink, rec: object) -> None:
        if done:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        done.append(1)
        real(self, rec)  # type: ignore[arg-type]

    monkeypatch.setattr(RecordSink, "write", write)
    run(compose_cfg, tmp_path, "vllm", "workload.units=2", "slots=1")
    written = json.loads((tmp_path / "job" / "result.json").read_text())
    assert written["status"] == "incomplete"
    assert written["reason"].startswith("cannot write the calls to ")
    assert "No space left on device" in written["reason"] and "free space" in written["reason"]
    assert "the calls before are kept" in written["reason"] and "\n" not in written["reason"]
    assert len((tmp_path / "job" / "calls.jsonl").read_text().splitlines()) == 1
    assert written["metrics"]["calls_completed"] >= 1  # what was measured is the result
    assert not (tmp_path / "job" / "error.txt").exists()

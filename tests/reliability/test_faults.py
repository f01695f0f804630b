"""Faults during a sweep, against the real llama-server: killed, hung, never started."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from pathlib import Path

import pytest

from tests.reliability.conftest import (
    lines,
    no_zombies_or_orphans,
    result,
    run,
    server_pids,
    start,
    wait_for,
)

pytestmark = pytest.mark.slow


def test_server_killed_mid_job_keeps_records_and_the_sweep_goes_on(
    tmp_path: Path, tag: str
) -> None:
    sweep = tmp_path / tag
    proc = start("-m", "slots=1,2", "workload.units=2", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    calls = sweep / "0" / "calls.jsonl"
    wait_for(lambda: len(lines(calls)) >= 3, 300, "three calls of job 0")
    (pid,) = wait_for(lambda: server_pids(f"{tag}-0"), 30, "job 0's server")
    os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    r0, r1 = result(sweep / "0"), result(sweep / "1")
    assert r0["status"] == "incomplete"
    assert "died" in r0["reason"]
    # Every record made before the kill is still there, each a whole JSON line.
    recs = lines(calls)
    assert len(recs) >= 3 and sum(r["ok"] for r in recs) >= 3
    assert r0["metrics"]["calls_completed"] == sum(r["ok"] for r in recs)
    # The next job started cleanly on its own server.
    assert r1["status"] == "complete", r1["reason"]
    no_zombies_or_orphans(tag)
    md = (sweep / "report" / "report.md").read_text()
    assert "incomplete" in md and "died" in md


def test_server_that_hangs_is_detected_and_stopped(tmp_path: Path, tag: str) -> None:
    sweep = tmp_path / tag
    proc = start(
        "-m",
        "slots=1",
        "workload.units=2",
        "server.stall_timeout_s=3",
        "server.job_deadline_s=300",
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )
    calls = sweep / "0" / "calls.jsonl"
    wait_for(lambda: len(lines(calls)) >= 2, 300, "two calls of job 0")
    (pid,) = wait_for(lambda: server_pids(f"{tag}-0"), 30, "job 0's server")
    os.kill(pid, signal.SIGSTOP)  # alive, port open, silent: a hung server
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    # Its one job incomplete: nothing was measured whole, so the sweep exits 1.
    assert proc.returncode == 1, err[-2000:]
    assert "no job of the sweep completed" in err
    r0 = result(sweep / "0")
    assert r0["status"] == "incomplete"
    assert "stopped responding" in r0["reason"]
    stalled = [r for r in lines(calls) if not r["ok"]]
    assert stalled and "stalled" in stalled[0]["error"]
    no_zombies_or_orphans(tag)


def test_job_deadline_ends_the_job_with_the_reason(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run("slots=1", "server.job_deadline_s=2", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-2000:]
    r = result(run_dir)
    assert r["status"] == "incomplete"
    assert "job deadline of 2 s" in r["reason"]
    # The call in flight when the deadline passed is recorded as cancelled, not lost.
    assert any("cancelled" in (x["error"] or "") for x in lines(run_dir / "calls.jsonl"))
    no_zombies_or_orphans(tag)


@pytest.mark.parametrize(
    ("override", "expect"),
    [
        ("server.extra_args=[--no-such-flag]", "no-such-flag"),
        ("server.extra_args=[--ctx-size,lots]", "exited with code"),
    ],
)
def test_server_that_fails_to_start_gives_the_reason_from_its_log(
    tmp_path: Path, tag: str, override: str, expect: str
) -> None:
    run_dir = tmp_path / tag
    p = run(*override.split(), "workload.units=1", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1
    r = result(run_dir)
    assert r["status"] == "failed"
    assert expect in r["reason"]
    assert "\n" not in r["reason"]
    assert "Traceback" not in p.stderr
    no_zombies_or_orphans(tag)


def test_model_that_does_not_load(tmp_path: Path, tag: str) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 64)
    run_dir = tmp_path / tag
    p = run(f"model.path={bad}", "workload.units=1", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1
    r = result(run_dir)
    assert r["status"] == "failed"
    assert "llama-server exited with code" in r["reason"]
    assert "load" in r["reason"].lower() or "gguf" in r["reason"].lower()


def test_port_taken_between_choice_and_start(
    tmp_path: Path, tag: str, monkeypatch: pytest.MonkeyPatch, compose_cfg
) -> None:
    """Someone binds the chosen port first: llama-server (never --reuse-port) must fail."""
    from benchkit.job import run as job_mod

    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.bind(("127.0.0.1", 0))  # bound, not listening: invisible to a connect probe
    port = squatter.getsockname()[1]
    monkeypatch.setattr(job_mod, "free_port", lambda host="127.0.0.1": port)
    try:
        cfg = compose_cfg("workload.units=1", "slots=1")
        res = job_mod.run_job(cfg, job_mod.JobContext(job_dir=tmp_path / tag, alias_tag=tag))
    finally:
        squatter.close()
    assert res["status"] == "failed"
    assert "bind" in res["reason"].lower() or "taken" in res["reason"]
    no_zombies_or_orphans(tag)

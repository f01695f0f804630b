"""Ctrl-C (and SIGTERM, as `kill` or `timeout` sends it) stops a sweep cleanly; running the
same command again resumes it."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.reliability.conftest import lines, no_zombies_or_orphans, result, run, start, wait_for

pytestmark = pytest.mark.slow


def test_sigint_then_rerun_resumes(tmp_path: Path, tag: str) -> None:
    first = tmp_path / "sweeps" / f"{tag}a"
    args = ("-m", "slots=1,2", "workload.units=1")
    proc = start(*args, f"hydra.sweep.dir={first}", cwd=tmp_path)
    wait_for(lambda: (first / "0" / "result.json").exists(), 600, "job 0 to finish")
    wait_for(lambda: len(lines(first / "1" / "calls.jsonl")) >= 2, 300, "two calls of job 1")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert f"Run the same command again with hydra.sweep.dir={first} to resume" in err
    assert "Traceback" not in err
    # The sweep's report, from the jobs that ended (issue #31: there was none after Ctrl-C).
    assert (first / "report" / "report.html").exists()
    r1 = result(first / "1")
    assert r1["status"] == "incomplete" and "Ctrl-C" in r1["reason"]
    assert r1["metrics"]["calls_completed"] >= 2
    no_zombies_or_orphans(f"{tag}a")

    # The same command into a new sweep folder reuses nothing of the first unless told to
    # (issue #31: a folder beside it is not evidence); resume_from names the first.
    second = tmp_path / "sweeps" / f"{tag}b"
    p = run(*args, f"hydra.sweep.dir={second}", f"resume_from={first}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    a, b = result(second / "0"), result(second / "1")
    assert a["status"] == b["status"] == "complete"
    assert a["provenance"]["reused_from"] == str(first / "0")
    assert a["metrics"] == result(first / "0")["metrics"]
    # The reused result keeps what was true when it was measured, and records the reuse.
    measured = result(first / "0")["provenance"]
    for key in ("started_utc", "finished_utc", "host_load_start", "host_load_end", "client"):
        assert a["provenance"][key] == measured[key], key
    assert a["provenance"]["client"]["path"]  # which client timed the calls, kept
    reuse = a["provenance"]["reuse"]
    assert reuse["from"] == str(first / "0")
    assert reuse["started_utc"] >= measured["finished_utc"] and reuse["finished_utc"]
    assert "reused_from" not in b["provenance"]  # the interrupted job is measured again

    # Again into the same folder (a lease that resumes where the last one stopped): every job
    # is kept in place, and a reused job still names the pass that measured it.
    calls_before = lines(second / "1" / "calls.jsonl")
    p = run(*args, f"hydra.sweep.dir={second}", cwd=tmp_path)  # its own folder: no resume_from
    assert p.returncode == 0, p.stderr[-2000:]
    a2, b2 = result(second / "0"), result(second / "1")
    assert a2["provenance"]["reused_from"] == str(first / "0")
    assert b2["provenance"]["reused_from"] == str(second / "1")
    assert b2["provenance"]["measured_utc"] == b["provenance"]["started_utc"]
    assert b2["metrics"] == b["metrics"]
    assert lines(second / "1" / "calls.jsonl") == calls_before

    # resume=false measures everything again.
    third = tmp_path / "sweeps" / f"{tag}c"
    p = run("slots=1", "workload.units=1", "resume=false", f"hydra.run.dir={third}", cwd=tmp_path)
    assert p.returncode == 0 and "reused_from" not in result(third)["provenance"]


def test_sigterm_stops_like_ctrl_c_and_leaves_no_server(tmp_path: Path, tag: str) -> None:
    """`timeout` or `kill` sends SIGTERM: the job is written as incomplete with that reason and
    its llama-server is stopped (before, Python died at once and the server ran on)."""
    run_dir = tmp_path / "runs" / tag
    proc = start("slots=1", "workload.units=2", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    wait_for(lambda: len(lines(run_dir / "calls.jsonl")) >= 2, 600, "two calls")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]
    assert "stopped by SIGTERM" in err
    assert f"Run the same command again with hydra.run.dir={run_dir} to resume" in err
    r = result(run_dir)
    assert r["status"] == "incomplete" and r["reason"] == "stopped by SIGTERM"
    no_zombies_or_orphans(tag)


def test_sigint_in_the_probe_keeps_the_timed_pass(tmp_path: Path, tag: str) -> None:
    """Ctrl-C after the timed pass, in the drift probe: the pass is whole, so the job is written
    complete with its telemetry and server counters (the H100 study's job 10 lost both, finished
    later from its calls alone), the sweep stops, and the next run reuses the job."""
    folder = tmp_path / "sweeps" / f"{tag}p"
    # A probe long enough to be interrupted in: 64 prompts of 48 tokens.
    args = ("-m", "slots=1", "workload.units=1", "quality.prompts=64", "quality.tokens=48")
    proc = start(*args, f"hydra.sweep.dir={folder}", cwd=tmp_path)
    log = folder / "0" / "benchkit.log"
    wait_for(lambda: log.exists() and "drift probe" in log.read_text(), 600, "the drift probe")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "was written as complete" in err, err[-2000:]
    r = result(folder / "0")
    assert r["status"] == "complete" and r["reason"] is None
    assert "Ctrl-C" in r["provenance"]["stopped"]
    m = r["metrics"]
    assert m["units_completed"] == m["units_planned"] == 1
    assert m["server_cpu_share"] is not None and m["telemetry"]["window_s"] > 0
    assert m["server"]["tokens_predicted"] == m["completion_tokens"]
    assert "quality" not in r or not r["quality"]
    p = run(*args, f"hydra.sweep.dir={folder}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert result(folder / "0")["provenance"]["reused_from"] == str(folder / "0")

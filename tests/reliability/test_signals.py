"""Signals reach the whole process tree (search -> sweep -> job -> llama-server), each level
writes what it was doing, and nothing outlives its parent (issue #42, attacks 4, 5, 6 and
"SIGTERM to a plain sweep did not stop it"). The real CPU llama-server throughout; a job's
server is found through the pid file the job keeps (benchkit/host/lifeline.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.host.lifeline import PID_FILE
from benchkit.job.folder import RESERVE_FILE
from tests.reliability.conftest import default_sigint, lines, result, run, start, wait_for

pytestmark = pytest.mark.slow

SECRET = "sk-search-0b5e7d21"
SEARCH = (
    "--rounds", "1", "load=poisson", "load.rate=1", "load.requests=6", "slots=1",
    "workload=first", "quality.probe=false", "+study.slo.ttft_ms_p95=1000",
)  # fmt: skip


def _server(job: Path) -> tuple[int, list[str]]:
    """The running server of a job (pid, argv), from its pid file and /proc."""
    pid = int(json.loads((job / PID_FILE).read_text())["pid"])
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return pid, [a.decode() for a in argv if a]


def _gone(pid: int, alias: str) -> bool:
    """The process has ended (a zombie's cmdline is empty; a reused pid is someone else)."""
    try:
        return alias not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return True


def _alias(argv: list[str]) -> str:
    return argv[argv.index("--alias") + 1]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(x) for x in out.stdout.split()]


def _search(base: Path, cwd: Path) -> subprocess.Popen[str]:
    # Its own session, so that a signal to its process group is what a terminal's Ctrl-C is.
    return subprocess.Popen(
        [sys.executable, "-m", "benchkit.search", *SEARCH, f"backend.api_key={SECRET}",
         f"hydra.sweep.dir={base}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
        preexec_fn=_own_session,
    )  # fmt: skip


def _own_session() -> None:
    os.setsid()
    default_sigint()


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_a_stopped_search_stops_its_sweep_job_and_server_and_resumes(
    tmp_path: Path, how: str
) -> None:
    base = tmp_path / "search"
    job = base / "round-1" / "0"
    proc = _search(base, tmp_path)
    wait_for(lambda: len(lines(job / "calls.jsonl")) >= 1, 600, "a call of round 1")
    pid, argv = _server(job)
    alias = _alias(argv)
    # The key reaches the sweep by its environment, never its command line (`ps`), and the
    # server by its environment too.
    (sweep_pid,) = _children(proc.pid)
    sweep_argv = Path(f"/proc/{sweep_pid}/cmdline").read_bytes()
    assert SECRET.encode() not in sweep_argv and b"backend.api_key" not in sweep_argv
    assert SECRET not in " ".join(argv)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the search's group
    else:
        proc.send_signal(signal.SIGTERM)  # `kill PID` of the search alone
    out, err = proc.communicate(timeout=120)
    code, word = (130, "Ctrl-C") if how == "ctrl-c" else (143, "SIGTERM")
    assert proc.returncode == code, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert SECRET not in out + err
    said = [x for x in err.splitlines() if x.startswith("benchkit.search:")]
    assert len(said) == 1 and f"stopped by {word} in round 1" in said[0], err[-2000:]
    assert f"hydra.sweep.dir={base} to resume" in said[0]
    # Every level wrote what it was doing: the job as incomplete with the reason, the sweep
    # its report so far; the reserve file is gone and so is every process.
    r = result(job)
    assert r["status"] == "incomplete" and word in r["reason"], r["reason"]
    assert not (job / RESERVE_FILE).exists() and not (job / PID_FILE).exists()
    assert (base / "round-1" / "report" / "report.html").exists()
    assert _gone(pid, alias) and _gone(sweep_pid, "benchkit")
    if how == "sigterm":
        return
    again = subprocess.run(
        [sys.executable, "-m", "benchkit.search", *SEARCH, f"hydra.sweep.dir={base}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=900, check=False,
        env={**os.environ, "BENCHKIT_API_KEY": SECRET},
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert result(job)["status"] == "complete"


def test_sigterm_to_a_plain_sweep_stops_it_at_the_job_it_was_in(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = start("-m", "slots=1,2", "workload.units=1", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    wait_for(lambda: len(lines(sweep / "0" / "calls.jsonl")) >= 1, 600, "a call of job 0")
    pid, argv = _server(sweep / "0")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert "Traceback" not in err
    r = result(sweep / "0")
    assert r["status"] == "incomplete" and r["reason"] == "stopped by SIGTERM"
    assert not (sweep / "1").exists()  # the sweep stopped; job 1 never started
    assert _gone(pid, _alias(argv))


def test_kill_9_of_a_sweep_takes_its_server_and_a_rerun_stops_a_leftover(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ("-m", "slots=1", "workload.units=1", f"hydra.sweep.dir={sweep}")
    proc = start(*args, cwd=tmp_path)
    job = sweep / "0"
    wait_for(lambda: len(lines(job / "calls.jsonl")) >= 1, 600, "a call of job 0")
    pid, argv = _server(job)
    alias = _alias(argv)
    proc.kill()
    proc.communicate(timeout=60)
    # Its death signal (PR_SET_PDEATHSIG) ended the server with it: not reparented to pid 1.
    wait_for(lambda: _gone(pid, alias), 10, "the killed sweep's server to end")

    # A server a death signal could not reach (started here, outside benchkit, with the pid
    # file a killed run leaves): the next run in the folder stops it before it starts its own.
    log = (tmp_path / "leftover.log").open("wb")
    leftover = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
    (job / PID_FILE).write_text(json.dumps({"pid": leftover.pid, "alias": alias}))
    wait_for(lambda: alias in " ".join(_proc_argv(leftover.pid)), 30, "the leftover server")
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"stopped a server (pid {leftover.pid}) that an earlier run in {job}" in p.stderr
    assert leftover.wait(timeout=10) == -signal.SIGKILL
    assert result(job)["status"] == "complete"


def _proc_argv(pid: int) -> list[str]:
    try:
        return [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []


def test_a_race_killed_outright_counts_its_first_launch_when_run_again(tmp_path: Path) -> None:
    sweep = tmp_path / "race"
    args = (
        "-m", "hydra/sweeper=racing", "slots=1,2", "quality.probe=false", "workload=first",
        "hydra.sweeper.min_units=2", "hydra.sweeper.max_units=2", f"hydra.sweep.dir={sweep}",
    )  # fmt: skip
    proc = start(*args, cwd=tmp_path)
    wait_for(lambda: len(lines(sweep / "0" / "calls.jsonl")) >= 1, 600, "a call of job 0")
    # racing.json is written as the race goes: the launch running now is in it.
    race = json.loads((sweep / "racing.json").read_text())
    assert list(race["in_flight"]) == ["0"] and race["launches"] == {}
    proc.kill()
    proc.communicate(timeout=60)
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    race = json.loads((sweep / "racing.json").read_text())
    # Point 0 was launched twice: the killed launch (until its last write) and the rerun's.
    assert race["launches"]["0"] == 2 and race["launches"]["1"] == 1, race["launches"]
    assert race["in_flight"] == {} and race["finished"]

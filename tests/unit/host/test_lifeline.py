"""The two mechanisms that keep a server from outliving its job (benchkit/host/lifeline.py), on
plain processes; tests/reliability/test_signals.py holds them with the real llama-server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchkit.host.lifeline import PID_FILE, stop_leftover


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_child_dies_with_its_parent_however_the_parent_dies(tmp_path: Path) -> None:
    # The parent starts a sleeper with the death signal, prints its pid and waits; kill -9 of
    # the parent gives Python no chance to stop the sleeper itself.
    code = (
        "import signal, subprocess, sys, time\n"
        "from benchkit.host.lifeline import die_with_parent\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True,\n"
        "                     preexec_fn=die_with_parent(signal.SIGKILL))\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the child outlived its parent"


def _sleeper(*argv: str) -> subprocess.Popen[bytes]:
    code = "import time; time.sleep(300)"
    return subprocess.Popen([sys.executable, "-c", code, *argv], start_new_session=True)


def test_a_leftover_is_stopped_only_when_its_command_line_names_the_alias(tmp_path: Path) -> None:
    ours = _sleeper("--alias", "benchkit-t-0-abcd1234")
    other = _sleeper("--alias", "someone-else")
    try:
        # A pid file naming a process that is not this job's server (a reused pid).
        (tmp_path / PID_FILE).write_text(
            json.dumps({"pid": other.pid, "alias": "benchkit-t-0-abcd1234"})
        )
        assert stop_leftover(tmp_path) is None
        assert other.poll() is None and not (tmp_path / PID_FILE).exists()
        (tmp_path / PID_FILE).write_text(
            json.dumps({"pid": ours.pid, "alias": "benchkit-t-0-abcd1234"})
        )
        assert stop_leftover(tmp_path) == ours.pid
        assert ours.wait(timeout=10) == -signal.SIGKILL
        assert not (tmp_path / PID_FILE).exists()
        # No pid file, or one that cannot be read: nothing to stop.
        assert stop_leftover(tmp_path) is None
        (tmp_path / PID_FILE).write_text("{")
        assert stop_leftover(tmp_path) is None
    finally:
        for p in (ours, other):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()

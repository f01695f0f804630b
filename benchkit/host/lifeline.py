"""Child processes that die with their parent, and servers a killed run left behind.

A SIGKILL (`kill -9`, the OOM killer, a lease ending) gives Python no chance to stop what it
started: a llama-server started in its own session was reparented to pid 1 and ran on,
holding memory and a port (issue #42). Two mechanisms, one behind the other:

- `die_with_parent`: a preexec_fn that asks Linux to signal the child when the process that
  started it dies (prctl PR_SET_PDEATHSIG), whatever killed it. The sweep a search starts gets
  SIGTERM (it writes its job as incomplete); a server gets SIGKILL (it holds no record).
- `note_server` / `stop_leftover`: the server's pid and alias nonce in the job folder while it
  runs. A run that starts in that folder again stops a server the pid file names, once
  /proc/<pid>/cmdline shows that server's alias (a reused pid is never someone else's victim).
  This catches what a death signal cannot: a parent that was not Linux's to watch (a pid
  namespace, a thread that ended).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from benchkit import log

_log = log.get(__name__)

PID_FILE = ".benchkit-server.pid"
_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    # Resolved here, in the parent: the child between fork and exec should only call it.
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):  # not Linux (macOS has no prctl)
        return None


_PRCTL = _load_prctl()


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A subprocess preexec_fn: the child gets `sig` when this process dies. The death
    signal follows the thread that forks, so call Popen from a thread that lives as long as
    the child should (benchkit starts servers and sweeps from the main thread)."""
    parent = os.getpid()
    prctl = _PRCTL

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        # The parent died between fork and prctl: the signal will never come.
        if os.getppid() != parent:
            os._exit(1)

    return setup


def note_server(folder: Path, pid: int, alias: str) -> None:
    """Record the server this process started in `folder` (best effort: a folder that cannot
    be written fails the job elsewhere, with a sentence)."""
    with contextlib.suppress(OSError):
        (folder / PID_FILE).write_text(
            json.dumps({"pid": pid, "alias": alias, "parent": os.getpid()}) + "\n",
            encoding="utf-8",
        )


def forget_server(folder: Path) -> None:
    with contextlib.suppress(OSError):
        (folder / PID_FILE).unlink(missing_ok=True)


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def stop_leftover(folder: Path, wait_s: float = 5.0) -> int | None:
    """Stop the server an earlier, killed run in `folder` left running; its pid, or None when
    there was none (no pid file, the process gone, or a pid now someone else's)."""
    path = folder / PID_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pid, alias = int(data["pid"]), str(data["alias"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    argv = _cmdline(pid)
    if not alias or alias not in argv:
        forget_server(folder)  # gone, or the pid was reused by another program
        return None
    # The server leads its own process group (it was started in a new session): whatever
    # it spawned goes with it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while alias in _cmdline(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    forget_server(folder)
    _log.warning(
        f"stopped a server (pid {pid}) that an earlier run in {folder} left running "
        "when it was killed"
    )
    return pid

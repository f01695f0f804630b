"""A job folder while its job runs: one process holds it, and room is kept for its result.

Two runs pointed at one folder (two sweeps started a second apart into one hydra.sweep.dir)
used to interleave: one run's result.json beside the other's calls.jsonl, the first run's
calls gone. `hold` takes an exclusive lock on `<folder>/.benchkit.lock` (flock: released by
the kernel however the process ends, so a killed run never leaves a stale lock) and refuses
a folder another run holds with one sentence naming that run. A sweep folder is held the same
way by the process that launches its jobs (benchkit.callbacks), from the first job to the
report.

A full disk used to leave no result.json at all: `keep_room` writes a small reserve file when
the job starts and `free_room` removes it just before result.json is written, so the result
that says why still fits.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from benchkit.errors import UserError
from benchkit.results import bounded
from benchkit.results.owned import is_write_problem, write_problem
from benchkit.results.store import CALLS_FILE

LOCK_FILE = ".benchkit.lock"
RESERVE_FILE = ".benchkit-reserve"
RESERVE_BYTES = 256 << 10  # a result.json is a few kB; a large sweep's provenance under 100 kB


class FolderBusy(UserError):
    """Another run holds the folder."""


@contextlib.contextmanager
def hold(folder: Path, what: str = "job") -> Iterator[None]:
    """Hold `folder` for this process; FolderBusy when another run holds it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(_busy(folder, path, what)) from None
        except OSError as exc:
            # A file system without locks (some network mounts): run unlocked, as before.
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": _now()}
        with contextlib.suppress(OSError):  # who holds it is for the message only
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _busy(folder: Path, path: Path, what: str) -> str:
    try:
        holder = json.loads(bounded.read_text(path))
        who = f"pid {holder['pid']} on {holder['host']}, since {holder['since']}"
    except (OSError, ValueError, KeyError, TypeError, UserError):
        who = "another process"
    return (
        f"{folder} is in use by another benchkit run ({who}); two runs in one {what} folder "
        "would mix their data: wait for it to end, or give this run its own folder "
        "(hydra.sweep.dir=... or hydra.run.dir=...)."
    )


def keep_room(folder: Path) -> None:
    """Set aside room for result.json (best effort: a disk already full keeps none)."""
    path = folder / RESERVE_FILE
    if path.exists():
        return
    try:
        with path.open("wb") as fh:
            fh.write(b"\0" * RESERVE_BYTES)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError:
        path.unlink(missing_ok=True)


def free_room(folder: Path) -> None:
    with contextlib.suppress(OSError):
        (folder / RESERVE_FILE).unlink(missing_ok=True)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_failure(exc: BaseException) -> OSError | None:
    """The write a user can fix (full disk, read-only, denied) behind `exc`: itself, one of
    its group (the replay's task group), or what it was raised from."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and is_write_problem(e):
            return e
        if isinstance(e, BaseExceptionGroup):
            todo += list(e.exceptions)
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
    return None


def failure_reason(exc: BaseException, folder: Path) -> str:
    """A failed job's reason: one sentence for a write the user can fix (with what was kept),
    else the internal error, its traceback in error.txt when that can be written."""
    problem = write_failure(exc)
    if problem is not None:
        kept = _lines(folder / CALLS_FILE)
        sentence = str(write_problem(problem, folder, "job's files"))
        return sentence.removesuffix(".") + (
            f"; the {kept} call(s) measured before are kept in {CALLS_FILE}." if kept else "."
        )
    try:
        (folder / "error.txt").write_text(traceback.format_exc())
        see = " (see error.txt)"
    except OSError:
        see = ""
    return f"internal error: {type(exc).__name__}: {exc}{see}"


def _lines(path: Path) -> int:
    try:
        return sum(1 for line in bounded.lines(path) if line.strip())
    except (OSError, UserError):
        return 0

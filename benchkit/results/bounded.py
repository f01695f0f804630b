"""Reading a file of a results folder: a regular file, inside the folder, and not larger than
the bound its kind has, or one sentence naming the file and the fix.

A results folder is data anyone could have written or copied: a calls.jsonl linked to
/dev/zero made the report read until it died of a MemoryError (2.9 GB), a job folder that is
a link to elsewhere was followed silently. Every reader of a results folder (the report, the
reuse of a job, a race resumed, a search's rounds) opens its files here. A file that is not
there stays an OSError, as each reader expects; every other refusal is a UserError.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from benchkit.errors import UserError

MIB = 1 << 20
# Raises every bound (in MiB) for a genuine file larger than benchkit expects.
LIMIT_ENV = "BENCHKIT_MAX_READ_MB"
# Bounds by file name, each far above what benchkit writes: a result.json is a few kB (a large
# sweep's provenance under 100 kB); a job's calls.jsonl about 1 kB a call.
LIMITS_MIB = {
    "result.json": 16,
    "racing.json": 16,
    "multirun.yaml": 16,
    "calls.jsonl": 512,
    "telemetry.jsonl": 512,
    "server.log": 512,
}
DEFAULT_MIB = 64
# The longest line a line-by-line reader takes (a server.log without a newline is one line).
LINE_LIMIT = 16 * MIB


def limit_of(path: Path) -> int:
    """The most bytes benchkit reads of `path`: its kind's bound, or BENCHKIT_MAX_READ_MB."""
    given = os.environ.get(LIMIT_ENV, "")
    if given.isdigit() and int(given) > 0:
        return int(given) * MIB
    return LIMITS_MIB.get(path.name, DEFAULT_MIB) * MIB


def inside(path: Path, root: Path) -> Path:
    """`path` with its links followed, when that stays inside `root`; else one sentence."""
    if _plain_below(path, root):
        return path
    real = path.resolve()
    base = root.resolve()
    if real != base and not real.is_relative_to(base):
        raise UserError(
            f"{path} leads outside {root} (to {real}): benchkit reads only a results folder's "
            "own files; copy the file or job folder in instead of linking to it."
        )
    return real


def _plain_below(path: Path, root: Path) -> bool:
    """Whether `path` is spelled below `root` and no name between them is a link: then it is
    inside `root` whatever `root` itself leads to, found with one lstat a name instead of
    following every link of both from `/` (two resolves a file were a tenth of the reading
    of a 1,000-job sweep's 2,000 files). Anything else is checked the long way."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if not parts or ".." in parts:
        return False
    at = root
    try:
        for part in parts:
            at = at / part
            if stat.S_ISLNK(os.lstat(at).st_mode):
                return False
    except OSError:
        return False
    return True


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_kind(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UserError(
            f"{path} is {_kind(mode)}, not a regular file: benchkit reads only files it wrote "
            "there; remove it, or restore the job's own file."
        )


def _refuse_size(path: Path, size: int, limit: int) -> None:
    if size > limit:
        raise UserError(
            f"{path} is {size / MIB:.0f} MiB, more than the {limit / MIB:.0f} MiB benchkit "
            f"reads of such a file: remove it, or raise the bound with {LIMIT_ENV}=N if it is "
            "genuine."
        )


@contextmanager
def open_bounded(path: Path, root: Path | None = None) -> Iterator[BinaryIO]:
    """`path` opened for reading in binary, checked: inside `root` (its folder when None),
    a regular file, not over its bound. A file that is not there is FileNotFoundError."""
    real = inside(path, root if root is not None else path.parent)
    limit = limit_of(path)
    st = os.stat(real)  # FileNotFoundError for a file that is not there, as before
    _refuse_kind(path, st.st_mode)
    _refuse_size(path, st.st_size, limit)
    # O_NONBLOCK: a file swapped for a pipe after the check must not hang the open.
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        _refuse_kind(path, st.st_mode)
        _refuse_size(path, st.st_size, limit)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def read_bytes(path: Path, root: Path | None = None) -> bytes:
    """The whole of a checked file (open_bounded), never more than its bound even if it grows."""
    limit = limit_of(path)
    with open_bounded(path, root) as fh:
        # Read at the size the file has (a byte more, to see it grew; then on, to the bound):
        # a read asked for the bound itself made a buffer that size (512 MiB for calls.jsonl)
        # first, a tenth of a millisecond a file, and a report reads thousands.
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(min(size, limit) + 1)
        if size < len(data) <= limit:
            data += fh.read(limit + 1 - len(data))
    _refuse_size(path, len(data), limit)
    return data


def read_text(path: Path, root: Path | None = None) -> str:
    """read_bytes as UTF-8 (a byte that is not UTF-8 is a ValueError, as for json.loads)."""
    return read_bytes(path, root).decode("utf-8")


def lines(path: Path, root: Path | None = None) -> Iterator[str]:
    """The lines of a checked file as text (undecodable bytes replaced), each at most
    LINE_LIMIT long: a longer one is one sentence, not a line read into memory whole."""
    limit = limit_of(path)
    total = 0
    with open_bounded(path, root) as fh:
        while line := fh.readline(LINE_LIMIT + 1):
            total += len(line)
            _refuse_size(path, total, limit)
            if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
                raise UserError(
                    f"{path} has a line longer than {LINE_LIMIT // MIB} MiB: it is not a file "
                    "benchkit wrote; remove it, or restore the job's own file."
                )
            yield line.decode("utf-8", errors="replace")


def byte_lines(path: Path, root: Path | None = None) -> list[bytes]:
    """The lines of a checked file as bytes, each at most LINE_LIMIT long, from one read of
    the whole file (bounded as read_bytes is): a report reads a 1,000-job sweep's calls
    this way, where a readline and a decode for each of 200,000 lines was a second of its
    time. The last line may lack its newline; a trailing newline gives no empty last line."""
    return split_lines(path, read_bytes(path, root))


def split_lines(path: Path, data: bytes) -> list[bytes]:
    """`byte_lines` of `data`, the bytes read from `path` (named where a line is too long)."""
    out = data.split(b"\n")
    if out and not out[-1]:
        out.pop()
    if len(data) > LINE_LIMIT and any(len(line) > LINE_LIMIT for line in out):
        raise UserError(
            f"{path} has a line longer than {LINE_LIMIT // MIB} MiB: it is not a file "
            "benchkit wrote; remove it, or restore the job's own file."
        )
    return out


def copy(src: Path, dst: Path, root: Path | None = None) -> None:
    """`src` (checked as open_bounded does) copied to `dst`."""
    with open_bounded(src, root) as fh, dst.open("wb") as out:
        shutil.copyfileobj(fh, out)

"""Folders benchkit writes whole (a report, a published post, a synthetic fixture): built
beside their destination, then swapped into place, and never at the cost of anything
benchkit did not write.

A folder written here carries a manifest (`.benchkit-files`) naming every entry it holds.
An existing destination is replaced only when it is absent, empty, or holds nothing but the
entries its manifest names (or, for a folder an earlier benchkit wrote without one, nothing
but the names that writer makes); anything else (a results folder given as `--out`, a blog
with other posts given as `--publish`) is refused with one sentence before any work is done,
and checked again at the swap. The failure to write at all (a read-only folder, a full disk)
is one sentence too: `write_problem`.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchkit.errors import UserError
from benchkit.results import bounded

MANIFEST = ".benchkit-files"


@dataclass(frozen=True)
class FolderKind:
    """What a kind of folder is called in messages, the option that chose it, and the names
    its writer made before manifests existed (glob patterns)."""

    what: str
    option: str
    legacy: tuple[str, ...] = ()
    # A sub-folder to suggest instead.
    example: str = "report"
    # In a folder without a manifest, the file whose benchkit mark (GENERATOR) shows that
    # the legacy names are benchkit's: a user's own report.md in a folder given as --out was
    # replaced, its name being one benchkit makes. "" takes the names alone.
    marker: str = ""


# What every page benchkit renders carries in its head (templates/report.html.j2).
GENERATOR = '<meta name="generator" content="benchkit'


def foreign_entries(dest: Path, kind: FolderKind) -> list[str]:
    """The entries of `dest` benchkit did not write there (sorted); empty when it may be
    replaced. A path that is not a folder is foreign as a whole."""
    if not dest.exists() and not dest.is_symlink():
        return []
    if dest.is_symlink() or not dest.is_dir():
        return [dest.name]
    names = sorted(p.name for p in dest.iterdir())
    listed = _manifest(dest)
    if listed is not None:
        return [n for n in names if n != MANIFEST and n not in listed]
    if kind.marker and not _marked(dest / kind.marker):
        return names
    return [n for n in names if not any(fnmatch.fnmatchcase(n, pat) for pat in kind.legacy)]


def _marked(page: Path) -> bool:
    """Whether `page` is one benchkit rendered (its head names benchkit as its generator)."""
    try:
        with page.open(encoding="utf-8", errors="replace") as f:
            return GENERATOR in f.read(4096)
    except OSError:
        return False


def check_replaceable(dest: Path, kind: FolderKind) -> None:
    """Refuse, in one sentence, a destination holding anything benchkit did not write."""
    foreign = foreign_entries(dest, kind)
    if not foreign:
        return
    shown = ", ".join(foreign[:4]) + (f" and {len(foreign) - 4} more" if len(foreign) > 4 else "")
    if foreign == [dest.name]:
        raise UserError(
            f"{dest} is not a folder benchkit wrote: give {kind.option} a new or empty folder "
            f"for the {kind.what}."
        )
    raise UserError(
        f"{dest} holds files benchkit did not write ({shown}), and writing the {kind.what} "
        f"there would replace them: give {kind.option} a new or empty folder (e.g. "
        f"{dest / kind.example})."
    )


@contextmanager
def building(dest: Path, kind: FolderKind) -> Iterator[Path]:
    """A fresh folder beside `dest` to write into; on a clean exit it replaces `dest` (which
    must pass check_replaceable), on any error it is removed and `dest` is left as it was."""
    check_replaceable(dest, kind)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.new-"))
    except OSError as exc:
        raise write_problem(exc, dest, kind.what) from exc
    try:
        yield tmp
        _swap(tmp, dest, kind)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise write_problem(exc, dest, kind.what) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap(tmp: Path, dest: Path, kind: FolderKind) -> None:
    """tmp becomes dest; the old dest (all benchkit's) is moved aside first and removed last,
    so a failure between the two renames puts it back."""
    names = sorted(p.name for p in tmp.iterdir() if p.name != MANIFEST)
    (tmp / MANIFEST).write_text(json.dumps(names, indent=0) + "\n", encoding="utf-8")
    check_replaceable(dest, kind)  # again: something may have arrived while it rendered
    old = None
    if dest.exists():
        old = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.old-")) / "x"
        dest.rename(old)
    try:
        tmp.rename(dest)
    except BaseException:
        if old is not None:
            old.rename(dest)
        raise
    if old is not None:
        shutil.rmtree(old.parent, ignore_errors=True)


def _manifest(folder: Path) -> set[str] | None:
    try:
        data = json.loads(bounded.read_text(folder / MANIFEST))
    except (OSError, ValueError, UserError):
        return None  # not benchkit's manifest: the folder is taken as holding files of others
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        return None
    return set(data)


# errno -> what the user can do about it, after "cannot write {what} to {path} ({strerror})".
_FIXES = {
    errno.ENOSPC: "free space on that disk or write to another one",
    errno.EDQUOT: "free space within your quota or write to another disk",
    errno.EROFS: "that file system is read-only: write to another folder",
    errno.EACCES: "you may not write there: choose a folder you can write to",
    errno.EPERM: "you may not write there: choose a folder you can write to",
}
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def write_problem(exc: OSError, path: Path, what: str, fix: str | None = None) -> UserError:
    """A failed write as one sentence naming the place, the cause and the fix; errors that
    are not the user's to fix (a bug) are re-raised as they were."""
    if exc.errno not in _FIXES:
        raise exc
    where = exc.filename or path
    return UserError(
        f"cannot write the {what} to {where} ({os.strerror(exc.errno or 0)}): "
        f"{fix or _FIXES[exc.errno or 0]}."
    )


def is_write_problem(exc: BaseException) -> bool:
    """An OSError a user causes and can fix by where they write (full, read-only, denied)."""
    return isinstance(exc, OSError) and exc.errno in _FIXES


def safe_name(name: str, allowed: Sequence[str] = ("-", "_", ".")) -> str:
    """`name` as one plain file name: letters, digits and `allowed`, no leading dot, so a
    name read from results can never reach outside the folder it is written in."""
    out = "".join(c if c.isascii() and (c.isalnum() or c in allowed) else "-" for c in name)
    return out.lstrip(".") or "-"

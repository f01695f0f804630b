"""Whether a result read from disk is what benchkit measured: one check for every reader.

A job signs its result.json with `provenance.digest`: HMAC-SHA256, under a key of the user
who ran it, over the result's keys and measured blocks and the bytes of its data files. The
key is kept outside every results folder (`~/.config/benchkit/key`, made on first use, mode
0600; $BENCHKIT_KEY_FILE names another), so whoever edits a copied folder cannot sign it
again. What a digest proves, read with this user's key (`Trust`):

- VERIFIED: signed with this key and unchanged since: this user's benchkit wrote it.
- FOREIGN: signed with another key (another user, another machine's key): it cannot be
  verified here; its figures are shown as read, and said to be unverified.
- UNKEYED: a plain sha256 digest, as benchkit wrote before it had a key (the published
  studies' H100 results): it matches, which shows the files are whole, not who made them,
  since anyone can compute it again after an edit.
- UNSIGNED: no digest (a benchkit older still, or by hand): nothing shows the figures.
- BROKEN: the digest does not match the content (with this key, or unkeyed): edited after it
  was written. Never used as a measurement: not reused, not raced on, left out of a report.

A digest proves nothing about a measurement made wrong in the first place, and a user who
holds the key (or can read it) can sign anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from benchkit.errors import UserError
from benchkit.measure.telemetry import TELEMETRY_FILE
from benchkit.quality.probe import QUALITY_FILE
from benchkit.quality.task import TASK_FILE
from benchkit.results import bounded
from benchkit.results.schema import Json

RESULT_FILE = "result.json"
CALLS_FILE = "calls.jsonl"
# The files a result's figures come from, carried with a reused job and covered by its digest.
DATA_FILES = (CALLS_FILE, TELEMETRY_FILE, QUALITY_FILE, TASK_FILE)
# The blocks of a result that are its measurement.
MEASURED_BLOCKS = ("status", "metrics", "passes", "quality", "task")
# Statuses whose result carries figures, and so a digest.
MEASURED_STATUSES = ("complete", "incomplete")

KEY_ENV = "BENCHKIT_KEY_FILE"
# A keyed digest: "hmac-sha256:<key id>:<hex>"; an unkeyed one is the sha256 hex alone.
KEYED = "hmac-sha256"


class Trust(StrEnum):
    VERIFIED = "verified"
    FOREIGN = "foreign"
    UNKEYED = "unkeyed"
    UNSIGNED = "unsigned"
    BROKEN = "broken"


# The statuses a reader may use as a measurement at all (BROKEN never is).
USABLE = (Trust.VERIFIED, Trust.FOREIGN, Trust.UNKEYED, Trust.UNSIGNED)
# Why a result was not taken, as the log and a reuse's reason say it.
WHY = {
    Trust.FOREIGN: "it was signed with another user's key, which this user cannot verify",
    Trust.UNKEYED: "its digest is unkeyed (written before benchkit signed results), so anyone "
    "could have recomputed it",
    Trust.UNSIGNED: "it has no digest (written by an older benchkit, or by hand)",
    Trust.BROKEN: "its content does not match its digest (edited after it was written)",
}


def key_path() -> Path:
    """$BENCHKIT_KEY_FILE, else $XDG_CONFIG_HOME/benchkit/key, else ~/.config/benchkit/key."""
    given = os.environ.get(KEY_ENV)
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "benchkit" / "key"


def _create(path: Path) -> None:
    """A new random key, written whole before it appears: jobs started side by side agree."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        # Fails where another process made it first: theirs is kept.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def user_key() -> bytes:
    """This user's signing key, made on first use; one sentence when it is unsafe or unreadable."""
    path = key_path()
    try:
        if not path.exists():
            _create(path)
        st = path.lstat()
        text = path.read_text(encoding="ascii").strip() if stat.S_ISREG(st.st_mode) else ""
    except (OSError, ValueError) as exc:
        raise UserError(
            f"benchkit's signing key {path} cannot be read or made ({exc}): fix the folder's "
            f"permissions, or name a key file with {KEY_ENV}=PATH."
        ) from exc
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise UserError(
            f"benchkit's signing key {path} must be a regular file of yours that only you can "
            f"read (chmod 600 {path}); otherwise others could sign results as you."
        )
    if len(text) < 32:
        raise UserError(f"benchkit's signing key {path} is too short: remove it to make one.")
    return text.encode("ascii")


def key_id(key: bytes) -> str:
    """Names a key without giving it away: which key signed a result."""
    return hashlib.sha256(b"benchkit key id\0" + key).hexdigest()[:16]


def digest(
    result: Mapping[str, Any], folder: Path, key: bytes | None = None, root: Path | None = None
) -> str:
    """The hex digest over the result's keys and measured blocks and the bytes of its data
    files (read bounded, inside `root`): HMAC-SHA256 under `key`, or sha256 without one."""
    prov = result.get("provenance") or {}
    h = hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()
    head = {
        "resume_key": prov.get("resume_key"),
        "extend_key": prov.get("extend_key"),
        "extended": prov.get("extended"),
        **{k: result.get(k) for k in MEASURED_BLOCKS},
    }
    h.update(json.dumps(head, sort_keys=True, default=str).encode())
    for name in DATA_FILES:
        path = folder / name
        if path.exists() or path.is_symlink():
            h.update(f"\0{name}\0".encode())
            with bounded.open_bounded(path, root if root is not None else folder) as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()


def sign(result: Mapping[str, Any], folder: Path) -> str:
    """The keyed digest a job writes as provenance.digest."""
    key = user_key()
    return f"{KEYED}:{key_id(key)}:{digest(result, folder, key)}"


@dataclass(frozen=True)
class Checked:
    """What the check found: the trust, and why a result is not VERIFIED (None when it is)."""

    trust: Trust
    why: str | None = None


def check(result: Mapping[str, Any], folder: Path, root: Path | None = None) -> Checked:
    """The trust of a result and its data files in `folder` (read inside `root`), by its
    provenance.digest, with this user's key (see the module's docstring)."""
    prov = result.get("provenance")
    recorded = prov.get("digest") if isinstance(prov, Mapping) else None
    if not isinstance(recorded, str) or not recorded:
        return Checked(Trust.UNSIGNED, WHY[Trust.UNSIGNED])
    if recorded.startswith(f"{KEYED}:"):
        _, kid, mac = [*recorded.split(":", 2), "", ""][:3]
        # Without a key of its own this user can verify no keyed result (and makes none).
        key = user_key() if key_path().exists() else None
        if key is None or kid != key_id(key):
            return Checked(Trust.FOREIGN, WHY[Trust.FOREIGN])
        ok = hmac.compare_digest(mac, digest(result, folder, key, root))
        return Checked(Trust.VERIFIED) if ok else Checked(Trust.BROKEN, WHY[Trust.BROKEN])
    if hmac.compare_digest(recorded, digest(result, folder, None, root)):
        return Checked(Trust.UNKEYED, WHY[Trust.UNKEYED])
    return Checked(Trust.BROKEN, WHY[Trust.BROKEN])


@dataclass(frozen=True)
class Read:
    """One result.json as a reader of results gets it: its object and its trust."""

    path: Path
    data: Json
    checked: Checked

    @property
    def usable(self) -> bool:
        """Whether its figures may be shown as a measurement (reuse asks for VERIFIED)."""
        return self.checked.trust in USABLE


def _shared(pairs: list[tuple[str, Any]]) -> Json:
    """A JSON object with its keys and string values interned, and the strings of its lists:
    a sweep's results repeat the same keys and most of the same values job after job, and a
    report holds every one of them (half the memory a 1,000-job sweep's results took was
    these repeats; the lists' strings, its overrides and the study's words, 3 MiB more)."""
    return {sys.intern(k): _interned(v) for k, v in pairs}


def _interned(v: Any) -> Any:
    """`v` with its string, or the strings of its list, interned (the list itself kept)."""
    if type(v) is str:
        return sys.intern(v)
    if type(v) is list:
        for i, x in enumerate(v):
            if type(x) is str:
                v[i] = sys.intern(x)
    return v


def read_result(path: Path, root: Path | None = None) -> Read:
    """The one read of a result.json for every reader (reuse, a race, the report, a search):
    bounded, inside `root` (the run or sweep folder; the job's folder's parent when None),
    and checked against its digest when its status says it holds figures. A file that is not
    there is OSError; one that is not JSON is ValueError; any other refusal is a UserError."""
    base = root if root is not None else path.parent.parent
    data = json.loads(bounded.read_text(path, base), object_pairs_hook=_shared)
    if not isinstance(data, dict):
        raise UserError(f"{path} holds a JSON {type(data).__name__}, not a benchkit result object.")
    if data.get("status") not in MEASURED_STATUSES:
        # A failed or unavailable job has no figures any reader uses: nothing to prove.
        return Read(path, data, Checked(Trust.VERIFIED))
    return Read(path, data, check(data, path.parent, base))


# The reason a report gives a result left out (result.json keeps English; the report's
# languages translate it: report/writeup/trust_words.py).
LEFT_OUT = "its result.json does not match its digest (edited after it was written): left out"


def left_out(data: Mapping[str, Any]) -> Json:
    """A result whose digest does not match, as a report takes it: a failed job with the
    reason, its factors and provenance kept (where it stands in the sweep), no figures."""
    out = {k: v for k, v in data.items() if k not in ("passes", "quality", "task")}
    out.update(status="failed", reason=LEFT_OUT, metrics={})
    return out


class _Judged(Protocol):
    """A loaded result with its trust (results.JobResult)."""

    @property
    def job_dir(self) -> Path: ...

    @property
    def trust(self) -> Trust: ...


def left_out_jobs(results: Iterable[_Judged]) -> set[str]:
    """The jobs (folder names) whose result does not match its digest."""
    return {r.job_dir.name for r in results if r.trust is Trust.BROKEN}

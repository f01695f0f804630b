"""Which earlier results a job may take instead of measuring again, and how it proves them.

A result.json on disk is a claim anyone who can write the folder could have made. A job
takes an earlier measurement only from where it was told to look:

- its own sweep: the job's own folder first (a sweep run again into the same
  hydra.sweep.dir), then the sweep's other job folders (a point listed twice); only files
  owned by the user running benchkit, so a folder others can write (/tmp) decides nothing;
- `resume_from=DIR`: a run or sweep folder the user names (its jobs, or the run itself).

And only a result that proves itself: complete, with this job's resume key (its config,
workload and server build), and a `provenance.digest` signed with this user's key that
matches its content: the measured blocks and the bytes of its data files (benchkit.results.trust).
A result edited by hand (a copied job made faster) no longer matches its digest, and one
signed again without the key (an unkeyed digest recomputed) or by another user's key is not
this user's: each is measured again, with the reason logged. The extension of a race
(benchkit.racing.extend) checks the same digest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from benchkit import log
from benchkit.errors import UserError
from benchkit.job.record import JobContext, JobResult, ReuseBlock
from benchkit.results import bounded
from benchkit.results.schema import Json
from benchkit.results.trust import DATA_FILES as DATA_FILES  # where job/extend.py takes them from
from benchkit.results.trust import RESULT_FILE, Trust, check, read_result

_log = log.get(__name__)

# Provenance that describes the measurement itself: a reused job keeps the measuring pass's.
MeasuredKey = Literal[
    "server",
    "model",
    "workload",
    "replay_started_utc",
    "server_build",
    "started_utc",
    "finished_utc",
    "host_load_start",
    "host_load_end",
    "job_seconds",
    "client",
    "benchkit",
    "telemetry",
    # The untimed warm-up before the pass, and a raced job's runs: what the report says of
    # how the figures were measured (a reuse that dropped them read as "not recorded").
    "warmup",
    "extended",
]
MEASURED_PROVENANCE: tuple[MeasuredKey, ...] = get_args(MeasuredKey)


def proves_itself(old: Mapping[str, Any], folder: Path, root: Path | None = None) -> str | None:
    """None when the result is signed with this user's key and unchanged since (what a job
    may take instead of measuring again); else why not (benchkit.results.trust)."""
    checked = check(old, folder, root)
    return None if checked.trust is Trust.VERIFIED else checked.why


def _own(path: Path) -> bool:
    """Written by the user running benchkit (root trusts only root's files too)."""
    try:
        return path.stat().st_uid == os.geteuid()
    except OSError:
        return False


@dataclass(frozen=True)
class Candidate:
    path: Path
    declared: bool  # named by resume_from: the user vouches for the owner
    root: Path  # the run or sweep folder its files must stay inside


def candidates(ctx: JobContext) -> list[Candidate]:
    """Where this job may find its earlier measurement, in order of preference."""
    own = ctx.job_dir / RESULT_FILE
    out = [Candidate(own, False, ctx.job_dir)]
    here = ctx.job_dir.resolve()
    for root in ctx.resume_roots:
        for path in sorted(root.glob(f"*/{RESULT_FILE}")):
            if path.parent.resolve() != here:
                out.append(Candidate(path, False, root))
    for root in ctx.resume_from:
        paths = [root / RESULT_FILE, *sorted(root.glob(f"*/{RESULT_FILE}"))]
        out += [Candidate(p, True, root) for p in paths if p.parent.resolve() != here]
    return out


def find(key: str, ctx: JobContext, task_sha256: str | None) -> tuple[Path, Json] | None:
    """The earlier complete measurement with this resume key that proves itself; with a
    scored task, one that answered the same task file comes first."""
    found: list[tuple[Path, Json]] = []
    for c in candidates(ctx):
        if not c.path.exists():
            continue
        try:
            read = read_result(c.path, c.root)
        except (OSError, ValueError) as exc:
            _log.info(f"not reused: {c.path} cannot be read ({exc})")
            continue
        except UserError as exc:
            _log.warning(f"not reused: {exc}")
            continue
        old = read.data
        prov = old.get("provenance") or {}
        if old.get("status") != "complete" or prov.get("resume_key") != key:
            continue
        files = [c.path, *(c.path.parent / n for n in DATA_FILES)]
        if not c.declared and not all(_own(p) for p in files if p.exists()):
            _log.info(f"not reused: {c.path.parent} is not yours (give resume_from=DIR to vouch)")
            continue
        if read.checked.trust is not Trust.VERIFIED:
            _log.warning(f"not reused: {c.path}: {read.checked.why}; this job is measured again.")
            continue
        found.append((c.path, old))
        if task_sha256 is None or (old.get("task") or {}).get("task_sha256") == task_sha256:
            break
    if task_sha256 is not None:
        found.sort(key=lambda c: (c[1].get("task") or {}).get("task_sha256") != task_sha256)
    return found[0] if found else None


def take(path: Path, old: Json, ctx: JobContext, result: JobResult) -> None:
    """This job's result becomes the earlier measurement at `path`, its data files copied."""
    prov = old.get("provenance") or {}
    if path != ctx.job_dir / RESULT_FILE:
        for name in (*DATA_FILES, "server.log"):
            if (path.parent / name).exists():
                bounded.copy(path.parent / name, ctx.job_dir / name)
    result["status"], result["reason"] = "complete", None
    result["metrics"] = old["metrics"]
    if "passes" in old:
        result["passes"] = old["passes"]
    if "quality" in old:
        result["quality"] = old["quality"]
    if "task" in old:
        result["task"] = old["task"]
    # What was true when the job was measured stays as it was (times, host load, the
    # client path, the benchkit that measured it); the reuse is recorded beside it.
    now = result["provenance"]
    reuse: ReuseBlock = {
        "started_utc": now.get("started_utc"),
        "host_load_start": now.get("host_load_start"),
        "benchkit": now.get("benchkit"),
        "from": str(path.parent),
    }
    # The earlier result's blocks are passed on as they were read: they were written
    # by a benchkit job through the same schema.
    for k in MEASURED_PROVENANCE:
        if k in prov:
            now[k] = prov[k]
    # A job reused twice keeps the folder and time of the pass that measured it.
    now["reused_from"] = prov.get("reused_from") or str(path.parent)
    now["measured_utc"] = prov.get("measured_utc") or prov.get("started_utc")
    now["reuse"] = reuse

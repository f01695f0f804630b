"""Extending a finished job by more units without measuring again the units it has.

The resume mechanism (benchkit.results.reuse) takes a complete earlier job with the same
resume key. A race asks the same job for more units each round (`workload.units` 3, then
5, ...), which changes the key; the *extend key* is the resume key without the unit count.
A complete job in the job's own folder with the same extend key and fewer units is the
prior: its calls are kept as they were measured, only the units after them are replayed (on
a fresh server, as every pass is), and the result is computed over all of them, with the
times of the new calls placed after the old ones so no two calls overlap in the job's clock.
`provenance.extended` says which units came from which run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from benchkit.client.replay import CallRecord, read_records
from benchkit.results import bounded
from benchkit.results.schema import Json
from benchkit.results.store import CALLS_FILE, RESULT_FILE, atomic_write_text
from benchkit.results.trust import Trust, read_result

# Seconds between the last old call and the first new one in the job's clock: the server
# restart between them is not part of either measurement.
GAP_S = 1.0


class ExtendedRun(TypedDict):
    """One run of an extended job (provenance.extended): its units and when it started."""

    units: list[str]
    started_utc: str | None


@dataclass
class Prior:
    """The complete earlier measurement a job extends."""

    result: Json
    records: list[CallRecord]
    units: list[str]
    wall_s: float
    end_t: float


def find_prior(
    job_dir: Path, extend_key: str, units: int, calls_per_unit: Mapping[str, int]
) -> Prior | None:
    """The job folder's own earlier result with `extend_key` and fewer than `units` units
    replayed in one pass, with its calls; None when there is none to extend. A job stopped by
    Ctrl-C counts too, with the units it completed (every call answered): the resume
    mechanism extended to partial jobs, so a race stopped mid-round loses only the unit it
    was in."""
    path = job_dir / RESULT_FILE
    calls = job_dir / CALLS_FILE
    if not path.exists() or not calls.exists():
        return None
    try:
        read = read_result(path, job_dir.parent)
    except (OSError, ValueError):
        return None
    if read.checked.trust is not Trust.VERIFIED:
        return None  # edited since it was written, or not this user's: measured again
    old = read.data
    prov = old.get("provenance") or {}
    if (
        old.get("status") not in ("complete", "incomplete")
        or prov.get("extend_key") != extend_key
        or isinstance(old.get("passes"), list)
    ):
        return None
    try:
        records = read_records(calls, job_dir.parent)
    except (OSError, ValueError, TypeError):
        return None
    by_unit: dict[str, list[CallRecord]] = {}
    for r in sorted(records, key=lambda r: r.t_sent):
        by_unit.setdefault(r.unit, []).append(r)
    # In the order units were started (calls.jsonl is written as calls finish).
    done = [
        u
        for u, rs in by_unit.items()
        if all(r.ok for r in rs) and len(rs) == calls_per_unit.get(u, -1)
    ]
    # A job stopped right after its last unit has every unit it is asked for: it is finished
    # from its calls alone (benchkit.job.run).
    if not 0 < len(done) <= units or (len(done) == units and old.get("status") == "complete"):
        return None
    keep = set(done)
    kept = [r for r in records if r.unit in keep]  # in the file's order
    end = max((r.t_done or r.t_sent) for r in kept)
    if old.get("status") == "complete":
        if len(done) != len(by_unit):
            return None
        wall = float((old.get("metrics") or {}).get("wall_s") or 0.0)
    else:
        # The partial unit's time is not the kept units': their own span instead.
        wall = end - min(r.t_sent for r in kept)
    return Prior(old, kept, done, wall, end)


def keep_calls(path: Path, prior: Prior) -> None:
    """calls.jsonl as the prior's kept calls only (an interrupted pass's partial unit out),
    line for line as they were written, before the extension appends its own."""
    keep = {(r.repeat, r.unit, r.seq) for r in prior.records}
    text = [
        line
        for line in bounded.lines(path)
        if line.strip()
        and (lambda c: (c.get("repeat"), c.get("unit"), c.get("seq")) in keep)(json.loads(line))
    ]
    atomic_write_text(path, "".join(text))


def runs_block(prior: Prior, new_units: list[str], started_utc: str | None) -> list[ExtendedRun]:
    """provenance.extended: each run's units and when it started, oldest first."""
    earlier = (prior.result.get("provenance") or {}).get("extended")
    if isinstance(earlier, list) and earlier:
        runs = list(earlier)
    else:
        prov = prior.result.get("provenance") or {}
        runs = [ExtendedRun(units=prior.units, started_utc=prov.get("replay_started_utc"))]
    return [*runs, ExtendedRun(units=new_units, started_utc=started_utc)]

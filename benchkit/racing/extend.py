"""Extending a finished job by more units without measuring again the units it has.

The resume mechanism (benchkit.job._reuse) takes a complete earlier job with the same
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
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from benchkit.client.replay import CallRecord
from benchkit.results import CALLS_FILE, RESULT_FILE

# Seconds between the last old call and the first new one in the job's clock: the server
# restart between them is not part of either measurement.
GAP_S = 1.0


@dataclass
class Prior:
    """The complete earlier measurement a job extends."""

    result: dict[str, Any]
    records: list[CallRecord]
    units: list[str]
    wall_s: float
    end_t: float


def read_records(path: Path) -> list[CallRecord]:
    """calls.jsonl back as records (the sink writes each record's fields as JSON)."""
    names = {f.name for f in fields(CallRecord)}
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                data = json.loads(line)
                out.append(CallRecord(**{k: v for k, v in data.items() if k in names}))
    return out


def find_prior(job_dir: Path, extend_key: str, units: int) -> Prior | None:
    """The job folder's own complete result with `extend_key` and fewer than `units` units
    replayed in one pass, with its calls; None when there is none to extend."""
    path = job_dir / RESULT_FILE
    calls = job_dir / CALLS_FILE
    if not path.exists() or not calls.exists():
        return None
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    prov = old.get("provenance") or {}
    metrics = old.get("metrics") or {}
    done = metrics.get("units_completed")
    if (
        old.get("status") != "complete"
        or prov.get("extend_key") != extend_key
        or isinstance(old.get("passes"), list)
        or not isinstance(done, int)
        or not 0 < done < units
    ):
        return None
    try:
        records = read_records(calls)
    except (OSError, ValueError, TypeError):
        return None
    # In the order units were started (calls.jsonl is written as calls finish).
    seen = list(dict.fromkeys(r.unit for r in sorted(records, key=lambda r: r.t_sent)))
    if len(seen) != done:
        return None
    end = max((r.t_done or r.t_sent) for r in records)
    return Prior(old, records, seen, float(metrics.get("wall_s") or 0.0), end)


def runs_block(prior: Prior, new_units: list[str], started_utc: str | None) -> list[dict[str, Any]]:
    """provenance.extended: each run's units and when it started, oldest first."""
    earlier = (prior.result.get("provenance") or {}).get("extended")
    if isinstance(earlier, list) and earlier:
        runs = list(earlier)
    else:
        prov = prior.result.get("provenance") or {}
        runs = [{"units": prior.units, "started_utc": prov.get("replay_started_utc")}]
    return [*runs, {"units": new_units, "started_utc": started_utc}]

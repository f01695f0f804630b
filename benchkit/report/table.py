"""A tidy table of a run or sweep: one row per job, factors and metrics as columns. Pure."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from benchkit.report.analyse import identity_problem
from benchkit.results import JobResult

FACTOR_COLUMNS = ("backend", "slots", "mtp")


def factor_columns(results: Sequence[JobResult]) -> list[str]:
    """Every factor any job names, in first-seen order (the columns that identify a point)."""
    seen: dict[str, None] = {}
    for r in results:
        for k in r.factors:
            seen.setdefault(k, None)
    return list(seen)


def tidy(results: Sequence[JobResult]) -> pd.DataFrame:
    """One row per job: `job`, `status`, `reason`, every factor, every scalar metric, the
    p50/p90/p99 of distribution metrics as `<name>_p50` ... columns, `ctx_total` (the
    server's context size), `identity_problem` (None when the server was provably the
    job's own) and `derived` (reference data derived from a publication, not measured)."""
    rows: list[dict[str, object]] = []
    for r in results:
        row: dict[str, object] = {"job": r.job_dir.name, "status": r.status, "reason": r.reason}
        row.update(r.factors)
        for key, value in r.metrics.items():
            if isinstance(value, dict):
                for q, v in value.items():
                    row[f"{key}_{q}"] = v
            elif not isinstance(value, list):
                row[key] = value
        server = r.result.provenance.server
        row["ctx_total"] = server.ctx_total if server else None
        row["identity_problem"] = identity_problem(r.result)
        row["derived"] = bool(r.data.get("derived"))
        rows.append(row)
    df = pd.DataFrame(rows)
    sort = [c for c in ("backend", "mtp", "slots") if c in df]
    if sort:
        df = df.sort_values([*sort, "job"], kind="stable")
    return df.reset_index(drop=True)

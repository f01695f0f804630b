"""A tidy table of a run or sweep: one row per job, factors and metrics as columns. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from benchkit.results import JobResult

FACTOR_COLUMNS = ("backend", "slots", "mtp")


def tidy(results: Sequence[JobResult]) -> pd.DataFrame:
    """One row per job: `job`, `status`, `reason`, every factor, every scalar metric, and the
    p50/p90/p99 of distribution metrics as `<name>_p50` ... columns."""
    rows: list[dict[str, Any]] = []
    for r in results:
        row: dict[str, Any] = {"job": r.job_dir.name, "status": r.status, "reason": r.reason}
        row.update(r.factors)
        for key, value in r.metrics.items():
            if isinstance(value, dict):
                for q, v in value.items():
                    row[f"{key}_{q}"] = v
            else:
                row[key] = value
        row["derived"] = bool(r.data.get("derived"))
        rows.append(row)
    df = pd.DataFrame(rows)
    if "slots" in df:
        df = df.sort_values(["backend", "mtp", "slots", "job"] if "mtp" in df else ["slots"])
    return df.reset_index(drop=True)

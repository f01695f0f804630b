"""A tidy table of a run or sweep: one row per job, factors and metrics as columns. Pure."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from benchkit.client.replay import read_records
from benchkit.measure import compute_metrics, server_rates
from benchkit.report.analyse import identity_problem
from benchkit.results import CALLS_FILE, JobResult

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
        if "seq_decode_tok_s" not in r.metrics and not isinstance(r.data.get("passes"), list):
            row.update(_from_calls(r))
        if row.get("seqs_per_step") is None:
            # Results written before these figures: the same arithmetic on their counters.
            server = r.metrics.get("server")
            steps, seqs = server_rates(
                server if isinstance(server, dict) else None, row.get("wall_s")
            )
            row["server_steps_per_s"], row["seqs_per_step"] = steps, seqs
        server = r.result.provenance.server
        row["ctx_total"] = server.ctx_total if server else None
        # The longest prompt of the workload replayed: a micro-batch above it splits nothing.
        wl = r.result.provenance.workload
        row["max_prompt_tokens"] = wl.max_prompt_tokens if wl else None
        row["identity_problem"] = identity_problem(r.result)
        row["derived"] = bool(r.data.get("derived"))
        rows.append(row)
    df = pd.DataFrame(rows)
    sort = [c for c in ("backend", "mtp", "slots") if c in df]
    if sort:
        df = df.sort_values([*sort, "job"], kind="stable")
    return df.reset_index(drop=True)


def _float(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and x == x else None


# The client-side figures added to result.json after some results were written: recomputed
# from the job's calls.jsonl by the same code (measure.compute_metrics) for those results.
_FROM_CALLS = (
    "seq_decode_tok_s", "prefill_busy_share", "decode_busy_share", "idle_share",
)  # fmt: skip


def _from_calls(r: JobResult) -> dict[str, object]:
    path = r.job_dir / CALLS_FILE
    wall = _float(r.metrics.get("wall_s"))
    if not path.exists() or not wall:
        return {}
    try:
        records = read_records(path)
    except (OSError, ValueError, TypeError):
        return {}
    m = compute_metrics(records, wall_s=wall, units_planned=0, calls_planned=0, calls_per_unit={})
    return {k: m.get(k) for k in _FROM_CALLS}

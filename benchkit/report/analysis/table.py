"""A tidy table of a run or sweep: one row per job, factors and metrics as columns. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from benchkit.client.replay import CallRecord, read_records, record_of
from benchkit.measure.calls import (
    TimeFigures,
    compute_metrics,
    figures_of,
    server_rates,
    time_figures,
)
from benchkit.report.analysis import call_columns
from benchkit.report.analysis.call_columns import Columns, union_length
from benchkit.report.analysis.job_builds import identity_problem
from benchkit.results.store import CALLS_FILE, JobResult

FACTOR_COLUMNS = ("backend", "slots", "mtp")


def factor_columns(results: Sequence[JobResult]) -> list[str]:
    """Every factor any job names, in first-seen order (the columns that identify a point)."""
    seen: dict[str, None] = {}
    for r in results:
        for k in r.factors:
            seen.setdefault(k, None)
    return list(seen)


def tidy(
    results: Sequence[JobResult], from_calls: Mapping[Path, Mapping[str, object]] | None = None
) -> pd.DataFrame:
    """One row per job: `job`, `status`, `reason`, every factor, every scalar metric, the
    p50/p90/p99 of distribution metrics as `<name>_p50` ... columns, `ctx_total` (the server's
    context size), `identity_problem` (None when the server was provably the job's own) and
    `derived` (reference data derived from a publication, not measured). `from_calls`: the figures
    `figures_from_calls` gives, by result.json path, where the caller has read the calls already
    (benchkit.report.analysis.job_calls); else they are read here."""
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
        if needs_calls(r):
            row.update(figures_from_calls(r) if from_calls is None else from_calls[r.path])
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
    if sort or "job" in df:
        # Jobs in run order (9 before 10), not as text: a sweep of 18 jobs read 0, 1, 10, 11.
        df = df.assign(_run=[_run_order(j) for j in df["job"]] if "job" in df else 0)
        df = df.sort_values([*sort, "_run"], kind="stable").drop(columns="_run")
    return df.reset_index(drop=True)


def _run_order(job: object) -> tuple[int, int, str]:
    """A job folder's name in run order: numbers by value, then any other name as text."""
    text = str(job)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _float(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and x == x else None


# The client-side figures added to result.json after some results were written: recomputed
# from the job's calls.jsonl by the same code (measure.compute_metrics) for those results.
_FROM_CALLS = (
    "seq_decode_tok_s", "prefill_busy_share", "decode_busy_share", "idle_share",
)  # fmt: skip


# A record's fields without a default (making one without them fails) and its defaults.
_REQUIRED = frozenset(
    f.name for f in fields(CallRecord) if f.default is MISSING and f.default_factory is MISSING
)
_DEFAULT = {f.name: f.default for f in fields(CallRecord)}


class _Times(NamedTuple):
    """The fields of a call `measure.time_figures` reads."""

    ok: bool
    t_sent: float
    t_first: float | None
    t_last: float | None
    t_done: float | None
    completion_tokens: int | None


def _time_figures(cols: Columns, wall_s: float) -> TimeFigures:
    """`measure.time_figures` of calls as `Columns` (every call ok and streaming: its first
    and last token known), each figure computed as it computes it."""
    # (t_last or 0.0) - (t_first or 0.0) for each call, summed by `sum` in the calls' order.
    first = np.where(cols.first == 0.0, 0.0, cols.first)
    last = np.where(cols.last == 0.0, 0.0, cols.last)
    seq_decode_s = sum((last - first).tolist())
    # max(tokens - 1, 0) of each, summed: integers, exactly.
    seq_decode_n = int(np.maximum(np.array(cols.completion, dtype=np.int64) - 1, 0).sum())
    busy = (
        union_length(cols.sent, cols.first),
        union_length(cols.first, cols.last),
        union_length(cols.sent, cols.done),
    )
    return figures_of(seq_decode_s, seq_decode_n, busy, wall_s)


def needs_calls(r: JobResult) -> bool:
    """Does the job's row take figures from its calls (`figures_from_calls`)?"""
    return "seq_decode_tok_s" not in r.metrics and not isinstance(r.data.get("passes"), list)


def figures_from_calls(
    r: JobResult, calls: Sequence[Mapping[str, Any]] | None = None, columns: Columns | None = None
) -> dict[str, object]:
    """The figures of `_FROM_CALLS` from the job's calls.jsonl ({} without the file, a wall
    clock or a file `read_records` can read). `calls`: the file's objects, already read, where
    every line was one (else the file is read here, as `read_records` reads it); `columns`:
    the same calls as `call_columns.columns_of` gives them, where it does."""
    path = r.job_dir / CALLS_FILE
    wall = _float(r.metrics.get("wall_s"))
    if not path.exists() or not wall:
        return {}
    if columns is not None and calls is not None and _REQUIRED <= call_columns.FIELDS:
        figures = _time_figures(columns, wall)
        return {k: figures.get(k) for k in _FROM_CALLS}
    if calls is not None and all(c.keys() >= _REQUIRED for c in calls):
        # The times of each call as its record would hold them, without making the records:
        # making one for each of a 1,000-job sweep's 200,000 calls took longer than the
        # figures (a call a record could not be made from is read as before, below).
        times = [
            _Times(
                c.get("ok", _DEFAULT["ok"]),
                c["t_sent"],
                c.get("t_first", _DEFAULT["t_first"]),
                c.get("t_last", _DEFAULT["t_last"]),
                c.get("t_done", _DEFAULT["t_done"]),
                c.get("completion_tokens", _DEFAULT["completion_tokens"]),
            )
            for c in calls
        ]
        figures = time_figures(times, wall)
        return {k: figures.get(k) for k in _FROM_CALLS}
    try:
        records = read_records(path) if calls is None else [record_of(c) for c in calls]
    except (OSError, ValueError, TypeError):
        return {}
    m = compute_metrics(records, wall_s=wall, units_planned=0, calls_planned=0, calls_per_unit={})
    return {k: m.get(k) for k in _FROM_CALLS}

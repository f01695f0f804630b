"""Builds: comparing two sweeps' llama-server builds (each job's build and server identity,
read from its provenance, are `job_builds`').
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import pandas as pd

from benchkit.report.analysis.numbers import (
    BuildNumbers,
    BuildPair,
    Point,
)
from benchkit.report.analysis.sweep import (
    BASIS_FACTORS,
    COMPLETE,
    DECODE,
    PREFILL,
    SLOT_LATENCY,
    THROUGHPUT,
    Stats,
    Sweep,
    _is_num,
    compare,
    norm,
)
from benchkit.report.verdicts.common import Verdict, _status


def compare_builds(new: Sweep, base: Sweep) -> Verdict:
    """Two sweeps config by config on the throughput basis: what the newer build (or any
    change made between the sweeps) did to seconds per unit, prefill and decode. Refused
    when the sweeps measured different models, hardware or workloads."""
    differs = {
        k: [base.constants[k], new.constants[k]]
        for k in sorted(set(new.constants) & set(base.constants))
        if norm(new.constants[k]) != norm(base.constants[k])
    }
    blocked = {k: v for k, v in differs.items() if k in BASIS_FACTORS}
    if blocked:
        return Verdict(
            "build",
            "not comparable",
            COMPLETE,
            [],
            THROUGHPUT,
            BuildNumbers(pairs=[], differs=differs, blocked_by=blocked),
        )
    keys = sorted((set(new.varying) | set(base.varying)) - set(differs))
    pairs: list[BuildPair] = []
    unmatched: list[Point] = []
    for c in new.cells:
        want = {k: c.values.get(k, new.constants.get(k)) for k in keys}
        b = next(
            (
                x
                for x in base.cells
                if all(
                    norm(x.values.get(k, base.constants.get(k))) == norm(v) for k, v in want.items()
                )
            ),
            None,
        )
        sn, sb = c.stats(THROUGHPUT), (b.stats(THROUGHPUT) if b else None)
        if b is None or sn is None or sb is None:
            unmatched.append(want)
            continue
        cmp = compare(sb, sn, new.min_effect)
        pairs.append(
            {
                "config": want,
                "base": sb.mean,
                "new": sn.mean,
                "change": sn.mean / sb.mean - 1,
                "effect": {"lower": "faster", "higher": "slower"}.get(cmp, "no difference"),
                "base_slot_latency": b.mean(SLOT_LATENCY),
                "new_slot_latency": c.mean(SLOT_LATENCY),
                "base_prefill": b.mean(PREFILL),
                "new_prefill": c.mean(PREFILL),
                "prefill_change": _change(b.mean(PREFILL), c.mean(PREFILL)),
                "prefill_effect": _effect(b.stats(PREFILL), c.stats(PREFILL), new.min_effect),
                "base_decode": b.mean(DECODE),
                "new_decode": c.mean(DECODE),
                "decode_change": _change(b.mean(DECODE), c.mean(DECODE)),
                "decode_effect": _effect(b.stats(DECODE), c.stats(DECODE), new.min_effect),
                "base_tokens_per_call": _tokens_per_call(base.df, b.jobs),
                "new_tokens_per_call": _tokens_per_call(new.df, c.jobs),
            }
        )
    effects = {p["effect"] for p in pairs}
    if not pairs:
        verdict: Any = None
    elif len(effects) == 1:
        verdict = effects.pop()
    else:
        verdict = "mixed"
    changes = [float(p["change"]) for p in pairs]
    numbers = BuildNumbers(
        pairs=pairs,
        unmatched=unmatched,
        differs=differs,
        median_change=statistics.median(changes) if changes else None,
        change_range=[min(changes), max(changes)] if changes else None,
    )
    missing = [m for m in new.missing]
    reasons = [] if pairs else ["no_comparison"]
    return Verdict(
        "build", verdict, _status(missing, reasons), missing, THROUGHPUT, numbers, None, reasons
    )


def _change(a: float | None, b: float | None) -> float | None:
    return None if not a or b is None else b / a - 1


def _effect(a: Stats | None, b: Stats | None, min_effect: float) -> str | None:
    """For rates (higher is better): 'faster', 'slower' or 'no difference'."""
    if a is None or b is None:
        return None
    return {"higher": "faster", "lower": "slower"}.get(compare(a, b, min_effect), "no difference")


def _tokens_per_call(df: pd.DataFrame, jobs: Sequence[str]) -> float | None:
    if "completion_tokens" not in df.columns or "calls_completed" not in df.columns:
        return None
    part = df[df["job"].isin(list(jobs))]
    tok = [float(x) for x in part["completion_tokens"] if _is_num(x)]
    calls = [float(x) for x in part["calls_completed"] if _is_num(x)]
    return sum(tok) / sum(calls) if tok and calls and sum(calls) else None

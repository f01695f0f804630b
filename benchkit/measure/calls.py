"""Per-run metrics from call records, each on an explicit, named basis.

Two "seconds per unit" exist and are never confused: the throughput basis (wall clock /
units completed: what a batch of units costs) and the slot-latency basis (mean time one
slot takes from a unit's first request to its last response: what one unit waits). With
`slots` lanes busy, the second is about slots x the first. Each metric is declared in
benchkit.measure.metrics (its definition there, which the report prints); DEFINITIONS is this
module's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypedDict

from benchkit.client.replay import CallRecord
from benchkit.measure import metrics

# Defined in benchkit.measure.metrics, with every other fact about each metric.
DEFINITIONS: dict[str, str] = metrics.definitions("calls", "server")


def percentiles(
    values: Sequence[float], qs: Iterable[int] = (50, 90, 95, 99)
) -> dict[str, float | None]:
    """Linear-interpolated percentiles; None for each when there are no values."""
    vals = sorted(v for v in values if v is not None and math.isfinite(v))
    out: dict[str, float | None] = {}
    for q in qs:
        if not vals:
            out[f"p{q}"] = None
            continue
        pos = (len(vals) - 1) * q / 100
        lo, hi = math.floor(pos), math.ceil(pos)
        out[f"p{q}"] = vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)
    return out


def union_length(intervals: Iterable[tuple[float, float]]) -> float:
    """Total length covered by a set of [start, end] intervals (overlaps counted once)."""
    total = 0.0
    cur_s: float | None = None
    cur_e = 0.0
    for s, e in sorted((s, e) for s, e in intervals if e > s):
        if cur_s is None or s > cur_e:
            if cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_s is not None:
        total += cur_e - cur_s
    return total


def _share(part: float, whole: float) -> float | None:
    return min(part / whole, 1.0) if whole > 0 else None


def server_rates(
    counters: Mapping[str, object] | None, wall_s: object
) -> tuple[float | None, float | None]:
    """(server steps per second, sequences per step) from a pass's server counters
    (n_decode, busy_slots_per_decode: n_decode_total and n_busy_slots_per_decode); None
    where a counter or the wall clock is missing."""
    c = counters or {}
    n, busy = c.get("n_decode"), c.get("busy_slots_per_decode")
    ok = isinstance(wall_s, int | float) and wall_s > 0
    steps = n / wall_s if isinstance(n, int | float) and n and ok else None  # type: ignore[operator]
    return steps, float(busy) if isinstance(busy, int | float) else None


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


class CallMetrics(TypedDict):
    """What compute_metrics measures from the call records: result.json's `metrics` (and each
    entry of `passes`) before the job adds its telemetry and server counters."""

    units_completed: int
    units_planned: int
    calls_completed: int
    calls_failed: int
    calls_planned: int
    error_rate: float
    wall_s: float
    s_per_unit_throughput: float | None
    s_per_unit_slot_latency: float | None
    prefill_tok_s: float | None
    decode_tok_s: float | None
    output_tok_s: float | None
    seq_decode_tok_s: float | None
    prefill_busy_share: float | None
    decode_busy_share: float | None
    idle_share: float | None
    prompt_tokens: int
    prompt_tokens_evaluated: int
    cached_prompt_tokens: int
    completion_tokens: int
    calls_hit_cap: int
    cap_time_share: float
    draft_acceptance: float | None
    draft_tokens: int
    draft_tokens_accepted: int
    ttft_ms: dict[str, float | None]
    itl_ms: dict[str, float | None]
    server_prompt_tok_s: float | None
    server_decode_tok_s: float | None
    fixture_prompt_tokens: int
    prompt_token_mismatches: int
    fixture_completion_tokens: int


class Timed(Protocol):
    """What `busy_spans` and `time_figures` read of a call (a CallRecord, or the same fields of
    a calls.jsonl line: the report computes these figures for results written before them)."""

    @property
    def ok(self) -> bool: ...
    @property
    def t_sent(self) -> float: ...
    @property
    def t_first(self) -> float | None: ...
    @property
    def t_last(self) -> float | None: ...
    @property
    def t_done(self) -> float | None: ...
    @property
    def completion_tokens(self) -> int | None: ...


class TimeFigures(TypedDict):
    """The per-sequence decode rate and where the wall clock went (DEFINITIONS)."""

    seq_decode_tok_s: float | None
    prefill_busy_share: float | None
    decode_busy_share: float | None
    idle_share: float | None


def busy_spans(records: Sequence[Timed]) -> tuple[float, float, float]:
    """The wall time during which at least one call waited for its first token, was between
    its first and last token, and was in flight (between its request and its response)."""
    ok = [r for r in records if r.ok]
    prefill = union_length((r.t_sent, r.t_first) for r in ok if r.t_first is not None)
    decode = union_length(
        (r.t_first, r.t_last) for r in ok if r.t_first is not None and r.t_last is not None
    )
    in_flight = union_length((r.t_sent, r.t_done) for r in records if r.t_done is not None)
    return prefill, decode, in_flight


def time_figures(
    records: Sequence[Timed], wall_s: float, busy: tuple[float, float, float] | None = None
) -> TimeFigures:
    """`TimeFigures` of a pass's calls; `busy`: their `busy_spans`, where known already."""
    streaming = [r for r in records if r.ok and r.t_first is not None and r.t_last is not None]
    seq_decode_s = sum((r.t_last or 0.0) - (r.t_first or 0.0) for r in streaming)
    seq_decode_n = sum(max((r.completion_tokens or 0) - 1, 0) for r in streaming)
    return figures_of(seq_decode_s, seq_decode_n, busy or busy_spans(records), wall_s)


def figures_of(
    seq_decode_s: float, seq_decode_n: int, busy: tuple[float, float, float], wall_s: float
) -> TimeFigures:
    """`TimeFigures` from the streaming calls' decode seconds and tokens (each less its first)
    and the pass's `busy_spans`."""
    prefill_busy, decode_busy, in_flight = busy
    return {
        "seq_decode_tok_s": (seq_decode_n / seq_decode_s) if seq_decode_s > 0 else None,
        "prefill_busy_share": _share(prefill_busy, wall_s),
        "decode_busy_share": _share(decode_busy, wall_s),
        "idle_share": None if wall_s <= 0 else max(0.0, 1.0 - min(in_flight / wall_s, 1.0)),
    }


def compute_metrics(
    records: Sequence[CallRecord],
    *,
    wall_s: float,
    units_planned: int,
    calls_planned: int,
    calls_per_unit: Mapping[str, int],
) -> CallMetrics:
    """The result.json `metrics` block. A unit counts as completed only when every one of its
    `calls_per_unit[unit]` calls succeeded."""
    ok = [r for r in records if r.ok]
    failed = [r for r in records if not r.ok]

    by_unit: dict[tuple[int, str], list[CallRecord]] = defaultdict(list)
    for r in records:
        by_unit[(r.repeat, r.unit)].append(r)
    unit_spans = []
    for key, recs in by_unit.items():
        if all(r.ok for r in recs) and len(recs) == calls_per_unit.get(key[1], -1):
            start = min(r.t_sent for r in recs)
            end = max(r.t_done or r.t_sent for r in recs)
            unit_spans.append(end - start)
    units_completed = len(unit_spans)

    prompt_evaluated = sum(int(r.timings.get("prompt_n") or 0) for r in ok)
    completion = sum(r.completion_tokens or 0 for r in ok)
    busy = busy_spans(records)
    prefill_busy, decode_busy, _ = busy
    decode_tokens_in_window = sum(
        max((r.completion_tokens or 0) - 1, 0) for r in ok if r.t_first is not None
    )

    ttft = [1000 * (r.t_first - r.t_sent) for r in ok if r.t_first is not None]
    itl = [
        1000 * (r.t_last - r.t_first) / (r.completion_tokens - 1)
        for r in ok
        if r.t_first is not None
        and r.t_last is not None
        and r.completion_tokens is not None
        and r.completion_tokens > 1
    ]
    drafted = sum(int(r.timings.get("draft_n") or 0) for r in ok)
    accepted = sum(int(r.timings.get("draft_n_accepted") or 0) for r in ok)
    call_time = sum((r.t_done or r.t_sent) - r.t_sent for r in ok)
    capped = [r for r in ok if r.hit_cap]
    cap_time = sum((r.t_done or r.t_sent) - r.t_sent for r in capped)
    attempted = len(records)

    return {
        "units_completed": units_completed,
        "units_planned": units_planned,
        "calls_completed": len(ok),
        "calls_failed": len(failed),
        "calls_planned": calls_planned,
        "error_rate": (len(failed) / attempted) if attempted else 0.0,
        "wall_s": wall_s,
        "s_per_unit_throughput": (wall_s / units_completed) if units_completed else None,
        "s_per_unit_slot_latency": _mean(unit_spans),
        "prefill_tok_s": (prompt_evaluated / prefill_busy) if prefill_busy > 0 else None,
        # Tokens after the first are the ones the decode window produced.
        "decode_tok_s": (decode_tokens_in_window / decode_busy) if decode_busy > 0 else None,
        "output_tok_s": (completion / wall_s) if wall_s > 0 else None,
        **time_figures(records, wall_s, busy),
        "prompt_tokens": sum(r.prompt_tokens or 0 for r in ok),
        "prompt_tokens_evaluated": prompt_evaluated,
        "cached_prompt_tokens": sum(r.cached_tokens or 0 for r in ok),
        "completion_tokens": completion,
        "calls_hit_cap": len(capped),
        "cap_time_share": (cap_time / call_time) if call_time > 0 else 0.0,
        "draft_acceptance": (accepted / drafted) if drafted else None,
        "draft_tokens": drafted,
        "draft_tokens_accepted": accepted,
        "ttft_ms": percentiles(ttft),
        "itl_ms": percentiles(itl),
        "server_prompt_tok_s": _mean(
            [
                float(r.timings["prompt_per_second"])
                for r in ok
                if r.timings.get("prompt_per_second")
            ]
        ),
        "server_decode_tok_s": _mean(
            [
                float(r.timings["predicted_per_second"])
                for r in ok
                if r.timings.get("predicted_per_second")
            ]
        ),
        "fixture_prompt_tokens": sum(r.fixture_prompt_tokens or 0 for r in records),
        # Calls whose prompt the server counted differently from the fixture (another
        # tokenizer than the one the fixture was recorded with); the report shows both.
        "prompt_token_mismatches": sum(
            1
            for r in ok
            if r.fixture_prompt_tokens is not None
            and r.prompt_tokens is not None
            and r.fixture_prompt_tokens != r.prompt_tokens
        ),
        "fixture_completion_tokens": sum(r.fixture_completion_tokens or 0 for r in records),
    }

"""Per-run metrics of an open-loop pass: offered and achieved rates, how late the client
sent, end-to-end latency, and goodput (the calls per second that met the study's SLO).

The SLO is the study's (`study.slo`, e.g. `{ttft_ms_p95: 2000}`); goodput asks it of each
call: a call meets `ttft_ms_p95: 2000` when its own time to first token is at most 2000 ms
(DistServe's definition), `itl_ms_*` of its own inter-token latency, `e2e_ms_*` of its own
request-to-last-token time. Limits on other metrics are not per call and are left out of
goodput (they still rule a point out in the report). Definitions are in DEFINITIONS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from benchkit.client.replay import CallRecord, OpenLoopPass
from benchkit.measure import metrics
from benchkit.measure.calls import percentiles

# Defined in benchkit.measure.metrics, with every other fact about each metric.
DEFINITIONS: dict[str, str] = metrics.definitions("load")

# SLO columns whose limit applies to each call's own value (the percentile is of these).
PER_CALL = ("ttft_ms", "itl_ms", "e2e_ms")


class OpenLoopMetrics(TypedDict):
    """result.json's `metrics.open_loop` block (a flat block: the report's table flattens
    it to `open_loop_<key>` columns)."""

    process: str
    offered_rps: float
    scheduled_rps: float | None
    achieved_rps: float | None
    arrivals_planned: int
    arrivals_sent: int
    calls_unfinished: int
    peak_in_flight: int
    max_in_flight: int
    ended: str | None
    schedule_lag_ms_p50: float | None
    schedule_lag_ms_p99: float | None
    schedule_lag_ms_max: float | None
    slo_per_call: str | None
    calls_met_slo: int | None
    goodput_rps: float | None
    goodput_tok_s: float | None


def call_value(rec: CallRecord, kind: str) -> float | None:
    """One call's own ttft_ms, itl_ms or e2e_ms (None when not measured)."""
    if rec.t_first is None:
        return None
    if kind == "ttft_ms":
        return 1000 * (rec.t_first - rec.t_sent)
    if kind == "e2e_ms":
        end = rec.t_last if rec.t_last is not None else rec.t_done
        return None if end is None else 1000 * (end - rec.t_sent)
    n = rec.completion_tokens or 0
    if rec.t_last is None or n < 2:
        return None
    return 1000 * (rec.t_last - rec.t_first) / (n - 1)


def per_call_limits(slo: Mapping[str, float]) -> dict[str, float]:
    """The SLO's limits that apply call by call ({'ttft_ms': 2000}); the tightest where two
    percentiles of one metric are limited."""
    out: dict[str, float] = {}
    for key, limit in slo.items():
        kind, _, q = str(key).rpartition("_p")
        if kind in PER_CALL and q.isdigit():
            out[kind] = min(float(limit), out.get(kind, float("inf")))
    return out


def meets(rec: CallRecord, limits: Mapping[str, float]) -> bool:
    """A completed call within every per-call limit (a value not measured does not meet it,
    except ITL on a one-token answer, which has none)."""
    if not rec.ok:
        return False
    for kind, limit in limits.items():
        v = call_value(rec, kind)
        if v is None and kind == "itl_ms" and (rec.completion_tokens or 0) < 2:
            continue
        if v is None or v > limit:
            return False
    return True


def _scheduled(records: Sequence[CallRecord]) -> float | None:
    """The rate the sent arrivals' schedule really had: gaps over the span they covered."""
    due = [r.t_scheduled for r in records if r.t_scheduled is not None]
    span = max(due) - min(due) if len(due) > 1 else 0.0
    return (len(due) - 1) / span if span > 0 else None


def e2e_percentiles(records: Sequence[CallRecord]) -> dict[str, float | None]:
    return percentiles([v for r in records if r.ok and (v := call_value(r, "e2e_ms")) is not None])


def open_loop_metrics(
    records: Sequence[CallRecord], p: OpenLoopPass, wall_s: float, slo: Mapping[str, float]
) -> OpenLoopMetrics:
    """The open-loop block of one pass (its `records` include the calls cut at a bound)."""
    done = [r for r in records if r.ok]
    lags = [1000 * (r.t_sent - r.t_scheduled) for r in records if r.t_scheduled is not None]
    lag = percentiles(lags, (50, 99))
    limits = per_call_limits(slo)
    good = [r for r in done if meets(r, limits)] if limits else None
    return {
        "process": p.process,
        "offered_rps": p.offered_rps,
        "scheduled_rps": _scheduled(records),
        "achieved_rps": len(done) / wall_s if wall_s > 0 else None,
        "arrivals_planned": p.arrivals_planned,
        "arrivals_sent": p.arrivals_sent,
        "calls_unfinished": sum(1 for r in records if r.cut),
        "peak_in_flight": p.peak_in_flight,
        "max_in_flight": p.max_in_flight,
        "ended": p.ended,
        "schedule_lag_ms_p50": lag["p50"],
        "schedule_lag_ms_p99": lag["p99"],
        "schedule_lag_ms_max": max(lags) if lags else None,
        "slo_per_call": ", ".join(f"{k} <= {v:g}" for k, v in limits.items()) or None,
        "calls_met_slo": None if good is None else len(good),
        "goodput_rps": None if good is None or wall_s <= 0 else len(good) / wall_s,
        "goodput_tok_s": None
        if good is None or wall_s <= 0
        else sum(r.completion_tokens or 0 for r in good) / wall_s,
    }

"""Open-loop arrival schedules: when each call of a pass is to be sent, decided before the
pass starts (as vLLM's bench and guidellm precompute theirs), so the client's own work never
moves an arrival and the same seed gives the same schedule on every machine.

A schedule is pure data: offsets in seconds from the pass's first arrival and the calls
they carry. `benchkit.load.openloop` sends them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchkit.config.schema import LoadConfig, LoadProcess
from benchkit.errors import UserError
from benchkit.workload import Call, Workload


@dataclass(frozen=True)
class Schedule:
    """When each arrival of one pass is due, and which call it sends."""

    process: LoadProcess
    offsets: tuple[float, ...]  # seconds from the first arrival; the first is 0.0
    calls: tuple[Call, ...]
    # Calls per second the process offers: `load.rate`, or a trace's arrivals over its span.
    offered_rps: float

    def __len__(self) -> int:
        return len(self.offsets)


def poisson_offsets(rate: float, n: int, seed: int) -> list[float]:
    """`n` arrival offsets of a Poisson process at `rate` per second, the first at 0.
    numpy's PCG64 generator: the same (rate, n, seed) give the same offsets everywhere."""
    if n <= 0:
        return []
    gaps = np.random.Generator(np.random.PCG64(seed)).exponential(1.0 / rate, size=n - 1)
    return [0.0, *(float(x) for x in np.cumsum(gaps))]


def constant_offsets(rate: float, n: int) -> list[float]:
    """`n` arrivals evenly spaced at `rate` per second, the first at 0."""
    return [i / rate for i in range(max(n, 0))]


def trace_offsets(recorded: list[float], speed: float) -> list[float]:
    """Recorded arrival times, from the first, `speed` times as fast."""
    if not recorded:
        return []
    first = min(recorded)
    return [(t - first) / speed for t in recorded]


def calls_for(workload: Workload, units: int | None, n: int | None) -> list[Call]:
    """The calls a pass sends, in the workload's order (calls.jsonl line order) over its
    first `units` units; `n` of them, going round the workload again when `n` is larger."""
    keep = {u.id for u in workload.units[:units]} if units else None
    calls = [c for c in workload.calls if keep is None or c.unit in keep]
    if n is None:
        return calls
    return [calls[i % len(calls)] for i in range(n)]


def schedule(load: LoadConfig, workload: Workload, units: int | None = None) -> Schedule:
    """The pass's schedule for `load` over `workload`; a setting that cannot give one is one
    UserError sentence naming the knob and the fix."""
    if load.process is LoadProcess.closed:
        raise UserError("load=closed has no arrival schedule: its units start when slots free.")
    if load.process is LoadProcess.trace:
        return _trace(load, workload, units)
    if load.rate is None:
        raise UserError(
            f"load={load.process.value} needs a rate: give load.rate=CALLS_PER_SECOND "
            "(e.g. load.rate=1, or -m load.rate=0.5,1,2 for a sweep)."
        )
    calls = calls_for(workload, units, load.requests)
    if load.process is LoadProcess.poisson:
        offsets = poisson_offsets(load.rate, len(calls), load.seed)
    else:
        offsets = constant_offsets(load.rate, len(calls))
    return Schedule(load.process, tuple(offsets), tuple(calls), load.rate)


def _trace(load: LoadConfig, workload: Workload, units: int | None) -> Schedule:
    calls = calls_for(workload, units, None)
    missing = [c for c in calls if c.arrival_s is None]
    if missing:
        raise UserError(
            f"load=trace needs recorded arrival times, but workload {workload.name} has none "
            f"for {len(missing)} of its {len(calls)} calls (first: unit {missing[0].unit} "
            f"call {missing[0].seq}): record it with `python -m benchkit.workload record`, "
            "or use load=poisson load.rate=N."
        )
    if load.requests is not None:
        calls = calls[: load.requests]
    # In arrival order: the file's order is pipeline order within a unit.
    calls.sort(key=lambda c: (c.arrival_s or 0.0, c.line))
    offsets = trace_offsets([c.arrival_s or 0.0 for c in calls], load.speed)
    span = offsets[-1] if offsets else 0.0
    # n arrivals over a span make n - 1 gaps: the rate the trace offers, at this speed.
    offered = (len(offsets) - 1) / span if span > 0 else 0.0
    return Schedule(load.process, tuple(offsets), tuple(calls), offered)

"""How much of a job's slot capacity its units used: the share of slot-time left idle while the
server had work, from the units' windows in calls.jsonl.

A closed-loop job with S slots keeps S units in flight until its last ones; a pass whose units
are not a whole number of rounds, or a job a race measured in several runs (each run with its
own tail), runs units with slots idle that one whole pass would have filled. Its seconds per
unit (throughput basis) then includes that idle capacity. This figure states it beside the
others: 1 - (time-integral of min(S, units in flight)) / (S x time with any unit in flight),
over the time with work only, so the gaps between a raced job's runs do not count.

Under open-loop load a unit is no lane: its calls arrive on the schedule, apart. There the
calls in flight are counted instead (`call_windows`): a slot idles whenever fewer calls are
in flight than slots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from benchkit.results.store import read_jsonl


def unit_windows(calls: Path) -> list[tuple[float, float]]:
    """Each unit's window (first request sent, last response done); units with an untimed
    call are left out."""
    return windows_of(read_jsonl(calls))


def windows_of(calls: Iterable[Mapping[str, object]]) -> list[tuple[float, float]]:
    """`unit_windows` of calls already read (the report reads each calls.jsonl once)."""
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for c in calls:
        t0, t1 = c.get("t_sent"), c.get("t_done")
        if not isinstance(t0, int | float) or not isinstance(t1, int | float):
            continue
        u = f"{c.get('repeat', 0)}/{c.get('unit')}"
        first[u] = min(first.get(u, t0), t0)
        last[u] = max(last.get(u, t1), t1)
    return [(first[u], last[u]) for u in first if last[u] > first[u]]


def call_windows(calls: Path) -> list[tuple[float, float]]:
    """Each call's window (sent, done), cut calls included (they held a slot until cut);
    calls with no time are left out."""
    out = []
    for c in read_jsonl(calls):
        t0, t1 = c.get("t_sent"), c.get("t_done")
        if isinstance(t0, int | float) and isinstance(t1, int | float) and t1 > t0:
            out.append((float(t0), float(t1)))
    return out


def idle_slot_share(windows: list[tuple[float, float]], slots: int) -> float | None:
    """The share of slot-time idle while any unit (or call: `call_windows`) was in flight;
    None for one slot or no units (a single slot is never idle while it has work)."""
    if slots < 2 or not windows:
        return None
    events = sorted([(t0, 1) for t0, _ in windows] + [(t1, -1) for _, t1 in windows])
    used = busy = 0.0
    k, prev = 0, events[0][0]
    for t, step in events:
        if k > 0:
            used += min(k, slots) * (t - prev)
            busy += t - prev
        k, prev = k + step, t
    return None if busy <= 0 else max(0.0, 1.0 - used / (slots * busy))

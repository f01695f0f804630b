"""What a race resumed on another machine measures there first: the anchor points that bridge
its earlier units to the new machine, and why a pair it leaves open across machines is open.

The comparison engine never decides two points measured on different machines directly: it
bridges them through a point measured on both (benchkit.compare.engine). A race that goes on
on another machine (a lent card given back, the race resumed on the next) would otherwise pair
its later units with nothing measured there. So before it spends a unit on a running point,
the resumed race measures on the new machine, on units already measured elsewhere:

- the current best, which every running point is compared with;
- for each running point, each point it must be compared with (the best, its open verdict
  pairs' partners) that no point measured on both of their machines bridges, counting the
  anchors already planned.

Each anchor runs the point's first units again (at least `min_units`, whole rounds of its
slots): the same units on both machines, which also measure the machine offset unit by unit.
An anchor's units join its point's series on the new machine (benchkit.racing.judge). Nothing
here measures or reads files: benchkit.racing.run launches the anchors, `simulate_moved`
replays a race that moves machines.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from benchkit.compare.engine import ACROSS, BRIDGED, OPEN
from benchkit.racing.judge import Anchored, Machines, race_engine
from benchkit.racing.policy import (
    STOPPED,
    RaceSettings,
    RoundDecision,
    best_of,
    decide,
    first_round,
    next_round,
    verdict_pairs,
)


@dataclass(frozen=True)
class Anchor:
    """Point `point` measured again on `machine` on its first `units` units, and why."""

    point: str
    machine: str
    units: int
    why: str


class AnchorEntry(TypedDict):
    """An anchor as racing.json's `anchors` lists it: where it was measured, on how many units,
    why, its job folder (under the sweep folder), whether it was measured, and the machine
    offset it measured (its time over the point's on the same units elsewhere)."""

    point: str
    machine: str
    units: int
    why: str
    job: str
    status: str
    offset: float | None


class OpenPair(TypedDict):
    """A pair the race leaves open across machines, with the engine's figures and the reason
    (racing.json's `open_across`)."""

    pair: list[str]
    machine: str
    via: str | None
    ratio: float | None
    low: float | None
    high: float | None
    reason: str


def machines_of(point: str, machines: Machines, anchors: Anchored) -> set[str]:
    """The machines a point has units on, its anchors' included ('' left out: unknown)."""
    own = {m for m in machines.get(point, {}).values() if m}
    return own | {m for m in anchors.get(point, {}) if m}


def moved(machines: Machines, here: str) -> bool:
    """Has the race measured any unit on a machine other than `here`?"""
    return bool(here) and any(m and m != here for ms in machines.values() for m in ms.values())


def _linked(a: str, b: str, cover: Mapping[str, set[str]]) -> bool:
    """Can the engine compare a and b: on one machine, or through a point on both of theirs?"""
    if cover[a] & cover[b]:
        return True
    return any(
        cover[x] & cover[a] and cover[x] & cover[b] for x in cover if x not in (a, b) and cover[x]
    )


def plan_anchors(
    decision: RoundDecision,
    values: Mapping[str, Mapping[str, float]],
    machines: Machines,
    anchors: Anchored,
    here: str,
    settings: RaceSettings,
    slots: Mapping[str, int] | None = None,
) -> list[Anchor]:
    """The anchors to measure on `here` before the race spends units there (the module's
    docstring); [] where the race has measured nothing elsewhere or `here` is unknown."""
    if not moved(machines, here):
        return []
    cover = {p: machines_of(p, machines, anchors) for p in values}
    out: list[Anchor] = []

    def add(p: str, why: str) -> None:
        where = machines.get(p, {})
        elsewhere = [u for u in values.get(p, {}) if where.get(u, "") not in ("", here)]
        if here in cover[p] or len(elsewhere) < 2:
            return  # measured here already, or nothing elsewhere to pair with
        k = max((slots or {}).get(p, 1), 1)  # whole rounds of its slots, as a round runs
        k = -(-max(settings.min_units, k) // k) * k
        cover[p].add(here)
        out.append(Anchor(p, here, min(k, len(values[p])), why))

    best = decision.best
    add(best, f"the current best ({best}): every running point is compared with it")
    running = decision.undecided
    for b in running:
        cover[b].add(here)  # measured here from now on
    for b in running:
        partners = [best, *(q for pair in decision.open_pairs if b in pair for q in pair)]
        for p in dict.fromkeys(partners):
            if p != b and p in cover and not _linked(p, b, cover):
                add(p, f"{b} must be compared with {p} and no point measured on both bridges them")
    return out


def offset_of(
    point: str,
    values: Mapping[str, Mapping[str, float]],
    machines: Machines,
    anchored: Mapping[str, float],
) -> float | None:
    """The anchor's time over the point's on the same units measured elsewhere (geometric mean
    of the per-unit ratios): the machine offset the anchor measured; None without a unit."""
    where = machines.get(point, {})
    mine = values.get(point, {})
    logs = [
        math.log(v / mine[u])
        for u, v in anchored.items()
        if u in mine and mine[u] > 0 and v > 0 and where.get(u, "") != ""
    ]
    return math.exp(statistics.fmean(logs)) if logs else None


def open_across(
    decision: RoundDecision,
    values: Mapping[str, Mapping[str, float]],
    machines: Machines,
    anchors: Anchored,
    settings: RaceSettings,
    noise: float | None = None,
) -> list[OpenPair]:
    """The pairs the race leaves open because they span machines (each running point against
    the best, each open verdict pair): bridged too wide, or not bridged at all."""
    eng = race_engine(values, machines, settings.margin, settings.confidence, noise, anchors)
    pairs = [(decision.best, p) for p in decision.undecided if p != decision.best]
    out: list[OpenPair] = []
    for a, b in dict.fromkeys([*pairs, *decision.open_pairs]):
        c = eng.compare(a, b)
        if c is None or c.outcome != OPEN or c.machine not in (BRIDGED, ACROSS):
            continue
        if c.machine == BRIDGED:
            span = f"{c.low:.3f}x-{c.high:.3f}x" if c.low and c.high else "no interval"
            reason = (
                f"bridged through {c.via}: its interval {span} is too wide to decide at the "
                f"{settings.margin:.0%} margin"
            )
        else:
            reason = "measured on different machines and no point measured on both bridges them"
        out.append(OpenPair(pair=[a, b], machine=c.machine, via=c.via, ratio=c.ratio,
                            low=c.low, high=c.high, reason=reason))  # fmt: skip
    return out


# --------------------------------------------------------------------------- replay


@dataclass
class MovedRace:
    """A replayed race that moved machines: its final decision, the anchors it measured, and
    each measurement in order as (round, 'anchor' or 'units', point, machine)."""

    decision: RoundDecision
    units: dict[str, int]
    anchors: list[Anchor]
    events: list[tuple[int, str, str, str]] = field(default_factory=list)
    open_pairs: list[OpenPair] = field(default_factory=list)


def simulate_moved(
    first: Mapping[str, Sequence[float]],
    second: Mapping[str, Sequence[float]],
    settings: RaceSettings,
    move_after: int,
    points: Mapping[str, Mapping[str, object]] | None = None,
    slots: Mapping[str, int] | None = None,
) -> MovedRace:
    """A race over recorded per-unit values whose rounds after `move_after` run on a second
    machine (`second`: each point's value of each unit measured there): the resumed race
    measures its anchors there first, then goes on as `policy.simulate` does."""
    total = min(len(v) for v in first.values())
    values: dict[str, dict[str, float]] = {p: {} for p in first}
    where: dict[str, dict[str, str]] = {p: {} for p in first}
    anchored: dict[str, dict[str, dict[str, float]]] = {}
    done: list[Anchor] = []
    events: list[tuple[int, str, str, str]] = []
    here, rounds = "a", 0

    def measure(want: Mapping[str, int]) -> None:
        for p, n in want.items():
            for i in range(len(values[p]), n):
                values[p][str(i)] = float((second if here == "b" else first)[p][i])
                where[p][str(i)] = here
            events.append((rounds, "units", p, here))

    measure(first_round(list(first), settings, total, slots or {}))
    stopped: list[str] = []
    while True:
        rounds += 1
        if rounds > move_after:
            here = "b"
        decision = _decide(values, where, anchored, stopped, settings, points, total)
        new = plan_anchors(decision, values, where, anchored, here, settings, slots)
        for a in new:
            units = {str(i): float(second[a.point][i]) for i in range(a.units)}
            anchored.setdefault(a.point, {})[a.machine] = units
            done.append(a)
            events.append((rounds, "anchor", a.point, a.machine))
        if new:  # decided again with the anchors just measured
            decision = _decide(values, where, anchored, stopped, settings, points, total)
        stopped = [p for p, s in decision.status.items() if s == STOPPED]
        have = {p: len(v) for p, v in values.items()}
        want = next_round(decision, have, settings, total, {}, 0.0, slots)
        if not want:
            return MovedRace(
                decision,
                have,
                done,
                events,
                open_across(decision, values, where, anchored, settings),
            )
        measure(want)


def _decide(
    values: Mapping[str, Mapping[str, float]],
    where: Machines,
    anchored: Anchored,
    stopped: Sequence[str],
    settings: RaceSettings,
    points: Mapping[str, Mapping[str, object]] | None,
    total: int,
) -> RoundDecision:
    alive = [p for p in values if p not in stopped and values[p]]
    pairs = verdict_pairs(points, best_of(values, alive)) if points else []
    return decide(values, settings, stopped, pairs, (), points, total, where, anchored)

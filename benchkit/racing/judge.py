"""The race's observations as the comparison engine's series (benchkit.compare), so that what
the race stops, settles or calls decided is what the report's engine says of the same units.

Each point's units are split by the machine that measured them (a race resumed on another
lent card measures its later units there): one series a point and machine. Two points measured
on different machines are then compared only through an anchor point measured on both, and
never decided across machines without one (benchkit.compare.engine). A race resumed on
another machine measures anchor points there first (benchkit.racing.anchors): an anchor's units
join its point's series on that machine."""

from __future__ import annotations

from collections.abc import Mapping

from benchkit.compare.engine import OPEN, Comparison, Engine, Series, Settings

# point -> unit -> the machine that measured it ('' or absent: unknown, which the engine
# takes as the machine of whatever it is compared with).
Machines = Mapping[str, Mapping[str, str]]
# point -> machine -> unit -> value: units of a point measured again on another machine (the
# anchors a resumed race measures first), beside the point's own job.
Anchored = Mapping[str, Mapping[str, Mapping[str, float]]]


def series_of(
    values: Mapping[str, Mapping[str, float]], machines: Machines, anchors: Anchored | None = None
) -> list[Series]:
    """One series a point and machine, its units in measuring order. An anchor's units join
    its point's series on the anchor's machine; a unit the point's own job measured there
    already keeps the job's value (the anchor repeated it)."""
    out: list[Series] = []
    for point, vals in values.items():
        by_machine: dict[str, dict[str, float]] = {}
        where = machines.get(point, {})
        for unit, v in vals.items():
            by_machine.setdefault(where.get(unit, ""), {})[unit] = v
        for machine, units in (anchors or {}).get(point, {}).items():
            mine = by_machine.setdefault(machine, {})
            for unit, v in units.items():
                mine.setdefault(unit, v)
        for machine, units in by_machine.items():
            job = point if len(by_machine) == 1 else f"{point}@{machine}"
            out.append(Series(point, job, machine, units))
    return out


def race_engine(
    values: Mapping[str, Mapping[str, float]],
    machines: Machines,
    margin: float,
    confidence: float,
    noise: float | None = None,
    anchors: Anchored | None = None,
) -> Engine:
    """The engine over the race's observations so far (its anchors' included), at the race's
    margin and confidence and the study's declared noise (what the report's engine is built
    with)."""
    return Engine(series_of(values, machines, anchors), Settings(margin, confidence, noise))


def outcome_of(c: Comparison | None) -> str:
    """The engine's outcome; open where nothing could be compared."""
    return OPEN if c is None else c.outcome

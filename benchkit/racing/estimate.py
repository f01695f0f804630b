"""A raced point's objective on the units its machine's points ran, from the paired comparison.

A point the race stopped after 3 units has the mean of those 3 units, and the best has the
mean of, say, 9. Units differ in difficulty (the seed's units by 3x), so the two means are not
on one footing: a verdict drawn from them (MTP on against off at one slot count, both stopped
at different rounds) flips with the order the units came in. The race compared each point
with the best on the units both have; the point's estimate is that ratio (of sums, the
objective being a mean per unit) times the best's mean over all of its units, so every point
is stated on the best's units.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import NamedTuple


class Restated(NamedTuple):
    """A raced job's objective as the report states it: `value` over the `stated` units its
    machine's points ran, `measured` of them its own."""

    value: float
    measured: int
    stated: int
    # The job's own figure on the units it ran, as measured (None: not known): what a
    # table shows beside a figure partly imputed, so that no imputed value reads as measured.
    own: float | None = None


def paired_estimates(measured: Mapping[str, Mapping[str, float]], best: str) -> dict[str, float]:
    """Each point's objective on the best's units: its sum over the units it shares with
    `best`, divided by the best's sum over them, times the best's mean. A point sharing no
    unit with the best keeps its own mean."""
    ref = measured[best]
    ref_mean = statistics.fmean(ref.values())
    out: dict[str, float] = {}
    for point, vals in measured.items():
        shared = [u for u in vals if u in ref]
        if not vals:
            continue
        if point == best or not shared:
            out[point] = statistics.fmean(vals.values())
            continue
        out[point] = ref_mean * sum(vals[u] for u in shared) / sum(ref[u] for u in shared)
    return out


def imputed_means(
    measured: Mapping[str, Mapping[str, float]], rounds: int = 100
) -> dict[str, float]:
    """Each point's objective over every unit any point measured: its own units as measured,
    the units it did not reach imputed from a two-way fit `log value = point + unit` on all
    the measurements (least squares by alternating means). A unit's difficulty is then
    learnt from every point that ran it, and a point stopped early is stated on the same
    units as the one that ran to the end; a point that ran every unit keeps its own mean."""
    logs = {p: {u: math.log(v) for u, v in vals.items() if v > 0} for p, vals in measured.items()}
    units = sorted({u for vals in logs.values() for u in vals})
    a = {p: statistics.fmean(v.values()) for p, v in logs.items() if v}
    b = {u: 0.0 for u in units}
    for _ in range(rounds):
        for u in units:
            xs = [logs[p][u] - a[p] for p in a if u in logs[p]]
            b[u] = statistics.fmean(xs) if xs else 0.0
        shift = statistics.fmean(b.values())
        b = {u: x - shift for u, x in b.items()}
        a = {p: statistics.fmean(logs[p][u] - b[u] for u in logs[p]) for p in a}
    out: dict[str, float] = {}
    for p in a:
        vals = measured[p]
        total = sum(vals[u] if u in vals else math.exp(a[p] + b[u]) for u in units)
        out[p] = total / len(units)
    return out


def imputed_by_machine(
    measured: Mapping[str, Mapping[str, float]],
    where: Mapping[str, Mapping[str, str]],
    rounds: int = 100,
) -> dict[str, float]:
    """imputed_means within each machine: a unit's difficulty is learnt only from the points
    that ran it on the same machine, and a point is stated on the units its machine's points
    measured (`where`: point -> unit -> machine; a unit it does not name is on the point's
    own machine, '' where none is known).

    Why per machine: two cards of one model differ on the same point by more than a study's
    margin (9-16% on the lent H100s), and not by one factor on every unit, so a figure
    restated through units another card measured carries that card's difference into the
    point's own (rules v11, from a review that found the H100 race's 8-slot figure restated
    through cards it never ran on). A point whose units ran on several machines is stated on
    the machine that measured most of them, on that machine's footing: its units measured
    elsewhere are left out of its figure, as another card's times are not its machine's."""
    out: dict[str, float] = {}
    for group in by_home(measured, where).values():
        out.update(imputed_means(group, rounds))
    return out


def by_home(
    measured: Mapping[str, Mapping[str, float]], where: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, dict[str, float]]]:
    """machine -> point -> unit -> value: each point under the machine that measured most of
    its units (its home), with the units it measured there."""
    groups: dict[str, dict[str, dict[str, float]]] = {}
    for p, vals in measured.items():
        machines = [where.get(p, {}).get(u, "") for u in vals]
        home = max(sorted(set(machines)), key=machines.count) if machines else ""
        mine = {u: v for u, v in vals.items() if where.get(p, {}).get(u, "") == home}
        groups.setdefault(home, {})[p] = mine
    return groups

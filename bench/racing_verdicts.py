"""The report's verdicts on a recorded grid, and the yardsticks bench/racing.py sets a race
against: the full grid resampled, the fixed cuts (every point stopped at k units) and the
clairvoyant race (the cheapest found that reaches the full grid's verdicts knowing them).
bench/racing.py re-exports every name, so the bench scripts that `import racing` keep reaching
them there.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from bench.racing_grid import Grid, with_values
from benchkit.racing.estimate import paired_estimates
from benchkit.racing.policy import RaceSettings, best_of, first_round
from benchkit.report.verdicts import analyse as an

# Verdicts that are judgements; `repeats` and `validity` restate the data, `projection`'s
# verdict is hours (a number), compared through the point it recommends.
JUDGED = ("backend", "slots", "mtp")


def verdicts(sw: an.Sweep, projection_units: int) -> dict[str, Any]:
    """The comparable part of every verdict: each judged factor's verdict and status, and the
    recommended point."""
    out: dict[str, Any] = {}
    for v in an.analyse(sw, projection_units):
        if v.factor in JUDGED or v.factor.startswith("spec"):
            out[v.factor] = json.dumps(v.verdict, sort_keys=True, default=str)
            out[f"{v.factor}.status"] = v.status
        elif v.factor == "projection":
            out["recommendation"] = json.dumps(v.point, sort_keys=True, default=str)
    return out


def slot_count(sw: an.Sweep, point: Mapping[str, object]) -> int:
    """A point's parallel slots: its own value where slots are swept, else the sweep's."""
    value = point.get("slots", sw.constants.get("slots", 1))
    try:
        return int(str(value))
    except ValueError:
        return 1


def thresholds(sw: an.Sweep) -> list[float]:
    """The relative bounds the report's judge holds a ratio to: its minimum effect, and the
    study's declared noise for single runs."""
    return [sw.min_effect, *([sw.noise] if sw.noise else [])]


def resampled(
    g: Grid, full: Mapping[str, Any], rng: random.Random, draw: Sequence[str] | None = None
) -> list[str]:
    """The verdicts that differ from the full grid's when its units are drawn again with
    replacement (the same draw for every point, so pairs stay paired): a bootstrap of the grid
    itself. A verdict that moves here rests on which units the workload happened to hold,
    and no race can be sure of reaching it without measuring every unit. `draw` fixes the
    units drawn."""
    units = list(next(iter(g.values.values())))
    if draw is None:
        draw = [rng.choice(units) for _ in units]
    values = {p: {f"b{i:02d}": v[u] for i, u in enumerate(draw)} for p, v in g.values.items()}
    sw = with_values(g.sweep, {p: statistics.fmean(v.values()) for p, v in values.items()}, values)
    got = verdicts(sw, g.projection_units)
    return [d for d in full if got.get(d) != full[d]]


def fixed_cuts(
    g: Grid,
    order: Sequence[str],
    settings: RaceSettings,
    slots: Mapping[str, int],
    full: Mapping[str, Any],
) -> dict[int, tuple[float, list[str]]]:
    """For each k from `min_units` to the grid's units: every point measured on its first k
    units (its first round where that is more: a pass needs one unit a slot), stated as the
    report states a raced point (paired to the best), one launch a point. Its machine seconds
    and the verdicts (values and statuses) that differ from the full grid's. No rule of
    evidence decides anything: the curve of what stopping everything at once at k reaches."""
    first = first_round(list(g.values), settings, len(order), slots)
    out: dict[int, tuple[float, list[str]]] = {}
    for k in range(settings.min_units, len(order) + 1):
        n = {p: max(k, first[p]) for p in g.values}
        seconds = sum(sum(g.cost[p][u] for u in order[: n[p]]) + g.start_s.get(p, 0.0) for p in n)
        out[k] = (seconds, differing(g, order, n, full))
    return out


def differing(
    g: Grid, order: Sequence[str], n: Mapping[str, int], full: Mapping[str, Any]
) -> list[str]:
    """The verdicts (values and statuses) that differ from the full grid's when each point
    `p` is measured on its first `n[p]` units, stated as the report states a raced point:
    paired to the best on the units both have."""
    measured = {p: {u: g.values[p][u] for u in order[:k]} for p, k in n.items()}
    best = best_of(measured, list(measured))
    got = verdicts(
        with_values(g.sweep, paired_estimates(measured, best), measured), g.projection_units
    )
    return [d for d in full if got.get(d) != full[d]]


def clairvoyant(
    g: Grid,
    order: Sequence[str],
    settings: RaceSettings,
    slots: Mapping[str, int],
    full: Mapping[str, Any],
) -> float | None:
    """The machine time of the cheapest race found that reaches the full grid's verdicts
    (values and statuses, the stopped points stated on the race's units as the report does)
    when it may look at them: every point's first round (what any race under these rules
    spends), then, greedily, the point whose measuring to the end leaves the fewest verdicts
    differing (the cheaper on a tie), until none differs; then each extended point cut back
    to the fewest units a round at a time that keep every verdict. An extension is one launch
    more. No evidence rule stops it from stopping: what a race needs at least to reach these
    verdicts, estimated (greedy, not a proof of the least). None where it found no race."""
    cap = min(len(order), settings.max_units or len(order))
    first = first_round(list(g.values), settings, len(order), slots)

    def cost(n: Mapping[str, int]) -> float:
        return sum(
            sum(g.cost[p][u] for u in order[:k]) + g.start_s.get(p, 0.0) * (1 + (k > first[p]))
            for p, k in n.items()
        )

    def differ(n: Mapping[str, int]) -> int:
        return len(differing(g, order, n, full))

    n = dict(first)
    left = differ(n)
    while left:
        trials = [(differ({**n, p: cap}), cost({**n, p: cap}), p) for p in n if n[p] < cap]
        if not trials:
            return None
        left, _, p = min(trials)
        n[p] = cap
    for p in sorted(n, key=lambda q: first[q] - n[q]):
        step = max(settings.units_per_round, slots.get(p, 1))
        k = first[p]
        while k < n[p]:
            if differ({**n, p: k}) == 0:
                n[p] = k
                break
            k = min(cap, k + step)
    return cost(n)


def full_verdicts(g: Grid) -> dict[str, Any]:
    """The full grid's verdicts: every point at the mean of all its units."""
    return verdicts(
        with_values(
            g.sweep,
            {j: statistics.fmean(v.values()) for j, v in g.values.items()},
            g.values,
        ),
        g.projection_units,
    )

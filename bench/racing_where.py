"""Where a race spends what the clairvoyant race does not: per point of each recorded GPU grid,
the units and launches the racing policy gives it and the units the clairvoyant race keeps
(bench/racing.py's `clairvoyant`, which may look at the full grid's verdicts), as means over
the same unit orders. docs/perf/racing/racing.md quotes its output (racing-where.txt).

    python bench/racing_where.py --seeds 10 --cpu > docs/perf/racing/racing-where.txt
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import racing as br

from benchkit.racing.policy import RaceSettings, first_round, simulate


def clairvoyant_units(
    g: br.Grid,
    order: Sequence[str],
    settings: RaceSettings,
    slots: Mapping[str, int],
    full: Mapping[str, Any],
) -> dict[str, int]:
    """The units per point of the clairvoyant race (the same search as br.clairvoyant)."""
    cap = len(order)
    first = first_round(list(g.values), settings, cap, slots)

    def differ(n: Mapping[str, int]) -> int:
        return len(br.differing(g, order, n, full))

    def cost(n: Mapping[str, int]) -> float:
        return sum(sum(g.cost[p][u] for u in order[:k]) for p, k in n.items())

    n = dict(first)
    left = differ(n)
    while left:
        trials = [(differ({**n, p: cap}), cost({**n, p: cap}), p) for p in n if n[p] < cap]
        if not trials:
            break
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
    return n


def _spread(g: br.Grid, point: str, best: str) -> float:
    """The sd of log(point / best) over the grid's units (0 for the best itself)."""
    if point == best:
        return 0.0
    return statistics.stdev(math.log(g.values[point][u] / g.values[best][u]) for u in g.units)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--cpu", action="store_true", help="the stored CPU sweep too")
    args = ap.parse_args()
    settings = RaceSettings()
    folders = [(f, f.parent.name) for f in br.STUDIES]
    if args.cpu:
        folders.insert(0, (br.CPU, "cpu-sweep"))
    for folder, name in folders:
        g = br.load_folder(folder, name)
        points = {j: dict(c.values) for c in g.sweep.cells for j in c.jobs}
        slots = {j: br.slot_count(g.sweep, points[j]) for j in points}
        means = {j: statistics.fmean(v.values()) for j, v in g.values.items()}
        full = br.verdicts(br.with_values(g.sweep, means, g.values), g.projection_units)
        rng = random.Random(5)
        pol: dict[str, list[float]] = {j: [] for j in points}
        lau: dict[str, list[float]] = {j: [] for j in points}
        cl: dict[str, list[float]] = {j: [] for j in points}
        for _ in range(args.seeds):
            order = list(g.units)
            rng.shuffle(order)
            per_unit = {j: [g.values[j][u] for u in order] for j in g.values}
            cost = {j: [g.cost[j][u] for u in order] for j in g.values}
            race = simulate(
                per_unit, cost, settings, points, br.thresholds(g.sweep), g.start_s, slots
            )
            seen = clairvoyant_units(g, order, settings, slots, full)
            for j in points:
                pol[j].append(race.units[j])
                lau[j].append(race.launches[j])
                cl[j].append(seen[j])
        best = min(means, key=lambda j: means[j])
        print(f"{g.name} ({len(g.units)} units a point, {args.seeds} orders); full grid: {full}")
        for j in sorted(points, key=lambda j: sorted((k, str(v)) for k, v in points[j].items())):
            print(
                f"  {points[j]}: {means[j] / means[best] - 1:+.1%} against the best "
                f"(per-unit log spread {_spread(g, j, best):.3f}); policy "
                f"{statistics.fmean(pol[j]):.1f} units in {statistics.fmean(lau[j]):.1f} "
                f"launches, clairvoyant {statistics.fmean(cl[j]):.1f} units"
            )


if __name__ == "__main__":
    main()

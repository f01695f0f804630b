"""The unit orders in which a race's verdicts differ from the full grid's, one recorded grid:
each differing verdict (full grid's value, race's value) and every point's units, final
status, paired ratio to the race's best and the best that stopped it. What racing.md cites
as an example of a cause (racing-differs-*.txt).

    python bench/racing_differs.py --grid vulkan --seeds 40 --finite every_test
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import racing as br

from benchkit.racing.estimate import paired_estimates
from benchkit.racing.policy import FINITE_CHOICES, RaceSettings, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", required=True, help="part of a study's folder name")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--rng", type=int, default=7)
    ap.add_argument("--finite", choices=tuple(FINITE_CHOICES), default="verdict_pairs")
    ap.add_argument("--no-knee-rest", action="store_true")
    args = ap.parse_args()
    settings = RaceSettings(finite=FINITE_CHOICES[args.finite], knee_rest=not args.no_knee_rest)
    folder = next(s for s in br.STUDIES if args.grid in str(s))
    g = br.load_folder(folder, folder.parent.name)
    points = {j: dict(c.values) for c in g.sweep.cells for j in c.jobs}
    slots = {j: br.slot_count(g.sweep, points[j]) for j in points}
    means = {j: statistics.fmean(v.values()) for j, v in g.values.items()}
    full = br.verdicts(br.with_values(g.sweep, means, g.values), g.projection_units)
    print(f"{g.name}, {args.seeds} orders (rng {args.rng}), finite={args.finite}")
    rng = random.Random(args.rng)
    for seed in range(args.seeds):
        order = list(g.units)
        rng.shuffle(order)
        per_unit = {j: [g.values[j][u] for u in order] for j in g.values}
        cost = {j: [g.cost[j][u] for u in order] for j in g.values}
        race = simulate(per_unit, cost, settings, points, br.thresholds(g.sweep), g.start_s, slots)
        measured = {j: {u: g.values[j][u] for u in order[: race.units[j]]} for j in g.values}
        got_means = paired_estimates(measured, race.best)
        got = br.verdicts(br.with_values(g.sweep, got_means, measured, race), g.projection_units)
        diff = {k: (full[k], got.get(k)) for k in full if got.get(k) != full[k]}
        if not diff:
            continue
        print(f"order {seed}: full grid, race: {diff}")
        for j in sorted(points, key=lambda j: sorted((k, str(v)) for k, v in points[j].items())):
            print(
                f"  {points[j]}: {race.units[j]} units, {race.status[j]}, "
                f"{got_means[j] / got_means[race.best] - 1:+.1%} against the race's best "
                f"(full grid {means[j] / min(means.values()) - 1:+.1%})"
                + (f", stopped by {points[race.stopped_by[j]]}" if j in race.stopped_by else "")
            )


if __name__ == "__main__":
    main()

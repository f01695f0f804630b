"""How well a race knows the knee's bound: the series noise the racing policy estimates from
what it measured (benchkit.racing.policy.series_noise, each pair's spread on its own units,
projected to the workload's) against the full grid's (every pair on every unit), at the end
of each replayed race of each recorded grid whose knee is judged against it.
docs/perf/racing/racing.md quotes its output (racing-noise.txt).

    python bench/racing_noise.py --seeds 40 --cpu > docs/perf/racing/racing-noise.txt
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

from benchkit.racing.knee import knee_series, series_noise
from benchkit.racing.policy import RaceSettings, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
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
        n = len(g.units)
        full_best = min(g.values, key=lambda j: statistics.fmean(g.values[j].values()))
        series = knee_series(points, full_best)
        full = series_noise(g.values, series, full_best, n) if series else None
        if full is None:
            continue
        rng = random.Random(5)
        ratios: list[float] = []
        for _ in range(args.seeds):
            order = list(g.units)
            rng.shuffle(order)
            per_unit = {j: [g.values[j][u] for u in order] for j in g.values}
            cost = {j: [g.cost[j][u] for u in order] for j in g.values}
            race = simulate(
                per_unit, cost, settings, points, br.thresholds(g.sweep), g.start_s, slots
            )
            got = {j: {u: g.values[j][u] for u in order[: race.units[j]]} for j in g.values}
            est = series_noise(got, knee_series(points, race.best), race.best, n)
            if est is not None:
                ratios.append(est / full)
        q = statistics.quantiles(ratios, n=20)
        print(
            f"{g.name}: full grid's series noise {full:.1%}; the race's estimate at its end / "
            f"the full grid's, over {len(ratios)} orders: median {statistics.median(ratios):.2f}, "
            f"5%-95% {q[0]:.2f}-{q[-1]:.2f}, min {min(ratios):.2f}, max {max(ratios):.2f}"
        )


if __name__ == "__main__":
    main()

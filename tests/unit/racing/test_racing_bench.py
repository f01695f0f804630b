"""The racing bench's replay arithmetic (bench/racing.py) on the stored CPU sweep: the fixed
cuts and the clairvoyant race set the policy's figures in docs/perf/racing/racing.md against what
any race could spend, so their end points must be the full grid's own."""

from __future__ import annotations

import dataclasses
import itertools
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))
racing = pytest.importorskip("racing")

from benchkit.racing.policy import RaceSettings, first_round  # noqa: E402


@pytest.fixture(scope="module")
def cpu_grid() -> tuple[Any, list[str], dict[str, Any]]:
    if not racing.CPU.exists():
        pytest.skip("bench/data/cpu-sweep is not in this checkout")
    grid = racing.load_folder(racing.CPU, "cpu-sweep")
    order = list(grid.units)
    random.Random(3).shuffle(order)
    full = racing.verdicts(
        racing.with_values(
            grid.sweep,
            {j: statistics.fmean(v.values()) for j, v in grid.values.items()},
            grid.values,
        ),
        grid.projection_units,
    )
    return grid, order, full


def test_fixed_cuts_end_at_the_full_grid(cpu_grid: tuple[Any, list[str], dict[str, Any]]) -> None:
    grid, order, full = cpu_grid
    settings = RaceSettings()
    points = {j: dict(c.values) for c in grid.sweep.cells for j in c.jobs}
    slots = {j: racing.slot_count(grid.sweep, points[j]) for j in points}
    cuts = racing.fixed_cuts(grid, order, settings, slots, full)
    assert sorted(cuts) == list(range(settings.min_units, len(order) + 1))
    full_s = sum(sum(c.values()) for c in grid.cost.values()) + sum(grid.start_s.values())
    seconds = [cuts[k][0] for k in sorted(cuts)]
    # Every unit more costs time; all of them is the full grid, which has its own verdicts.
    assert all(a < b for a, b in itertools.pairwise(seconds))
    assert seconds[-1] == pytest.approx(full_s)
    assert cuts[len(order)][1] == []
    # The first cut is every point's first round and one launch: the floor of any race.
    first = first_round(list(grid.values), settings, len(order), slots)
    floor = sum(
        sum(grid.cost[p][u] for u in order[: first[p]]) + grid.start_s[p] for p in grid.values
    )
    assert seconds[0] == pytest.approx(floor)


def test_clairvoyant_race_lies_between_the_first_round_and_the_grid(
    cpu_grid: tuple[Any, list[str], dict[str, Any]],
) -> None:
    grid, order, full = cpu_grid
    settings = RaceSettings()
    points = {j: dict(c.values) for c in grid.sweep.cells for j in c.jobs}
    slots = {j: racing.slot_count(grid.sweep, points[j]) for j in points}
    cuts = racing.fixed_cuts(grid, order, settings, slots, full)
    seen = racing.clairvoyant(grid, order, settings, slots, full)
    assert seen is not None
    # At most every point measured to the end with a second launch each.
    most = cuts[len(order)][0] + sum(grid.start_s.values())
    assert cuts[settings.min_units][0] <= seen <= most


def test_a_resample_that_draws_every_unit_once_is_the_full_grid(
    cpu_grid: tuple[Any, list[str], dict[str, Any]],
) -> None:
    grid, order, full = cpu_grid
    # The units in another order, each once: the same means and per-unit pairs, so the same
    # verdicts and statuses.
    assert racing.resampled(grid, full, random.Random(0), draw=order) == []


def test_a_resample_of_a_grid_without_unit_noise_keeps_its_verdicts(
    cpu_grid: tuple[Any, list[str], dict[str, Any]],
) -> None:
    grid = cpu_grid[0]
    # Every unit of a point at the point's mean: whichever units a resample draws, the means
    # and so the verdicts are the full grid's.
    flat = dataclasses.replace(
        grid,
        values={p: dict.fromkeys(v, statistics.fmean(v.values())) for p, v in grid.values.items()},
    )
    means = {p: statistics.fmean(v.values()) for p, v in flat.values.items()}
    full = racing.verdicts(
        racing.with_values(flat.sweep, means, flat.values), flat.projection_units
    )
    assert full  # the grid has verdicts to keep
    for seed in range(3):
        assert racing.resampled(flat, full, random.Random(seed)) == []


def test_a_race_on_a_recorded_gpu_grid_reaches_its_verdicts() -> None:
    # The Vulkan-against-CUDA study (9 points x 8 units) raced on its own units in five
    # orders: the report, reading the race's decisions as racing.json gives them (each stopped
    # point against the best that stopped it), reaches the full grid's verdicts every time.
    folder = racing.REPO / "docs" / "studies" / "h200-vulkan-vs-cuda" / "results"
    if not folder.exists():
        pytest.skip("the Vulkan study is not in this checkout")
    grid = racing.load_folder(folder, "h200-vulkan-vs-cuda")
    points = {j: dict(c.values) for c in grid.sweep.cells for j in c.jobs}
    slots = {j: racing.slot_count(grid.sweep, points[j]) for j in points}
    full = racing.verdicts(
        racing.with_values(
            grid.sweep,
            {j: statistics.fmean(v.values()) for j, v in grid.values.items()},
            grid.values,
        ),
        grid.projection_units,
    )
    rng = random.Random(1)
    for _ in range(5):
        order = list(grid.units)
        rng.shuffle(order)
        per_unit = {j: [grid.values[j][u] for u in order] for j in grid.values}
        cost = {j: [grid.cost[j][u] for u in order] for j in grid.values}
        race = racing.simulate(
            per_unit,
            cost,
            RaceSettings(),
            points,
            racing.thresholds(grid.sweep),
            grid.start_s,
            slots,
        )
        measured = {j: {u: grid.values[j][u] for u in order[: race.units[j]]} for j in grid.values}
        means = racing.paired_estimates(measured, race.best)
        got = racing.verdicts(
            racing.with_values(grid.sweep, means, measured, race), grid.projection_units
        )
        assert got == full

"""Racing against the full grid: replays recorded per-unit results through the racing policy.

For each recorded grid (a sweep folder, the seed-shaped reference or the stored CPU sweep), over
many random seeds: the units are put in a new order (the order a race would measure them in), the
race is simulated (benchkit.racing.policy.simulate), and the report's own verdicts
(benchkit.report.verdicts.analyse) are computed twice, on the full grid and on what the race
measured. Printed and written as JSON: the share of the full grid's machine time the race used, the
share of seeds whose recommendation differs, and the share where ANY verdict differs.

Machine time is what a real race spends: each measured unit's recorded time, plus a launch's
overhead (server start, warm-up, teardown: the recorded job_seconds - wall_s) for every round
a point takes part in, against the full grid's units and one launch a point. A round gives a
point one unit a slot at least, as the racing sweeper does (--no-fill-slots replays a race
that would leave slots idle, which measures a worse time per unit than a full pass: a figure
to compare, not one a race could honestly reach).

A point the race stopped has fewer units than the others. Its objective can be taken two ways,
both measured here: `raw`, the mean of its own units (what a plain report of the racing sweep
would print), and `paired`, the race's own paired ratio to the best on the units both have,
times the best's mean over all its units (benchkit.racing.estimate). Units differ in
difficulty; a mean over the first 3 of 12 units is biased by which 3 they were, a ratio on
shared units is not.

    python bench/racing.py --seeds 200 --out docs/perf/racing/racing.json
    python bench/racing.py --record /tmp/cpu-sweep --to bench/data/cpu-sweep   # store a sweep
    python bench/racing.py --seeds 200 --cuts --out docs/perf/racing/racing-cuts.json # + fixed cuts
    python bench/racing.py --markdown docs/perf/racing/racing.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# The recorded grids live in bench/racing_grid.py, the verdicts and the yardsticks a race is
# set against in bench/racing_verdicts.py; their names are re-exported here (__all__), as the
# bench scripts (`import racing as br`), bench/race_check.py and the tests reach them through
# racing.
from bench.racing_grid import (
    CPU,
    REPO,
    SEED,
    STUDIES,
    UNITS_FILE,
    Grid,
    calibrate,
    launch_overheads,
    load_folder,
    load_seed,
    record,
    seed_shaped,
    with_values,
)
from bench.racing_verdicts import (
    JUDGED,
    clairvoyant,
    differing,
    fixed_cuts,
    full_verdicts,
    resampled,
    slot_count,
    thresholds,
    verdicts,
)
from benchkit.cli import Parser, bounded
from benchkit.racing.estimate import imputed_means, paired_estimates
from benchkit.racing.policy import (
    FINITE_CHOICES,
    RaceOutcome,
    RaceSettings,
    first_round,
    simulate,
)

# How a stopped point's objective is stated (module docstring).
HOW = ("raw", "paired", "imputed")
# Measure the pairs a verdict compares until decided (--no-verdict-pairs: only the best).
VERDICT_PAIRS = True
# A round gives a point one unit a slot at least, as the racing sweeper does
# (--no-fill-slots: the replay of a race that would leave slots idle).
FILL_SLOTS = True
# Seeds a grid on which the clairvoyant race is searched too (--clairvoyant; slow: hundreds of
# verdict analyses a seed).
CLAIRVOYANT_SEEDS = 0
# Fixed cuts: every point measured on its first k units (at least its first round), no rule
# of evidence, for each k (--cuts): what a race that stops everything at once reaches; and
# the full grid's verdicts on a resample of its own units, how firmly the grid holds them.
CUTS = False
# The seed-shaped grid's per-unit spread; set from the recorded H200 studies (--calibrate).
UNIT_SD = 0.30
PAIR_SD = 0.05

__all__ = [
    "CLAIRVOYANT_SEEDS",
    "CPU",
    "CUTS",
    "FILL_SLOTS",
    "HOW",
    "JUDGED",
    "PAIR_SD",
    "REPO",
    "SEED",
    "STUDIES",
    "UNITS_FILE",
    "UNIT_SD",
    "VERDICT_PAIRS",
    "Grid",
    "build_parser",
    "calibrate",
    "clairvoyant",
    "differing",
    "fixed_cuts",
    "full_verdicts",
    "launch_overheads",
    "load_folder",
    "load_grids",
    "load_seed",
    "main",
    "markdown",
    "race_settings",
    "raw_means",
    "record",
    "replay",
    "resampled",
    "seed_shaped",
    "slot_count",
    "thresholds",
    "verdicts",
    "with_values",
]


def raw_means(grid: Grid, order: Sequence[str], race: RaceOutcome) -> dict[str, float]:
    return {
        j: statistics.fmean(grid.values[j][u] for u in order[: race.units[j]]) for j in grid.values
    }


def _tally_diff(diff: Sequence[str], counts: dict[str, int]) -> None:
    for k in diff:
        counts[k] = counts.get(k, 0) + 1


def _how_counts() -> dict[str, int]:
    return dict.fromkeys(HOW, 0)


@dataclass
class _Tallies:
    """What `replay` adds up over a grid's seeds, one method per tally, and `summary`, the
    dict it returns (fractions of the seeds)."""

    # Each seed's share of the full grid's machine time the race used, and the share every
    # point's first round alone takes (the least any race under these rules spends).
    shares: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    # Per way of stating a stopped point (HOW): seeds each verdict differs in, and seeds where
    # a judged verdict, the recommendation, or only a status differs.
    differ: dict[str, dict[str, int]] = field(default_factory=lambda: {h: {} for h in HOW})
    any_differ: dict[str, int] = field(default_factory=_how_counts)
    rec_differ: dict[str, int] = field(default_factory=_how_counts)
    status_only: dict[str, int] = field(default_factory=_how_counts)
    # The units each stopped point had when the race stopped it.
    stopped_after: list[int] = field(default_factory=list)
    # The clairvoyant race's share, and the policy's on the same seeds (`clairvoyant`); the
    # policy's share on the seeds where no clairvoyant race was found.
    oracle: list[float] = field(default_factory=list)
    oracle_race: list[float] = field(default_factory=list)
    oracle_none: list[float] = field(default_factory=list)
    # Per fixed cut k: time shares, seeds with any judged verdict differing, per verdict.
    cut_share: dict[int, list[float]] = field(default_factory=dict)
    cut_differ: dict[int, int] = field(default_factory=dict)
    cut_by: dict[int, dict[str, int]] = field(default_factory=dict)
    # The full grid resampled (one bootstrap a seed): seeds with a verdict differing, per verdict.
    boot_differ: int = 0
    boot_by: dict[str, int] = field(default_factory=dict)

    @property
    def oracle_seeds(self) -> int:
        """The seeds on which the clairvoyant race was searched so far."""
        return len(self.oracle) + len(self.oracle_none)

    def add_race(self, race: RaceOutcome, full_s: float, floor_s: float) -> None:
        """One seed's race: its time share, its first round's, and where it stopped points."""
        self.shares.append(race.spent_s / full_s)
        self.floors.append(floor_s / full_s)
        self.stopped_after += [race.units[j] for j, s in race.status.items() if s == "stopped"]

    def add_verdicts(self, how: str, diff: Sequence[str]) -> None:
        """The verdicts (values and statuses) that differ from the full grid's on one seed,
        the stopped points stated `how`."""
        _tally_diff(diff, self.differ[how])
        judged = [k for k in diff if not k.endswith(".status")]
        self.any_differ[how] += bool(judged)
        self.status_only[how] += bool(diff) and not judged
        self.rec_differ[how] += "recommendation" in diff

    def add_oracle(self, seen: float | None, spent_s: float, full_s: float) -> None:
        """One seed's clairvoyant race (None: none found) and the policy's share beside it."""
        if seen is None:
            self.oracle_none.append(spent_s / full_s)
        else:
            self.oracle.append(seen / full_s)
            self.oracle_race.append(spent_s / full_s)

    def add_cuts(self, cuts: Mapping[int, tuple[float, list[str]]], full_s: float) -> None:
        """One seed's fixed cuts: each cut's time share, whether any judged verdict differs,
        and which."""
        for cut, (spent, diff) in cuts.items():
            self.cut_share.setdefault(cut, []).append(spent / full_s)
            judged = [d for d in diff if not d.endswith(".status")]
            self.cut_differ[cut] = self.cut_differ.get(cut, 0) + bool(judged)
            _tally_diff(judged, self.cut_by.setdefault(cut, {}))

    def add_resample(self, diff: Sequence[str]) -> None:
        """One bootstrap of the full grid: the verdicts that moved (statuses left out)."""
        judged = [d for d in diff if not d.endswith(".status")]
        self.boot_differ += bool(judged)
        _tally_diff(judged, self.boot_by)

    def summary(self, grid: Grid, seeds: int, full: Mapping[str, Any] | None) -> dict[str, Any]:
        """The grid's result as --out writes it: the tallies as shares of `seeds`, and `full`,
        the full grid's verdicts (None for a drawn grid, new every seed)."""
        return {
            "grid": grid.name,
            "note": grid.note,
            "seeds": seeds,
            "time_share_mean": statistics.fmean(self.shares),
            "time_share_max": max(self.shares),
            "first_round_share_mean": statistics.fmean(self.floors),
            "recommendation_differs": {k: v / seeds for k, v in self.rec_differ.items()},
            "any_verdict_differs": {k: v / seeds for k, v in self.any_differ.items()},
            "only_status_differs": {k: v / seeds for k, v in self.status_only.items()},
            "differs_by_verdict": {
                h: {k: v / seeds for k, v in d.items()} for h, d in self.differ.items()
            },
            "stopped_after_units_median": statistics.median(self.stopped_after)
            if self.stopped_after
            else None,
            "clairvoyant": self._clairvoyant_summary(),
            "fixed_cuts": [
                {
                    "units": k,
                    "time_share_mean": statistics.fmean(self.cut_share[k]),
                    "any_verdict_differs": self.cut_differ.get(k, 0) / seeds,
                    "differs_by_verdict": {d: v / seeds for d, v in self.cut_by.get(k, {}).items()},
                }
                for k in sorted(self.cut_share)
            ],
            "full_grid_resampled": {
                "any_verdict_differs": self.boot_differ / seeds,
                "differs_by_verdict": {d: v / seeds for d, v in self.boot_by.items()},
            }
            if CUTS
            else None,
            "full_verdicts": full,
        }

    def _clairvoyant_summary(self) -> dict[str, Any]:
        oracle, race = self.oracle, self.oracle_race
        return {
            "seeds": self.oracle_seeds,
            "found": len(oracle),
            "share_mean": statistics.fmean(oracle) if oracle else None,
            "share_min": min(oracle) if oracle else None,
            "share_max": max(oracle) if oracle else None,
            "race_share_mean_same_seeds": statistics.fmean(race) if race else None,
        }


def _race_once(
    g: Grid,
    order: Sequence[str],
    settings: RaceSettings,
    points: Mapping[str, Mapping[str, object]] | None,
    slots: Mapping[str, int] | None,
) -> tuple[RaceOutcome, float, float]:
    """The race on the units in `order`, the full grid's machine seconds (every unit, one
    launch a point) and its first round's (every point's first round, one launch)."""
    per_unit = {j: [g.values[j][u] for u in order] for j in g.values}
    cost = {j: [g.cost[j][u] for u in order] for j in g.values}
    race = simulate(per_unit, cost, settings, points, thresholds(g.sweep), g.start_s, slots)
    full_s = sum(sum(c) for c in cost.values()) + sum(g.start_s.values())
    first = first_round(list(per_unit), settings, len(order), slots or {})
    floor_s = sum(sum(cost[j][: first[j]]) + g.start_s.get(j, 0.0) for j in per_unit)
    return race, full_s, floor_s


def _judge_seed(
    g: Grid,
    order: Sequence[str],
    settings: RaceSettings,
    slots: Mapping[str, int],
    race: RaceOutcome,
    full_s: float,
    full: Mapping[str, Any],
    tally: _Tallies,
) -> None:
    """One seed's race set against the full grid's verdicts `full`: the clairvoyant race and
    the fixed cuts where asked for, and the report's verdicts on what the race measured, each
    way of stating a stopped point."""
    measured = {j: {u: g.values[j][u] for u in order[: race.units[j]]} for j in g.values}
    if tally.oracle_seeds < CLAIRVOYANT_SEEDS:
        tally.add_oracle(clairvoyant(g, order, settings, slots, full), race.spent_s, full_s)
    if CUTS:
        tally.add_cuts(fixed_cuts(g, order, settings, slots, full), full_s)
        # Its own generator, so the race's unit orders stay those of a run without --cuts.
        boot = resampled(g, full, random.Random(f"{g.name}-{len(tally.shares)}"))
        tally.add_resample(boot)
    for how, means in (
        ("raw", raw_means(g, order, race)),
        ("paired", paired_estimates(measured, race.best)),
        ("imputed", imputed_means(measured)),
    ):
        got = verdicts(with_values(g.sweep, means, measured, race), g.projection_units)
        tally.add_verdicts(how, [k for k in full if got.get(k) != full[k]])


def replay(grid: Grid, settings: RaceSettings, seeds: int, rng: random.Random) -> dict[str, Any]:
    """Race the grid `seeds` times with the units in a new order each time."""
    tally = _Tallies()
    full: dict[str, Any] | None = None
    points = {j: dict(c.values) for c in grid.sweep.cells for j in c.jobs}
    slots = {j: slot_count(grid.sweep, points[j]) for j in points} if FILL_SLOTS else None
    for _ in range(seeds):
        g = grid
        if not grid.units:  # seed-shaped: new per-unit values every seed
            g = seed_shaped(UNIT_SD, PAIR_SD, rng, grid)
            full = None
        order = list(g.units)
        rng.shuffle(order)
        race, full_s, floor_s = _race_once(
            g, order, settings, points if VERDICT_PAIRS else None, slots
        )
        tally.add_race(race, full_s, floor_s)
        if full is None:
            full = full_verdicts(g)
        _judge_seed(g, order, settings, slots or {}, race, full_s, full, tally)
    return tally.summary(grid, seeds, full if grid.units else None)


def markdown(data: Mapping[str, Any]) -> str:
    """The table of a JSON written by --out: one row per grid and way of stating a stopped
    point's objective (module docstring)."""
    rows = [
        "| grid | seeds | time used (mean, max) | first round alone | stopped point stated "
        "| recommendation differs | any verdict differs | only a status differs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["results"]:
        for how in HOW:
            rows.append(
                f"| {r['grid']} ({r['note']}) | {r['seeds']} | {r['time_share_mean']:.1%}, "
                f"{r['time_share_max']:.1%} | {r.get('first_round_share_mean', 0):.1%} | {how} "
                f"| {r['recommendation_differs'][how]:.1%} | "
                f"{r['any_verdict_differs'][how]:.1%} | {r['only_status_differs'][how]:.1%} |"
            )
    return "\n".join(rows)


def build_parser() -> Parser:
    """The command's options (module docstring; the racing policy's own in RaceSettings)."""
    p = Parser(prog="python bench/racing.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--seeds", type=bounded(int, 1, 100_000, means="random races per grid"), default=200
    )
    p.add_argument("--rng", type=bounded(int, 0, means="the random seed"), default=20)
    p.add_argument("--out", type=Path)
    p.add_argument("--record", type=Path, help="a sweep folder to store small")
    p.add_argument("--to", type=Path, default=CPU)
    p.add_argument("--markdown", type=Path, help="print the table of a JSON written by --out")
    p.add_argument("--grids", default="seed,cpu,studies")
    p.add_argument("--confidence", type=bounded(float, 0.5, 0.9999, open_lo=True), default=0.95)
    p.add_argument("--margin", type=bounded(float, 0, 0.99, means="a share"), default=0.05)
    p.add_argument("--min-units", type=bounded(int, 2, means="units before a decision"), default=3)
    p.add_argument("--units-per-round", type=bounded(int, 1), default=2)
    p.add_argument("--no-settle", action="store_true")
    p.add_argument("--no-verdict-pairs", action="store_true")
    p.add_argument("--no-fill-slots", action="store_true")
    p.add_argument(
        "--no-knee-rest",
        action="store_true",
        help="measure every running slot count until decided, above the knee too "
        "(benchkit.racing.knee.knee_rests)",
    )
    p.add_argument(
        "--finite",
        choices=tuple(FINITE_CHOICES),
        default="verdict_pairs",
        help="where a test's interval is of the full grid's figure on the workload's finite "
        "units (benchkit.racing.policy.finite)",
    )
    p.add_argument(
        "--clairvoyant",
        type=bounded(int, 0, means="seeds"),
        default=0,
        metavar="N",
        help="also search, on the first N seeds of a grid, the cheapest race that reaches the "
        "full grid's verdicts knowing them (slow)",
    )
    p.add_argument(
        "--cuts",
        action="store_true",
        help="also measure fixed cuts: every point stopped at k units, for each k, no evidence "
        "rule (what reaching a time share by stopping everything at once costs in verdicts)",
    )
    return p


def race_settings(args: argparse.Namespace) -> RaceSettings:
    """The racing policy's settings the options ask for, checked."""
    settings = RaceSettings(
        confidence=args.confidence,
        margin=args.margin,
        min_units=args.min_units,
        units_per_round=args.units_per_round,
        settle=not args.no_settle,
        finite=FINITE_CHOICES[args.finite],
        knee_rest=not args.no_knee_rest,
    )
    settings.check()
    return settings


def load_grids(wanted: Sequence[str]) -> tuple[list[Grid], dict[str, float]]:
    """The grids `wanted` names (seed, cpu, studies), the seed-shaped one first, and the spread
    it is drawn with; sets UNIT_SD and PAIR_SD to that spread."""
    global UNIT_SD, PAIR_SD
    studies = [load_folder(s, s.parent.name) for s in STUDIES]
    # The seed-shaped grid is drawn with the H200 studies' spreads whichever grids are raced,
    # so `--grids seed` alone draws the same grid as the full run; its launches cost the
    # studies' median launch overhead (the seed's results do not record theirs).
    spread = calibrate(studies)
    spread["start_s"] = statistics.median(v for g in studies for v in g.start_s.values())
    recorded: list[Grid] = []
    if "cpu" in wanted and CPU.exists():
        recorded.append(load_folder(CPU, "cpu-sweep"))
    if "studies" in wanted:
        recorded += studies
    UNIT_SD, PAIR_SD = spread["unit_sd"], spread["pair_sd"]
    seed = load_seed()
    seed.start_s = dict.fromkeys(seed.values, spread["start_s"])
    return ([seed] if "seed" in wanted else []) + recorded, spread


def _say(g: Grid, r: Mapping[str, Any]) -> None:
    """A grid's result in a line, and the clairvoyant race's where it was searched."""
    print(
        f"{g.name}: {r['time_share_mean']:.1%} of the grid's time; recommendation differs "
        f"raw {r['recommendation_differs']['raw']:.1%} paired "
        f"{r['recommendation_differs']['paired']:.1%}; any verdict differs raw "
        f"{r['any_verdict_differs']['raw']:.1%} paired "
        f"{r['any_verdict_differs']['paired']:.1%}; by verdict {r['differs_by_verdict']}",
        flush=True,
    )
    c = r["clairvoyant"]
    if c["seeds"]:
        print(
            f"{g.name}: clairvoyant race {c['share_mean']:.1%} (min {c['share_min']:.1%}) "
            f"on {c['found']} of {c['seeds']} seeds, the policy "
            f"{c['race_share_mean_same_seeds']:.1%} on them",
            flush=True,
        )


def main() -> None:
    global VERDICT_PAIRS, FILL_SLOTS, CLAIRVOYANT_SEEDS, CUTS
    args = build_parser().parse_args()
    if args.record:
        record(args.record, args.to)
        return
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
    settings = race_settings(args)
    VERDICT_PAIRS = not args.no_verdict_pairs
    FILL_SLOTS = not args.no_fill_slots
    CLAIRVOYANT_SEEDS = args.clairvoyant
    CUTS = args.cuts
    grids, spread = load_grids(args.grids.split(","))
    rng = random.Random(args.rng)
    results = []
    for g in grids:
        t0 = time.perf_counter()
        r = replay(g, settings, args.seeds, rng)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        results.append(r)
        _say(g, r)
    data = {
        "settings": settings.__dict__,
        "seed_shaped_spread": spread,
        "verdict_pairs": VERDICT_PAIRS,
        "fill_slots": FILL_SLOTS,
        "clairvoyant_seeds": CLAIRVOYANT_SEEDS,
        "fixed_cuts": CUTS,
        "launch_overhead_s": {g.name: statistics.median(g.start_s.values()) for g in grids},
        "rng": args.rng,
        "results": results,
        "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if args.out:
        args.out.write_text(json.dumps(data, indent=1, default=str) + "\n")
    print(markdown(data))


if __name__ == "__main__":
    main()

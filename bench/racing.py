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

    python bench/racing.py --seeds 200 --out docs/perf/racing.json
    python bench/racing.py --record /tmp/cpu-sweep --to bench/data/cpu-sweep   # store a sweep
    python bench/racing.py --seeds 200 --cuts --out docs/perf/racing-cuts.json   # + fixed cuts
    python bench/racing.py --markdown docs/perf/racing.json
"""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchkit.cli import Parser, bounded  # noqa: E402
from benchkit.racing.estimate import imputed_means, paired_estimates  # noqa: E402
from benchkit.racing.observe import unit_values  # noqa: E402
from benchkit.racing.policy import (  # noqa: E402
    FINITE_CHOICES,
    RaceOutcome,
    RaceSettings,
    best_of,
    first_round,
    simulate,
)
from benchkit.report.verdicts import analyse as an  # noqa: E402
from benchkit.report.verdicts.folder import analyse_folder  # noqa: E402

SEED = REPO / "fixtures" / "results" / "seed-r9700"
CPU = REPO / "bench" / "data" / "cpu-sweep"
# Full grids only: a raced study (racing.json) measured its points on different numbers of
# units, and replaying it would race the units the race itself chose (the H100 study's).
STUDIES = sorted(
    s for s in (REPO / "docs" / "studies").glob("*/results") if not (s / "racing.json").exists()
)
UNITS_FILE = "units.json"
# Verdicts that are judgements; `repeats` and `validity` restate the data, `projection`'s
# verdict is hours (a number), compared through the point it recommends.
JUDGED = ("backend", "slots", "mtp")
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


@dataclass
class Grid:
    """A recorded full grid: the analysed folder (its sweep settings and table), each job's
    per-unit objective values and machine seconds, on the units every job has."""

    name: str
    sweep: an.Sweep
    projection_units: int
    values: dict[str, dict[str, float]]
    cost: dict[str, dict[str, float]]
    units: list[str]
    note: str
    # Each job's launch overhead in seconds (job_seconds - wall_s: server start, warm-up,
    # teardown), charged once a launch: a race launches a point once a round.
    start_s: dict[str, float] = field(default_factory=dict)


def load_folder(folder: Path, name: str) -> Grid:
    """A sweep folder with per-unit data: calls.jsonl per job, or units.json (stored sweeps)."""
    a = analyse_folder(folder)
    metric = a.sweep.metric
    values: dict[str, dict[str, float]] = {}
    cost: dict[str, dict[str, float]] = {}
    for r in a.results:
        if r.status != "complete":
            continue
        job = r.job_dir.name
        stored = r.job_dir / UNITS_FILE
        if stored.exists():
            data = json.loads(stored.read_text())
            values[job] = {u: float(v) for u, v in data[metric].items()}
            cost[job] = {u: float(v) for u, v in data[an.THROUGHPUT].items()}
        else:
            values[job] = unit_values(r.job_dir, metric)
            cost[job] = unit_values(r.job_dir, an.THROUGHPUT)
    shared = set.intersection(*(set(v) for v in values.values() if v))
    units = sorted(shared)
    jobs = [j for j in values if all(u in values[j] for u in units)]
    note = f"{len(jobs)} points x {len(units)} units, objective {metric}"
    return Grid(
        name,
        a.sweep,
        a.study.projection_units,
        {j: values[j] for j in jobs},
        {j: cost[j] for j in jobs},
        units,
        note,
        launch_overheads(folder, jobs),
    )


def launch_overheads(folder: Path, jobs: Sequence[str]) -> dict[str, float]:
    """Each job's seconds beyond its replay (provenance.job_seconds - metrics.wall_s); a job
    whose figure is missing or describes a reuse gets the median of the others."""
    own: dict[str, float] = {}
    for job in jobs:
        r = json.loads((folder / job / "result.json").read_text())
        took = (r.get("provenance") or {}).get("job_seconds")
        wall = (r.get("metrics") or {}).get("wall_s")
        if isinstance(took, int | float) and isinstance(wall, int | float) and took >= wall:
            own[job] = float(took) - float(wall)
    typical = statistics.median(own.values()) if own else 0.0
    return {job: own.get(job, typical) for job in jobs}


def seed_shaped(unit_sd: float, pair_sd: float, rng: random.Random, base: Grid) -> Grid:
    """The seed study's grid with per-unit values drawn around its per-point means: a unit
    difficulty every point shares (log sd `unit_sd`) and a point-and-unit noise (`pair_sd`).
    The seed's recorded results hold one figure per point, no per-unit data."""
    n = 12
    # `calibrate` measures the spread of a ratio of two points and of one point's units; a
    # ratio of two draws carries two points' noise, and one point's units carry its noise as
    # well as the shared difficulty: split both so the drawn grid has the measured spreads.
    point_sd = pair_sd / math.sqrt(2)
    shared_sd = math.sqrt(max(unit_sd**2 - point_sd**2, 0.0))
    difficulty = [math.exp(rng.gauss(0, shared_sd)) for _ in range(n)]
    norm = statistics.fmean(difficulty)
    units = [f"u{i:02d}" for i in range(n)]
    values: dict[str, dict[str, float]] = {}
    for job, mean in base.values.items():
        m = mean["mean"]
        raw = [difficulty[i] / norm * math.exp(rng.gauss(0, point_sd)) for i in range(n)]
        scale = m / statistics.fmean(raw)  # the full grid keeps the seed's own figure
        values[job] = {u: v * scale for u, v in zip(units, raw, strict=True)}
    return Grid(
        base.name,
        base.sweep,
        base.projection_units,
        values,
        values,
        units,
        base.note,
        base.start_s,
    )


def load_seed() -> Grid:
    a = analyse_folder(SEED)
    metric = a.sweep.metric
    means = {
        str(row["job"]): {"mean": float(row[metric])}
        for row in an.records(a.df)
        if an.usable(row) and row.get(metric) is not None
    }
    note = f"{len(means)} points, per-unit values drawn around the seed's per-point means"
    return Grid("seed-shaped", a.sweep, a.study.projection_units, means, means, [], note)


# --------------------------------------------------------------------------- verdicts


def with_values(
    sw: an.Sweep,
    means: Mapping[str, float],
    spans: Mapping[str, Mapping[str, float]],
    race: RaceOutcome | None = None,
) -> an.Sweep:
    """The sweep with each job's objective replaced by `means[job]` and its per-unit times by
    `spans[job]`; the rest of the table (other metrics, status, setup) as recorded. With
    `race`, its decisions as racing.json would give them to the report (each stopped point
    against the best that stopped it, the race's final best)."""
    out = copy.copy(sw)
    if race is not None:
        out.race_stopped, out.race_best = dict(race.stopped_by), race.best
    out.df = sw.df.copy()
    out.cells = []
    m = sw.metric
    for cell in sw.cells:
        c = copy.copy(cell)
        c.samples = {k: list(v) for k, v in cell.samples.items()}
        job = c.jobs[0]
        if job in means and c.samples.get(m):
            old = c.samples[m][0]
            c.samples[m] = [means[job]]
            if c.samples.get(f"{m}_uncapped") and old:
                c.samples[f"{m}_uncapped"] = [
                    x * means[job] / old for x in c.samples[f"{m}_uncapped"]
                ]
        out.cells.append(c)
    for job, v in means.items():
        out.df.loc[out.df["job"] == job, m] = v
    out.spans = {j: dict(s) for j, s in spans.items()}
    return out


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


def raw_means(grid: Grid, order: Sequence[str], race: RaceOutcome) -> dict[str, float]:
    return {
        j: statistics.fmean(grid.values[j][u] for u in order[: race.units[j]]) for j in grid.values
    }


def _tally_cuts(
    cuts: Mapping[int, tuple[float, list[str]]],
    full_s: float,
    share: dict[int, list[float]],
    differ: dict[int, int],
    by: dict[int, dict[str, int]],
) -> None:
    """One seed's fixed cuts added to the tallies: each cut's time share, whether any judged
    verdict differs, and which."""
    for cut, (spent, diff) in cuts.items():
        share.setdefault(cut, []).append(spent / full_s)
        judged = [d for d in diff if not d.endswith(".status")]
        differ[cut] = differ.get(cut, 0) + bool(judged)
        _tally_diff(judged, by.setdefault(cut, {}))


def _tally_oracle(
    seen: float | None,
    spent_s: float,
    full_s: float,
    oracle: list[float],
    oracle_race: list[float],
    oracle_none: list[float],
) -> None:
    """One seed's clairvoyant race (None: none found) and the policy's share beside it."""
    if seen is None:
        oracle_none.append(spent_s / full_s)
    else:
        oracle.append(seen / full_s)
        oracle_race.append(spent_s / full_s)


def _tally_diff(diff: Sequence[str], counts: dict[str, int]) -> None:
    for k in diff:
        counts[k] = counts.get(k, 0) + 1


def replay(grid: Grid, settings: RaceSettings, seeds: int, rng: random.Random) -> dict[str, Any]:
    """Race the grid `seeds` times with the units in a new order each time."""
    shares: list[float] = []
    floors: list[float] = []
    differ: dict[str, dict[str, int]] = {h: {} for h in HOW}
    any_differ = dict.fromkeys(HOW, 0)
    rec_differ = dict.fromkeys(HOW, 0)
    status_only = dict.fromkeys(HOW, 0)
    stopped_after: list[int] = []
    full_cache: dict[str, Any] | None = None
    # The clairvoyant race's share, and the policy's on the same seeds (`clairvoyant`).
    oracle: list[float] = []
    oracle_race: list[float] = []
    oracle_none: list[float] = []
    # Per fixed cut k: time shares, seeds with any judged verdict differing, per verdict.
    cut_share: dict[int, list[float]] = {}
    cut_differ: dict[int, int] = {}
    cut_by: dict[int, dict[str, int]] = {}
    # The full grid resampled (one bootstrap a seed): seeds with a verdict differing, per verdict.
    boot_differ = 0
    boot_by: dict[str, int] = {}
    points = {j: dict(c.values) for c in grid.sweep.cells for j in c.jobs}
    slots = {j: slot_count(grid.sweep, points[j]) for j in points} if FILL_SLOTS else None
    for _ in range(seeds):
        g = grid
        if not grid.units:  # seed-shaped: new per-unit values every seed
            g = seed_shaped(UNIT_SD, PAIR_SD, rng, grid)
            full_cache = None
        order = list(g.units)
        rng.shuffle(order)
        per_unit = {j: [g.values[j][u] for u in order] for j in g.values}
        cost = {j: [g.cost[j][u] for u in order] for j in g.values}
        race = simulate(
            per_unit,
            cost,
            settings,
            points if VERDICT_PAIRS else None,
            thresholds(g.sweep),
            g.start_s,
            slots,
        )
        full_s = sum(sum(c) for c in cost.values()) + sum(g.start_s.values())
        shares.append(race.spent_s / full_s)
        # The least any race under these rules spends: every point's first round, one launch.
        first = first_round(list(per_unit), settings, len(order), slots or {})
        floor_s = sum(sum(cost[j][: first[j]]) + g.start_s.get(j, 0.0) for j in per_unit)
        floors.append(floor_s / full_s)
        stopped_after += [race.units[j] for j, s in race.status.items() if s == "stopped"]
        if full_cache is None:
            full_cache = verdicts(
                with_values(
                    g.sweep,
                    {j: statistics.fmean(v.values()) for j, v in g.values.items()},
                    g.values,
                ),
                g.projection_units,
            )
        measured = {j: {u: g.values[j][u] for u in order[: race.units[j]]} for j in g.values}
        if len(oracle) + len(oracle_none) < CLAIRVOYANT_SEEDS:
            seen = clairvoyant(g, order, settings, slots or {}, full_cache)
            _tally_oracle(seen, race.spent_s, full_s, oracle, oracle_race, oracle_none)
        if CUTS:
            cuts = fixed_cuts(g, order, settings, slots or {}, full_cache)
            _tally_cuts(cuts, full_s, cut_share, cut_differ, cut_by)
            # Its own generator, so the race's unit orders stay those of a run without --cuts.
            boot = resampled(g, full_cache, random.Random(f"{grid.name}-{len(shares)}"))
            judged = [d for d in boot if not d.endswith(".status")]
            boot_differ += bool(judged)
            _tally_diff(judged, boot_by)
        for how, means in (
            ("raw", raw_means(g, order, race)),
            ("paired", paired_estimates(measured, race.best)),
            ("imputed", imputed_means(measured)),
        ):
            got = verdicts(with_values(g.sweep, means, measured, race), g.projection_units)
            diff = [k for k in full_cache if got.get(k) != full_cache[k]]
            _tally_diff(diff, differ[how])
            judged = [k for k in diff if not k.endswith(".status")]
            any_differ[how] += bool(judged)
            status_only[how] += bool(diff) and not judged
            rec_differ[how] += "recommendation" in diff
    return {
        "grid": grid.name,
        "note": grid.note,
        "seeds": seeds,
        "time_share_mean": statistics.fmean(shares),
        "time_share_max": max(shares),
        "first_round_share_mean": statistics.fmean(floors),
        "recommendation_differs": {k: v / seeds for k, v in rec_differ.items()},
        "any_verdict_differs": {k: v / seeds for k, v in any_differ.items()},
        "only_status_differs": {k: v / seeds for k, v in status_only.items()},
        "differs_by_verdict": {h: {k: v / seeds for k, v in d.items()} for h, d in differ.items()},
        "stopped_after_units_median": statistics.median(stopped_after) if stopped_after else None,
        "clairvoyant": {
            "seeds": len(oracle) + len(oracle_none),
            "found": len(oracle),
            "share_mean": statistics.fmean(oracle) if oracle else None,
            "share_min": min(oracle) if oracle else None,
            "share_max": max(oracle) if oracle else None,
            "race_share_mean_same_seeds": statistics.fmean(oracle_race) if oracle_race else None,
        },
        "fixed_cuts": [
            {
                "units": k,
                "time_share_mean": statistics.fmean(cut_share[k]),
                "any_verdict_differs": cut_differ.get(k, 0) / seeds,
                "differs_by_verdict": {d: v / seeds for d, v in cut_by.get(k, {}).items()},
            }
            for k in sorted(cut_share)
        ],
        "full_grid_resampled": {
            "any_verdict_differs": boot_differ / seeds,
            "differs_by_verdict": {d: v / seeds for d, v in boot_by.items()},
        }
        if CUTS
        else None,
        "full_verdicts": full_cache if grid.units else None,
    }


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


# The seed-shaped grid's per-unit spread; set from the recorded H200 studies (--calibrate).
UNIT_SD = 0.30
PAIR_SD = 0.05


def calibrate(grids: Sequence[Grid]) -> dict[str, float]:
    """Per-unit spreads of the recorded grids: how much units differ in difficulty (log sd of
    a job's unit values around its mean) and how consistent a pair's ratio is over units (log
    sd of per-unit ratios between two jobs), medians over jobs and pairs."""
    unit_sds, pair_sds = [], []
    for g in grids:
        jobs = list(g.values)
        for j in jobs:
            logs = [math.log(g.values[j][u]) for u in g.units]
            unit_sds.append(statistics.stdev(logs))
        for a_i, a in enumerate(jobs):
            for b in jobs[a_i + 1 :]:
                logs = [math.log(g.values[b][u] / g.values[a][u]) for u in g.units]
                pair_sds.append(statistics.stdev(logs))
    return {
        "unit_sd": statistics.median(unit_sds),
        "pair_sd": statistics.median(pair_sds),
    }


def record(sweep: Path, to: Path) -> None:
    """Store a real sweep small: each complete job's result.json and its per-unit values on
    both bases (units.json), and the sweep's multirun.yaml; calls and logs are left out."""
    to.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sweep / "multirun.yaml", to / "multirun.yaml")
    for job in sorted(p for p in sweep.iterdir() if (p / "result.json").exists()):
        dest = to / job.name
        dest.mkdir(exist_ok=True)
        shutil.copyfile(job / "result.json", dest / "result.json")
        data = {m: unit_values(job, m) for m in (an.THROUGHPUT, an.SLOT_LATENCY)}
        (dest / UNITS_FILE).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


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


def main() -> None:
    global UNIT_SD, PAIR_SD, VERDICT_PAIRS, FILL_SLOTS, CLAIRVOYANT_SEEDS, CUTS
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
    args = p.parse_args()
    if args.record:
        record(args.record, args.to)
        return
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
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
    VERDICT_PAIRS = not args.no_verdict_pairs
    FILL_SLOTS = not args.no_fill_slots
    CLAIRVOYANT_SEEDS = args.clairvoyant
    CUTS = args.cuts
    wanted = args.grids.split(",")
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
    grids = ([seed] if "seed" in wanted else []) + recorded
    rng = random.Random(args.rng)
    results = []
    for g in grids:
        t0 = time.perf_counter()
        r = replay(g, settings, args.seeds, rng)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        results.append(r)
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

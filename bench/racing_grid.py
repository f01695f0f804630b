"""The recorded grids bench/racing.py races: loading a sweep folder's per-unit values and launch
overheads, drawing the seed-shaped grid, storing a real sweep small, measuring the recorded
grids' per-unit spreads, and a grid's sweep with its figures replaced (what the report is given
for a race or a resample). bench/racing.py re-exports every name, so the bench scripts that
`import racing` keep reaching them there.
"""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.racing.observe import unit_values
from benchkit.racing.policy import RaceOutcome
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts.folder import analyse_folder

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "fixtures" / "results" / "seed-r9700"
CPU = REPO / "bench" / "data" / "cpu-sweep"
# Full grids only: a raced study (racing.json) measured its points on different numbers of
# units, and replaying it would race the units the race itself chose (the H100 study's).
STUDIES = sorted(
    s for s in (REPO / "docs" / "studies").glob("*/results") if not (s / "racing.json").exists()
)
UNITS_FILE = "units.json"


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
    """The seed study's per-point means, with no units yet: `seed_shaped` draws its per-unit
    values around them, a new grid each seed."""
    a = analyse_folder(SEED)
    metric = a.sweep.metric
    means = {
        str(row["job"]): {"mean": float(row[metric])}
        for row in an.records(a.df)
        if an.usable(row) and row.get(metric) is not None
    }
    note = f"{len(means)} points, per-unit values drawn around the seed's per-point means"
    return Grid("seed-shaped", a.sweep, a.study.projection_units, means, means, [], note)


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

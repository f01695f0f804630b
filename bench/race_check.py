"""The replay check of a real race: would the points it stopped have kept its verdicts had they
run on to every unit?

A raced sweep (racing.json beside its jobs) measured each stopped point on its first units only.
The units it did not measure are filled in from the point the race measured on every unit (its
best), unit by unit: the best's time on that unit times one of the stopped point's own per-unit
ratios to the best on the units both ran, drawn at random (a bootstrap of the point's own
ratios; `--draws` completions). Each completed grid is analysed as a full grid (no race
decisions) by the report's own rules, and its verdicts are compared with the race's report.
The point estimate (every missing unit at the point's mean ratio) is printed too.

What it assumes: a stopped point's unmeasured units keep the ratio spread its measured units
showed against the best. It cannot see a change the first units did not show (a machine that
slows down later, a unit kind the first units lacked).

The machine term: a stop that compared two machines (the stopped point and its best measured
on different cards, or on a card not recorded in a sweep across cards) carries the offset
between the cards, which its own ratios cannot separate from the setting's effect. Such a
point is replayed a second time with that offset's uncertainty: each completion divides its
ratio by a machine offset drawn from those measured (the same point on two machines: the
study's anchors, and `--shared` folders of jobs that re-ran some points on another machine),
either way round. A stop is *explained by the machine* where its ratio divided by the largest
offset measured is inside the margin: the offset alone could have made it.

    python bench/race_check.py docs/studies/h100-vulkan-vs-cuda-warm/results \
        --out docs/perf/racing/gpu-race-check.json
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.racing import verdicts, with_values  # noqa: E402
from benchkit.racing.observe import RACING_FILE, unit_values  # noqa: E402
from benchkit.report.analysis.anchor_job import AnchorJob  # noqa: E402
from benchkit.report.analysis.anchors import load_anchors  # noqa: E402
from benchkit.report.analysis.sweep import label  # noqa: E402
from benchkit.report.verdicts import analyse as an  # noqa: E402
from benchkit.report.verdicts.engine_of import machine_of  # noqa: E402
from benchkit.report.verdicts.folder import Analysed, analyse_folder  # noqa: E402


class Check(TypedDict):
    folder: str
    draws: int
    reference: str
    units: int
    measured_units: dict[str, int]
    race_time_share: float | None
    race_replay_share: float | None
    race_verdicts: dict[str, str]
    point_estimate_verdicts: dict[str, str]
    point_estimate_differs: list[str]
    differs_share: dict[str, float]
    any_verdict_differs: float
    only_status_differs: float
    # Per point the race stopped: its units, the race's ratio to the best, and the share of
    # completions in which it stays slower than the best by more than the race's margin.
    stopped: dict[str, StoppedPoint]
    # The machine term: the offsets measured (the same point on two machines), the stops that
    # compared two machines, and those the largest offset alone explains.
    machine_offsets: list[MachineOffset]
    cross_machine_stops: list[str]
    explained_by_machine: list[str]


class MachineOffset(TypedDict):
    point: str
    job: str
    machine: str
    other_job: str
    other_machine: str
    ratio: float


class StoppedPoint(TypedDict):
    units: int
    race_ratio: float | None
    completed_ratio_median: float
    holds_share: float
    machines: list[str]
    cross_machine: bool
    # With the machine term (cross-machine stops only; the plain figures otherwise).
    with_machine_median: float
    with_machine_holds_share: float
    explained_by_machine: bool


def offsets_of(sw: an.Sweep, extra: list[AnchorJob]) -> list[MachineOffset]:
    """Each point measured on two machines: the other machine's seconds per unit over the
    sweep job's, on the units both ran (each side's spans scaled to its own figure)."""
    cells = {label({k: c.values.get(k) for k in sw.varying}): c for c in sw.cells}
    out: list[MachineOffset] = []
    for a in [*sw.anchors, *extra]:
        cell = cells.get(label({k: a.values.get(k) for k in sw.varying}))
        if cell is None:
            continue
        for j in cell.jobs:
            mine = sw.spans.get(j, {})
            shared = [u for u in a.spans if u in mine and mine[u] > 0 and a.spans[u] > 0]
            samples = cell.samples.get(sw.metric) or []
            value = samples[0] if samples else None
            if not shared or not value or machine_of(sw, j) == a.machine:
                continue
            # Each side's spans as its figure's shares, on the shared units only.
            k_a = a.value * len(a.spans) / sum(a.spans.values())
            k_j = value * len(mine) / sum(mine.values())
            ratio = sum(a.spans[u] * k_a for u in shared) / sum(mine[u] * k_j for u in shared)
            out.append(
                {
                    "point": label(cell.values),
                    "job": a.job,
                    "machine": a.machine,
                    "other_job": j,
                    "other_machine": machine_of(sw, j),
                    "ratio": ratio,
                }
            )
    return out


def full_grid(sw: an.Sweep) -> an.Sweep:
    """The sweep without the race's decisions: what the report would say of a full grid."""
    out = copy.copy(sw)
    out.race_stopped, out.race_best = {}, None
    return out


@dataclass
class _Measured:
    """What the race measured: each complete job's per-unit values, the reference job (the one
    measured on the most units, the race's best on a tie) and its units, and each job's
    per-unit ratios to the reference on the units both ran."""

    values: dict[str, dict[str, float]]
    ref: str
    units: list[str]
    ratios: dict[str, list[float]]

    def completed(
        self, rng: random.Random, pick: dict[str, float] | None
    ) -> dict[str, dict[str, float]]:
        """Every job on every unit: its own value where it ran the unit, else the reference's
        times one of its own ratios drawn with `rng` (`pick` None), or times its ratio in
        `pick` (its mean ratio where `pick` has none)."""
        values, ratios, ref = self.values, self.ratios, self.ref
        out: dict[str, dict[str, float]] = {}
        for j, v in values.items():
            mean_ratio = statistics.fmean(ratios[j])
            out[j] = {
                u: v[u]
                if u in v
                else values[ref][u]
                * (rng.choice(ratios[j]) if pick is None else pick.get(j, mean_ratio))
                for u in self.units
            }
        return out


def _measured(a: Analysed, race: dict[str, Any]) -> _Measured:
    """The per-unit values of the raced sweep's complete jobs (those with any) and their ratios
    to the reference job."""
    done = [r for r in a.results if r.status == "complete"]
    values = {r.job_dir.name: unit_values(r.job_dir, a.sweep.metric) for r in done}
    values = {j: v for j, v in values.items() if v}
    ref = max(values, key=lambda j: (len(values[j]), j == str(race.get("best"))))
    ratios = {
        j: [v[u] / values[ref][u] for u in v if u in values[ref] and values[ref][u] > 0]
        for j, v in values.items()
    }
    return _Measured(values, ref, sorted(values[ref]), ratios)


@dataclass
class _Stops:
    """The points the race stopped (those with per-unit values), the best each was stopped
    against, the machines of each such pair, and the stops that compared two machines."""

    stopped: list[str]
    against: dict[str, str]
    machines: dict[str, list[str]]
    cross: list[str]


def _stops(sw: an.Sweep, race: dict[str, Any], m: _Measured) -> _Stops:
    """The race's stops as racing.json records them, each with its machines."""
    cards = {machine_of(sw, j) for c in sw.cells for j in c.jobs} - {""}
    points = race["points"]
    stopped = [j for j, pt in points.items() if pt.get("status") == "stopped" and j in m.values]
    against = {j: str(points[j].get("best") or m.ref) for j in stopped}
    machines = {j: sorted({machine_of(sw, j), machine_of(sw, against[j])}) for j in stopped}
    # A stop compared two machines where its two jobs' cards differ, or where one is not
    # recorded in a sweep that ran on several cards (it ran on one of them, not known which).
    cross = [
        j for j in stopped if len(machines[j]) > 1 and (len(cards) > 1 or "" not in machines[j])
    ]
    return _Stops(stopped, against, machines, cross)


def _judged(sw: an.Sweep, n_proj: int, grid: dict[str, dict[str, float]]) -> dict[str, str]:
    """The report's verdicts on a completed grid analysed as a full grid."""
    means = {j: statistics.fmean(g.values()) for j, g in grid.items()}
    got = verdicts(with_values(full_grid(sw), means, grid), n_proj)
    return {k: str(x) for k, x in got.items()}


@dataclass
class _Draws:
    """What the completions gave: per stopped point its ratio to its best in each completion,
    plain and with the machine term; per verdict the completions it differed in, and the
    completions where a judged verdict differed, or only a status."""

    kept: dict[str, list[float]]
    with_machine: dict[str, list[float]]
    differ: dict[str, int] = field(default_factory=dict)
    any_d: int = 0
    status_only: int = 0


def _draw(
    sw: an.Sweep,
    n_proj: int,
    m: _Measured,
    stops: _Stops,
    factors: list[float],
    published: dict[str, str],
    draws: int,
    rng: random.Random,
) -> _Draws:
    """`draws` completions of the grid, each analysed and set against the race's verdicts
    `published`; a cross-machine stop's ratio also divided by a machine offset from
    `factors`."""
    out = _Draws({j: [] for j in stops.stopped}, {j: [] for j in stops.stopped})
    # Its own draws: the completions (and so the figures without the machine term) stay
    # those an earlier run of this check drew with the same --rng.
    mrng = random.Random(f"machine-{draws}")
    for i in range(draws):
        grid = m.completed(rng, None)
        for j in stops.stopped:
            mean = statistics.fmean
            out.kept[j].append(mean(grid[j].values()) / mean(grid[stops.against[j]].values()))
            # The same completion with the cards' offset taken out, drawn either way round.
            off = mrng.choice(factors) if j in stops.cross and factors else 1.0
            out.with_machine[j].append(out.kept[j][-1] / off)
        got = _judged(sw, n_proj, grid)
        diff = [k for k in published if got.get(k) != published[k]]
        for k in diff:
            out.differ[k] = out.differ.get(k, 0) + 1
        if any(not k.endswith(".status") for k in diff):
            out.any_d += 1
        elif diff:
            out.status_only += 1
        if (i + 1) % 20 == 0:
            print(f"[race_check] {i + 1}/{draws} completions", file=sys.stderr)
    return out


def _stopped_points(
    m: _Measured,
    stops: _Stops,
    d: _Draws,
    race: dict[str, Any],
    widest: float,
    margin: float,
    draws: int,
) -> dict[str, StoppedPoint]:
    """Per stopped point, what Check's `stopped` holds (StoppedPoint)."""
    return {
        j: {
            "units": len(m.values[j]),
            "race_ratio": race["points"][j].get("ratio"),
            "completed_ratio_median": statistics.median(d.kept[j]),
            "holds_share": sum(x > 1 + margin for x in d.kept[j]) / draws,
            "machines": stops.machines[j],
            "cross_machine": j in stops.cross,
            "with_machine_median": statistics.median(d.with_machine[j]),
            "with_machine_holds_share": sum(x > 1 + margin for x in d.with_machine[j]) / draws,
            "explained_by_machine": _explained(j in stops.cross, race["points"][j], widest, margin),
        }
        for j in sorted(stops.stopped, key=int)
    }


def check(folder: Path, draws: int, rng: random.Random, shared: list[Path]) -> Check:
    """The replay check of the raced sweep in `folder` (module docstring): `draws` completions
    drawn with `rng`; the machine term's offsets from the study's anchors and `shared`."""
    a = analyse_folder(folder)
    sw, n_proj = a.sweep, a.study.projection_units
    cols = list(sw.varying)
    extra = load_anchors(folder, [str(p.resolve()) for p in shared], cols, sw.metric)
    offsets = offsets_of(sw, extra)
    # Either way round: which card of a pair is the slower one is what is not known.
    factors = [f for o in offsets for f in (o["ratio"], 1 / o["ratio"])]
    widest = max((max(f, 1 / f) for f in factors), default=1.0)
    race = json.loads((folder / RACING_FILE).read_text(encoding="utf-8"))
    m = _measured(a, race)
    stops = _stops(sw, race, m)
    published = {k: str(x) for k, x in verdicts(sw, n_proj).items()}
    margin = float((race.get("settings") or {}).get("margin") or 0.05)
    # The point estimate: every missing unit at the point's mean ratio, nothing drawn.
    point = _judged(
        sw, n_proj, m.completed(rng, {j: statistics.fmean(r) for j, r in m.ratios.items()})
    )
    d = _draw(sw, n_proj, m, stops, factors, published, draws, rng)
    full_m, spent_m = race.get("full_grid_machine_s"), race.get("machine_s")
    full_s, spent_s = race.get("full_grid_s"), race.get("spent_s")
    return {
        "folder": str(folder),
        "draws": draws,
        "reference": m.ref,
        "units": len(m.units),
        "measured_units": {j: len(v) for j, v in sorted(m.values.items(), key=lambda x: int(x[0]))},
        "race_time_share": spent_m / full_m if spent_m and full_m else None,
        "race_replay_share": spent_s / full_s if spent_s and full_s else None,
        "race_verdicts": published,
        "point_estimate_verdicts": point,
        "point_estimate_differs": [k for k in published if point.get(k) != published[k]],
        "differs_share": {k: v / draws for k, v in sorted(d.differ.items())},
        "any_verdict_differs": d.any_d / draws,
        "only_status_differs": d.status_only / draws,
        "stopped": _stopped_points(m, stops, d, race, widest, margin, draws),
        "machine_offsets": offsets,
        "cross_machine_stops": sorted(stops.cross, key=int),
        "explained_by_machine": sorted(
            (j for j in stops.cross if _explained(True, race["points"][j], widest, margin)),
            key=int,
        ),
    }


def _explained(cross: bool, point: dict[str, object], widest: float, margin: float) -> bool:
    """A cross-machine stop whose ratio, divided by the largest machine offset measured, is
    inside the margin: the offset alone could have made the stop."""
    ratio = point.get("ratio")
    return cross and isinstance(ratio, int | float) and ratio / widest <= 1 + margin


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folder", type=Path, help="a raced sweep folder (with racing.json)")
    p.add_argument("--draws", type=int, default=200)
    p.add_argument("--rng", type=int, default=33)
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--shared",
        type=Path,
        action="append",
        default=[],
        help="a folder of jobs that re-ran some of the sweep's points on another machine "
        "(the machine term's offsets; the study's anchors are read too)",
    )
    args = p.parse_args()
    if args.draws < 1:
        sys.exit(f"race_check: --draws {args.draws}: give at least 1 completion to draw")
    if not args.folder.is_dir():
        sys.exit(f"race_check: {args.folder} does not exist: give a raced sweep folder")
    if args.out is not None and (args.out.is_dir() or not args.out.parent.is_dir()):
        sys.exit(f"race_check: --out {args.out}: give a file path in a folder that exists")
    if not (args.folder / RACING_FILE).exists():
        sys.exit(f"race_check: {args.folder} has no {RACING_FILE}: give a raced sweep folder")
    out = check(args.folder, args.draws, random.Random(args.rng), args.shared)
    text = json.dumps(out, indent=2, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()

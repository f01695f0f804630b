"""The comparison engine (benchkit.compare) of a sweep: one series per job of each cell, on
the study's objective, with the machine it ran on. Built once per sweep and shared by every
verdict that asks it, so two verdicts never judge one pair two ways."""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

from benchkit.compare.engine import ACROSS, BRIDGED, Comparison, Engine, Series, Settings
from benchkit.compare.pairs import several
from benchkit.report.analysis.numbers import ComparisonJson, Point
from benchkit.report.analysis.sweep import SLOT_LATENCY, THROUGHPUT, Cell, Sweep, label, norm

# Setup attributes the engine handles itself (a comparison across machines is bridged through
# an anchor or left open), so a verdict on the engine does not also call them contamination.
MACHINE_ATTRIBUTES = ("gpu", "machine", "hardware", "card_memory", "host_busy")


def machine_of(sw: Sweep, job: str) -> str:
    """The machine a job ran on (evidence.machine_name), '' where unknown. A sweep that varies
    the hardware compares machines on purpose: there the machine is the factor, and pairs
    are compared directly."""
    if "hardware" in sw.varying:
        return ""
    setup = sw.setups.get(job, {})
    # A card that had more of its memory in use at the job's start than the sweep's other
    # jobs found (evidence.shared_cards) was shared with something else: another machine.
    memory = setup.get("card_memory", "")
    shared = f" [+{memory}]" if memory and memory != _usual_memory(sw) else ""
    # A CPU server held back by other work on its host (evidence.host_busy): a machine state
    # of its own, one a job, as no two jobs met the same load.
    if setup.get("host_busy") == "busy":
        shared += f" [host busy: job {job}]"
    if setup.get("gpu"):
        return setup["gpu"] + shared
    # A job whose telemetry named no card in a sweep whose other jobs' did ran on one of
    # those cards, which is not known: unknown, not its host's name (the H100 study's job 10).
    if _any_card(sw):
        return ""
    machine = setup.get("machine", "")
    # Known only by a profile on a shared host name, the sweep's own jobs of separate sweeps
    # are separate machine states: no term of a comparison between them holds what changed
    # between the sweeps (review 13: the MTP study's job 7, a one-job sweep copied in beside
    # jobs 0-6, was paired with job 3 at an interval of 1.52x-1.54x). An anchor folder's jobs
    # have no sweep here: they re-ran points on the machine the study names them for.
    sweep = setup.get("sweep", "")
    if machine and sweep and len(_sweeps(sw)) > 1:
        shared += f" [sweep {sweep}]"
    return machine + shared if machine else ""


def _sweeps(sw: Sweep) -> set[str]:
    """The sweeps the sweep's own jobs known only by a profile ran in, found once a sweep."""
    cached = sw.cache.get("profile_sweeps")
    if isinstance(cached, set):
        return cached
    found = {x for s in sw.setups.values() if (x := s.get("sweep", ""))}
    sw.cache["profile_sweeps"] = found
    return found


def _usual_memory(sw: Sweep) -> str:
    """The card memory in use most jobs found at their start (the first job's, in run
    order, on a tie), as evidence.contamination takes the usual value; found once a sweep."""
    cached = sw.cache.get("usual_card_memory")
    if isinstance(cached, str):
        return cached
    jobs = sorted(sw.setups, key=lambda j: (len(j), j))
    known = [v for j in jobs if (v := sw.setups[j].get("card_memory", ""))]
    counts = Counter(known)
    usual = next((v for v in known if counts[v] == max(counts.values())), "")
    sw.cache["usual_card_memory"] = usual
    return usual


_SHARED = re.compile(r" \[\+([^\]]+)\]")
# machine_of's " [sweep mtp8]": a job known only by a profile, of one of several sweeps.
_SWEEP = re.compile(r" \[sweep ([^\]]+)\]")


def _sweeps_apart(machines: Sequence[str]) -> bool:
    """Whether two machines are one profile's in two sweeps (machine_of), nothing else told."""
    if len(machines) != 2 or not all(_SWEEP.search(m) for m in machines):
        return False
    rest = [_SWEEP.sub("", _SHARED.sub("", m)) for m in machines]
    return rest[0] == rest[1]


def _shared_card(machines: Sequence[str]) -> str:
    """Where two machines are one card, one of them found with more of its memory in use
    (machine_of's " [+19.7 GiB]"): that amount; '' otherwise. Said as the same card in
    another state, not as another machine (rules v14, from a review that read "on two
    machines" of the H200 qwen3 study's jobs 5 and 6, which ran on the sweep's one card)."""
    if len(machines) != 2:
        return ""
    cards = [_SWEEP.sub("", _SHARED.sub("", m)) for m in machines]
    found = [m[1] for x in machines if (m := _SHARED.search(x))]
    return found[0] if cards[0] == cards[1] and len(found) == 1 else ""


def _any_card(sw: Sweep) -> bool:
    """Whether any job's telemetry named its card, found once a sweep: asked for every job,
    looking through every job's setup each time was quadratic (2 million steps at 1,000 jobs)."""
    cached = sw.cache.get("any_card")
    if isinstance(cached, bool):
        return cached
    found = any(s.get("gpu") for s in sw.setups.values())
    sw.cache["any_card"] = found
    return found


def point_of(cell: Cell) -> str:
    return label(cell.values)


def _series(sw: Sweep, cell: Cell) -> list[Series]:
    m = sw.metric
    samples = cell.samples.get(m) or []
    point = point_of(cell)
    # Each job's machine, and those a race recorded for its units (one it extended elsewhere).
    machines = {machine_of(sw, j) for j in cell.jobs}
    machines |= {m for j in cell.jobs for m in sw.unit_machines.get(j, {}).values()}
    if len(samples) > 1 and len(machines) == 1:
        # Repeats of one machine (passes of one job, or twin jobs): their spread is the noise.
        job = cell.jobs[0]
        return [Series(point, job, machines.pop(), {}, tuple(samples), cell.mean(m))]
    out = []
    for i, job in enumerate(cell.jobs):
        value = samples[i] if i < len(samples) else None
        spans = sw.unit_times.get(job) or sw.spans.get(job, {})
        # A unit that held a cold start is paired less the cold start's excess, not left out:
        # leaving such units out (a rules-v14 draft) took 5 of the 8 units of the H200 Vulkan
        # study's 8-slot job, a first wave, and decided its 1-slot backend pair only because
        # job 0's first unit also held two stalls that are no cold start (review 12).
        units = _own(sw, job, spans) or _scaled(spans, value)
        out += _by_machine(sw, Series(point, job, machine_of(sw, job), units, (), value))
    return out


def _by_machine(sw: Sweep, x: Series) -> list[Series]:
    """A job a race extended on another machine, as one series per machine its units ran on
    (racing.json's unit_machines): its units on the first card pair with the points measured
    there, those on the second with the points measured there, never one with the other."""
    where = sw.unit_machines.get(x.job, {})
    machines = {where.get(u, "") for u in x.units}
    if len(machines) < 2 or "" in machines or "hardware" in sw.varying:
        return [x]
    return [
        Series(x.point, x.job, m, {u: t for u, t in x.units.items() if where[u] == m}, part=True)
        for m in sorted(machines)
    ]


def _own(sw: Sweep, job: str, spans: dict[str, float]) -> dict[str, float]:
    """A job's per-unit times on its own measurement: the spans themselves on the slot-latency
    basis; on the throughput basis scaled so that they add up to its own wall clock less its
    cold starts (units overlap when slots > 1: the scale gives each its share, as the race
    takes it, benchkit.racing.observe.scale_to_wall). Never the table's figure, which a race
    restates from other points ({}: neither basis, or the job's wall clock unknown)."""
    if sw.metric == SLOT_LATENCY:
        return dict(spans)
    wall = sw.row(job).get("wall_s")
    if sw.metric != THROUGHPUT or not isinstance(wall, int | float) or not wall > 0:
        return {}
    js = sw.stalls.get(job)
    total = sum(spans.values())
    if total <= 0:
        return {}
    k = (float(wall) - (js.cold_excess_s if js is not None else 0.0)) / total
    return {u: t * k for u, t in spans.items()}


def _scaled(spans: dict[str, float], value: float | None) -> dict[str, float]:
    """Per-unit spans scaled so that their mean is `value` (a job whose wall clock is not
    known: its figure on the objective)."""
    total = sum(spans.values())
    if value is None or total <= 0:
        return dict(spans)
    k = value * len(spans) / total
    return {u: t * k for u, t in spans.items()}


def engine_of(sw: Sweep) -> Engine:
    """The sweep's engine, built on first use."""
    cached = sw.cache.get("engine")
    if isinstance(cached, Engine):
        return cached
    series = [x for c in sw.cells if c.mean(sw.metric) is not None for x in _series(sw, c)]
    cells = {point_of(c) for c in sw.cells}
    for a in sw.anchors:
        point = label({k: a.values.get(k) for k in sw.varying})
        machine = "" if "hardware" in sw.varying else a.machine
        if point in cells:
            series.append(Series(point, a.job, machine, _scaled(a.spans, a.value), (), a.value))
    run_sd, run_dof = twin_spread(series)
    settings = Settings(
        margin=sw.knee_gain,
        confidence=0.95,
        declared_noise=sw.noise,
        run_sd=run_sd,
        run_dof=run_dof,
    )
    eng = Engine(series, settings)
    sw.cache["engine"] = eng
    return eng


def measured_engine(sw: Sweep) -> Engine | None:
    """The engine with the cold starts kept (None where no job had any): each job that had
    one compared on its units as measured, over its whole wall clock, at its figure as
    measured. What a decision would be had benchkit's rule not left them out."""
    if not sw.measured_spans:
        return None
    cached = sw.cache.get("measured_engine")
    if isinstance(cached, Engine):
        return cached
    eng = engine_of(sw)
    series = []
    for xs in eng.by_point.values():
        for x in xs:
            js = sw.stalls.get(x.job)
            spans = sw.measured_spans.get(x.job)
            if js is None or not spans or not x.units or x.figure is None:
                series.append(x)
                continue
            value = x.figure + js.cold_excess_s / js.units if js.units else x.figure
            series.append(Series(x.point, x.job, x.machine, _scaled(spans, value), (), value))
    measured = Engine(series, eng.settings)
    sw.cache["measured_engine"] = measured
    return measured


def twin_spread(series: Sequence[Series]) -> tuple[float | None, float]:
    """The run-to-run spread of one run's log figure, pooled over the points measured by two
    or more single-run jobs on one machine (twin jobs of the sweep, or an anchor folder that
    re-ran its points there), and its degrees of freedom; (None, inf) without twins. Each
    twin's figure is its per-unit mean on the units every twin of that point ran, so that
    the figures differ only by the runs, not by which units each happened to run."""
    groups: dict[tuple[str, str], list[Series]] = {}
    for x in series:
        if x.units and not x.repeats:
            groups.setdefault((x.point, x.machine), []).append(x)
    ss, dof = 0.0, 0
    for group in groups.values():
        # A twin with every unit's time equal to another's is a copy of the same run (a folder
        # copied as its own twin), not a second run: it would measure no run-to-run noise.
        seen: set[tuple[tuple[str, float], ...]] = set()
        twins = []
        for t in group:
            key = tuple(sorted(t.units.items()))
            if key not in seen:
                seen.add(key)
                twins.append(t)
        if len(twins) < 2:
            continue
        shared = set.intersection(*(set(t.units) for t in twins))
        if len(shared) < 1:
            continue
        logs = [math.log(statistics.fmean(t.units[u] for u in shared)) for t in twins]
        mean = statistics.fmean(logs)
        ss += sum((v - mean) ** 2 for v in logs)
        dof += len(logs) - 1
    return (math.sqrt(ss / dof), float(dof)) if dof else (None, math.inf)


def _points(sw: Sweep) -> dict[str, Point]:
    """Each cell's factor values by its point, made once a sweep: each comparison made the map
    again (a million labels for the 994 comparisons of a 1,000-job sweep)."""
    cached = sw.cache.get("points")
    if isinstance(cached, dict):
        return cached
    points = {point_of(x): dict(x.values) for x in sw.cells}
    sw.cache["points"] = points
    return points


def comparison_json(sw: Sweep, c: Comparison) -> ComparisonJson:
    """A comparison as verdict numbers, its points as the sweep's factor values."""
    points = _points(sw)
    via = points.get(c.via) if c.via else None
    # Copies, as a map made for each comparison gave: the numbers are the verdict's own.
    out: ComparisonJson = {
        "base": dict(points.get(c.base, {})),
        "other": dict(points.get(c.other, {})),
        "ratio": c.ratio,
        "low": c.low,
        "high": c.high,
        "units": c.units,
        "basis": c.basis,
        "machine": c.machine,
        "via": None if via is None else dict(via),
        "outcome": c.outcome,
        "needed": c.needed,
        "jobs": list(c.jobs),
        "run_noise": c.run_noise,
    }
    if c.machine == ACROSS and len(c.machines) < 2:
        out["unrecorded"] = True
    if c.near_margin:
        out["near_margin"] = True
    if any(sw.setups.get(j, {}).get("host_busy") == "busy" for j in c.jobs):
        out["host_busy"] = True
    shared = _shared_card(c.machines)
    if c.machine == ACROSS and shared:
        out["shared_card"] = shared
    if c.machine == ACROSS and any(several(m) for m in c.machines):
        out["several"] = True
    if c.machine == ACROSS and _sweeps_apart(c.machines):
        out["sweeps"] = True
    if c.machine == BRIDGED:
        out["interaction"] = c.interaction
    if c.chain:
        out["chain"] = [dict(points.get(x, {})) for x in c.chain]
    if c.machine != BRIDGED and sw.metric in (THROUGHPUT, SLOT_LATENCY):
        if c.sides is not None:
            out["sides"] = [c.sides[0], c.sides[1]]
        elif c.means is not None and any("/" in j for j in c.jobs):
            # An anchor folder's runs: a table's row shows the sweep's own jobs, so its cell
            # gives the two figures the ratio is of (a review read 6.1 s and 6.6 s beside
            # "Vulkan 1.28x (anchor runs)", the ratio of two other jobs' 5.7 s and 7.4 s).
            out["means"] = [c.means[0], c.means[1]]
    return out


def figures_apart(sw: Sweep, points: Sequence[Mapping[str, object]]) -> bool:
    """Whether the table figures of `points` (their cells' jobs) ran on more than one known
    machine: a row of two such figures compares two cards as much as two settings (review
    13: the H100 backend table's 8-slot row, 6.1 s on one card beside 6.6 s on another)."""
    index = _cell_index(sw)
    machines: set[str] = set()
    for point in points:
        key = frozenset((k, norm(x)) for k, x in point.items())
        cells = [index[key]] if key in index else _matching(sw, point)
        for cell in cells:
            machines |= {m for j in cell.jobs if (m := machine_of(sw, j))}
    return len(machines) > 1


def _cell_index(sw: Sweep) -> dict[frozenset[tuple[str, str]], Cell]:
    """The sweep's cells by their values, built once a sweep (a 1,000-job table asks for
    every row's cells)."""
    cached = sw.cache.get("cell_index")
    if isinstance(cached, dict):
        return cached
    index = {frozenset((k, norm(x)) for k, x in c.values.items()): c for c in sw.cells}
    sw.cache["cell_index"] = index
    return index


def _matching(sw: Sweep, point: Mapping[str, object]) -> list[Cell]:
    return [
        c for c in sw.cells if all(c.get(k) == norm(x) for k, x in point.items() if k in c.values)
    ]

"""The sweep: factor names and metric constants, small statistics, the planned space,
and the table of cells (one per planned point, with its repeats) that every verdict reads.
Nothing here judges; `verdicts` do.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchkit.config.space import factor_name
from benchkit.config.space import parse_sweep_overrides as parse_sweep_overrides
from benchkit.racing.estimate import Restated
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.anchor_job import AnchorJob as AnchorJob
from benchkit.report.analysis.caps import JobCaps
from benchkit.report.analysis.evidence import Objective
from benchkit.report.analysis.job_builds import BuildTraits
from benchkit.report.analysis.numbers import (
    Contamination,
    MissingPoint,
    Point,
)
from benchkit.report.analysis.stalls import JobStalls
from benchkit.report.lang.fmt import norm as norm

THROUGHPUT = "s_per_unit_throughput"


SLOT_LATENCY = "s_per_unit_slot_latency"


DECODE = "decode_tok_s"


PREFILL = "prefill_tok_s"


COMPLETE = "complete"


PROVISIONAL = "provisional"


NOT_RUN = "not run"


# Factors that describe what was measured rather than how it was served: numbers are never
# compared across them.
BASIS_FACTORS = ("model", "hardware", "workload")


# Throughput figures that mean the same at every slot count (measure.DEFINITIONS).
OUTPUT = "output_tok_s"
SEQ_DECODE = "seq_decode_tok_s"
SEQS_PER_STEP = "seqs_per_step"
METRICS = (
    THROUGHPUT,
    SLOT_LATENCY,
    DECODE,
    PREFILL,
    OUTPUT,
    SEQ_DECODE,
    SEQS_PER_STEP,
    "draft_acceptance",
    "wall_s",
)


# Two-sided 95% Student t critical values by degrees of freedom (1..30); 1.96 beyond.
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


# One row of the results table as a dict, column -> value (None where pandas has NaN). The
# columns are the sweep's own (its factors, metrics and recorded fields): no fixed shape.
Row = dict[str, Any]


def label(point: Mapping[str, Any]) -> str:
    """'backend=vulkan, slots=4, mtp=false'."""
    return ", ".join(f"{k}={norm(v)}" for k, v in point.items())


@dataclass(frozen=True)
class Stats:
    """Mean and noise of one metric over repeats; `ci` is the 95% half-width of the mean."""

    n: int
    mean: float
    sd: float | None
    cv: float | None
    ci: float | None


def t95(df: int) -> float:
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def describe(values: Sequence[float]) -> Stats | None:
    """Mean, standard deviation, coefficient of variation and 95% CI; None without values."""
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not vals:
        return None
    mean = statistics.fmean(vals)
    if len(vals) < 2:
        return Stats(1, mean, None, None, None)
    sd = statistics.stdev(vals)
    ci = t95(len(vals) - 1) * sd / math.sqrt(len(vals))
    return Stats(len(vals), mean, sd, sd / mean if mean else None, ci)


def compare(base: Stats, other: Stats, min_effect: float) -> str:
    """'same', 'lower' or 'higher': `other` against `base`. A difference counts only when it
    is larger than `min_effect` (relative) and, when both have repeats, larger than the
    noise (the two 95% half-widths combined). Inside the noise is 'same', never a win."""
    if base.mean == 0:
        return "same"
    rel = other.mean / base.mean - 1
    if abs(rel) < min_effect:
        return "same"
    if base.ci is not None and other.ci is not None:
        noise = math.hypot(base.ci, other.ci)
        if abs(other.mean - base.mean) <= noise:
            return "same"
    return "higher" if rel > 0 else "lower"


def planned_space(
    declared: Mapping[str, Sequence[Any]], swept: Mapping[str, Sequence[Any]]
) -> dict[str, list[Any]]:
    """The study's declared factors united with what the sweep was launched over: a value
    that was declared or launched is planned."""
    out: dict[str, list[Any]] = {}
    for source in (declared, swept):
        for key, values in source.items():
            # Named as the jobs record it (benchkit.space): server.batch is `batch`.
            name = factor_name(key)
            have = out.setdefault(name, [])
            for v in values:
                if norm(v) not in {norm(x) for x in have}:
                    have.append(v)
    return out


@dataclass(frozen=True)
class Missing:
    """A planned point without a complete result: never run, or incomplete/failed/unavailable."""

    point: Point
    status: str
    reason: str | None = None

    @property
    def label(self) -> str:
        return label(self.point)

    def to_json(self) -> MissingPoint:
        return {
            "point": self.point,
            "label": self.label,
            "status": self.status,
            "reason": self.reason,
        }


@dataclass
class Cell:
    """One configuration (the values of the varying factors) and its usable repeats."""

    values: Point
    jobs: list[str] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)

    def stats(self, metric: str) -> Stats | None:
        return describe(self.samples.get(metric, []))

    def mean(self, metric: str) -> float | None:
        s = self.stats(metric)
        return None if s is None else s.mean

    def get(self, key: str) -> str:
        return norm(self.values.get(key))


@dataclass
class Sweep:
    """A sweep ready for verdicts: tidy rows, which factors vary, the usable configurations,
    and the planned points that did not complete."""

    df: pd.DataFrame
    varying: list[str]
    cells: list[Cell]
    planned: dict[str, list[Any]]
    missing: list[Missing]
    n_planned: int
    min_effect: float
    knee_gain: float
    constants: Point
    objective: Objective = field(default_factory=lambda: ev.objective_of("throughput"))
    # Declared relative run-to-run noise for single runs (study.noise), if any.
    noise: float | None = None
    # job -> unit -> seconds that unit took (per-unit times within a pass, from calls.jsonl).
    spans: dict[str, dict[str, float]] = field(default_factory=dict)
    # job -> unit -> seconds as the comparison engine pairs them: every unit, its cold
    # starts' excess taken out (stalls.JobStalls.unit_times); `spans` (stalled units left out)
    # is the engine's fallback where a job has no `unit_times`.
    unit_times: dict[str, dict[str, float]] = field(default_factory=dict)
    # The per-unit spans as measured, cold starts kept, of the jobs that had any: what a
    # comparison would be with them (verdicts.cold_check).
    measured_spans: dict[str, dict[str, float]] = field(default_factory=dict)
    # A raced sweep: job -> the job it was stopped against, for each job the racing sweeper
    # stopped (racing.json), and the race's final best: the job table says which were
    # stopped; the verdicts compare every pair on the comparison engine, as the race does.
    race_stopped: dict[str, str] = field(default_factory=dict)
    race_best: str | None = None
    # A raced job's figure as the table states it: over its machine's units in the race, how
    # many of them its own (racing.restate).
    restated: dict[str, Restated] = field(default_factory=dict)
    # How each job's server was built (job_builds.build_traits): a backend verdict whose
    # backends' builds differ in more than the backend says so beside its ratios.
    build_traits: dict[str, BuildTraits] = field(default_factory=dict)
    # job -> the metrics its result.json says were derived from a publication's stated
    # shapes, not measured (reference.derived): a verdict resting on one is provisional.
    derived: dict[str, list[str]] = field(default_factory=dict)
    # job -> the share of its slot-time idle while the server had work (analysis.slot_use).
    slots_idle: dict[str, float] = field(default_factory=dict)
    # The points a finished race left undecided against its best (racing.json): a verdict
    # that compares one rests on a pair the race's paired test did not settle.
    race_undecided: list[str] = field(default_factory=list)
    # job -> unit -> machine, where a race recorded it (a job it extended on another card
    # measured its units on two): the engine splits such a job's units by machine.
    unit_machines: dict[str, dict[str, str]] = field(default_factory=dict)
    # Jobs whose setup differs in something no swept factor explains (evidence.contamination).
    contaminated: list[Contamination] = field(default_factory=list)
    # Each job's setup as `contaminated` compared them, and the further keys it compared:
    # a verdict's own jobs are compared among themselves (`taint`).
    setups: dict[str, dict[str, str]] = field(default_factory=dict)
    setup_extra: list[str] = field(default_factory=list)
    cap_limit: float = 0.05
    # Factors that differ between jobs although the planned space does not vary them.
    unplanned: list[str] = field(default_factory=list)
    # Jobs with calls far outside their own distribution (benchkit.report.analysis.stalls).
    stalls: dict[str, JobStalls] = field(default_factory=dict)
    # Each job's calls as far as the generation cap goes (benchkit.report.analysis.caps).
    caps: dict[str, JobCaps] = field(default_factory=dict)
    # The lines of each job's calls.jsonl that could not be read, by job.
    unreadable: dict[str, list[int]] = field(default_factory=dict)
    # Factors the study declares the application's choice (study.application_factors).
    application: list[str] = field(default_factory=list)
    # Jobs of other folders that re-ran some points on another machine (study.anchors): the
    # comparison engine's bridges, never cells.
    anchors: list[AnchorJob] = field(default_factory=list)
    # What is derived from the sweep once and shared by its verdicts (the comparison engine).
    cache: dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    # `row`'s index of the table by job, and the frame, columns Index and length it is of.
    _rows: dict[Any, Row] = field(default_factory=dict, init=False, repr=False, compare=False)
    _rows_shape: tuple[Any, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def metric(self) -> str:
        return self.objective.metric

    def row(self, job: str) -> Row:
        """The job's row of the table (its first, as the table orders them); {} for none."""
        # Asked tens of thousands of times in a large sweep, filtering the frame for each took
        # most of a 1,000-job report's time: indexed by job once, again when the frame gains
        # columns (drift and task, added later: a new Index, held so its id is not reused).
        df, seen = self.df, self._rows_shape
        if seen is None or seen[0] is not df or seen[1] is not df.columns or seen[2] != len(df):
            self._rows = {}
            for r in records(df):
                self._rows.setdefault(r["job"], r)
            self._rows_shape = (df, df.columns, len(df))
        found = self._rows.get(job)
        # A copy, as filtering gave: a caller may change the row it was handed.
        return {} if found is None else dict(found)

    def taint(self, cells: Iterable[Cell]) -> list[Contamination]:
        """Contamination among the jobs of `cells`: their setups compared with each other,
        the usual value being the one most of them share (not the sweep's: a verdict whose
        jobs all ran on one card is not contaminated by the sweep's other cards). A single
        job, and a sweep built without setups, keep the sweep-wide comparison."""
        jobs = [j for c in cells for j in c.jobs]
        if not self.setups or len(jobs) < 2:
            # One job (a projection's point) is judged against the sweep it was chosen from.
            return ev.tainted(self.contaminated, jobs)
        own = {j: self.setups[j] for j in jobs if j in self.setups}
        return ev.contamination(own, self.varying, self.setup_extra)

    def missing_where(self, where: Mapping[str, Any]) -> list[Missing]:
        """Missing points that agree with `where` on every key both name."""
        keys = [k for k in where if k in self.planned]
        return [
            m for m in self.missing if all(norm(m.point.get(k)) == norm(where[k]) for k in keys)
        ]

    def find(self, where: Mapping[str, Any]) -> Cell | None:
        for c in self.cells:
            if all(c.get(k) == norm(v) for k, v in where.items() if k in c.values):
                return c
        return None


def records(df: pd.DataFrame) -> list[Row]:
    """The table's rows as dicts, with pandas' NaN for a missing value turned back into None."""
    if not len(df):
        return []
    return [
        {k: (None if _is_nan(v) else v) for k, v in row.items()} for row in df.to_dict("records")
    ]


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def usable(row: Mapping[str, Any]) -> bool:
    """A row whose numbers may enter a verdict: complete and without an identity problem."""
    return row.get("status") == COMPLETE and not row.get("identity_problem")


def _cells(
    rows: Sequence[Mapping[str, Any]],
    varying: Sequence[str],
    per_repeat: Mapping[str, Sequence[Mapping[str, Any]]],
    metrics: Sequence[str],
) -> list[Cell]:
    """One cell per configuration of the varying factors, holding its usable jobs and the
    samples of each metric (per repeat where a job replayed its workload; per-unit metrics
    also without the capped calls' time)."""
    cells: dict[tuple[str, ...], Cell] = {}
    for r in rows:
        if not usable(r):
            continue
        key = tuple(norm(r.get(c)) for c in varying)
        cell = cells.setdefault(key, Cell(values={c: r.get(c) for c in varying}))
        cell.jobs.append(str(r["job"]))
        reps = [_flat(rep) for rep in per_repeat.get(str(r["job"])) or []]
        for m in metrics:
            nums = [float(x) for rep in reps if _is_num(x := rep.get(m))]
            caps: Sequence[Mapping[str, object]]
            if len(reps) > 1 and len(nums) == len(reps):
                vals, caps = nums, reps
            elif _is_num(r.get(m)):
                vals, caps = [float(r[m])], [r]
            else:
                continue
            cell.samples.setdefault(m, []).extend(vals)
            if m in ev.PER_UNIT:
                out = [ev.uncapped(v, {**r, **c}) for v, c in zip(vals, caps, strict=True)]
                if all(x is not None for x in out):
                    cell.samples.setdefault(f"{m}_uncapped", []).extend(
                        float(x) for x in out if x is not None
                    )
    return list(cells.values())


def build_sweep(
    df: pd.DataFrame,
    factor_cols: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    *,
    min_effect: float = 0.05,
    knee_gain: float = 0.05,
    choices: Mapping[str, Mapping[str, str]] | None = None,
    per_repeat: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    objective: Objective | None = None,
    noise: float | None = None,
    spans: Mapping[str, Mapping[str, float]] | None = None,
    setups: Mapping[str, Mapping[str, str]] | None = None,
    cap_limit: float = 0.05,
    stalls: Mapping[str, JobStalls] | None = None,
    caps: Mapping[str, JobCaps] | None = None,
    unreadable: Mapping[str, list[int]] | None = None,
    application: Sequence[str] = (),
    race: tuple[Mapping[str, str], str | None] = ({}, None),
    race_undecided: Sequence[str] = (),
    anchors: Sequence[AnchorJob] = (),
    unit_times: Mapping[str, Mapping[str, float]] | None = None,
) -> Sweep:
    """Group the tidy table into configurations and find the planned points that did not
    complete. `choices` maps job -> Hydra group choices (so `model=qwen3.6-35b-a3b` in a
    sweep matches a result whose factors name the model itself); `per_repeat` maps job ->
    per-repeat metrics when a job replayed its workload more than once. `objective` decides
    the verdicts; `noise`, `spans`, `setups` and `cap_limit` feed the evidence rules
    (evidence.py). With a planned space, a factor that differs between jobs but is not planned
    does not split the configurations: it is contamination, named by the verdicts it touches."""
    objective = objective or ev.objective_of("throughput")
    rows = records(df)
    present = [c for c in factor_cols if c in df.columns]
    planned_d = {k: list(v) for k, v in planned.items()}
    varying, unplanned = _split_factors(rows, present, planned_d)
    constants = {c: rows[0].get(c) for c in present if c not in varying} if rows else {}
    metrics = list(dict.fromkeys([*METRICS, objective.metric, *objective.slo]))

    cells = _cells(rows, varying, per_repeat or {}, metrics)
    keys, points = _points(rows, planned_d, varying)
    missing = _missing(rows, keys, points, choices or {})
    compared = _compared(rows, setups or {}, unplanned)
    extra = [c for c in unplanned if c not in ev.ATTRIBUTES]
    return Sweep(
        df=df,
        varying=varying,
        cells=cells,
        planned=planned_d,
        missing=missing,
        n_planned=len(points),
        min_effect=min_effect,
        knee_gain=knee_gain,
        constants=constants,
        objective=objective,
        noise=noise,
        spans={k: dict(v) for k, v in (spans or {}).items()},
        unit_times={k: dict(v) for k, v in (unit_times or {}).items()},
        race_stopped=dict(race[0]),
        race_best=race[1],
        race_undecided=list(race_undecided),
        contaminated=ev.contamination(compared, varying, extra),
        setups=compared,
        setup_extra=extra,
        cap_limit=cap_limit,
        unplanned=unplanned,
        stalls=dict(stalls or {}),
        caps=dict(caps or {}),
        unreadable=dict(unreadable or {}),
        application=list(application),
        anchors=list(anchors),
    )


def _split_factors(
    rows: Sequence[Mapping[str, Any]],
    present: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
) -> tuple[list[str], list[str]]:
    """The factors that split the configurations (those planned with more than one value, or
    without a plan every factor whose value differs between jobs), and the unplanned ones:
    factors that differ between jobs but are not in the plan."""
    differing = [c for c in present if len({norm(r.get(c)) for r in rows}) > 1]
    if not planned:
        return differing, []
    varying = [c for c in present if len(planned.get(c, [])) > 1]
    unplanned = [c for c in differing if c not in varying and c not in planned]
    return varying, unplanned


def _points(
    rows: Sequence[Mapping[str, Any]],
    planned: Mapping[str, Sequence[Any]],
    varying: Sequence[str],
) -> tuple[list[str], list[Point]]:
    """The keys a point is named by and the points the sweep should have: every combination
    of the planned space, or without a plan each distinct combination the jobs ran."""
    if planned:
        keys = list(planned)
        points = [
            dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(planned[k] for k in keys))
        ]
        return keys, points
    keys = list(varying)
    seen: dict[tuple[str, ...], Point] = {}
    for r in rows:
        seen.setdefault(tuple(norm(r.get(k)) for k in keys), {k: r.get(k) for k in keys})
    return keys, list(seen.values())


def _missing(
    rows: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    points: Sequence[Point],
    choices: Mapping[str, Mapping[str, str]],
) -> list[Missing]:
    """The points no usable job matches, each with the status and reason of its worst job
    (incomplete before failed before unavailable), or NOT_RUN where no job matches it."""
    # The jobs that match each point: a job matches a value by its factor or by its config
    # choice (`model=tiny-moe` where the factor names the file), so it stands under at most
    # two values a key. Indexed once, not compared point by point (a 1,000-job sweep over a
    # planned space of 1,200 points made 1.2 million comparisons).
    by_point: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for r in rows:
        ch = choices.get(str(r.get("job")), {})
        options = [sorted({norm(r.get(k)), norm(ch.get(k))}) for k in keys]
        for combo in itertools.product(*options):
            by_point.setdefault(combo, []).append(r)

    rank = {"incomplete": 0, "failed": 1, "unavailable": 2}
    missing: list[Missing] = []
    for p in points:
        matching = by_point.get(tuple(norm(p[k]) for k in keys), [])
        if any(usable(r) for r in matching):
            continue
        if not matching:
            missing.append(Missing(p, NOT_RUN, None))
            continue
        worst = min(matching, key=lambda r: rank.get(str(r.get("status")), 3))
        status = str(worst.get("status"))
        reason = worst.get("reason")
        if worst.get("identity_problem"):
            status, reason = "failed", f"identity check: {worst['identity_problem']}"
        missing.append(Missing(p, status, None if reason is None else str(reason)))
    return missing


def _compared(
    rows: Sequence[Mapping[str, Any]],
    setups: Mapping[str, Mapping[str, str]],
    unplanned: Sequence[str],
) -> dict[str, dict[str, str]]:
    """Each job's setup (and the unplanned factors' values), as contamination compares them."""
    return {
        j: {**{c: norm(r.get(c)) for c in unplanned if r.get(c) is not None}, **setups.get(j, {})}
        for j, r in ((str(r["job"]), r) for r in rows)
        if j in setups or unplanned
    }


def _flat(metrics: Mapping[str, object]) -> dict[str, object]:
    """A pass's metrics with percentile blocks as `<name>_p50` ... keys, as in the table."""
    out: dict[str, object] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            out.update({f"{k}_{q}": x for q, x in v.items()})
        else:
            out[k] = v
    return out


_is_num = ev.is_num

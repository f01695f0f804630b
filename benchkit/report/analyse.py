"""Verdicts from a sweep's results: pure functions over the tidy table and plain dicts.

Given one row per job (`table.tidy`) and the planned space (factor -> values), this module
decides what the data say about each factor and how sure that is: the backend ratios and
winner, the slots knee, the MTP effect per slot count, repeat noise, a build comparison,
the projection, claims, and measurement caveats. Every verdict names its basis and is
`provisional`, naming the planned points that did not complete, whenever it depends on one.
Nothing here reads files or formats text for people; `render` and `i18n` do.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NotRequired, TypedDict

import pandas as pd

from benchkit import schema
from benchkit.report import evidence as ev
from benchkit.report.evidence import Judgement, Objective
from benchkit.report.numbers import (
    BackendContext,
    BackendNumbers,
    BetterPoint,
    Beyond,
    BuildNumbers,
    BuildPair,
    Capped,
    Contaminated,
    Contamination,
    DraftContext,
    DraftingNumbers,
    FactorValue,
    Faster,
    MissingPoint,
    NoiseEntry,
    Point,
    ProjectionNumbers,
    RepeatedConfig,
    RepeatsNumbers,
    Run,
    SeriesRuns,
    SlotsNumbers,
    SlotsRow,
    ValidityNumbers,
    VerdictNumbers,
)
from benchkit.schema import Result

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
METRICS = (THROUGHPUT, SLOT_LATENCY, DECODE, PREFILL, "draft_acceptance", "wall_s")

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


def norm(v: Any) -> str:
    """One spelling per value, so `true`, True and 'True', or 4, 4.0 and '4' match."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip().lower()


def label(point: Mapping[str, Any]) -> str:
    """'backend=vulkan, slots=4, mtp=false'."""
    return ", ".join(f"{k}={norm(v)}" for k, v in point.items())


# ---------------------------------------------------------------------------- statistics


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


# ------------------------------------------------------------------------ planned space


def parse_sweep_overrides(overrides: Iterable[str]) -> dict[str, list[Any]]:
    """Hydra sweep overrides (`slots=1,2,4`, `backend=vulkan,hip`, `+x=range(1,4)`,
    `mtp=choice(true,false)`, `sort(...)`, `tag(...)`, quoted commas) as factor -> values,
    through Hydra's own override parser, so the planned space is exactly what Hydra swept.
    Single values, continuous `interval()` sweeps, hydra.* and study.* keys are not part of
    the planned space; `glob()` over a config group is expanded against conf/."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Glob, QuotedString
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    out: dict[str, list[Any]] = {}
    for raw in overrides:
        try:
            (o,) = parser.parse_overrides([raw])
        except HydraException:
            continue  # not an override Hydra would have run: nothing was swept over it
        key = o.key_or_group
        if key.startswith(("hydra.", "study.")) or not o.is_discrete_sweep():
            continue
        value = o.value()
        if isinstance(value, Glob):
            values: list[Any] = _glob_group(key, value)
        else:
            values = list(o.sweep_iterator())
        values = [v.text if isinstance(v, QuotedString) else v for v in values]
        if len(values) > 1:
            out[key] = values
    return out


def _glob_group(group: str, glob: Any) -> list[str]:
    """The choices of config group `group` that a Hydra glob() selects."""
    from benchkit.paths import conf_dir

    names = sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))
    return list(glob.filter(names))


def planned_space(
    declared: Mapping[str, Sequence[Any]], swept: Mapping[str, Sequence[Any]]
) -> dict[str, list[Any]]:
    """The study's declared factors united with what the sweep was launched over: a value
    that was declared or launched is planned."""
    out: dict[str, list[Any]] = {}
    for source in (declared, swept):
        for key, values in source.items():
            name = key.rsplit(".", 1)[-1] if "." in key else key
            have = out.setdefault(name, [])
            for v in values:
                if norm(v) not in {norm(x) for x in have}:
                    have.append(v)
    return out


# ----------------------------------------------------------------------------- the sweep


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
    # Jobs whose setup differs in something no swept factor explains (evidence.contamination).
    contaminated: list[Contamination] = field(default_factory=list)
    cap_limit: float = 0.05
    # Factors that differ between jobs although the planned space does not vary them.
    unplanned: list[str] = field(default_factory=list)

    @property
    def metric(self) -> str:
        return self.objective.metric

    @property
    def noise_basis(self) -> str:
        return "declared" if self.noise is not None else "per_unit"

    def row(self, job: str) -> dict[str, Any]:
        for r in records(self.df[self.df["job"] == job]):
            return r
        return {}

    def judge(self, base: Cell, other: Cell, metric: str | None = None) -> Judgement | None:
        """`other` against `base` on the objective (or `metric`), with the noise rule: CIs
        with repeats; the declared noise, else the paired per-unit spread, for single runs."""
        m = metric or self.metric
        a, b = base.samples.get(m) or [], other.samples.get(m) or []
        if not a or not b:
            return None
        single = None
        basis = "plain"
        if len(a) < 2 or len(b) < 2:
            if self.noise is not None:
                single, basis = self.noise, "declared"
            elif len(base.jobs) == 1 and len(other.jobs) == 1:
                single = ev.paired_noise(
                    self.spans.get(base.jobs[0], {}), self.spans.get(other.jobs[0], {}), t95
                )
                basis = "per_unit" if single is not None else "plain"
        return ev.judge(
            a, b, min_effect=self.min_effect, single_noise=single, noise_basis=basis, t95=t95
        )

    def taint(self, cells: Iterable[Cell]) -> list[Contamination]:
        """Contamination among the jobs of `cells`."""
        return ev.tainted(self.contaminated, [j for c in cells for j in c.jobs])

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


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
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
) -> Sweep:
    """Group the tidy table into configurations and find the planned points that did not
    complete. `choices` maps job -> Hydra group choices (so `model=qwen3.6-35b-a3b` in a
    sweep matches a result whose factors name the model itself); `per_repeat` maps job ->
    per-repeat metrics when a job replayed its workload more than once. `objective` decides
    the verdicts; `noise`, `spans`, `setups` and `cap_limit` feed the evidence rules
    (evidence.py). With a planned space, a factor that differs between jobs but is not planned
    does not split the configurations: it is contamination, named by the verdicts it touches."""
    objective = objective or ev.objective_of("throughput")
    choices = choices or {}
    per_repeat = per_repeat or {}
    rows: list[dict[str, Any]] = records(df)
    present = [c for c in factor_cols if c in df.columns]
    planned_d = {k: list(v) for k, v in planned.items()}
    differing = [c for c in present if len({norm(r.get(c)) for r in rows}) > 1]
    if planned_d:
        varying = [c for c in present if len(planned_d.get(c, [])) > 1]
        unplanned = [c for c in differing if c not in varying and c not in planned_d]
    else:
        varying, unplanned = differing, []
    constants = {c: rows[0].get(c) for c in present if c not in varying} if rows else {}
    metrics = list(dict.fromkeys([*METRICS, objective.metric, *objective.slo]))

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

    if planned_d:
        keys = list(planned_d)
        points = [
            dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(planned_d[k] for k in keys))
        ]
    else:
        keys = varying
        seen: dict[tuple[str, ...], Point] = {}
        for r in rows:
            seen.setdefault(tuple(norm(r.get(k)) for k in keys), {k: r.get(k) for k in keys})
        points = list(seen.values())

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
    return Sweep(
        df=df,
        varying=varying,
        cells=list(cells.values()),
        planned=planned_d,
        missing=missing,
        n_planned=len(points),
        min_effect=min_effect,
        knee_gain=knee_gain,
        constants=constants,
        objective=objective,
        noise=noise,
        spans={k: dict(v) for k, v in (spans or {}).items()},
        contaminated=ev.contamination(
            {
                j: {
                    **{c: norm(r.get(c)) for c in unplanned if r.get(c) is not None},
                    **(setups or {}).get(j, {}),
                }
                for j, r in ((str(r["job"]), r) for r in rows)
                if j in (setups or {}) or unplanned
            },
            varying,
            [c for c in unplanned if c not in ev.ATTRIBUTES],
        ),
        cap_limit=cap_limit,
        unplanned=unplanned,
    )


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


# ------------------------------------------------------------------------------ verdicts


@dataclass
class Verdict:
    """One factor's verdict, the numbers behind it, and how sure it is.

    `verdict` is language-free JSON (a backend name, a slot count, effect runs, hours);
    `status` is `complete` or `provisional`; `missing` names the planned points it depends
    on that did not complete; `reasons` lists other causes of `provisional`; `point` is the
    configuration the verdict singles out, when there is one."""

    factor: str
    verdict: Any
    status: str
    missing: list[Missing] = field(default_factory=list)
    basis: str | None = None
    numbers: VerdictNumbers = field(default_factory=SlotsNumbers)
    point: Point | None = None
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "factor": self.factor,
            "verdict": self.verdict,
            "status": self.status,
            "missing": [m.to_json() for m in self.missing],
            "reasons": list(self.reasons),
            "basis": self.basis,
            "point": self.point,
            "numbers": self.numbers.to_json(),
        }


def _status(missing: Sequence[Missing], reasons: Sequence[str] = ()) -> str:
    return PROVISIONAL if missing or reasons else COMPLETE


def _group(cells: Iterable[Cell], keys: Sequence[str]) -> dict[tuple[str, ...], list[Cell]]:
    out: dict[tuple[str, ...], list[Cell]] = {}
    for c in cells:
        out.setdefault(tuple(c.get(k) for k in keys), []).append(c)
    return out


def _context(cell: Cell, keys: Sequence[str]) -> Point:
    return {k: cell.values.get(k) for k in keys}


def _sort_key(v: Any) -> tuple[int, float, str]:
    if isinstance(v, bool):
        return (0, float(v), "")
    if _is_num(v):
        return (0, float(v), "")
    return (1, 0.0, norm(v))


def _noise_entry(j: Judgement, base: Point, other: Point) -> NoiseEntry:
    return {
        "base": dict(base),
        "other": dict(other),
        "margin": j.rel,
        "noise": j.noise,
        "basis": j.basis,
    }


def _values(c: Cell) -> dict[str, float | None]:
    return {m: c.mean(m) for m in c.samples}


def backend_verdict(sw: Sweep) -> Verdict | None:
    """Which backend is better on the study's objective, the ratio at each other setting
    (each slot count, with and without MTP, ...), and the winner. None when the backend
    did not vary. A win whose margins are all inside a single run's noise is provisional."""
    if "backend" not in sw.varying:
        return None
    m = sw.metric
    rest = [k for k in sw.varying if k != "backend"]
    contexts = []
    winners: dict[str, int] = {}
    clear: dict[str, int] = {}
    ties = 0
    ratios: dict[str, list[float]] = {}
    noise: list[NoiseEntry] = []
    used: list[Cell] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        scored = [c for c in group if c.mean(m) is not None]
        if len(scored) < 2:
            continue
        used += scored
        best_c = min(scored, key=lambda c: float(c.mean(m) or 0.0))
        best_v = float(best_c.mean(m) or 0.0)
        entry: BackendContext = {"context": _context(best_c, rest), "values": {}, "ratios": {}}
        real = shaky = False
        for c in sorted(scored, key=lambda c: float(c.mean(m) or 0.0)):
            b = str(c.values["backend"])
            v = float(c.mean(m) or 0.0)
            entry["values"][b] = v
            entry["ratios"][b] = v / best_v if best_v else None
            if c is best_c:
                continue
            ratios.setdefault(b, []).append(v / best_v if best_v else math.inf)
            j = sw.judge(best_c, c)
            if j is not None and j.effect == "worse":
                if j.inside_noise:
                    shaky = True
                    noise.append(_noise_entry(j, best_c.values, c.values))
                else:
                    real = True
        winner = str(best_c.values["backend"]) if real or shaky else None
        entry["winner"] = winner
        entry["inside_noise"] = shaky and not real
        contexts.append(entry)
        if winner is None:
            ties += 1
        else:
            winners[winner] = winners.get(winner, 0) + 1
            if real:
                clear[winner] = clear.get(winner, 0) + 1
    missing = list(sw.missing)
    if not contexts:
        return Verdict(
            "backend",
            None,
            PROVISIONAL,
            missing,
            m,
            BackendNumbers(contexts=[]),
            reasons=["no_comparison"],
        )
    # One backend that wins wherever any difference counts is the winner (ties elsewhere
    # are listed in the numbers); two backends that each win somewhere is "mixed".
    if not winners:
        verdict: Any = "no difference"
    elif len(winners) == 1:
        verdict = next(iter(winners))
    else:
        verdict = "mixed"
    reasons: list[str] = []
    shaky = isinstance(verdict, str) and verdict in winners and not clear.get(verdict)
    if shaky:
        reasons.append("inside_noise")
    numbers = BackendNumbers(
        contexts=contexts,
        winners=winners,
        ties=ties,
        ratio_range={b: [min(v), max(v)] for b, v in ratios.items()},
        compared=len(contexts),
        objective=sw.objective.to_json(),
        noise=noise if shaky else None,
        contaminated=_taint(sw, used, reasons),
    )
    point = None if verdict in ("mixed", "no difference") else {"backend": verdict}
    return Verdict(
        "backend", verdict, _status(missing, reasons), missing, m, numbers, point, reasons
    )


def _taint(sw: Sweep, cells: Sequence[Cell], reasons: list[str]) -> Contaminated | None:
    """A verdict resting on jobs that differ in something no swept factor explains is
    provisional, and names the jobs and the difference (None: no such jobs)."""
    bad = sw.taint(cells)
    if bad:
        reasons.append("contaminated")
        return list(bad)
    return None


def _capped(sw: Sweep, cell: Cell) -> Capped | None:
    """The cell's job with the most runaway output, when it is over the study's cap limit."""
    worst: Capped | None = None
    for job in cell.jobs:
        row = sw.row(job)
        if not ev.over_cap(row, sw.cap_limit):
            continue
        calls, time_share = ev.cap_shares(row)
        share = max(x for x in (calls, time_share) if x is not None)
        if worst is None or share > worst["share"]:
            worst = {
                "job": job,
                "point": dict(cell.values),
                "share": share,
                "share_calls": calls,
                "share_time": time_share,
                "calls": row.get("calls_hit_cap"),
                "limit": sw.cap_limit,
                "objective": cell.mean(sw.metric),
                "objective_uncapped": cell.mean(f"{sw.metric}_uncapped"),
            }
    return worst


def _ctx_sort(group: Sequence[Cell], keys: Sequence[str]) -> list[tuple[int, float, str]]:
    return [_sort_key(group[0].values.get(k)) for k in keys]


def knee(
    counts: Sequence[int],
    cost: Sequence[float | None],
    gain: float,
    same: Callable[[int, int], bool] = lambda best, i: False,
) -> tuple[int | None, bool]:
    """The smallest count whose cost (lower is better) is within `gain` of the best count's,
    or that `same(best, i)` says is no different from it; (knee, reached). `reached` is False
    when that is the largest count: every smaller count was more than `gain` worse, so the
    curve was still improving where the sweep stopped. (None, False) without any cost."""
    ok = [i for i, c in enumerate(cost) if c is not None]
    if not ok:
        return None, False
    best = min(ok, key=lambda i: float(cost[i] or 0.0))
    limit = float(cost[best] or 0.0) * (1 + gain)
    k = next(i for i in ok if float(cost[i] or 0.0) <= limit or same(best, i))
    return counts[k], not (k == len(counts) - 1 and len(counts) > 1)


def slots_verdict(sw: Sweep, backend: Verdict | None) -> Verdict | None:
    """The knee of the study's objective against slots, on the series (one backend, MTP
    setting, ...) that holds the best point: the smallest slot count within the knee margin of
    the best count (or no different from it, with repeats). Points that break the study's SLO
    are left out; a faster count than the knee, runaway outputs at the knee, a knee margin
    inside a single run's noise and contaminated jobs are named."""
    if "slots" not in sw.varying:
        return None
    m = sw.metric
    rest = [k for k in sw.varying if k != "slots"]
    series = _group(sw.cells, rest)
    if not series:
        return Verdict("slots", None, PROVISIONAL, list(sw.missing), m, reasons=["no_comparison"])

    def eligible(c: Cell) -> bool:
        return c.mean(m) is not None and not sw.objective.meets(_values(c))

    def best_of(cells: Sequence[Cell]) -> float:
        return min((float(c.mean(m) or 0.0) for c in cells if eligible(c)), default=math.inf)

    candidates = list(series.values())
    if backend is not None and isinstance(backend.point, dict):
        preferred = [g for g in candidates if g[0].get("backend") == norm(backend.point["backend"])]
        candidates = preferred or candidates
    primary = sorted(
        (c for c in min(candidates, key=best_of) if c.mean(m) is not None),
        key=lambda c: _number(c.values["slots"]),
    )
    ctx = _context(primary[0], rest) if primary else {}
    missing = sw.missing_where(ctx)
    counts = [int(_number(c.values["slots"])) for c in primary]
    cost = [c.mean(m) if eligible(c) else None for c in primary]
    rows: list[SlotsRow] = []
    for i, c in enumerate(primary):
        prev = primary[i - 1].mean(m) if i else None
        rows.append(
            {
                "slots": counts[i],
                "objective": c.mean(m),
                "objective_uncapped": c.mean(f"{m}_uncapped"),
                "change_vs_previous": None if not prev else float(c.mean(m) or 0.0) / prev - 1,
                "s_per_unit_throughput": c.mean(THROUGHPUT),
                "s_per_unit_slot_latency": c.mean(SLOT_LATENCY),
                "decode_tok_s": c.mean(DECODE),
                "ctx_total": _first_num(sw.df, c.jobs, "ctx_total"),
                "slo_breaks": sw.objective.meets(_values(c)),
                "capped": _capped(sw, c) is not None,
            }
        )
    known = SlotsNumbers(
        series=ctx,
        rows=rows,
        knee_gain=sw.knee_gain,
        objective=sw.objective.to_json(),
        slo_excluded=[
            {"slots": r["slots"], "breaks": r["slo_breaks"]} for r in rows if r["slo_breaks"]
        ],
    )
    reasons: list[str] = []
    known = replace(known, contaminated=_taint(sw, primary, reasons), knee_reached=False)
    if all(c is None for c in cost):
        reasons.append("slo_none" if primary else "no_comparison")
        return Verdict("slots", None, PROVISIONAL, missing, m, known, None, reasons)
    if len(primary) < 2:
        return Verdict(
            "slots",
            counts[0],
            PROVISIONAL,
            missing,
            m,
            known,
            {**ctx, "slots": counts[0]},
            [*reasons, "one_slot_count"],
        )

    def same(best: int, i: int) -> bool:
        j = sw.judge(primary[best], primary[i])
        return j is not None and j.effect == "same" and j.basis == "ci"

    k, reached = knee(counts, cost, sw.knee_gain, same)
    assert k is not None
    ki = counts.index(k)
    bi = min((i for i, c in enumerate(cost) if c is not None), key=lambda i: float(cost[i] or 0.0))
    faster: Faster | None = None
    if bi != ki:
        ck, cb = rows[ki]["ctx_total"], rows[bi]["ctx_total"]
        lk, lb = rows[ki]["s_per_unit_slot_latency"], rows[bi]["s_per_unit_slot_latency"]
        faster = {
            "slots": counts[bi],
            "faster_by": 1 - float(cost[bi] or 0.0) / float(cost[ki] or 1.0),
            "ctx_ratio": cb / ck if cb and ck else counts[bi] / k,
            "latency_ratio": lb / lk if lb and lk else None,
        }
    noise: list[NoiseEntry] | None = None
    # A knee taken because its interval overlaps the best count's, not because it is within
    # the knee margin: the data cannot tell them apart yet.
    if faster is not None and float(cost[ki] or 0.0) > float(cost[bi] or 0.0) * (1 + sw.knee_gain):
        j = sw.judge(primary[bi], primary[ki])
        if j is not None:
            reasons.append("inside_noise")
            noise = [_noise_entry(j, primary[bi].values, primary[ki].values)]
            faster["inside_noise"] = True
    # Is the knee's margin over the next smaller count real?
    if ki > 0:
        j = sw.judge(primary[ki], primary[ki - 1])
        if j is not None and j.inside_noise and j.effect == "worse" and noise is None:
            reasons.append("inside_noise")
            noise = [_noise_entry(j, primary[ki].values, primary[ki - 1].values)]
    cap = _capped(sw, primary[ki])
    knee_uncapped = None
    if cap is not None:
        reasons.append("capped")
        plain = [c.mean(f"{m}_uncapped") if eligible(c) else None for c in primary]
        if all(x is not None for x in plain):
            k2, _ = knee(counts, plain, sw.knee_gain)
            if k2 != k:
                knee_uncapped = k2
    beyond: list[Beyond] = []
    for i in range(ki + 1, len(primary)):
        lat_k, lat_i = rows[ki]["s_per_unit_slot_latency"], rows[i]["s_per_unit_slot_latency"]
        ctx_k, ctx_i = rows[ki]["ctx_total"], rows[i]["ctx_total"]
        beyond.append(
            {
                "slots": counts[i],
                "change_vs_knee": float(primary[i].mean(m) or 0.0) / float(cost[ki] or 1.0) - 1,
                "latency_ratio": lat_i / lat_k if lat_i and lat_k else None,
                "ctx_ratio": ctx_i / ctx_k if ctx_i and ctx_k else counts[i] / k,
                "ctx_total": ctx_i,
            }
        )
    numbers = replace(
        known,
        knee_reached=reached,
        best_slots=counts[bi],
        best_throughput_slots=min(rows, key=lambda r: r["s_per_unit_throughput"] or math.inf)[
            "slots"
        ],
        faster=faster,
        noise=noise,
        capped=cap,
        knee_uncapped=knee_uncapped,
        beyond=beyond,
        latency_grows=(all((b["latency_ratio"] or 0) > 1 for b in beyond) if beyond else None),
    )
    return Verdict(
        "slots", k, _status(missing, reasons), missing, m, numbers, {**ctx, "slots": k}, reasons
    )


def _first_num(df: pd.DataFrame, jobs: Sequence[str], col: str) -> float | None:
    if col not in df.columns:
        return None
    for v in df[df["job"].isin(list(jobs))][col]:
        if _is_num(v):
            return float(v)
    return None


def _runs(entries: Sequence[DraftContext]) -> list[Run]:
    """Effects by slot count as runs: [{"from": 1, "to": 1, "effect": "helps"}, {"from": 2,
    "to": None, "effect": "hurts"}], `to: None` meaning up to the largest count tested."""
    runs: list[Run] = []
    for e in entries:
        s = _slots_in(e["context"])
        if runs and runs[-1]["effect"] == e["effect"]:
            runs[-1]["to"] = s
        else:
            runs.append({"from": s, "to": s, "effect": e["effect"]})
    if runs:
        runs[-1]["to"] = None
    return runs


def drafting_verdict(
    sw: Sweep,
    slots: Verdict | None,
    backend: Verdict | None,
    factor: str = "mtp",
    off: Any = False,
    on: Any = True,
) -> Verdict | None:
    """Speculative decoding's effect at each setting (helps / no difference / hurts, with the
    ratio of the study's objective) and the draft acceptance: MTP on against off
    (`factor="mtp"`), or a drafter against none (`factor="spec"`, `on="draft"`). The verdict
    is the effect by slot count on the primary series (the one the slots verdict is about,
    else the winning backend), as runs (see `_runs`); `by_series` holds the runs of every
    series, and `scope_differs` says when they disagree (the headline then names each)."""
    if factor not in sw.varying:
        return None
    m = sw.metric
    name = factor if factor == "mtp" else f"{factor}={norm(on)}"
    rest = [k for k in sw.varying if k != factor]
    contexts: list[DraftContext] = []
    cells_of: list[tuple[Cell, Cell]] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        c_on = next((c for c in group if c.get(factor) == norm(on)), None)
        c_off = next((c for c in group if c.get(factor) == norm(off)), None)
        if c_on is None or c_off is None:
            continue
        v_on, v_off = c_on.mean(m), c_off.mean(m)
        j = sw.judge(c_off, c_on)
        if v_on is None or v_off is None or j is None:
            continue
        contexts.append(
            {
                "context": _context(c_on, rest),
                "off": v_off,
                "on": v_on,
                "ratio": v_on / v_off if v_off else math.inf,
                "effect": {"better": "helps", "worse": "hurts"}.get(j.effect, "no difference"),
                "inside_noise": j.inside_noise,
                "noise": j.noise,
                "acceptance": c_on.mean("draft_acceptance"),
                "decode_off": c_off.mean(DECODE),
                "decode_on": c_on.mean(DECODE),
            }
        )
        cells_of.append((c_off, c_on))
    # The primary series: what the slots verdict or the backend winner singled out.
    where: Point = {}
    if slots is not None and slots.point:
        where = {k: v for k, v in slots.point.items() if k not in (factor, "slots")}
    elif backend is not None and backend.point:
        where = dict(backend.point)

    def in_where(e: DraftContext) -> bool:
        return all(norm(e["context"].get(k)) == norm(v) for k, v in where.items())

    def order(e: DraftContext) -> float:
        return float(_slots_in(e["context"]) or 0) if "slots" in rest else 0.0

    primary = sorted((e for e in contexts if in_where(e)), key=order)
    series_keys = [k for k in rest if k != "slots"]
    by_series: dict[str, tuple[Point, list[DraftContext]]] = {}
    for e in sorted(contexts, key=order):
        ctx = {k: e["context"].get(k) for k in series_keys}
        by_series.setdefault(label(ctx), (ctx, []))[1].append(e)
    series_runs: list[SeriesRuns] = [
        {"series": ser, "runs": _runs(entries)} for ser, entries in by_series.values()
    ]
    scope_differs = (
        len({json.dumps([(r["from"], r["effect"]) for r in s["runs"]]) for s in series_runs}) > 1
    )
    acc = [e["acceptance"] for e in contexts if e["acceptance"] is not None]
    acc_by: dict[str, list[float]] = {}
    for e in contexts:
        if e["acceptance"] is not None and "backend" in e["context"]:
            acc_by.setdefault(str(e["context"]["backend"]), []).append(e["acceptance"])
    compared = {norm(off), norm(on)}
    missing = [
        mi
        for mi in sw.missing_where(where)
        if factor not in mi.point or norm(mi.point[factor]) in compared
    ]
    numbers = DraftingNumbers(
        factor=factor,
        on_value=on,
        off_value=off,
        contexts=contexts,
        primary=where,
        acceptance_range=[min(acc), max(acc)] if acc else None,
        acceptance_by_backend={b: [min(v), max(v)] for b, v in acc_by.items()},
        by_series=series_runs,
        scope_differs=scope_differs,
        objective=sw.objective.to_json(),
    )
    if not primary:
        return Verdict(name, None, PROVISIONAL, missing, m, numbers, None, ["no_comparison"])
    reasons: list[str] = []
    shaky = [e for e in primary if e["inside_noise"]]
    noise: list[NoiseEntry] | None = None
    if shaky:
        reasons.append("inside_noise")
        noise = [
            {
                "base": {**e["context"], factor: off},
                "other": {**e["context"], factor: on},
                "margin": e["ratio"] - 1,
                "noise": e["noise"],
                "basis": sw.noise_basis,
            }
            for e in shaky
        ]
    bad = _taint(
        sw,
        [
            c
            for (c_off, c_on), e in zip(cells_of, contexts, strict=True)
            if in_where(e)
            for c in (c_off, c_on)
        ],
        reasons,
    )
    numbers = replace(
        numbers,
        noise=noise,
        contaminated=bad,
        largest=_slots_in(primary[-1]["context"]),
        compared=True,
    )
    return Verdict(
        name, _runs(primary), _status(missing, reasons), missing, m, numbers, where or None, reasons
    )


def _number(x: FactorValue) -> float:
    """A numeric factor's value (a slot count, say), held as a number or its text."""
    if x is None:
        raise TypeError("a numeric factor has no value")
    return float(x)


def _slots_in(point: Point) -> int | None:
    """The slot count a point names, if it names one."""
    return int(_number(point["slots"])) if "slots" in point else None


def mtp_verdict(sw: Sweep, slots: Verdict | None, backend: Verdict | None) -> Verdict | None:
    """MTP on against off: see drafting_verdict."""
    return drafting_verdict(sw, slots, backend, "mtp", False, True)


def spec_verdicts(sw: Sweep, slots: Verdict | None, backend: Verdict | None) -> list[Verdict]:
    """Each drafter of the `spec` group (draft model, n-grams) against none."""
    if "spec" not in sw.varying:
        return []
    values = {norm(c.values.get("spec")): c.values.get("spec") for c in sw.cells}
    values.update({norm(v): v for v in sw.planned.get("spec", [])})
    out = []
    for key in sorted(values):
        if key != "none":
            v = drafting_verdict(sw, slots, backend, "spec", "none", values[key])
            if v is not None:
                out.append(v)
    return out


def mtp_effect_at(v: Verdict | None, slots: int | None) -> str | None:
    """The effect a drafting verdict's runs give at a slot count."""
    if v is None or not isinstance(v.verdict, list):
        return None
    runs: list[Run] = v.verdict
    for run in runs:
        lo = run["from"]
        hi = run["to"]
        if slots is None or lo is None:
            return str(run["effect"])
        if slots >= lo and (hi is None or slots <= hi):
            return str(run["effect"])
    return None


def repeats_verdict(sw: Sweep) -> Verdict:
    """Noise of every configuration that ran more than once: mean, CV and 95% CI on the
    objective's metric."""
    rows: list[RepeatedConfig] = []
    for c in sw.cells:
        s = c.stats(sw.metric)
        if s is not None and s.n > 1:
            rows.append(
                {
                    "config": dict(c.values),
                    "n": s.n,
                    "mean": s.mean,
                    "sd": s.sd,
                    "cv": s.cv,
                    "ci95": s.ci,
                    "jobs": list(c.jobs),
                }
            )
    numbers = RepeatsNumbers(configs=rows, declared_noise=sw.noise)
    if not rows:
        return Verdict("repeats", None, COMPLETE, [], sw.metric, numbers)
    max_cv = max((r["cv"] or 0.0) for r in rows)
    return Verdict(
        "repeats",
        {"configs_repeated": len(rows), "max_cv": max_cv},
        COMPLETE,
        [],
        sw.metric,
        numbers,
    )


def projection_verdict(
    sw: Sweep,
    units: int,
    backend: Verdict | None,
    slots: Verdict | None,
    mtp: Verdict | None,
    specs: Sequence[Verdict] = (),
) -> Verdict:
    """The recommended point (winning backend, the knee, MTP or the drafter that helps most
    there, if any) and the time for `units` units there, on the throughput basis (what a
    batch of units costs). Where another complete point is better on the objective, it is
    named with why it is not the recommendation (`better_point`)."""
    m = sw.metric
    point: Point = {}
    if slots is not None and slots.point:
        point.update(slots.point)
    elif backend is not None and backend.point:
        point.update(backend.point)
    at = int(_number(point["slots"])) if "slots" in point else None
    if "mtp" in sw.varying:
        point["mtp"] = mtp_effect_at(mtp, at) == "helps"
    if "spec" in sw.varying:
        helping = [v for v in specs if mtp_effect_at(v, at) == "helps"]
        best = min(helping, key=lambda v: _ratio_at(v, at), default=None)
        drafted = best.numbers if best is not None else None
        point["spec"] = drafted.on_value if isinstance(drafted, DraftingNumbers) else "none"
    depends = [v for v in (backend, slots, mtp, *specs) if v is not None]
    reasons = [f"depends_on:{v.factor}" for v in depends if v.status != COMPLETE]

    def fits(c: Cell) -> bool:
        return c.mean(m) is not None and not sw.objective.meets(_values(c))

    matching = [
        c for c in sw.cells if all(c.get(k) == norm(v) for k, v in point.items() if k in c.values)
    ]
    # Several cells fit the point when a factor had no verdict (mixed backends, say): the
    # best of them on the objective.
    cell = min(
        (c for c in matching if fits(c)),
        key=lambda c: float(c.mean(m) or 0.0),
        default=None,
    )
    missing = sw.missing_where(point) if point else []
    s = cell.stats(THROUGHPUT) if cell is not None else None
    if cell is None or s is None:
        return Verdict(
            "projection",
            None,
            PROVISIONAL,
            missing,
            THROUGHPUT,
            ProjectionNumbers(units=units, objective=sw.objective.to_json()),
            point or None,
            [*reasons, "no_result"],
        )
    if s.n < 2:
        reasons.append("single_run")
    uncapped = cell.mean(f"{THROUGHPUT}_uncapped")
    cap = _capped(sw, cell)
    if cap is not None:
        reasons.append("capped")
    numbers = ProjectionNumbers(
        units=units,
        s_per_unit=s.mean,
        seconds=units * s.mean,
        ci_seconds=None if s.ci is None else units * s.ci,
        n=s.n,
        units_measured=_first_num(sw.df, cell.jobs, "units_completed"),
        slot_latency=cell.mean(SLOT_LATENCY),
        objective=sw.objective.to_json(),
        objective_value=cell.mean(m),
        capped=cap,
        seconds_uncapped=None if uncapped is None else units * uncapped,
        contaminated=_taint(sw, [cell], reasons),
        measured=True,
    )
    # Never worse than another complete point without saying so.
    best_cell = min(
        (c for c in sw.cells if fits(c)), key=lambda c: float(c.mean(m) or 0.0), default=cell
    )
    best_v, rec_v = best_cell.mean(m), cell.mean(m)
    if best_cell is not cell and best_v is not None and rec_v and best_v < rec_v:
        j = sw.judge(cell, best_cell)
        why = "other"
        if sw.taint([best_cell]):
            why = "contaminated"
        elif _capped(sw, best_cell) is not None:
            why = "capped"
        elif slots is not None and norm(best_cell.values.get("slots")) == norm(
            _faster_slots(slots)
        ):
            why = "knee"
        better: BetterPoint = {
            "point": dict(best_cell.values),
            "faster_by": 1 - best_v / rec_v,
            "inside_noise": j is not None and (j.inside_noise or j.basis == "ci"),
            "below_min_effect": j is not None and j.basis == "min_effect",
            "min_effect": sw.min_effect,
            "why": why,
            "ctx_ratio": _ratio_or_none(
                _first_num(sw.df, best_cell.jobs, "ctx_total"),
                _first_num(sw.df, cell.jobs, "ctx_total"),
            ),
        }
        numbers = replace(numbers, better_point=better)
    # A single run varies nothing: name its point from the settings every job shared.
    where: Point = {k: sw.constants[k] for k in ("backend", "slots", "mtp") if k in sw.constants}
    where.update(cell.values)
    return Verdict(
        "projection",
        round(units * s.mean / 3600, 2),
        _status(missing, reasons),
        missing,
        THROUGHPUT,
        numbers,
        where,
        reasons,
    )


def _ratio_or_none(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _faster_slots(v: Verdict) -> FactorValue:
    """The slot count that measured faster than the slots verdict's knee ("-": none)."""
    f = v.numbers.faster if isinstance(v.numbers, SlotsNumbers) else None
    return f["slots"] if f else "-"


def _ratio_at(v: Verdict, slots: int | None) -> float:
    if not isinstance(v.numbers, DraftingNumbers):
        return math.inf
    for e in v.numbers.contexts:
        if slots is None or norm(e["context"].get("slots")) == norm(slots):
            return float(e["ratio"])
    return math.inf


def validity_verdict(sw: Sweep) -> Verdict:
    """The sweep as a whole: complete only when every planned point completed."""
    n_missing = len(sw.missing)
    return Verdict(
        "validity",
        COMPLETE if not n_missing else PROVISIONAL,
        _status(sw.missing),
        list(sw.missing),
        None,
        ValidityNumbers(planned=sw.n_planned, completed=sw.n_planned - n_missing),
    )


def analyse(sw: Sweep, projection_units: int) -> list[Verdict]:
    """Every verdict the sweep supports, in report order."""
    b = backend_verdict(sw)
    s = slots_verdict(sw, b)
    m = mtp_verdict(sw, s, b)
    specs = spec_verdicts(sw, s, b)
    out = [v for v in (b, s, m, *specs) if v is not None]
    out.append(repeats_verdict(sw))
    out.append(projection_verdict(sw, projection_units, b, s, m, specs))
    out.append(validity_verdict(sw))
    return out


# ------------------------------------------------------------------------------ builds


def compare_builds(new: Sweep, base: Sweep) -> Verdict:
    """Two sweeps config by config on the throughput basis: what the newer build (or any
    change made between the sweeps) did to seconds per unit, prefill and decode. Refused
    when the sweeps measured different models, hardware or workloads."""
    differs = {
        k: [base.constants[k], new.constants[k]]
        for k in sorted(set(new.constants) & set(base.constants))
        if norm(new.constants[k]) != norm(base.constants[k])
    }
    blocked = {k: v for k, v in differs.items() if k in BASIS_FACTORS}
    if blocked:
        return Verdict(
            "build",
            "not comparable",
            COMPLETE,
            [],
            THROUGHPUT,
            BuildNumbers(pairs=[], differs=differs, blocked_by=blocked),
        )
    keys = sorted((set(new.varying) | set(base.varying)) - set(differs))
    pairs: list[BuildPair] = []
    unmatched: list[Point] = []
    for c in new.cells:
        want = {k: c.values.get(k, new.constants.get(k)) for k in keys}
        b = next(
            (
                x
                for x in base.cells
                if all(
                    norm(x.values.get(k, base.constants.get(k))) == norm(v) for k, v in want.items()
                )
            ),
            None,
        )
        sn, sb = c.stats(THROUGHPUT), (b.stats(THROUGHPUT) if b else None)
        if b is None or sn is None or sb is None:
            unmatched.append(want)
            continue
        cmp = compare(sb, sn, new.min_effect)
        pairs.append(
            {
                "config": want,
                "base": sb.mean,
                "new": sn.mean,
                "change": sn.mean / sb.mean - 1,
                "effect": {"lower": "faster", "higher": "slower"}.get(cmp, "no difference"),
                "base_slot_latency": b.mean(SLOT_LATENCY),
                "new_slot_latency": c.mean(SLOT_LATENCY),
                "base_prefill": b.mean(PREFILL),
                "new_prefill": c.mean(PREFILL),
                "prefill_change": _change(b.mean(PREFILL), c.mean(PREFILL)),
                "prefill_effect": _effect(b.stats(PREFILL), c.stats(PREFILL), new.min_effect),
                "base_decode": b.mean(DECODE),
                "new_decode": c.mean(DECODE),
                "decode_change": _change(b.mean(DECODE), c.mean(DECODE)),
                "decode_effect": _effect(b.stats(DECODE), c.stats(DECODE), new.min_effect),
                "base_tokens_per_call": _tokens_per_call(base.df, b.jobs),
                "new_tokens_per_call": _tokens_per_call(new.df, c.jobs),
            }
        )
    effects = {p["effect"] for p in pairs}
    if not pairs:
        verdict: Any = None
    elif len(effects) == 1:
        verdict = effects.pop()
    else:
        verdict = "mixed"
    changes = [float(p["change"]) for p in pairs]
    numbers = BuildNumbers(
        pairs=pairs,
        unmatched=unmatched,
        differs=differs,
        median_change=statistics.median(changes) if changes else None,
        change_range=[min(changes), max(changes)] if changes else None,
    )
    missing = [m for m in new.missing]
    reasons = [] if pairs else ["no_comparison"]
    return Verdict(
        "build", verdict, _status(missing, reasons), missing, THROUGHPUT, numbers, None, reasons
    )


def _change(a: float | None, b: float | None) -> float | None:
    return None if not a or b is None else b / a - 1


def _effect(a: Stats | None, b: Stats | None, min_effect: float) -> str | None:
    """For rates (higher is better): 'faster', 'slower' or 'no difference'."""
    if a is None or b is None:
        return None
    return {"higher": "faster", "lower": "slower"}.get(compare(a, b, min_effect), "no difference")


def _tokens_per_call(df: pd.DataFrame, jobs: Sequence[str]) -> float | None:
    if "completion_tokens" not in df.columns or "calls_completed" not in df.columns:
        return None
    part = df[df["job"].isin(list(jobs))]
    tok = [float(x) for x in part["completion_tokens"] if _is_num(x)]
    calls = [float(x) for x in part["calls_completed"] if _is_num(x)]
    return sum(tok) / sum(calls) if tok and calls and sum(calls) else None


# ------------------------------------------------------------------------------- claims


class ClaimCheck(TypedDict):
    """A declared claim and what the measurements say of it."""

    premise: str
    source: str
    metric: str
    expected_min: float | None
    expected_max: float | None
    n: int
    measured_min: float | None
    measured_max: float | None
    status: NotRequired[str]


def check_claims(df: pd.DataFrame, claims: Sequence[Mapping[str, Any]]) -> list[ClaimCheck]:
    """Each declared claim (a premise, its source, a metric and an expected range) against
    the complete measurements: `supported` when every measured value is in the range,
    `refuted` when none is, `partly` otherwise, `untestable` when the metric was not
    measured."""
    rows: list[dict[str, Any]] = records(df)
    out: list[ClaimCheck] = []
    for claim in claims:
        metric = str(claim.get("metric") or "")
        lo, hi = claim.get("expected_min"), claim.get("expected_max")
        vals = [float(r[metric]) for r in rows if usable(r) and _is_num(r.get(metric))]
        entry: ClaimCheck = {
            "premise": claim.get("premise", ""),
            "source": claim.get("source", ""),
            "metric": metric,
            "expected_min": lo,
            "expected_max": hi,
            "n": len(vals),
            "measured_min": min(vals) if vals else None,
            "measured_max": max(vals) if vals else None,
        }
        if not vals or (lo is None and hi is None):
            entry["status"] = "untestable"
        else:
            inside = [(lo is None or v >= lo) and (hi is None or v <= hi) for v in vals]
            entry["status"] = (
                "supported" if all(inside) else "refuted" if not any(inside) else "partly"
            )
        out.append(entry)
    return out


# ------------------------------------------------------------------------------ caveats


def detect_caveats(
    df: pd.DataFrame,
    by_job: Mapping[str, Mapping[str, Any]],
    sw: Sweep,
    *,
    spread_cv: float = 0.10,
    swing: float = 4.0,
) -> list[dict[str, Any]]:
    """Measurement problems the data show: capped calls and their time share, high spread
    between repeats, per-call rate swings, sampling left to the server's defaults, identity
    problems, failed calls inside complete jobs, results spanning models or hardware,
    backends run from different builds, synthetic models and derived reference data.
    `by_job` maps job -> its result.json data. Each caveat is {"kind": ..., **numbers}."""
    # Imported here: caveats reads analyse (and i18n, which reads analyse) at import time.
    from benchkit.report import caveats

    rows: list[dict[str, Any]] = records(df)
    done = [r for r in rows if usable(r)]
    return caveats.detect(caveats.Data(df, rows, done, by_job, sw, spread_cv, swing))


# "version: 7000 (abc1234)" (llama.cpp's --version) or "0.6.0-dev (build 11434, commit unknown)"
# (builds from the PyPI sdist, which has no git commit).
_BUILD_RE = re.compile(
    r"version:\s*(\d+)\s*\(([0-9a-f]+)\)|\(build\s+(\d+),\s*commit\s+([0-9a-f]+|unknown)\)"
)


class JobBuild(TypedDict):
    """A job's llama.cpp build as the report names it."""

    source: str | None
    build: int | None
    commit: str | None
    version: str
    date: str | None
    devices: str | None


def job_build(result: Result) -> JobBuild | None:
    """One job's llama.cpp build: number, commit, source, source date and devices."""
    sb = result.provenance.server_build
    if sb is None:
        return None
    version = sb.version or ""
    m = _BUILD_RE.search(version)
    number = (m.group(1) or m.group(3)) if m else None
    commit = (m.group(2) or m.group(4)) if m else None
    return {
        "source": sb.source,
        "build": int(number) if number else None,
        "commit": None if commit == "unknown" else commit,
        "version": version.splitlines()[0] if version else "",
        "date": sb.source_date,
        "devices": sb.devices,
    }


def build_summary(by_job: Mapping[str, Mapping[str, Any]]) -> dict[str, JobBuild]:
    """Per backend: the llama.cpp build number, commit, source and source date its jobs ran."""
    out: dict[str, JobBuild] = {}
    for data in by_job.values():
        r = schema.load(data)
        b = job_build(r)
        if b is not None:
            out.setdefault(str(r.factors.get("backend", "?")), b)
    return out


def build_identity(b: JobBuild) -> str:
    """What makes two builds the same source: the build number and commit when the version
    names them, else the source date, else the source description."""
    if b.get("build") is not None:
        return f"b{b['build']} {b.get('commit') or ''}".strip()
    if b.get("date"):
        return str(b["date"])
    return str(b.get("source"))


def _days_between(a: str, b: str) -> int | None:
    try:
        from datetime import date

        return (date.fromisoformat(b[:10]) - date.fromisoformat(a[:10])).days
    except ValueError:
        return None


def identity_problem(result: Result) -> str | None:
    """Why a result's server was not provably the one the job started, or None: the server
    reported another slot count or model alias than the job planned."""
    server = result.provenance.server
    props = (server.props if server else None) or {}
    if not props or server is None:
        return None
    slots = result.factors.get("slots")
    total = props.get("total_slots")
    if slots is not None and total is not None and int(total) != int(slots):
        return f"the server reported {total} slots, the job planned {slots}"
    alias, seen = server.alias, props.get("model_alias")
    if alias and seen and alias != seen:
        return f"the server answered as model alias {seen!r}, the job started {alias!r}"
    return None

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
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

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

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "sd": self.sd, "cv": self.cv, "ci95": self.ci}


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
    `mtp=choice(true,false)`) as factor -> values. Single values, hydra.* and study.*
    keys are not part of the planned space."""
    out: dict[str, list[Any]] = {}
    for raw in overrides:
        if "=" not in raw:
            continue
        key, value = raw.split("=", 1)
        key = key.lstrip("+~").strip()
        if key.startswith(("hydra.", "study.")) or not key:
            continue
        values = _sweep_values(value.strip())
        if len(values) > 1:
            out[key] = values
    return out


def _scalar(s: str) -> Any:
    t = s.strip().strip("'\"")
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none"):
        return None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def _sweep_values(value: str) -> list[Any]:
    m = re.fullmatch(r"range\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?(?:,\s*(-?\d+)\s*)?\)", value)
    if m:
        a, b, step = m.groups()
        if b is None:
            return list(range(int(a)))
        return list(range(int(a), int(b), int(step or 1)))
    m = re.fullmatch(r"(?:choice|glob)\((.*)\)", value)
    if m:
        value = m.group(1)
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(value)]  # a list value, not a sweep
    return [_scalar(v) for v in value.split(",") if v.strip()]


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

    point: dict[str, Any]
    status: str
    reason: str | None = None

    @property
    def label(self) -> str:
        return label(self.point)

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "label": self.label,
            "status": self.status,
            "reason": self.reason,
        }


@dataclass
class Cell:
    """One configuration (the values of the varying factors) and its usable repeats."""

    values: dict[str, Any]
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
    constants: dict[str, Any]

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
) -> Sweep:
    """Group the tidy table into configurations and find the planned points that did not
    complete. `choices` maps job -> Hydra group choices (so `model=qwen3.6-35b-a3b` in a
    sweep matches a result whose factors name the model itself); `per_repeat` maps job ->
    per-repeat metrics when a job replayed its workload more than once."""
    choices = choices or {}
    per_repeat = per_repeat or {}
    rows: list[dict[str, Any]] = records(df)
    present = [c for c in factor_cols if c in df.columns]
    planned_d = {k: list(v) for k, v in planned.items()}
    varying = [
        c
        for c in present
        if len({norm(r.get(c)) for r in rows}) > 1 or len(planned_d.get(c, [])) > 1
    ]
    constants = {c: rows[0].get(c) for c in present if c not in varying} if rows else {}

    cells: dict[tuple[str, ...], Cell] = {}
    for r in rows:
        if not usable(r):
            continue
        key = tuple(norm(r.get(c)) for c in varying)
        cell = cells.setdefault(key, Cell(values={c: r.get(c) for c in varying}))
        cell.jobs.append(str(r["job"]))
        reps = per_repeat.get(str(r["job"])) or []
        for m in METRICS:
            if len(reps) > 1 and all(rep.get(m) is not None for rep in reps):
                cell.samples.setdefault(m, []).extend(float(rep[m]) for rep in reps)
            elif _is_num(r.get(m)):
                cell.samples.setdefault(m, []).append(float(r[m]))

    def row_matches(r: Mapping[str, Any], point: Mapping[str, Any]) -> bool:
        ch = choices.get(str(r.get("job")), {})
        for k, v in point.items():
            want = norm(v)
            if norm(r.get(k)) != want and norm(ch.get(k)) != want:
                return False
        return True

    if planned_d:
        keys = list(planned_d)
        points = [
            dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(planned_d[k] for k in keys))
        ]
    else:
        keys = varying
        seen: dict[tuple[str, ...], dict[str, Any]] = {}
        for r in rows:
            seen.setdefault(tuple(norm(r.get(k)) for k in keys), {k: r.get(k) for k in keys})
        points = list(seen.values())

    rank = {"incomplete": 0, "failed": 1, "unavailable": 2}
    missing: list[Missing] = []
    for p in points:
        matching = [r for r in rows if row_matches(r, p)]
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
    )


def _is_num(x: Any) -> bool:
    if x is None or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


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
    numbers: dict[str, Any] = field(default_factory=dict)
    point: dict[str, Any] | None = None
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "factor": self.factor,
            "verdict": self.verdict,
            "status": self.status,
            "missing": [m.to_json() for m in self.missing],
            "reasons": list(self.reasons),
            "basis": self.basis,
            "point": self.point,
            "numbers": self.numbers,
        }


def _status(missing: Sequence[Missing], reasons: Sequence[str] = ()) -> str:
    return PROVISIONAL if missing or reasons else COMPLETE


def _group(cells: Iterable[Cell], keys: Sequence[str]) -> dict[tuple[str, ...], list[Cell]]:
    out: dict[tuple[str, ...], list[Cell]] = {}
    for c in cells:
        out.setdefault(tuple(c.get(k) for k in keys), []).append(c)
    return out


def _context(cell: Cell, keys: Sequence[str]) -> dict[str, Any]:
    return {k: cell.values.get(k) for k in keys}


def _sort_key(v: Any) -> tuple[int, float, str]:
    if isinstance(v, bool):
        return (0, float(v), "")
    if _is_num(v):
        return (0, float(v), "")
    return (1, 0.0, norm(v))


def backend_verdict(sw: Sweep) -> Verdict | None:
    """Which backend is faster on the throughput basis, the ratio at each other setting
    (each slot count, with and without MTP, ...), and the winner. None when the backend
    did not vary."""
    if "backend" not in sw.varying:
        return None
    rest = [k for k in sw.varying if k != "backend"]
    contexts = []
    winners: dict[str, int] = {}
    ties = 0
    ratios: dict[str, list[float]] = {}
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        scored: list[tuple[Cell, Stats]] = []
        for c in group:
            st = c.stats(THROUGHPUT)
            if st is not None:
                scored.append((c, st))
        if len(scored) < 2:
            continue
        best_c, best_s = min(scored, key=lambda cs: cs[1].mean)
        entry: dict[str, Any] = {"context": _context(best_c, rest), "values": {}, "ratios": {}}
        real = False
        for c, s in sorted(scored, key=lambda cs: cs[1].mean):
            b = str(c.values["backend"])
            entry["values"][b] = s.mean
            entry["ratios"][b] = s.mean / best_s.mean
            if c is not best_c:
                ratios.setdefault(b, []).append(s.mean / best_s.mean)
                if compare(best_s, s, sw.min_effect) == "higher":
                    real = True
        winner = str(best_c.values["backend"]) if real else None
        entry["winner"] = winner
        contexts.append(entry)
        if winner is None:
            ties += 1
        else:
            winners[winner] = winners.get(winner, 0) + 1
    missing = list(sw.missing)
    if not contexts:
        return Verdict(
            "backend",
            None,
            PROVISIONAL,
            missing,
            THROUGHPUT,
            {"contexts": []},
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
    numbers = {
        "contexts": contexts,
        "winners": winners,
        "ties": ties,
        "ratio_range": {b: [min(v), max(v)] for b, v in ratios.items()},
        "compared": len(contexts),
    }
    point = None if verdict in ("mixed", "no difference") else {"backend": verdict}
    return Verdict("backend", verdict, _status(missing), missing, THROUGHPUT, numbers, point)


def _ctx_sort(group: Sequence[Cell], keys: Sequence[str]) -> list[tuple[int, float, str]]:
    return [_sort_key(group[0].values.get(k)) for k in keys]


def knee(counts: Sequence[int], rate: Sequence[float], gain: float) -> tuple[int, bool]:
    """The smallest count beyond which no larger count adds `gain` or more (relative) to
    `rate`; (knee, True). When even the largest count still gained, (largest, False)."""
    for i, c in enumerate(counts[:-1]):
        if all(r < rate[i] * (1 + gain) for r in rate[i + 1 :]):
            return c, True
    return counts[-1], False


def slots_verdict(sw: Sweep, backend: Verdict | None) -> Verdict | None:
    """The knee of aggregate decode throughput against slots, on the series (one backend,
    MTP setting, ...) that holds the fastest point, and what larger counts cost."""
    if "slots" not in sw.varying:
        return None
    rest = [k for k in sw.varying if k != "slots"]
    series = _group(sw.cells, rest)
    if not series:
        return Verdict(
            "slots", None, PROVISIONAL, list(sw.missing), THROUGHPUT, reasons=["no_comparison"]
        )

    def best_of(cells: Sequence[Cell]) -> float:
        return min((c.mean(THROUGHPUT) or math.inf) for c in cells)

    candidates = list(series.values())
    if backend is not None and isinstance(backend.point, dict):
        preferred = [g for g in candidates if g[0].get("backend") == norm(backend.point["backend"])]
        candidates = preferred or candidates
    primary = min(candidates, key=best_of)
    primary = sorted(primary, key=lambda c: float(c.values["slots"]))
    ctx = _context(primary[0], rest)
    basis = DECODE if all(c.mean(DECODE) is not None for c in primary) else "units_per_s"
    counts = [int(float(c.values["slots"])) for c in primary]
    rate = [_rate(c, basis) for c in primary]
    missing = sw.missing_where(ctx)
    rows = []
    for i, c in enumerate(primary):
        rows.append(
            {
                "slots": counts[i],
                "rate": rate[i],
                "gain_vs_previous": None if i == 0 else rate[i] / rate[i - 1] - 1,
                THROUGHPUT: c.mean(THROUGHPUT),
                SLOT_LATENCY: c.mean(SLOT_LATENCY),
                DECODE: c.mean(DECODE),
                "ctx_total": _first_num(sw.df, c.jobs, "ctx_total"),
            }
        )
    if len(primary) < 2:
        return Verdict(
            "slots",
            counts[0],
            PROVISIONAL,
            missing,
            basis,
            {"series": ctx, "rows": rows, "knee_reached": False},
            {**ctx, "slots": counts[0]},
            reasons=["one_slot_count"],
        )
    k, reached = knee(counts, rate, sw.knee_gain)
    ki = counts.index(k)
    beyond = []
    for i in range(ki + 1, len(primary)):
        lat_k, lat_i = rows[ki][SLOT_LATENCY], rows[i][SLOT_LATENCY]
        ctx_k, ctx_i = rows[ki]["ctx_total"], rows[i]["ctx_total"]
        beyond.append(
            {
                "slots": counts[i],
                "gain_vs_knee": rate[i] / rate[ki] - 1,
                "latency_ratio": lat_i / lat_k if lat_i and lat_k else None,
                "ctx_ratio": ctx_i / ctx_k if ctx_i and ctx_k else counts[i] / k,
                "ctx_total": ctx_i,
            }
        )
    latency_grows = all((b["latency_ratio"] or 0) > 1 for b in beyond) if beyond else None
    numbers = {
        "series": ctx,
        "rows": rows,
        "knee_reached": reached,
        "knee_gain": sw.knee_gain,
        "beyond": beyond,
        "latency_grows": latency_grows,
        "rate_basis": basis,
        "best_throughput_slots": min(rows, key=lambda r: r[THROUGHPUT] or math.inf)["slots"],
    }
    return Verdict("slots", k, _status(missing), missing, basis, numbers, {**ctx, "slots": k})


def _rate(c: Cell, basis: str) -> float:
    if basis == DECODE:
        return float(c.mean(DECODE) or 0.0)
    s = c.mean(THROUGHPUT)
    return 1.0 / s if s else 0.0


def _first_num(df: pd.DataFrame, jobs: Sequence[str], col: str) -> float | None:
    if col not in df.columns:
        return None
    for v in df[df["job"].isin(list(jobs))][col]:
        if _is_num(v):
            return float(v)
    return None


def drafting_verdict(
    sw: Sweep,
    slots: Verdict | None,
    backend: Verdict | None,
    factor: str = "mtp",
    off: Any = False,
    on: Any = True,
) -> Verdict | None:
    """Speculative decoding's effect at each setting (helps / no difference / hurts, with the
    ratio of seconds per unit on the throughput basis) and the draft acceptance: MTP on
    against off (`factor="mtp"`), or a drafter against none (`factor="spec"`, `on="draft"`).
    The verdict is the effect by slot count on the primary series (the one the slots verdict
    is about, else the winning backend), as runs: [{"from": 1, "to": 1, "effect": "helps"},
    {"from": 2, "to": None, "effect": "hurts"}], where `to: None` means up to the largest
    count tested."""
    if factor not in sw.varying:
        return None
    name = factor if factor == "mtp" else f"{factor}={norm(on)}"
    rest = [k for k in sw.varying if k != factor]
    contexts: list[dict[str, Any]] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        c_on = next((c for c in group if c.get(factor) == norm(on)), None)
        c_off = next((c for c in group if c.get(factor) == norm(off)), None)
        if c_on is None or c_off is None:
            continue
        s_on, s_off = c_on.stats(THROUGHPUT), c_off.stats(THROUGHPUT)
        if s_on is None or s_off is None:
            continue
        cmp = compare(s_off, s_on, sw.min_effect)
        contexts.append(
            {
                "context": _context(c_on, rest),
                "off": s_off.mean,
                "on": s_on.mean,
                "ratio": s_on.mean / s_off.mean,
                "effect": {"lower": "helps", "higher": "hurts"}.get(cmp, "no difference"),
                "acceptance": c_on.mean("draft_acceptance"),
                "decode_off": c_off.mean(DECODE),
                "decode_on": c_on.mean(DECODE),
            }
        )
    # The primary series: what the slots verdict or the backend winner singled out.
    where: dict[str, Any] = {}
    if slots is not None and slots.point:
        where = {k: v for k, v in slots.point.items() if k not in (factor, "slots")}
    elif backend is not None and backend.point:
        where = dict(backend.point)
    primary = [
        e for e in contexts if all(norm(e["context"].get(k)) == norm(v) for k, v in where.items())
    ]
    if "slots" in rest:
        primary.sort(key=lambda e: float(e["context"]["slots"]))
    acc = [e["acceptance"] for e in contexts if e["acceptance"] is not None]
    acc_by: dict[str, list[float]] = {}
    for e in contexts:
        if e["acceptance"] is not None and "backend" in e["context"]:
            acc_by.setdefault(str(e["context"]["backend"]), []).append(e["acceptance"])
    compared = {norm(off), norm(on)}
    missing = [
        m
        for m in sw.missing_where(where)
        if factor not in m.point or norm(m.point[factor]) in compared
    ]
    numbers: dict[str, Any] = {
        "factor": factor,
        "on_value": on,
        "off_value": off,
        "contexts": contexts,
        "primary": where,
        "acceptance_range": [min(acc), max(acc)] if acc else None,
        "acceptance_by_backend": {b: [min(v), max(v)] for b, v in acc_by.items()},
    }
    if not primary:
        return Verdict(
            name, None, PROVISIONAL, missing, THROUGHPUT, numbers, None, ["no_comparison"]
        )
    runs: list[dict[str, Any]] = []
    for e in primary:
        s = int(float(e["context"]["slots"])) if "slots" in e["context"] else None
        if runs and runs[-1]["effect"] == e["effect"]:
            runs[-1]["to"] = s
        else:
            runs.append({"from": s, "to": s, "effect": e["effect"]})
    runs[-1]["to"] = None  # open-ended: the last effect holds up to the largest count tested
    numbers["largest"] = (
        int(float(primary[-1]["context"]["slots"])) if "slots" in primary[-1]["context"] else None
    )
    return Verdict(name, runs, _status(missing), missing, THROUGHPUT, numbers, where or None)


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
    for run in v.verdict:
        lo = run["from"]
        hi = run["to"]
        if slots is None or lo is None:
            return str(run["effect"])
        if slots >= lo and (hi is None or slots <= hi):
            return str(run["effect"])
    return None


def repeats_verdict(sw: Sweep) -> Verdict:
    """Noise of every configuration that ran more than once: mean, CV and 95% CI on the
    throughput basis."""
    rows = []
    for c in sw.cells:
        s = c.stats(THROUGHPUT)
        if s is not None and s.n > 1:
            rows.append({"config": dict(c.values), **s.to_json(), "jobs": list(c.jobs)})
    if not rows:
        return Verdict("repeats", None, COMPLETE, [], THROUGHPUT, {"configs": []})
    max_cv = max((r["cv"] or 0.0) for r in rows)
    return Verdict(
        "repeats",
        {"configs_repeated": len(rows), "max_cv": max_cv},
        COMPLETE,
        [],
        THROUGHPUT,
        {"configs": rows},
    )


def projection_verdict(
    sw: Sweep,
    units: int,
    backend: Verdict | None,
    slots: Verdict | None,
    mtp: Verdict | None,
    specs: Sequence[Verdict] = (),
) -> Verdict:
    """Time for `units` units at the recommended point (winning backend, the knee, MTP or
    the drafter that helps most there, if any), on the throughput basis."""
    point: dict[str, Any] = {}
    if slots is not None and slots.point:
        point.update(slots.point)
    elif backend is not None and backend.point:
        point.update(backend.point)
    at = int(point["slots"]) if "slots" in point else None
    if "mtp" in sw.varying:
        point["mtp"] = mtp_effect_at(mtp, at) == "helps"
    if "spec" in sw.varying:
        helping = [v for v in specs if mtp_effect_at(v, at) == "helps"]
        best = min(helping, key=lambda v: _ratio_at(v, at), default=None)
        point["spec"] = best.numbers["on_value"] if best is not None else "none"
    depends = [v for v in (backend, slots, mtp, *specs) if v is not None]
    reasons = [f"depends_on:{v.factor}" for v in depends if v.status != COMPLETE]
    cell = sw.find(point) if point else (sw.cells[0] if len(sw.cells) == 1 else None)
    if cell is None and not point and sw.cells:
        cell = min(sw.cells, key=lambda c: c.mean(THROUGHPUT) or math.inf)
    missing = sw.missing_where(point) if point else []
    s = cell.stats(THROUGHPUT) if cell is not None else None
    if cell is None or s is None:
        return Verdict(
            "projection",
            None,
            PROVISIONAL,
            missing,
            THROUGHPUT,
            {"units": units},
            point or None,
            [*reasons, "no_result"],
        )
    if s.n < 2:
        reasons.append("single_run")
    units_measured = _first_num(sw.df, cell.jobs, "units_completed")
    numbers = {
        "units": units,
        "s_per_unit": s.mean,
        "seconds": units * s.mean,
        "ci_seconds": None if s.ci is None else units * s.ci,
        "n": s.n,
        "units_measured": units_measured,
        "slot_latency": cell.mean(SLOT_LATENCY),
    }
    # A single run varies nothing: name its point from the settings every job shared.
    where: dict[str, Any] = {
        k: sw.constants[k] for k in ("backend", "slots", "mtp") if k in sw.constants
    }
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


def _ratio_at(v: Verdict, slots: int | None) -> float:
    for e in v.numbers.get("contexts", []):
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
        {"planned": sw.n_planned, "completed": sw.n_planned - n_missing},
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
            {"blocked_by": blocked, "differs": differs, "pairs": []},
        )
    keys = sorted((set(new.varying) | set(base.varying)) - set(differs))
    pairs: list[dict[str, Any]] = []
    unmatched: list[dict[str, Any]] = []
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
    numbers = {
        "pairs": pairs,
        "unmatched": unmatched,
        "differs": differs,
        "median_change": statistics.median(changes) if changes else None,
        "change_range": [min(changes), max(changes)] if changes else None,
    }
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


def check_claims(df: pd.DataFrame, claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each declared claim (a premise, its source, a metric and an expected range) against
    the complete measurements: `supported` when every measured value is in the range,
    `refuted` when none is, `partly` otherwise, `untestable` when the metric was not
    measured."""
    rows: list[dict[str, Any]] = records(df)
    out = []
    for claim in claims:
        metric = str(claim.get("metric") or "")
        lo, hi = claim.get("expected_min"), claim.get("expected_max")
        vals = [float(r[metric]) for r in rows if usable(r) and _is_num(r.get(metric))]
        entry = {
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
    rows: list[dict[str, Any]] = records(df)
    out: list[dict[str, Any]] = []
    done = [r for r in rows if usable(r)]

    derived = [r for r in rows if r.get("derived")]
    if derived:
        notes = sorted({str(by_job[r["job"]].get("derived_note") or "") for r in derived} - {""})
        out.append({"kind": "derived", "jobs": len(derived), "notes": notes})

    capped = [r for r in done if _is_num(r.get("calls_hit_cap")) and r["calls_hit_cap"] > 0]
    if capped:
        shares = [float(r["cap_time_share"]) for r in capped if _is_num(r.get("cap_time_share"))]
        worst = max(capped, key=lambda r: r.get("cap_time_share") or 0)
        out.append(
            {
                "kind": "cap",
                "jobs": len(capped),
                "calls": int(sum(r["calls_hit_cap"] for r in capped)),
                "max_share": max(shares) if shares else None,
                "worst_job": worst["job"],
            }
        )

    spread = []
    for c in sw.cells:
        s = c.stats(THROUGHPUT)
        if s is not None and s.cv is not None and s.cv > spread_cv:
            spread.append({"config": dict(c.values), "cv": s.cv, "n": s.n})
    if spread:
        out.append({"kind": "spread", "threshold": spread_cv, "configs": spread})

    swings = []
    for r in done:
        if not (_is_num(r.get("itl_ms_p50")) and _is_num(r.get("itl_ms_p99"))):
            continue
        p50, p99 = float(r["itl_ms_p50"]), float(r["itl_ms_p99"])
        if p50 > 0 and p99 / p50 >= swing:
            swings.append(
                {
                    "job": r["job"],
                    "p50": p50,
                    "p99": p99,
                    "ratio": p99 / p50,
                    "point": {k: r.get(k) for k in sw.varying},
                }
            )
    if swings:
        out.append({"kind": "rate_swing", "threshold": swing, "jobs": swings})

    unspecified: dict[str, dict[str, Any]] = {}
    for job, data in by_job.items():
        prov = data.get("provenance") or {}
        samp = prov.get("sampling") or {}
        if data.get("status") == COMPLETE and not samp.get("sent"):
            props = (prov.get("server") or {}).get("props") or {}
            unspecified[job] = dict(props.get("default_sampling") or {})
    if unspecified:
        defaults = next((d for d in unspecified.values() if d), {})
        out.append({"kind": "sampling_unspecified", "jobs": len(unspecified), "defaults": defaults})

    identity = [
        {"job": r["job"], "problem": r["identity_problem"]}
        for r in rows
        if r.get("identity_problem")
    ]
    identity += [
        {"job": r["job"], "problem": r["reason"]}
        for r in rows
        if r.get("status") == "failed" and re.search(r"identity|alias|port", str(r.get("reason")))
    ]
    if identity:
        out.append({"kind": "identity", "jobs": identity})

    failed_calls = [r for r in done if _is_num(r.get("calls_failed")) and r["calls_failed"] > 0]
    if failed_calls:
        out.append(
            {
                "kind": "failed_calls",
                "jobs": len(failed_calls),
                "calls": int(sum(r["calls_failed"] for r in failed_calls)),
            }
        )

    for key in BASIS_FACTORS[:2]:
        if key in df.columns:
            vals = sorted({str(v) for v in df[key].dropna()})
            if len(vals) > 1:
                out.append({"kind": f"mixed_{key}", "values": vals})

    builds = build_summary(by_job)
    if len({build_identity(b) for b in builds.values()}) > 1:
        dates = {k: b["date"] for k, b in builds.items() if b.get("date")}
        age = None
        if len(dates) > 1:
            ds = sorted(dates.items(), key=lambda kv: kv[1])
            age = {
                "older": ds[0][0],
                "newer": ds[-1][0],
                "days": _days_between(ds[0][1], ds[-1][1]),
            }
        out.append({"kind": "builds_differ", "builds": builds, "age": age})

    software = {
        str((d.get("factors") or {}).get("backend", "?")): str(sb["software_device"])
        for d in by_job.values()
        if (sb := (d.get("provenance") or {}).get("server_build") or {}).get("software_device")
    }
    if software:
        forced = sorted(
            {
                str((d.get("factors") or {}).get("backend", "?"))
                for d in by_job.values()
                if ((d.get("provenance") or {}).get("server_build") or {}).get(
                    "flash_attn_forced_off"
                )
            }
        )
        out.append({"kind": "software_device", "devices": software, "flash_attn_off": forced})

    httpx_timed = {
        j: str(((d.get("provenance") or {}).get("client") or {}).get("fallback") or "")
        for j, d in by_job.items()
        if ((d.get("provenance") or {}).get("client") or {}).get("path") == "httpx"
    }
    if httpx_timed:
        reasons = sorted({r for r in httpx_timed.values() if r})
        out.append({"kind": "client_httpx", "jobs": len(httpx_timed), "reasons": reasons})

    synthetic = [
        j
        for j, d in by_job.items()
        if ((d.get("provenance") or {}).get("model") or {}).get("synthetic")
    ]
    if synthetic:
        out.append({"kind": "synthetic_model", "jobs": len(synthetic)})
    return out


_BUILD_RE = re.compile(r"version:\s*(\d+)\s*\(([0-9a-f]+)\)")


def build_summary(by_job: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per backend: the llama.cpp build number, commit, source and source date its jobs ran."""
    out: dict[str, dict[str, Any]] = {}
    for data in by_job.values():
        prov = data.get("provenance") or {}
        sb = prov.get("server_build") or {}
        if not sb:
            continue
        backend = str((data.get("factors") or {}).get("backend", "?"))
        version = str(sb.get("version") or "")
        m = _BUILD_RE.search(version)
        out.setdefault(
            backend,
            {
                "source": sb.get("source"),
                "build": int(m.group(1)) if m else None,
                "commit": m.group(2) if m else None,
                "version": version.splitlines()[0] if version else "",
                "date": sb.get("source_date"),
                "devices": sb.get("devices"),
            },
        )
    return out


def build_identity(b: Mapping[str, Any]) -> str:
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


def identity_problem(data: Mapping[str, Any]) -> str | None:
    """Why a result's server was not provably the one the job started, or None: the server
    reported another slot count or model alias than the job planned."""
    prov = data.get("provenance") or {}
    server = prov.get("server") or {}
    props = server.get("props") or {}
    if not props:
        return None
    slots = (data.get("factors") or {}).get("slots")
    total = props.get("total_slots")
    if slots is not None and total is not None and int(total) != int(slots):
        return f"the server reported {total} slots, the job planned {slots}"
    alias, seen = server.get("alias"), props.get("model_alias")
    if alias and seen and alias != seen:
        return f"the server answered as model alias {seen!r}, the job started {alias!r}"
    return None

"""The verdict of any swept factor without one of its own (batch, ubatch, KV cache types, flash
attention, threads, the model file, sampling, ...): at each setting of the other factors, the
value best on the study's objective and every other value compared with it by the comparison
engine (benchkit.compare, `best_of`), with what stands beside it (context, energy per unit,
output drift, the scored task). Complete only when each of those comparisons is decided (worse
beyond the margin, or within it); the contamination, runaway-output, stall and completeness
rules are the other verdicts' (`_taint`, `_capped`, `_stalled`, `sw.missing_where`).

- A factor whose best value differs between settings of the others is stated per setting.
- A numeric factor whose best value is at an end of the range tested says so: values beyond it
  were not measured.
- A factor the study declares the application's choice (`study.application_factors`, sampling
  by default) gets the same numbers, but it is never the recommended setting.
- A factor the run could not exercise (`exercise`) has no verdict, only the reason.
- A comparison of single runs with too few units for a paired interval, and no declared noise,
  cannot tell a difference from run-to-run variation, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from benchkit.compare import questions
from benchkit.compare.engine import BETTER, OPEN, WITHIN, WORSE, Comparison
from benchkit.report.analysis.numbers import (
    FactorContext,
    FactorNumbers,
    FactorRow,
    FactorSeries,
    FactorValue,
    FactorVerdictValue,
    Point,
)
from benchkit.report.analysis.sweep import (
    BASIS_FACTORS,
    COMPLETE,
    PROVISIONAL,
    SEQS_PER_STEP,
    Cell,
    Sweep,
    _is_num,
    norm,
)
from benchkit.report.verdicts.common import (
    PAIRED_UNITS,
    Verdict,
    _capped,
    _cold,
    _context,
    _ctx_sort,
    _group,
    _run_noise,
    _sort_key,
    _stalled,
    _status,
    _taint,
    _values,
    is_setting,
)
from benchkit.report.verdicts.engine_of import comparison_json, engine_of, point_of
from benchkit.report.verdicts.exercise import not_exercised

# Factors with a verdict of their own, or that say what was measured rather than how.
OWN = ("backend", "slots", "mtp", "spec", "repeats", *BASIS_FACTORS[1:])


def generic_factors(sw: Sweep) -> list[str]:
    """The swept factors that get a factor verdict, in the sweep's order."""
    return [f for f in sw.varying if f not in OWN]


def factor_verdicts(sw: Sweep, where: Point) -> list[Verdict]:
    """A verdict for every swept factor without one of its own; `where` is the recommended
    series so far (the slots verdict's point, else the backend winner's): each factor is
    judged first at the setting of the others that agrees with it."""
    return [factor_verdict(sw, f, where) for f in generic_factors(sw)]


def _num(x: object) -> float | None:
    return float(x) if _is_num(x) else None


def _int(x: object) -> int | None:
    v = _num(x)
    return None if v is None else int(v)


def _first(sw: Sweep, c: Cell, key: str) -> Any:
    for j in c.jobs:
        v = sw.row(j).get(key)
        if v is not None:
            return v
    return None


def _eligible(sw: Sweep, c: Cell) -> bool:
    return c.mean(sw.metric) is not None and not sw.objective.meets(_values(c))


# A value's effect against the best by the engine's outcome: decided slower is `worse`,
# within the margin `same`, not decided `open`.
EFFECTS = {WORSE: "worse", WITHIN: "same", OPEN: "open"}
# A setting's states that a decided comparison gives.
DECIDED = ("best", "no difference")


def _row(sw: Sweep, c: Cell, factor: str, best: Cell, comp: Comparison | None) -> FactorRow:
    v, b = c.mean(sw.metric), best.mean(sw.metric)
    effect = "best" if c is best else EFFECTS.get(comp.outcome, "open") if comp else "open"
    return {
        "value": c.values.get(factor),
        "objective": v,
        "margin": v / b - 1 if v is not None and b else None,
        "effect": effect,
        "comparison": None if comp is None else comparison_json(sw, comp),
        "ctx_total": _num(_first(sw, c, "ctx_total")),
        "j_per_unit": c.mean("j_per_unit") or _num(_first(sw, c, "j_per_unit")),
        "seqs_per_step": c.mean(SEQS_PER_STEP),
        "drift_changed": _int(_first(sw, c, "drift_changed_n")),
        "drift_probes": _int(_first(sw, c, "drift_probes")),
        "drift_kld": _num(_first(sw, c, "drift_kld")),
        "drift_first": _num(_first(sw, c, "drift_first")),
        "task_accuracy": _num(_first(sw, c, "task_accuracy")),
        "task_items": _int(_first(sw, c, "task_items")),
        "capped": _capped(sw, c) is not None,
        "slo_breaks": sw.objective.meets(_values(c)),
        "jobs": list(c.jobs),
    }


def _compared(sw: Sweep, group: Sequence[Cell]) -> tuple[Cell, dict[int, Comparison]] | None:
    """The group's best cell on the objective (SLO breakers left out) and each other cell
    compared with it by the engine (`best_of`); None with fewer than two cells to compare.
    The best is the lowest figure, unless the engine decides another value faster than it on
    their paired units (figures of two machines, say): that value is then taken as the best."""
    scored = [c for c in group if _eligible(sw, c)]
    if len(scored) < 2:
        return None
    eng = engine_of(sw)
    by_point = {point_of(c): c for c in scored}
    figures = {p: float(c.mean(sw.metric) or 0.0) for p, c in by_point.items()}
    best = questions.best_of(eng, list(by_point), figures)
    for _ in range(len(by_point)):
        faster = [c for c in best.against if c.outcome == BETTER and c.ratio is not None]
        if not faster or best.best is None:
            break
        win = min(faster, key=lambda c: float(c.ratio or 1.0))
        figures[win.other] = figures[best.best] * float(win.ratio or 1.0)
        best = questions.best_of(eng, list(by_point), figures)
    cell = by_point[str(best.best)]
    return cell, {id(by_point[c.other]): c for c in best.against}


def _contexts(
    sw: Sweep, factor: str, rest: Sequence[str]
) -> tuple[list[FactorContext], list[tuple[list[Cell], Cell, list[Comparison]]]]:
    """Each setting of the other factors with two values or more to compare: its rows (in
    the factor's order), its best value and the ties; the cells behind each, its best and
    the comparisons it rests on."""
    out: list[FactorContext] = []
    cells: list[tuple[list[Cell], Cell, list[Comparison]]] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        compared = _compared(sw, group)
        if compared is None:
            continue
        best, comps = compared
        ordered = sorted(group, key=lambda c: _sort_key(c.values.get(factor)))
        rows = [_row(sw, c, factor, best, comps.get(id(c))) for c in ordered]
        # A value decided slower sets the best apart; every other decided within the margin
        # is no difference. A comparison left open names neither, whatever its figure: the
        # setting is `open` (not decided), never "no difference" nor a best (a review found
        # both drawn from open pairs). A pair across machine states (another card, a host
        # busy with other work) names no best and no tie: where every pair of a setting is
        # such, it was not compared on one machine state (rules v11).
        across = [r for r in rows if (c := r["comparison"]) and c["machine"] == "across"]
        judged = [r for r in rows if r not in across and r["comparison"]]
        state = _state(judged, bool(across))
        out.append(
            {
                "context": _context(best, rest),
                "best": best.values.get(factor) if state == "best" else None,
                "state": state,
                "ties": [r["value"] for r in rows if r["effect"] == "same"]
                if state == "best"
                else [],
                "rows": rows,
            }
        )
        cells.append((ordered, best, list(comps.values())))
    return out, cells


def _state(judged: Sequence[FactorRow], across: bool) -> str:
    """A setting's state from its pairs on one machine state (or bridged), `judged`: `best`
    where one is decided slower, `no difference` where every one is decided within the
    margin, `across` where its only pairs cross machine states, else `open`."""
    if any(r["effect"] == "worse" for r in judged):
        return "best"
    if judged and all(r["effect"] == "same" for r in judged):
        return "no difference"
    return "across" if across and not judged else "open"


def _ratio(r: FactorRow) -> float | None:
    c = r["comparison"]
    return None if c is None else c["ratio"]


def _primary(
    sw: Sweep, contexts: Sequence[FactorContext], where: Point, rest: Sequence[str]
) -> int | None:
    """The context the recommendation sits in: the one agreeing with `where`, else the one
    holding the best point on the objective."""
    if not contexts:
        return None
    keys = [k for k in where if k in rest]
    agree = [
        i
        for i, e in enumerate(contexts)
        if all(norm(e["context"].get(k)) == norm(where[k]) for k in keys)
    ]
    pool = agree or list(range(len(contexts)))

    def best_of(i: int) -> float:
        vals = [r["objective"] for r in contexts[i]["rows"] if r["objective"] is not None]
        return min(vals) if vals else float("inf")

    return min(pool, key=best_of)


def _edge(values: Sequence[FactorValue], best: FactorValue) -> str | None:
    """`largest` / `smallest` where a numeric factor's best value is an end of its range."""
    nums = [_num(v) for v in values]
    b = _num(best)
    if b is None or any(n is None for n in nums) or len(nums) < 2:
        return None
    if b == max(n or 0.0 for n in nums):
        return "largest"
    if b == min(n or 0.0 for n in nums):
        return "smallest"
    return None


def _numeric(values: Sequence[FactorValue]) -> bool:
    return all(not isinstance(v, bool) and _num(v) is not None for v in values)


def _planned_values(sw: Sweep, factor: str) -> list[FactorValue]:
    seen: dict[str, FactorValue] = {}
    for v in [*sw.planned.get(factor, []), *(c.values.get(factor) for c in sw.cells)]:
        seen.setdefault(norm(v), v)
    return sorted(seen.values(), key=_sort_key)


def _series(contexts: Sequence[FactorContext]) -> tuple[list[FactorSeries], bool]:
    """Each setting of the others with its best value, and whether the best differs between
    them. Where one other factor alone decides the best (slots, say), the series are its
    values ("512 at 1 slot, 128 at 4 slots"), not every combination."""
    series: list[FactorSeries] = [
        {"series": e["context"], "best": e["best"], "state": e["state"]} for e in contexts
    ]
    outcomes = {(e["state"], norm(e["best"])) for e in contexts}
    if len(outcomes) < 2 or len(contexts) < 2:
        return series, False
    keys = sorted(contexts[0]["context"], key=lambda k: (k != "slots", k))
    for k in keys:
        by: dict[str, FactorSeries] = {}
        ok = True
        for e in contexts:
            v = e["context"].get(k)
            first = by.setdefault(
                norm(v), {"series": {k: v}, "best": e["best"], "state": e["state"]}
            )
            ok = ok and (first["state"], norm(first["best"])) == (e["state"], norm(e["best"]))
        if ok and len(by) > 1:
            return list(by.values()), True
    return series, True


def _no_noise_estimate(sw: Sweep, cells: Sequence[Cell]) -> int | None:
    """Units a point, where every compared cell is one run of fewer units than a paired noise
    estimate needs and the study declares no noise: differences cannot be told from run-to-run
    variation. None when the comparison has a noise estimate."""
    if sw.noise is not None or any(len(c.samples.get(sw.metric) or []) > 1 for c in cells):
        return None
    units = [_num(_first(sw, c, "units_completed")) for c in cells]
    known = [u for u in units if u is not None]
    if not known or max(known) >= PAIRED_UNITS:
        return None
    return int(max(known))


def factor_verdict(sw: Sweep, factor: str, where: Point) -> Verdict:
    """One factor's verdict (see the module docstring)."""
    m = sw.metric
    kind = "application" if factor in sw.application else "setting"
    rest = [k for k in sw.varying if k != factor]
    values = _planned_values(sw, factor)
    contexts, cells_of = _contexts(sw, factor, rest)
    pi = _primary(sw, contexts, where, rest)
    primary: Point = contexts[pi]["context"] if pi is not None else {}
    numbers = FactorNumbers(
        factor=factor,
        kind=kind,
        numeric=_numeric(values),
        values=values,
        contexts=contexts,
        primary=primary,
        objective=sw.objective.to_json(),
    )
    missing = sw.missing_where(primary)
    idle = not_exercised(sw, factor)
    if idle is not None:
        value: FactorVerdictValue = {"state": "not exercised", "best": None, "kind": kind}
        numbers = replace(numbers, not_exercised=idle)
        return Verdict(factor, value, PROVISIONAL, missing, m, numbers, None, ["not_exercised"])
    if pi is None:
        value = {"state": "no comparison", "best": None, "kind": kind}
        return Verdict(factor, value, PROVISIONAL, missing, m, numbers, None, ["no_comparison"])
    series, differs = _series(contexts)
    ctx = contexts[pi]
    group, best, comps = cells_of[pi]
    reasons: list[str] = []
    # Complete only when every value's comparison with the best is decided. Where no pair
    # could have an interval (too few units, no declared noise), that is the reason given.
    open_ = [c for c in comps if c.outcome == OPEN]
    units = _no_noise_estimate(sw, group)
    if units is not None:
        reasons.append("no_noise_estimate")
    elif open_:
        reasons.append("open_pairs")
    _run_noise(comps, reasons)
    cap = _capped(sw, best) if ctx["state"] == "best" else None
    if cap is not None:
        reasons.append("capped")
    # The best depends on the other settings only where two settings decide it differently;
    # settings some of which were left open or crossed machine states are `mixed`: each is
    # named as it stands, no dependence is claimed from them.
    decided = {(e["state"], norm(e["best"])) for e in contexts if e["state"] in DECIDED}
    state = ("depends" if len(decided) > 1 else "mixed") if differs else ctx["state"]
    best_value = ctx["best"] if state != "no difference" else None
    numbers = replace(
        numbers,
        by_series=series if differs else None,
        scope_differs=differs,
        edge=_edge(values, ctx["best"]) if numbers.numeric and ctx["state"] == "best" else None,
        units=units,
        comparisons=[comparison_json(sw, c) for c in comps],
        open=[comparison_json(sw, c) for c in open_],
        contaminated=_taint(sw, group, reasons, engine=True),
        capped=cap,
        stalled=_stalled(sw, group, reasons, factor),
        cold=_cold(sw, group),
    )
    point = {**primary, factor: best_value} if best_value is not None else None
    value = {"state": state, "best": best_value, "kind": kind}
    return Verdict(factor, value, _status(missing, reasons), missing, m, numbers, point, reasons)


def settled(verdicts: Mapping[str, Verdict]) -> bool:
    return all(v.status == COMPLETE for v in verdicts.values() if is_setting(v))


def apply_factors(sw: Sweep, point: Point, factors: Sequence[Verdict]) -> tuple[Point, list[str]]:
    """The recommended point with every factor verdict's value: each factor's best at the
    setting of the others the point names (twice over, so each sees the others' choices); a
    factor with no difference, or not exercised, keeps the point's value (else its verdict's
    or its first planned value); an application factor keeps the point's value (else its
    first planned value) and is returned in the second list, to be stated as the user's
    choice, never recommended."""
    out = dict(point)
    application: list[str] = []
    judged: list[FactorNumbers] = []
    for v in factors:
        n = v.numbers
        if not isinstance(n, FactorNumbers):
            continue
        if n.kind == "application":
            application.append(n.factor)
        elif n.not_exercised is None:
            judged.append(n)
            if v.point and n.factor not in out:
                out[n.factor] = v.point[n.factor]
        out.setdefault(n.factor, (sw.planned.get(n.factor) or n.values or [None])[0])
    for _ in range(2):
        for n in judged:
            for e in n.contexts:
                ctx = e["context"]
                if e["state"] == "best" and all(
                    norm(out.get(k)) == norm(x) for k, x in ctx.items()
                ):
                    out[n.factor] = e["best"]
    # An application factor with no verdict of its own (the workload, a basis factor): the
    # point keeps its value and says it is the user's choice, never a recommendation.
    for f in sw.varying:
        if f in sw.application and f not in application:
            application.append(f)
    return out, application

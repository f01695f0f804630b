"""Drafting verdicts (MTP, draft models, n-gram): the effect per slot count and its runs, each
effect the comparison engine's answer (benchkit.compare) for the drafter on against off."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from benchkit.compare.engine import ACROSS, BETTER, OPEN, WITHIN, WORSE, Comparison
from benchkit.config.drafting import DRAFTER_SETTINGS
from benchkit.report.analysis.numbers import (
    DraftAnswers,
    DraftContext,
    DraftingNumbers,
    Point,
    Run,
    SeriesRuns,
)
from benchkit.report.analysis.sweep import (
    DECODE,
    PROVISIONAL,
    Cell,
    Missing,
    Sweep,
    _is_num,
    label,
    norm,
)
from benchkit.report.verdicts.common import (
    Verdict,
    _cold,
    _context,
    _ctx_sort,
    _group,
    _number,
    _run_noise,
    _stalled,
    _status,
    _taint,
)
from benchkit.report.verdicts.engine_of import comparison_json, engine_of, point_of

# Below this share of drafts accepted at every setting, a drafter's effect is its cost alone.
FEW_ACCEPTED = 0.10


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


def _effect(c: Comparison, drafted: int | None = None) -> str:
    """The drafter's effect by the comparison of on (other) against off (base): decided
    faster helps, slower hurts, within the margin no difference. A comparison left open (one
    across machine states among them) names no effect: `open`, whatever its figure, as an
    effect is named only where one machine state or a bridge decides it (a review found
    "hurt" and "made no difference" drawn from open pairs across two machine states). Where
    the drafter drafted no token, `no drafts`: no draft was verified, only its lookup ran."""
    if drafted == 0:
        return "no drafts"
    if c.outcome == OPEN:
        return "open"
    return {BETTER: "helps", WORSE: "hurts", WITHIN: "no difference"}.get(c.outcome, "open")


def _pairs(
    cells: Sequence[Cell], factor: str, off: Any, on: Any, rest: Sequence[str]
) -> list[tuple[Cell, Cell]]:
    """(off, on) cells at each setting of the other factors, in their order. spec=none has no
    drafter settings (draft model, draft length, n-gram mode): each drafter's cell is paired
    with the spec=none cell of the same other factors, the one recorded with the same
    drafter settings where there is one (a sweep's collapsed duplicates, benchkit.drafting),
    else any."""
    own = [k for k in rest if k in DRAFTER_SETTINGS] if factor == "spec" else []
    shared = [k for k in rest if k not in own]
    out: list[tuple[Cell, Cell]] = []
    for group in _group(cells, shared).values():
        offs = [c for c in group if c.get(factor) == norm(off)]
        for c_on in (c for c in group if c.get(factor) == norm(on)):
            same = [c for c in offs if all(c.get(k) == c_on.get(k) for k in own)]
            if same or offs:
                out.append(((same or offs)[0], c_on))
    return sorted(out, key=lambda pair: _ctx_sort([pair[1]], rest))


def _one_series(
    by_series: Mapping[str, tuple[Point, list[DraftContext]]], where: Point
) -> Point | None:
    """The series a verdict is about where `where` (what the other verdicts single out) leaves
    more than one (the slots verdict had no point, say, and draft lengths were swept): the one
    with the most pairs, then the one where drafting was fastest (the drafter at its best
    setting). None where one series or none matches; the section names every series' effect
    where they differ."""
    matching = [
        (ser, entries)
        for ser, entries in by_series.values()
        if all(norm(ser.get(k)) == norm(v) for k, v in where.items() if k in ser)
    ]
    if len(matching) < 2:
        return None

    def rank(item: tuple[Point, list[DraftContext]]) -> tuple[int, bool, float]:
        # A series where the drafter drafted nothing is no measure of drafting: last.
        entries = item[1]
        idle = any(e["drafted"] == 0 for e in entries)
        return (-len(entries), idle, sum(e["on"] for e in entries) / len(entries))

    return dict(min(matching, key=rank)[0])


def _contexts(
    sw: Sweep, factor: str, off: Any, on: Any, rest: Sequence[str]
) -> tuple[list[DraftContext], list[tuple[Cell, Cell]], list[Comparison]]:
    """The drafter on against off at each setting of the other factors: the objective both
    ways (the table's), the engine's comparison and the effect it gives, the acceptance and
    decode rates; the two cells compared and the comparisons."""
    m = sw.metric
    eng = engine_of(sw)
    contexts: list[DraftContext] = []
    cells_of: list[tuple[Cell, Cell]] = []
    comps: list[Comparison] = []
    for c_off, c_on in _pairs(sw.cells, factor, off, on, rest):
        v_on, v_off = c_on.mean(m), c_off.mean(m)
        comp = eng.compare(point_of(c_off), point_of(c_on))
        if v_on is None or v_off is None or comp is None:
            continue
        contexts.append(
            {
                "context": _context(c_on, rest),
                "off": v_off,
                "on": v_on,
                # The table's ratio stays its own seconds' (the row prints them); the
                # comparison's figure, paired on one machine, is the sentence's.
                "ratio": v_on / v_off if v_off else math.inf,
                "effect": _effect(comp, _drafted(sw, c_on)),
                "comparison": comparison_json(sw, comp),
                "acceptance": c_on.mean("draft_acceptance"),
                "decode_off": c_off.mean(DECODE),
                "decode_on": c_on.mean(DECODE),
                **_answers(sw, c_on),
            }
        )
        cells_of.append((c_off, c_on))
        comps.append(comp)
    return contexts, cells_of, comps


def _drafted(sw: Sweep, c: Cell) -> int | None:
    """Tokens the cell's drafter drafted (its jobs' least), None where none is recorded."""
    vals = [float(v) for j in c.jobs if _is_num(v := sw.row(j).get("draft_tokens"))]
    return int(min(vals)) if vals else None


def _drafted_only(
    measured: tuple[list[DraftContext], list[tuple[Cell, Cell]], list[Comparison]],
    reasons: list[str],
) -> tuple[list[DraftContext], list[DraftContext], list[tuple[Cell, Cell]], list[Comparison]]:
    """The pairs the verdict judges: those where the drafter drafted. Where it drafted no
    token no draft was verified (only its lookup ran), so the difference measured there is
    not drafting's: the table shows such a pair (the first list:
    every pair), the verdict does not rest on it, and `reasons` says where."""
    contexts, cells_of, comps = measured
    keep = [i for i, e in enumerate(contexts) if e["effect"] != "no drafts"]
    if len(keep) < len(contexts):
        reasons.append("no_drafts_at")
    return (
        contexts,
        [contexts[i] for i in keep],
        [cells_of[i] for i in keep],
        [comps[i] for i in keep],
    )


def _answers(sw: Sweep, c: Cell) -> DraftAnswers:
    """The drafter-on cell's drafted tokens, drift from the reference and task accuracy (the
    first job's that has each: the sweep's folder columns, benchkit.report.verdicts.folder)."""

    def first(key: str) -> float | None:
        vals = [v for j in c.jobs if _is_num(v := sw.row(j).get(key))]
        return float(vals[0]) if vals else None

    def whole(key: str) -> int | None:
        v = first(key)
        return None if v is None else int(v)

    return {
        "drafted": _drafted(sw, c),
        "drift_changed": whole("drift_changed_n"),
        "drift_probes": whole("drift_probes"),
        "drift_first": first("drift_first"),
        "drift_kld": first("drift_kld"),
        "task_accuracy": first("task_accuracy"),
    }


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
    reasons: list[str] = []
    shown, contexts, cells_of, comps = _drafted_only(_contexts(sw, factor, off, on, rest), reasons)
    by_series = _by_series(contexts, rest)
    where = _primary_where(slots, backend, factor)
    where = {**where, **(_one_series(by_series, where) or {})}  # one series, never a mix
    missing = _missing_under(sw, where, factor, (off, on))
    wanted: Point | None = None
    if where and contexts and not any(_in_series(e, where) for e in contexts):
        # The series the other verdicts single out has no pair, another has: the verdict is
        # that series' (the one with the most pairs), named as such and provisional, so the
        # section's sentence speaks of the pairs its table shows.
        wanted, where = dict(where), dict(max(by_series.values(), key=lambda se: len(se[1]))[0])
        reasons.append("other_series")
        missing += [m for m in _missing_under(sw, where, factor, (off, on)) if m not in missing]
    primary = sorted(
        (e for e in contexts if _in_series(e, where)), key=lambda e: _slot_order(e, rest)
    )
    series_runs, scope_differs = _series_runs(by_series)
    acc, acc_by = _acceptance(contexts)
    if acc and max(acc) < FEW_ACCEPTED:
        # Drafts almost never accepted (random weights accept 0.1-3%): the on/off comparison
        # measures what drafting costs, not what it gains where drafts are accepted, so its
        # effect is never a finding about drafting (issue #44).
        reasons.append("drafts_rejected")
    numbers = DraftingNumbers(
        factor=factor,
        on_value=on,
        off_value=off,
        contexts=shown,
        primary=where,
        acceptance_range=[min(acc), max(acc)] if acc else None,
        acceptance_by_backend={b: [min(v), max(v)] for b, v in acc_by.items()},
        by_series=series_runs,
        scope_differs=scope_differs,
        objective=sw.objective.to_json(),
        wanted=wanted,
    )
    if not primary:
        return Verdict(name, None, PROVISIONAL, missing, m, numbers, None, ["no_comparison"])
    numbers = _judged(sw, numbers, (contexts, cells_of, comps), where, primary, reasons, factor)
    return Verdict(
        name, _runs(primary), _status(missing, reasons), missing, m, numbers, where or None, reasons
    )


def _primary_where(slots: Verdict | None, backend: Verdict | None, factor: str) -> Point:
    """The series the other verdicts single out: the slots verdict's point (its slot count
    and the drafter left out), else the backend winner's; {} where neither names one."""
    if slots is not None and slots.point:
        return {k: v for k, v in slots.point.items() if k not in (factor, "slots")}
    if backend is not None and backend.point:
        return dict(backend.point)
    return {}


def _in_series(e: DraftContext, where: Point) -> bool:
    """Whether a compared setting lies in the series `where` names."""
    return all(norm(e["context"].get(k)) == norm(v) for k, v in where.items())


def _slot_order(e: DraftContext, rest: Sequence[str]) -> float:
    """A compared setting's place in its series: its slot count where slots vary."""
    return float(_slots_in(e["context"]) or 0) if "slots" in rest else 0.0


def _by_series(
    contexts: Sequence[DraftContext], rest: Sequence[str]
) -> dict[str, tuple[Point, list[DraftContext]]]:
    """The compared settings grouped by series (every other varying factor but slots), by
    the series' label, each in slot order."""
    series_keys = [k for k in rest if k != "slots"]
    by_series: dict[str, tuple[Point, list[DraftContext]]] = {}
    for e in sorted(contexts, key=lambda e: _slot_order(e, rest)):
        ctx = {k: e["context"].get(k) for k in series_keys}
        by_series.setdefault(label(ctx), (ctx, []))[1].append(e)
    return by_series


def _series_runs(
    by_series: Mapping[str, tuple[Point, list[DraftContext]]],
) -> tuple[list[SeriesRuns], bool]:
    """Each series' runs of effects, and whether the series disagree (`scope_differs`)."""
    series_runs: list[SeriesRuns] = [
        {"series": ser, "runs": _runs(entries)} for ser, entries in by_series.values()
    ]
    scope_differs = (
        len({json.dumps([(r["from"], r["effect"]) for r in s["runs"]]) for s in series_runs}) > 1
    )
    return series_runs, scope_differs


def _acceptance(contexts: Sequence[DraftContext]) -> tuple[list[float], dict[str, list[float]]]:
    """The draft acceptance of every compared setting that recorded one, and by backend."""
    acc = [e["acceptance"] for e in contexts if e["acceptance"] is not None]
    acc_by: dict[str, list[float]] = {}
    for e in contexts:
        if e["acceptance"] is not None and "backend" in e["context"]:
            acc_by.setdefault(str(e["context"]["backend"]), []).append(e["acceptance"])
    return acc, acc_by


def _judged(
    sw: Sweep,
    numbers: DraftingNumbers,
    compared: tuple[list[DraftContext], list[tuple[Cell, Cell]], list[Comparison]],
    where: Point,
    primary: Sequence[DraftContext],
    reasons: list[str],
    factor: str,
) -> DraftingNumbers:
    """The numbers of a verdict whose primary series has pairs: the comparisons it rests on
    (any left open named, with the reasons they add), the contamination, stalls and cold
    starts of their jobs, and the on/off range."""
    contexts, cells_of, comps = compared
    # The effects rest on the primary series' comparisons: any left open makes the verdict
    # provisional, named with the units that would decide it.
    rests = [c for c, e in zip(comps, contexts, strict=True) if _in_series(e, where)]
    open_ = [c for c in rests if c.outcome == OPEN]
    if open_:
        reasons.append("open_pairs")
    _run_noise(rests, reasons)
    used = [
        c
        for (c_off, c_on), e in zip(cells_of, contexts, strict=True)
        if _in_series(e, where)
        for c in (c_off, c_on)
    ]
    bad = _taint(sw, used, reasons, engine=True)
    # The range over comparisons on one machine or bridged; one across machines (open, and
    # named as such) only where there are no others, as the backend verdict's range.
    kept = [c for c in rests if c.machine != ACROSS] or rests
    ratios = [c.ratio for c in kept if c.ratio is not None]
    return replace(
        numbers,
        comparisons=[comparison_json(sw, c) for c in rests],
        open=[comparison_json(sw, c) for c in open_],
        contaminated=bad,
        stalled=_stalled(sw, used, reasons, factor),
        cold=_cold(sw, used),
        largest=_slots_in(primary[-1]["context"]),
        on_off_range=[min(ratios), max(ratios)] if ratios else None,
        compared=True,
    )


def _missing_under(sw: Sweep, where: Point, factor: str, values: Sequence[Any]) -> list[Missing]:
    """The planned points missing under a series, of the drafter's two values only."""
    compared = {norm(v) for v in values}
    return [
        mi
        for mi in sw.missing_where(where)
        if factor not in mi.point or norm(mi.point[factor]) in compared
    ]


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
    """The effect a drafting verdict's runs give at a slot count; None where the runs were
    measured on another series than the one the other verdicts single out."""
    if v is None or not isinstance(v.verdict, list) or "other_series" in v.reasons:
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

"""Cold starts and warm-up in words: beside a verdict's figures, what the figures leave out
and why (benchkit.report.analysis.stalls, rules v6); in the conditions, whether an untimed warm-up
preceded each job's timed pass (benchkit.report.analysis.warmup)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from benchkit.report.analysis.numbers import (
    BackendNumbers,
    CallRef,
    Cold,
    ComparisonJson,
    DraftingNumbers,
    FactorNumbers,
    Point,
    ProjectionNumbers,
    SlotsNumbers,
)
from benchkit.report.analysis.sweep import norm
from benchkit.report.analysis.warmup import WarmState
from benchkit.report.lang import clauses, fmt, tr
from benchkit.report.lang.i18n import jobs_text, list_text, objective_value, point_text
from benchkit.report.verdicts.common import Verdict, _objective_of
from benchkit.report.verdicts.compare_words import _pick
from benchkit.report.verdicts.voice import first_time


def calls_text(calls: Sequence[CallRef], lang: str) -> str:
    """'unit u000, call 0 / unit u001, call 0'; calls of three units or more that are all
    their unit's n-th summarised ('the first call of six units': an editor found a list of
    six such ids)."""
    same = {c["call"] for c in calls}
    if len(calls) >= 3 and len(same) == 1 and (n := next(iter(same))) is not None:
        units = len({c["unit"] for c in calls})
        if n == 0:
            return tr(lang, "the first call of {n} units", n=units)
        return tr(lang, "call {call} of {n} units", call=n, n=units)
    return " / ".join(
        tr(lang, "unit {unit}", unit=c["unit"])
        if c["call"] is None
        else tr(lang, "unit {unit}, call {call}", unit=c["unit"], call=c["call"])
        for c in calls
    )


def cold_text(notes: Cold | None, metric: str, lang: str) -> str:
    """What the figures a verdict compares leave out, with why; '' without cold starts."""
    if not notes:
        return ""
    # A post states each job's cold start once, where it first applies; a later section
    # says it is left out there too (verdicts.voice).
    again = [n["job"] for n in notes if not first_time(f"cold start of job {n['job']}")]
    notes = [n for n in notes if n["job"] not in again]
    also = (
        tr(
            lang,
            "The cold start of {jobs}, given above, is left out here too.",
            jobs=jobs_text(again, lang),
        )
        if again
        else ""
    )
    if not notes:
        return also
    items = [
        tr(
            lang,
            "{point} ({jobs}): {value} where {measured} was measured, without {excess} of "
            "cold start in {calls}",
            point=point_text(n["point"], lang),
            jobs=jobs_text([n["job"]], lang),
            value=objective_value(metric, n["objective"], lang),
            measured=objective_value(metric, n["objective_measured"], lang),
            excess=objective_value("", n["excess_s"], lang),
            calls=calls_text(n["calls"], lang),
        )
        for n in notes
    ]
    if not first_time("cold start"):
        # A post explains the rule where it first applies (verdicts.voice).
        text = tr(lang, "Cold starts left out: {items}.", items=clauses(lang, items))
        return f"{text} {also}" if also else text
    text = tr(
        lang,
        "Cold starts left out: {items}. By benchkit's rule a cold start is a stall in the first "
        "work of a server that had no warm-up before its timed pass (the calls sent before the "
        "pass's first call completed); it is taken for the server starting rather than the "
        "setting's speed, so its time beyond the job's median rate is left out of the figures "
        "compared. What made those calls slow (compiling shaders or kernels, clocks ramping "
        "up, memory being allocated, or the setting itself at its first wave) is not isolated: "
        "where the setting itself was slow, the figure leaves part of its cost out, and the "
        "figure as measured stands beside it.",
        items=clauses(lang, items),
    )
    return f"{text} {also}" if also else text


def warmup_lines(states: Mapping[str, WarmState], lang: str) -> list[str]:
    """Whether an untimed warm-up preceded the timed passes: one line for the study when
    every job agrees, else one per state naming its jobs."""
    if not states:
        return []
    by: dict[str, list[str]] = {}
    for job, s in sorted(states.items(), key=lambda kv: _job_order(kv[0])):
        by.setdefault(s, []).append(job)
    if len(by) == 1:
        state = next(iter(by))
        return [_study_line(state, lang)]
    parts = [
        tr(
            lang,
            "{jobs}: {state}",
            jobs=jobs_text(by[state], lang),
            state=_state_words(state, lang),
        )
        for state in ("on", "off", "unknown")
        if state in by
    ]
    return [tr(lang, "Warm-up differs between jobs: {items}.", items=clauses(lang, parts))]


def _job_order(job: str) -> tuple[int, str]:
    return (int(job), "") if job.isdigit() else (1 << 30, job)


def _study_line(state: str, lang: str) -> str:
    if state == "on":
        return tr(
            lang,
            "Warm-up: an untimed warm-up (the workload's prompt lengths and every batch size up "
            "to the slot count) preceded each timed pass; its calls are in no figure.",
        )
    if state == "off":
        return tr(
            lang,
            "Warm-up: none preceded the timed passes (these jobs ran before benchkit had a "
            "warm-up, or with replay.warmup=false), so each pass's first calls were its "
            "server's first work; a stall among them is a cold start, left out of the figures "
            "compared.",
        )
    return tr(
        lang,
        "Warm-up: not recorded (these results have no warm-up record, though the benchkit that "
        "wrote them may have run one), so no stall is taken for a cold start.",
    )


def _state_words(state: str, lang: str) -> str:
    if state == "on":
        return tr(lang, "an untimed warm-up preceded the timed pass")
    if state == "off":
        return tr(lang, "no warm-up (the first timed calls were the server's first work)")
    return tr(lang, "not recorded")


def with_cold(text: str, v: Verdict, lang: str) -> str:
    """A verdict's sentence, then what its figures leave out (cold starts) and why, and the
    comparisons they change as measured with the cold starts kept."""
    n = v.numbers
    compared = BackendNumbers | SlotsNumbers | DraftingNumbers | FactorNumbers | ProjectionNumbers
    notes = n.cold if isinstance(n, compared) else None
    cold = cold_text(notes, _objective_of(v), lang)
    kept = n.cold_kept if isinstance(n, KEPT) else None
    if cold and kept:
        cold = f"{cold} {kept_text(kept, lang)}"
    return f"{text} {cold}" if cold else text


KEPT = BackendNumbers | SlotsNumbers | DraftingNumbers | FactorNumbers


def kept_text(pairs: Sequence[ComparisonJson], lang: str) -> str:
    """Each comparison a cold start's leaving out changed, as measured with it kept (rules
    v12: a reviewer recomputed a backend range as measured, 1.30x-1.61x, where the report gave
    only the range without the cold starts, 1.20x-1.31x)."""
    items = [
        tr(
            lang,
            "{other} took {ratio} the time of {base} at {where}",
            other=point_text(_pick(c["other"], c["base"]), lang),
            ratio=fmt.ratio(c["ratio"], lang),
            base=point_text(_pick(c["base"], c["other"]), lang),
            where=point_text(_shared(c), lang),
        )
        if _shared(c)
        else tr(
            lang,
            "{other} took {ratio} the time of {base}",
            other=point_text(_pick(c["other"], c["base"]), lang),
            ratio=fmt.ratio(c["ratio"], lang),
            base=point_text(_pick(c["base"], c["other"]), lang),
        )
        for c in pairs
        if c["ratio"] is not None
    ]
    if not items:
        return ""
    return tr(lang, "As measured, with the cold starts kept: {items}.", items=clauses(lang, items))


def _shared(c: ComparisonJson) -> Point:
    return {k: x for k, x in c["other"].items() if norm(x) == norm(c["base"].get(k))}


def cold_pairs(v: Verdict, lang: str, drop: Collection[str] = ()) -> tuple[str, str] | None:
    """Where only a cold start's leaving out decides a verdict's effect: the pairs' settings
    without the verdict's own factor ("Vulkan, 1 slot", so that it is not read of the whole
    verdict) and their ratios as measured; None otherwise."""
    pairs = getattr(v.numbers, "as_measured", None) or []
    measured = [c for c in pairs if c["ratio"] is not None]
    if "decided_without_cold" not in v.reasons or not measured:
        return None
    # `drop`: settings the clause has named already (its series: "on Vulkan MTP ...").
    gone = {v.factor, *drop}
    at = [point_text({k: x for k, x in c["base"].items() if k not in gone}, lang) for c in measured]
    return (
        list_text(list(dict.fromkeys(at)), lang),
        list_text([fmt.ratio(c["ratio"], lang) for c in measured], lang),
    )


def cold_only(v: Verdict, lang: str, drop: Collection[str] = ()) -> str:
    """Where only a cold start's leaving out decides the effect, that and the comparisons as
    measured ('' otherwise): a headline never names an effect the measured run leaves open
    (rules v11, from a review that would not sign "MTP hurt at 1 slot" on that ground)."""
    found = cold_pairs(v, lang, drop)
    if found is None:
        return ""
    return tr(
        lang,
        ", and at {settings} only with a cold start left out (as measured {ratios}, not decided)",
        settings=found[0],
        ratios=found[1],
    )


def cold_decides_all(v: Verdict, series: Mapping[str, object] | None = None) -> bool:
    """Whether every decided pair of a drafting verdict (of `series`, where given) is decided
    only with a cold start left out: the measured run leaves the whole effect open, so a
    headline names none (review 13: the H200 Vulkan post's "MTP appears to have hurt at 1
    slot, and at 1 slot only with a cold start left out ... MTP on took 1.59x", as measured
    1.26x and open)."""
    n = v.numbers
    if "decided_without_cold" not in v.reasons or not isinstance(n, DraftingNumbers):
        return False
    cold = {_key(c["base"]) for c in n.as_measured or []}
    decided = [
        e
        for e in n.contexts
        if e["comparison"]["outcome"] in ("worse", "better", "within")
        and all(norm(e["context"].get(k)) == norm(x) for k, x in (series or {}).items())
    ]
    return bool(decided) and all(_key(e["comparison"]["base"]) in cold for e in decided)


def _key(point: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, norm(x)) for k, x in point.items()))


def cold_open(v: Verdict, lang: str, drop: Collection[str] = ()) -> str:
    """A drafter's runs where only a cold start's leaving out decides them all: 'was not
    decided as measured at Vulkan, 1 slot (1.26x), only with a cold start left out'."""
    found = cold_pairs(v, lang, drop)
    return (
        tr(
            lang,
            "was not decided as measured at {settings} ({ratios}), only with a cold start left out",
            settings=found[0],
            ratios=found[1],
        )
        if found is not None
        else ""
    )

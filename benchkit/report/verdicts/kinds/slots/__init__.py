"""The slots verdict: the knee, the fewest parallel slots not measurably worse than the best."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.lang import tr
from benchkit.report.lang.i18n import slots_phrase
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.exercise import exercised
from benchkit.report.verdicts.kind import Found, Say, VerdictKind
from benchkit.report.verdicts.kinds.slots import figure, next_run, section, words
from benchkit.report.verdicts.kinds.slots.verdict import slots_verdict
from benchkit.report.verdicts.light import Light
from benchkit.report.verdicts.sentences import slots_sentence


def _compute(found: Found) -> Sequence[Verdict]:
    v = exercised(found.sweep, slots_verdict(found.sweep, found.one("backend")))
    return [v] if v is not None else []


def _value(value: Any, lang: str, numbers: Light) -> str:
    """'8 slots', or where a provisional knee may lie elsewhere, '2-16 slots, 8 by the
    figures'; 'none up to 16 slots' where the largest count measured was still the best."""
    if numbers.knee_reached is False and numbers.knee_low is not None:
        # The largest count was the best by the figures, but a smaller one is not decided
        # apart from it (review 10: the H200 Vulkan study's 2 slots against 8, 1.00x-1.22x).
        return tr(
            lang,
            "from {low} up, {slots} by the figures",
            low=slots_phrase(numbers.knee_low, lang),
            slots=value,
        )
    if numbers.knee_reached is False:
        # The largest count was still the best: the value says so, as the headline does (an
        # editor read "8 slots" in the table under "no knee up to 8 slots").
        return tr(lang, "none up to {slots}", slots=slots_phrase(value, lang))
    if numbers.knee_low is None and numbers.knee_high is None:
        return slots_phrase(value, lang)
    if numbers.knee_across:
        return tr(
            lang,
            "{low}-{high} slots, {slots} only by comparisons across machines",
            slots=value,
            low=numbers.knee_low if numbers.knee_low is not None else value,
            high=numbers.knee_high if numbers.knee_high is not None else value,
        )
    return tr(
        lang,
        "{low}-{high} slots, {slots} by the figures",
        slots=value,
        low=numbers.knee_low if numbers.knee_low is not None else value,
        high=numbers.knee_high if numbers.knee_high is not None else value,
    )


def _summary(v: Verdict, say: Say) -> str:
    return slots_sentence(v, say.lang)


KIND: VerdictKind = VerdictKind(
    "slots", _compute, value_text=_value, summary=_summary, section=section.section,
    figures=figure.figures, clauses=words.clauses,
    proposes=next_run.proposes, acted_on=True,
)  # fmt: skip

"""The projection verdict: the hours the study's units take at the recommended point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.lang import fmt
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Found, Say, VerdictKind
from benchkit.report.verdicts.kinds.projection import section
from benchkit.report.verdicts.kinds.projection.verdict import projection_verdict
from benchkit.report.verdicts.light import Light
from benchkit.report.verdicts.sentences import projection_sentence


def _compute(found: Found) -> Sequence[Verdict]:
    specs = found.all("spec=")
    return [
        projection_verdict(
            found.sweep,
            found.projection_units,
            found.one("backend"),
            found.one("slots"),
            found.one("mtp"),
            specs,
            found.all("factor"),
        )
    ]


def _value(value: Any, lang: str, numbers: Light) -> str:
    # The verdict's value is rounded hours; the seconds, where kept, give minutes exactly.
    seconds = numbers.seconds
    return fmt.hours(seconds if seconds else float(value) * 3600, lang)


def _summary(v: Verdict, say: Say) -> str:
    return projection_sentence(v, say.lang, say.unit)


KIND: VerdictKind = VerdictKind(
    "projection", _compute, value_text=_value, summary=_summary, value_tolerance=True,
    names_point=True, section=section.section,
)  # fmt: skip

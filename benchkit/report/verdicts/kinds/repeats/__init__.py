"""The repeats verdict: how far repeats of one point spread (the largest CV), study-wide."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.lang import fmt
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import BOTH, Found, Say, VerdictKind
from benchkit.report.verdicts.kinds.repeats import section
from benchkit.report.verdicts.kinds.repeats.verdict import repeats_verdict
from benchkit.report.verdicts.light import Light
from benchkit.report.verdicts.sentences import repeats_sentence


def _compute(found: Found) -> Sequence[Verdict]:
    return [repeats_verdict(found.sweep)]


def _value(value: Any, lang: str, numbers: Light) -> str | None:
    return f"CV ≤ {fmt.pct(value.get('max_cv'), 1)}" if isinstance(value, dict) else None


def _summary(v: Verdict, say: Say) -> str:
    return repeats_sentence(v, say.lang, say.knee_gain)


KIND: VerdictKind = VerdictKind(
    "repeats", _compute, loads=BOTH, value_text=_value, summary=_summary,
    in_summary_table=False, tracked=False, section=section.section,
)  # fmt: skip

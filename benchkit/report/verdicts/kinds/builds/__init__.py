"""The build verdict: a new llama-server build against the baseline's, said as the effect.
It compares two studies, so the report computes it (`compare_builds`), not `analyse`."""

from __future__ import annotations

from typing import Any

from benchkit.report.lang.i18n import effect_word
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Say, VerdictKind
from benchkit.report.verdicts.kinds.builds import figure, section, words
from benchkit.report.verdicts.kinds.builds.words import build_sentence
from benchkit.report.verdicts.light import Light


def _value(value: Any, lang: str, numbers: Light) -> str:
    return effect_word(value, lang)


def _summary(v: Verdict, say: Say) -> str:
    return build_sentence(v, say.lang)


KIND: VerdictKind = VerdictKind(
    "build", value_text=_value, summary=_summary, section=section.section, figures=figure.figures,
    clauses=words.clauses,
)  # fmt: skip

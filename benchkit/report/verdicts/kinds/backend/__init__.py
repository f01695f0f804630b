"""The backend verdict: which backend is faster at each setting, said as a backend's name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.lang.i18n import backend_name, effect_word
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Found, Say, VerdictKind
from benchkit.report.verdicts.kinds.backend import figure, section, words
from benchkit.report.verdicts.kinds.backend.verdict import backend_verdict
from benchkit.report.verdicts.light import Light
from benchkit.report.verdicts.sentences import backend_sentence


def _compute(found: Found) -> Sequence[Verdict]:
    v = backend_verdict(found.sweep)
    return [v] if v is not None else []


def _value(value: Any, lang: str, numbers: Light) -> str:
    if value in ("mixed", "no difference"):
        return effect_word(value, lang)
    return backend_name(value)


def _summary(v: Verdict, say: Say) -> str:
    return backend_sentence(v, say.lang)


KIND: VerdictKind = VerdictKind(
    "backend", _compute, value_text=_value, summary=_summary, section=section.section,
    figures=figure.figures, clauses=words.clauses, acted_on=True,
)  # fmt: skip

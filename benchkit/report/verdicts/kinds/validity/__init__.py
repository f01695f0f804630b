"""The validity verdict: whether every planned point completed, study-wide."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.lang.i18n import status_word
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import BOTH, Found, VerdictKind
from benchkit.report.verdicts.kinds.validity.verdict import validity_verdict
from benchkit.report.verdicts.light import Light

NAME = "validity"


def _compute(found: Found) -> Sequence[Verdict]:
    return [validity_verdict(found.sweep)]


def _value(value: Any, lang: str, numbers: Light) -> str:
    return status_word(str(value), lang)


KIND: VerdictKind = VerdictKind(
    NAME,
    _compute,
    loads=BOTH,
    value_text=_value,
    in_summary_table=False,
    tracked=False,
    completeness=True,
)

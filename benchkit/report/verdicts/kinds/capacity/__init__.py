"""The capacity verdict (open-loop load): the setting that held the most offered load under
the study's SLO, said as that point."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.lang.i18n import setting_text
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import OPEN, Found, Page, Section, VerdictKind
from benchkit.report.verdicts.kinds.capacity import figure, next_run
from benchkit.report.verdicts.kinds.capacity.verdict import capacity_verdict
from benchkit.report.verdicts.kinds.capacity.words import (
    capacity_clause,
    capacity_section,
    capacity_value,
)
from benchkit.report.verdicts.light import Light


def _compute(found: Found) -> Sequence[Verdict]:
    v = capacity_verdict(found.sweep)
    return [v] if v is not None else []


def _value(value: Any, lang: str, numbers: Light) -> str | None:
    return setting_text(value, lang) if isinstance(value, Mapping) else None


def _clause(v: Verdict, lang: str) -> str | None:
    return capacity_clause(v, lang)


def _section(v: Verdict, page: Page) -> Section:
    return capacity_section(v, page.lang, page.figs)


KIND: VerdictKind = VerdictKind(
    "capacity",
    _compute,
    loads=frozenset({OPEN}),
    value_text=_value,
    table_value=capacity_value,
    names_point=True,
    section=_section,
    figures=figure.figures,
    clause=_clause,
    proposes=next_run.proposes,
    acted_on=True,
)

"""The generic factor verdict: any other swept factor's best value (a batch size, a cache
type), and the kind every verdict name no other kind claims falls to.

The computation is in `verdict.py`; its words are in `benchkit.report.verdicts.factor_words`, which
the slots kind and the sentences also read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from benchkit.report.analysis.numbers import FactorNumbers, Point
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.factor_words import factor_clause, stored_value_text, verdict_value
from benchkit.report.verdicts.kind import Clause, Found, VerdictKind, said
from benchkit.report.verdicts.kinds.factor import section
from benchkit.report.verdicts.kinds.factor.verdict import factor_verdicts


def _compute(found: Found) -> Sequence[Verdict]:
    s, b = found.one("slots"), found.one("backend")
    where: Point = dict((s.point if s is not None else None) or {})
    if not where and b is not None and b.point:
        where = dict(b.point)
    return factor_verdicts(found.sweep, where)


def value_text(factor: str, value: Any, lang: str) -> str:
    """A factor verdict's stored value ({state, best, kind}), else the value as it is."""
    if isinstance(value, Mapping) and "state" in value and "kind" in value:
        return stored_value_text(factor, value, lang)
    return str(value)


def _clauses(v: Verdict, lang: str) -> list[Clause]:
    """The headline's clause of a swept factor's verdict."""
    if not isinstance(v.numbers, FactorNumbers):
        return []
    return [partial(said, factor_clause(v, lang), lang)]


# Acted on: the recommendation names each swept factor's value (the CPU study's "f16 K cache"),
# so it is settled only where that verdict is, and the Next runs take its open pairs (the CPU
# study said "no further run of this sweep would settle them" beside an open K cache pair).
KIND: VerdictKind = VerdictKind(
    "factor",
    _compute,
    table_value=verdict_value,
    section=section.section,
    clauses=_clauses,
    acted_on=True,
)

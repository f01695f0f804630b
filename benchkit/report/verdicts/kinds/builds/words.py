"""The build verdict's words: its headline clause."""

from __future__ import annotations

from functools import partial

from benchkit.report.analysis.numbers import BuildNumbers, of
from benchkit.report.lang import fmt, tr
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Clause


def clauses(v: Verdict, lang: str) -> list[Clause]:
    """The headline's clause: the new build's effect, where the comparison gave one."""
    if v.verdict in ("faster", "slower", "no difference"):
        return [partial(_build_clause, v, lang)]
    return []


def _build_clause(v: Verdict, lang: str, rest: str | None) -> str:
    pct = fmt.pct(abs(of(BuildNumbers, v.numbers).median_change or 0))
    if v.verdict == "faster":
        if rest is None:
            return tr(lang, "the new build was {pct} faster", pct=pct)
        return tr(lang, "the new build was {pct} faster{rest}", pct=pct, rest=rest)
    if v.verdict == "slower":
        if rest is None:
            return tr(lang, "the new build was {pct} slower", pct=pct)
        return tr(lang, "the new build was {pct} slower{rest}", pct=pct, rest=rest)
    if rest is None:
        return tr(lang, "the new build made no difference")
    return tr(lang, "the new build made no difference{rest}", rest=rest)

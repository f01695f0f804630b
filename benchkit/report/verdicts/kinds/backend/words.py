"""The backend verdict's words: its headline clause."""

from __future__ import annotations

from functools import partial

from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import tr
from benchkit.report.lang.i18n import backend_name
from benchkit.report.verdicts.cold_words import cold_pairs
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Clause


def clauses(b: Verdict, lang: str) -> list[Clause]:
    """The headline's clause: which backend won, where the verdict names one."""
    return [partial(_backend_clause, b, lang)] if b.verdict is not None else []


def _backend_clause(b: Verdict, lang: str, rest: str | None) -> str:
    if b.verdict == "no difference":
        if rest is None:
            # TRANSLATORS: a clause of the report's headline, which more clauses follow. The
            # same English with {rest} is the headline's last verdict clause; {rest} is what
            # follows it ("; {projection}", or nothing).
            return tr(lang, "the backends did not differ")
        return tr(lang, "the backends did not differ{rest}", rest=rest)
    if b.verdict == "mixed":
        if rest is None:
            return tr(lang, "no single backend won")
        return tr(lang, "no single backend won{rest}", rest=rest)
    name = backend_name(b.verdict)
    if b.status != COMPLETE:
        # A provisional verdict's clause reads as provisional: the headline states no effect
        # as found that a single comparison, or a cold start's leaving out, decides; where only
        # that leaving out decides it, the clause says so with the pairs as measured.
        cold = cold_pairs(b, lang)
        if cold is not None and rest is None:
            return tr(
                lang,
                "{name} looks faster, at {settings} only with a cold start left out (as "
                "measured {ratios}, not decided)",
                name=name,
                settings=cold[0],
                ratios=cold[1],
            )
        if cold is not None:
            return tr(
                lang,
                "{name} looks faster, at {settings} only with a cold start left out (as "
                "measured {ratios}, not decided){rest}",
                name=name,
                settings=cold[0],
                ratios=cold[1],
                rest=rest,
            )
        if rest is None:
            return tr(lang, "{name} looks faster", name=name)
        return tr(lang, "{name} looks faster{rest}", name=name, rest=rest)
    if rest is None:
        return tr(lang, "{name} won", name=name)
    return tr(lang, "{name} won{rest}", name=name, rest=rest)

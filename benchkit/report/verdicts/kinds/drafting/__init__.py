"""The drafting verdicts: MTP against none ("mtp"), and each drafter against none ("spec=..."),
said as the runs of slot counts where drafting helped, hurt or made no difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkit.report.analysis.numbers import DraftingNumbers, of
from benchkit.report.lang import fmt, tr
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.exercise import exercised
from benchkit.report.verdicts.kind import Found, Say, VerdictKind
from benchkit.report.verdicts.kinds.drafting import figure, section, words
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence
from benchkit.report.verdicts.kinds.drafting.verdict import mtp_verdict, spec_verdicts
from benchkit.report.verdicts.kinds.drafting.words import mtp_runs_text
from benchkit.report.verdicts.light import Light


def _mtp(found: Found) -> Sequence[Verdict]:
    sw = found.sweep
    v = exercised(sw, mtp_verdict(sw, found.one("slots"), found.one("backend")))
    return [v] if v is not None else []


def _spec(found: Found) -> Sequence[Verdict]:
    sw = found.sweep
    return [exercised(sw, v) for v in spec_verdicts(sw, found.one("slots"), found.one("backend"))]


def _value(value: Any, lang: str, numbers: Light) -> str | None:
    return mtp_runs_text(value, numbers.largest, lang) if isinstance(value, list) else None


def _summary(v: Verdict, say: Say) -> str:
    return mtp_sentence(v, say.lang)


def _table_value(v: Verdict, lang: str) -> str:
    """A drafter's summary-table value: the runs, and where drafts were almost never accepted,
    that they measured drafting's cost (the headline's clause), so the table never reads as a
    finding about drafting (review 10 would not sign the MTP study's bare "hurt at every slot
    count" row with 2.8% of drafts accepted)."""
    if getattr(v.numbers, "not_exercised", None):
        return tr(lang, "not exercised")
    if not isinstance(v.verdict, list):
        return fmt.DASH  # no pair compared (a drafter's verdict is runs or nothing)
    if words.undecided(v):
        return words.open_value(v, lang)  # the headline clause's words, never an open figure's
    runs = mtp_runs_text(v.verdict, of(DraftingNumbers, v.numbers).largest, lang)
    return runs + words.cost(v, lang, of(DraftingNumbers, v.numbers).primary)


MTP: VerdictKind = VerdictKind(
    figure.MTP, _mtp, value_text=_value, summary=_summary, section=section.section,
    figures=figure.figures, clauses=words.clauses, acted_on=True, table_value=_table_value,
)  # fmt: skip
SPEC: VerdictKind = VerdictKind(
    "spec=", _spec, prefix=True, value_text=_value, summary=_summary, section=section.section,
    figures=figure.figures, clauses=words.clauses, acted_on=True, table_value=_table_value,
)  # fmt: skip

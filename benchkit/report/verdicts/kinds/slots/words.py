"""The slots verdict's words: its headline clause."""

from __future__ import annotations

from functools import partial

from benchkit.report.analysis.numbers import SlotsNumbers, of
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, tr, trn
from benchkit.report.lang.i18n import slots_phrase
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.factor_words import slots_not_exercised
from benchkit.report.verdicts.kind import Clause, said


def clauses(s: Verdict, lang: str) -> list[Clause]:
    """The headline's clause: the knee (or how far the curve went), else that slots were
    not exercised."""
    if s.verdict is not None:
        return [partial(_slots_clause, s, lang)]
    if idle := of(SlotsNumbers, s.numbers).not_exercised:
        return [partial(said, slots_not_exercised(idle, lang), lang)]
    return []


def _slots_clause(s: Verdict, lang: str, rest: str | None) -> str:
    k = int(s.verdict)
    sn = of(SlotsNumbers, s.numbers)
    f = sn.faster if sn.knee_reached else None
    trade = ""
    if f:
        trade = tr(
            lang,
            " ({slots} took {ratio} its time but needs {context} the context)",
            slots=slots_phrase(f["slots"], lang),
            ratio=fmt.ratio(1 - f["faster_by"], lang),
            context=fmt.ratio(f["ctx_ratio"], lang) if f["ctx_ratio"] else fmt.DASH,
        )
    if sn.flat_from is not None:
        flat = slots_phrase(sn.flat_from, lang)
        if rest is None:
            return tr(lang, "the curve was flat from {slots}", slots=flat)
        return tr(lang, "the curve was flat from {slots}{rest}", slots=flat, rest=rest)
    if sn.knee_reached and s.status == COMPLETE:
        if rest is None:
            return trn(
                lang,
                "{n} slot was the knee{trade}",
                "{n} slots was the knee{trade}",
                k,
                trade=trade,
            )
        return trn(
            lang,
            "{n} slot was the knee{trade}{rest}",
            "{n} slots was the knee{trade}{rest}",
            k,
            trade=trade,
            rest=rest,
        )
    if sn.knee_reached and (sn.knee_low is not None or sn.knee_high is not None):
        return _range_clause(sn, k, trade, lang, rest)
    if sn.knee_reached:
        if rest is None:
            return trn(
                lang,
                "{n} slot looks like the knee{trade}",
                "{n} slots looks like the knee{trade}",
                k,
                trade=trade,
            )
        return trn(
            lang,
            "{n} slot looks like the knee{trade}{rest}",
            "{n} slots looks like the knee{trade}{rest}",
            k,
            trade=trade,
            rest=rest,
        )
    # The largest count best and one smaller count measured, with counts between unmeasured:
    # the curve's shape is not known, so the knee may lie at any of them, as the section says
    # ("no count between them was measured"); "no knee up to 16 slots" of a sweep of 1 and 16
    # slots claimed what nothing measured (review 12). With two smaller counts or more, each
    # gaining on the last, "no knee up to N" is the curve as measured.
    below = [int(r["slots"]) for r in sn.rows or [] if int(r["slots"]) < k]
    gap = below[0] + 1 if len(below) == 1 and below[0] < k - 1 else None
    low = sn.knee_low if sn.knee_low is not None else gap
    if not s.missing and low is not None:
        # A smaller count not decided apart from the best: "no knee up to 8 slots" claimed
        # what the comparisons did not decide (review 10).
        fields = {"low": slots_phrase(low, lang), "slots": slots_phrase(k, lang)}
        if rest is None:
            return tr(
                lang,
                "the knee may lie anywhere from {low} up ({slots} best by the figures)",
                **fields,
            )
        return tr(
            lang,
            "the knee may lie anywhere from {low} up ({slots} best by the figures){rest}",
            rest=rest,
            **fields,
        )
    if not s.missing:
        if rest is None:
            return tr(lang, "no knee up to {slots}", slots=slots_phrase(k, lang))
        return tr(lang, "no knee up to {slots}{rest}", slots=slots_phrase(k, lang), rest=rest)
    if rest is None:
        return trn(
            lang,
            "{n} slot is only the best completed point",
            "{n} slots is only the best completed point",
            k,
        )
    return trn(
        lang,
        "{n} slot is only the best completed point{rest}",
        "{n} slots is only the best completed point{rest}",
        k,
        rest=rest,
    )


def _range_clause(sn: SlotsNumbers, k: int, trade: str, lang: str, rest: str | None) -> str:
    """A provisional knee whose comparisons on either side are still open: where it may lie,
    and where the figures put it (rules v11), or how it was placed where only comparisons
    across machines placed it (rules v12)."""
    # Comparisons still open on either side: where the knee may lie, and where the
    # figures put it (rules v11: a review would not sign a knee its neighbours' open
    # comparisons leave unlocated).
    low = sn.knee_low if sn.knee_low is not None else k
    high = sn.knee_high if sn.knee_high is not None else k
    if sn.across:
        # The counts below it were compared with the best only across machines (rules
        # v12: a review would not sign "at 8 by the figures" where the table showed 4
        # slots faster than 8 on another card): say how the place was found.
        fields = {"low": low, "high": high, "n": k, "trade": trade}
        if rest is None:
            return tr(
                lang,
                "the knee lies between {low} and {high} slots, at {n} only by comparisons "
                "across machines{trade}",
                **fields,
            )
        return tr(
            lang,
            "the knee lies between {low} and {high} slots, at {n} only by comparisons "
            "across machines{trade}{rest}",
            rest=rest,
            **fields,
        )
    if rest is None:
        return tr(
            lang,
            "the knee lies between {low} and {high} slots, at {n} by the figures{trade}",
            low=low,
            high=high,
            n=k,
            trade=trade,
        )
    return tr(
        lang,
        "the knee lies between {low} and {high} slots, at {n} by the figures{trade}{rest}",
        low=low,
        high=high,
        n=k,
        trade=trade,
        rest=rest,
    )

"""The drafting verdicts' words: their headline clauses."""

from __future__ import annotations

from functools import partial

from benchkit.report import fmt
from benchkit.report.i18n import drafter, mtp_runs_text, point_text
from benchkit.report.lang import tr
from benchkit.report.numbers import DraftingNumbers, Point, of
from benchkit.report.sweep import norm
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Clause, said


def clauses(v: Verdict, lang: str) -> list[Clause]:
    """What the drafter did, else that it was not exercised."""
    if v.verdict is not None:
        return _drafting_clauses(v.factor, v, lang)
    if of(DraftingNumbers, v.numbers).not_exercised:
        text = tr(lang, "{drafter} was not exercised (no drafts)", drafter=drafter(v.factor, lang))
        return [partial(said, text, lang)]
    return []


def _drafting_clauses(key: str, v: Verdict, lang: str) -> list[Clause]:
    """What a drafter did; where its effect differs between series, what it did on each (an
    effect that held on one series only is never generalised)."""
    n = of(DraftingNumbers, v.numbers)
    who = drafter(key, lang)
    # Measured on another series than the one the other verdicts single out: say where.
    if n.scope_differs or "other_series" in v.reasons:
        return [
            partial(
                _series_clause,
                who,
                point_text(ser["series"], lang),
                mtp_runs_text(ser["runs"], n.largest, lang) + cost(v, lang, ser["series"]),
                lang,
            )
            for ser in n.by_series or []
        ]
    runs = mtp_runs_text(v.verdict, n.largest, lang) + cost(v, lang, n.primary)
    return [partial(_drafting_clause, who, runs, lang)]


def cost(v: Verdict, lang: str, series: Point | None = None) -> str:
    """Where drafts were almost never accepted, that the effect is drafting's cost, with the
    largest share accepted (in `series`, where it names one and has any; else anywhere);
    '' where drafts were accepted."""
    n = of(DraftingNumbers, v.numbers)
    if "drafts_rejected" not in v.reasons or not n.acceptance_range:
        return ""
    share = n.acceptance_range[1]
    if series:
        shares = [
            e["acceptance"]
            for e in n.contexts
            if e["acceptance"] is not None
            and all(norm(e["context"].get(k)) == norm(x) for k, x in series.items())
        ]
        share = max(shares, default=share)
    return tr(
        lang, " with {share} of drafts accepted (its cost, not its benefit)", share=fmt.pct(share)
    )


def _drafting_clause(who: str, runs: str, lang: str, rest: str | None) -> str:
    if rest is None:
        return tr(lang, "{drafter} {runs}", drafter=who, runs=runs)
    return tr(lang, "{drafter} {runs}{rest}", drafter=who, runs=runs, rest=rest)


def _series_clause(who: str, where: str, runs: str, lang: str, rest: str | None) -> str:
    if rest is None:
        return tr(lang, "on {point} {drafter} {runs}", point=where, drafter=who, runs=runs)
    return tr(
        lang, "on {point} {drafter} {runs}{rest}", point=where, drafter=who, runs=runs, rest=rest
    )

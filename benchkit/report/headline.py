"""The headline: the verdicts in one sentence of clauses, the recommendation first, through
the catalogs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from benchkit.report import factor_words as fw
from benchkit.report import fmt
from benchkit.report.i18n import (
    backend_name,
    drafter,
    mtp_runs_text,
    point_text,
    slots_phrase,
)
from benchkit.report.lang import tr, trn
from benchkit.report.numbers import (
    BuildNumbers,
    DraftingNumbers,
    FactorNumbers,
    ProjectionNumbers,
    SlotsNumbers,
    of,
)
from benchkit.report.sweep import COMPLETE
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.factor import is_setting
from benchkit.report.verdicts.kinds.capacity.words import capacity_clause
from benchkit.report.words import BACKENDS as BACKENDS


class _Opening:
    """A message field that opens a sentence. English writes `{headline:capital}`: its first
    letter a capital; a translation that leaves the spec out keeps the text as it is (Korean
    has no capitals, and a name such as vLLM stays as written there)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __format__(self, spec: str) -> str:
        return self.text[:1].upper() + self.text[1:] if spec == "capital" else self.text


# A clause of the headline. Given None it is one the sentence goes on from; given what
# follows the verdicts (the projection, or ""), it is the one that ends them: a language may
# word the last clause otherwise (Korean ends the sentence there; English only stops adding
# commas), so each clause has a message of each kind, the last with a {rest} field.
Clause = Callable[[str | None], str]


def headline(verdicts: Mapping[str, Verdict], lang: str, unit_name: str) -> str:
    """The one-line answer, from the verdicts: 'Vulkan won, 4 slots was the knee, MTP helped
    only at 1 slot; about 4.8 h per 100 units'. Provisional parts say so."""
    clauses: list[Clause] = []
    b, s, p = (verdicts.get(k) for k in ("backend", "slots", "projection"))
    if (cv := verdicts.get("capacity")) is not None and cv.verdict is not None:
        clauses.append(partial(_said, capacity_clause(cv, lang), lang))
    if b is not None and b.verdict is not None:
        clauses.append(partial(_backend_clause, b, lang))
    if s is not None and s.verdict is not None:
        clauses.append(partial(_slots_clause, s, lang))
    elif s is not None and (idle := of(SlotsNumbers, s.numbers).not_exercised):
        clauses.append(partial(_said, fw.slots_not_exercised(idle, lang), lang))
    for key in ["mtp", *sorted(k for k in verdicts if k.startswith("spec="))]:
        sv = verdicts.get(key)
        if sv is not None and sv.verdict is not None:
            clauses += _drafting_clauses(key, sv, lang)
        elif sv is not None and of(DraftingNumbers, sv.numbers).not_exercised:
            said = tr(lang, "{drafter} was not exercised (no drafts)", drafter=drafter(key, lang))
            clauses.append(partial(_said, said, lang))
    factors = [v for v in verdicts.values() if isinstance(v.numbers, FactorNumbers)]
    for fv in factors:
        clauses.append(partial(_said, fw.factor_clause(fv, lang), lang))
    for v in verdicts.values():  # a kind that words its own clause
        clause = registry.kind_of(v.factor).clause
        own = clause(v, lang) if clause is not None else None
        if own:
            clauses.append(partial(_said, own, lang))
    bv = verdicts.get("build")
    if bv is not None and bv.verdict in ("faster", "slower", "no difference"):
        clauses.append(partial(_build_clause, bv, lang))
    projection = ""
    if p is not None and p.verdict is not None:
        pn = of(ProjectionNumbers, p.numbers)
        projection = tr(
            lang,
            "about {hours} per {units} {unit}s (throughput basis)",
            hours=fmt.hours(pn.seconds, lang),
            units=fmt.integer(pn.units),
            unit=unit_name,
        )
        if factors or pn.application:
            projection = _combination(p, pn, lang, unit_name)
    if clauses:
        # TRANSLATORS: what follows the headline's verdicts: the time for the study's units.
        rest = tr(lang, "; {projection}", projection=projection) if projection else ""
        said = ", ".join([c(None) for c in clauses[:-1]] + [clauses[-1](rest)])
    elif projection:
        said = projection
    else:
        return tr(lang, "No verdict: no planned point has a complete result yet") + "."
    provisional = [v for v in verdicts.values() if is_setting(v) and v.status != COMPLETE]
    if provisional:
        # TRANSLATORS: ':capital' writes the first letter as a capital; leave it out where the
        # language does not (it would change a name such as vLLM).
        return tr(lang, "Provisional: {headline:capital}.", headline=_Opening(said))
    # TRANSLATORS: ':capital' as in "Provisional: {headline:capital}.".
    return tr(lang, "{headline:capital}.", headline=_Opening(said))


def _said(text: str, lang: str, rest: str | None) -> str:
    """A clause worded elsewhere (factor_words): the last one carries what follows it."""
    if rest is None:
        return text
    # TRANSLATORS: a clause of the headline worded elsewhere, then what follows the verdicts.
    return tr(lang, "{clause}{rest}", clause=text, rest=rest)


def _combination(p: Verdict, pn: ProjectionNumbers, lang: str, unit_name: str) -> str:
    """The projection with the recommended combination of every swept setting; with
    application choices, the time at each value measured, none of them recommended."""
    apps = sorted({a["factor"] for a in pn.application or []})
    if apps:
        measured = [a for a in pn.application or [] if a["seconds"] is not None]
        named = ["{}={}".format(a["factor"], a["value"]) for a in measured]
        values = " / ".join(
            tr(lang, "{hours} with {value}", hours=fmt.hours(a["seconds"], lang), value=v)
            for a, v in zip(measured, named, strict=True)
        )
        return tr(
            lang,
            "about {values} per {units} {unit}s at {point}, by the {factors} you choose "
            "(throughput basis)",
            values=values,
            units=fmt.integer(pn.units),
            unit=unit_name,
            point=point_text(p.point, lang),
            factors=fw.names(apps, lang),
        )
    return tr(
        lang,
        "about {hours} per {units} {unit}s at {point} (throughput basis)",
        hours=fmt.hours(pn.seconds, lang),
        units=fmt.integer(pn.units),
        unit=unit_name,
        point=point_text(p.point, lang),
    )


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
    if rest is None:
        return tr(lang, "{name} won", name=name)
    return tr(lang, "{name} won{rest}", name=name, rest=rest)


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
                mtp_runs_text(ser["runs"], n.largest, lang),
                lang,
            )
            for ser in n.by_series or []
        ]
    return [partial(_drafting_clause, who, mtp_runs_text(v.verdict, n.largest, lang), lang)]


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

"""The drafting verdicts' words: their short value (the runs of slot counts where drafting
helped, hurt or made no difference) and their headline clauses."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from benchkit.report.analysis.numbers import (
    ComparisonJson,
    DraftContext,
    DraftingNumbers,
    Point,
    Run,
    of,
)
from benchkit.report.analysis.sweep import COMPLETE, norm
from benchkit.report.lang import fmt, tr, trc
from benchkit.report.lang.i18n import drafter, list_text, point_text, slots_phrase
from benchkit.report.verdicts import voice
from benchkit.report.verdicts.cold_words import cold_decides_all, cold_only, cold_open
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Clause, said


def clauses(v: Verdict, lang: str) -> list[Clause]:
    """What the drafter did, else that it was not exercised."""
    if undecided(v):
        # No pair of the verdict's series is decided (each left open, or across two machine
        # states): no effect is named from them; where another setting's pair is decided on
        # one machine state, what it measured there (rules v12, from a review that found
        # "hurt" drawn from one open pair while two decided ones went unsaid).
        text = tr(
            lang, "{drafter} {runs}", drafter=drafter(v.factor, lang), runs=open_value(v, lang)
        )
        return [partial(said, text, lang)]
    if v.verdict is not None:
        return _drafting_clauses(v.factor, v, lang)
    if of(DraftingNumbers, v.numbers).not_exercised:
        text = tr(lang, "{drafter} was not exercised (no drafts)", drafter=drafter(v.factor, lang))
        return [partial(said, text, lang)]
    return []


# The effects a decided comparison names; `open` (not decided) and `no drafts` name none.
DECIDED = ("helps", "hurts", "no difference")


def undecided(v: Verdict) -> bool:
    """Whether a drafting verdict's every run is open: no pair of its series decided."""
    runs = v.verdict
    return isinstance(runs, list) and bool(runs) and all(r["effect"] == "open" for r in runs)


def open_value(v: Verdict, lang: str) -> str:
    """What an undecided drafting verdict says in its headline clause, its table cell and its
    section alike: the pairs decided on one machine state (or bridged) at other settings,
    with their figures and where; else that every pair crossed machine states; else that
    none was decided. Never an effect read from an open figure."""
    n = of(DraftingNumbers, v.numbers)
    elsewhere = [e for e in n.contexts if e["effect"] in DECIDED and e["comparison"]["ratio"]]
    if elsewhere:
        items = [_decided_at(e, n, lang) for e in elsewhere]
        return tr(
            lang,
            "took {items}, and was not decided at the other settings",
            items=list_text(items, lang),
        )
    if across_only(n.comparisons):
        return tr(lang, "was not compared on one machine state (each pair ran on two)")
    return tr(lang, "was not decided at the margin")


def _decided_at(e: DraftContext, n: DraftingNumbers, lang: str) -> str:
    """'2.62x the time of no drafting at the prose-10 workload, q8_0 K cache (one machine
    state)': a decided pair's figure, where it was measured and on what."""
    c = e["comparison"]
    state = (
        tr(lang, "bridged across machine states")
        if c["machine"] == "bridged"
        else tr(lang, "one machine state")
    )
    if e["effect"] == "no difference":
        state = tr(lang, "{state}, within the margin", state=state)
    return tr(
        lang,
        "{ratio} the time of {off} at {point} ({state})",
        ratio=fmt.ratio(c["ratio"], lang),
        off=point_text({n.factor: n.off_value}, lang),
        point=point_text(e["context"], lang),
        state=state,
    )


def across_only(comparisons: Sequence[ComparisonJson] | None) -> bool:
    """Whether every comparison a verdict rests on crosses two machine states."""
    return bool(comparisons) and all(c["machine"] == "across" for c in comparisons or [])


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
                cold_open(v, lang, ser["series"])
                if cold_decides_all(v, ser["series"])
                else mtp_runs_text(ser["runs"], n.largest, lang)
                + cost(v, lang, ser["series"])
                + cold_only(v, lang, ser["series"]),
                lang,
                v.status != COMPLETE
                and not measured_cost(v)
                and not cold_decides_all(v, ser["series"])
                and any(r["effect"] != "open" for r in ser["runs"]),
            )
            for ser in n.by_series or []
        ]
    if cold_decides_all(v):
        # The measured run leaves every effect open: said so, never hedged as found.
        return [partial(_drafting_clause, who, cold_open(v, lang), lang, False)]
    runs = (
        mtp_runs_text(v.verdict, n.largest, lang)
        + drafted_where(v, lang)
        + cost(v, lang, n.primary)
        + cold_only(v, lang)
    )
    hedged = v.status != COMPLETE and not measured_cost(v)
    return [partial(_drafting_clause, who, runs, lang, hedged)]


def drafted_where(v: Verdict, lang: str) -> str:
    """Where a verdict left out settings at which the drafter drafted nothing, the settings
    its effect holds at (review 13: the CPU post's "n-gram drafting took 1.27x", at 2 of its 6
    settings, the other 4 drafted nothing); '' otherwise."""
    n = of(DraftingNumbers, v.numbers)
    if "no_drafts_at" not in v.reasons:
        return ""
    where = [point_text(e["context"], lang) for e in n.contexts if e["drafted"] != 0]
    if not where:
        return ""
    return tr(lang, " where it drafted ({where})", where=list_text(where, lang))


def cost(v: Verdict, lang: str, series: Point | None = None) -> str:
    """Where drafts were almost never accepted, that the effect is drafting's cost, with the
    largest share accepted (in `series`, where it names one and has any; else anywhere);
    '' where drafts were accepted."""
    n = of(DraftingNumbers, v.numbers)
    if "drafts_rejected" not in v.reasons or not n.acceptance_range:
        return ""
    if voice.in_post() and v.status != COMPLETE:
        # A post says it once, in the list under its answer (writeup.post.unsettled), which
        # gives every provisional verdict's reasons: review 11 found it three times in one
        # post, twice in the answer before the list said it again.
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
    # The cost is measured; what is not known is the gain of drafts a trained model would have
    # accepted: the hedge is on that (a review found "appears to have hurt" on the cost).
    return tr(
        lang,
        " (with {share} of drafts accepted, a measured cost; what accepted drafts would gain "
        "was not tested)",
        share=fmt.pct(share),
    )


def measured_cost(v: Verdict) -> bool:
    """Whether the verdict is drafting's cost as measured (drafts almost never accepted) that
    no cold start's leaving out decides: a measurement, said without a hedge."""
    return "drafts_rejected" in v.reasons and "decided_without_cold" not in v.reasons


def _drafting_clause(who: str, runs: str, lang: str, provisional: bool, rest: str | None) -> str:
    """'MTP hurt at every slot count'; a provisional verdict's reads as provisional ('MTP
    appears to have hurt ...'): the headline states no effect as found that one comparison
    or a cold start's leaving out decides."""
    if provisional:
        if rest is None:
            return tr(lang, "{drafter} appears to have {runs}", drafter=who, runs=runs)
        return tr(lang, "{drafter} appears to have {runs}{rest}", drafter=who, runs=runs, rest=rest)
    if rest is None:
        return tr(lang, "{drafter} {runs}", drafter=who, runs=runs)
    return tr(lang, "{drafter} {runs}{rest}", drafter=who, runs=runs, rest=rest)


def _series_clause(
    who: str, where: str, runs: str, lang: str, provisional: bool, rest: str | None
) -> str:
    if provisional:
        fields = {"point": where, "drafter": who, "runs": runs}
        if rest is None:
            return tr(lang, "on {point} {drafter} appears to have {runs}", **fields)
        return tr(lang, "on {point} {drafter} appears to have {runs}{rest}", rest=rest, **fields)
    if rest is None:
        return tr(lang, "on {point} {drafter} {runs}", point=where, drafter=who, runs=runs)
    return tr(
        lang, "on {point} {drafter} {runs}{rest}", point=where, drafter=who, runs=runs, rest=rest
    )


def slot_range(lo: int | None, hi: int | None, largest: int | None, lang: str) -> str:
    """Slot counts of one MTP run: '1 slot', '2+ slots', '2-3 slots' (largest tested closes)."""
    if lo is None:
        return trc(lang, "slot counts", "all")
    if hi is None and largest is not None and largest == lo:
        hi = lo
    if hi is None:
        return tr(lang, "{lo}+ slots", lo=lo)
    if hi == lo:
        return slots_phrase(lo, lang)
    return tr(lang, "{lo}–{hi} slots", lo=lo, hi=hi)


def mtp_runs_text(runs: Sequence[Run], largest: int | None, lang: str) -> str:
    """'helped only at 1 slot and hurt at 2+ slots' from the effect runs (a drafting verdict's
    value); `largest` is the largest slot count tested."""
    effects = {r["effect"] for r in runs}
    if "open" in effects:
        return _open_runs_text(runs, largest, lang)
    if len(runs) == 1 and runs[0]["from"] is None:
        return {
            "helps": trc(lang, "drafting", "helped"),
            "hurts": trc(lang, "drafting", "hurt"),
            "no difference": trc(lang, "drafting", "made no difference"),
        }[runs[0]["effect"]]
    if len(runs) == 1 and runs[0]["from"] is not None and runs[0]["from"] == largest:
        # One slot count compared: that count, never "every slot count".
        where = slot_range(runs[0]["from"], runs[0]["to"], largest, lang)
        return _run_text(runs[0]["effect"], False, where, lang, last=True)
    if len(effects) == 1:
        return {
            "helps": tr(lang, "helped at every slot count"),
            "hurts": tr(lang, "hurt at every slot count"),
            "no difference": tr(lang, "made no difference at any slot count"),
        }[runs[0]["effect"]]
    helps_once = sum(1 for r in runs if r["effect"] == "helps") == 1
    parts = [
        _run_text(r["effect"], helps_once, slot_range(r["from"], r["to"], largest, lang), lang)
        for r in runs[:-1]
    ]
    last = runs[-1]
    where = slot_range(last["from"], last["to"], largest, lang)
    parts.append(_run_text(last["effect"], helps_once, where, lang, last=True))
    return list_text(parts, lang)


def _open_runs_text(runs: Sequence[Run], largest: int | None, lang: str) -> str:
    """Runs some of which are open: the decided ones, each where it holds, then where none
    was decided ('hurt at 1 slot and hurt at 8+ slots, not decided at 2–4 slots'); never
    "at every slot count" over counts some of which were not decided."""
    decided = [r for r in runs if r["effect"] != "open"]
    if not decided:
        return trc(lang, "drafting", "was not decided")
    where = list_text(
        [slot_range(r["from"], r["to"], largest, lang) for r in runs if r["effect"] == "open"],
        lang,
    )
    helps_once = sum(1 for r in decided if r["effect"] == "helps") == 1
    # One clause an effect, its counts listed ('hurt at 1 slot and 8+ slots', not 'hurt at 1
    # slot and hurt at 8+ slots': an editor's find).
    effects = list(dict.fromkeys(r["effect"] for r in decided))
    parts = [
        _run_text(
            e,
            helps_once,
            list_text(
                [
                    slot_range(r["from"], r["to"], largest, lang)
                    for r in decided
                    if r["effect"] == e
                ],
                lang,
            ),
            lang,
            last=i == len(effects) - 1,
        )
        for i, e in enumerate(effects)
    ]
    return tr(lang, "{runs}, not decided at {where}", runs=list_text(parts, lang), where=where)


def _run_text(effect: str, helps_once: bool, where: str, lang: str, last: bool = False) -> str:
    """One run of a drafting verdict: 'helped only at 1 slot'. The last of the list has a
    message of its own, for a language that ends the sentence there in another form."""
    if effect == "helps" and helps_once:
        if last:
            return trc(lang, "last drafting run", "helped only at {where}", where=where)
        return trc(lang, "drafting run", "helped only at {where}", where=where)
    if effect == "helps":
        if last:
            return trc(lang, "last drafting run", "helped at {where}", where=where)
        return trc(lang, "drafting run", "helped at {where}", where=where)
    if effect == "hurts":
        if last:
            return trc(lang, "last drafting run", "hurt at {where}", where=where)
        return trc(lang, "drafting run", "hurt at {where}", where=where)
    if last:
        return trc(lang, "last drafting run", "made no difference at {where}", where=where)
    return trc(lang, "drafting run", "made no difference at {where}", where=where)

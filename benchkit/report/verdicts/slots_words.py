"""The slots verdict's words for where its knee holds: the series it was drawn on, the other
series whose knee differs, and the counts whose units did not fill whole rounds of slots."""

from __future__ import annotations

import math

from benchkit.report.analysis.numbers import (
    Beyond,
    ComparisonJson,
    ElsewhereKnee,
    PartialRound,
    SlotsNumbers,
)
from benchkit.report.lang import fmt, i18n, tr
from benchkit.report.lang.i18n import point_text, slots_phrase
from benchkit.report.verdicts.compare_words import how_text


def with_series(objective: str, n: SlotsNumbers, lang: str) -> str:
    """'seconds per unit at ubatch=512' where the knee was drawn on one series of several;
    the objective alone otherwise (one message, so a language puts the series where it
    reads: Korean before the objective, not in a second bracket after it)."""
    if not n.series:
        return objective
    return tr(
        lang, "{objective} at {series}", objective=objective, series=point_text(n.series, lang)
    )


def elsewhere_text(n: SlotsNumbers, k: int, lang: str) -> str:
    """' At ubatch=128 the knee was 1 slot: 2 slots took 1.29x its time there.' for each other
    series whose knee differs, on that series' own comparison."""
    return "".join(" " + _one(e, k, lang) for e in n.elsewhere or [])


def _one(e: ElsewhereKnee, k: int, lang: str) -> str:
    c = e["comparison"]
    where = point_text(e["series"], lang)
    knee = slots_phrase(e["knee"], lang)
    if c is None or c["ratio"] is None:
        return tr(lang, "At {series} the knee was {knee}.", series=where, knee=knee)
    if c["outcome"] == "open":
        # The verdict's count not decided apart from that series' knee: its knee is the
        # figures' (review 10: "8 slots took 1.07x its time there", 1.03x-1.10x, read as found).
        return tr(
            lang,
            "At {series} the knee was {knee} by the figures: {slots} took {ratio} its time there "
            "({how}), not decided apart from it.",
            series=where,
            knee=knee,
            slots=slots_phrase(k, lang),
            ratio=fmt.ratio(c["ratio"], lang),
            how=how_text(c, lang),
        )
    return tr(
        lang,
        "At {series} the knee was {knee}: {slots} took {ratio} its time there.",
        series=where,
        knee=knee,
        slots=slots_phrase(k, lang),
        ratio=fmt.ratio(c["ratio"], lang),
    )


def _round(r: PartialRound, lang: str) -> str:
    """'4 slots: 6 units, a last round of 2, 21% of slot-time idle as measured'."""
    last = r["units"] - (math.ceil(r["units"] / r["slots"]) - 1) * r["slots"]
    if "measured_idle" in r:
        return tr(
            lang,
            "{slots}: {units} units, a last round of {last}, {idle} of its slot-time idle as "
            "measured",
            slots=slots_phrase(r["slots"], lang),
            units=fmt.integer(r["units"]),
            last=fmt.integer(last),
            idle=fmt.pct(r["measured_idle"]),
        )
    return tr(
        lang,
        "{slots}: {units} units, a last round of {last}",
        slots=slots_phrase(r["slots"], lang),
        units=fmt.integer(r["units"]),
        last=fmt.integer(last),
    )


def partial_rounds_text(rounds: list[PartialRound], lang: str) -> str:
    """The reason a knee resting on counts whose units did not fill whole rounds is
    provisional, each count with its units and idle share."""
    items = "; ".join(_round(r, lang) for r in rounds)
    if all("measured_idle" in r for r in rounds):
        # The idle share measured from the calls: what the partial round cost the count.
        return tr(
            lang,
            "the units did not fill whole rounds of slots ({items}), so those counts ran with "
            "slots idle that a workload of whole rounds would fill (a multiple of the slot "
            "count fills whole rounds)",
            items=items,
        )
    # The count of units says the run could not keep every slot busy to its end; how much
    # slot-time was idle is measured in "Where the time went" (slots idle), not assumed here.
    return tr(
        lang,
        "the units did not fill whole rounds of slots ({items}), so the run could not keep "
        "every slot busy to its end (the slots-idle share under Where the time went says how "
        "much was idle; a multiple of the slot count fills whole rounds)",
        items=items,
    )


def across_text(pairs: list[ComparisonJson], lang: str) -> str:
    """The reason a knee is provisional where only comparisons across machines put the counts
    before it beyond the margin: each count with its ratio to the best."""
    items = i18n.list_text(
        [
            tr(
                lang,
                "{slots} ({ratio})",
                slots=slots_phrase(int(float(str(c["other"]["slots"]))), lang),
                ratio=fmt.ratio(c["ratio"], lang),
            )
            for c in pairs
            if c["ratio"] is not None and "slots" in c["other"]
        ],
        lang,
    )
    best = pairs[0]["base"].get("slots")
    return tr(
        lang,
        "{items} took longer than {best} only as compared across machines, and two machines "
        "with one model of card can differ on one point by more than the margin (card or host: "
        "not isolated): the knee may lie at any of them",
        items=items,
        best=slots_phrase(int(float(str(best))), lang) if best is not None else "?",
    )


def beyond_text(b: Beyond, lang: str) -> str:
    """What a count above the knee gains and costs: '16 slots took 0.96x the knee's time,
    with 1.69x the slot latency and 2.13x the context'; the latency not compared where the
    two rows ran on different machines. The time as a multiple, as every difference is."""
    slots, ratio = slots_phrase(b["slots"], lang), fmt.ratio(1 + b["change_vs_knee"], lang)
    context = fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else fmt.DASH
    if b["latency_ratio"]:
        return tr(
            lang,
            "{slots} took {ratio} the knee's time, with {latency} the slot latency and "
            "{context} the context",
            slots=slots,
            ratio=ratio,
            latency=fmt.ratio(b["latency_ratio"], lang),
            context=context,
        )
    return tr(
        lang,
        "{slots} took {ratio} the knee's time, with {context} the context (slot latency not "
        "compared: another machine or machine state)",
        slots=slots,
        ratio=ratio,
        context=context,
    )

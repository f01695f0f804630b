"""The slots section: the objective per slot count, the knee marked."""

from __future__ import annotations

from benchkit.report.analysis.numbers import SlotsNumbers, of
from benchkit.report.analysis.sweep import SLOT_LATENCY, THROUGHPUT
from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.cold_words import with_cold
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section

PER_UNIT = (THROUGHPUT, SLOT_LATENCY)  # objectives already in seconds per unit


def section(s: Verdict, page: Page) -> Section:
    lang = page.lang
    sn = of(SlotsNumbers, s.numbers)
    knee_slots = s.verdict if sn.knee_reached else None
    metric = page.sweep.metric
    obj_words = i18n.objective_words(metric, lang)
    return {
        "kind": "slots",
        "title": tr(lang, "Parallel slots"),
        "text": with_cold(sentences.slots_sentence(s, lang), s, lang),
        # The slot counts of one series (a backend, an MTP setting); none when only slots vary.
        "series": i18n.point_text(sn.series, lang) if sn.series else "",
        "objective_col": "" if metric in PER_UNIT else obj_words,
        # Each count's time as a multiple of the count before it, as every difference is said.
        "change_col": tr(lang, "{objective}: × the previous count's", objective=obj_words),
        "show_uncapped": any(r["capped"] for r in sn.rows or []),
        "show_machine": any(r.get("machine") for r in sn.rows or []),
        "table": [
            dict(
                r,
                knee=(r["slots"] == knee_slots),
                vs_previous=None
                if r.get("change_vs_previous") is None
                else 1 + float(r["change_vs_previous"] or 0.0),
                objective_text=i18n.objective_value(metric, r["objective"], lang),
                objective_uncapped_text=i18n.objective_value(metric, r["objective_uncapped"], lang),
            )
            for r in sn.rows or []
        ],
        "figure": page.figs.get("slots"),
        "figure_title": tr(
            lang, "Seconds per unit on both bases, and aggregate output throughput, against slots"
        ),
    }

"""The repeats section: the noise of each repeated setting."""

from __future__ import annotations

from benchkit.report.analysis.numbers import RepeatsNumbers, of
from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section


def section(rep: Verdict, page: Page) -> Section:
    lang = page.lang
    return {
        "kind": "repeats",
        "title": tr(lang, "Repeats and noise"),
        "text": sentences.repeats_sentence(rep, lang, page.knee_gain),
        "intro": tr(
            lang,
            "Points that ran more than once: mean, coefficient of variation and 95% confidence "
            "interval of seconds per unit (throughput basis). A difference inside the noise is "
            "reported as no difference.",
        )
        if rep.verdict
        else "",
        "table": [
            dict(c, setting=i18n.point_text(c["config"], lang))
            for c in of(RepeatsNumbers, rep.numbers).configs
        ],
        "figure": None,
        "figure_title": "",
    }

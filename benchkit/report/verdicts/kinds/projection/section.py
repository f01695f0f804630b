"""The projection section: one sentence, no table."""

from __future__ import annotations

from benchkit.report.lang import tr
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.cold_words import with_cold
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section


def section(proj: Verdict, page: Page) -> Section:
    lang = page.lang
    return {
        "kind": "projection",
        "title": tr(lang, "Projection"),
        "text": with_cold(sentences.projection_sentence(proj, lang, page.unit), proj, lang),
        "table": [],
        "figure": None,
        "figure_title": "",
    }

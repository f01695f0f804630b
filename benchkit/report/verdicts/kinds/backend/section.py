"""The backend section: per setting, each backend's objective and ratio, and the winner."""

from __future__ import annotations

from benchkit.report import i18n, sentences
from benchkit.report.cold_words import with_cold
from benchkit.report.lang import tr
from benchkit.report.numbers import BackendNumbers, of
from benchkit.report.sweep import norm
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section


def section(b: Verdict, page: Page) -> Section:
    lang = page.lang
    backends = sorted(
        {str(c.values["backend"]) for c in page.sweep.cells},
        key=lambda x: (norm(x) != norm(b.verdict), x),
    )
    table = []
    for e in of(BackendNumbers, b.numbers).contexts:
        table.append(
            {
                "setting": i18n.point_text(e["context"], lang) or "–",
                "cells": [
                    {
                        "value": e["values"].get(x),
                        "ratio": e["ratios"].get(x) if (e["ratios"].get(x) or 1) > 1.0005 else None,
                    }
                    for x in backends
                ],
                "winner": i18n.backend_name(e.get("winner"))
                if e.get("winner")
                else i18n.effect_word("no difference", lang),
            }
        )
    return {
        "kind": "backend",
        "title": tr(lang, "Backend"),
        "text": with_cold(sentences.backend_sentence(b, lang), b, lang),
        "columns": [i18n.backend_name(x) for x in backends],
        "table": table,
        "figure": page.figs.get("backend"),
        "figure_title": tr(lang, "Seconds per unit (throughput basis) against slots, per backend"),
    }

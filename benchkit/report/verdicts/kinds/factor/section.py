"""A factor without a section of its own (batch, KV cache types, sampling, ...): every value
at every setting of the others, with its speed, context, energy, drift and task beside."""

from __future__ import annotations

from benchkit.report.analysis.numbers import FactorNumbers
from benchkit.report.lang import grammar, i18n
from benchkit.report.verdicts import factor_words
from benchkit.report.verdicts.cold_words import with_cold
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section


def section(v: Verdict, page: Page) -> Section | None:
    if not isinstance(v.numbers, FactorNumbers):
        return None
    lang, metric = page.lang, page.sweep.metric
    return {
        "kind": "factor",
        # A heading: capitalised as the language writes one ('Sampling').
        "title": grammar(lang).inflect(i18n.factor_name(v.factor, lang), "capital"),
        "text": with_cold(factor_words.factor_sentence(v, lang), v, lang),
        "objective_col": i18n.objective_words(metric, lang),
        "table": factor_words.table(v, metric, lang),
        "figure": None,
        "figure_title": "",
    }

"""The report's factor sections, one view each: backend, parallel slots, drafting (MTP, a draft
model, n-gram), builds compared, repeats and noise, projection. Each holds the sentence, the
table rows and the figure the template prints for that factor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchkit.report import analyse as an
from benchkit.report import cold_words, factor_words, i18n, sentences
from benchkit.report import evidence as ev
from benchkit.report.folder import Analysed
from benchkit.report.lang import tr
from benchkit.report.numbers import (
    BackendNumbers,
    BuildNumbers,
    DraftingNumbers,
    FactorNumbers,
    ProjectionNumbers,
    RepeatsNumbers,
    SlotsNumbers,
    of,
)
from benchkit.report.verdicts.kinds.capacity.words import capacity_section


def _backend_section(
    a: Analysed, b: an.Verdict, lang: str, figs: Mapping[str, str]
) -> dict[str, object]:
    """The backend section: per setting, each backend's objective and ratio, and the winner."""
    backends = sorted(
        {str(c.values["backend"]) for c in a.sweep.cells},
        key=lambda x: (an.norm(x) != an.norm(b.verdict), x),
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
        "text": _with_cold(sentences.backend_sentence(b, lang), b, lang),
        "columns": [i18n.backend_name(x) for x in backends],
        "table": table,
        "figure": figs.get("backend"),
        "figure_title": tr(lang, "Seconds per unit (throughput basis) against slots, per backend"),
    }


def _with_cold(text: str, v: an.Verdict, lang: str) -> str:
    """A verdict's sentence, then what its figures leave out (cold starts) and why."""
    n = v.numbers
    compared = BackendNumbers | SlotsNumbers | DraftingNumbers | FactorNumbers | ProjectionNumbers
    notes = n.cold if isinstance(n, compared) else None
    cold = cold_words.cold_text(notes, i18n._objective_of(v), lang)
    return f"{text} {cold}" if cold else text


def _slots_section(
    a: Analysed, s: an.Verdict, lang: str, figs: Mapping[str, str]
) -> dict[str, object]:
    """The slots section: the objective per slot count, the knee marked."""
    sn = of(SlotsNumbers, s.numbers)
    knee_slots = s.verdict if sn.knee_reached else None
    metric = a.sweep.metric
    obj_words = i18n.objective_words(metric, lang)
    return {
        "kind": "slots",
        "title": tr(lang, "Parallel slots"),
        "text": _with_cold(sentences.slots_sentence(s, lang), s, lang),
        # The slot counts of one series (a backend, an MTP setting); none when only slots vary.
        "series": i18n.point_text(sn.series, lang) if sn.series else "",
        "objective_col": "" if metric in ev.PER_UNIT else obj_words,
        "change_col": tr(lang, "{objective}: change vs previous", objective=obj_words),
        "show_uncapped": any(r["capped"] for r in sn.rows or []),
        "table": [
            dict(
                r,
                knee=(r["slots"] == knee_slots),
                objective_text=i18n.objective_value(metric, r["objective"], lang),
                objective_uncapped_text=i18n.objective_value(metric, r["objective_uncapped"], lang),
            )
            for r in sn.rows or []
        ],
        "figure": figs.get("slots"),
        "figure_title": tr(
            lang, "Seconds per unit on both bases, and aggregate output throughput, against slots"
        ),
    }


def _drafting_section(m: an.Verdict, lang: str, figs: Mapping[str, str]) -> dict[str, object]:
    """One drafting section (MTP, a draft model, n-gram): the effect per setting."""
    dn = of(DraftingNumbers, m.numbers)
    on = an.norm(dn.on_value)
    mtp = m.factor == "mtp"
    return {
        "kind": "mtp",
        "title": tr(lang, "MTP (speculative decoding)")
        if mtp
        else tr(lang, "Speculative decoding ({value}) against none", value=on),
        "col_off": tr(lang, "MTP off s/unit") if mtp else "spec=none",
        "col_on": tr(lang, "MTP on s/unit") if mtp else f"spec={on}",
        "text": _with_cold(sentences.mtp_sentence(m, lang), m, lang),
        "table": [
            dict(
                e,
                setting=i18n.point_text(e["context"], lang),
                effect_text=i18n.effect_word(e["effect"], lang),
            )
            for e in dn.contexts
        ],
        "figure": figs.get(m.factor),
        "figure_title": tr(
            lang, "MTP on / off: seconds per unit (throughput basis), per slot count"
        )
        if mtp
        else tr(lang, "Drafter on / off: seconds per unit (throughput basis), per slot count"),
    }


def _build_section(
    build: an.Verdict,
    baseline: Analysed | None,
    lang: str,
    figs: Mapping[str, str],
) -> dict[str, object]:
    """The build comparison section: the effect per setting, and what differs between builds."""
    bn = of(BuildNumbers, build.numbers)
    return {
        "kind": "build",
        "title": tr(lang, "Builds compared"),
        "text": sentences.build_sentence(build, lang),
        "baseline": str(baseline.source) if baseline else "",
        "table": [
            dict(
                p,
                setting=i18n.point_text(p["config"], lang),
                effect_text=i18n.effect_word(p["effect"], lang),
            )
            for p in bn.pairs
        ],
        "differs": [{"key": k, "base": v[0], "new": v[1]} for k, v in bn.differs.items()],
        "figure": figs.get("build"),
        "figure_title": tr(
            lang, "Baseline and new build: seconds per unit (throughput basis), config by config"
        ),
    }


def _factor_section(a: Analysed, v: an.Verdict, lang: str) -> dict[str, object]:
    """A factor without a section of its own (batch, KV cache types, sampling, ...): every value
    at every setting of the others, with its speed, context, energy, drift and task beside."""
    metric = a.sweep.metric
    return {
        "kind": "factor",
        "title": i18n.factor_name(v.factor, lang),
        "text": _with_cold(factor_words.factor_sentence(v, lang), v, lang),
        "objective_col": i18n.objective_words(metric, lang),
        "table": factor_words.table(v, metric, lang),
        "figure": None,
        "figure_title": "",
    }


def _repeats_section(rep: an.Verdict, knee_gain: float, lang: str) -> dict[str, object]:
    """The repeats section: the noise of each repeated setting."""
    return {
        "kind": "repeats",
        "title": tr(lang, "Repeats and noise"),
        "text": sentences.repeats_sentence(rep, lang, knee_gain),
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


def _projection_section(proj: an.Verdict, lang: str, unit: str) -> dict[str, object]:
    """The projection section: one sentence, no table."""
    return {
        "kind": "projection",
        "title": tr(lang, "Projection"),
        "text": _with_cold(sentences.projection_sentence(proj, lang, unit), proj, lang),
        "table": [],
        "figure": None,
        "figure_title": "",
    }


def factor_sections(
    a: Analysed,
    by: Mapping[str, an.Verdict],
    *,
    build: an.Verdict | None,
    baseline: Analysed | None,
    figs: Mapping[str, str],
    lang: str,
    unit: str,
) -> list[dict[str, object]]:
    """The factor sections in report order: backend, slots, drafting, build, repeats, projection."""
    sections: list[dict[str, object]] = []
    if (c := by.get("capacity")) is not None:
        sections.append(capacity_section(c, lang, figs))
    if (b := by.get("backend")) is not None:
        sections.append(_backend_section(a, b, lang, figs))
    if (s := by.get("slots")) is not None:
        sections.append(_slots_section(a, s, lang, figs))
    for m in [v for f, v in by.items() if f == "mtp" or f.startswith("spec=")]:
        sections.append(_drafting_section(m, lang, figs))
    for v in by.values():
        if isinstance(v.numbers, FactorNumbers):
            sections.append(_factor_section(a, v, lang))
    if build is not None:
        sections.append(_build_section(build, baseline, lang, figs))
    sections.append(_repeats_section(by["repeats"], a.study.knee_gain, lang))
    if "projection" in by:  # none for open-loop load: per-unit time follows the schedule
        sections.append(_projection_section(by["projection"], lang, unit))
    return sections


@dataclass(frozen=True)
class LeadFigure:
    """The figure a published post opens with, under its headline: the first factor section's
    (backend, then slots, then drafting: the headline's order), so the figure that carries
    the main verdict is on the first screen rather than two screens down."""

    file: str
    title: str


def lead_figure(sections: Sequence[Mapping[str, object]]) -> LeadFigure | None:
    for s in sections:
        figure, title = s.get("figure"), s.get("figure_title")
        if isinstance(figure, str) and figure:
            return LeadFigure(figure, str(title or ""))
    return None

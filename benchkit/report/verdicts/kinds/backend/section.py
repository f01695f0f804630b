"""The backend section: per setting, each backend's objective and ratio, and the winner."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchkit.compare.engine import ACROSS, BRIDGED
from benchkit.report.analysis.numbers import BackendNumbers, ComparisonJson, Point, of
from benchkit.report.analysis.sweep import norm
from benchkit.report.lang import fmt, i18n, tr
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.cold_words import with_cold
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.compare_words import sides_cell
from benchkit.report.verdicts.engine_of import figures_apart
from benchkit.report.verdicts.kind import Page, Section


def section(b: Verdict, page: Page) -> Section:
    lang = page.lang
    backends = sorted(
        {str(c.values["backend"]) for c in page.sweep.cells},
        key=lambda x: (norm(x) != norm(b.verdict), x),
    )
    table = []
    bn = of(BackendNumbers, b.numbers)
    at = _by_setting(bn.comparisons or [])
    measured = _measured(bn, lang)
    for e in bn.contexts:
        here = at(e["context"])
        # The table's own ratio only where the verdict compared these very jobs on one machine:
        # elsewhere it divides two cards' or two runs' means, a second answer beside the
        # verdict's (a review read "6.6 s (1.08x)" beside "1.28x (anchor runs)" in one row).
        own = all(_own(c) for c in here)
        apart = figures_apart(page.sweep, [{**e["context"], "backend": x} for x in backends])
        setting = i18n.point_text(e["context"], lang) or "–"
        table.append(
            {
                "setting": f"{setting} †" if apart else setting,
                "apart": apart,
                "paired": _paired(here, lang),
                "cells": [
                    {
                        "value": e["values"].get(x),
                        "ratio": e["ratios"].get(x)
                        if own and (e["ratios"].get(x) or 1) > 1.0005
                        else None,
                        "measured": measured.get(_key({**e["context"], "backend": x})),
                    }
                    for x in backends
                ],
                "winner": _winner(e, lang),
            }
        )
    return {
        "kind": "backend",
        "title": tr(lang, "Backend"),
        "text": with_cold(sentences.backend_sentence(b, lang), b, lang),
        "columns": [i18n.backend_name(x) for x in backends],
        "table": table,
        "apart_note": any(r["apart"] for r in table),
        "figure": page.figs.get("backend"),
        "figure_title": tr(lang, "Seconds per unit (throughput basis) against slots, per backend"),
    }


def _key(point: Point) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, norm(v)) for k, v in point.items()))


def _measured(bn: BackendNumbers, lang: str) -> dict[tuple[tuple[str, str], ...], str]:
    """Each point whose figure leaves out a cold start: its figure as measured, said beside
    the table's (review 8 found the table's "9.7 s (1.27x)" with no word of the 12.2 s
    measured, which only the text below gave)."""
    return {
        _key(c["point"]): tr(
            lang, "{value} as measured", value=fmt.seconds(c["objective_measured"], lang)
        )
        for c in bn.cold or []
        if c["objective_measured"] is not None
    }


def _own(c: ComparisonJson) -> bool:
    """Whether a comparison is of the sweep's own jobs on one machine (not bridged, not across
    machines, not from an anchor folder's runs)."""
    if c.get("sides"):
        return False  # paired on fewer units than the table's figures hold
    return c["machine"] not in (BRIDGED, ACROSS) and not any("/" in j for j in c["jobs"])


def _winner(e: Mapping[str, Any], lang: str) -> str:
    """A row's winner: 'CUDA', 'CUDA (open)' where its comparison is not decided (an editor
    read 'CUDA' on rows the verdict leaves open), or no difference."""
    if not e.get("winner"):
        return i18n.effect_word("no difference", lang)
    name = i18n.backend_name(e["winner"])
    return tr(lang, "{backend} (open)", backend=name) if e.get("inside_noise") else name


def _by_setting(
    comparisons: Sequence[ComparisonJson],
) -> Callable[[Point], list[ComparisonJson]]:
    """The comparisons made at a setting (every factor but the backend as the setting has
    it), in their order: looked up by the setting's spelled values, not searched for in
    every comparison at every row (a 1,000-job sweep's table has 500 rows and as many
    comparisons)."""
    index: dict[tuple[str, ...], dict[tuple[str, ...], list[int]]] = {}
    for i, c in enumerate(comparisons):
        if c["ratio"] is None:
            continue
        rest = sorted((k, norm(v)) for k, v in c["other"].items() if k != "backend")
        keys = tuple(k for k, _ in rest)
        index.setdefault(keys, {}).setdefault(tuple(v for _, v in rest), []).append(i)

    def at(context: Point) -> list[ComparisonJson]:
        found: list[int] = []
        for keys, by in index.items():
            found += by.get(tuple(norm(context.get(k)) for k in keys), [])
        return [comparisons[i] for i in sorted(found)]

    return at


def _paired(comparisons: Sequence[ComparisonJson], lang: str) -> str:
    """The verdict's own comparisons at one setting (paired units, one machine or bridged,
    or named as two machines): the table's ratio divides two jobs' seconds, which may come
    from two cards or other units."""
    out = []
    for c in comparisons:
        where = {BRIDGED: tr(lang, "bridged"), ACROSS: tr(lang, "two machines")}.get(c["machine"])
        if c["machine"] == ACROSS and c.get("unrecorded"):
            where = tr(lang, "machine not recorded")
        elif c["machine"] == ACROSS and c.get("sweeps"):
            where = tr(lang, "two sweeps")
        if where is None and any("/" in j for j in c["jobs"]):
            where = tr(lang, "anchor runs")  # jobs of a study.anchors folder, not the table's
        text = f"{i18n.backend_name(c['other'].get('backend'))} {fmt.ratio(c['ratio'], lang)}"
        note = sides_cell(c, where or "", lang)
        out.append(f"{text} ({note})" if note else text)
    return "; ".join(out) or fmt.DASH

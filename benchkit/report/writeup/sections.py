"""The report's factor sections, one view each, in report order: each verdict kind builds its
own (`VerdictKind.section`: backend, parallel slots, drafting, builds compared, repeats and
noise, projection, capacity, any factor), holding the sentence, the table rows and the
figure the template prints for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kind import Page, Section


def factor_sections(
    a: Analysed,
    by: Mapping[str, an.Verdict],
    *,
    baseline: Analysed | None,
    figs: Mapping[str, str],
    lang: str,
    unit: str,
) -> list[Section]:
    """The factor sections in report order (the registry's): each kind's, one per verdict
    of it in `by` that has one."""
    page = Page(
        lang=lang,
        unit=unit,
        sweep=a.sweep,
        knee_gain=a.study.knee_gain,
        figs=figs,
        baseline=str(baseline.source) if baseline else "",
    )
    sections: list[Section] = []
    for kind, verdicts in registry.by_kind(by.values()):
        if kind.section is None:
            continue
        for v in verdicts:
            if (made := kind.section(v, page)) is not None:
                sections.append(made)
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

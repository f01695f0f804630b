"""The build comparison section: the effect per setting, and what differs between builds."""

from __future__ import annotations

from benchkit.report.analysis.numbers import BuildNumbers, of
from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Page, Section
from benchkit.report.verdicts.kinds.builds.words import build_sentence


def section(build: Verdict, page: Page) -> Section:
    lang = page.lang
    bn = of(BuildNumbers, build.numbers)
    return {
        "kind": "build",
        "title": tr(lang, "Builds compared"),
        "text": build_sentence(build, lang),
        "baseline": page.baseline,
        "table": [
            dict(
                p,
                setting=i18n.point_text(p["config"], lang),
                effect_text=i18n.effect_word(p["effect"], lang),
            )
            for p in bn.pairs
        ],
        "differs": [{"key": k, "base": v[0], "new": v[1]} for k, v in bn.differs.items()],
        "figure": page.figs.get("build"),
        "figure_title": tr(
            lang, "Baseline and new build: seconds per unit (throughput basis), config by config"
        ),
    }

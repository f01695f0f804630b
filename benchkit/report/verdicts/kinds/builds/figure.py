"""The build verdict's figure: baseline and new seconds per unit, config by config."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from benchkit.report.analysis.numbers import BuildNumbers, of
from benchkit.report.lang import i18n
from benchkit.report.verdicts import figures as fg
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Drawing


def figures(verdicts: Sequence[Verdict], d: Drawing) -> dict[str, str]:
    """{'build': file} where two builds were compared on some config."""
    made = build_figure(next(iter(verdicts), None), d.folder, d.lang)
    return {"build": made} if made else {}


def build_figure(v: Verdict | None, out_dir: Path, lang: str = "en") -> str | None:
    """Baseline and new seconds per unit (throughput basis), config by config."""
    pairs = of(BuildNumbers, v.numbers).pairs if v is not None else []
    if not pairs:
        return None
    words, rc = fg.labels(lang)
    text, _ = fg.drawable(lang)
    names = [i18n.point_text(p["config"], text) if p["config"] else "" for p in pairs]
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(pairs) + 3), 4), dpi=110)
        pos = range(len(pairs))
        ax.bar([p - 0.2 for p in pos], [p["base"] for p in pairs], 0.4, label=words["baseline"])
        ax.bar([p + 0.2 for p in pos], [p["new"] for p in pairs], 0.4, label=words["new"])
        ax.set_xticks(list(pos))
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel(words["s_unit_tp"])
        ax.set_title(words["build"])
        ax.grid(alpha=0.3, axis="y")
        fg._legend(ax)
        return fg._save(fig, out_dir, "build.png")

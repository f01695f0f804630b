"""The backend verdict's figure: seconds per unit against slots, one line per backend."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from benchkit.report.analysis.sweep import THROUGHPUT
from benchkit.report.verdicts import figures as fg
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Drawing


def figures(verdicts: Sequence[Verdict], d: Drawing) -> dict[str, str]:
    """{'backend': file}: drawn from the rows wherever two backends completed."""
    made = backend_figure(d.df, d.folder, d.lang)
    return {"backend": made} if made else {}


def backend_figure(df: pd.DataFrame, out_dir: Path, lang: str = "en") -> str | None:
    """Seconds per unit (throughput basis) against slots, one line per backend (and MTP)."""
    done = fg.done(df)
    if done.empty or "backend" not in done or done["backend"].nunique() < 2:
        return None
    if not fg.has_data(done, [THROUGHPUT]):
        return None
    words, rc = fg.labels(lang)
    text, _ = fg.drawable(lang)
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.5, 4.2), dpi=110)
        if "slots" in done:
            colours = fg.colours(done)
            for label, part in fg.series(done, ("backend", "mtp"), text):
                tp = fg.mean_by_slots(part, THROUGHPUT)
                ax.plot(tp.index, tp.values, label=label, **fg.style(part, colours))
            ax.set_xlabel(words["slots"])
            ax.set_xticks(sorted({int(float(s)) for s in done["slots"]}))
        else:
            means = pd.to_numeric(done[THROUGHPUT], errors="coerce").groupby(done["backend"]).mean()
            ax.bar([str(i) for i in means.index], means.values)
        ax.set_ylabel(words["s_unit_tp"])
        ax.set_title(words["backend"])
        ax.grid(alpha=0.3)
        fg._legend(ax)
        return fg._save(fig, out_dir, "backend.png")

"""The slots verdict's figure: against slots, one quantity per panel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from benchkit.report.analysis.numbers import SlotsNumbers, of
from benchkit.report.analysis.sweep import THROUGHPUT
from benchkit.report.lang import i18n
from benchkit.report.verdicts import figures as fg
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Drawing


def figures(verdicts: Sequence[Verdict], d: Drawing) -> dict[str, str]:
    """{'slots': file}: drawn from the rows whether or not a slots verdict was given; its
    knee marked and its series alone where it has them."""
    s = next(iter(verdicts), None)
    sn = of(SlotsNumbers, s.numbers) if s is not None else None
    knee = {"slots": s.verdict} if s is not None and sn is not None and sn.knee_reached else None
    made = slots_figure(d.df, d.folder, d.lang, knee, sn.series if sn is not None else None)
    return {"slots": made} if made else {}


def slots_figure(
    df: pd.DataFrame,
    out_dir: Path,
    lang: str = "en",
    knee: Mapping[str, Any] | None = None,
    series: Mapping[str, Any] | None = None,
) -> str | None:
    """Against slots, one quantity per panel: seconds per unit on the throughput basis (the
    one the knee is judged on, the knee marked), on the slot-latency basis, and aggregate
    output throughput; for the series the slots verdict is about (all series when none is
    named); a panel only where it has a number. None when nothing completed or no panel has
    one (an empty figure says nothing)."""
    done = fg.only(fg.done(df), series)
    if done.empty or "slots" not in done or not fg.has_data(done, [THROUGHPUT]):
        return None
    words, rc = fg.labels(lang)
    text, _ = fg.drawable(lang)  # the series' names too, in the words the figure can draw
    panels = [(THROUGHPUT, words["s_unit_tp"])]
    if fg.has_data(done, ["s_per_unit_slot_latency"]):
        panels.append(("s_per_unit_slot_latency", words["s_unit_lat"]))
    # Output tokens per wall second: the same meaning at 1 and N slots (decode_tok_s, over
    # the decode windows, is not: measure.DEFINITIONS).
    if fg.has_data(done, ["output_tok_s"]):
        panels.append(("output_tok_s", words["tok_s"]))
    titles = {THROUGHPUT: words["tp_title"], "s_per_unit_slot_latency": words["lat_title"]}
    colours = fg.colours(done)
    with plt.rc_context(rc):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), dpi=110)
        axes = list(axes) if len(panels) > 1 else [axes]
        ticks = sorted({int(float(s)) for s in done["slots"]})
        for ax, (col, ylabel) in zip(axes, panels, strict=True):
            for label, part in fg.series(done, ("backend", "mtp"), text):
                y = fg.mean_by_slots(part, col)
                ax.plot(y.index, y.values, label=label or None, **fg.style(part, colours))
            ax.set_xlabel(words["slots"])
            ax.set_ylabel(ylabel)
            ax.set_title(titles.get(col, words["decode"]), fontsize=9)
            ax.set_xticks(ticks)
            ax.grid(alpha=0.3)
        if knee and knee.get("slots") is not None:
            ax = axes[0]
            ax.axvline(float(knee["slots"]), color="0.4", ls=":", lw=1)
            ax.annotate(
                f"{words['knee']}: {knee['slots']}",
                xy=(float(knee["slots"]), 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -12),
                textcoords="offset points",
                fontsize=8,
                color="0.3",
            )
        where = i18n.point_text(series, text) if series else ""
        if where:
            fig.suptitle(where, fontsize=9)
        fg._legend(axes[0])
        return fg._save(fig, out_dir, "slots.png")

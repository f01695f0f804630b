"""A drafting verdict's figure (MTP, a draft model, n-gram): the on/off ratio per setting."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from benchkit.report.analysis.numbers import DraftingNumbers, of
from benchkit.report.analysis.sweep import norm
from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts import figures as fg
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Drawing

MTP = "mtp"  # the MTP verdict's name; a drafter's is "spec=<value>"


def figures(verdicts: Sequence[Verdict], d: Drawing) -> dict[str, str]:
    """{verdict name: file}, one figure per drafting verdict that has settings to draw."""
    made = {v.factor: mtp_figure(v, d.folder, d.lang) for v in verdicts}
    return {k: f for k, f in made.items() if f}


def mtp_figure(v: Verdict | None, out_dir: Path, lang: str = "en") -> str | None:
    """On/off ratio of seconds per unit at each setting, one bar group per backend."""
    n = of(DraftingNumbers, v.numbers) if v is not None else None
    if v is None or n is None or not n.contexts:
        return None
    contexts = n.contexts
    words, rc = fg.labels(lang)
    text, _ = fg.drawable(lang)
    groups: dict[str, list[tuple[str, float]]] = {}
    for e in contexts:
        ctx = e["context"]
        # Named as the prose names them: the backend ("Vulkan"), else the setting.
        series = i18n.backend_name(ctx["backend"]) if "backend" in ctx else ""
        rest = {k: val for k, val in ctx.items() if k not in ("backend", "slots")}
        x = str(ctx.get("slots", "")) or i18n.point_text(rest, text)
        groups.setdefault(series, []).append((x, float(e["ratio"])))
    xs = sorted({x for g in groups.values() for x, _ in g}, key=fg.num_or_text)
    width = 0.8 / max(len(groups), 1)
    mtp = v.factor == MTP
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.5, 4), dpi=110)
        for i, (series, pts) in enumerate(sorted(groups.items())):
            d = dict(pts)
            pos = [j + (i - (len(groups) - 1) / 2) * width for j in range(len(xs))]
            ax.bar(pos, [d.get(x, float("nan")) for x in xs], width, label=series or None)
        ax.axhline(1.0, color="0.3", lw=1)
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels(xs)
        ax.set_xlabel(words["slots"])
        if mtp:
            ax.set_ylabel(words["mtp_ratio"])
            ax.set_title(words["mtp_title"])
        else:
            value = norm(n.on_value)
            ax.set_ylabel(tr(text, "spec={value} / none (seconds per unit)", value=value))
            ax.set_title(words["spec_title"])
        ax.grid(alpha=0.3, axis="y")
        fg._legend(ax)
        # Stable names: mtp.png, spec-draft.png, spec-ngram.png.
        return fg._save(fig, out_dir, "mtp.png" if mtp else fg.file_name(v.factor))

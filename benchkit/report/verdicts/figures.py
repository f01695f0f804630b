"""What the report's figures share (matplotlib, Agg): the fonts and words of a figure, the
rows of each series, the legend below the axes and saving under a stable file name, every
figure closed after saving. Each verdict kind draws its own figures with these
(`VerdictKind.figures`, e.g. `verdicts/kinds/slots/figure.py`); figures draw what the
verdicts computed, they compute nothing new.

A figure's words follow the report's language when a font that draws its script is installed
(the language module's FONTS: fonts-noto-cjk for Korean); otherwise they stay in English, the
catalogs' source, which every reader's fonts can draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import font_manager

from benchkit.report.analysis.sweep import norm
from benchkit.report.lang import SOURCE, grammar, i18n, tr, trc
from benchkit.results.owned import safe_name


@cache
def _installed(fonts: tuple[str, ...] = ()) -> frozenset[str]:
    """Font families matplotlib can draw with. Its font list is cached on disk at the first
    import, so a font installed after that (fonts-noto-cjk after a first study) would stay
    unseen: when none of `fonts` is known, the system's font files the list lacks are added."""
    manager = font_manager.fontManager
    names = frozenset(f.name for f in manager.ttflist)
    if not fonts or names & set(fonts):
        return names
    known = {f.fname for f in manager.ttflist}
    for path in font_manager.findSystemFonts():
        if path not in known:
            try:
                manager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                continue
    return frozenset(f.name for f in manager.ttflist)


def drawable(lang: str) -> tuple[str, Any]:
    """The language a figure's words are written in and the rc settings that draw them:
    `lang` when matplotlib's default font draws its script or one of its FONTS is installed,
    else the source language (English), which the default font draws."""
    fonts = grammar(lang).FONTS
    if not fonts:
        return lang, {}
    font = next((f for f in fonts if f in _installed(fonts)), None)
    if font is None:
        return SOURCE, {}
    return lang, {"font.family": [font, "DejaVu Sans"]}


def labels(lang: str) -> tuple[dict[str, str], Any]:
    """Axis words for `lang` (English where no installed font draws it) and the rc settings
    to draw them."""
    text, rc = drawable(lang)
    words = {
        "slots": tr(text, "parallel slots"),
        "s_unit": tr(text, "seconds per unit"),
        "s_unit_tp": tr(text, "seconds per unit (throughput basis)"),
        "s_unit_lat": tr(text, "seconds per unit (slot-latency basis)"),
        "tp_title": tr(text, "Throughput basis (decides the knee)"),
        "lat_title": tr(text, "Slot-latency basis"),
        "tok_s": tr(text, "tokens / s"),
        "decode": tr(text, "Aggregate output throughput"),
        "knee": trc(text, "figure", "knee"),
        "backend": tr(text, "Throughput basis, per backend"),
        "mtp_ratio": tr(text, "MTP on / off (seconds per unit)"),
        "mtp_title": tr(text, "MTP effect (< 1 helps, > 1 hurts)"),
        "spec_title": tr(text, "Drafter effect (< 1 helps, > 1 hurts)"),
        "build": tr(text, "Baseline and new build"),
        # The build figure's two series (its own context: "new" here is the new build).
        "baseline": trc(text, "build figure", "baseline"),
        "new": trc(text, "build figure", "new"),
    }
    return words, rc


def done(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] == "complete"] if "status" in df else df


def series(
    df: pd.DataFrame, keys: Sequence[str], lang: str = "en"
) -> list[tuple[str, pd.DataFrame]]:
    """The rows split by the keys that vary, each named as the report names a point
    ("Vulkan, MTP off")."""
    keys = [k for k in keys if k in df and df[k].nunique() > 1]
    if not keys:
        return [("", df.sort_values("slots"))]
    out = []
    for values, part in df.groupby(keys, sort=True):
        vals = values if isinstance(values, tuple) else (values,)
        label = i18n.point_text(dict(zip(keys, vals, strict=True)), lang)
        out.append((label, part.sort_values("slots")))
    return out


def has_data(df: pd.DataFrame, cols: Sequence[str]) -> bool:
    """Whether any of `cols` holds a number to draw: a figure of none is not drawn."""
    return any(c in df and pd.to_numeric(df[c], errors="coerce").notna().any() for c in cols)


def mean_by_slots(part: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(part[col], errors="coerce").groupby(part["slots"]).mean()


def only(df: pd.DataFrame, series: Mapping[str, Any] | None) -> pd.DataFrame:
    """The rows of one series (e.g. backend=vulkan, mtp=false)."""
    for k, v in (series or {}).items():
        if k in df:
            df = df[[norm(x) == norm(v) for x in df[k]]]
    return df


class LineStyle(TypedDict):
    """A series' look as matplotlib's plot takes it: colour, line style, marker and (hollow
    markers only) the marker's face colour."""

    color: str
    ls: str
    marker: str
    mfc: NotRequired[str]


def style(part: pd.DataFrame, colours: Mapping[str, str]) -> LineStyle:
    """One look per series: the backend's colour; MTP on drawn dashed with hollow triangles,
    off solid with filled circles, so the two differ in the legend as on the plot."""
    on = "mtp" in part and norm(part["mtp"].iloc[0]) == "true"
    colour = colours.get(str(part["backend"].iloc[0]) if "backend" in part else "", "C0")
    if on:
        return LineStyle(color=colour, ls="--", marker="^", mfc="white")
    return LineStyle(color=colour, ls="-", marker="o")


def colours(df: pd.DataFrame) -> dict[str, str]:
    names = sorted({str(x) for x in df["backend"]}) if "backend" in df else []
    return {b: f"C{i}" for i, b in enumerate(names)}


def _legend(ax: Any) -> None:
    """A legend only where something is labelled, below the figure's axes (never over a
    point: a legend placed "best" inside still covers data where the lines fill the axes)."""
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(
            handles,
            names,
            fontsize=7,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=min(len(handles), 4),
            frameon=False,
        )


def _save(fig: Any, out_dir: Path, name: str) -> str:
    """Lay the figure out (room below the axes for the legend), write it as `name` and free
    it; the file's name."""
    rows = max((math.ceil(len(lg.get_texts()) / 4) for lg in fig.legends), default=0)
    fig.tight_layout(rect=(0, 0.05 * rows + (0.02 if rows else 0), 1, 1))
    fig.savefig(out_dir / name)
    plt.close(fig)
    return name


def num_or_text(x: str) -> tuple[int, float, str]:
    try:
        return (0, float(x), "")
    except ValueError:
        return (1, 0.0, x)


def file_name(factor: str) -> str:
    """A figure's file name for a verdict named `factor` ("spec=draft" -> "spec-draft.png"):
    the factor's value comes from the results, so one plain name, never a path."""
    return safe_name(factor.replace("=", "-")) + ".png"

"""Report figures with matplotlib (Agg): one per factor, stable file names, every figure
closed after saving. Figures draw what the verdicts computed; they compute nothing new.

A figure's words follow the report's language when a font that draws its script is installed
(the language module's FONTS: fonts-noto-cjk for Korean); otherwise they stay in English, the
catalogs' source, which every reader's fonts can draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import font_manager

from benchkit.owned import safe_name
from benchkit.report import i18n
from benchkit.report.lang import SOURCE, grammar, tr, trc
from benchkit.report.numbers import BuildNumbers, DraftingNumbers, of
from benchkit.report.sweep import THROUGHPUT, norm
from benchkit.report.verdicts.common import Verdict


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


def _done(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] == "complete"] if "status" in df else df


def _series(
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


def _mean_by_slots(part: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(part[col], errors="coerce").groupby(part["slots"]).mean()


def _only(df: pd.DataFrame, series: Mapping[str, Any] | None) -> pd.DataFrame:
    """The rows of one series (e.g. backend=vulkan, mtp=false)."""
    for k, v in (series or {}).items():
        if k in df:
            df = df[[norm(x) == norm(v) for x in df[k]]]
    return df


def _style(part: pd.DataFrame, colours: Mapping[str, str]) -> dict[str, Any]:
    """One look per series: the backend's colour; MTP on drawn dashed with hollow triangles,
    off solid with filled circles, so the two differ in the legend as on the plot."""
    on = "mtp" in part and norm(part["mtp"].iloc[0]) == "true"
    colour = colours.get(str(part["backend"].iloc[0]) if "backend" in part else "", "C0")
    if on:
        return {"color": colour, "ls": "--", "marker": "^", "mfc": "white"}
    return {"color": colour, "ls": "-", "marker": "o"}


def _colours(df: pd.DataFrame) -> dict[str, str]:
    names = sorted({str(x) for x in df["backend"]}) if "backend" in df else []
    return {b: f"C{i}" for i, b in enumerate(names)}


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
    named). None when nothing completed."""
    done = _only(_done(df), series)
    if done.empty or "slots" not in done or THROUGHPUT not in done:
        return None
    words, rc = labels(lang)
    text, _ = drawable(lang)  # the series' names too, in the words the figure can draw
    panels = [(THROUGHPUT, words["s_unit_tp"])]
    if "s_per_unit_slot_latency" in done:
        panels.append(("s_per_unit_slot_latency", words["s_unit_lat"]))
    # Output tokens per wall second: the same meaning at 1 and N slots (decode_tok_s, over
    # the decode windows, is not: measure.DEFINITIONS).
    if "output_tok_s" in done and done["output_tok_s"].notna().any():
        panels.append(("output_tok_s", words["tok_s"]))
    titles = {THROUGHPUT: words["tp_title"], "s_per_unit_slot_latency": words["lat_title"]}
    colours = _colours(done)
    with plt.rc_context(rc):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), dpi=110)
        axes = list(axes) if len(panels) > 1 else [axes]
        ticks = sorted({int(float(s)) for s in done["slots"]})
        for ax, (col, ylabel) in zip(axes, panels, strict=True):
            for label, part in _series(done, ("backend", "mtp"), text):
                y = _mean_by_slots(part, col)
                ax.plot(y.index, y.values, label=label or None, **_style(part, colours))
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
        _legend(axes[0])
        return _save(fig, out_dir, "slots.png")


def backend_figure(df: pd.DataFrame, out_dir: Path, lang: str = "en") -> str | None:
    """Seconds per unit (throughput basis) against slots, one line per backend (and MTP)."""
    done = _done(df)
    if done.empty or "backend" not in done or done["backend"].nunique() < 2:
        return None
    words, rc = labels(lang)
    text, _ = drawable(lang)
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.5, 4.2), dpi=110)
        if "slots" in done:
            colours = _colours(done)
            for label, part in _series(done, ("backend", "mtp"), text):
                tp = _mean_by_slots(part, THROUGHPUT)
                ax.plot(tp.index, tp.values, label=label, **_style(part, colours))
            ax.set_xlabel(words["slots"])
            ax.set_xticks(sorted({int(float(s)) for s in done["slots"]}))
        else:
            means = pd.to_numeric(done[THROUGHPUT], errors="coerce").groupby(done["backend"]).mean()
            ax.bar([str(i) for i in means.index], means.values)
        ax.set_ylabel(words["s_unit_tp"])
        ax.set_title(words["backend"])
        ax.grid(alpha=0.3)
        _legend(ax)
        return _save(fig, out_dir, "backend.png")


def mtp_figure(v: Verdict | None, out_dir: Path, lang: str = "en") -> str | None:
    """On/off ratio of seconds per unit at each setting, one bar group per backend."""
    n = of(DraftingNumbers, v.numbers) if v is not None else None
    if v is None or n is None or not n.contexts:
        return None
    contexts = n.contexts
    words, rc = labels(lang)
    text, _ = drawable(lang)
    groups: dict[str, list[tuple[str, float]]] = {}
    for e in contexts:
        ctx = e["context"]
        # Named as the prose names them: the backend ("Vulkan"), else the setting.
        series = i18n.backend_name(ctx["backend"]) if "backend" in ctx else ""
        rest = {k: val for k, val in ctx.items() if k not in ("backend", "slots")}
        x = str(ctx.get("slots", "")) or i18n.point_text(rest, text)
        groups.setdefault(series, []).append((x, float(e["ratio"])))
    xs = sorted({x for g in groups.values() for x, _ in g}, key=_num_or_text)
    width = 0.8 / max(len(groups), 1)
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
        if v.factor == "mtp":
            ax.set_ylabel(words["mtp_ratio"])
            ax.set_title(words["mtp_title"])
        else:
            value = norm(n.on_value)
            ax.set_ylabel(tr(text, "spec={value} / none (seconds per unit)", value=value))
            ax.set_title(words["spec_title"])
        ax.grid(alpha=0.3, axis="y")
        _legend(ax)
        # Stable names: mtp.png, spec-draft.png, spec-ngram.png.
        # The factor's value comes from the results: one plain name, never a path.
        name = "mtp.png" if v.factor == "mtp" else safe_name(v.factor.replace("=", "-")) + ".png"
        return _save(fig, out_dir, name)


def build_figure(v: Verdict | None, out_dir: Path, lang: str = "en") -> str | None:
    """Baseline and new seconds per unit (throughput basis), config by config."""
    pairs = of(BuildNumbers, v.numbers).pairs if v is not None else []
    if not pairs:
        return None
    words, rc = labels(lang)
    text, _ = drawable(lang)
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
        _legend(ax)
        return _save(fig, out_dir, "build.png")


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


def _num_or_text(x: str) -> tuple[int, float, str]:
    try:
        return (0, float(x), "")
    except ValueError:
        return (1, 0.0, x)

"""The capacity verdict's two figures (open-loop load), drawn from its numbers: time to first
token (p50, p95, p99) against offered load per setting, the SLO's TTFT limit and each
setting's capacity marked; and the Pareto view, tokens/s per user against aggregate tokens/s
over every setting and load, the frontier joined. Both bases are named on the axes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from benchkit.report.analysis.load_numbers import CapacityRow
from benchkit.report.analysis.numbers import CapacityNumbers, of
from benchkit.report.lang import fmt, i18n, tr
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.figures import _legend, _save, drawable
from benchkit.report.verdicts.kind import Drawing

# p50 dotted, p95 solid (what an SLO usually limits), p99 dashed.
_PERCENTILES = (("ttft_ms_p50", ":"), ("ttft_ms_p95", "-"), ("ttft_ms_p99", "--"))


def figures(verdicts: Sequence[Verdict], d: Drawing) -> dict[str, str]:
    """The capacity verdict's figures (`capacity_figures`), where it gave one."""
    return capacity_figures(next(iter(verdicts), None), d.folder, d.lang)


def capacity_figures(v: Verdict | None, out_dir: Path, lang: str) -> dict[str, str]:
    """{'capacity': file, 'pareto': file}, each where it has something to draw."""
    if v is None:
        return {}
    n = of(CapacityNumbers, v.numbers)
    out: dict[str, str] = {}
    made = _latency(n, out_dir, lang)
    if made:
        out["capacity"] = made
    made = _pareto(n, out_dir, lang)
    if made:
        out["pareto"] = made
    return out


def _x(r: CapacityRow, axis: str) -> float:
    # A trace's load is drawn as the rate it offered, where that was measured.
    return float(r["offered_rps"]) if axis == "speed" and r["offered_rps"] else r["load"]


def _latency(n: CapacityNumbers, out_dir: Path, lang: str) -> str | None:
    settings = [s for s in n.settings or [] if s["rows"]]
    if not settings:
        return None
    text, rc = drawable(lang)
    limit = (n.objective["slo"] if n.objective else {}).get("ttft_ms_p95")
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
        for i, s in enumerate(settings):
            name = i18n.setting_text(s["setting"], text)
            colour = f"C{i}"
            xs = [_x(r, n.axis) for r in s["rows"]]
            for key, ls in _PERCENTILES:
                ys = [r[key] for r in s["rows"]]  # type: ignore[literal-required]
                pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
                if pts:
                    label = f"{name}, {key.rsplit('_', 1)[-1]}"
                    ax.plot(*zip(*pts, strict=True), ls=ls, color=colour, marker="o", ms=3,
                            label=label)  # fmt: skip
            over = [(x, r["ttft_ms_p95"]) for x, r in zip(xs, s["rows"], strict=True)
                    if r["ended"] and r["ttft_ms_p95"] is not None]  # fmt: skip
            if over:
                # An overloaded pass: its latency is of the calls that finished before it ended.
                ax.scatter([p[0] for p in over], [p[1] for p in over], marker="x", s=60,
                           color=colour, zorder=3)  # fmt: skip
        if limit is not None:
            ax.axhline(float(limit), color="0.4", lw=1, ls="-.")
            ax.annotate(
                tr(text, "SLO"),
                xy=(0.01, float(limit)),
                xycoords=("axes fraction", "data"),
                xytext=(0, 3),
                textcoords="offset points",
                fontsize=8,
                color="0.3",
            )
        ax.set_yscale("log")
        loads = [_x(r, n.axis) for s in settings for r in s["rows"]]
        if min(loads) > 0 and max(loads) / min(loads) >= 8:
            ax.set_xscale("log")  # rates swept by doubling are evenly spaced
        ax.set_xlabel(tr(text, "offered load (calls/s)"))
        ax.set_ylabel(tr(text, "time to first token (ms, queueing included)"))
        ax.set_title(tr(text, "TTFT p50 / p95 / p99; x: pass ended at a bound"), fontsize=9)
        ax.grid(alpha=0.3, which="both")
        _legend(ax)
        return _save(fig, out_dir, "capacity.png")


def _pareto(n: CapacityNumbers, out_dir: Path, lang: str) -> str | None:
    pts = [
        (r["output_tok_s"], r["per_user_tok_s"], i, r)
        for i, s in enumerate(n.settings or [])
        for r in s["rows"]
        if r["output_tok_s"] is not None and r["per_user_tok_s"] is not None
    ]
    if not pts:
        return None
    text, rc = drawable(lang)
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
        for i, s in enumerate(n.settings or []):
            mine = [(x, y, r) for x, y, j, r in pts if j == i]
            if not mine:
                continue
            ax.scatter([p[0] for p in mine], [p[1] for p in mine], color=f"C{i}",
                       label=i18n.setting_text(s["setting"], text),
                       marker="o", s=[36 if r["held"] else 14 for _, _, r in mine])  # fmt: skip
            for x, y, r in mine:
                ax.annotate(fmt.value(r["load"]), (x, y), xytext=(3, 3),
                            textcoords="offset points", fontsize=7, color="0.3")  # fmt: skip
        front = _frontier([(x, y) for x, y, _, _ in pts])
        ax.plot(*zip(*front, strict=True), color="0.5", lw=1, ls="--", label=tr(text, "frontier"))
        ax.set_xlabel(tr(text, "aggregate tokens/s (every user, per second of the pass)"))
        ax.set_ylabel(tr(text, "tokens/s per user (one answer's streaming rate)"))
        ax.set_title(tr(text, "Each point a setting at one load (labelled); large: SLO held"),
                     fontsize=9)  # fmt: skip
        ax.grid(alpha=0.3)
        _legend(ax)
        return _save(fig, out_dir, "pareto.png")


def _frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other beats on both axes (higher is better on each), by aggregate."""
    best: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or y > best[-1][1]:
            best.append((x, y))
    return sorted(best)

"""Report figures with matplotlib (Agg): stable file names, every figure closed after saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


def _series(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    keys = [k for k in ("backend", "mtp") if k in df and df[k].nunique() > 1] or ["backend"]
    out = []
    for values, part in df.groupby(keys, sort=True):
        vals = values if isinstance(values, tuple) else (values,)
        label = ", ".join(
            f"{k}={v}" if k != "backend" else str(v) for k, v in zip(keys, vals, strict=True)
        )
        out.append((label, part.sort_values("slots")))
    return out


def slots_figure(df: pd.DataFrame, out_dir: Path) -> str | None:
    """s/unit on both bases and aggregate decode throughput against slots; None if no data."""
    done = df[df["status"] == "complete"] if "status" in df else df
    if done.empty or "slots" not in done:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), dpi=110)
    for label, part in _series(done):
        ax1.plot(part["slots"], part["s_per_unit_throughput"], "o-", label=f"{label}: throughput")
        ax1.plot(
            part["slots"], part["s_per_unit_slot_latency"], "s--", label=f"{label}: slot latency"
        )
        ax2.plot(part["slots"], part["decode_tok_s"], "o-", label=label)
    ax1.set_xlabel("parallel slots")
    ax1.set_ylabel("seconds per unit")
    ax1.set_title("Seconds per unit, both bases")
    ax2.set_xlabel("parallel slots")
    ax2.set_ylabel("tokens / s")
    ax2.set_title("Aggregate decode throughput")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_xticks(sorted({int(s) for s in done["slots"]}))
    fig.tight_layout()
    name = "slots.png"
    fig.savefig(out_dir / name)
    plt.close(fig)
    return name

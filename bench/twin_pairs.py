"""Two identical sweeps already run (twin_sweeps.py runs them; a lent machine ran the quiet CPU
grid's): each one's backend and slots verdicts, and every pair of points as the comparison
engine compares it in each, side by side (issue #41).

Beside the verdict-level promise (the same value, or both provisional) it checks the pair-level
one the engine's docstring makes: a comparison decided in one run puts the twin's figure on the
same side of the margin; `inside` tells whether the twin's figure lies in this run's
replication interval.

    python bench/twin_pairs.py docs/perf/verdict-stability/cpu-grid-quiet/a \
        docs/perf/verdict-stability/cpu-grid-quiet/b \
        --out docs/perf/verdict-stability/twin-sweeps-cpu-grid.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchkit.compare.engine import Comparison, Engine  # noqa: E402
from benchkit.report.verdicts.engine_of import engine_of  # noqa: E402
from benchkit.report.verdicts.folder import analyse_folder  # noqa: E402


def side(c: Comparison, margin: float) -> str:
    """Where a figure lies against the margin: worse, better or within."""
    r = c.ratio or math.nan
    return "worse" if r > 1 + margin else "better" if r < 1 / (1 + margin) else "within"


def pairs(e: Engine) -> dict[str, Comparison]:
    pts = e.points()
    out: dict[str, Comparison] = {}
    for i, a in enumerate(pts):
        for b in pts[i + 1 :]:
            c = e.compare(a, b)
            if c is not None:
                out[f"{a} -> {b}"] = c
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--twinned",
        action="store_true",
        help="render each run with the other as its anchors (rules v8: the twins measure the "
        "run-to-run noise, and each point's two runs are pooled)",
    )
    args = p.parse_args(argv)
    runs: dict[str, dict[str, Any]] = {}
    for name, folder, other in (("a", args.a, args.b), ("b", args.b, args.a)):
        an = analyse_folder(folder, [f"study.anchors=[{other.resolve()}]"] if args.twinned else [])
        eng = engine_of(an.sweep)
        verdicts = {
            v.factor: {
                "value": v.verdict,
                "status": v.status,
                "reasons": v.reasons,
                "open": getattr(v.numbers, "open", None),
            }
            for v in an.verdicts
            if v.factor in ("slots", "backend")
        }
        runs[name] = {"folder": str(folder), "verdicts": verdicts, "engine": eng}
    margin = runs["a"]["engine"].settings.margin
    kept: dict[str, bool] = {}
    for f, va in runs["a"]["verdicts"].items():
        vb = runs["b"]["verdicts"].get(f)
        same = vb is not None and vb["value"] == va["value"]
        both = vb is not None and va["status"] == vb["status"] == "provisional"
        kept[f] = same or both
        print(f"{f}: a {va['value']} ({va['status']}), b {vb and vb['value']} "
              f"({vb and vb['status']}): same value {same}, both provisional {both}")  # fmt: skip
    ea, eb = runs["a"]["engine"], runs["b"]["engine"]
    figures = {x: [ea.figure(x), eb.figure(x)] for x in ea.points() if x in eb.points()}
    for x, (fa, fb) in figures.items():
        if fa and fb:
            print(f"{x}: a {fa:.4f}, b {fb:.4f} s/unit: b/a {fb / fa:.3f}")
    ca, cb = pairs(ea), pairs(eb)
    table: list[dict[str, Any]] = []
    for key in ca:
        if key not in cb:
            continue
        row: dict[str, Any] = {"pair": key}
        for me, mine, twin in (("a", ca[key], cb[key]), ("b", cb[key], ca[key])):
            inside = (
                mine.low is not None and mine.high is not None
                and mine.low <= (twin.ratio or math.nan) <= mine.high
            )  # fmt: skip
            row[me] = {**mine.to_json(), "side": side(mine, margin), "twin_inside": inside}
        table.append(row)
        a, b = row["a"], row["b"]
        print(f"{key}: a {a['ratio']:.3f} [{a['low']:.3f}, {a['high']:.3f}] {a['outcome']}"
              f" | b {b['ratio']:.3f} [{b['low']:.3f}, {b['high']:.3f}] {b['outcome']}"
              f" | b inside a's interval {a['twin_inside']}, a inside b's {b['twin_inside']},"
              f" same side {a['side'] == b['side']}")  # fmt: skip
    decided = [(r, me, tw) for r in table for me, tw in (("a", "b"), ("b", "a"))
               if r[me]["outcome"] != "open"]  # fmt: skip
    held = sum(r[me]["side"] == r[tw]["side"] for r, me, tw in decided)
    covered = sum(r[me]["twin_inside"] for r in table for me in ("a", "b"))
    print(f"decided comparisons: {len(decided)}; the twin's figure on the same side of the "
          f"margin in {held}; twin's figure inside the replication interval in {covered} of "
          f"{2 * len(table)}")  # fmt: skip
    # Rules v8: a decision on units alone (no run-to-run noise measured) keeps its verdict
    # provisional; the promise is the decisions whose interval holds the runs' noise.
    full = [(r, me, tw) for r, me, tw in decided if r[me]["run_noise"] != "unmeasured"]
    full_held = sum(r[me]["side"] == r[tw]["side"] for r, me, tw in full)
    print(f"decided with run-to-run noise in the interval: {len(full)}; the twin's figure on "
          f"the same side in {full_held}")  # fmt: skip
    if args.out:
        doc = {
            "margin": margin,
            "runs": {
                k: {"folder": v["folder"], "verdicts": v["verdicts"]} for k, v in runs.items()
            },
            "kept": kept,
            "figures": figures,
            "pairs": table,
            "decided": len(decided),
            "decided_same_side": held,
            "decided_with_run_noise": len(full),
            "decided_with_run_noise_same_side": full_held,
            "twin_inside_interval": covered,
            "intervals": 2 * len(table),
        }
        args.out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Verdict stability: does a verdict the comparison engine calls complete survive a resample of
the units it rests on?

For a results folder, each resample draws the workload's units with replacement (the same
draw for every job, so pairs stay paired: a unit drawn twice counts twice for every point),
rebuilds every job's per-unit times from the draw, and asks the engine's verdicts (backend and
slots, benchkit.report.verdicts) again. A complete verdict "holds" in a resample whose verdict
has the same value (the same backend, the same knee); the goal (issue #41) is at least 95% of
200 resamples for every complete verdict. Provisional verdicts are counted too: how often a
resample calls them complete, and with which value.

Only the per-unit times are resampled; the table's means (which point is best by its figure)
are the run's own. That is the engine's part of a verdict: its comparisons and their intervals.

    python bench/verdict_stability.py docs/studies/*/results --draws 200 \
        --out docs/perf/verdict-stability/verdict-stability.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import TypedDict

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchkit.report.analysis.sweep import Sweep  # noqa: E402
from benchkit.report.verdicts.common import Verdict  # noqa: E402
from benchkit.report.verdicts.folder import analyse_folder  # noqa: E402
from benchkit.report.verdicts.kinds.backend.verdict import backend_verdict  # noqa: E402
from benchkit.report.verdicts.kinds.slots.verdict import slots_verdict  # noqa: E402


class Tally(TypedDict):
    factor: str
    value: object
    status: str
    draws: int
    same_value: int
    complete: int
    complete_other_value: int
    values: dict[str, int]


def _verdicts(sw: Sweep) -> dict[str, Verdict]:
    b = backend_verdict(sw)
    s = slots_verdict(sw, b)
    return {v.factor: v for v in (b, s) if v is not None}


def _resampled(sw: Sweep, rng: random.Random) -> None:
    """Every job's per-unit times on one draw of the units, with replacement."""
    times = {j: (sw.unit_times.get(j) or sw.spans.get(j) or {}) for j in sw.spans}
    universe = sorted({u for t in times.values() for u in t})
    draw = [rng.choice(universe) for _ in universe]
    sw.unit_times = {
        j: {f"{u}#{k}": t[u] for k, u in enumerate(draw) if u in t} for j, t in times.items()
    }
    sw.anchors = [
        replace(a, spans={f"{u}#{k}": a.spans[u] for k, u in enumerate(draw) if u in a.spans})
        for a in sw.anchors
    ]
    sw.cache.clear()


def check(folder: Path, overrides: list[str], draws: int, seed: int) -> list[Tally]:
    a = analyse_folder(folder, overrides)
    sw = a.sweep
    base = _verdicts(sw)
    original = (dict(sw.unit_times), dict(sw.spans), list(sw.anchors))
    rng = random.Random(seed)
    tallies = {
        f: Tally(factor=f, value=v.verdict, status=v.status, draws=draws, same_value=0,
                 complete=0, complete_other_value=0, values={})
        for f, v in base.items()
    }  # fmt: skip
    for _ in range(draws):
        sw.unit_times, sw.spans, sw.anchors = dict(original[0]), dict(original[1]), original[2]
        _resampled(sw, rng)
        for f, v in _verdicts(sw).items():
            t = tallies.get(f)
            if t is None:
                continue
            same = json.dumps(v.verdict, sort_keys=True) == json.dumps(t["value"], sort_keys=True)
            t["same_value"] += same
            t["complete"] += v.status == "complete"
            t["complete_other_value"] += v.status == "complete" and not same
            key = json.dumps(v.verdict, sort_keys=True)
            t["values"][key] = t["values"].get(key, 0) + 1
    return list(tallies.values())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--draws", type=int, default=200)
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.draws < 1:
        p.error("--draws must be at least 1")
    out: dict[str, list[Tally]] = {}
    for folder in args.folders:
        overrides = _anchors(folder)
        out[str(folder)] = check(folder, overrides, args.draws, args.seed)
        for t in out[str(folder)]:
            held = t["same_value"] / t["draws"]
            print(
                f"{folder}: {t['factor']} {json.dumps(t['value'])} ({t['status']}): same value "
                f"in {t['same_value']}/{t['draws']} ({held:.0%}), complete in {t['complete']}, "
                f"complete with another value in {t['complete_other_value']}"
            )
    if args.out:
        args.out.write_text(json.dumps({"draws": args.draws, "seed": args.seed, "folders": out},
                                       indent=1) + "\n")  # fmt: skip
    return 0


def _anchors(results: Path) -> list[str]:
    """A published study's anchors (docs/studies/NAME/anchors), as render-study.sh passes them."""
    f = results.parent / "anchors"
    if not f.exists():
        return []
    lines = [x.strip() for x in f.read_text().splitlines() if x.strip() and not x.startswith("#")]
    return [f"study.anchors=[{','.join(lines)}]"]


if __name__ == "__main__":
    sys.exit(main())

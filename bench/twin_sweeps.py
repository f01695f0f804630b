"""Two identical CPU sweeps, back to back: do they give the same verdict, or both say
provisional? (issue #41; the finding: two identical sweeps called 1 slot "provisional" and
"complete"). Runs `python -m benchkit -m SWEEP` twice into two folders, then writes each
verdict's value and status for both, and whether the pair keeps the promise.

    python bench/twin_sweeps.py --sweep "slots=1,2,4 workload=first" \
        --out docs/perf/verdict-stability/twin-sweeps.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchkit.report.verdicts.folder import analyse_folder  # noqa: E402


def run(sweep: list[str], folder: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "benchkit", "-m", *sweep, f"hydra.sweep.dir={folder}"],
        check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sweep", default="slots=1,2,4 workload=first")
    p.add_argument("--pairs", type=int, default=1)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.pairs < 1:
        p.error("--pairs must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="twins-"))
    pairs = []
    for i in range(args.pairs):
        twins = []
        for side in ("a", "b"):
            folder = root / f"{i}{side}"
            wall = run(args.sweep.split(), folder)
            a = analyse_folder(folder)
            twins.append(
                {
                    "folder": str(folder),
                    "wall_s": round(wall, 1),
                    "load_avg": os.getloadavg()[0],
                    "verdicts": {
                        v.factor: {"value": v.verdict, "status": v.status, "reasons": v.reasons}
                        for v in a.verdicts
                        if v.factor in ("slots", "backend")
                    },
                }
            )
        kept = {}
        for f, va in twins[0]["verdicts"].items():
            vb = twins[1]["verdicts"].get(f)
            same = vb is not None and vb["value"] == va["value"]
            both_prov = vb is not None and "provisional" == va["status"] == vb["status"]
            kept[f] = same or both_prov
            print(f"pair {i}: {f}: {va['value']} ({va['status']}) / "
                  f"{vb and vb['value']} ({vb and vb['status']}): kept {kept[f]}")  # fmt: skip
        pairs.append({"twins": twins, "kept": kept})
    if args.out:
        args.out.write_text(json.dumps({"sweep": args.sweep, "pairs": pairs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

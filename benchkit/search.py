"""`python -m benchkit.search [--rounds N] [--budget-min M] OVERRIDES...`: find, per server
setting, the most load whose SLO holds, by bisection on the load (as SGLang's auto-benchmark
and guidellm's sweep do), within a budget.

Each round is one open-loop sweep (`python -m benchkit -m OVERRIDES
hydra.sweep.dir=DIR/round-N`): the first over the loads given, each later one over those tried
and the loads the report's capacity verdict proposes next (report/verdicts/capacity.py,
`next_loads`: halfway between held and broken, twice the highest held, half the lowest
broken), reusing the round before's complete jobs (`resume_from`), so a round measures only
its new loads and its folder holds them all. (One folder for every round would not do: new
loads renumber the points, and a job would overwrite another point's result before it was
reused.) It stops when every capacity is bracketed within 25%, after `--rounds` rounds, or
before a round the time left in `--budget-min` would not cover (the last round's time is the
estimate); the last round's report is the answer, as after any sweep.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchkit import log
from benchkit.errors import UserError
from benchkit.report.folder import analyse_folder
from benchkit.report.numbers import CapacityNumbers, of
from benchkit.report.verdicts.capacity import next_loads

_log = log.get(__name__)
AXES = {"load.rate": "rate", "load.speed": "speed"}


def _key(o: str) -> str:
    return o.split("=", 1)[0].lstrip("+~")


def plan(overrides: Sequence[str]) -> tuple[list[str], str, Path]:
    """(the overrides without the folder, the load key, the folder): a search needs an
    open-loop load and the loads of its first round."""
    args = [o for o in overrides if _key(o) != "hydra.sweep.dir"]
    folder = next((o.split("=", 1)[1] for o in overrides if _key(o) == "hydra.sweep.dir"), None)
    key = next((k for o in args if (k := _key(o)) in AXES), None)
    if key is None:
        raise UserError(
            "a search starts from loads to try: give load.rate=0.5,1,2,4 (or load.speed=1,2,4 "
            "with load=trace) beside load=poisson and the server settings."
        )
    if not any(_key(o) == "load" and o.split("=", 1)[1] != "closed" for o in args):
        raise UserError(
            "a search measures open-loop load: add load=poisson (or constant, or trace)."
        )
    stamp = time.strftime("%Y-%m-%d_%H-%M-%S")
    return args, key, Path(folder or f"outputs/sweeps/search-{stamp}")


def search(overrides: Sequence[str], rounds: int, budget_min: float | None) -> int:
    args, key, base = plan(overrides)
    t0 = time.monotonic()
    last = 0.0
    folder = base / "round-1"
    for n in range(1, rounds + 1):
        left = None if budget_min is None else budget_min * 60 - (time.monotonic() - t0)
        if left is not None and n > 1 and last > left:
            _log.info(f"search: stopped before round {n}: it would pass --budget-min")
            break
        _log.info(f"search: round {n} of at most {rounds}")
        started = time.monotonic()
        folder = base / f"round-{n}"
        if n > 1:  # the round before's jobs, in place of any folder given to reuse
            args = [o for o in args if _key(o) != "resume_from"]
            args.append(f"resume_from={base / f'round-{n - 1}'}")
        cmd = [sys.executable, "-m", "benchkit", "-m", *args, f"hydra.sweep.dir={folder}"]
        done = subprocess.run(cmd, check=False)
        last = time.monotonic() - started
        if done.returncode != 0:
            return done.returncode
        v = analyse_folder(folder).verdict("capacity")
        if v is None:
            raise UserError(f"{folder} holds no open-loop jobs: nothing to search.")
        n_ = of(CapacityNumbers, v.numbers)
        new = next_loads(n_)
        if not new:
            _log.info("search: every capacity is bracketed within 25% (or no setting held)")
            break
        tried = sorted({r["load"] for s in n_.settings or [] for r in s["rows"]})
        loads = ",".join(f"{x:g}" for x in sorted({*tried, *new}))
        args = [f"{key}={loads}" if _key(o) == key else o for o in args]
    _log.info(f"search: report in {folder / 'report'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchkit.search", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--rounds", type=int, default=4, help="at most this many sweeps (4)")
    ap.add_argument("--budget-min", type=float, default=None, help="minutes for the search")
    ap.add_argument("overrides", nargs="+", help="the sweep's overrides, loads included")
    a = ap.parse_args(argv)
    try:
        if a.rounds < 1:
            raise UserError(f"--rounds {a.rounds}: give at least 1 round.")
        return search(a.overrides, a.rounds, a.budget_min)
    except UserError as exc:
        print(f"benchkit.search: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

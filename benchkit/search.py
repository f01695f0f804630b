"""`python -m benchkit.search [--rounds N] [--budget-min M] OVERRIDES...`: find, per server
setting, the most load whose SLO holds, by bisection on the load (as SGLang's auto-benchmark
and guidellm's sweep do), within a budget.

Each round is one open-loop sweep (`python -m benchkit -m OVERRIDES hydra.sweep.dir=DIR/round-N`):
the first over the loads given, each later one over those tried and the loads the report's capacity
verdict proposes next (report/verdicts/kinds/capacity/verdict.py, `next_loads`: halfway between held
and broken, twice the highest held, half the lowest broken), reusing the round before's complete
jobs (`resume_from`), so a round measures only its new loads and its folder holds them all. (One
folder for every round would not do: new loads renumber the points, and a job would overwrite
another point's result before it was reused.) It stops when every capacity is bracketed within 25%,
after `--rounds` rounds, or before a round the time left in `--budget-min` would not cover (the last
round's time is the estimate); the last round's report is the answer, as after any sweep.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchkit import log
from benchkit.cli import Parser, bounded
from benchkit.errors import Terminated, UserError
from benchkit.host.lifeline import die_with_parent
from benchkit.report.analysis.numbers import CapacityNumbers, of
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.verdicts.kinds.capacity.verdict import next_loads
from benchkit.results.scrub import SECRET_KEYS, URL_KEYS, url_password

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
    try:
        return _rounds(args, key, base, rounds, budget_min)
    except KeyboardInterrupt as exc:  # between two rounds (Ctrl-C, or SIGTERM: Terminated)
        stop = Stopped(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
        stop.base = base
        raise stop from None


def _rounds(args: list[str], key: str, base: Path, rounds: int, budget_min: float | None) -> int:
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
        argv, env = secret_free(args)
        cmd = [sys.executable, "-m", "benchkit", "-m", *argv, f"hydra.sweep.dir={folder}"]
        try:
            code = run_sweep(cmd, env)
        except Stopped as stop:
            stop.where = (
                f"in round {n}, whose sweep wrote its jobs (the one running as incomplete) and "
                f"its report so far in {folder}"
            )
            stop.base = base
            raise
        last = time.monotonic() - started
        if code != 0:
            return code
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


class Stopped(Exception):
    """The search was stopped by a signal (`signum`) while its sweep ran."""

    def __init__(self, signum: int, code: int | None = None) -> None:
        super().__init__(signum)
        self.signum, self.code = signum, code
        self.where = "between two rounds (every round's sweep had ended)"
        self.base: Path | None = None


def secret_free(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(the sweep's overrides, its environment) with the API key and a URL's password moved
    out of its command line (which `ps` shows every user) into its environment: the key as
    $BENCHKIT_API_KEY, which benchkit reads, the URL through an `oc.env` interpolation."""
    argv: list[str] = []
    env = dict(os.environ)
    for o in args:
        key, _, value = o.partition("=")
        value = value.strip("'\"")
        if key.lstrip("+~") in SECRET_KEYS:
            env["BENCHKIT_API_KEY"] = value
        elif key.lstrip("+~") in URL_KEYS and url_password(value):
            env["BENCHKIT_SEARCH_URL"] = value
            argv.append(f"{key}=${{oc.env:BENCHKIT_SEARCH_URL}}")
        else:
            argv.append(o)
    return argv, env


def run_sweep(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """One round's sweep, its exit code. Ctrl-C and SIGTERM are passed on to it, once each,
    and the sweep is waited for: it writes its job as incomplete, renders its report so far and
    exits (subprocess.run would SIGKILL it 0.25 s after Ctrl-C, leaving a job without
    result.json). It runs in its own process group, so a terminal's Ctrl-C reaches it only
    through us (not twice: a second Ctrl-C skips its report), and gets SIGTERM should the search
    die without a chance to pass anything on (kill -9)."""
    got: list[int] = []
    proc = subprocess.Popen(
        cmd, env=env, process_group=0, preexec_fn=die_with_parent(signal.SIGTERM)
    )

    def forward(signum: int, frame: object) -> None:
        got.append(signum)
        with contextlib.suppress(ProcessLookupError):
            # A third signal: the sweep is not stopping by itself, so it is made to.
            os.killpg(proc.pid, signal.SIGKILL if len(got) > 2 else signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if got:
        raise Stopped(got[0], code)
    return code


def parser() -> Parser:
    ap = Parser(prog="python -m benchkit.search", description=__doc__.split("\n\n")[0])
    rounds = bounded(int, 1, 100, means="sweeps, each over the loads the last one proposed")
    ap.add_argument("--rounds", type=rounds, default=4, help="at most this many sweeps (4)")
    # A week: a bound that still catches a typo (minutes meant as seconds) and nan.
    budget = bounded(float, 0, 7 * 24 * 60, open_lo=True, means="minutes the search may take")
    ap.add_argument("--budget-min", type=budget, default=None, help="minutes for the search")
    ap.add_argument("overrides", nargs="+", help="the sweep's overrides, loads included")
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    # SIGTERM between rounds stops the search as Ctrl-C does: one sentence, no traceback.
    old = signal.signal(signal.SIGTERM, _terminated)
    try:
        return search(a.overrides, a.rounds, a.budget_min)
    except Stopped as stop:
        return _stopped(stop)
    except KeyboardInterrupt as exc:  # before the first round began
        return _stopped(Stopped(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT))
    except UserError as exc:
        print(f"benchkit.search: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, old)


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _stopped(stop: Stopped) -> int:
    how = "Ctrl-C" if stop.signum == signal.SIGINT else "SIGTERM"
    again = f" with hydra.sweep.dir={stop.base}" if stop.base else ""
    print(
        f"benchkit.search: stopped by {how} {stop.where}: run the same command again{again} "
        "to resume (complete jobs are reused).",
        file=sys.stderr,
    )
    return 130 if stop.signum == signal.SIGINT else 143


if __name__ == "__main__":
    sys.exit(main())

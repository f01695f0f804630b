"""Where a sweep stands, for its progress line: job i of N, the time since the sweep started,
and the time left, estimated from the jobs this launch has finished.

It reads only the sweep folder, so every launcher (in this process, joblib's workers, SLURM
jobs) sees the same state: the sweep started when Hydra wrote its `multirun.yaml`, a job has
finished once its result.json is newer than that, and a sweeper that launches in rounds
(racing) writes the round's plan beside them (`PLAN_FILE`). A job's own units and calls stay
on the replay's line (benchkit/client/replay.py); this adds the sweep's part in front.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from benchkit.errors import UserError
from benchkit.results import bounded
from benchkit.results.store import RESULT_FILE, atomic_write_text

MULTIRUN_FILE = "multirun.yaml"
# A sweeper that decides its jobs as it goes (racing) writes each round's plan here.
PLAN_FILE = ".sweep-plan.json"


class RoundPlan(TypedDict):
    """PLAN_FILE: one round of a sweeper that launches in rounds."""

    round: int
    jobs: list[int]
    running: int
    points: int
    started: float


@dataclass(frozen=True)
class SweepProgress:
    """One job's place in its sweep, and what the finished jobs say of the time left."""

    job: int  # 1-based, in launch order
    total: int | None  # jobs this launch (or round) runs; None: not known in advance
    started: float  # epoch seconds
    finished: tuple[float, ...] = ()  # epoch seconds each finished job ended, in order
    round: int | None = None  # racing: the round
    running: int | None = None  # racing: points still running this round
    points: int | None = None  # racing: points in the grid

    def elapsed(self, now: float) -> float:
        return max(0.0, now - self.started)

    def left(self, now: float) -> float | None:
        """Seconds left for this job and the ones after it: the finished jobs' mean time a
        job (launch overheads included) for each job not finished, less the time the running
        one has had, but never less than the jobs after it need. None before a job finished
        or when the sweep's size is not known."""
        if not self.finished or self.total is None:
            return None
        done = len(self.finished)
        last = max(self.finished)
        per_job = (last - self.started) / done
        todo = max(self.total - done, 0)
        if todo == 0:
            return 0.0
        return max(per_job * (todo - 1), per_job * todo - max(0.0, now - last))

    def text(self, now: float | None = None) -> str:
        """`job 2 of 3, 41 s elapsed, about 40 s left`; a racing round says so first."""
        now = time.time() if now is None else now
        head = ""
        if self.round is not None:
            head = f"round {self.round}, {self.running} of {self.points} points still running: "
        where = f"job {self.job} of {self.total}" if self.total else f"job {self.job}"
        out = f"{head}{where}, {duration(self.elapsed(now))} elapsed"
        left = self.left(now)
        if left is not None:
            out += f", about {duration(left)} left"
        return out


def duration(seconds: float) -> str:
    """`41 s`, `3 min 05 s`, `1 h 02 min`: a progress line's durations."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def sweep_progress(sweep_dir: Path, job_num: int, total: int | None) -> SweepProgress:
    """Job `job_num` (Hydra's number) of a sweep of `total` jobs (None: unknown), from the
    sweep folder; a round plan written by the sweeper takes precedence."""
    multirun = sweep_dir / MULTIRUN_FILE
    started = multirun.stat().st_mtime if multirun.exists() else time.time()
    plan = read_plan(sweep_dir)
    if plan is not None and job_num in plan["jobs"]:
        return SweepProgress(
            job=plan["jobs"].index(job_num) + 1,
            total=len(plan["jobs"]),
            started=plan["started"],
            finished=_finished(sweep_dir, plan["jobs"], plan["started"]),
            round=plan["round"],
            running=plan["running"],
            points=plan["points"],
        )
    jobs = range(total) if total is not None else range(job_num)
    return SweepProgress(
        job=job_num + 1,
        total=total,
        started=started,
        finished=_finished(sweep_dir, [j for j in jobs if j != job_num], started),
    )


def _finished(sweep_dir: Path, jobs: Sequence[int], since: float) -> tuple[float, ...]:
    """When each of `jobs` wrote its result.json, for those written since `since`."""
    out = []
    for j in jobs:
        try:
            t = (sweep_dir / str(j) / RESULT_FILE).stat().st_mtime
        except OSError:
            continue
        if t >= since:
            out.append(t)
    return tuple(sorted(out))


def write_plan(sweep_dir: Path, plan: RoundPlan) -> None:
    atomic_write_text(sweep_dir / PLAN_FILE, json.dumps(plan))


def read_plan(sweep_dir: Path) -> RoundPlan | None:
    try:
        data = json.loads(bounded.read_text(sweep_dir / PLAN_FILE))
    except (OSError, ValueError, UserError):
        return None  # as if none was written: the plan only shows progress
    keys = ("round", "jobs", "running", "points", "started")
    if not isinstance(data, dict) or any(k not in data for k in keys):
        return None
    return RoundPlan(
        round=int(data["round"]),
        jobs=[int(j) for j in data["jobs"]],
        running=int(data["running"]),
        points=int(data["points"]),
        started=float(data["started"]),
    )

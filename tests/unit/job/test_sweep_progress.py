"""The sweep's progress line: job i of N, elapsed, and the time left from the jobs done,
read from the sweep folder as every launcher leaves it (multirun.yaml, result.json files)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchkit.job.sweep_progress import (
    MULTIRUN_FILE,
    SweepProgress,
    duration,
    read_plan,
    sweep_progress,
    write_plan,
)


def test_no_estimate_before_a_job_finished() -> None:
    p = SweepProgress(job=1, total=3, started=100.0)
    assert p.left(130.0) is None
    assert p.text(130.0) == "job 1 of 3, 30 s elapsed"


def test_the_estimate_is_the_mean_job_for_each_job_left_less_the_running_ones_time() -> None:
    # Job 1 took 60 s; job 2 has run 20 s: 60 - 20 for it, 60 for job 3.
    p = SweepProgress(job=2, total=3, started=0.0, finished=(60.0,))
    assert p.left(60.0) == pytest.approx(120.0)
    assert p.left(80.0) == pytest.approx(100.0)
    # A running job slower than the mean never eats into the jobs after it.
    assert p.left(200.0) == pytest.approx(60.0)
    assert p.text(80.0) == "job 2 of 3, 1 min 20 s elapsed, about 1 min 40 s left"


def test_an_unknown_size_says_the_job_and_the_elapsed_time_only() -> None:
    p = SweepProgress(job=4, total=None, started=0.0, finished=(10.0, 20.0, 30.0))
    assert p.left(40.0) is None
    assert p.text(40.0) == "job 4, 40 s elapsed"


def test_durations() -> None:
    assert [duration(x) for x in (0.4, 59.4, 61, 3599, 3600 + 125)] == [
        "0 s",
        "59 s",
        "1 min 01 s",
        "59 min 59 s",
        "1 h 02 min",
    ]


def _touch(path: Path, t: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    os.utime(path, (t, t))


def test_the_folder_gives_the_start_and_the_jobs_finished_in_this_launch(tmp_path: Path) -> None:
    _touch(tmp_path / MULTIRUN_FILE, 1000.0)
    _touch(tmp_path / "0" / "result.json", 1040.0)
    # Job 2's result is from an earlier launch into the same folder: not finished in this one.
    _touch(tmp_path / "2" / "result.json", 900.0)
    p = sweep_progress(tmp_path, job_num=1, total=3)
    assert (p.job, p.total, p.started, p.finished) == (2, 3, 1000.0, (1040.0,))
    assert p.left(1050.0) == pytest.approx(70.0)


def test_a_round_plan_gives_the_rounds_jobs_and_the_points_still_running(tmp_path: Path) -> None:
    _touch(tmp_path / MULTIRUN_FILE, 1000.0)
    write_plan(
        tmp_path, {"round": 2, "jobs": [1, 4, 5], "running": 3, "points": 6, "started": 2000.0}
    )
    assert read_plan(tmp_path) == {
        "round": 2,
        "jobs": [1, 4, 5],
        "running": 3,
        "points": 6,
        "started": 2000.0,
    }
    _touch(tmp_path / "1" / "result.json", 2030.0)
    p = sweep_progress(tmp_path, job_num=4, total=None)
    assert p.text(2040.0) == (
        "round 2, 3 of 6 points still running: job 2 of 3, 40 s elapsed, about 50 s left"
    )
    # A job outside the round's plan (another sweeper's folder state) falls back to the grid.
    assert sweep_progress(tmp_path, job_num=3, total=6).total == 6


def _multirun(folder: Path, target: str, task: list[str], params: dict[str, str]) -> Path:
    from omegaconf import OmegaConf

    sweeper = {"_target_": target, "params": params}
    cfg = {"hydra": {"sweeper": sweeper, "overrides": {"task": task}}}
    folder.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(OmegaConf.create(cfg), folder / MULTIRUN_FILE)
    return folder


BASIC = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
RACING = "hydra_plugins.benchkit_racing.racing_sweeper.RacingSweeper"


def test_the_basic_sweepers_size_is_the_product_of_its_sweeps(tmp_path: Path) -> None:
    from benchkit.app import sweep_size

    one = _multirun(tmp_path / "a", BASIC, ["slots=1,2,4", "backend=cpu"], {"mtp": "false,true"})
    assert sweep_size(one) == 6
    # The command line's sweep of a key replaces the config's params for it, as in Hydra.
    two = _multirun(tmp_path / "b", BASIC, ["slots=1,2"], {"slots": "1,2,4,8"})
    assert sweep_size(two) == 2
    ranged = _multirun(tmp_path / "c", BASIC, ["slots=range(1,5)"], {})
    assert sweep_size(ranged) == 4
    # Racing decides its jobs round by round; nothing to count in advance.
    assert sweep_size(_multirun(tmp_path / "d", RACING, ["slots=1,2"], {})) is None
    assert sweep_size(tmp_path / "none") is None

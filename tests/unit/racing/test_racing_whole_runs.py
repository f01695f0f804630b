"""A race that extends a point adds whole rounds of its slots: the H100 race's third session
asked 4 units of 2-slot points that had 3, so each ran its fourth unit alone on a fresh server
(jobs 5, 14 and 15: 22-23% of their slot-time idle); such a point is now asked for 5."""

from __future__ import annotations

import json
from pathlib import Path

from benchkit.paths import repo_root
from benchkit.racing.policy import RaceSettings
from benchkit.racing.run import Race
from benchkit.results.trust import sign

GRID = [["slots=2", "backend=cuda"], ["slots=1", "backend=cuda"]]


def _race(tmp_path: Path, done: dict[str, int]) -> Race:
    for job, units in done.items():
        (tmp_path / job).mkdir()
        result = {
            "status": "complete",
            "metrics": {"units_completed": units, "wall_s": 10.0 * units},
            "provenance": {"overrides": [*GRID[int(job)], f"workload.units={units}"]},
        }
        # Signed as a job signs it: a race takes only results that prove themselves.
        result["provenance"]["digest"] = sign(result, tmp_path / job)
        (tmp_path / job / "result.json").write_text(json.dumps(result))
    return Race(
        grid=GRID,
        swept=["slots"],
        sweep_dir=tmp_path,
        settings=RaceSettings(),
        study={"objective": "throughput"},
        fixture=str(repo_root() / "fixtures" / "workloads" / "gpu-16"),
        slots=[2, 1],
    )


def test_an_odd_job_on_two_slots_is_extended_by_a_whole_round(tmp_path: Path) -> None:
    race = _race(tmp_path, {"0": 3})
    assert race._whole_run("0", 4) == 5
    assert race._whole_run("0", 6) == 7
    # No job yet, or one slot: as asked.
    assert race._whole_run("1", 3) == 3


def test_the_workloads_end_caps_the_last_run(tmp_path: Path) -> None:
    race = _race(tmp_path, {"0": 15})
    assert race._whole_run("0", 16) == 16

"""A real racing sweep (hydra/sweeper=racing) on the CPU llama-server with the synthetic
tiny-mtp model: a point stopped after its first round, jobs extended without measuring their
units again, the report's wording, and a race stopped by Ctrl-C mid-round then resumed.

Robust on a loaded 2-core machine by construction: the stopped points draft 8 tokens per step
with MTP on random weights (acceptance near zero), about 5x (idle machine) to hundreds of times
(loaded) slower on every unit than MTP off; the margin is 50%. A unit is three calls of ~192
tokens (~0.3 s with MTP off on an idle machine), long enough that a scheduler stall of tens of
milliseconds moves it by a few percent: with 24-token calls a unit took 0.06 s, one stall made
it 5x slower, and CI once saw a 3-unit MTP pair too spread to stop in round 1. The
extension must not hang on timing either: the sweep lists the MTP-off point twice, so its
twin reuses its result (the resume mechanism: same resume key), the pair's ratio is exactly 1
on every unit, neither is ever stopped, and with settle=false the race runs them on to
max_units: the MTP-off job is extended in every run. The workload has 6 units, so the
extension is 3 units (9 calls) and the Ctrl-C after its first call lands inside it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import lines, result, run, start, wait_for

pytestmark = pytest.mark.slow

RECIPE = {
    "name": "race-6",
    "description": "Four short units for the racing test.",
    "seed": 5,
    "units": 6,
    "calls_per_unit": [3, 3],
    "roles": ["ask"],
    "system_len": {"mean": 24.0, "sigma": 0.1, "min": 16, "max": 32},
    "data_len": {"mean": 24.0, "sigma": 0.1, "min": 16, "max": 32},
    "prompt_mean": 64.0,
    "prompt_max": 128,
    "completion_len": {"mean": 192.0, "sigma": 0.05, "min": 176, "max": 208},
    "cap": 224,
    "capped_share": 0.0,
    "carry": {"from_seq": 9, "max_outputs": 1},
    "unique_sigma": 0.5,
    "unique_min": 4,
    "total_calls": None,
    "target_prompt_tokens": None,
    "output_policy": "replay",
    "format": 1,
}


def _fixture(tmp: Path) -> Path:
    recipe = tmp / "recipe.json"
    recipe.write_text(json.dumps(RECIPE))
    out = tmp / "race-6"
    cmd = [sys.executable, "-m", "benchkit.workload", "synth", "--recipe", str(recipe)]
    subprocess.run(
        [*cmd, "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def _args(fixture: Path, sweep: Path) -> tuple[str, ...]:
    return (
        "-m",
        "hydra/sweeper=racing",
        "model=tiny-mtp",
        f"workload.fixture={fixture}",
        "server.mtp_draft_max=8",
        # Three slots: a round gives a point a whole number of units a slot, so the rounds
        # are of 3 units, then 3 more (max_units 6): the second round's 9 calls leave the
        # Ctrl-C below time to land inside it (with a 1-unit round CI once saw the race end
        # first). At the default 4 slots round 1 would hold 4 of the 6 units.
        "slots=3",
        "quality.probe=false",
        "mtp=false,true",
        "telemetry.interval_s=0.2,0.2",
        "hydra.sweeper.min_units=3",
        "hydra.sweeper.units_per_round=1",
        "hydra.sweeper.max_units=6",
        "hydra.sweeper.margin=0.5",
        "hydra.sweeper.settle=false",
        f"hydra.sweep.dir={sweep}",
    )


def _race(sweep: Path) -> dict[str, Any]:
    return dict(json.loads((sweep / "racing.json").read_text()))


def test_racing_sweep_stops_extends_reports_and_resumes(tmp_path: Path) -> None:
    fixture = _fixture(tmp_path)
    sweep = tmp_path / "race"
    args = _args(fixture, sweep)
    proc = start(*args, cwd=tmp_path)
    # Round 1 ends when racing.json holds a launch of each of the 4 points (it is written as
    # the race goes, from the first launch); round 2 extends the MTP-off jobs.
    wait_for(
        lambda: (sweep / "racing.json").exists() and len(_race(sweep)["launches"]) == 4,
        600,
        "the first round",
    )
    first_round = {j: lines(sweep / j / "calls.jsonl") for j in ("0", "1", "2", "3")}
    assert all(len(c) == 9 for c in first_round.values()), {
        j: len(c) for j, c in first_round.items()
    }
    wait_for(
        lambda: any(len(lines(sweep / j / "calls.jsonl")) > 9 for j in ("0", "1")),
        300,
        "a call of round 2",
    )
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    # An extension cut in its unit leaves the earlier run as it was (its calls, its result);
    # one that ended before the signal is complete with its extra unit.
    for j in ("0", "1"):
        r = result(sweep / j)
        calls = lines(sweep / j / "calls.jsonl")
        assert r["status"] == "complete", (j, r["reason"])
        assert calls[:9] == first_round[j]
        assert r["metrics"]["units_completed"] == len(calls) // 3 in (3, 6), (j, len(calls))

    # The same command again, into the same folder: the race goes on where it stopped.
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    race = _race(sweep)
    assert race["finished"] is True  # ended by its own rule (max_units), not stopped
    points = race["points"]
    by_mtp = {j: pt["factors"]["mtp"].lower() == "true" for j, pt in points.items()}
    extended: list[str] = []
    for j, mtp in by_mtp.items():
        pt = points[j]
        r = result(sweep / j)
        assert r["status"] == "complete", (j, r["reason"])
        if mtp:
            assert pt["status"] == "stopped", pt
            # Stopped after round 1, or round 2 when its MTP on/off pair was still open after 3
            # units (a load stall in 3 units widens the interval; seen on a loaded machine).
            assert pt["units_compared"] in (3, 6) and pt["units"] in (3, 6)
            assert pt["ratio"] > 1.5
            assert r["metrics"]["units_completed"] == pt["units"]
        else:
            assert pt["status"] in ("best", "undecided"), pt
            assert r["metrics"]["units_completed"] == 6
            # Extended, never measured again: round 1's calls are still the job's first ones.
            calls = lines(sweep / j / "calls.jsonl")
            assert calls[:9] == first_round[j]
            if "reused_from" in r["provenance"]:  # the twin: its copy of the extended job
                continue
            extended.append(j)
            runs = r["provenance"]["extended"]
            assert len(runs[0]["units"]) == 3
            assert sum(len(x["units"]) for x in runs) == 6
            # Telemetry and the server's counters are the whole job's, both runs joined: the
            # sampler's windows span its wall clock, and the tokens the server counted are
            # the tokens every call of both runs was answered with.
            m = r["metrics"]
            assert m["telemetry"]["window_s"] >= 0.95 * m["wall_s"], m["telemetry"]
            assert m["server_cpu_share"] is not None
            assert m["server"]["tokens_predicted"] == sum(c["completion_tokens"] for c in calls)
            assert m["server"]["prompt_tokens"] == m["prompt_tokens_evaluated"]
    assert len(extended) == 1, extended
    # Equal when the MTP pairs stayed open to max_units (3 units may not place the ratio against
    # the margin's bounds).
    assert race["spent_s"] <= race["full_grid_s"]
    # Machine time counts every launch, the interrupted run's too (kept in racing.json): the
    # resumed run launches the extended job once at most, so two launches mean the first
    # run's were kept.
    assert race["launches"][extended[0]] >= 2, race["launches"]
    # (Below the replays' sum here: a twin's copied result took no machine time.)
    assert race["machine_s"] > 0 and race["full_grid_machine_s"] > 0
    report = (sweep / "report" / "report.md").read_text()
    assert "## Racing: points stopped early" in report
    assert report.count("stopped after 3 units: ") + report.count("stopped after 6 units: ") == 2
    assert "the time of MTP off" in report and "longer at 95% confidence)" in report
    assert "for the full grid" in report and "server starts included" in report
    # A stopped point is decided: its job is complete with the units asked of it, and the
    # MTP verdict stands on it. (The twin's duplicate value is what the planned space lists
    # as not run: a sweep that names one value twice plans one point.)
    assert "(incomplete)" not in report
    # With random weights' drafts rejected, the row says it measured drafting's cost.
    assert "| MTP | hurt" in report

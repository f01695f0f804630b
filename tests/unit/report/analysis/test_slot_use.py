"""The share of slot-time idle while the server had work (report.analysis.slot_use): the H100 race's
2-slot MTP jobs ran 3 units, then 1 alone in an extension, and their seconds per unit held
that idle slot without the report saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchkit.paths import repo_root
from benchkit.report.analysis.slot_use import call_windows, idle_slot_share, unit_windows

STUDY = repo_root() / "docs" / "studies" / "h100-vulkan-vs-cuda-warm" / "results"


def test_whole_rounds_leave_no_slot_idle() -> None:
    assert idle_slot_share([(0, 10), (0, 10), (10, 20), (10, 20)], 2) == 0.0


def test_a_unit_alone_on_two_slots_leaves_half_the_slot_time_of_its_span_idle() -> None:
    # Two units together for 10 s, then one alone for 10 s: 10 of 40 slot-seconds idle.
    assert idle_slot_share([(0, 10), (0, 20)], 2) == pytest.approx(0.25)


def test_the_gap_between_a_raced_jobs_runs_is_not_idle_time() -> None:
    # Two runs of one whole round each, a minute apart (a server start between them).
    assert idle_slot_share([(0, 10), (0, 10), (70, 80), (70, 80)], 2) == 0.0


def test_one_slot_has_no_idle_slot_figure() -> None:
    assert idle_slot_share([(0, 10)], 1) is None
    assert idle_slot_share([], 4) is None


def test_the_h100_race_2_slot_mtp_jobs_stand_out() -> None:
    shares = {j: idle_slot_share(unit_windows(STUDY / j / "calls.jsonl"), 2) for j in ("14", "15")}
    four = idle_slot_share(unit_windows(STUDY / "16" / "calls.jsonl"), 4)  # 4 units, one run
    assert four is not None and all(s is not None and s > 2 * four for s in shares.values())


def test_open_loop_slots_fill_with_calls_not_units(tmp_path: Path) -> None:
    """Under open-loop load a unit is no lane: its calls arrive on the schedule and may run at
    once. Two calls of one unit, then two of another, kept both of 2 slots busy; counted by
    unit windows, half the slot-time idled (#45: 47% idle where the calls left 6%)."""
    calls = [
        {"unit": "a", "t_sent": 0.0, "t_done": 10.0},
        {"unit": "a", "t_sent": 0.0, "t_done": 10.0},
        {"unit": "b", "t_sent": 10.0, "t_done": 20.0},
        {"unit": "b", "t_sent": 10.0, "t_done": 20.0, "cut": True},  # held its slot until cut
        {"unit": "b", "t_sent": 20.0, "t_done": None},  # no time: left out
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    assert len(call_windows(path)) == 4
    assert idle_slot_share(call_windows(path), 2) == 0.0
    assert idle_slot_share(unit_windows(path), 2) == pytest.approx(0.5)

"""The results table says which of its figures are restated: a raced point's seconds per unit
on the race's units (the H100 study's job 0: 8.0 s beside a slot latency of 7.8 s), and figures
without cold starts (the H200 study's job 0: 9.7 s beside output tok/s as measured)."""

from __future__ import annotations

from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.time_rows import rows_note as _rows_note

STUDIES = repo_root() / "docs" / "studies"


def test_a_raced_sweep_says_its_objective_is_on_its_machines_units() -> None:
    note = _rows_note(analyse_folder(STUDIES / "h100-vulkan-vs-cuda-warm" / "results"), "en")
    assert "stated on the units its machine's points ran" in note and "cold starts" not in note


def test_cold_starts_left_out_are_named_under_the_table() -> None:
    note = _rows_note(analyse_folder(STUDIES / "h200-vulkan-vs-cuda" / "results"), "ko")
    assert "콜드 스타트" in note and "0" in note


def test_a_plain_sweep_has_no_note() -> None:
    assert (
        _rows_note(analyse_folder(STUDIES / "h200-glm4moe-30b-a3b-decode" / "results"), "en") == ""
    )

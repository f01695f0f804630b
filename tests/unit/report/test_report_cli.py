"""`python -m benchkit.report`'s command-line mistakes, each one sentence naming the thing and
the fix (review 6's hostile user), and a report of one job that completed alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.paths import repo_root
from benchkit.report.__main__ import main

QWEN = repo_root() / "docs" / "studies" / "h200-qwen3-30b-a3b" / "results"


def test_options_without_a_folder_ask_for_the_folder(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--out", "x"])
    err = capsys.readouterr().err
    assert "error: give the run or sweep folder to report on" in err and "required" not in err


def test_a_missing_baseline_is_named_as_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(QWEN), "--out", str(tmp_path / "r"), "--baseline", "/nonexistent"]) == 2
    assert "--baseline /nonexistent is not a folder" in capsys.readouterr().err


def test_two_anchor_folders_with_a_space_are_told_to_use_a_comma(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(QWEN), "--out", str(tmp_path / "r"), "study.anchors=[a b]"]) == 2
    assert "separated by a comma: study.anchors=[a,b]" in capsys.readouterr().err


def test_one_job_of_a_planned_grid_leaves_no_hole_in_the_prose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(QWEN / "0"), "--out", str(tmp_path / "r")]) == 0
    assert "hole" not in capsys.readouterr().err
    md = (tmp_path / "r" / "report.md").read_text()
    assert "1 slot is the only count that completed, not a conclusion" in md

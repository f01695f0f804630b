"""A report's command-line mistakes each give one sentence naming the thing and the fix
(review 4 tried them as a user would): a study folder given for its results/, a misspelt
study setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import resolve_study
from benchkit.results.store import find_results

STUDY = repo_root() / "docs" / "studies" / "h200-qwen3-30b-a3b"


def test_a_study_folder_names_its_results_folder() -> None:
    with pytest.raises(UserError, match=r"its results/ folder is: .*h200-qwen3-30b-a3b/results"):
        find_results(STUDY)


def test_a_misspelt_study_setting_names_the_nearest(tmp_path: Path) -> None:
    results = find_results(STUDY / "results")
    with pytest.raises(UserError, match=r"study\.knee_gan is not a study setting \(did you mean "
                       r"study\.knee_gain\?\)"):  # fmt: skip
        resolve_study(results, ["study.knee_gan=0.1"])
    # The settings themselves (a file that listed five of them was named before).
    with pytest.raises(UserError, match=r"study\.zzz is not a study setting: the study settings"
                       r" are anchors, .*noise, .*quality"):  # fmt: skip
        resolve_study(results, ["study.zzz=1"])


def test_a_negative_margin_and_the_results_folder_as_its_own_anchor_are_refused() -> None:
    results = find_results(STUDY / "results")
    with pytest.raises(UserError, match=r"study\.knee_gain=-0\.05 is not a share between 0 and 1"):
        resolve_study(results, ["study.knee_gain=-0.05"])
    from benchkit.report.analysis.anchors import load_anchors

    with pytest.raises(UserError, match="the results folder itself"):
        load_anchors(STUDY / "results", ["."], ["slots"], "s_per_unit_throughput")


def test_an_anchor_inside_the_results_folder_or_used_for_nothing_is_refused(
    tmp_path: Path,
) -> None:
    """A hostile user's `study.anchors=[./0]` (a job of the sweep itself) and a folder whose
    jobs ran several passes each were accepted and used for nothing, the report as if no
    anchor had been given."""
    from benchkit.report.analysis.anchors import load_anchors

    with pytest.raises(UserError, match="inside the results folder"):
        load_anchors(STUDY / "results", ["./0"], ["slots"], "s_per_unit_throughput")
    import shutil

    repeats = tmp_path / "repeats" / "0"
    shutil.copytree(STUDY / "results" / "0", repeats)
    result = repeats / "result.json"
    result.write_text(result.read_text().replace('"metrics": {', '"passes": [], "metrics": {', 1))
    with pytest.raises(UserError, match="no complete single-pass job with a figure to pair"):
        load_anchors(STUDY / "results", [str(repeats.parent)], ["slots"], "s_per_unit_throughput")

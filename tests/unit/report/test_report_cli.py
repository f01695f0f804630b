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


def test_study_overrides_are_read_as_hydras_command_line_reads_them() -> None:
    from benchkit.report.verdicts.folder import resolve_study
    from benchkit.results.store import find_results

    results = find_results(QWEN)
    # A mapping with or without a space after the colon, as Hydra's grammar takes both.
    for given in ("{changed:0.25}", "{changed: 0.25}"):
        study = resolve_study(results, [f"study.quality.limit={given}"])
        assert study.quality.limit == {"changed": 0.25}
    study = resolve_study(results, ["study.anchors=[../a,../b]", "study.title=A title"])
    assert study.anchors == ["../a", "../b"] and study.title == "A title"
    assert resolve_study(results, ["study.anchors=[]"]).anchors == []


def test_a_study_override_out_of_its_range_or_unreadable_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for arg, said in [
        # A share of answers cannot pass 1.
        ("study.quality.limit={changed: 2.5}", "study.quality.limit.changed=2.5 is out of range"),
        ("study.quality.limit.changed=2", "give a value between 0 and 1"),
        ("study.quality.limit={kld: -1}", "study.quality.limit.kld=-1.0 is out of range"),
        # A misspelt limit is named with the known ones, not taken for an SLO metric.
        ("study.quality.limit={changd: 0.25}", "no limit named 'changd' (did you mean changed?)"),
        ("study.anchors=[../a,../b", "opens a [ it does not close"),
        ("study.slo={ttft_ms_p99:2000", "opens a { it does not close"),
        ("study.noise=-1", "study.noise=-1.0 is out of range"),
        ("study.noise=.inf", "study.noise=inf is out of range"),
        ("study.noise=abc", "study.noise takes a number: 'abc' is not one"),
        ("study.projection_units=-5", "study.projection_units=-5 is out of range"),
        ("study.cap_limit=7", "study.cap_limit=7.0 is out of range"),
        ("study.slo={ttft_ms_p99: -3}", "study.slo.ttft_ms_p99=-3.0 is out of range"),
        ("study.quality.limit=0.3", "study.quality.limit takes a mapping"),
        ("study.title=a: b", "study.title takes text, which YAML read as a mapping"),
        ("study.title=@x", "is not a value the report can read"),
        ("study.anchors=[a],[b]", "is a sweep of several values"),
        ("study.=3", "names no study setting"),
        ("study.lang=", "study.lang needs a value"),
        ("study.untested={a: b}", "study.untested takes a list, not a mapping"),
        ("study.claims=[x]", "study.claims[0] takes a ClaimConfig, a mapping of its settings"),
        ("study.claims=[{factor: x}]", "'factor' is not a setting of a ClaimConfig"),
        # Once a TypeError traceback from the planned space.
        ("study.factors={slots: [1,2,{a: 1}]}", "study.factors.slots lists {'a': 1}"),
    ]:
        assert main([str(QWEN), "--out", str(tmp_path / "r"), arg]) == 2, arg
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (arg, err)
        assert err.count("\n") == 1 and "changd'" not in err.replace("'changd'", ""), err
        if "limit named" in said:
            assert "the limits are kld" in err and "study.slo" not in err

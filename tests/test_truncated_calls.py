"""A calls.jsonl cut short is not read as a whole job (the independent review of rules v8).

The review cut job 2's calls.jsonl of the published MTP study mid-line (69 of 140 lines): the
report paired the units of its first 68 calls as if they were whole units and its headline
turned ("No knee up to 8 slots, MTP ... made no difference at 4 slots"). Now a job whose file
holds fewer calls than its result.json counts, or any line that is not a call, gives nothing
drawn from its calls: its lines are named, and the verdicts are the intact study's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.headline import headline

STUDY = repo_root() / "docs" / "studies" / "h200-glm4moe-30b-a3b-mtp" / "results"


def _cut(folder: Path, job: str, lines: int) -> None:
    path = folder / job / "calls.jsonl"
    kept = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(kept[:lines]) + b"\n" + kept[lines][:50])


def test_a_cut_calls_file_is_named_and_changes_no_verdict(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(STUDY, folder)
    whole = analyse_folder(STUDY)
    _cut(folder, "2", 68)
    cut = analyse_folder(folder)
    assert cut.sweep.unreadable == {"2": [69, 70]}
    # Nothing of job 2's calls is paired: no per-unit times for the engine.
    assert not cut.sweep.spans.get("2") and not cut.sweep.unit_times.get("2")
    # Only the pair whose job lost its calls moves: with no per-unit times it is not decided,
    # and an effect is never read from an open figure (the CPU study's review); every other
    # verdict stands as it was.
    was = {v.factor: v.verdict for v in whole.verdicts}
    now = {v.factor: v.verdict for v in cut.verdicts}
    assert list(now) == list(was) and {f for f in was if now[f] != was[f]} <= {"mtp"}
    # 8 slots is open in the whole study too since rules v15 (job 7 ran in a sweep of its
    # own, known only by its hardware profile: another machine state).
    assert now["mtp"] == [
        {"from": 1, "to": 2, "effect": "hurts"},
        {"from": 4, "to": None, "effect": "open"},
    ]
    by = {v.factor: v for v in cut.verdicts}
    assert "not decided at 4+ slots" in headline(by, "en", "unit")
    (cav,) = [c for c in cut.caveats if c["kind"] == "unreadable_calls"]
    assert cav["jobs"] == [{"job": "2", "lines": [69, 70]}]


def test_a_list_given_as_one_value_is_named_with_its_form(tmp_path: Path) -> None:
    """The review wrote study.anchors=/tmp/x and read OmegaConf's "AnyNode is not a
    ListConfig"; the sentence names the key and the form it takes."""
    with pytest.raises(UserError) as e:
        analyse_folder(STUDY, [f"study.anchors={tmp_path}"])
    assert (
        str(e.value) == "study.anchors takes a list: write study.anchors=[VALUE] (several: [A,B])."
    )


def test_an_anchor_folder_without_results_says_it_is_an_anchor(tmp_path: Path) -> None:
    with pytest.raises(UserError) as e:
        analyse_folder(STUDY, [f"study.anchors=[{tmp_path}]"])
    assert str(e.value).startswith(f"study.anchors names {tmp_path}: {tmp_path} holds no result")


def test_a_job_without_a_calls_file_is_not_called_cut_short() -> None:
    """Reference data (the seed's result.json files) have no calls.jsonl: nothing is drawn from
    calls, and no line is named unreadable."""
    seed = analyse_folder(repo_root() / "fixtures" / "results" / "seed-r9700")
    assert seed.sweep.unreadable == {}
    assert not [c for c in seed.caveats if c["kind"] == "unreadable_calls"]

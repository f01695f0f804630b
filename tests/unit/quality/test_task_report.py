"""The scored task's part of the Quality section (benchkit.report.writeup.task): task blocks written
here, as result.json keeps them, in English and Korean; no server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchkit.quality.task import wilson
from benchkit.report.analysis.quality import DriftSet
from benchkit.report.lang.i18n import point_text
from benchkit.report.writeup.task import task_view
from benchkit.results.store import JobResult


def _block(correct: int, items: int, sha: str = "a" * 64) -> dict[str, Any]:
    ci = wilson(correct, items)
    assert ci is not None
    return {
        "file": "task.jsonl", "task": "arith.yaml", "task_sha256": sha, "scorer": None,
        "items": items, "correct": correct, "accuracy": correct / items, "ci_low": ci[0],
        "ci_high": ci[1], "confidence": 0.95, "errors": 0, "first_error": None, "tokens": 32,
        "seconds": 0.1, "skipped": None,
    }  # fmt: skip


def _job(
    tmp: Path, name: str, kv: str, task: dict[str, Any] | None, synthetic: bool = False
) -> JobResult:
    data: dict[str, Any] = {
        "status": "complete",
        "factors": {"cache_type_k": kv},
        "provenance": {"model": {"synthetic": synthetic}},
        "metrics": {},
    }
    if task is not None:
        data["task"] = task
    return JobResult(tmp / name / "result.json", data)


def test_each_job_against_the_most_conservative_point(tmp_path: Path) -> None:
    jobs = [
        _job(tmp_path, "0", "f16", _block(40, 50)),
        _job(tmp_path, "1", "q4_0", _block(20, 50)),
        _job(tmp_path, "2", "q8_0", _block(39, 50)),
        _job(tmp_path, "3", "q5_0", None),
    ]
    view = task_view(jobs, DriftSet(), ["cache_type_k"], {}, "en", point_text)
    assert view.show and "job 0" in view.reference_text
    rows = {r["job"]: r for r in view.rows}
    assert (rows["0"]["accuracy"], rows["0"]["n"], rows["0"]["versus"]) == (
        "80.0%",
        "40/50",
        "the reference",
    )
    assert rows["1"]["versus"] == "−40.0 pp (the intervals do not overlap)"
    assert rows["2"]["versus"] == "−2.0 pp (the intervals overlap)"
    assert rows["3"]["note"] == "no task (measured without it)"
    ci = wilson(40, 50)
    assert ci is not None and rows["0"]["interval"] == f"{100 * ci[0]:.1f}%–{100 * ci[1]:.1f}%"
    assert not any("random weights" in n for n in view.notes)


def test_the_drifts_reference_is_the_tasks_when_it_ran_the_task(tmp_path: Path) -> None:
    jobs = [
        _job(tmp_path, "0", "f16", _block(5, 8)),
        _job(tmp_path, "1", "q8_0", _block(4, 8)),
    ]
    view = task_view(jobs, DriftSet(reference="1"), ["cache_type_k"], {}, "en", point_text)
    assert "job 1" in view.reference_text


def test_another_task_file_is_not_compared(tmp_path: Path) -> None:
    jobs = [
        _job(tmp_path, "0", "f16", _block(5, 8)),
        _job(tmp_path, "1", "q8_0", _block(4, 8, sha="b" * 64)),
    ]
    view = task_view(jobs, DriftSet(), ["cache_type_k"], {}, "en", point_text)
    assert view.rows[1]["versus"] == "another task file"
    assert any("same task file" in n for n in view.notes)


def test_no_task_no_section(tmp_path: Path) -> None:
    view = task_view([_job(tmp_path, "0", "f16", None)], DriftSet(), [], {}, "en", point_text)
    assert not view.show and not view.rows


def test_a_random_weight_model_is_said_to_say_nothing_in_korean_too(tmp_path: Path) -> None:
    jobs = [_job(tmp_path, "0", "f16", _block(0, 8), synthetic=True)]
    en = task_view(jobs, DriftSet(), [], {}, "en", point_text)
    ko = task_view(jobs, DriftSet(), [], {}, "ko", point_text)
    assert any("random weights" in n for n in en.notes)
    assert any("가중치가 무작위" in n for n in ko.notes)
    assert ko.rows[0]["versus"] == "대조 작업" and str(ko.rows[0]["interval"]).endswith("%")


def test_a_failed_item_and_a_skipped_task_are_noted(tmp_path: Path) -> None:
    failed = {**_block(3, 8), "errors": 2, "first_error": "TypeError: mine returned 'maybe'"}
    skipped = {
        "task": "arith.yaml",
        "task_sha256": "a" * 64,
        "skipped": "the server was not running",
    }
    jobs = [_job(tmp_path, "0", "f16", failed), _job(tmp_path, "1", "q8_0", skipped)]
    view = task_view(jobs, DriftSet(), ["cache_type_k"], {}, "en", point_text)
    assert view.rows[0]["note"] == "2 items failed (scored wrong): TypeError: mine returned 'maybe'"
    assert (view.rows[1]["accuracy"], view.rows[1]["note"]) == ("–", "the server was not running")

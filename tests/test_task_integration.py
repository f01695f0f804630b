"""The scored task, for real (benchkit.quality.task): a CPU job on the real llama-server with
the bundled task file and a scripted scorer, against the same job without the task, and a bad
task file that stops the run before anything is measured.

Marked slow where it builds (or reuses) llama-server and writes the synthetic tiny-moe model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchkit.paths import repo_root
from benchkit.quality.task import load_task, wilson
from tests.test_sweep_integration import run_benchkit

# One unit of the mini workload, one slot, a short drift probe.
SHORT = (
    "workload.units=1", "slots=1", "quality.prompts=2", "quality.tokens=4", "resume=false",
)  # fmt: skip
# By file path: the job runs in a folder of its own, where `tests` is no importable package.
SCORER = f"{repo_root() / 'tests' / 'unit' / 'quality' / 'task_scorers.py'}:numeric_items"


def _job(tmp_path: Path, name: str, *extra: str) -> tuple[Path, dict[str, Any]]:
    out = tmp_path / name
    proc = run_benchkit(*SHORT, *extra, f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads((out / "result.json").read_text())


@pytest.mark.slow
def test_the_task_is_scored_reported_and_in_no_timed_figure(tmp_path: Path) -> None:
    off_dir, off = _job(tmp_path, "off")
    on_dir, on = _job(tmp_path, "on", "quality.task=arith", f"quality.task_scorer={SCORER}")
    assert off["status"] == on["status"] == "complete", (off["reason"], on["reason"])
    assert "task" not in off
    # The scripted scorer is right on the number items whatever the random model said.
    task = load_task("arith")
    right = sum(i.scorer == "number" for i in task.items)
    t = on["task"]
    assert (t["items"], t["correct"], t["errors"], t["skipped"]) == (
        len(task.items),
        right,
        0,
        None,
    )
    assert (t["task"], t["task_sha256"], t["scorer"]) == ("arith.yaml", task.sha256, SCORER)
    ci = wilson(right, len(task.items))
    assert ci is not None and (t["ci_low"], t["ci_high"]) == (round(ci[0], 6), round(ci[1], 6))
    answers = [json.loads(x) for x in (on_dir / "task.jsonl").read_text().splitlines()]
    assert [a["item"] for a in answers] == list(range(1, len(task.items) + 1))
    assert all(isinstance(a["answer"], str) and a["error"] is None for a in answers)
    assert sum(a["score"] for a in answers) == right
    # In no timed figure: the same calls were timed with and without the task, the server's
    # own counters (read before the probe and the task) saw only the replay's tokens, and the
    # replay's wall clock leaves the probe's and the task's seconds out.
    m_off, m_on = off["metrics"], on["metrics"]
    for key in ("calls_planned", "calls_completed", "prompt_tokens", "completion_tokens"):
        assert m_on[key] == m_off[key], key
    assert len((on_dir / "calls.jsonl").read_text().splitlines()) == m_on["calls_completed"]
    assert len((off_dir / "calls.jsonl").read_text().splitlines()) == m_off["calls_completed"]
    assert m_on["server"]["tokens_predicted"] == m_off["server"]["tokens_predicted"]
    assert m_on["server"]["tokens_predicted"] == m_on["completion_tokens"]
    spent = m_on["wall_s"] + on["quality"]["seconds"] + t["seconds"]
    assert spent <= on["provenance"]["job_seconds"]
    # The report's task table, and what a random-weight model's score means.
    md = (on_dir / "report" / "report.md").read_text()
    part = md.split("### Scored task", 1)[1].split("\n## ", 1)[0]
    (row,) = [x for x in part.splitlines() if x.startswith("| on |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == f"{100 * right / len(task.items):.1f}%"
    assert cells[3] == f"{100 * ci[0]:.1f}%–{100 * ci[1]:.1f}%"
    assert cells[4] == f"{right}/{len(task.items)}"
    assert "random weights: its task score says nothing" in part
    assert "### Scored task" not in (off_dir / "report" / "report.md").read_text()


def test_a_bad_task_file_stops_the_run_before_any_timed_call(tmp_path: Path) -> None:
    bad = tmp_path / "task.yaml"
    bad.write_text("- prompt: 'What is 2 + 2?'\n  expected: '(unclosed'\n  scorer: regex\n")
    out = tmp_path / "run"
    proc = run_benchkit(*SHORT, f"quality.task={bad}", f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 1
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "failed"
    assert result["reason"].startswith(
        f"{bad}: item 1: expected '(unclosed' is not a valid regular"
    )
    assert result["reason"].endswith("fix the pattern.")
    assert result["metrics"].get("calls_completed") is None  # nothing was measured
    for name in ("calls.jsonl", "server.log", "quality.jsonl", "task.jsonl"):
        assert not (out / name).exists(), name

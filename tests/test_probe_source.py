"""quality.probe_source=task: the drift probe's prompts taken from the scored task's items, each
forcing a right answer (benchkit.quality.probe.task_probe_set), and the bundled real-question
task (fixtures/tasks/qa.yaml) whose answers its own scorers accept. No server."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.quality.probe import check_source, task_probe_set
from benchkit.quality.task import load_task, score


def _chars(text: str) -> list[int]:
    """A stand-in tokenizer: one token a character."""
    return [ord(c) for c in text]


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(body)
    return path


def test_the_bundled_qa_task_answers_are_right_by_its_own_scorers() -> None:
    task = load_task("qa")
    assert len(task.items) == 10
    for item in task.items:
        assert item.answer, item
        assert score(task, item, item.answer), item


def test_task_probes_force_each_items_right_answer(tmp_path: Path) -> None:
    task = load_task(
        str(
            _write(
                tmp_path,
                '- {prompt: "Q: 2+3?\\nA:", expected: 5, scorer: number, answer: " 5, of course"}\n'
                '- {prompt: "Q: capital?\\nA:", expected: "Paris", scorer: regex}\n'
                '- {prompt: "Q: 10/2?\\nA:", expected: 5, scorer: number}\n',
            )
        )
    )
    probes = task_probe_set(task, _chars, prompts=8, tokens=4)
    # The regex item has no answer written out, so nothing right to force: passed over.
    assert [c.unit for c, _, _ in probes.items] == ["task:1", "task:3"]
    (_, prompt, forced), (_, _, forced3) = probes.items
    assert prompt == _chars("Q: 2+3?\nA:")
    assert forced == _chars(" 5, ")  # the answer, at most `tokens` of it
    assert forced3 == _chars(" 5")  # a number item without one: its expected
    assert probes.greedy_tokens == 4 and probes.source == "task t.yaml"
    assert len(task_probe_set(task, _chars, prompts=1, tokens=4).items) == 1


def test_probe_source_task_needs_a_task_with_answers(tmp_path: Path) -> None:
    check_source("workload", None)
    with pytest.raises(UserError, match=r"quality\.task is empty"):
        check_source("task", None)
    only_regex = load_task(
        str(_write(tmp_path, '- {prompt: "Q?", expected: "x", scorer: regex}\n'))
    )
    with pytest.raises(UserError, match=r"no item of .* has a right answer to force"):
        check_source("task", only_regex)
    check_source("task", load_task("qa"))


def test_an_answer_must_be_text(tmp_path: Path) -> None:
    path = _write(tmp_path, '- {prompt: "Q?", expected: 1, scorer: number, answer: 1}\n')
    with pytest.raises(UserError, match="item 1: `answer` must be a non-empty string"):
        load_task(str(path))

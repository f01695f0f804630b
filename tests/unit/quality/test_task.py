"""The scored task's loading, checks, scorers and interval (benchkit.quality.task): task files
written here, a scripted scorer from task_scorers.py; no server."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.quality.task import (
    Task,
    TaskItem,
    TaskRecord,
    first_number,
    load_task,
    score,
    score_exact,
    score_number,
    score_regex,
    summarise,
    wilson,
)

# By file path: a user's scorer beside their task file is found the same way.
SCORERS = str(Path(__file__).with_name("task_scorers.py"))


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "task.yaml"
    p.write_text(text)
    return str(p)


def test_the_bundled_task_loads_by_name_with_every_scorer() -> None:
    task = load_task("arith")
    assert task.path.name == "arith.yaml" and len(task.sha256) == 64
    assert {i.scorer for i in task.items} == {"exact", "regex", "number"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("- prompt: a\n  expected: 1\n  scorer: fuzzy\n", ["item 1", "'fuzzy'", "exact"]),
        ("- prompt: a\n  expected: '(['\n  scorer: regex\n", ["item 1", "regular expression"]),
        ("- prompt: a\n  expected: five\n  scorer: number\n", ["item 1", "not a number"]),
        ("- prompt: a\n  scorer: exact\n", ["item 1", "no expected answer"]),
        ("- expected: 1\n  scorer: exact\n", ["item 1", "no prompt"]),
        ("- prompt: a\n  expected: 1\n  scorer: exact\n  tolerance: 1\n", ["number only"]),
        ("- prompt: a\n  expected: 1\n  scorer: number\n  tolerance: -1\n", [">= 0"]),
        ("- prompt: a\n  expected: 1\n  scorer: exact\n  anwser: 1\n", ["unknown key", "anwser"]),
        ("- prompt: a\n  expected: 1\n  scorer: exact\n  answer: 1\n", ["`answer` must be"]),
        (
            "- prompt: a\n  expected: 1\n  scorer: exact\n- just text\n",
            ["item 2", "not a mapping"],
        ),
        ("prompt: a\n", ["no items", "YAML list"]),
        ("- [unclosed\n", ["not valid UTF-8 YAML"]),
    ],
)
def test_a_bad_task_file_is_one_sentence_naming_the_file_and_the_fix(
    tmp_path: Path, text: str, words: list[str]
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UserError) as err:
        load_task(path)
    msg = str(err.value)
    assert msg.startswith(path) and "\n" not in msg
    for w in words:
        assert w in msg, msg


def test_a_missing_task_file_names_the_bundled_ones(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"quality.task=.*no such task file.*arith"):
        load_task(str(tmp_path / "nope.yaml"))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("no_such_module_here:f", ["cannot import no_such_module_here"]),
        (f"{SCORERS}:absent", ["has no function absent"]),
        (f"{SCORERS}:one_argument", ["two arguments"]),
        ("just_a_name", ["module:function"]),
        ("missing/file.py:f", ["does not exist"]),
    ],
)
def test_a_bad_scorer_is_refused_when_the_task_loads(spec: str, words: list[str]) -> None:
    with pytest.raises(UserError) as err:
        load_task("arith", spec)
    for w in words:
        assert w in str(err.value)


def test_a_scorer_from_a_file_path_loads(tmp_path: Path) -> None:
    f = tmp_path / "mine.py"
    f.write_text("def right(answer, item):\n    return answer.strip() == str(item.expected)\n")
    task = load_task("arith", f"{f}:right")
    item = TaskItem(prompt="p", expected=7, scorer="number")
    assert score(task, item, " 7 ") and not score(task, item, "8")


def test_a_custom_scorer_makes_the_items_scorer_optional(tmp_path: Path) -> None:
    path = _write(tmp_path, "- prompt: a\n  expected: x\n")
    with pytest.raises(UserError, match="item 1 has no scorer; add `scorer:` exact, regex, number"):
        load_task(path)
    task = load_task(path, f"{SCORERS}:numeric_items")
    assert task.items[0].scorer == "custom"


def test_exact_compares_the_first_line_stripped() -> None:
    assert score_exact(" 100\nand then more", "100")
    assert score_exact("\n\n  Paris  \n", " Paris")
    assert not score_exact("100 and more", "100")
    assert not score_exact("", "100")


def test_regex_searches_the_whole_answer() -> None:
    assert score_regex("well... Yes, it is", r"(?i)\byes\b")
    assert not score_regex("yesterday", r"\byes\b")


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("The answer is 5.", 5.0),
        ("-2, surely", -2.0),
        ("about 1,234.5 units", 1234.5),
        ("x=2.5e3", 2500.0),
        ("none here", None),
    ],
)
def test_the_first_number_of_an_answer(text: str, number: float | None) -> None:
    assert first_number(text) == number


def test_a_number_is_right_within_the_larger_tolerance() -> None:
    assert score_number("2.5", 2.5, 0.0, 0.0)
    assert not score_number("2.51", 2.5, 0.0, 0.0)
    assert score_number("2.51", 2.5, 0.01, 0.0)
    assert score_number("103", 100, 0.0, 0.05)  # 5% of 100
    assert not score_number("106", 100, 1.0, 0.05)
    assert not score_number("no number", 100, 1.0, 0.05)
    assert score_number("144", "144", 0.0, 0.0)  # an expected number written as a string


def test_an_items_tolerance_replaces_the_default(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "- {prompt: a, expected: 10, scorer: number, tolerance: 0.5}\n"
        "- {prompt: b, expected: 10, scorer: number}\n",
    )
    task = load_task(path, None, abs_tol=2.0)
    own, default = task.items
    assert not score(task, own, "11") and score(task, own, "10.4")
    assert score(task, default, "11.9") and not score(task, default, "12.1")


def test_the_scripted_scorer_scores_by_the_item() -> None:
    task = load_task("arith", f"{SCORERS}:numeric_items")
    verdicts = [score(task, i, "whatever the model said") for i in task.items]
    assert verdicts == [i.scorer == "number" for i in task.items] and any(verdicts)


def test_a_scorer_that_gives_no_verdict_fails_its_item() -> None:
    task = load_task("arith", f"{SCORERS}:says_maybe")
    with pytest.raises(TypeError, match="not True or False"):
        score(task, task.items[0], "5")


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Published Wilson 95% intervals (Newcombe 1998, Table I; Brown, Cai & DasGupta 2001).
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
    ],
)
def test_the_wilson_interval_matches_published_values(
    k: int, n: int, low: float, high: float
) -> None:
    ci = wilson(k, n)
    assert ci is not None
    assert math.isclose(ci[0], low, abs_tol=5e-5) and math.isclose(ci[1], high, abs_tol=5e-5)


def test_no_items_no_interval() -> None:
    assert wilson(0, 0) is None


def test_the_block_counts_scores_and_errors() -> None:
    task = Task(path=Path("t.yaml"), sha256="0" * 64, items=(), abs_tol=0.0, rel_tol=0.0)
    recs: list[TaskRecord] = [
        {"item": i, "prompt": "p", "answer": "a", "expected": 1, "scorer": "exact",
         "score": s, "error": e}
        for i, (s, e) in enumerate([(1, None), (1, None), (0, "TypeError: x"), (0, None)], 1)
    ]  # fmt: skip
    block = summarise(task, recs, 32, 1.5, "task.jsonl")
    assert (block["items"], block["correct"], block["accuracy"]) == (4, 2, 0.5)
    assert (block["errors"], block["first_error"]) == (1, "TypeError: x")
    ci = wilson(2, 4)
    assert ci is not None and (block["ci_low"], block["ci_high"]) == (
        round(ci[0], 6),
        round(ci[1], 6),
    )

"""Scripted scorers for the scored-task tests (quality.task_scorer): their verdicts follow the
items, not the model's answers, so a random-weight model still gives a known score."""

from __future__ import annotations

from benchkit.quality.task import TaskItem


def numeric_items(answer: str, item: TaskItem) -> bool:
    """Right exactly on the items the task file scores as numbers."""
    return item.scorer == "number"


def says_maybe(answer: str, item: TaskItem) -> str:
    """Not a verdict: the task records the item as an error, scored 0."""
    return "maybe"


def one_argument(answer: str) -> bool:
    """Takes too few arguments: refused when the task loads."""
    return True

"""The record types of SWEEP/quality/models.json: the reference file, each model file's
comparison with it, and the document that holds them (benchkit.quality.models writes it)."""

from __future__ import annotations

from typing import TypedDict


class ModelRef(TypedDict):
    model: str
    quant: str | None
    path: str


class ModelEntry(TypedDict, total=False):
    """One model file's line of models.json: its comparison with the reference, or why none."""

    model: str
    quant: str | None
    path: str
    jobs: list[str]
    status: str
    why: str | None
    detail: str | None
    reason: str | None
    command: list[str]
    seconds: float
    kld: dict[str, float]
    attempts: int


class ModelsDoc(TypedDict, total=False):
    """SWEEP/quality/models.json: the reference file, how it was chosen, the settings and
    build, the text, and every file's entry."""

    tool: str
    status: str
    why: str | None
    detail: str | None
    reason: str | None
    reference: ModelRef | None
    how: str
    settings: dict[str, int]
    models: list[ModelEntry]
    build: dict[str, object]
    key: str | None
    text: dict[str, object]
    base_command: list[str]

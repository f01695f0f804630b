"""Provide the draft model file that `spec=draft` starts llama-server with.

Resolved like the target model: the user's `spec.draft_model.path`, else its synthetic recipe
written into the cache (shared with any job that uses the same recipe as its target).
"""

from __future__ import annotations

from pathlib import Path

from benchkit.config import BenchConfig, SpecType
from benchkit.server.provide import model_file


def provide_draft_model(cfg: BenchConfig) -> Path | None:
    """The draft model's file when spec=draft, else None."""
    draft = cfg.spec.draft_model
    if cfg.spec.type is not SpecType.draft or draft is None:
        return None
    hint = "that shares the target's vocabulary"
    return model_file(draft, "spec.draft_model", "draft model", hint)

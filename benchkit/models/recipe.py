"""A synthetic model's recipe: the shapes, weight type and seed benchkit writes a GGUF from.

Kept apart from the writer (`benchkit.models.synthetic`, which needs numpy and gguf) so the
config schema can use the same class for `model.synthetic` without importing them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

# Bump when the bytes written for an unchanged recipe change (tensor set, KV keys,
# tokenizer, init), so cached files written by older code are not reused.
FORMAT_VERSION = 1

# Recipe fields added after FORMAT_VERSION 1, with the value that writes what version 1 wrote.
# At that value they stay out of recipe_key, so existing recipes keep their key and cached file.
_KEY_DEFAULTS_SINCE_V1: dict[str, int] = {"nextn_layers": 0, "n_shared_experts": 0}


# Not frozen: it is also the config's `model.synthetic` node, which overrides may set.
@dataclass
class SynthRecipe:
    """The shapes, weight type and seed of one synthetic model; every field goes into its key."""

    arch: str = "qwen3moe"
    n_layers: int = 2
    d_model: int = 128
    n_heads: int = 4
    n_kv_heads: int = 2
    head_dim: int = 32
    n_experts: int = 8
    n_experts_used: int = 2
    expert_ff: int = 64
    n_vocab: int = 320  # 256 byte tokens + BPE merges + 3 specials
    ctx_train: int = 65536  # holds 22k-token prompts + 4096 generated per slot
    dtype: str = "f32"  # f32 | f16 | q8_0
    seed: int = 0
    # NextN (MTP) blocks after the trunk: glm4moe only, and llama.cpp runs at most one.
    nextn_layers: int = 0
    # Always-active shared experts of width expert_ff each: glm4moe needs one or more
    # (its graph always runs the shared branch), qwen3moe has none.
    n_shared_experts: int = 0


def recipe_key(recipe: SynthRecipe) -> str:
    """A short hash of every recipe field and FORMAT_VERSION, stable across runs and machines.
    Here, not beside the writer: the report finds a synthetic model's recipe by it without
    importing numpy and gguf."""
    fields = asdict(recipe)
    for name, v1_value in _KEY_DEFAULTS_SINCE_V1.items():
        if fields[name] == v1_value:
            del fields[name]
    payload = json.dumps({"format": FORMAT_VERSION, **fields}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]

"""The KV cache a decode step reads, for the roofline (analysis.groundtruth). Pure.

One sequence's decode step reads, besides the active weights, the keys and values of every
earlier position of its context in every layer: layers x KV heads x (key + value head width) x
the cache type's bytes per element, times the context. A review would not sign a roofline that
counted the weights alone: that term grows with the context and is not small at long prompts.

The shape (layers, KV heads, head width) is known here for a model benchkit wrote itself: its
job records it from the recipe, and results from before that name the file by the hash of its
recipe (benchkit.models.recipe.recipe_key), whose recipe is found among benchkit's model
configs. Another model's shape is not recorded in
its results, so its KV term is not computed and the report says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from benchkit.models.recipe import SynthRecipe, recipe_key
from benchkit.paths import conf_dir
from benchkit.results.schema import ModelInfo

# Bytes per element of each KV cache type llama-server takes (--cache-type-k/-v): ggml's
# block size over its element count (q8_0: 34 bytes per 32 values).
CACHE_BYTES: dict[str, float] = {
    "f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32,
    "q5_0": 22 / 32, "q5_1": 24 / 32, "iq4_nl": 18 / 32,
}  # fmt: skip

_SYNTH_FILE = re.compile(r"synth-[a-z0-9]+-([0-9a-f]{12})\.gguf$")


@dataclass(frozen=True)
class ModelShape:
    """What the KV term and the embedding table's size need from a model's shape."""

    layers: int
    kv_heads: int
    head_dim: int
    n_vocab: int
    d_model: int


def model_shape(model: ModelInfo | None) -> ModelShape | None:
    """The shape of a synthetic model: as its job recorded it, else by the recipe hash its
    file is named by (results measured before the shape was recorded); None for any other
    model, or a hash no model config of this benchkit writes."""
    if model is None or not model.synthetic:
        return None
    r = model
    if r.n_layers and r.n_kv_heads and r.head_dim and r.d_model and r.n_vocab:
        return ModelShape(r.n_layers, r.n_kv_heads, r.head_dim, r.n_vocab, r.d_model)
    if not model.path:
        return None
    m = _SYNTH_FILE.search(model.path)
    return _recipes(str(conf_dir() / "model")).get(m.group(1)) if m else None


@lru_cache(maxsize=4)
def _recipes(folder: str) -> dict[str, ModelShape]:
    """Every synthetic recipe among the model configs, by its hash."""
    out: dict[str, ModelShape] = {}
    for f in sorted(Path(folder).glob("*.yaml")):
        node = (yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("synthetic")
        if not isinstance(node, dict):
            continue
        try:
            r = SynthRecipe(**node)
        except TypeError:
            continue
        # Only the trunk's layers: a NextN block's cache is read by drafting, not by a token
        # through the trunk (as the active parameters leave it out).
        shape = ModelShape(r.n_layers, r.n_kv_heads, r.head_dim, r.n_vocab, r.d_model)
        out[recipe_key(r)] = shape
    return out


def kv_bytes_per_position(shape: ModelShape, cache_k: object, cache_v: object) -> float | None:
    """Bytes of keys and values one context position holds across the layers; None for a cache
    type not in CACHE_BYTES."""
    k, v = CACHE_BYTES.get(str(cache_k).lower()), CACHE_BYTES.get(str(cache_v).lower())
    if k is None or v is None:
        return None
    return shape.layers * shape.kv_heads * shape.head_dim * (k + v)


def decode_context(prompt_tokens: Iterable[int], completion_tokens: Iterable[int]) -> float | None:
    """The mean context a decode step of these calls attended over, in positions. A call of p
    prompt and n generated tokens has its first token from the prompt pass and n - 1 decode
    steps, the i-th over p + i positions: (n - 1)(p + n / 2) positions in all. None without a
    decode step."""
    steps = positions = 0.0
    for p, n in zip(prompt_tokens, completion_tokens, strict=True):
        if n > 1:
            steps += n - 1
            positions += (n - 1) * (p + n / 2)
    return positions / steps if steps else None

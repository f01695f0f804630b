"""Quantized synthetic models: gguf-py's types directly, K-quants through llama-quantize, and
the model configs of the quantization sweep."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from pathlib import Path

import gguf
import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError
from benchkit.models.synthetic import SynthRecipe, find_quantize, param_counts, write_model

Compose = Callable[..., BenchConfig]
QUANT_FAMILY = ("small-moe", "small-moe-f16", "small-moe-q8_0", "small-moe-q4_k_m")


def _recipe(compose_cfg: Compose, model: str) -> SynthRecipe:
    synth = compose_cfg(f"model={model}").model.synthetic
    assert synth is not None
    return SynthRecipe(**dataclasses.asdict(synth))


def test_quant_family_differs_only_in_weight_type(compose_cfg: Compose) -> None:
    recipes = {m: _recipe(compose_cfg, m) for m in QUANT_FAMILY}
    base = recipes["small-moe"]
    for model, recipe in recipes.items():
        assert dataclasses.replace(recipe, dtype=base.dtype) == base, model
        cfg = compose_cfg(f"model={model}")
        assert cfg.model.name == model and cfg.model.quant.lower() == recipe.dtype
    for model in ("tiny-moe-f16", "tiny-moe-q8_0"):
        recipe = _recipe(compose_cfg, model)
        assert dataclasses.replace(recipe, dtype="f32") == _recipe(compose_cfg, "tiny-moe")


def test_k_quants_need_rows_of_whole_blocks() -> None:
    with pytest.raises(UserError, match="d_model=128 must be a multiple of 256 for q4_k_m"):
        param_counts(SynthRecipe(dtype="q4_k_m"))
    ok = SynthRecipe(d_model=256, n_heads=8, expert_ff=256, dtype="q4_k_m")
    assert param_counts(ok) == param_counts(dataclasses.replace(ok, dtype="f32"))


def test_a_missing_llama_quantize_is_one_clear_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHKIT_LLAMA_QUANTIZE", str(tmp_path / "nope"))
    with pytest.raises(UserError, match=r"BENCHKIT_LLAMA_QUANTIZE=.* is not a file"):
        find_quantize()


def _quantize_or_skip() -> Path:
    try:
        return find_quantize()
    except UserError as exc:
        pytest.skip(str(exc))


@pytest.mark.slow
def test_q4_k_m_is_deterministic_and_really_k_quantized(
    compose_cfg: Compose, tmp_path: Path
) -> None:
    quantize = _quantize_or_skip()
    recipe = _recipe(compose_cfg, "small-moe-q4_k_m")
    a = write_model(recipe, tmp_path / "a.gguf", quantize_bin=quantize)
    b = write_model(recipe, tmp_path / "b.gguf", quantize_bin=quantize)
    assert a.read_bytes() == b.read_bytes()
    reader = gguf.GGUFReader(a)
    types = {t.name: t.tensor_type for t in reader.tensors}
    q = gguf.GGMLQuantizationType
    assert types["blk.0.ffn_up_exps.weight"] == q.Q4_K
    # Norms and the router stay f32, as in real quantized GGUFs.
    assert types["blk.0.ffn_gate_inp.weight"] == q.F32
    assert types["output_norm.weight"] == q.F32
    # No tensor fell back to a legacy type for want of whole 256-wide blocks.
    assert not {q.Q4_0, q.Q4_1, q.Q5_0, q.Q5_1} & set(types.values())
    assert collections.Counter(types.values())[q.Q4_K] >= 6
    assert (
        a.stat().st_size
        < write_model(dataclasses.replace(recipe, dtype="f32"), tmp_path / "f32.gguf")
        .stat()
        .st_size
        / 5
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.gguf", "b.gguf", "f32.gguf"]

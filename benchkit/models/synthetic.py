"""Write a small random-weight MoE model as a GGUF that llama-server loads, from a recipe.

Integration tests and smoke runs need a real model file without downloading one. A
`SynthRecipe` names the shapes; the same recipe always gives a byte-identical file, kept in
the cache under a name derived from the recipe, so a sweep and its tests share one copy.
The weights are random, so the text is nonsense, but the compute per token is that of a real
model of the same shapes, which is what a serving benchmark measures.

Two architectures: `qwen3moe` (attention + routed experts) and `glm4moe` (GLM-4.5's: attention
with q/k/v biases + routed and shared experts), which may carry a NextN block, the extra layer
llama-server drafts with under `--spec-type draft-mtp`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import gguf
import numpy as np
import numpy.typing as npt

from benchkit.errors import UserError
from benchkit.models.recipe import FORMAT_VERSION as FORMAT_VERSION  # re-exported
from benchkit.models.recipe import SynthRecipe as SynthRecipe  # re-exported
from benchkit.models.recipe import recipe_key as recipe_key  # re-exported
from benchkit.models.tokenizer import N_BYTES as _N_BYTES
from benchkit.models.tokenizer import SPECIALS as _SPECIALS
from benchkit.models.tokenizer import add_tokenizer

log = logging.getLogger(__name__)


SUPPORTED_ARCHS: tuple[str, ...] = ("qwen3moe", "glm4moe")

# Types gguf-py can write from numpy without llama-quantize (K-quants need it).
_WEIGHT_TYPES: dict[str, gguf.GGMLQuantizationType] = {
    "f32": gguf.GGMLQuantizationType.F32,
    "f16": gguf.GGMLQuantizationType.F16,
    "q8_0": gguf.GGMLQuantizationType.Q8_0,
    # Random but valid Q4_K blocks written directly: a 17 GB model in a minute, where
    # numpy -> f16 -> llama-quantize takes tens of minutes. Same bytes per weight and the same
    # kernels as a real Q4_K tensor, so speed is what a Q4_K model's would be.
    "q4_k_random": gguf.GGMLQuantizationType.Q4_K,
}
# Types only llama-quantize writes (K-quants): the f32 model of the same recipe is written
# first and quantized with it. dtype -> llama-quantize's type name.
_QUANTIZE_TYPES: dict[str, str] = {
    "q2_k": "Q2_K",
    "q3_k_m": "Q3_K_M",
    "q4_k_s": "Q4_K_S",
    "q4_k_m": "Q4_K_M",
    "q5_k_m": "Q5_K_M",
    "q6_k": "Q6_K",
}
# K-quant super-block width (ggml's QK_K): a row of another width gets a fallback type.
_QK_K = 256
_FILE_TYPES: dict[str, gguf.LlamaFileType] = {
    "f32": gguf.LlamaFileType.ALL_F32,
    "f16": gguf.LlamaFileType.MOSTLY_F16,
    "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    "q4_k_random": gguf.LlamaFileType.MOSTLY_Q4_K_M,
}

# Small enough that activations stay far from overflow through the layers, even in f16.
_INIT_STD = 0.02
# Qwen3's values; random weights do not care, but the rope and norm kernels then run
# exactly as they do for the real model.
_ROPE_FREQ_BASE = 1_000_000.0
_RMS_EPS = 1e-6


@dataclass(frozen=True)
class _TensorSpec:
    name: str
    shape: tuple[int, ...]  # numpy order: the reverse of ggml's ne[]
    # "norm" (ones, f32) | "bias" (zeros, f32) | "router" (random, f32)
    # | "weight" (random, recipe dtype)
    kind: str
    per_expert: bool  # leading axis is the expert: only n_experts_used of them run per token
    nextn: bool = False  # part of the NextN block: only runs when drafting


def model_path_for(recipe: SynthRecipe, cache: Path) -> Path:
    """Where the model for `recipe` lives in the cache."""
    return cache / "models" / f"synth-{recipe.arch}-{recipe_key(recipe)}.gguf"


def param_counts(recipe: SynthRecipe) -> tuple[int, int]:
    """(total parameters, parameters active per token), from the tensor shapes written.

    Active counts every non-expert tensor (embeddings and output included, as model cards
    do) plus n_experts_used of the n_experts in each expert tensor. A NextN block counts in
    the total but not as active: a token through the trunk never reads it, only drafting does.
    """
    _validate(recipe)
    total = active = 0
    for spec in _tensor_plan(recipe):
        n = int(np.prod(spec.shape))
        total += n
        if spec.nextn:
            continue
        active += n // recipe.n_experts * recipe.n_experts_used if spec.per_expert else n
    return total, active


def write_model(recipe: SynthRecipe, path: Path, *, quantize_bin: Path | None = None) -> Path:
    """Write the model for `recipe` to `path`, atomically: readers see no file or a whole one.

    A K-quant dtype needs llama.cpp's `llama-quantize`: `quantize_bin`, else found by
    find_quantize().
    """
    _validate(recipe)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if recipe.dtype in _QUANTIZE_TYPES:
            _write_quantized(recipe, tmp, quantize_bin or find_quantize())
        else:
            _write_gguf(recipe, tmp)
        # A rename can reach the disk before the data does; a crash would then leave a
        # truncated model under the final name that ensure_model would trust.
        with tmp.open("rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def find_quantize() -> Path:
    """llama.cpp's llama-quantize: the `llama_quantize` key, else $BENCHKIT_LLAMA_QUANTIZE
    (benchkit.paths), else on PATH, else built beside benchkit's CPU llama-server in the cache."""
    from benchkit.paths import llama_quantize_setting

    setting = llama_quantize_setting()
    if setting:
        name, value = setting
        given = Path(value).expanduser()
        if not given.is_file():
            raise UserError(f"{name}={value} is not a file: point it at llama-quantize.")
        return given
    on_path = shutil.which("llama-quantize")
    if on_path:
        return Path(on_path)
    from benchkit.server.source import llama_root

    build = llama_root() / "build-cpu"
    binary = build / "bin" / "llama-quantize"
    if binary.is_file():
        return binary
    raise UserError(
        "K-quant synthetic models need llama.cpp's llama-quantize: build it with "
        f"`cmake --build {build} --target llama-quantize` or set llama_quantize=PATH."
    )


def _write_quantized(recipe: SynthRecipe, path: Path, quantize_bin: Path) -> None:
    """The f32 model of the recipe, quantized by llama-quantize into `path`."""
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".synth-f32-") as tmp:
        base = Path(tmp) / "f32.gguf"
        _write_gguf(replace(recipe, dtype="f32"), base)
        # One thread: the bytes do not depend on the thread count anyway, and the machine
        # may be measuring something else meanwhile.
        cmd = [str(quantize_bin), str(base), str(path), _QUANTIZE_TYPES[recipe.dtype], "1"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserError(f"llama-quantize failed (exit {proc.returncode}): {tail[0]}")


def ensure_model(recipe: SynthRecipe, cache: Path) -> Path:
    """The cached model for `recipe`, written first if absent; safe when processes race."""
    path = model_path_for(recipe, cache)
    # write_model only ever renames a complete file into place, so existence means done.
    if path.exists():
        return path
    _validate(recipe)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    with lock_path.open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            # Whoever held the lock before us may have written it meanwhile.
            if not path.exists():
                total, active = param_counts(recipe)
                log.info(
                    "writing synthetic %s (%d params, %d active) to %s",
                    recipe.arch,
                    total,
                    active,
                    path,
                )
                write_model(recipe, path)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return path


def _validate(recipe: SynthRecipe) -> None:
    """Refuse recipes llama.cpp would reject, each with one sentence naming the field."""
    if recipe.arch not in SUPPORTED_ARCHS:
        raise UserError(
            f"Synthetic model arch {recipe.arch!r} is not supported; "
            f"supported: {', '.join(SUPPORTED_ARCHS)}."
        )
    if recipe.dtype not in _WEIGHT_TYPES and recipe.dtype not in _QUANTIZE_TYPES:
        raise UserError(
            f"Synthetic model dtype {recipe.dtype!r} is not supported; "
            f"supported: {', '.join([*_WEIGHT_TYPES, *_QUANTIZE_TYPES])}."
        )
    sizes = {
        "n_layers": recipe.n_layers,
        "d_model": recipe.d_model,
        "n_heads": recipe.n_heads,
        "n_kv_heads": recipe.n_kv_heads,
        "head_dim": recipe.head_dim,
        "n_experts": recipe.n_experts,
        "n_experts_used": recipe.n_experts_used,
        "expert_ff": recipe.expert_ff,
        "ctx_train": recipe.ctx_train,
    }
    for field, value in sizes.items():
        if value < 1:
            raise UserError(f"Synthetic model {field}={value} must be at least 1.")
    if recipe.arch == "qwen3moe":
        # llama.cpp's qwen3moe loader has no place for these: the tensors would be extra.
        for field in ("nextn_layers", "n_shared_experts"):
            if getattr(recipe, field):
                raise UserError(
                    f"Synthetic model {field}={getattr(recipe, field)} needs arch=glm4moe; "
                    "qwen3moe has neither NextN layers nor shared experts."
                )
    if recipe.arch == "glm4moe":
        if recipe.n_shared_experts < 1:
            raise UserError(
                f"Synthetic model n_shared_experts={recipe.n_shared_experts} must be at least 1 "
                "for glm4moe: llama.cpp always runs its shared-expert branch."
            )
        # src/models/glm4-moe.cpp's MTP graph asserts exactly one NextN block.
        if recipe.nextn_layers not in (0, 1):
            raise UserError(
                f"Synthetic model nextn_layers={recipe.nextn_layers} must be 0 or 1 for "
                "glm4moe: llama.cpp drafts with a single NextN block."
            )
    if recipe.n_heads % recipe.n_kv_heads:
        raise UserError(
            f"Synthetic model n_heads={recipe.n_heads} must be a multiple of "
            f"n_kv_heads={recipe.n_kv_heads} (grouped-query attention)."
        )
    if recipe.n_experts_used > recipe.n_experts:
        raise UserError(
            f"Synthetic model n_experts_used={recipe.n_experts_used} must not exceed "
            f"n_experts={recipe.n_experts}."
        )
    # llama.cpp refuses a gpt2 tokenizer without merges, so at least one is needed.
    min_vocab = _N_BYTES + 1 + len(_SPECIALS)
    if recipe.n_vocab < min_vocab:
        raise UserError(
            f"Synthetic model n_vocab={recipe.n_vocab} must be at least {min_vocab} "
            f"(256 byte tokens, one merge, {len(_SPECIALS)} specials)."
        )
    if recipe.dtype == "q8_0":
        _check_row_blocks(recipe, gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q8_0][0], "")
    if recipe.dtype in _QUANTIZE_TYPES or recipe.dtype == "q4_k_random":
        # llama-quantize would quietly give such rows another type, and the file would not
        # be the quantization its name says.
        _check_row_blocks(recipe, _QK_K, f" (K-quant blocks are {_QK_K} wide)")


def _check_row_blocks(recipe: SynthRecipe, block: int, why: str) -> None:
    """UserError unless every quantized row length is a whole number of `block`-wide blocks."""
    rows = {
        "d_model": recipe.d_model,
        "n_heads*head_dim": recipe.n_heads * recipe.head_dim,
        "expert_ff": recipe.expert_ff,
    }
    for field, value in rows.items():
        if value % block:
            raise UserError(
                f"Synthetic model {field}={value} must be a multiple of {block} for "
                f"{recipe.dtype}{why}."
            )


def _tensor_plan(recipe: SynthRecipe) -> list[_TensorSpec]:
    """Exactly the tensors llama.cpp creates for the arch (src/models/qwen3moe.cpp,
    src/models/glm4-moe.cpp): one more or one fewer and loading fails."""
    embd = _TensorSpec(
        _tensor_name(gguf.MODEL_TENSOR.TOKEN_EMBD), (recipe.n_vocab, recipe.d_model), "weight",
        per_expert=False,
    )  # fmt: skip
    blocks = _glm4moe_blocks(recipe) if recipe.arch == "glm4moe" else _qwen3moe_blocks(recipe)
    return [embd, *blocks, *_output_tensors(recipe)]


def _qwen3moe_blocks(recipe: SynthRecipe) -> list[_TensorSpec]:
    t = gguf.MODEL_TENSOR
    name = _tensor_name
    d, e, ff = recipe.d_model, recipe.n_experts, recipe.expert_ff
    q_dim = recipe.n_heads * recipe.head_dim
    kv_dim = recipe.n_kv_heads * recipe.head_dim

    def spec(nm: str, shape: tuple[int, ...], kind: str = "weight") -> _TensorSpec:
        return _TensorSpec(nm, shape, kind, per_expert=False)

    plan: list[_TensorSpec] = []
    for i in range(recipe.n_layers):
        plan += [
            spec(name(t.ATTN_NORM, i), (d,), "norm"),
            spec(name(t.ATTN_Q, i), (q_dim, d)),
            spec(name(t.ATTN_K, i), (kv_dim, d)),
            spec(name(t.ATTN_V, i), (kv_dim, d)),
            spec(name(t.ATTN_OUT, i), (d, q_dim)),
            spec(name(t.ATTN_Q_NORM, i), (recipe.head_dim,), "norm"),
            spec(name(t.ATTN_K_NORM, i), (recipe.head_dim,), "norm"),
            spec(name(t.FFN_NORM, i), (d,), "norm"),
            # The router stays f32 as in converted Qwen3 models: its top-k choice is
            # sensitive to rounding.
            spec(name(t.FFN_GATE_INP, i), (e, d), "router"),
            _TensorSpec(name(t.FFN_GATE_EXP, i), (e, ff, d), "weight", per_expert=True),
            _TensorSpec(name(t.FFN_DOWN_EXP, i), (e, d, ff), "weight", per_expert=True),
            _TensorSpec(name(t.FFN_UP_EXP, i), (e, ff, d), "weight", per_expert=True),
        ]
    return plan


def _tensor_name(tensor: gguf.MODEL_TENSOR, bid: int | None = None, suffix: str = "weight") -> str:
    # gguf-py's names are llama.cpp's; taking them from it keeps the two in step.
    base = gguf.TENSOR_NAMES[tensor]
    return (base.format(bid=bid) if bid is not None else base) + "." + suffix


def _output_tensors(recipe: SynthRecipe) -> list[_TensorSpec]:
    t = gguf.MODEL_TENSOR
    d, v = recipe.d_model, recipe.n_vocab
    return [
        _TensorSpec(_tensor_name(t.OUTPUT_NORM), (d,), "norm", per_expert=False),
        # Untied output head, as in Qwen3-30B-A3B and GLM-4.5, so the last matmul costs what
        # it does there.
        _TensorSpec(_tensor_name(t.OUTPUT), (v, d), "weight", per_expert=False),
    ]


def _glm4moe_blocks(recipe: SynthRecipe) -> list[_TensorSpec]:
    """The trunk blocks then the NextN blocks of src/models/glm4-moe.cpp, as GLM-4.5-Air has
    them: q/k/v biases, no q/k norms, every block MoE (the real model's one leading dense
    block is left out: it changes no code path that serving exercises)."""
    t = gguf.MODEL_TENSOR
    nm = _tensor_name
    d, e, ff = recipe.d_model, recipe.n_experts, recipe.expert_ff
    q_dim = recipe.n_heads * recipe.head_dim
    kv_dim = recipe.n_kv_heads * recipe.head_dim
    sh_ff = ff * recipe.n_shared_experts

    def spec(name: str, shape: tuple[int, ...], kind: str = "weight") -> _TensorSpec:
        return _TensorSpec(name, shape, kind, per_expert=False)

    def experts(name: str, shape: tuple[int, ...]) -> _TensorSpec:
        return _TensorSpec(name, shape, "weight", per_expert=True)

    plan: list[_TensorSpec] = []
    for i in range(recipe.n_layers + recipe.nextn_layers):
        block = [
            spec(nm(t.ATTN_NORM, i), (d,), "norm"),
            spec(nm(t.ATTN_Q, i), (q_dim, d)),
            spec(nm(t.ATTN_K, i), (kv_dim, d)),
            spec(nm(t.ATTN_V, i), (kv_dim, d)),
            spec(nm(t.ATTN_Q, i, "bias"), (q_dim,), "bias"),
            spec(nm(t.ATTN_K, i, "bias"), (kv_dim,), "bias"),
            spec(nm(t.ATTN_V, i, "bias"), (kv_dim,), "bias"),
            spec(nm(t.ATTN_OUT, i), (d, q_dim)),
            spec(nm(t.ATTN_POST_NORM, i), (d,), "norm"),
            spec(nm(t.FFN_GATE_INP, i), (e, d), "router"),
            # GLM-4.5's sigmoid router adds this per-expert bias before its top-k choice.
            spec(nm(t.FFN_EXP_PROBS_B, i, "bias"), (e,), "bias"),
            experts(nm(t.FFN_GATE_EXP, i), (e, ff, d)),
            experts(nm(t.FFN_DOWN_EXP, i), (e, d, ff)),
            experts(nm(t.FFN_UP_EXP, i), (e, ff, d)),
            spec(nm(t.FFN_GATE_SHEXP, i), (sh_ff, d)),
            spec(nm(t.FFN_DOWN_SHEXP, i), (d, sh_ff)),
            spec(nm(t.FFN_UP_SHEXP, i), (sh_ff, d)),
        ]
        if i >= recipe.n_layers:
            # The MTP head: mixes the trunk's last hidden state with the next token's
            # embedding, then reuses tok_embd, output_norm and output (the optional
            # nextn.embed_tokens / shared_head_* tensors are left out, as llama.cpp allows).
            block += [
                spec(nm(t.NEXTN_EH_PROJ, i), (d, 2 * d)),
                spec(nm(t.NEXTN_ENORM, i), (d,), "norm"),
                spec(nm(t.NEXTN_HNORM, i), (d,), "norm"),
            ]
            block = [replace(x, nextn=True) for x in block]
        plan += block
    return plan


def _tensor_type(recipe: SynthRecipe, spec: _TensorSpec) -> gguf.GGMLQuantizationType:
    # Norms, biases and the router are f32 in every real GGUF; several backends require f32
    # norms.
    if spec.kind != "weight":
        return gguf.GGMLQuantizationType.F32
    return _WEIGHT_TYPES[recipe.dtype]


def _tensor_data(
    recipe: SynthRecipe, index: int, spec: _TensorSpec, qtype: gguf.GGMLQuantizationType
) -> npt.NDArray[np.generic]:
    """The values of one tensor in its storage type: ones for norms, zeros for biases, else
    noise of std 0.02."""
    if qtype == gguf.GGMLQuantizationType.Q4_K:
        return _random_q4_k(recipe, index, spec.shape)
    if spec.kind == "norm":
        values = np.ones(spec.shape, dtype=np.float32)
    elif spec.kind == "bias":
        values = np.zeros(spec.shape, dtype=np.float32)
    else:
        # One generator per tensor, seeded by (seed, position), so a tensor's values do not
        # depend on how many random numbers earlier tensors drew.
        rng = np.random.default_rng([recipe.seed, index])
        # Uniform on [-a, a) with a = std * sqrt(3) has the wanted std and draws about 7x
        # faster than a normal, which matters for multi-GiB models.
        half_width = _INIT_STD * 3.0**0.5
        values = rng.random(spec.shape, dtype=np.float32)
        values *= np.float32(2 * half_width)
        values -= np.float32(half_width)
    if qtype == gguf.GGMLQuantizationType.F32:
        return values
    if qtype == gguf.GGMLQuantizationType.F16:
        return values.astype(np.float16)
    return gguf.quants.quantize(values, qtype)


# Q4_K super-block: fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles.
_Q4K_BLOCK_BYTES = 144
# Block scales: with 6-bit scales and 4-bit quants, weights stay within about +-0.06.
_Q4K_D = np.array([6e-5, 6e-5], dtype=np.float16).view(np.uint8)


def _random_q4_k(recipe: SynthRecipe, index: int, shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    """Random Q4_K blocks whose scale fields are small finite fp16 numbers (random bytes
    there could be NaN or Inf and poison every activation)."""
    byte_shape = gguf.quants.quant_shape_to_byte_shape(shape, gguf.GGMLQuantizationType.Q4_K)
    rng = np.random.default_rng([recipe.seed, index])
    data = np.frombuffer(rng.bytes(int(np.prod(byte_shape))), dtype=np.uint8).copy()
    blocks = data.reshape(-1, _Q4K_BLOCK_BYTES)
    blocks[:, :4] = _Q4K_D
    return data.reshape(byte_shape)


def _add_glm4moe_keys(writer: gguf.GGUFWriter, recipe: SynthRecipe) -> None:
    """GLM-4.5-Air's routing and rope settings, so the same kernels run as for the real one."""
    writer.add_expert_shared_count(recipe.n_shared_experts)
    writer.add_leading_dense_block_count(0)
    writer.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    writer.add_expert_weights_norm(True)
    writer.add_expert_weights_scale(1.0)
    # GLM-4.5 rotates half of each head (partial_rotary_factor 0.5).
    writer.add_rope_dimension_count(recipe.head_dim // 2)
    if recipe.nextn_layers:
        writer.add_nextn_predict_layers(recipe.nextn_layers)


def _write_gguf(recipe: SynthRecipe, path: Path) -> None:
    writer = gguf.GGUFWriter(path, recipe.arch)
    # Nothing time- or host-dependent goes in, so the same recipe gives the same bytes.
    writer.add_name(f"benchkit synthetic {recipe.arch}")
    writer.add_file_type(_FILE_TYPES[recipe.dtype])
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_context_length(recipe.ctx_train)
    writer.add_embedding_length(recipe.d_model)
    # llama.cpp counts the NextN blocks in block_count and splits them off the end.
    writer.add_block_count(recipe.n_layers + recipe.nextn_layers)
    writer.add_head_count(recipe.n_heads)
    writer.add_head_count_kv(recipe.n_kv_heads)
    # Qwen3 decouples head_dim from d_model / n_heads; llama.cpp's default assumes them tied.
    writer.add_key_length(recipe.head_dim)
    writer.add_value_length(recipe.head_dim)
    writer.add_rope_freq_base(_ROPE_FREQ_BASE)
    writer.add_layer_norm_rms_eps(_RMS_EPS)
    writer.add_expert_count(recipe.n_experts)
    writer.add_expert_used_count(recipe.n_experts_used)
    writer.add_expert_feed_forward_length(recipe.expert_ff)
    if recipe.arch == "glm4moe":
        _add_glm4moe_keys(writer, recipe)
    add_tokenizer(writer, recipe)

    # Declare every tensor first, then generate and write them one at a time, so a large
    # model never has to sit in memory whole.
    plan = _tensor_plan(recipe)
    for spec in plan:
        qtype = _tensor_type(recipe, spec)
        byte_shape = gguf.quants.quant_shape_to_byte_shape(spec.shape, qtype)
        nbytes = int(np.prod(byte_shape))
        if qtype in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            dtype = np.dtype(np.float32 if qtype == gguf.GGMLQuantizationType.F32 else np.float16)
            writer.add_tensor_info(spec.name, spec.shape, dtype, nbytes)
        else:
            writer.add_tensor_info(spec.name, byte_shape, np.dtype(np.uint8), nbytes, qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for index, spec in enumerate(plan):
        writer.write_tensor_data(_tensor_data(recipe, index, spec, _tensor_type(recipe, spec)))
    writer.close()

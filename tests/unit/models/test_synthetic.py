"""The synthetic model writer: deterministic bytes, honest parameter counts, and a file the
real llama-server loads and generates from."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import gguf
import httpx
import pytest

from benchkit.errors import UserError
from benchkit.models.synthetic import (
    SynthRecipe,
    ensure_model,
    model_path_for,
    param_counts,
    recipe_key,
    write_model,
)

DEFAULT_SERVER = Path.home() / ".cache/benchkit/llama.cpp/b11434/build-cpu/bin/llama-server"


def _field(reader: gguf.GGUFReader, key: str) -> Any:
    return reader.fields[key].contents()


@pytest.mark.parametrize("dtype", ["f32", "f16", "q8_0"])
def test_same_recipe_writes_identical_bytes(tmp_path: Path, dtype: str) -> None:
    recipe = SynthRecipe(dtype=dtype)
    a = write_model(recipe, tmp_path / "a.gguf")
    b = write_model(recipe, tmp_path / "b" / "b.gguf")
    assert a.read_bytes() == b.read_bytes()


def test_different_seed_writes_different_bytes(tmp_path: Path) -> None:
    a = write_model(SynthRecipe(seed=0), tmp_path / "a.gguf")
    b = write_model(SynthRecipe(seed=1), tmp_path / "b.gguf")
    assert a.stat().st_size == b.stat().st_size
    assert a.read_bytes() != b.read_bytes()


def test_default_model_is_tiny(tmp_path: Path) -> None:
    path = write_model(SynthRecipe(), tmp_path / "m.gguf")
    assert 1_000_000 < path.stat().st_size < 3_000_000


def test_write_leaves_no_temp_files(tmp_path: Path) -> None:
    write_model(SynthRecipe(), tmp_path / "m.gguf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.gguf"]


def test_recipe_key_is_stable_and_covers_every_field() -> None:
    base = SynthRecipe()
    # Pinned: a change here means every cached model is rewritten; bump FORMAT_VERSION
    # (and this value) only when the bytes written really change.
    assert recipe_key(base) == "c9a9c5951d69"
    assert recipe_key(SynthRecipe()) == recipe_key(base)
    for field in dataclasses.fields(SynthRecipe):
        value: Any = getattr(base, field.name)
        changed: Any = value + 1 if isinstance(value, int) else value + "x"
        other = dataclasses.replace(base, **{field.name: changed})
        assert recipe_key(other) != recipe_key(base), field.name


def test_model_path_is_named_by_arch_and_key(tmp_path: Path) -> None:
    recipe = SynthRecipe(seed=7)
    path = model_path_for(recipe, tmp_path)
    assert path == tmp_path / "models" / f"synth-qwen3moe-{recipe_key(recipe)}.gguf"


@pytest.mark.parametrize(
    "recipe",
    [SynthRecipe(), SynthRecipe(n_layers=3, n_experts=16, n_experts_used=4, dtype="q8_0")],
)
def test_param_counts_match_the_tensors_written(tmp_path: Path, recipe: SynthRecipe) -> None:
    reader = gguf.GGUFReader(write_model(recipe, tmp_path / "m.gguf"))
    written = {t.name: int(t.n_elements) for t in reader.tensors}
    experts = sum(n for name, n in written.items() if name.endswith("_exps.weight"))
    total, active = param_counts(recipe)
    assert total == sum(written.values())
    assert active == total - experts + experts * recipe.n_experts_used // recipe.n_experts
    # Expert tensors hold 3 matrices of d_model x expert_ff per expert per layer.
    assert experts == 3 * recipe.n_layers * recipe.n_experts * recipe.d_model * recipe.expert_ff


def test_file_declares_arch_name_and_tokenizer(tmp_path: Path) -> None:
    recipe = SynthRecipe()
    reader = gguf.GGUFReader(write_model(recipe, tmp_path / "m.gguf"))
    assert _field(reader, "general.architecture") == "qwen3moe"
    assert _field(reader, "general.name") == "benchkit synthetic qwen3moe"
    assert _field(reader, "qwen3moe.context_length") == recipe.ctx_train
    assert _field(reader, "qwen3moe.expert_count") == recipe.n_experts
    assert _field(reader, "qwen3moe.expert_used_count") == recipe.n_experts_used
    assert _field(reader, "tokenizer.ggml.model") == "gpt2"
    assert _field(reader, "tokenizer.ggml.pre") == "qwen2"
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert isinstance(tokens, list)
    assert len(tokens) == recipe.n_vocab
    assert len(set(tokens)) == recipe.n_vocab
    assert tokens[ord("A")] == "A"
    assert tokens[ord(" ")] == "Ġ"  # GPT-2's byte-to-unicode mapping
    assert tokens[_field(reader, "tokenizer.ggml.eos_token_id")] == "<|im_end|>"
    assert tokens[_field(reader, "tokenizer.ggml.bos_token_id")] == "<|endoftext|>"
    merges = _field(reader, "tokenizer.ggml.merges")
    assert isinstance(merges, list)
    assert all(m.replace(" ", "", 1) in tokens for m in merges)


def test_unsupported_arch_is_one_clear_sentence(tmp_path: Path) -> None:
    with pytest.raises(
        UserError, match=r"arch 'llama' is not supported; supported: qwen3moe, glm4moe\."
    ):
        write_model(SynthRecipe(arch="llama"), tmp_path / "m.gguf")
    with pytest.raises(UserError, match="'llama'"):
        ensure_model(SynthRecipe(arch="llama"), tmp_path)
    assert not (tmp_path / "m.gguf").exists()


def test_bad_shapes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="dtype 'q4_k'"):
        param_counts(SynthRecipe(dtype="q4_k"))
    with pytest.raises(UserError, match="n_experts_used=9"):
        param_counts(SynthRecipe(n_experts_used=9))
    with pytest.raises(UserError, match="multiple of 32 for q8_0"):
        param_counts(SynthRecipe(expert_ff=48, dtype="q8_0"))


def test_ensure_model_reuses_the_cached_file(tmp_path: Path) -> None:
    recipe = SynthRecipe()
    first = ensure_model(recipe, tmp_path)
    assert first == model_path_for(recipe, tmp_path)
    stamp = first.stat()
    second = ensure_model(recipe, tmp_path)
    assert second == first
    assert (second.stat().st_ino, second.stat().st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)


def test_ensure_model_is_safe_when_processes_race(tmp_path: Path) -> None:
    recipe = SynthRecipe(seed=3)
    with ProcessPoolExecutor(max_workers=4) as pool:
        paths = list(pool.map(ensure_model, [recipe] * 4, [tmp_path] * 4))
    assert len(set(paths)) == 1
    reference = write_model(recipe, tmp_path / "reference.gguf")
    assert paths[0].read_bytes() == reference.read_bytes()
    leftovers = [p.name for p in paths[0].parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.slow
def test_llama_server_loads_and_generates(tmp_path: Path) -> None:
    server = Path(os.environ.get("BENCHKIT_LLAMA_SERVER", str(DEFAULT_SERVER)))
    if not server.is_file():
        pytest.skip(f"no llama-server at {server}; build it or set BENCHKIT_LLAMA_SERVER")
    model = ensure_model(SynthRecipe(), tmp_path)
    port = _free_port()
    log_path = tmp_path / "server.log"
    argv = [str(server), "-m", str(model), "-c", "4096", "-np", "1", "--alias", "synth-test"]
    argv += ["--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"

    def log_tail() -> str:
        return log_path.read_text(errors="replace")[-3000:]

    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, f"llama-server exited {proc.returncode}:\n{log_tail()}"
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, f"no /health 200 in 60 s:\n{log_tail()}"
                time.sleep(0.2)

            props = client.get("/props").json()
            assert props["model_alias"] == "synth-test"
            body = {"prompt": [1, 2, 3, 4, 5], "n_predict": 8, "ignore_eos": True}
            reply = client.post("/completion", json=body)
            assert reply.status_code == 200, reply.text
            timings = reply.json()["timings"]
            assert timings["predicted_n"] == 8
            assert timings["prompt_n"] == 5
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_q4_k_random_blocks_are_valid_and_deterministic(tmp_path: Path) -> None:
    import numpy as np

    r = SynthRecipe(
        d_model=256,
        n_heads=2,
        n_kv_heads=1,
        head_dim=128,
        expert_ff=256,
        n_vocab=512,
        dtype="q4_k_random",
    )
    a = write_model(r, tmp_path / "a.gguf")
    b = write_model(r, tmp_path / "b.gguf")
    assert a.read_bytes() == b.read_bytes()
    reader = gguf.GGUFReader(a)
    q4 = [t for t in reader.tensors if t.tensor_type == gguf.GGMLQuantizationType.Q4_K]
    assert q4, "weights are Q4_K"
    for t in q4:
        blocks = np.asarray(t.data).reshape(-1, 144)
        scales = blocks[:, :4].copy().view(np.float16)
        assert np.isfinite(scales).all() and (np.abs(scales) < 1e-3).all()
    # Norms and the router stay f32, as in a real Q4_K_M file.
    assert any(t.tensor_type == gguf.GGMLQuantizationType.F32 for t in reader.tensors)

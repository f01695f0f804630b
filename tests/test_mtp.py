"""MTP for real: the synthetic glm4moe with a NextN block (model=tiny-mtp), that llama-server
drafts with it, and that an mtp=false,true sweep records the draft acceptance."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gguf
import httpx
import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError
from benchkit.models.synthetic import SynthRecipe, param_counts, recipe_key, write_model
from benchkit.server.metrics import parse_prometheus, server_counters

Compose = Callable[..., BenchConfig]
DEFAULT_SERVER = Path.home() / ".cache/benchkit/llama.cpp/b11434/build-cpu/bin/llama-server"
MTP = SynthRecipe(arch="glm4moe", nextn_layers=1, n_shared_experts=1)


def _field(reader: gguf.GGUFReader, key: str) -> Any:
    return reader.fields[key].contents()


def test_tiny_mtp_config_is_an_mtp_capable_glm4moe(compose_cfg: Compose) -> None:
    cfg = compose_cfg("model=tiny-mtp")
    assert cfg.model.has_mtp and cfg.model.architecture == "glm4moe"
    assert cfg.model.synthetic is not None
    recipe = SynthRecipe(**dataclasses.asdict(cfg.model.synthetic))
    assert recipe == MTP
    # Same tokenizer as tiny-moe, so either can draft for the other.
    assert cfg.model.n_vocab == recipe.n_vocab == compose_cfg().model.n_vocab


def test_the_config_node_is_the_recipe_itself(compose_cfg: Any) -> None:
    # One declaration of the recipe's fields: the composed config holds a SynthRecipe.
    cfg = compose_cfg("model=tiny-mtp", "model.synthetic.n_layers=3")
    assert isinstance(cfg.model.synthetic, SynthRecipe) and cfg.model.synthetic.n_layers == 3


def test_recipe_keys_are_pinned() -> None:
    # Adding the glm4moe fields left every earlier recipe's key, and cached file, as it was.
    assert recipe_key(SynthRecipe()) == "c9a9c5951d69"
    assert recipe_key(MTP) == "e5279b9184bf"


@pytest.mark.parametrize("dtype", ["f32", "q8_0"])
def test_same_glm4moe_recipe_writes_identical_bytes(tmp_path: Path, dtype: str) -> None:
    recipe = dataclasses.replace(MTP, dtype=dtype)
    a = write_model(recipe, tmp_path / "a.gguf")
    b = write_model(recipe, tmp_path / "b.gguf")
    assert a.read_bytes() == b.read_bytes()
    c = write_model(dataclasses.replace(recipe, seed=1), tmp_path / "c.gguf")
    assert c.read_bytes() != a.read_bytes()


def _expected_block(i: int) -> set[str]:
    """What src/models/glm4-moe.cpp's load_arch_tensors creates for block i (MoE, with the
    optional q/k/v biases, without the optional q/k norms)."""
    names = [
        "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
        "attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.weight",
        "post_attention_norm.weight", "ffn_gate_inp.weight", "exp_probs_b.bias",
        "ffn_gate_exps.weight", "ffn_down_exps.weight", "ffn_up_exps.weight",
        "ffn_gate_shexp.weight", "ffn_down_shexp.weight", "ffn_up_shexp.weight",
    ]  # fmt: skip
    return {f"blk.{i}.{n}" for n in names}


def test_glm4moe_tensors_are_the_ones_llama_cpp_loads(tmp_path: Path) -> None:
    reader = gguf.GGUFReader(write_model(MTP, tmp_path / "m.gguf"))
    tensors = {t.name: [int(x) for x in t.shape] for t in reader.tensors}
    nextn = {f"blk.2.nextn.{n}.weight" for n in ("eh_proj", "enorm", "hnorm")}
    expected = {"token_embd.weight", "output_norm.weight", "output.weight"} | nextn
    for i in range(MTP.n_layers + MTP.nextn_layers):
        expected |= _expected_block(i)
    assert set(tensors) == expected
    d, v = MTP.d_model, MTP.n_vocab
    # ggml order (ne[]): eh_proj maps the concatenated [embedding, hidden] (2d) to d.
    assert tensors["blk.2.nextn.eh_proj.weight"] == [2 * d, d]
    assert tensors["token_embd.weight"] == [d, v] and tensors["output.weight"] == [d, v]
    assert tensors["blk.0.ffn_gate_exps.weight"] == [d, MTP.expert_ff, MTP.n_experts]
    assert tensors["blk.1.ffn_up_shexp.weight"] == [d, MTP.expert_ff * MTP.n_shared_experts]
    assert tensors["blk.0.exp_probs_b.bias"] == [MTP.n_experts]


def test_glm4moe_keys_declare_the_nextn_block(tmp_path: Path) -> None:
    reader = gguf.GGUFReader(write_model(MTP, tmp_path / "m.gguf"))
    assert _field(reader, "general.architecture") == "glm4moe"
    # llama.cpp counts the NextN block in block_count and takes the last ones as NextN.
    assert _field(reader, "glm4moe.block_count") == 3
    assert _field(reader, "glm4moe.nextn_predict_layers") == 1
    assert _field(reader, "glm4moe.expert_shared_count") == 1
    assert _field(reader, "glm4moe.expert_gating_func") == int(gguf.ExpertGatingFuncType.SIGMOID)
    assert _field(reader, "glm4moe.expert_weights_norm") is True
    trunk_only = write_model(dataclasses.replace(MTP, nextn_layers=0), tmp_path / "t.gguf")
    plain = gguf.GGUFReader(trunk_only)
    assert "glm4moe.nextn_predict_layers" not in plain.fields
    assert not [t.name for t in plain.tensors if "nextn" in t.name or t.name.startswith("blk.2")]


def test_param_counts_leave_the_nextn_block_out_of_active(tmp_path: Path) -> None:
    reader = gguf.GGUFReader(write_model(MTP, tmp_path / "m.gguf"))
    written = {t.name: int(t.n_elements) for t in reader.tensors}
    total, active = param_counts(MTP)
    assert total == sum(written.values())
    nextn = sum(n for name, n in written.items() if name.startswith("blk.2."))
    routed = sum(
        n for name, n in written.items() if name.endswith("_exps.weight") and name[4] != "2"
    )
    assert active == total - nextn - routed + routed * MTP.n_experts_used // MTP.n_experts
    assert param_counts(dataclasses.replace(MTP, nextn_layers=0)) == (total - nextn, active)


@pytest.mark.parametrize(
    ("recipe", "message"),
    [
        (SynthRecipe(nextn_layers=1), "nextn_layers=1 needs arch=glm4moe"),
        (SynthRecipe(n_shared_experts=1), "n_shared_experts=1 needs arch=glm4moe"),
        (dataclasses.replace(MTP, nextn_layers=2), "must be 0 or 1 for glm4moe"),
        (dataclasses.replace(MTP, n_shared_experts=0), "at least 1 for glm4moe"),
    ],
)
def test_recipes_llama_cpp_would_reject_are_refused(recipe: SynthRecipe, message: str) -> None:
    with pytest.raises(UserError, match=message):
        param_counts(recipe)


def _server_bin() -> Path:
    server = Path(os.environ.get("BENCHKIT_LLAMA_SERVER", str(DEFAULT_SERVER)))
    if not server.is_file():
        pytest.skip(f"no llama-server at {server}; build it or set BENCHKIT_LLAMA_SERVER")
    return server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def _server(model: Path, log_path: Path, *extra: str) -> Iterator[httpx.Client]:
    port = _free_port()
    argv = [str(_server_bin()), "-m", str(model), "-c", "2048", "-np", "1", "-t", "1"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--metrics", *extra]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            deadline = time.monotonic() + 60
            while True:
                tail = log_path.read_text(errors="replace")[-3000:]
                assert proc.poll() is None, f"llama-server exited {proc.returncode}:\n{tail}"
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, f"no /health 200 in 60 s:\n{tail}"
                time.sleep(0.2)
            yield client
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_llama_server_drafts_with_the_nextn_block(tmp_path: Path) -> None:
    model = write_model(MTP, tmp_path / "mtp.gguf")
    log = tmp_path / "server.log"
    with _server(model, log, "--spec-type", "draft-mtp", "--spec-draft-n-max", "3") as client:
        body = {"prompt": [1, 2, 3, 4, 5], "n_predict": 32, "ignore_eos": True}
        reply = client.post("/completion", json=body | {"temperature": 0})
        assert reply.status_code == 200, reply.text
        timings = reply.json()["timings"]
        assert timings["predicted_n"] == 32
        assert timings["draft_n"] > 0
        counters = server_counters(parse_prometheus(client.get("/metrics").text))
    # The server's counters and the response's timings tell the same story.
    assert counters["draft_tokens"] == timings["draft_n"]
    assert counters["draft_tokens_accepted"] == timings["draft_n_accepted"]
    assert counters["draft_steps"] and counters["draft_steps"] > 0
    assert "creating MTP draft context" in log.read_text()


@pytest.mark.slow
def test_llama_server_refuses_mtp_without_a_nextn_block(tmp_path: Path) -> None:
    model = write_model(dataclasses.replace(MTP, nextn_layers=0), tmp_path / "plain.gguf")
    argv = [str(_server_bin()), "-m", str(model), "-c", "512", "-np", "1", "-t", "1"]
    argv += ["--port", str(_free_port()), "--spec-type", "draft-mtp"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    assert "doesn't contain MTP layers" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_mtp_sweep_records_draft_acceptance(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit", "-m", "mtp=false,true", "slots=1,2",
         "model=tiny-mtp", "workload.units=2", "workload.cap=32", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1800, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {int(p.parent.name): json.loads(p.read_text()) for p in sweep.glob("*/result.json")}
    assert sorted(results) == [0, 1, 2, 3]
    for num, res in results.items():
        assert res["status"] == "complete", res["reason"]
        mtp = res["factors"]["mtp"]
        m = res["metrics"]
        argv = res["provenance"]["server"]["argv"]
        log = (sweep / str(num) / "server.log").read_text(errors="replace")
        if mtp:
            assert argv[argv.index("--spec-type") + 1] == "draft-mtp"
            assert "creating MTP draft context" in log
            assert m["draft_tokens"] > 0
            assert isinstance(m["draft_acceptance"], float)
            assert 0.0 <= m["draft_acceptance"] <= 1.0
        else:
            assert "--spec-type" not in argv
            assert m["draft_acceptance"] is None and m["draft_tokens"] == 0
    assert {(r["factors"]["mtp"], r["factors"]["slots"]) for r in results.values()} == {
        (False, 1), (False, 2), (True, 1), (True, 2),
    }  # fmt: skip

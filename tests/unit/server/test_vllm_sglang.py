"""vLLM and SGLang without a GPU: their exact command lines, the refusals, the precise
`unavailable` reasons, the API key kept out of argv, identity and /metrics parsing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.server import vllm_sglang as engines
from benchkit.server.metrics import engine_counters, parse_prometheus
from benchkit.server.plan import context_size
from benchkit.server.vllm_sglang import (
    ENGINE_VERSIONS,
    engine_argv,
    engine_env,
    engine_identity,
    engine_info_path,
    engine_launcher,
    engine_models,
    engine_of,
    engine_secret,
    engine_unavailable,
)
from benchkit.server.vllm_sglang import EngineName as Engine

Compose = Callable[..., BenchConfig]
FIXTURES = repo_root() / "fixtures" / "engines"
HF = "/models/Qwen3-30B-A3B"
ALIAS = "benchkit-7-abcd1234"
VLLM = ["/opt/vllm/bin/vllm", "serve"]
SGLANG = ["/usr/bin/python3", "-m", "sglang.launch_server"]


def _argv(cfg: BenchConfig, secret_config_path: str | None = None) -> list[str]:
    model, draft = engine_models(cfg)
    _, per_slot = context_size(cfg, 1000, 256)
    return engine_argv(
        cfg,
        model_path=model,
        port=8123,
        alias=ALIAS,
        per_slot=per_slot,
        draft_model_path=draft,
        launcher=VLLM if engine_of(cfg) is Engine.vllm else SGLANG,
        secret_config_path=secret_config_path,
    )


def _refusal(cfg: BenchConfig) -> str:
    with pytest.raises(UserError) as exc:
        _argv(cfg)
    return str(exc.value)


# ------------------------------------------------------------------------- command lines


def test_vllm_argv_for_the_default_study(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=vllm", f"model.path={HF}")
    # 1000 + 256 tokens per sequence, padded to 1280 as plan.context_size pads a slot.
    assert _argv(cfg) == [
        *VLLM, HF,
        "--served-model-name", ALIAS,
        "--host", "127.0.0.1",
        "--port", "8123",
        "--max-num-seqs", "4",
        "--max-model-len", "1280",
        "--max-num-batched-tokens", "2048",
        "--kv-cache-dtype", "auto",
        "--enable-prefix-caching",
    ]  # fmt: skip


def test_sglang_argv_for_the_default_study(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=sglang", f"model.path={HF}")
    assert _argv(cfg) == [
        *SGLANG,
        "--model-path", HF,
        "--served-model-name", ALIAS,
        "--host", "127.0.0.1",
        "--port", "8123",
        "--max-running-requests", "4",
        "--context-length", "1280",
        "--chunked-prefill-size", "2048",
        "--kv-cache-dtype", "auto",
        "--enable-metrics",
    ]  # fmt: skip


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_sweepable_settings_reach_the_engine(compose_cfg: Compose, backend: str) -> None:
    cfg = compose_cfg(
        f"backend={backend}", f"model.path={HF}", "slots=8", "server.batch=4096",
        "server.cache_type_k=bf16", "server.cache_type_v=bf16", "server.host=127.0.0.2",
        "server.extra_args=[--seed,1]",
    )  # fmt: skip
    a = _argv(cfg)
    slots_flag = "--max-num-seqs" if backend == "vllm" else "--max-running-requests"
    batch_flag = "--max-num-batched-tokens" if backend == "vllm" else "--chunked-prefill-size"
    assert _flag(a, slots_flag) == "8"
    assert _flag(a, batch_flag) == "4096"
    assert _flag(a, "--kv-cache-dtype") == "bfloat16"
    assert _flag(a, "--host") == "127.0.0.2"
    assert a[-2:] == ["--seed", "1"]


def test_fixed_context_is_split_per_sequence_as_for_llama_server(compose_cfg: Compose) -> None:
    cfg = compose_cfg(
        "backend=vllm", f"model.path={HF}", "slots=4", "server.ctx_policy=fixed",
        "server.ctx=16384",
    )  # fmt: skip
    assert _flag(_argv(cfg), "--max-model-len") == "4096"


def test_engine_kv_dtype_overrides_the_llama_cpp_one(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=vllm", f"model.path={HF}", "backend.kv_cache_dtype=fp8")
    assert _flag(_argv(cfg), "--kv-cache-dtype") == "fp8"
    cfg = compose_cfg("backend=sglang", f"model.path={HF}", "backend.kv_cache_dtype=fp8_e4m3")
    assert _flag(_argv(cfg), "--kv-cache-dtype") == "fp8_e4m3"


# ------------------------------------------------------------------ speculative decoding


def test_vllm_mtp_is_one_speculative_config(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=vllm", "model=tiny-mtp", f"model.path={HF}", "mtp=true")
    a = _argv(cfg)
    assert a[-2:] == ["--speculative-config", '{"method":"mtp","num_speculative_tokens":3}']


def test_sglang_mtp_is_nextn_with_a_linear_chain(compose_cfg: Compose) -> None:
    cfg = compose_cfg(
        "backend=sglang", "model=tiny-mtp", f"model.path={HF}", "mtp=true",
        "server.mtp_draft_max=2",
    )  # fmt: skip
    a = _argv(cfg)
    assert a[a.index("--speculative-algorithm") :] == [
        "--speculative-algorithm", "NEXTN",
        "--speculative-draft-model-path", HF,
        "--speculative-num-steps", "2",
        "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "3",
    ]  # fmt: skip


def test_draft_model(compose_cfg: Compose) -> None:
    common = ("spec=draft", f"model.path={HF}", "spec.draft_model.path=/models/Qwen3-0.6B")
    a = _argv(compose_cfg("backend=vllm", *common, "spec.draft_max=4"))
    assert json.loads(_flag(a, "--speculative-config")) == {
        "method": "draft_model",
        "model": "/models/Qwen3-0.6B",
        "num_speculative_tokens": 4,
    }
    a = _argv(compose_cfg("backend=sglang", *common, "spec.draft_max=4"))
    assert a[a.index("--speculative-algorithm") :] == [
        "--speculative-algorithm", "STANDALONE",
        "--speculative-draft-model-path", "/models/Qwen3-0.6B",
        "--speculative-num-steps", "4",
        "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "5",
    ]  # fmt: skip


def test_ngram(compose_cfg: Compose) -> None:
    a = _argv(compose_cfg("backend=vllm", "spec=ngram", f"model.path={HF}"))
    assert json.loads(_flag(a, "--speculative-config")) == {
        "method": "ngram",
        "num_speculative_tokens": 64,
    }
    a = _argv(compose_cfg("backend=sglang", "spec=ngram", f"model.path={HF}", "spec.draft_max=8"))
    assert a[a.index("--speculative-algorithm") :] == [
        "--speculative-algorithm", "NGRAM",
        "--speculative-num-draft-tokens", "9",
        "--speculative-ngram-max-bfs-breadth", "1",
    ]  # fmt: skip


def test_synthetic_acceptance(compose_cfg: Compose) -> None:
    mtp = ("model=tiny-mtp", f"model.path={HF}", "mtp=true", "spec.synth_len=2.5")
    a = _argv(compose_cfg("backend=vllm", *mtp))
    assert json.loads(_flag(a, "--speculative-config")) == {
        "method": "mtp",
        "num_speculative_tokens": 3,
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 2.5,
    }
    cfg = compose_cfg("backend=sglang", *mtp)
    assert "2.5" not in _argv(cfg)
    assert engine_env(cfg)["SGLANG_SIMULATE_ACC_LEN"] == "2.5"


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("overrides", "sentence"),
    [
        (
            ("server=seed",),
            "server.cache_type_k=q8_0 is llama.cpp's own KV format, which vLLM does not have: "
            "use server.cache_type_k=f16 (the model's dtype) or bf16, or name the engine's own "
            "dtype with backend.kv_cache_dtype (e.g. fp8).",
        ),
        (
            ("server.cache_type_v=bf16",),
            "server.cache_type_k=f16 and server.cache_type_v=bf16 differ, but vLLM has one "
            "KV-cache dtype for both: set them equal.",
        ),
        (
            ("backend.kv_cache_dtype=q8_0",),
            "backend.kv_cache_dtype=q8_0 is not a vLLM 0.34.0 KV-cache dtype: use one of "
            + ", ".join(engines.KV_CACHE_DTYPES[Engine.vllm])
            + ".",
        ),
        (
            ("server.flash_attn=off",),
            "server.flash_attn=off has no vLLM equivalent (vLLM picks its attention kernels "
            "itself): use server.flash_attn=auto.",
        ),
        (
            ("mtp=true",),
            "mtp=true needs a model with MTP (NextN) layers but model tiny-moe has none: use "
            "mtp=false or set model.has_mtp=true for a model that has them.",
        ),
        (
            ("mtp=true", "model.has_mtp=true"),
            "mtp=true: benchkit does not know vLLM's MTP drafter for "
            "model.architecture=qwen3moe: use one of "
            + ", ".join(sorted(engines.MTP_FAMILIES))
            + ", or mtp=false.",
        ),
        (
            ("spec=ngram", "spec.ngram_mode=map_k4v"),
            "spec.ngram_mode=map_k4v is one of llama.cpp's own n-gram drafters; vLLM has one "
            "n-gram drafter, which benchkit runs as spec.ngram_mode=simple: use that.",
        ),
        (
            ("spec.synth_len=2",),
            "spec.synth_len=2.0 needs speculative decoding to act on: set mtp=true, spec=draft "
            "or spec=ngram.",
        ),
        (
            ("server.extra_args=[--api-key,hunter2]",),
            "--api-key in extra_args is refused: put the key in backend.api_key or "
            "$BENCHKIT_API_KEY, which keeps it out of the command line.",
        ),
    ],
)
def test_vllm_refusals_are_one_sentence(
    compose_cfg: Compose, overrides: tuple[str, ...], sentence: str
) -> None:
    assert _refusal(compose_cfg("backend=vllm", f"model.path={HF}", *overrides)) == sentence


def test_sglang_refusals(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=sglang", f"model.path={HF}", "spec=ngram", "spec.synth_len=2")
    assert _refusal(cfg) == (
        "spec.synth_len=2.0 has no SGLang equivalent with spec=ngram (SGLANG_SIMULATE_ACC_LEN "
        "acts on EAGLE-style verification only): unset spec.synth_len or use mtp=true or "
        "spec=draft."
    )
    cfg = compose_cfg(
        "backend=sglang", f"model.path={HF}", "server.extra_args=[--enable-http-worker-reuseport]"
    )
    assert _refusal(cfg) == (
        "--enable-http-worker-reuseport in extra_args is refused: it lets a second server "
        "share the port and answer this job's client."
    )
    cfg = compose_cfg("backend=sglang", f"model.path={HF}", "server=seed")
    assert "(e.g. fp8_e4m3)" in _refusal(cfg)


def test_models_must_be_hugging_face_checkpoints(compose_cfg: Compose) -> None:
    with pytest.raises(UserError) as exc:
        engine_models(compose_cfg("backend=vllm"))
    assert str(exc.value) == (
        "backend=vllm loads a Hugging Face checkpoint but model tiny-moe has no model.path "
        "(benchkit's synthetic models are GGUF files for llama.cpp): set model.path=DIR of a "
        "Hugging Face checkpoint."
    )
    with pytest.raises(UserError) as exc:
        engine_models(compose_cfg("backend=sglang", "model.path=/m/qwen.Q4_K_M.gguf"))
    assert str(exc.value) == (
        "model.path=/m/qwen.Q4_K_M.gguf is a GGUF file, which benchkit does not give SGLang: "
        "set model.path=DIR of the model's Hugging Face checkpoint (config.json and "
        "safetensors)."
    )
    with pytest.raises(UserError, match=r"spec\.draft_model\.path"):
        engine_models(compose_cfg("backend=vllm", f"model.path={HF}", "spec=draft"))


# ------------------------------------------------------------------------- availability


def _machine(
    monkeypatch: pytest.MonkeyPatch, *, modules: tuple[str, ...], tools: tuple[str, ...]
) -> None:
    # engines' own names only: Hydra and pytest keep the real ones.
    monkeypatch.setattr(engines, "find_spec", lambda name: object() if name in modules else None)
    monkeypatch.setattr(
        engines, "which", lambda name: f"/usr/bin/{name}" if name in tools else None
    )


def test_unavailable_when_not_installed(
    compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, modules=(), tools=("nvidia-smi",))
    assert engine_unavailable(compose_cfg("backend=vllm")) == (
        "vLLM is not installed: pip install vllm (it needs a CUDA or ROCm GPU), or set "
        "backend.launcher to an installation's command."
    )
    assert engine_unavailable(compose_cfg("backend=sglang")) == (
        "SGLang is not installed: pip install sglang (it needs a CUDA or ROCm GPU), or set "
        "backend.launcher to an installation's command."
    )


def test_unavailable_without_a_gpu(compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, modules=("vllm", "sglang"), tools=())
    assert engine_unavailable(compose_cfg("backend=vllm")) == (
        "no CUDA or ROCm device: vLLM needs an NVIDIA or AMD GPU (nvidia-smi and rocm-smi not "
        "found); run this backend on a GPU machine."
    )
    assert str(engine_unavailable(compose_cfg("backend=sglang"))).startswith(
        "no CUDA or ROCm device: SGLang needs"
    )


def test_available_and_where_it_starts(
    compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, modules=("sglang",), tools=("vllm", "nvidia-smi"))
    vllm, sglang = compose_cfg("backend=vllm"), compose_cfg("backend=sglang")
    assert engine_unavailable(vllm) is None and engine_unavailable(sglang) is None
    assert engine_launcher(vllm) == ["/usr/bin/vllm", "serve"]
    assert engine_launcher(sglang)[1:] == ["-m", "sglang.launch_server"]
    _machine(monkeypatch, modules=("vllm",), tools=("rocm-smi",))
    assert engine_unavailable(vllm) is None
    assert engine_launcher(vllm)[1:] == ["-m", "vllm.entrypoints.cli.main", "serve"]


def test_a_launcher_that_is_not_there(
    compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, modules=("vllm",), tools=("nvidia-smi",))
    cfg = compose_cfg("backend=vllm", "backend.launcher=[/opt/v/bin/vllm,serve]")
    assert engine_launcher(cfg) == ["/opt/v/bin/vllm", "serve"]
    assert engine_unavailable(cfg) == (
        "backend.launcher names /opt/v/bin/vllm, which is not an executable here: point it at "
        "the vLLM installation's executable."
    )


def test_llama_cpp_backends_are_not_engines(compose_cfg: Compose) -> None:
    assert engine_of(compose_cfg()) is None
    assert engine_of(compose_cfg("backend=external")) is None
    assert ENGINE_VERSIONS[Engine.vllm] == "0.34.0"
    assert ENGINE_VERSIONS[Engine.sglang] == "0.5.23"


# ------------------------------------------------------------------ environment, secrets


def test_device_env(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=vllm", "hardware=h200", "hardware.device=3")
    assert engine_env(cfg) == {"CUDA_VISIBLE_DEVICES": "3", "VLLM_SERVER_DEV_MODE": "1"}
    cfg = compose_cfg("backend=sglang", "hardware=h200")
    assert engine_env(cfg) == {"CUDA_VISIBLE_DEVICES": "0"}
    # vLLM's dev endpoints (/server_info) only where nobody else can reach them.
    cfg = compose_cfg("backend=vllm", "server.host=0.0.0.0")
    assert engine_env(cfg) == {}
    assert engine_info_path(cfg) is None
    assert engine_info_path(compose_cfg("backend=vllm")) == "/server_info?config_format=json"
    assert engine_info_path(compose_cfg("backend=sglang")) == "/server_info"


SECRET = "sk-bench-s3cr3t"


def test_vllm_api_key_travels_in_the_environment_only(
    compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHKIT_API_KEY", SECRET)
    cfg = compose_cfg("backend=vllm", f"model.path={HF}")
    argv = _argv(cfg)
    assert not any(SECRET in a for a in argv) and "--api-key" not in argv
    assert SECRET not in json.dumps(engine_env(cfg))
    secret = engine_secret(cfg)
    assert secret.env == {"VLLM_API_KEY": SECRET}
    assert SECRET not in repr(secret)
    monkeypatch.delenv("BENCHKIT_API_KEY")
    # Without a key, one in the user's environment must not switch auth on.
    assert engine_secret(cfg).unset == ("VLLM_API_KEY",)


def test_sglang_api_key_travels_in_a_config_file(compose_cfg: Compose, tmp_path: Path) -> None:
    cfg = compose_cfg("backend=sglang", f"model.path={HF}", f"backend.api_key={SECRET}")
    secret = engine_secret(cfg)
    assert secret.env == {} and secret.config_text == f'api-key: "{SECRET}"\n'
    path = str(tmp_path / "sglang-secret.yaml")
    argv = _argv(cfg, secret_config_path=path)
    assert argv[-2:] == ["--config", path]
    assert not any(SECRET in a for a in argv)
    with pytest.raises(ValueError, match="secret_config_path"):
        _argv(cfg)
    # No key, no file.
    assert engine_secret(compose_cfg("backend=sglang")).config_text is None


# ---------------------------------------------------------------------------- identity


def test_identity_from_the_engines_own_answers() -> None:
    models = {"object": "list", "data": [{"id": ALIAS, "object": "model", "max_model_len": 1280}]}
    vllm_info = {"vllm_config": {"scheduler_config": {"max_num_seqs": 4}}, "vllm_env": {}}
    assert engine_identity(Engine.vllm, models, vllm_info) == (ALIAS, 4)
    assert engine_identity(Engine.vllm, models, None) == (ALIAS, None)
    sglang_info = {
        "served_model_name": ALIAS,
        "max_running_requests": 4,
        "internal_states": [{"effective_max_running_requests_per_dp": 3}],
    }
    # The scheduler's effective count wins: SGLang lowers it when the KV pool is too small.
    assert engine_identity(Engine.sglang, models, sglang_info) == (ALIAS, 3)
    del sglang_info["internal_states"]
    assert engine_identity(Engine.sglang, models, sglang_info) == (ALIAS, 4)
    assert engine_identity(Engine.sglang, {"data": []}, {}) == (None, None)


# ----------------------------------------------------------------------------- /metrics


def test_vllm_metrics() -> None:
    c = engine_counters(Engine.vllm, (FIXTURES / "vllm-metrics.prom").read_text())
    assert c["engine"] == "vllm"
    # Prompt tokens computed, as llama-server counts them (cached ones apart).
    assert c["prompt_tokens"] == 4096 and c["prompt_tokens_cached"] == 1024
    assert c["tokens_predicted"] == 2048
    assert c["requests"] == 8
    assert c["requests_running"] == 0 and c["requests_waiting"] == 0
    assert (c["draft_tokens"], c["draft_tokens_accepted"], c["draft_steps"]) == (2100, 1340, 700)
    assert c["draft_acceptance"] == pytest.approx(1340 / 2100)
    assert c["draft_accepted_by_position"] == [560, 450, 330]
    assert c["draft_acceptance_by_position"] == pytest.approx([0.8, 450 / 700, 330 / 700])
    assert c["draft_accept_length"] == pytest.approx(1 + 1340 / 700)
    assert c["prompt_seconds"] is None and c["n_decode"] is None


def test_sglang_metrics() -> None:
    c = engine_counters(Engine.sglang, (FIXTURES / "sglang-metrics.prom").read_text())
    assert c["engine"] == "sglang"
    assert c["prompt_tokens"] == 4096 and c["prompt_tokens_cached"] == 1024
    assert c["tokens_predicted"] == 2048
    assert c["requests"] == 8
    assert c["requests_running"] == 0 and c["requests_waiting"] == 0
    # SGLang counts verification steps, not drafted or accepted tokens.
    assert c["draft_steps"] == 700
    assert c["draft_tokens"] is None and c["draft_acceptance"] is None
    assert c["draft_accept_length"] == pytest.approx(2048 / 700)
    assert c["draft_accept_length_recent"] == pytest.approx(2.85)


def test_metrics_sum_over_engines_and_absent_counters_are_none() -> None:
    text = (
        'vllm:generation_tokens_total{engine="0",model_name="a"} 10.0\n'
        'vllm:generation_tokens_total{engine="1",model_name="a"} 5.0\n'
    )
    c = engine_counters(Engine.vllm, text)
    assert c["tokens_predicted"] == 15
    assert c["prompt_tokens"] is None and c["draft_acceptance"] is None
    assert c["draft_accepted_by_position"] == []
    # An SGLang server before its first cache hit has no cached_tokens samples yet.
    c = engine_counters(Engine.sglang, 'sglang:prompt_tokens_total{model_name="a"} 7\n')
    assert (c["prompt_tokens"], c["prompt_tokens_cached"]) == (7, 0)
    with pytest.raises(ValueError, match="not a sample"):
        engine_counters(Engine.vllm, "<html>not metrics</html>\n")


@pytest.mark.parametrize("engine", list(Engine))
def test_fixtures_carry_only_the_engines_names(engine: Engine) -> None:
    samples = parse_prometheus((FIXTURES / f"{engine.value}-metrics.prom").read_text())
    assert samples and all(k.startswith(engine.value + ":") for k in samples)
    assert all('model_name="benchkit-3-1a2b3c4d"' in k for k in samples if "model_name" in k)

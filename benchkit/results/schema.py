"""result.json as types: what a job's result holds, read by one loader and written by one writer.

A result is `Result` (status, reason, factors, provenance, metrics, passes, quality, task); its
metrics and the provenance blocks the report reads are frozen dataclasses, so a renamed key
fails where it is read (mypy), not when a report renders. Keys this benchkit does not type (an
engine's own counters, a newer block) are kept in each level's `extra` and written back as they
were;
`to_json` writes every typed key (null where not known) except the provenance blocks a job did
not have, which stay absent, so writing a loaded result keeps every value it had and adds only
nulls. The contract keys (architecture.md) are unchanged;
`SCHEMA_VERSION` is checked on load and `migrate` brings older versions up.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

SCHEMA_VERSION = 1


class Status(StrEnum):
    complete = "complete"
    incomplete = "incomplete"
    failed = "failed"
    unavailable = "unavailable"


Json = dict[str, Any]  # one JSON object as read from or written to disk


@dataclass(frozen=True)
class Percentiles:
    """p50/p90/p95/p99 of a per-call distribution (milliseconds); None when not measured."""

    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class OpenLoop:
    """An open-loop pass's `metrics.open_loop` block (benchkit.load.measure)."""

    process: str | None = None
    offered_rps: float | None = None
    scheduled_rps: float | None = None
    achieved_rps: float | None = None
    arrivals_planned: int | None = None
    arrivals_sent: int | None = None
    calls_unfinished: int | None = None
    peak_in_flight: int | None = None
    max_in_flight: int | None = None
    ended: str | None = None
    schedule_lag_ms_p50: float | None = None
    schedule_lag_ms_p99: float | None = None
    schedule_lag_ms_max: float | None = None
    slo_per_call: str | None = None
    calls_met_slo: int | None = None
    goodput_rps: float | None = None
    goodput_tok_s: float | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Metrics:
    """The `metrics` block (measure.DEFINITIONS says how each is measured)."""

    units_completed: int | None = None
    units_planned: int | None = None
    calls_completed: int | None = None
    calls_failed: int | None = None
    calls_planned: int | None = None
    error_rate: float | None = None
    wall_s: float | None = None
    s_per_unit_throughput: float | None = None
    s_per_unit_slot_latency: float | None = None
    prefill_tok_s: float | None = None
    decode_tok_s: float | None = None
    output_tok_s: float | None = None
    seq_decode_tok_s: float | None = None
    seqs_per_step: float | None = None
    server_steps_per_s: float | None = None
    prefill_busy_share: float | None = None
    decode_busy_share: float | None = None
    idle_share: float | None = None
    prompt_tokens: int | None = None
    prompt_tokens_evaluated: int | None = None
    cached_prompt_tokens: int | None = None
    completion_tokens: int | None = None
    calls_hit_cap: int | None = None
    cap_time_share: float | None = None
    draft_acceptance: float | None = None
    draft_tokens: int | None = None
    draft_tokens_accepted: int | None = None
    ttft_ms: Percentiles | None = None
    itl_ms: Percentiles | None = None
    server_prompt_tok_s: float | None = None
    server_decode_tok_s: float | None = None
    fixture_prompt_tokens: int | None = None
    prompt_token_mismatches: int | None = None
    fixture_completion_tokens: int | None = None
    # GPU telemetry (benchkit/measure/telemetry.py), where the job had it.
    energy_j: float | None = None
    j_per_unit: float | None = None
    gpu_busy_share: float | None = None
    server_cpu_share: float | None = None
    # Open-loop load only (absent otherwise): end-to-end latency and the schedule's figures.
    e2e_ms: Percentiles | None = None
    open_loop: OpenLoop | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelInfo:
    name: str | None = None
    architecture: str | None = None
    params_total_b: float | None = None
    params_active_b: float | None = None
    quant: str | None = None
    size_gb: float | None = None
    synthetic: bool | None = None
    path: str | None = None
    file_bytes: int | None = None
    # A real model fetched from its packages: vocabulary, license, the upstream model, the
    # packages and the file's SHA-256 (none for a synthetic model or a user's file).
    n_vocab: int | None = None
    # A synthetic model's shape, recorded from its recipe (the roofline's KV term).
    n_layers: int | None = None
    n_kv_heads: int | None = None
    head_dim: int | None = None
    d_model: int | None = None
    license: str | None = None
    upstream: str | None = None
    source: str | None = None
    sha256: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildInfo:
    """The llama-server build (or engine) a job ran."""

    binary: str | None = None
    source: str | None = None
    source_date: str | None = None
    version: str | None = None
    devices: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerInfo:
    argv: list[str] = field(default_factory=list)
    host: str | None = None
    port: int | None = None
    alias: str | None = None
    ctx_total: int | None = None
    ctx_per_slot: int | None = None
    slots: int | None = None
    props: Json | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadInfo:
    fixture: str | None = None
    fingerprint: str | None = None
    kind: str | None = None
    units: int | None = None
    units_replayed: int | None = None
    calls: int | None = None
    prompt_tokens: int | None = None
    max_prompt_tokens: int | None = None
    completion_tokens: int | None = None
    output_policy: str | None = None
    cap: int | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SamplingInfo:
    profile: str | None = None
    sent: Json = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientInfo:
    """Which client path timed the calls, and why the fallback when it was used."""

    path: str | None = None
    fallback: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Provenance:
    """Where a measurement came from: the blocks the report reads are typed, the rest kept."""

    started_utc: str | None = None
    finished_utc: str | None = None
    measured_utc: str | None = None
    reused_from: str | None = None
    choices: dict[str, str] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    model: ModelInfo | None = None
    sampling: SamplingInfo | None = None
    workload: WorkloadInfo | None = None
    server_build: BuildInfo | None = None
    server: ServerInfo | None = None
    client: ClientInfo | None = None
    hardware: Json = field(default_factory=dict)
    study: Json = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class QualityInfo:
    """The drift probe a job ran after its timed replay (benchkit.quality.probe): where its
    answers are, how many, and how it was set; the report compares them with a reference job's.
    `skipped` says why a job has none."""

    file: str | None = None
    # Where the probe's prompts came from: "workload", or "task <file name>" (probe_source).
    source: str | None = None
    probes: int | None = None
    positions: int | None = None
    positions_missing: int | None = None
    errors: int | None = None
    first_error: str | None = None
    seconds: float | None = None
    tokens: int | None = None
    top_k: int | None = None
    seed: int | None = None
    skipped: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskInfo:
    """The scored task a job ran after its timed replay (benchkit.quality.task): which file,
    how many items were right, the accuracy and its Wilson interval; `skipped` says why a job
    has none."""

    file: str | None = None
    task: str | None = None
    task_sha256: str | None = None
    scorer: str | None = None
    items: int | None = None
    correct: int | None = None
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    errors: int | None = None
    first_error: str | None = None
    tokens: int | None = None
    seconds: float | None = None
    skipped: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """One job's result.json (fields in the order the file has them)."""

    schema_version: int
    status: Status
    reason: str | None
    factors: Json
    provenance: Provenance
    metrics: Metrics
    passes: list[Metrics] | None = None
    # The drift probe (absent in results from before it, or of a job that never served).
    quality: QualityInfo | None = None
    # The scored task (absent unless the job ran quality.task).
    task: TaskInfo | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.status is Status.complete


# ------------------------------------------------------------------------ one reader, one writer

T = TypeVar("T")


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """Each field's name and resolved type. Resolving the annotations is the costly part of
    loading (a report of 1,000 jobs loads each block several times), so it is done once a class."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def from_json(cls: type[T], data: Mapping[str, Any]) -> T:
    """A dataclass of this module from its JSON object: known keys typed (nested blocks built
    the same way), the others kept in `extra`."""
    fields = _fields(typing.cast(type, cls))  # type[T] is hashable; mypy cannot tell
    names = {name for name, _ in fields}
    kwargs: dict[str, object] = {}
    for name, tp in fields:
        if name == "extra" or name not in data:
            continue
        kwargs[name] = _build(tp, data[name])
    if "extra" in names:
        kwargs["extra"] = {k: v for k, v in data.items() if k not in names}
    return cls(**kwargs)


def _build(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    kind, arg = _plan(tp)
    if kind == "optional":
        return _build(arg, value)
    if kind == "list":
        return [from_json(arg, v) for v in value]
    if kind == "block" and isinstance(value, Mapping):
        return from_json(arg, value)
    if kind == "enum":
        return arg(value)
    return value


@functools.cache
def _plan(tp: Any) -> tuple[str, Any]:
    """How `_build` makes a value of type `tp`: `optional` (of the type given), `list` (of the
    dataclass given), `block` (the dataclass, from an object), `enum`, or `value` as it is.
    Once a type: taking annotations apart was most of a load's time (a 1,000-job report loads
    each result several times)."""
    inner = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType) and len(inner) == 1:
        return "optional", inner[0]
    if (
        origin is list
        and inner
        and isinstance(inner[0], type)
        and dataclasses.is_dataclass(inner[0])
    ):
        return "list", inner[0]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "block", tp
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        return "enum", tp
    return "value", None


# Blocks a result without them leaves out rather than writing null: a closed-loop job's
# metrics read as they did before open-loop load.
_ABSENT_WHEN_NONE = ("passes", "quality", "task", "e2e_ms", "open_loop")


def to_json(obj: Any) -> Any:
    """The JSON object of a dataclass of this module: fields in order, `extra` merged back."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: Json = {}
        for f in dataclasses.fields(obj):
            if f.name == "extra":
                continue
            v = getattr(obj, f.name)
            if v is None and (f.name in _ABSENT_WHEN_NONE or isinstance(obj, Provenance)):
                continue  # a provenance block the job did not have stays absent
            out[f.name] = to_json(v)
        out.update(getattr(obj, "extra", {}) or {})
        return out
    if isinstance(obj, StrEnum):
        return obj.value
    if isinstance(obj, list):
        return [to_json(v) for v in obj]
    return obj


def load(data: Mapping[str, Any]) -> Result:
    """A result from its JSON object, brought up to the current schema first."""
    return from_json(Result, migrate(dict(data)))


def migrate(data: Json) -> Json:
    """Bring an older schema up to the current one (there is only version 1 so far)."""
    return data

"""What a job writes about itself: the result it assembles (result.json's blocks as types),
the context the entry point hands it, its factors, and the failed result it starts from.
benchkit/job/run.py fills the result in as the job runs; benchkit.results.store writes it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from benchkit.client.warmup import WarmupBlock
from benchkit.config import drafting, space
from benchkit.config.schema import BenchConfig, LoadProcess, to_plain
from benchkit.config.space import Factor as Factor  # a factor's value, declared there
from benchkit.host.provenance import BenchkitInfo, HardwareInfo, benchkit_info, hardware_info
from benchkit.quality.task import TaskBlock
from benchkit.racing.extend import ExtendedRun
from benchkit.results.scrub import scrub_override
from benchkit.results.store import SCHEMA_VERSION
from benchkit.server.engines import LaunchInfo, ModelBlock, PropsBlock
from benchkit.server.provide import ServerBuildInfo
from benchkit.workload import Workload


class SamplingBlock(TypedDict):
    """provenance.sampling: the profile, and the fields every request sent."""

    profile: str
    sent: dict[str, object]


class WorkloadBlock(TypedDict):
    """provenance.workload: the fixture replayed and how."""

    fixture: str
    path: str
    fingerprint: str
    kind: str
    units: int
    calls: int
    prompt_tokens: int | None
    max_prompt_tokens: int | None
    completion_tokens: int
    output_policy: str
    cap: int
    units_replayed: int


class ClientBlock(TypedDict):
    """provenance.client: which client path timed the calls, and why the fallback."""

    path: str
    fallback: str | None


# provenance.reuse: when and by what a job was reused ("from" is a Python keyword).
ReuseBlock = TypedDict(
    "ReuseBlock",
    {
        "started_utc": str | None,
        "host_load_start": list[float] | None,
        "benchkit": BenchkitInfo | None,
        "from": str,
        "finished_utc": str,
        "host_load_end": list[float] | None,
        "job_seconds": float,
    },
    total=False,
)


class JobProvenance(TypedDict, total=False):
    """What a job records of where its measurement came from, in the order it is added;
    the schema writer (benchkit.results.schema.Provenance) puts its typed blocks in their order and
    keeps the others (benchkit, host_load_*, resume_key, reuse, ...) in this one."""

    benchkit: BenchkitInfo
    hardware: HardwareInfo
    choices: dict[str, str]
    overrides: list[str]
    started_utc: str
    # Other work on the host skews CPU timings badly (llama.cpp's threads spin-wait); the
    # report flags a load above the core count.
    host_load_start: list[float] | None
    model: ModelBlock
    sampling: SamplingBlock
    # The write-up's settings travel with every result so a report renders from results
    # alone.
    study: dict[str, object]
    workload: WorkloadBlock
    server_build: ServerBuildInfo
    resume_key: str
    # The resume key without the unit count, and the runs an extended job was measured in
    # (benchkit.racing.extend): each run's units and start time, oldest first.
    extend_key: str
    extended: list[ExtendedRun]
    server: LaunchInfo
    # The untimed warm-up before each pass (benchkit.client.warmup).
    warmup: WarmupBlock
    client: ClientBlock
    replay_started_utc: str | None
    finished_utc: str
    host_load_end: list[float] | None
    job_seconds: float
    reused_from: str
    measured_utc: str | None
    reuse: ReuseBlock
    telemetry: object
    # Added by benchkit.app: the devices the job was given, and why a stopped job stopped.
    allocation: dict[str, object]
    stopped: str | None


class QualityBlock(TypedDict, total=False):
    """result.json's `quality`: the drift probe's settings and what it did (schema.QualityInfo)."""

    file: str
    # Where the probe's prompts came from: "workload", or "task <file name>".
    source: str
    probes: int
    positions: int
    positions_missing: int
    errors: int
    first_error: str | None
    seconds: float
    tokens: int
    top_k: int
    seed: int
    skipped: str


class JobResult(TypedDict):
    """The result a job assembles; benchkit.results.store.write_result writes it through the
    schema (result.json)."""

    schema_version: int
    status: str
    reason: str | None
    factors: dict[str, Factor]
    provenance: JobProvenance
    # benchkit.measure.calls's block, the telemetry's, and the server's counters (`server`).
    # Assembled in steps from typed parts (measure.CallMetrics, telemetry.TelemetryMetrics,
    # the server's counters); the schema's Metrics checks the whole when it is written.
    metrics: dict[str, object]
    passes: NotRequired[list[dict[str, object]]]
    quality: NotRequired[QualityBlock]
    # The scored task (quality.task), when the job had one.
    task: NotRequired[TaskBlock]


def new_result(cfg: BenchConfig, ctx: JobContext, started: str, reason: str | None) -> JobResult:
    """A failed result of this job with what is known before anything runs; the job (or
    benchkit.app, for a job that never ran) fills in the rest."""
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "failed",
        "reason": reason,
        "factors": factors_of(cfg, ctx),
        "provenance": {
            "benchkit": benchkit_info(),
            "hardware": hardware_info(cfg.hardware),
            "choices": dict(ctx.choices),
            # As typed, but for the value of a secret (benchkit.results.scrub).
            "overrides": [scrub_override(o) for o in ctx.overrides],
            "started_utc": started,
            "study": to_plain(cfg.study),
        },
        "metrics": {},
    }


@dataclass
class JobContext:
    """What the entry point knows about this job (resolved once, from Hydra, then passed)."""

    job_dir: Path
    label: str = "run"
    # Goes into the server's alias nonce; unique per job so a process can be told apart.
    alias_tag: str = ""
    choices: dict[str, str] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    sweep: bool = False
    # The sweep folder whose other jobs may be reused (a point listed twice); none for a
    # single run (benchkit.results.reuse).
    resume_roots: list[Path] = field(default_factory=list)
    # Folders the user named (resume_from=DIR) whose jobs may be reused.
    resume_from: list[Path] = field(default_factory=list)
    # Files beside the job that may hold the overrides as typed (Hydra's multirun.yaml).
    extra_scrub: list[Path] = field(default_factory=list)
    # Where the sweep stands (benchkit.job.sweep_progress), shown before the replay's own line.
    progress: Callable[[], str] | None = None
    # The keys the sweep varies (benchkit.config.space.swept, from its multirun.yaml): each is
    # recorded among the job's factors.
    planned: tuple[str, ...] = ()


def factors_of(cfg: BenchConfig, ctx: JobContext) -> dict[str, Factor]:
    """The values that identify this point of the study: the standing factors, the load axis,
    every key of the planned space (the sweep's and the study's, benchkit.config.space), and the
    group choices."""
    f = space.standing(cfg)
    if cfg.load.process is not LoadProcess.closed:
        # The load axis: the rate offered, or how much faster than recorded a trace runs.
        f["load"] = cfg.load.process.value
        if cfg.load.process is LoadProcess.trace:
            f["speed"] = cfg.load.speed
        else:
            f["rate"] = cfg.load.rate
    planned = [*ctx.planned, *cfg.study.factors]
    for name, value in space.planned_values(cfg, planned, ctx.choices).items():
        f.setdefault(name, value)
    for name, value in drafting.factors(cfg, ctx.choices, planned).items():
        f.setdefault(name, value)
    for group, choice in ctx.choices.items():
        # Closed-loop jobs name no load: their factors read as before open-loop load existed.
        if group == "load" and cfg.load.process is LoadProcess.closed:
            continue
        # Every spec option composes the draft model; drafting.factors says where it counts.
        if group == drafting.DRAFT_CHOICE:
            continue
        if not group.startswith("hydra") and group not in f:
            f[group] = choice
    return f


def loadavg() -> list[float] | None:
    """The machine's load averages, or None where the system has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def workload_info(w: Workload, policy: str, cap: int, replayed: int) -> WorkloadBlock:
    """provenance.workload: the fixture, its sizes and how it was replayed."""
    return {
        "fixture": w.name,
        "path": str(w.path),
        "fingerprint": w.fingerprint(),
        "kind": w.kind,
        "units": len(w.units),
        "calls": w.n_calls,
        "prompt_tokens": w.prompt_tokens,
        "max_prompt_tokens": w.max_prompt_tokens,
        "completion_tokens": w.completion_tokens,
        "output_policy": policy,
        "cap": cap,
        "units_replayed": replayed,
    }


def props_info(props: Mapping[str, object]) -> PropsBlock:
    """provenance.server.props: what the server said of itself at start."""
    dgs = props.get("default_generation_settings")
    dgs = dgs if isinstance(dgs, dict) else {}
    params = dgs.get("params")
    params = params if isinstance(params, dict) else {}
    keep = ("temperature", "top_k", "top_p", "min_p", "presence_penalty", "n_predict", "seed")
    return {
        "build_info": props.get("build_info"),
        "model_alias": props.get("model_alias"),
        "model_path": props.get("model_path"),
        "total_slots": props.get("total_slots"),
        "n_ctx_per_slot": dgs.get("n_ctx"),
        "default_sampling": {k: params.get(k) for k in keep if k in params},
    }

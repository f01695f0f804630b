"""One job, start to end: provide, serve, replay, measure, and write result.json.

A job never raises out of the Hydra task (one exception would stop the sweep before its
report): every failure becomes a result.json with status `failed` or `unavailable` and a
one-line reason. Only Ctrl-C goes on up, after the job has written what it has.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchkit import log
from benchkit.client.replay import RecordSink, Replayer, ReplayOutcome
from benchkit.config import BackendName, BenchConfig, FlashAttn
from benchkit.engines import (
    ENGINE_LABEL,
    ENGINE_VERSIONS,
    METRICS_PATH,
    MODELS_PATH,
    Engine,
    engine_argv,
    engine_counters,
    engine_env,
    engine_identity,
    engine_info_path,
    engine_launcher,
    engine_models,
    engine_of,
    engine_secret,
    engine_unavailable,
)
from benchkit.errors import Unavailable, UserError
from benchkit.measure import compute_metrics
from benchkit.models.draft import provide_draft_model
from benchkit.plan import (
    ReplaySpec,
    ServerSpec,
    api_key,
    context_size,
    is_llama_cpp,
    new_alias,
    plan_replay,
    plan_server,
)
from benchkit.provenance import benchkit_info, hardware_info
from benchkit.provide import ServerBinary, provide_model, provide_server
from benchkit.results import (
    CALLS_FILE,
    RESULT_FILE,
    SCHEMA_VERSION,
    atomic_write_text,
)
from benchkit.serve import RunningServer, ServerError, free_port
from benchkit.server_metrics import parse_prometheus, server_counters
from benchkit.telemetry import TELEMETRY_FILE, JobTelemetry, open_reader
from benchkit.telemetry import absent as telemetry_absent
from benchkit.workload import Unit, Workload, load_workload

_log = log.get(__name__)


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
    # Folders whose earlier jobs may be reused (outputs/sweeps, outputs/runs).
    resume_roots: list[Path] = field(default_factory=list)
    # Files beside the job that may hold the overrides as typed (Hydra's multirun.yaml).
    extra_scrub: list[Path] = field(default_factory=list)


def factors_of(cfg: BenchConfig, ctx: JobContext) -> dict[str, Any]:
    """The swept values and group choices that identify this point of the study."""
    f: dict[str, Any] = {
        "backend": cfg.backend.name.value,
        "slots": cfg.slots,
        "mtp": cfg.mtp,
        "model": cfg.model.name,
        "hardware": cfg.hardware.name,
        "sampling": cfg.sampling.name,
        "workload": cfg.workload.fixture,
        "batch": cfg.server.batch,
        "ubatch": cfg.server.ubatch,
        "flash_attn": cfg.server.flash_attn.value,
        "cache_type_k": cfg.server.cache_type_k.value,
        "cache_type_v": cfg.server.cache_type_v.value,
        "kv_unified": cfg.server.kv_unified,
        "repeats": cfg.repeats,
        "spec": cfg.spec.type.value,
    }
    for group, choice in ctx.choices.items():
        if not group.startswith("hydra") and group not in f:
            f[group] = choice
    return f


def _say(msg: str) -> None:
    _log.info(msg)


def _n_vocab(srv: RunningServer, cfg: BenchConfig) -> int:
    if cfg.model.n_vocab:
        return cfg.model.n_vocab
    r = httpx.get(f"{srv.spec.base_url}/v1/models", headers=srv.headers(), timeout=10.0)
    r.raise_for_status()
    meta = r.json()["data"][0].get("meta") or {}
    n = meta.get("n_vocab")
    if not isinstance(n, int) or n <= 0:
        raise ServerError("the server did not report n_vocab in /v1/models: set model.n_vocab")
    return n


def run_job(cfg: BenchConfig, ctx: JobContext) -> dict[str, Any]:
    """Run one job and write its result.json; returns what was written."""
    job_dir = ctx.job_dir
    job_dir.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.monotonic()
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "status": "failed",
        "reason": None,
        "factors": factors_of(cfg, ctx),
        "provenance": {
            "benchkit": benchkit_info(),
            "hardware": hardware_info(cfg.hardware),
            "choices": dict(ctx.choices),
            "overrides": list(ctx.overrides),
            "started_utc": started,
            # Other work on the host skews CPU timings badly (llama.cpp's threads spin-wait);
            # the report flags a load above the core count.
            "host_load_start": _loadavg(),
            "model": {
                "name": cfg.model.name,
                "architecture": cfg.model.architecture,
                "params_total_b": cfg.model.params_total_b,
                "params_active_b": cfg.model.params_active_b,
                "quant": cfg.model.quant,
                "size_gb": cfg.model.size_gb,
                "synthetic": cfg.model.synthetic is not None and cfg.model.path is None,
            },
            "sampling": {"profile": cfg.sampling.name, "sent": {}},
            # The write-up's settings travel with every result so a report renders from
            # results alone.
            "study": _plain(cfg.study),
        },
        "metrics": {},
    }
    prov = result["provenance"]
    interrupted = False
    try:
        _run(cfg, ctx, result)
    except _UserInterrupt:
        interrupted = True  # result already holds the partial measurement, as incomplete
    except Unavailable as exc:
        result["status"], result["reason"] = "unavailable", str(exc)
    except (UserError, ServerError) as exc:
        result["status"], result["reason"] = "failed", str(exc)
    except KeyboardInterrupt:
        interrupted = True
        result["status"], result["reason"] = "incomplete", "interrupted by the user (Ctrl-C)"
    except Exception as exc:  # the sweep must go on; keep the traceback beside the result
        (job_dir / "error.txt").write_text(traceback.format_exc())
        result["status"] = "failed"
        result["reason"] = f"internal error: {type(exc).__name__}: {exc} (see error.txt)"
    ended = {
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host_load_end": _loadavg(),
        "job_seconds": round(time.monotonic() - t0, 3),
    }
    # A reused job's own times describe the reuse, never the measurement.
    (prov["reuse"] if isinstance(prov.get("reuse"), dict) else prov).update(ended)
    secret = api_key(cfg)
    text = json.dumps(result, indent=2, default=str) + "\n"
    if secret and secret in text:
        # The override list and any error text may quote it; the result never does.
        text = text.replace(secret, "***")
        result = json.loads(text)
    atomic_write_text(job_dir / RESULT_FILE, text)
    scrub_secret(
        api_key(cfg), [*job_dir.glob(".hydra/*.yaml"), *job_dir.glob("*.log"), *ctx.extra_scrub]
    )
    m = result["metrics"]
    detail = ""
    if m.get("s_per_unit_throughput") is not None:
        detail = (
            f": {m['s_per_unit_throughput']:.2f} s/unit (throughput basis), "
            f"{m['s_per_unit_slot_latency']:.2f} s/unit (slot latency), "
            f"decode {m['decode_tok_s'] or 0:,.0f} tok/s aggregate"
        )
    why = f" ({result['reason']})" if result["reason"] else ""
    reused = result["provenance"].get("reused_from")
    how = f" (reused from {reused})" if reused else ""
    _say(f"job {ctx.label} {result['status']}{how}{why}{detail}")
    if interrupted:
        raise KeyboardInterrupt
    return result


class _UserInterrupt(Exception):
    """Ctrl-C during the replay: the job is written as incomplete, then the sweep stops."""


def _run(cfg: BenchConfig, ctx: JobContext, result: dict[str, Any]) -> None:
    prov = result["provenance"]
    external = cfg.backend.name is BackendName.external
    engine = engine_of(cfg)
    if not is_llama_cpp(cfg) and not external and engine is None:
        raise Unavailable(_engine_unavailable(cfg))
    if engine is not None and (why := engine_unavailable(cfg)):
        raise Unavailable(why)
    workload = load_workload(cfg.workload.fixture)
    replay = plan_replay(cfg, fixture_policy=workload.output_policy, fixture_cap=workload.cap)
    prov["sampling"]["sent"] = dict(replay.sampling)
    units = list(workload.units)[: replay.units] if replay.units else list(workload.units)
    prov["workload"] = _workload_info(workload, replay.output_policy.value, replay.cap)
    # workload.units=N replays the first N units only: the write-up must say so.
    prov["workload"]["units_replayed"] = len(units)
    if external:
        prov["resume_key"] = resume_key(cfg, workload.fingerprint(), f"external {cfg.backend.url}")
        _run_external(cfg, ctx, result, workload, replay, units)
        return
    if engine is not None:
        _run_engine(cfg, ctx, result, engine, workload, replay, units)
        return
    binary = provide_server(cfg)
    prov["server_build"] = {
        "binary": str(binary.path),
        "source": binary.source,
        "version": binary.version,
        "devices": binary.devices,
        "built_now_s": binary.build_seconds,
        # A software rasteriser (llvmpipe) is the CPU behind a Vulkan API: the report says so.
        "software_device": binary.software_device,
        # Where and how it was built: flags, machine, portable or native, carried or not.
        "build": binary.build,
    }
    _fit_flash_attn(cfg, binary, prov)
    key = resume_key(cfg, workload.fingerprint(), f"{binary.path}\n{binary.version}")
    prov["resume_key"] = key
    if cfg.resume and _reuse(key, ctx, result):
        return
    model_path = provide_model(cfg)
    prov["model"]["path"] = str(model_path)
    prov["model"]["file_bytes"] = model_path.stat().st_size
    draft_path = provide_draft_model(cfg)
    if draft_path is not None and cfg.spec.draft_model is not None:
        prov["model"]["draft"] = {"name": cfg.spec.draft_model.name, "path": str(draft_path)}
    longest = _longest_prompt(cfg, units, workload.name)
    spec = plan_server(
        cfg,
        server_bin=str(binary.path),
        model_path=str(model_path),
        port=free_port(cfg.server.host),
        alias=new_alias(ctx.alias_tag or ctx.label),
        longest_prompt=longest,
        cap=replay.cap,
        draft_model_path=str(draft_path) if draft_path else None,
    )
    prov["server"] = _server_info(spec)
    _measure(
        cfg, ctx, result, spec, workload, replay, units,
        make_server=lambda log: RunningServer(spec, log),
        counters=_server_counters,
    )  # fmt: skip


def _measure(
    cfg: BenchConfig,
    ctx: JobContext,
    result: dict[str, Any],
    spec: ServerSpec,
    workload: Workload,
    replay: ReplaySpec,
    units: list[Unit],
    *,
    make_server: Callable[[Path], RunningServer],
    counters: Callable[[RunningServer], dict[str, Any] | None],
) -> None:
    """Start the server once per repeat, replay the units through it, record every call."""
    prov = result["provenance"]
    _say(
        f"job {ctx.label}: {cfg.backend.name.value}, {cfg.slots} slot(s), mtp={cfg.mtp}, "
        f"{len(units)} units x {replay.repeats} on {cfg.model.name}"
    )
    calls_path = ctx.job_dir / CALLS_FILE
    calls_path.unlink(missing_ok=True)
    sink = RecordSink(calls_path)
    outcomes: list[ReplayOutcome] = []
    server_side: list[dict[str, Any] | None] = []
    end_problem: str | None = None
    tel = job_telemetry(cfg)
    t0 = time.perf_counter()
    try:
        # Each repeat is a pass on a freshly started server: no prompt cache, KV cache or
        # warm state leaks from one measurement into the next.
        for rep in range(replay.repeats):
            log = ctx.job_dir / ("server.log" if rep == 0 else f"server.{rep}.log")
            with make_server(log) as srv:
                srv.start(cfg.server.startup_timeout_s)
                if rep == 0:
                    prov["server"]["props"] = _props_info(srv.props)
                    n_vocab = _n_vocab(srv, cfg)
                replayer = Replayer(
                    base_url=spec.base_url,
                    alias=spec.alias,
                    spec=replay,
                    workload=workload,
                    n_vocab=n_vocab,
                    sink=sink,
                    headers=srv.headers(),
                    alive=srv.alive,
                    repeat=rep,
                    t0=t0,
                )
                sampler = tel.sampler(srv.proc.pid if srv.proc else None, t0)
                sampler.start()
                try:
                    outcome = replayer.run()
                finally:
                    tel.passes.append(sampler.stop())
                outcomes.append(outcome)
                if srv.alive():
                    server_side.append(counters(srv))
                    try:
                        srv.verify_identity()
                    except ServerError as exc:
                        end_problem = str(exc)
                else:
                    end_problem = "the server was not running at the end of the job"
            if outcome.interrupted or end_problem:
                break
    finally:
        sink.close()
        tel.close()
    _finish(result, outcomes, units, replay.repeats, end_problem, cfg)
    # GPU energy, power, busy shares and the server's CPU time over the replay passes.
    result["metrics"].update(tel.metrics(int(result["metrics"].get("units_completed") or 0)))
    if tel.passes and any(p.samples for p in tel.passes):
        tel.write_samples(ctx.job_dir / TELEMETRY_FILE)
    # The server's own counters from /metrics, per pass, beside the client's measurements.
    result["metrics"]["server"] = server_side[0] if len(server_side) == 1 else server_side
    if any(o.user_interrupt for o in outcomes):
        raise _UserInterrupt


def _fit_flash_attn(cfg: BenchConfig, binary: ServerBinary, prov: dict[str, Any]) -> None:
    """`server.flash_attn=auto` means off on a device where this build's flash attention
    crashes (llvmpipe); asking for `on` there is refused before the server starts."""
    if binary.flash_attn_off is None or cfg.server.flash_attn is FlashAttn.off:
        return
    if cfg.server.flash_attn is FlashAttn.on:
        raise UserError(
            f"server.flash_attn=on cannot run on {binary.software_device}: "
            f"{binary.flash_attn_off}; use server.flash_attn=auto or off."
        )
    cfg.server.flash_attn = FlashAttn.off
    prov["server_build"]["flash_attn_forced_off"] = binary.flash_attn_off


def _run_engine(
    cfg: BenchConfig,
    ctx: JobContext,
    result: dict[str, Any],
    engine: Engine,
    workload: Workload,
    replay: ReplaySpec,
    units: list[Unit],
) -> None:
    """A vLLM or SGLang job: the same replay and records as llama-server's, with the
    engine's command line, identity check and metrics (benchkit.engines)."""
    prov = result["provenance"]
    label = ENGINE_LABEL[engine]
    launcher = engine_launcher(cfg)
    prov["server_build"] = {
        "engine": engine.value,
        "source": label,
        "launcher": launcher,
        # The engine's version is whatever is installed; the flags were checked against this.
        "flags_checked_against": ENGINE_VERSIONS[engine],
    }
    key = resume_key(cfg, workload.fingerprint(), f"{' '.join(launcher)}\n{engine.value}")
    prov["resume_key"] = key
    if cfg.resume and _reuse(key, ctx, result):
        return
    model_path, draft_path = engine_models(cfg)
    prov["model"]["path"] = model_path
    if draft_path is not None:
        prov["model"]["draft"] = {"path": draft_path}
    secret = engine_secret(cfg)
    longest = _longest_prompt(cfg, units, workload.name)
    port = free_port(cfg.server.host)
    alias = new_alias(ctx.alias_tag or ctx.label)
    # SGLang takes an API key only from argv or a --config file: a file only we can read,
    # outside the job folder, gone when the job ends.
    with tempfile.TemporaryDirectory(prefix="benchkit-engine-") as tmp:
        secret_path: str | None = None
        if secret.config_text is not None:
            path = Path(tmp) / "api-key.yaml"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secret.config_text)
            secret_path = str(path)
        argv = engine_argv(
            cfg, model_path=model_path, port=port, alias=alias, longest_prompt=longest,
            cap=replay.cap, draft_model_path=draft_path, launcher=launcher,
            secret_config_path=secret_path,
        )  # fmt: skip
        total, per_slot = context_size(cfg, longest, replay.cap)
        spec = ServerSpec(
            argv=tuple(argv), env=engine_env(cfg), host=cfg.server.host, port=port,
            alias=alias, ctx_total=total, ctx_per_slot=per_slot, slots=cfg.slots,
            api_key=api_key(cfg),
        )  # fmt: skip
        prov["server"] = _server_info(spec)
        identify = _engine_identify(cfg, engine)
        _measure(
            cfg, ctx, result, spec, workload, replay, units,
            make_server=lambda log: RunningServer(
                spec, log, name=label, identify=identify, secret_env=secret.env,
                unset_env=secret.unset,
            ),
            counters=lambda srv: _engine_counters(srv, engine),
        )  # fmt: skip


def _engine_identify(cfg: BenchConfig, engine: Engine) -> Callable[[RunningServer], dict[str, Any]]:
    """The engine's proof that it is this job's server: its served model name is the job's
    alias nonce and, where it shows one, its slot count is the job's."""
    info_path = engine_info_path(cfg)

    def identify(srv: RunningServer) -> dict[str, Any]:
        base, headers = srv.spec.base_url, srv.headers()
        try:
            models = httpx.get(base + MODELS_PATH, headers=headers, timeout=10.0).json()
            info = None
            if info_path is not None:
                info = httpx.get(base + info_path, headers=headers, timeout=10.0).json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ServerError(f"{MODELS_PATH} or {info_path} could not be read: {exc}") from exc
        # /server_info holds the API key (SGLang): only the two values below are kept.
        alias, slots = engine_identity(engine, models, info)
        problems = []
        if alias != srv.spec.alias:
            problems.append(
                f"served model is {alias!r}, expected this job's nonce {srv.spec.alias!r}"
            )
        if slots is not None and slots != srv.spec.slots:
            problems.append(f"it runs {slots} sequences at once, expected {srv.spec.slots}")
        if problems:
            raise ServerError("the server on this port is not this job's: " + "; ".join(problems))
        return {"model_alias": alias, "total_slots": slots}

    return identify


def _engine_counters(srv: RunningServer, engine: Engine) -> dict[str, Any] | None:
    """The engine's /metrics counters under llama-server's keys (None when unreadable)."""
    try:
        r = httpx.get(srv.spec.base_url + METRICS_PATH, headers=srv.headers(), timeout=10.0)
        r.raise_for_status()
        return engine_counters(engine, r.text)
    except (httpx.HTTPError, ValueError):
        return None


def _server_counters(srv: RunningServer) -> dict[str, Any] | None:
    """llama-server's /metrics counters (None when they cannot be read: not worth a failure)."""
    try:
        r = httpx.get(f"{srv.spec.base_url}/metrics", headers=srv.headers(), timeout=10.0)
        r.raise_for_status()
        return server_counters(parse_prometheus(r.text))
    except (httpx.HTTPError, ValueError):
        return None


def _run_external(
    cfg: BenchConfig,
    ctx: JobContext,
    result: dict[str, Any],
    workload: Workload,
    replay: ReplaySpec,
    units: list[Unit],
) -> None:
    """Measure a server benchkit did not start, only once it proves it is the declared one."""
    url = (cfg.backend.url or "").rstrip("/")
    if not url:
        raise UserError(_engine_unavailable(cfg))
    key = api_key(cfg)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    props = external_identity(url, headers, model=cfg.model.name, slots=cfg.slots)
    prov = result["provenance"]
    alias = str(props.get("model_alias") or cfg.model.name)
    prov["server"] = {"url": url, "external": True, "alias": alias, "props": _props_info(props)}
    if cfg.model.n_vocab:
        n_vocab = cfg.model.n_vocab
    else:
        r = httpx.get(f"{url}/v1/models", headers=headers, timeout=10.0)
        n_vocab = int((r.json()["data"][0].get("meta") or {}).get("n_vocab") or 0)
        if n_vocab <= 0:
            raise UserError("the external server does not report n_vocab: set model.n_vocab=N.")
    _say(f"job {ctx.label}: external server {url}, {cfg.slots} slot(s), {len(units)} units")
    calls_path = ctx.job_dir / CALLS_FILE
    calls_path.unlink(missing_ok=True)
    sink = RecordSink(calls_path)
    outcomes: list[ReplayOutcome] = []
    end_problem = None
    try:
        for rep in range(replay.repeats):
            outcome = Replayer(
                base_url=url,
                alias=alias,
                spec=replay,
                workload=workload,
                n_vocab=n_vocab,
                sink=sink,
                headers=headers,
                repeat=rep,
            ).run()
            outcomes.append(outcome)
            if outcome.interrupted:
                break
    finally:
        sink.close()
    try:
        external_identity(url, headers, model=cfg.model.name, slots=cfg.slots)
    except UserError as exc:
        end_problem = f"at the end of the job: {exc}"
    _finish(result, outcomes, units, replay.repeats, end_problem, cfg)
    result["metrics"].update(
        telemetry_absent(
            "backend=external: benchkit did not start the server, so neither its process nor "
            "its GPU is known to be this job's"
        )
    )
    if any(o.user_interrupt for o in outcomes):
        raise _UserInterrupt


def job_telemetry(cfg: BenchConfig) -> JobTelemetry:
    """The job's sampler set-up: the GPU reader for its backend and device, or the reason
    there is none (the server's CPU time is read either way)."""
    if not cfg.telemetry.enabled:
        return JobTelemetry(None, "telemetry.enabled=false", cfg.telemetry.interval_s)
    indices = None if cfg.hardware.device is None else [cfg.hardware.device]
    reader, reason = open_reader(cfg.backend.name.value, indices)
    return JobTelemetry(reader, reason, cfg.telemetry.interval_s)


def external_identity(
    url: str, headers: dict[str, str], *, model: str, slots: int
) -> dict[str, Any]:
    """/props of an external server, or UserError unless it serves `model` with `slots` slots."""
    try:
        r = httpx.get(f"{url}/props", headers=headers, timeout=10.0)
    except httpx.HTTPError as exc:
        raise UserError(
            f"backend.url={url} does not answer ({exc}): start the server first."
        ) from exc
    if r.status_code != 200:
        raise UserError(
            f"backend.url={url} has no usable /props (HTTP {r.status_code}), so benchkit cannot "
            "prove which model and how many slots it serves; it measures nothing."
        )
    props = r.json()
    names = {str(props.get("model_alias") or ""), Path(str(props.get("model_path") or "")).stem}
    problems = []
    if model not in names:
        problems.append(f"it serves {sorted(n for n in names if n)}, not model.name={model!r}")
    if props.get("total_slots") != slots:
        problems.append(f"it has total_slots={props.get('total_slots')}, not slots={slots}")
    if problems:
        raise UserError(
            f"Refusing to measure {url}: " + "; ".join(problems) + ". Fix the server or the config."
        )
    return dict(props)


def _longest_prompt(cfg: BenchConfig, units: list[Unit], fixture: str) -> int:
    """The longest prompt in tokens, which server.ctx_policy=fit sizes each slot for. A text or
    chat call recorded without its prompt length cannot be fitted: guessing would either
    overflow the context mid-sweep or waste memory, so the user is asked for a size."""
    calls = [c for u in units for c in u.calls]
    unknown = sum(1 for c in calls if c.prompt_tokens is None)
    if unknown and cfg.server.ctx_policy == "fit":
        raise UserError(
            f"Workload {fixture} has {unknown} call(s) without a recorded prompt length, so "
            "server.ctx_policy=fit cannot size the context: give each call its "
            '"prompt_tokens" (the recorder does), or set server.ctx_policy=fixed server.ctx=N.'
        )
    return max((c.prompt_tokens or 0) for c in calls)


def resume_key(cfg: BenchConfig, workload_fingerprint: str, build: str) -> str:
    """What makes two jobs the same measurement: resolved config, workload and server build."""
    conf = _plain(cfg)
    conf.pop("resume", None)
    blob = json.dumps([conf, workload_fingerprint, build], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


# Provenance that describes the measurement itself: a reused job keeps the measuring pass's.
MEASURED_PROVENANCE = (
    "server",
    "model",
    "workload",
    "replay_started_utc",
    "server_build",
    "started_utc",
    "finished_utc",
    "host_load_start",
    "host_load_end",
    "job_seconds",
    "client",
    "benchkit",
    "telemetry",
)


def _reuse(key: str, ctx: JobContext, result: dict[str, Any]) -> bool:
    """Take a complete earlier job with the same resume key: this job's own folder from an
    earlier pass, else a copy from another sweep or run."""
    own = ctx.job_dir / RESULT_FILE
    # The job's own folder first: a sweep run again into the same hydra.sweep.dir (a resumed
    # lease, a re-run after Ctrl-C) keeps its complete jobs where they are.
    candidates = [own] + [
        path
        for root in ctx.resume_roots
        for path in sorted(root.glob(f"*/{RESULT_FILE}")) + sorted(root.glob(f"*/*/{RESULT_FILE}"))
        if path.parent.resolve() != ctx.job_dir.resolve()
    ]
    for path in candidates:
        if not path.exists():
            continue
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        prov = old.get("provenance") or {}
        if old.get("status") != "complete" or prov.get("resume_key") != key:
            continue
        if path != own:
            for name in (CALLS_FILE, "server.log", TELEMETRY_FILE):
                if (path.parent / name).exists():
                    shutil.copyfile(path.parent / name, ctx.job_dir / name)
        result["status"], result["reason"] = "complete", None
        result["metrics"] = old["metrics"]
        if "passes" in old:
            result["passes"] = old["passes"]
        # What was true when the job was measured stays as it was (times, host load, the
        # client path, the benchkit that measured it); the reuse is recorded beside it.
        now = result["provenance"]
        reuse = {
            "started_utc": now.get("started_utc"),
            "host_load_start": now.get("host_load_start"),
            "benchkit": now.get("benchkit"),
            "from": str(path.parent),
        }
        for k in MEASURED_PROVENANCE:
            if k in prov:
                now[k] = prov[k]
        # A job reused twice keeps the folder and time of the pass that measured it.
        now["reused_from"] = prov.get("reused_from") or str(path.parent)
        now["measured_utc"] = prov.get("measured_utc") or prov.get("started_utc")
        now["reuse"] = reuse
        return True
    return False


def scrub_secret(secret: str | None, paths: list[Path]) -> None:
    """Replace the API key wherever Hydra or a log copied it (overrides, config, logs)."""
    if not secret:
        return
    for p in paths:
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        if secret in text:
            atomic_write_text(p, text.replace(secret, "***"))


def _finish(
    result: dict[str, Any],
    outcomes: list[ReplayOutcome],
    units: list[Any],
    repeats: int,
    end_problem: str | None,
    cfg: BenchConfig,
) -> None:
    if outcomes:
        # How the calls were timed: kernel receive times on the raw path, or when the event
        # loop read each line on the httpx fallback (benchkit/transport.py), and why.
        result["provenance"]["client"] = {
            "path": outcomes[-1].client,
            "fallback": outcomes[-1].client_fallback,
        }
    per_unit = {u.id: len(u.calls) for u in units}
    calls_per_pass = sum(per_unit.values())
    records = [r for o in outcomes for r in o.records]
    metrics = compute_metrics(
        records,
        wall_s=sum(o.wall_s for o in outcomes),
        units_planned=len(units) * repeats,
        calls_planned=calls_per_pass * repeats,
        calls_per_unit=per_unit,
    )
    result["metrics"] = metrics
    if repeats > 1:
        result["passes"] = [
            compute_metrics(
                o.records,
                wall_s=o.wall_s,
                units_planned=len(units),
                calls_planned=calls_per_pass,
                calls_per_unit=per_unit,
            )
            for o in outcomes
        ]
    result["provenance"]["replay_started_utc"] = outcomes[0].started_utc if outcomes else None
    failed = [r for r in records if not r.ok]
    interrupted = next((o.interrupted for o in outcomes if o.interrupted), None)
    if interrupted:
        result["status"], result["reason"] = "incomplete", interrupted
    elif end_problem:
        result["status"], result["reason"] = "failed", end_problem
    elif metrics["error_rate"] > cfg.server.max_error_rate:
        first = failed[0]
        result["status"] = "failed"
        result["reason"] = (
            f"{len(failed)} of {len(records)} calls failed (server.max_error_rate="
            f"{cfg.server.max_error_rate}); first: unit {first.unit} call {first.seq}: "
            f"{first.error}"
        )
    elif metrics["units_completed"] < metrics["units_planned"]:
        result["status"] = "incomplete"
        result["reason"] = (
            f"{metrics['units_completed']} of {metrics['units_planned']} units completed"
        )
    else:
        result["status"], result["reason"] = "complete", None


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _plain(obj: Any) -> Any:
    """A dataclass config as plain JSON-able data (enums as their values)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.structured(obj), enum_to_str=True)


def _workload_info(w: Workload, policy: str, cap: int) -> dict[str, Any]:
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
    }


def _server_info(spec: ServerSpec) -> dict[str, Any]:
    return {
        "argv": spec.redacted_argv(),
        "env": dict(spec.env),
        "host": spec.host,
        "port": spec.port,
        "alias": spec.alias,
        "ctx_total": spec.ctx_total,
        "ctx_per_slot": spec.ctx_per_slot,
        "slots": spec.slots,
    }


def _props_info(props: dict[str, Any]) -> dict[str, Any]:
    dgs = props.get("default_generation_settings") or {}
    params = dgs.get("params") or {}
    keep = ("temperature", "top_k", "top_p", "min_p", "presence_penalty", "n_predict", "seed")
    return {
        "build_info": props.get("build_info"),
        "model_alias": props.get("model_alias"),
        "model_path": props.get("model_path"),
        "total_slots": props.get("total_slots"),
        "n_ctx_per_slot": dgs.get("n_ctx"),
        "default_sampling": {k: params.get(k) for k in keep if k in params},
    }


def _engine_unavailable(cfg: BenchConfig) -> str:
    name = cfg.backend.name
    if name is BackendName.external and not cfg.backend.url:
        return "backend=external needs backend.url=URL of a running llama-server."
    return f"backend={name.value} is not supported by this version of benchkit yet."

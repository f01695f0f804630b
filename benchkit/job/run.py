"""One job, start to end: provide, serve, replay, measure, and write result.json.

A job never raises out of the Hydra task (one exception would stop the sweep before its
report): every failure becomes a result.json with status `failed` or `unavailable` and a
one-line reason. Only Ctrl-C goes on up, after the job has written what it has.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import httpx

from benchkit import log
from benchkit.client import warmup
from benchkit.client.replay import RecordSink, Replayer, ReplayOutcome
from benchkit.config import drafting
from benchkit.config.knobs import check as check_knobs
from benchkit.config.schema import BenchConfig, to_plain
from benchkit.errors import Unavailable, UserError, interrupt_for, interrupt_reason
from benchkit.job import extend as job_extend
from benchkit.job.figures import job_figures, job_telemetry
from benchkit.job.folder import failure_reason, free_room, keep_room

# The result a job assembles, its context and factors (benchkit/job/record.py).
from benchkit.job.record import (
    JobContext,
    JobResult,
    QualityBlock,
    loadavg,
    new_result,
    props_info,
    workload_info,
)
from benchkit.load import passes as job_load
from benchkit.load.passes import measured
from benchkit.measure.calls import compute_metrics
from benchkit.measure.telemetry import JobTelemetry
from benchkit.measure.telemetry import absent as telemetry_absent
from benchkit.paths import use_config
from benchkit.quality.probe import (
    QUALITY_FILE,
    ProbeClient,
    check_source,
    probe_set,
    run_probe,
    task_probe_set,
)
from benchkit.quality.task import TASK_FILE, Task, TaskBlock, load_task, run_task
from benchkit.racing.extend import GAP_S, Prior, find_prior, keep_calls, runs_block
from benchkit.results import reuse
from benchkit.results.owned import is_write_problem, write_problem
from benchkit.results.scrub import secrets_of
from benchkit.results.store import (
    CALLS_FILE,
    RESULT_FILE,
    as_written,
    write_result,
)
from benchkit.results.trust import sign, user_key
from benchkit.server.engines import (
    Engine,
    Launch,
    LlamaCpp,
    Target,
    engine_for,
)
from benchkit.server.metrics import ServerCounters, since
from benchkit.server.plan import ReplaySpec, new_alias, plan_replay
from benchkit.server.serve import Server, ServerError, free_port, n_vocab
from benchkit.workload import Unit, Workload, load_workload

_log = log.get(__name__)


def run_job(cfg: BenchConfig, ctx: JobContext) -> Mapping[str, object]:
    """Run one job and write its result.json; returns what was written."""
    # Here, not in the sweep's main: joblib and submitit run jobs in processes of their own.
    # An unset key falls back to the environment even after an earlier job set it.
    use_config(cache_dir=cfg.cache_dir, llama_quantize=cfg.llama_quantize)
    job_dir = ctx.job_dir
    job_dir.mkdir(parents=True, exist_ok=True)
    keep_room(job_dir)  # so the result that says why still fits on a disk that fills up
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.monotonic()
    result = new_result(cfg, ctx, started, None)
    prov = result["provenance"]
    prov["host_load_start"] = loadavg()
    prov["model"] = {
        "name": cfg.model.name,
        "architecture": cfg.model.architecture,
        "params_total_b": cfg.model.params_total_b,
        "params_active_b": cfg.model.params_active_b,
        "quant": cfg.model.quant,
        "size_gb": cfg.model.size_gb,
        "synthetic": cfg.model.synthetic is not None
        and cfg.model.path is None
        and cfg.model.package is None,
        "n_vocab": cfg.model.n_vocab,
    }
    prov["sampling"] = {"profile": cfg.sampling.name, "sent": {}}
    interrupted = False
    try:
        _run(cfg, ctx, result)
    except _ExtensionStopped as stop:
        # The earlier run's files are back as they were: nothing of the extension is written.
        free_room(job_dir)
        _log.info(stop.note)
        raise interrupt_for(stop.reason, "complete" if stop.complete else "incomplete") from None
    except _UserInterrupt:
        interrupted = True  # result holds the measurement: incomplete unless every unit ended
    except Unavailable as exc:
        result["status"], result["reason"] = "unavailable", str(exc)
    except (UserError, ServerError) as exc:
        result["status"], result["reason"] = "failed", str(exc)
    except KeyboardInterrupt as exc:
        interrupted = True
        result["status"], result["reason"] = "incomplete", interrupt_reason(exc)
    except Exception as exc:  # the sweep must go on; keep the traceback beside the result
        result["status"] = "failed"
        result["reason"] = failure_reason(exc, job_dir)
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_end, took = loadavg(), round(time.monotonic() - t0, 3)
    # A reused job's own times describe the reuse, never the measurement.
    reuse = prov.get("reuse")
    if reuse is not None:
        reuse.update({"finished_utc": finished, "host_load_end": load_end, "job_seconds": took})
    else:
        prov.update({"finished_utc": finished, "host_load_end": load_end, "job_seconds": took})
    secrets = secrets_of(cfg)
    # The data files first: the digest below is over them as they stay.
    secrets.tree([job_dir, *ctx.extra_scrub])
    # The override list and any error text may quote a secret; the result never does.
    # As the schema writes it, so the digest is over what a later job reads back.
    plain = as_written(secrets.json_object(result))
    if result["status"] in ("complete", "incomplete"):
        # Signed with this user's key: what every reader checks (benchkit.results.trust). A key that
        # went bad since the start leaves the result unsigned, which no reader takes as proven.
        try:
            plain["provenance"]["digest"] = sign(plain, job_dir)
        except UserError as exc:
            _log.error(f"job {ctx.label}: {exc}")
    free_room(job_dir)
    try:
        # Through the schema, the one writer: what is written is what the loader reads.
        written = write_result(job_dir / RESULT_FILE, plain)
    except OSError as exc:
        if not is_write_problem(exc):
            raise
        written = dict(plain)
        _log.error(f"job {ctx.label}: {write_problem(exc, job_dir / RESULT_FILE, 'result')}")
    _log.info(summary(ctx.label, written))
    if interrupted:
        why = result["reason"] or prov.get("stopped")
        raise interrupt_for(why if isinstance(why, str) else None, str(written.get("status")))
    return written


def summary(label: str, written: Mapping[str, Any]) -> str:
    """The job's console line: status, why, and its figures; a figure not measured says so
    (never `0`)."""
    m = written.get("metrics") or {}
    detail = ""
    if m.get("s_per_unit_throughput") is not None:

        def val(key: str, fmt: str, unit: str) -> str:
            v = m.get(key)
            return f"{v:{fmt}} {unit}" if isinstance(v, int | float) else f"n/a {unit}"

        detail = (
            f": {val('s_per_unit_throughput', '.2f', 's/unit')} (throughput basis), "
            f"{val('s_per_unit_slot_latency', '.2f', 's/unit')} (slot latency), "
            f"decode {val('decode_tok_s', ',.0f', 'tok/s')} aggregate"
        )
    if isinstance(m.get("open_loop"), dict):
        detail = job_load.summary(m)
    why = f" ({written['reason']})" if written.get("reason") else ""
    reused = (written.get("provenance") or {}).get("reused_from")
    how = f" (reused from {reused})" if reused else ""
    return f"job {label} {written.get('status')}{how}{why}{detail}"


class _UserInterrupt(Exception):
    """Ctrl-C during the replay or the probe after it: the job is written (incomplete unless
    every unit had ended), then the sweep stops."""


class _ExtensionStopped(Exception):
    """Ctrl-C during a race's extension before its units ended: the earlier run is put back as
    it was (job_extend.Kept) and nothing of the extension is written."""

    def __init__(self, reason: str, note: str, complete: bool) -> None:
        super().__init__(reason)
        self.reason, self.note, self.complete = reason, note, complete


def _run(cfg: BenchConfig, ctx: JobContext, result: JobResult) -> None:
    """The one job path, for every engine: provide, plan, then measure (or reuse)."""
    prov = result["provenance"]
    # Every value is checked before anything is built or started (benchkit.config.knobs).
    check_knobs(cfg)
    user_key()  # the key its result is signed with: a problem with it stops the job here
    engine = engine_for(cfg)
    workload = load_workload(cfg.workload.fixture)
    # The scored task is checked before anything is built or measured: a mistake in it is
    # one sentence, and no server starts.
    task = _load_task(cfg)
    check_source(cfg.quality.probe_source, task)
    replay = plan_replay(cfg, fixture_policy=workload.output_policy, fixture_cap=workload.cap)
    job_load.check(cfg, workload)  # an open-loop load without a schedule: before any build
    prov["sampling"]["sent"] = dict(replay.sampling)
    units = list(workload.units)[: replay.units] if replay.units else list(workload.units)
    # workload.units=N replays the first N units only: the write-up must say so.
    prov["workload"] = workload_info(workload, replay.output_policy.value, replay.cap, len(units))
    build = engine.provide()
    if build.info is not None:
        prov["server_build"] = build.info
    key = resume_key(cfg, workload.fingerprint(), build.id)
    prov["resume_key"] = key
    # The same measurement but for the unit count: a race extends it (benchkit.racing.extend).
    extend_key = resume_key(cfg, workload.fingerprint(), build.id, with_units=False)
    prov["extend_key"] = extend_key
    if engine.started_here and cfg.resume:
        earlier = reuse.find(key, ctx, task.sha256 if task is not None else None)
        if earlier is not None:
            reuse.take(*earlier, ctx, result)
            return
    prior = None
    # A pass stopped part-way is extended by units; an open-loop pass has a schedule instead.
    if engine.started_here and cfg.resume and replay.repeats == 1 and not job_load.open_loop(cfg):
        per_unit = {u.id: len(u.calls) for u in units}
        prior = find_prior(ctx.job_dir, extend_key, len(units), per_unit)
        first = {u.id for u in units[: len(prior.units)]} if prior else set()
        if prior is not None and set(prior.units) != first:
            prior = None  # not the first units of this workload: measure them all again
    if prior is not None and len(prior.units) == len(units):
        # Stopped by Ctrl-C after its last unit had completed: nothing is left to measure.
        keep_calls(ctx.job_dir / CALLS_FILE, prior)
        _finish(result, [], units, 1, None, cfg, prior)
        if not job_extend.carry_finished(result, prior):
            result["metrics"].update(
                telemetry_absent(
                    "the job was finished from the calls of an interrupted pass that recorded "
                    "no telemetry over it"
                )
            )
        return
    models = engine.models()
    prov["model"].update(models.info)
    with tempfile.TemporaryDirectory(prefix="benchkit-engine-") as scratch:
        target = Target(
            workload=workload.name,
            cap=replay.cap,
            port=free_port(cfg.server.host),
            alias=new_alias(ctx.alias_tag or ctx.label),
            scratch=Path(scratch),
        )
        launch = engine.plan(build, models, units, target=target)
        prov["server"] = launch.info.copy()
        # What the folder held before an extension: put back if it is interrupted.
        kept = job_extend.Kept.take(ctx.job_dir) if prior is not None else None
        try:
            _measure(cfg, ctx, result, engine, launch, workload, replay, units, prior, task, kept)
        except KeyboardInterrupt as exc:
            # Before its replay (the server starting, its warm-up): the earlier run stands.
            if kept is None or prior is None:
                raise
            _put_back(kept, ctx, prior, len(units), interrupt_reason(exc))


def _load_task(cfg: BenchConfig) -> Task | None:
    q = cfg.quality
    if not q.task:
        if q.task_scorer:
            raise UserError(
                f"quality.task_scorer={q.task_scorer} is set but quality.task is empty; give "
                "the task file it scores (quality.task=PATH) or unset the scorer."
            )
        return None
    if q.task_tokens < 1:
        raise UserError(f"quality.task_tokens={q.task_tokens}: give at least 1 token per answer.")
    return load_task(q.task, q.task_scorer, q.task_abs_tol, q.task_rel_tol)


def _measure(
    cfg: BenchConfig,
    ctx: JobContext,
    result: JobResult,
    engine: Engine,
    launch: Launch,
    workload: Workload,
    replay: ReplaySpec,
    units: list[Unit],
    prior: Prior | None = None,
    task: Task | None = None,
    kept: job_extend.Kept | None = None,
) -> None:
    """Start the server once per repeat, replay the units through it, record every call.
    With a `prior`, only the units after its own are replayed and its calls are kept; `kept`
    is put back if the extension is cut in a unit."""
    prov = result["provenance"]
    _log.info(
        f"job {ctx.label}: {engine.label}, {cfg.slots} slot(s), mtp={cfg.mtp}, "
        f"{len(units)} units x {replay.repeats} on {cfg.model.name}"
        + (f" ({len(prior.units)} measured before, kept)" if prior else "")
    )
    calls_path = ctx.job_dir / CALLS_FILE
    to_replay, replay_spec = workload, replay
    stopped: str | None = None
    if prior is None:
        calls_path.unlink(missing_ok=True)
    else:
        keep_calls(calls_path, prior)
        to_replay = dataclasses.replace(workload, units=tuple(units[len(prior.units) :]))
        replay_spec = dataclasses.replace(replay, units=None)
    sink = RecordSink(calls_path)
    outcomes: list[ReplayOutcome] = []
    server_side: list[ServerCounters | None] = []
    end_problem: str | None = None
    # Only a server this job started has a process and a GPU known to be this job's.
    tel = job_telemetry(cfg) if engine.started_here else None
    vocab = cfg.model.n_vocab or 0  # 0: asked of the server when it first starts
    # An extension's calls follow the prior's in the job's clock.
    t0 = time.perf_counter() - (prior.end_t + GAP_S if prior else 0.0)
    try:
        # Each repeat is a pass on a freshly started server: no prompt cache, KV cache or
        # warm state leaks from one measurement into the next.
        for rep in range(replay.repeats):
            log = ctx.job_dir / ("server.log" if rep == 0 else f"server.{rep}.log")
            with engine.server(launch, log) as srv:
                srv.start(cfg.server.startup_timeout_s)
                if rep == 0:
                    prov["server"]["props"] = props_info(srv.props)
                    vocab = vocab or n_vocab(srv)
                # Untimed; the counters read after it make each pass's counters its own.
                block = warmup.for_job(cfg, srv, launch.info.get("ctx_per_slot"), units, vocab)
                prov["warmup"] = warmup.merged(prov.get("warmup"), block)
                before = engine.counters(srv) if engine.started_here else None
                replayer = job_load.make_replayer(
                    cfg,
                    replay_spec,
                    to_replay,
                    base_url=srv.base_url,
                    alias=srv.spec.alias,
                    n_vocab=vocab,
                    sink=sink,
                    headers=srv.headers(),
                    alive=srv.alive,
                    repeat=rep,
                    t0=t0,
                    client=cfg.replay_client,
                    status=ctx.progress,
                )
                outcome = _replay(replayer, tel, srv, t0)
                outcomes.append(outcome)
                if engine.started_here and srv.alive():
                    server_side.append(since(before, engine.counters(srv)))
                # After the last pass's counters are read: the probe is in no timed figure.
                if rep == replay.repeats - 1 and not outcome.interrupted:
                    try:
                        result["quality"] = _probe(cfg, ctx, engine, srv, workload, vocab, task)
                        if task is not None:
                            result["task"] = _task(cfg, ctx, engine, srv, task)
                    except KeyboardInterrupt as exc:
                        # The timed pass had ended: its figures are written, the probe's not.
                        stopped = interrupt_reason(exc)
                end_problem = srv.end_problem()
            if outcome.interrupted or end_problem or stopped:
                break
    finally:
        sink.close()
        if tel is not None:
            tel.close()
    _finish(result, outcomes, units, replay.repeats, end_problem, cfg, prior)
    if stopped:
        prov["stopped"] = stopped
    cut = result["status"] == "incomplete" and any(o.interrupted for o in outcomes)
    if kept is not None and prior is not None and cut:
        _put_back(kept, ctx, prior, len(units), str(result["reason"]))
    job_figures(cfg, ctx, result["metrics"], tel, server_side, prior)
    if any(o.user_interrupt for o in outcomes) or stopped:
        raise _UserInterrupt


def _put_back(
    kept: job_extend.Kept, ctx: JobContext, prior: Prior, units: int, reason: str
) -> NoReturn:
    """An extension interrupted before its units ended: the earlier run's measurement stands as
    it was, and the extension's units are measured again by the next run (a unit it finished
    here too)."""
    kept.restore(ctx.job_dir)
    raise _ExtensionStopped(
        reason,
        f"job {ctx.label}: {reason} during its extension to {units} units; its earlier "
        f"{len(prior.units)}-unit measurement is kept as it was",
        prior.result.get("status") == "complete",
    )


def _probe(
    cfg: BenchConfig,
    ctx: JobContext,
    engine: Engine,
    srv: Server,
    workload: Workload,
    vocab: int,
    task: Task | None,
) -> QualityBlock:
    """The drift probe on the job's own server, after its timed replay (benchkit.quality)."""
    q = cfg.quality
    settings: QualityBlock = {"tokens": q.tokens, "top_k": q.top_k, "seed": q.seed}
    if not q.probe:
        return {**settings, "skipped": "quality.probe=false"}
    if not isinstance(engine, LlamaCpp):
        return {
            **settings,
            "skipped": f"the probe asks llama-server's /completion; {engine.label} has none",
        }
    if not srv.alive():
        return {**settings, "skipped": "the server was not running after the replay"}
    client = ProbeClient(srv.base_url, srv.headers(), q.top_k, cfg.server.stall_timeout_s)
    try:
        probes = (
            task_probe_set(task, client.tokenize, q.prompts, q.tokens)
            if q.probe_source == "task" and task is not None
            else probe_set(
                workload, client.tokenize, vocab, q.prompts, q.tokens, q.prompt_tokens, q.seed
            )
        )
        _log.info(f"job {ctx.label}: drift probe, {len(probes.items)} prompts x {q.tokens} tokens")
        info = run_probe(client, probes, cfg.slots, ctx.job_dir / QUALITY_FILE)
    except httpx.HTTPError as exc:
        return {**settings, "skipped": f"the probe's requests failed: {exc}"}
    finally:
        client.close()
    return {**settings, **info}


def _task(cfg: BenchConfig, ctx: JobContext, engine: Engine, srv: Server, task: Task) -> TaskBlock:
    """The scored task on the job's own server, after the timed replay and the probe."""
    base: TaskBlock = {
        "task": task.path.name,
        "task_sha256": task.sha256,
        "scorer": task.custom_name,
        "tokens": cfg.quality.task_tokens,
    }
    if not isinstance(engine, LlamaCpp):
        return {
            **base,
            "skipped": f"the task asks llama-server's /completion; {engine.label} has none",
        }
    if not srv.alive():
        return {**base, "skipped": "the server was not running after the replay"}
    _log.info(f"job {ctx.label}: task {task.path.name}, {len(task.items)} items")
    return run_task(
        task,
        srv.base_url,
        srv.headers(),
        cfg.quality.task_tokens,
        cfg.slots,
        cfg.server.stall_timeout_s,
        ctx.job_dir / TASK_FILE,
    )


def _replay(replayer: Replayer, tel: JobTelemetry | None, srv: Server, t0: float) -> ReplayOutcome:
    """One pass of the replay, with the telemetry sampler beside it when there is one."""
    if tel is None:
        return replayer.run()
    sampler = tel.sampler(srv.pid, t0)
    sampler.start()
    try:
        return replayer.run()
    finally:
        tel.passes.append(sampler.stop())


def resume_key(
    cfg: BenchConfig, workload_fingerprint: str, build: str, *, with_units: bool = True
) -> str:
    """What makes two jobs the same measurement: resolved config, workload and server build;
    `with_units=False`: the same but for how many of the workload's units are replayed."""
    conf = to_plain(cfg)
    # A drafter's settings count only where it drafts: spec=none at two draft lengths is one
    # measurement, so a sweep over both runs it once (benchkit.config.drafting).
    spec_conf = conf.get("spec")
    if isinstance(spec_conf, dict):
        conf["spec"] = drafting.as_measured(spec_conf)
    # Whether and from where to reuse change nothing that is measured.
    conf.pop("resume", None)
    # Closed-loop load came before the load group: unchanged, it must not change their keys.
    load_conf = conf.get("load")
    if isinstance(load_conf, dict) and load_conf.get("process") == "closed":
        conf.pop("load", None)
    conf.pop("resume_from", None)
    workload_conf = conf.get("workload")
    if not with_units and isinstance(workload_conf, dict):
        workload_conf.pop("units", None)
    # replay_client came after jobs were measured: unset, it must not change their keys (a
    # folder measured before it could not be resumed otherwise). Set, it is part of the key.
    if conf.get("replay_client") is None:
        conf.pop("replay_client", None)
    # Where the cache lives and which llama-quantize writes a model do not change what is
    # measured (the model file's own identity is in provenance.model).
    # The drift probe and the scored task (quality.task*) run after the timed replay and
    # change none of its figures; how the report weighs drift (study.quality) came after
    # jobs were measured and is the report's.
    for key in ("cache_dir", "llama_quantize", "quality"):
        conf.pop(key, None)
    study = conf.get("study")
    if isinstance(study, dict):
        study.pop("quality", None)
    blob = json.dumps([conf, workload_fingerprint, build], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _finish(
    result: JobResult,
    outcomes: list[ReplayOutcome],
    units: list[Unit],
    repeats: int,
    end_problem: str | None,
    cfg: BenchConfig,
    prior: Prior | None = None,
) -> None:
    if prior is not None and outcomes:
        new_units = list(dict.fromkeys(r.unit for o in outcomes for r in o.records))
        result["provenance"]["extended"] = runs_block(prior, new_units, outcomes[0].started_utc)
    if outcomes:
        # How the calls were timed: kernel receive times on the raw path, or when the event
        # loop read each line on the httpx fallback (benchkit/client/transport.py), and why.
        result["provenance"]["client"] = {
            "path": outcomes[-1].client,
            "fallback": outcomes[-1].client_fallback,
        }
    per_unit = {u.id: len(u.calls) for u in units}
    calls_per_pass = sum(per_unit.values())
    # The calls an open-loop pass stopped at its bound are counted apart (job_load), not failed.
    records = [*(prior.records if prior else []), *measured(r for o in outcomes for r in o.records)]
    metrics = compute_metrics(
        records,
        wall_s=sum(o.wall_s for o in outcomes) + (prior.wall_s if prior else 0.0),
        units_planned=len(units) * repeats,
        calls_planned=calls_per_pass * repeats,
        calls_per_unit=per_unit,
    )
    result["metrics"] = dict(metrics)
    if repeats > 1:
        result["passes"] = [
            dict(
                compute_metrics(
                    measured(o.records),
                    wall_s=o.wall_s,
                    units_planned=len(units),
                    calls_planned=calls_per_pass,
                    calls_per_unit=per_unit,
                )
            )
            for o in outcomes
        ]
    started = outcomes[0].started_utc if outcomes else None
    if prior is not None:
        # The job's measurement began with the prior's first run.
        started = (prior.result.get("provenance") or {}).get("replay_started_utc") or started
    result["provenance"]["replay_started_utc"] = started
    failed = [r for r in records if not r.ok]
    interrupted = next((o.interrupted for o in outcomes if o.interrupted), None)
    if interrupted and metrics["units_completed"] < metrics["units_planned"]:
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
    if interrupted and result["status"] != "incomplete":
        result["provenance"]["stopped"] = interrupted  # after its last unit: the sweep stops
    if job_load.open_loop(cfg):
        job_load.finish(result, outcomes, cfg)

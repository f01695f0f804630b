"""The open-loop side of a job (`load=poisson|constant|trace`): the replayer that sends calls
on a schedule, and what its passes add to result.json.

An open-loop pass that ended at one of its bounds (load.max_in_flight, load.max_pass_s) is a
measurement, not a failure: it says the point was overloaded, and the report reads it so.
The calls it stopped are counted apart (`calls_unfinished`), never as failed calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchkit.client.replay import CallRecord, Replayer, ReplayOutcome
from benchkit.config.schema import BenchConfig, LoadProcess
from benchkit.errors import UserError
from benchkit.job.record import JobResult
from benchkit.load.arrivals import schedule
from benchkit.load.measure import e2e_percentiles, open_loop_metrics
from benchkit.load.openloop import OpenLoopReplayer
from benchkit.server.plan import ReplaySpec
from benchkit.workload import Workload


def open_loop(cfg: BenchConfig) -> bool:
    return cfg.load.process is not LoadProcess.closed


def check(cfg: BenchConfig, workload: Workload) -> None:
    """Refuse an open-loop setting that cannot give a schedule, before any server starts."""
    if open_loop(cfg):
        sched = schedule(cfg.load, workload, cfg.workload.units)
        span = sched.offsets[-1] if sched.offsets else 0.0
        if span > cfg.load.max_pass_s:
            # Cut short by its own bound, every point would read as overloaded.
            raise UserError(
                f"load.max_pass_s={cfg.load.max_pass_s:g} is shorter than the {span:,.0f} s "
                f"its schedule of {len(sched.offsets)} arrivals spans: raise load.max_pass_s "
                "above it, or lower load.requests."
            )


def make_replayer(cfg: BenchConfig, spec: ReplaySpec, workload: Workload, **kw: Any) -> Replayer:
    """The pass's replayer: units on `slots` workers (closed loop), or calls on the load's
    schedule with up to load.max_in_flight of them in flight."""
    if not open_loop(cfg):
        return Replayer(spec=spec, workload=workload, **kw)
    sched = schedule(cfg.load, workload, spec.units)
    wide = dataclasses.replace(spec, workers=cfg.load.max_in_flight)
    return OpenLoopReplayer(
        schedule=sched, max_pass_s=cfg.load.max_pass_s, spec=wide, workload=workload, **kw
    )


def measured(records: Iterable[CallRecord]) -> list[CallRecord]:
    """The calls the metrics are of: those the pass did not stop at a bound."""
    return [r for r in records if not r.cut]


def finish(result: JobResult, outcomes: Sequence[ReplayOutcome], cfg: BenchConfig) -> None:
    """Put the open-loop figures into `result` (its metrics already computed from the calls
    that were not cut) and its status: an overloaded pass is complete, and says which bound
    ended it."""
    m = result["metrics"]
    last = next((o for o in reversed(outcomes) if o.open_loop is not None), None)
    if last is None or last.open_loop is None:
        return
    records = [r for o in outcomes for r in o.records]
    wall = sum(o.wall_s for o in outcomes)
    m["open_loop"] = dict(open_loop_metrics(records, last.open_loop, wall, cfg.study.slo))
    m["e2e_ms"] = e2e_percentiles(records)
    # Planned: the arrivals of every pass, not the workload's calls.
    m["calls_planned"] = sum(o.open_loop.arrivals_planned for o in outcomes if o.open_loop)
    if result["status"] == "incomplete" and not any(o.interrupted for o in outcomes):
        # Units are not what an open-loop pass completes: its arrivals are, or a bound ended it.
        result["status"], result["reason"] = "complete", None
    if len(outcomes) > 1 and isinstance(result.get("passes"), list):
        for entry, o in zip(result["passes"], outcomes, strict=True):
            if o.open_loop is not None:
                entry["open_loop"] = dict(
                    open_loop_metrics(o.records, o.open_loop, o.wall_s, cfg.study.slo)
                )
                entry["e2e_ms"] = e2e_percentiles(o.records)


def summary(m: Mapping[str, Any]) -> str:
    """The job line's figures for an open-loop job: rates, p95 TTFT, goodput, how it ended."""
    ol = m.get("open_loop") or {}
    ttft = (m.get("ttft_ms") or {}).get("p95")

    def num(v: object, fmt: str) -> str:
        return f"{v:{fmt}}" if isinstance(v, int | float) else "n/a"

    ended = f", ended at load.{ol['ended']} (overloaded)" if ol.get("ended") else ""
    return (
        f": offered {num(ol.get('offered_rps'), '.2f')} calls/s, achieved "
        f"{num(ol.get('achieved_rps'), '.2f')} calls/s, p95 TTFT {num(ttft, ',.0f')} ms, "
        f"goodput {num(ol.get('goodput_rps'), '.2f')} calls/s{ended}"
    )

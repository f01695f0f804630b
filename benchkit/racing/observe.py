"""Per-unit objective values of one job, read from its folder, and the machine that measured
each unit: what the racing policy compares.

A unit's time is its span in calls.jsonl (first request sent to last response, every call of the
unit answered), the per-unit time the report's noise rule pairs (benchkit.report.verdicts.folder).
On the slot-latency basis that span is the value. On the throughput basis the spans are scaled so
that they add up to the job's wall clock: their mean is then the job's `s_per_unit_throughput`, and
each unit keeps its share of the work (units overlap in time when slots > 1, so a span alone would
count the overlap once per slot).
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchkit.measure.gpu_readers import GPU_BACKENDS, open_reader
from benchkit.report.analysis.evidence import SLOT_LATENCY, THROUGHPUT
from benchkit.results.store import CALLS_FILE, RESULT_FILE, unit_spans
from benchkit.results.trust import read_result

# The file a racing sweep writes beside its jobs: settings, outcomes, launches.
RACING_FILE = "racing.json"
# The objectives a race can be run on: the per-unit ones.
RACEABLE = (THROUGHPUT, SLOT_LATENCY)


def scale_to_wall(spans: Mapping[str, float], wall_s: float) -> dict[str, float]:
    """Spans scaled to add up to `wall_s`: per-unit values on the throughput basis."""
    total = sum(spans.values())
    if total <= 0:
        return {}
    return {u: s * wall_s / total for u, s in spans.items()}


def unit_values(job_dir: Path, metric: str = THROUGHPUT) -> dict[str, float]:
    """The job's per-unit values of `metric` (one of RACEABLE); {} for a job without calls,
    with several passes (repeats > 1: a race adds units, not repeats), or whose result does
    not match its digest (benchkit.results.trust)."""
    if metric not in RACEABLE:
        raise ValueError(f"racing compares per-unit times; {metric} is not one")
    try:
        read = read_result(job_dir / RESULT_FILE, job_dir.parent)
    except (OSError, ValueError):
        return {}
    result = read.data
    if not read.usable or isinstance(result.get("passes"), list):
        return {}
    spans = unit_spans(job_dir / CALLS_FILE)
    if metric == SLOT_LATENCY:
        return spans
    wall = (result.get("metrics") or {}).get("wall_s")
    if not isinstance(wall, int | float) or not spans:
        return {}
    return scale_to_wall(spans, float(wall))


def _card(d: Mapping[str, Any]) -> str:
    # As benchkit.report.analysis.evidence.gpu_of names one card: the report's machine for the job.
    return f"{d.get('name') or 'GPU'} {str(d.get('uuid') or '')[:12]}".strip()


def machine_here(backend: str, telemetry: bool, device: int | None, hardware: str) -> str:
    """The machine the race's next job will measure on, named as `unit_machines` will name it
    from that job's result: the last card its telemetry would list, else the hardware profile
    on this host. Read before anything is launched, so a resumed race knows it has moved."""
    if telemetry and backend in GPU_BACKENDS:
        reader, _ = open_reader(backend, None if device is None else [device])
        if reader is not None:
            try:
                devices = list(reader.devices)
            finally:
                reader.close()
            if devices:
                return _card(dict(devices[-1]))
    host = platform.node()
    return f"{hardware}@{host}" if host else ""


def unit_machines(
    result: Mapping[str, Any], units: Iterable[str], earlier: Mapping[str, str]
) -> dict[str, str]:
    """Each of a job's `units` -> the machine that measured it, as the comparison engine tells
    machines apart: a card from telemetry, else the hardware profile on its host ('' where
    neither is recorded). A job a race extended (provenance.extended: each run's units)
    measured its last run's units on the last card its telemetry lists (an extension lists
    the earlier runs' cards first, benchkit.job.extend.join_devices); its earlier units keep
    the machine `earlier` recorded for them, else all the job's cards together, as the report
    names such a job's machine (evidence.gpu_of)."""
    tel = (result.get("metrics") or {}).get("telemetry")
    devices = tel.get("devices") if isinstance(tel, dict) else None
    cards = [_card(d) for d in devices or [] if isinstance(d, dict)]
    hw = (result.get("provenance") or {}).get("hardware") or {}
    host, name = str(hw.get("host") or ""), str(hw.get("name") or "")
    here = cards[-1] if cards else (f"{name}@{host}" if host else "")
    runs = (result.get("provenance") or {}).get("extended")
    out = dict.fromkeys(units, here)
    if not isinstance(runs, list) or len(runs) < 2:
        return out
    joined = " + ".join(cards) if cards else here
    # As many cards as runs: each run had a card of its own, listed in run order (an
    # extension lists the earlier runs' cards first and a card once), so each run's units
    # are placed exactly; fewer cards than runs leave the earlier runs' card unknown.
    own = cards if len(cards) == len(runs) else [joined] * (len(runs) - 1)
    for run, card in zip(runs[:-1], own, strict=False):
        ran = run.get("units") if isinstance(run, dict) else None
        for u in ran if isinstance(ran, list) else []:
            if str(u) in out:
                out[str(u)] = earlier.get(str(u), card)
    return out

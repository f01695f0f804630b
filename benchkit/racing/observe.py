"""Per-unit objective values of one job, read from its folder: what the racing policy compares.

A unit's time is its span in calls.jsonl (first request sent to last response, every call of
the unit answered), the per-unit time the report's noise rule pairs (benchkit.report.folder).
On the slot-latency basis that span is the value. On the throughput basis the spans are scaled
so that they add up to the job's wall clock: their mean is then the job's
`s_per_unit_throughput`, and each unit keeps its share of the work (units overlap in time
when slots > 1, so a span alone would count the overlap once per slot).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from benchkit.report.evidence import SLOT_LATENCY, THROUGHPUT
from benchkit.results import CALLS_FILE, RESULT_FILE, unit_spans
from benchkit.trust import read_result

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
    not match its digest (benchkit.trust)."""
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

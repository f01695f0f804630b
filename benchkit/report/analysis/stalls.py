"""Stalls: calls and units far outside their own job's distribution, found, measured and named.

A stall is judged against the job itself, never against other jobs (which may be slower for the
reason the sweep studies). Per call, the server's own prompt time per evaluated token and its
decode time per generated token (the client's time to first token per prompt token where the
server gave no timings) are compared with the job's median and median absolute deviation: a
call is a stall when it is at least RATIO times the median, at least Z robust deviations above
it, and its excess over the median rate (the time it took beyond what the job's typical rate
would have taken for the same tokens) is at least MIN_WALL_SHARE of the pass's wall clock, so
that a blip is not named. A unit is a stall on its own when its span is at least RATIO times the
median unit's and Z deviations above it, and no stalled call explains it.

What a stall does to a figure is computed, not guessed: the objective "without the stall" is the
pass's wall clock less the stalled calls' excess (per unit: the unit's span less it). That is
exact for one slot, where everything after a stall waits for it; with more slots it assumes the
stall held the whole server (a pipeline compile, a clock that had not ramped), which the
telemetry around it (GPU busy, SM clock, the server's CPU) lets a reader check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np
import numpy.typing as npt

from benchkit.report.analysis.call_columns import Columns
from benchkit.report.analysis.stall_calls import (
    StallCalls,
    from_columns,
    from_dicts,
    phase_rates,
    unit_spans,
    waits,
)
from benchkit.results.store import read_jsonl

Floats = npt.NDArray[np.float64]

# A call at least this many times its job's median rate per token ...
RATIO = 4.0
# ... and this many robust deviations (1.4826 x MAD) above that median ...
Z = 6.0
# ... whose excess is at least this share of the pass's wall clock is a stall.
MIN_WALL_SHARE = 0.01
# The spread used when a job's rates are almost all equal (MAD ~ 0): a share of the median,
# so that identical calls do not make every small difference infinitely many deviations.
MIN_SPREAD = 0.05
# Calls with fewer tokens than stall_calls.MIN_TOKENS in a phase are not judged on it.


class TelemetryAround(TypedDict):
    """What the job's telemetry samples show during a stall (None: not sampled)."""

    samples: int
    gpu_busy: float | None
    sm_clock_mhz: float | None
    power_w: float | None
    server_cores: float | None


class StallJson(TypedDict):
    """One stall as verdicts.json and the report carry it."""

    job: str
    unit: str
    call: int | None
    phase: str
    seconds: float
    tokens: int | None
    per_token_ms: float | None
    median_per_token_ms: float | None
    times_median: float
    excess_s: float
    start_s: float
    telemetry: TelemetryAround | None
    # A stall in the first work of a server that had no warm-up (rules v6).
    cold: bool
    # Of a decode window, the time the server spent on other calls' prompts, not charged to
    # the call (rules v12); absent where none.
    other_prompts_s: NotRequired[float]


@dataclass(frozen=True)
class Stall:
    """A call (or a unit) far outside its job's distribution. `phase` is `prefill`, `decode`
    or `unit`; `excess_s` the time beyond the job's median rate for the same tokens."""

    job: str
    unit: str
    call: int | None
    phase: str
    seconds: float
    tokens: int | None
    per_token_s: float | None
    median_per_token_s: float | None
    times_median: float
    excess_s: float
    start_s: float
    telemetry: TelemetryAround | None = None
    cold: bool = False
    other_prompts_s: float = 0.0

    def to_json(self) -> StallJson:
        out: StallJson = {
            "job": self.job,
            "unit": self.unit,
            "call": self.call,
            "phase": self.phase,
            "seconds": self.seconds,
            "tokens": self.tokens,
            "per_token_ms": None if self.per_token_s is None else 1000 * self.per_token_s,
            "median_per_token_ms": (
                None if self.median_per_token_s is None else 1000 * self.median_per_token_s
            ),
            "times_median": self.times_median,
            "excess_s": self.excess_s,
            "start_s": self.start_s,
            "telemetry": self.telemetry,
            "cold": self.cold,
        }
        if self.other_prompts_s > 0:
            out["other_prompts_s"] = self.other_prompts_s
        return out


@dataclass(frozen=True)
class JobStalls:
    """The stalls of one single-pass job and what they cost it: `excess_s`, `wall_share` and
    `without` are the stalls' that are not cold starts (a verdict states its comparisons with
    and without them), `cold_excess_s` and `cold_free` the cold starts' (left out of the
    figures the verdicts compare)."""

    job: str
    wall_s: float
    units: int
    stalls: list[Stall] = field(default_factory=list)

    @property
    def units_stalled(self) -> set[str]:
        """The units a stall fell in."""
        return {s.unit for s in self.stalls}

    def unit_times(self, spans: Mapping[str, float]) -> dict[str, float]:
        """Per-unit times as the comparison engine pairs them: each unit's span, less the
        excess of the cold starts in it (the same mark the per-unit figures carry); the other
        stalls stay in, as they stay in the figures."""
        out = dict(spans)
        for s in self.cold:
            if s.unit in out:
                out[s.unit] = max(out[s.unit] - s.excess_s, 0.0)
        return {u: t for u, t in out.items() if t > 0}

    @property
    def cold(self) -> list[Stall]:
        """The cold starts: stalls in the first work of a server that had no warm-up."""
        return [s for s in self.stalls if s.cold]

    @property
    def later(self) -> list[Stall]:
        """The stalls that are not cold starts."""
        return [s for s in self.stalls if not s.cold]

    @property
    def all_excess_s(self) -> float:
        """The time every stall added to the pass (overlapping ones counted once)."""
        return _excess(self.stalls)

    @property
    def cold_excess_s(self) -> float:
        """The time the cold starts added to the pass."""
        return _excess(self.cold)

    @property
    def excess_s(self) -> float:
        """The time the stalls that are not cold starts added: every stall's less the cold
        starts' (a later stall overlapping a cold start counts only beyond it)."""
        return max(self.all_excess_s - self.cold_excess_s, 0.0)

    @property
    def wall_share(self) -> float:
        return self.excess_s / self.wall_s if self.wall_s > 0 else 0.0

    def cold_free(self, metric: str, value: float | None) -> float | None:
        """The per-unit objective `metric` (measured `value`) without the cold starts' excess;
        other metrics, and a job without cold starts, keep their value."""
        if value is None or not self.cold or self.units <= 0 or metric not in PER_UNIT:
            return value
        return max(value - self.cold_excess_s / self.units, 0.0)

    def without(self, metric: str, value: float | None) -> float | None:
        """The objective `metric` (`value`, cold starts already left out) without the other
        stalls' excess: per-unit bases only (other objectives are not restated: None)."""
        if value is None or not self.later or self.units <= 0:
            return value
        if metric in PER_UNIT:
            return max(value - self.excess_s / self.units, 0.0)
        return None


# The objectives a stall's excess is taken out of: seconds per unit, either basis.
PER_UNIT = ("s_per_unit_throughput", "s_per_unit_slot_latency")


def _excess(stalls: Sequence[Stall]) -> float:
    """The time `stalls` added to the pass: stalls whose windows overlap (several slots
    waiting on one compile) are one group, which adds at most the length of its union."""
    total = 0.0
    group: list[Stall] = []
    end = -math.inf
    for s in sorted(stalls, key=lambda s: s.start_s):
        if group and s.start_s >= end:
            total += _group_excess(group)
            group = []
        group.append(s)
        end = max(end, s.start_s + s.seconds) if len(group) > 1 else s.start_s + s.seconds
    return total + (_group_excess(group) if group else 0.0)


def _group_excess(group: Sequence[Stall]) -> float:
    """Overlapping stalls' time lost: their union less the work the job's median rate would
    have done in it (at least one of them), never more than their excesses added up."""
    start = min(s.start_s for s in group)
    end = max(s.start_s + s.seconds for s in group)
    work = max(s.seconds - s.excess_s for s in group)
    return min(sum(s.excess_s for s in group), max(end - start - work, 0.0))


def _num(x: object) -> float | None:
    # A tuple, not `int | float`, and one conversion.
    if isinstance(x, (int, float)):
        f = float(x)
        if math.isfinite(f):
            return f
    return None


def _outliers(values: Floats) -> tuple[float, float]:
    """The median and the robust spread of `values`."""
    med = _median(values)
    mad = _median(np.abs(values - med))
    return med, max(1.4826 * mad, MIN_SPREAD * med)


def _median(values: Floats) -> float:
    """statistics.median of `values`: the middle value, or the mean of the middle two."""
    s = np.sort(values).tolist()
    n = len(s)
    if n % 2:
        return float(s[n // 2])
    return float((s[n // 2 - 1] + s[n // 2]) / 2)


def _is_far(value: float, med: float, spread: float) -> bool:
    return med > 0 and value >= RATIO * med and (value - med) >= Z * spread


def _far(values: Floats, med: float, spread: float) -> npt.NDArray[np.bool_]:
    """`_is_far` of each of `values`."""
    return (values >= RATIO * med) & ((values - med) >= Z * spread) & (med > 0)


def find_stalls(
    job: str,
    calls: Sequence[Mapping[str, object]],
    wall_s: float,
    units: int,
    telemetry: Sequence[Mapping[str, object]] = (),
    warmed: bool | None = None,
    columns: Columns | None = None,
) -> JobStalls:
    """The stalls of one pass's calls (records as calls.jsonl holds them, ok ones judged).
    `warmed`: whether an untimed warm-up preceded the pass (None: not recorded); a stall in
    the first wave of a pass without one is a cold start. `columns`: the same calls as
    `call_columns.columns_of` gives them, where it does (read from them, the same stalls)."""
    floor = MIN_WALL_SHARE * wall_s
    if columns is not None:
        ok = from_columns(columns)
        first = _first_wave_of(columns) if warmed is False else set()
    else:
        ok = from_dicts([c for c in calls if c.get("ok")])
        first = first_wave(calls) if warmed is False else set()
    found: list[Stall] = []
    for phase in ("prefill", "decode"):
        rates = phase_rates(ok, phase)
        if len(rates.index) < 5:
            continue
        per_token = rates.per_token.tolist()
        med, spread = _outliers(rates.per_token)
        # The window beyond what the job's median rate takes for the same work.
        excess = rates.charged - rates.concurrent * med
        for k in np.flatnonzero(_far(rates.per_token, med, spread) & ~(excess < floor)):
            i, start, end = rates.index[k], rates.start[k], rates.end[k]
            key = (ok.unit[i], _int(ok.seq[i]))
            found.append(
                Stall(
                    job=job,
                    unit=key[0],
                    call=key[1],
                    phase=phase,
                    seconds=float(rates.seconds[k]),
                    tokens=rates.tokens[k],
                    per_token_s=per_token[k],
                    median_per_token_s=med,
                    times_median=per_token[k] / med,
                    excess_s=float(excess[k]),
                    start_s=start,
                    telemetry=around(telemetry, start, end),
                    cold=key in first,
                    other_prompts_s=float(rates.seconds[k] - rates.charged[k]),
                )
            )
    found += _wait_stalls(job, ok, floor, telemetry, first)
    spans = columns.bounds if columns is not None else unit_spans(ok)
    found += _unit_stalls(job, spans, {s.unit for s in found}, floor, telemetry)
    found.sort(key=lambda s: s.start_s)
    return JobStalls(job=job, wall_s=wall_s, units=units, stalls=found)


def first_wave(calls: Sequence[Mapping[str, object]]) -> set[tuple[str, int | None]]:
    """The server's first work in a pass: the calls (unit, seq) sent before the pass's first
    call completed. One slot: the first call; several: every call of the first wave, which
    the server took up together (one that failed counts as sent, not as completed)."""
    done = [t for c in calls if c.get("ok") and (t := _num(c.get("t_done"))) is not None]
    if not done:
        return set()
    end = min(done)
    return {_key(c) for c in calls if (t := _num(c.get("t_sent"))) is not None and t < end}


def _first_wave_of(cols: Columns) -> set[tuple[str, int | None]]:
    """`first_wave` of calls as `Columns` (every one ok, every time known)."""
    end = min(cols.done.tolist())
    sent = cols.sent.tolist()
    return {(u, q) for u, q, t in zip(cols.unit, cols.seq, sent, strict=True) if t < end}


def _key(c: Mapping[str, object]) -> tuple[str, int | None]:
    return str(c.get("unit")), _int(c.get("seq"))


def _int(x: object) -> int | None:
    return int(x) if isinstance(x, int | float) else None


# A wait shorter than this is the client's and the server's fixed overhead, not a wait: the
# median wait of a job whose calls never queue is a few milliseconds.
MIN_WAIT_S = 0.005


def _wait_stalls(
    job: str,
    ok: StallCalls,
    floor: float,
    telemetry: Sequence[Mapping[str, object]],
    first: set[tuple[str, int | None]],
) -> list[Stall]:
    """Calls that waited far longer than the job's typical call before the server took up
    their prompt (time to first token less the server's own prompt time), whatever the
    server's overall rate meanwhile: one call stuck while the other slots keep working does
    not slow the server's rate, so the per-token rules cannot see it."""
    # The part of a wait the server spent on other prompts is queueing behind them (calls
    # that arrive together are taken up one prompt at a time): only the rest is unexplained
    # (stall_calls.waits).
    w = waits(ok)
    if len(w.index) < 5:
        return []
    wait = w.wait.tolist()
    med, spread = _outliers(w.wait)
    excess = w.wait - med
    far = (w.wait >= RATIO * max(med, MIN_WAIT_S)) & (excess >= Z * max(spread, MIN_WAIT_S))
    out = []
    for k in np.flatnonzero(far & ~(excess < floor)):
        i, sent = w.index[k], w.sent[k]
        key = (ok.unit[i], _int(ok.seq[i]))
        out.append(
            Stall(
                job=job,
                unit=key[0],
                call=key[1],
                phase="wait",
                seconds=wait[k],
                tokens=None,
                per_token_s=None,
                median_per_token_s=None,
                times_median=wait[k] / max(med, MIN_WAIT_S),
                excess_s=float(excess[k]),
                start_s=sent,
                telemetry=around(telemetry, sent, sent + wait[k]),
                cold=key in first,
            )
        )
    return out


def _unit_stalls(
    job: str,
    spans: Mapping[str, tuple[float, float]],
    explained: set[str],
    floor: float,
    telemetry: Sequence[Mapping[str, object]],
) -> list[Stall]:
    if len(spans) < 5:
        return []
    lengths = {u: e - s for u, (s, e) in spans.items()}
    med, spread = _outliers(np.array(list(lengths.values()), dtype=np.float64))
    out = []
    for u, length in lengths.items():
        excess = length - med
        if u in explained or not _is_far(length, med, spread) or excess < floor:
            continue
        start = spans[u][0]
        out.append(
            Stall(
                job=job,
                unit=u,
                call=None,
                phase="unit",
                seconds=length,
                tokens=None,
                per_token_s=None,
                median_per_token_s=None,
                times_median=length / med,
                excess_s=excess,
                start_s=start,
                telemetry=around(telemetry, start, start + length),
            )
        )
    return out


def around(
    samples: Sequence[Mapping[str, object]], start: float, end: float
) -> TelemetryAround | None:
    """Means of the telemetry samples taken between `start` and `end` (the job's clock);
    None when no sample falls there. The server's cores are its CPU seconds over the window."""
    inside = [s for s in samples if (t := _num(s.get("t"))) is not None and start <= t <= end]
    if not inside:
        return None

    def mean(key: str, scale: float = 1.0) -> float | None:
        vals = [v * scale for s in inside if (v := _num(s.get(key))) is not None]
        return sum(vals) / len(vals) if vals else None

    cpu = [
        (t, c)
        for s in inside
        if (t := _num(s.get("t"))) is not None and (c := _num(s.get("server_cpu_s"))) is not None
    ]
    cores = None
    if len(cpu) >= 2 and cpu[-1][0] > cpu[0][0]:
        cores = (cpu[-1][1] - cpu[0][1]) / (cpu[-1][0] - cpu[0][0])
    return {
        "samples": len(inside),
        "gpu_busy": mean("gpu_util", 0.01),
        "sm_clock_mhz": mean("sm_clock_mhz"),
        "power_w": mean("power_w"),
        "server_cores": cores,
    }


def job_stalls(
    job: str,
    job_dir: Path,
    wall_s: float | None,
    units: int | None,
    calls_file: str,
    warmed: bool | None = None,
) -> JobStalls | None:
    """The stalls of a single-pass job folder (None without calls or a wall clock)."""
    if not wall_s or not units:
        return None
    calls = read_jsonl(job_dir / calls_file)
    if not calls:
        return None
    tel = [s for s in read_jsonl(job_dir / "telemetry.jsonl") if s.get("pass", 0) == 0]
    return find_stalls(job, calls, float(wall_s), int(units), tel, warmed)

"""Telemetry beside a job: what the GPU and the server process did while the units ran.

A sampler thread reads the GPU at a fixed rate during each replay pass (NVML through
nvidia-ml-py on NVIDIA, amdsmi on AMD): board power, the energy counter, GPU and
memory-controller utilisation, memory used, SM clock and temperature, plus the server
process's CPU time from /proc. Where no GPU can be read, nothing is sampled and the result
says why in one sentence (`metrics.telemetry.reason`); the server's CPU time is still read.

The energy of a pass is the difference of the GPU's own energy counter read at the start
and the end of the pass (the sampled power integrated over time only where the GPU has no
counter), so it does not depend on the sampling rate. Every vendor call is made from the
sampler thread or at the pass's two edges; ctypes releases the GIL during those calls, and
a call that hangs stalls only the sampler, never the replay (the thread is a daemon and the
pass stops waiting for it after `join_timeout_s`). The vendor readers are in
benchkit/measure/gpu_readers.py.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict, TypeGuard, TypeVar, cast

from benchkit.measure import metrics
from benchkit.measure.gpu_readers import GPU_BACKENDS as GPU_BACKENDS
from benchkit.measure.gpu_readers import AmdSmiReader as AmdSmiReader
from benchkit.measure.gpu_readers import GpuDevice as GpuDevice
from benchkit.measure.gpu_readers import GpuReader as GpuReader
from benchkit.measure.gpu_readers import NvmlReader as NvmlReader
from benchkit.measure.gpu_readers import as_float
from benchkit.measure.gpu_readers import device_indices as device_indices
from benchkit.measure.gpu_readers import open_reader as open_reader

# The server's CPU time comes from /proc; the names stay importable from here for callers.
from benchkit.measure.proc_cpu import CpuSnapshot as CpuSnapshot
from benchkit.measure.proc_cpu import HostSnapshot, host_snapshot, other_cpu_s
from benchkit.measure.proc_cpu import cpu_delta as cpu_delta
from benchkit.measure.proc_cpu import cpu_snapshot as cpu_snapshot
from benchkit.measure.proc_cpu import proc_cpu_s as proc_cpu_s
from benchkit.measure.proc_cpu import process_tree as process_tree

# The readers live in benchkit/measure/gpu_readers.py; these names stay importable from here.
from benchkit.results import bounded

TELEMETRY_FILE = "telemetry.jsonl"

# Defined in benchkit.measure.metrics, with every other fact about each metric.
DEFINITIONS: dict[str, str] = metrics.definitions("telemetry")


class MeanMax(TypedDict):
    mean: float | None
    max: float | None


class TelemetryInfo(TypedDict):
    """result.json's `metrics.telemetry`: where the readings came from and what sampling cost."""

    source: str | None
    reason: str | None
    devices: list[GpuDevice]
    interval_s: float
    samples: int
    window_s: float
    energy_basis: str | list[str] | None
    sm_clock_mhz: MeanMax
    temp_c_max: float | None
    mem_used_mib_max: float | None
    sampler_cpu_s: float
    sampler_cpu_share: float | None
    sampler_late_ticks: int
    file: str | None
    # Other processes on the machine during the passes: their CPU seconds, that over the
    # window (cores they kept busy on average), the highest load average, the machine's cores.
    host_other_cpu_s: NotRequired[float | None]
    host_other_cores: NotRequired[float | None]
    load_avg_max: NotRequired[float | None]
    cpu_count: NotRequired[int | None]


class TelemetryMetrics(TypedDict):
    """The telemetry keys a job adds to result.json's `metrics` (DEFINITIONS says how)."""

    energy_j: float | None
    j_per_unit: float | None
    power_w: MeanMax
    gpu_busy_share: float | None
    mem_busy_share: float | None
    server_cpu_share: float | None
    server_busiest_thread_share: float | None
    telemetry: TelemetryInfo


# One line of telemetry.jsonl as read back: the time always, the pass where written (a reader
# takes a missing one as pass 0), then each reading the sampler had (None where the device
# gave none). Functional form: `pass` is a keyword.
SampleRow = TypedDict(
    "SampleRow",
    {
        "pass": NotRequired[int],
        "t": float,
        "power_w": NotRequired[float | None],
        "gpu_util": NotRequired[float | None],
        "mem_util": NotRequired[float | None],
        "mem_used_mib": NotRequired[float | None],
        "sm_clock_mhz": NotRequired[float | None],
        "temp_c": NotRequired[float | None],
        "server_cpu_s": NotRequired[float | None],
    },
)


# ------------------------------------------------------------------------------ sampling


@dataclass
class PassTelemetry:
    """One replay pass: the window, its energy, the samples and the server's CPU time."""

    t_start: float
    t_end: float
    energy_j: float | None
    energy_basis: str | None  # "counter", "power_integral" or None
    samples: list[dict[str, float | None]]
    server_cpu_s: float | None
    server_busiest_thread_s: float | None
    sampler_cpu_s: float
    sampler_late: int  # ticks that came more than one interval late
    # CPU seconds other processes on the machine used during the pass, and the highest
    # 1-minute load average seen at its edges (None: not read): a busy host slows the server
    # by sharing its cores, and the report says so.
    host_other_cpu_s: float | None = None
    load_avg_max: float | None = None

    @property
    def seconds(self) -> float:
        return max(self.t_end - self.t_start, 0.0)


@dataclass
class Sampler:
    """Samples the GPU (if any) and the server process at a fixed rate in a daemon thread,
    from `start()` to `stop()`; times are `perf_counter() - t0`, the clock of calls.jsonl."""

    reader: GpuReader | None
    pid: int | None
    interval_s: float = 0.2
    t0: float = 0.0
    join_timeout_s: float = 5.0
    clock: Callable[[], float] = time.perf_counter
    _samples: list[dict[str, float | None]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _cpu_s: float = 0.0
    _late: int = 0
    _t_start: float = 0.0
    _e_start: float | None = None
    _cpu_start: CpuSnapshot | None = None
    _host_start: HostSnapshot | None = None

    def now(self) -> float:
        return self.clock() - self.t0

    def start(self) -> None:
        self._stop.clear()
        self._samples = []
        self._cpu_start = cpu_snapshot(self.pid) if self.pid else None
        self._host_start = host_snapshot()
        self._e_start = self.reader.energy_j() if self.reader is not None else None
        self._t_start = self.now()
        self._thread = threading.Thread(target=self._loop, name="benchkit-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        c0 = time.thread_time()
        k = 0
        while not self._stop.is_set():
            t = self.now()
            row: dict[str, float | None] = {"t": round(t, 4)}
            if self.reader is not None:
                row.update(self.reader.sample())
            if self.pid:
                row["server_cpu_s"] = proc_cpu_s(self.pid)
            self._samples.append(row)
            k += 1
            # A fixed rate: the k-th tick is due at start + k x interval, whatever a slow
            # reading cost; a tick missed altogether is counted, not caught up.
            due = self._t_start + k * self.interval_s
            late = self.now() - due
            if late > self.interval_s:
                skipped = int(late // self.interval_s)
                self._late += skipped
                k += skipped
                due = self._t_start + k * self.interval_s
            self._stop.wait(max(due - self.now(), 0.0))
        self._cpu_s = time.thread_time() - c0

    def stop(self) -> PassTelemetry:
        t_end = self.now()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.join_timeout_s)
        e_end = self.reader.energy_j() if self.reader is not None else None
        cpu_end = cpu_snapshot(self.pid) if self.pid else None
        host_end = host_snapshot()
        samples = list(self._samples)
        energy, basis = None, None
        if self._e_start is not None and e_end is not None and e_end >= self._e_start:
            energy, basis = e_end - self._e_start, "counter"
        elif self.reader is not None:
            energy = integrate_power(samples, self._t_start, t_end)
            basis = None if energy is None else "power_integral"
        d = cpu_delta(self._cpu_start, cpu_end)
        return PassTelemetry(
            t_start=self._t_start,
            t_end=t_end,
            energy_j=energy,
            energy_basis=basis,
            samples=samples,
            server_cpu_s=None if d is None else d[0],
            server_busiest_thread_s=None if d is None else d[1],
            sampler_cpu_s=self._cpu_s,
            sampler_late=self._late,
            host_other_cpu_s=other_cpu_s(self._host_start, host_end, None if d is None else d[0]),
            load_avg_max=_max_load(self._host_start, host_end),
        )


def _max_load(a: HostSnapshot | None, b: HostSnapshot | None) -> float | None:
    loads = [x.load_avg for x in (a, b) if x is not None and math.isfinite(x.load_avg)]
    return max(loads) if loads else None


def integrate_power(
    samples: Sequence[Mapping[str, float | None]], t_start: float, t_end: float
) -> float | None:
    """Energy (J) from power samples by the trapezoid rule, held flat to the window's edges."""
    pts = [
        (t, p)
        for s in samples
        if (p := s.get("power_w")) is not None and (t := s.get("t")) is not None
    ]
    if not pts or t_end <= t_start:
        return None
    pts = sorted(pts)
    pts = [(t_start, pts[0][1]), *pts, (t_end, pts[-1][1])]
    return sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in itertools.pairwise(pts))


# ------------------------------------------------------------------------------ the job's view


@dataclass
class JobTelemetry:
    """A job's sampler set-up and its passes; `metrics` turns them into result.json's keys."""

    reader: GpuReader | None
    reason: str | None
    interval_s: float
    passes: list[PassTelemetry] = field(default_factory=list)

    def sampler(self, pid: int | None, t0: float) -> Sampler:
        return Sampler(self.reader, pid, self.interval_s, t0)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()

    def write_samples(self, path: Path, one_pass: bool = False) -> None:
        """telemetry.jsonl: one line per sample, `pass` naming the replay pass (`one_pass`:
        pass 0 throughout, for a race's extension, whose runs are one pass on one clock)."""
        with path.open("w") as fh:
            for i, p in enumerate(self.passes):
                for s in p.samples:
                    row = {"pass": 0 if one_pass else i, **s}
                    fh.write(json.dumps(row, separators=(",", ":")) + "\n")

    def metrics(self, units_completed: int) -> TelemetryMetrics:
        return summarise(self.passes, units_completed, self.reader, self.reason, self.interval_s)


def summarise(
    passes: Sequence[PassTelemetry],
    units_completed: int,
    reader: GpuReader | None,
    reason: str | None,
    interval_s: float,
) -> TelemetryMetrics:
    """result.json's telemetry keys: `energy_j`, `j_per_unit`, `power_w` {mean, max},
    `gpu_busy_share`, `mem_busy_share`, `server_cpu_share`, `server_busiest_thread_share`
    (None where not measured), and `telemetry` (source, devices, reason, sampler cost...)."""
    seconds = sum(p.seconds for p in passes)
    samples = [s for p in passes for s in p.samples]

    def col(key: str) -> list[float]:
        return [float(v) for s in samples if (v := s.get(key)) is not None and math.isfinite(v)]

    energies = [p.energy_j for p in passes]
    energy = (
        None
        if not passes or any(e is None for e in energies)
        else sum(e for e in energies if e is not None)
    )
    power = col("power_w")
    gpu, mem = col("gpu_util"), col("mem_util")
    cpu = [p.server_cpu_s for p in passes]
    busiest = [p.server_busiest_thread_s for p in passes]
    have_cpu = bool(passes) and all(c is not None for c in cpu) and seconds > 0
    # A pass whose busiest thread was not read (an interrupted run's kept units) leaves the
    # job's share unknown rather than understated.
    have_busiest = have_cpu and all(b is not None for b in busiest)
    sampler_cpu = sum(p.sampler_cpu_s for p in passes)
    others = [p.host_other_cpu_s for p in passes]
    other = sum(o for o in others if o is not None) if passes and None not in others else None
    loads = [x for p in passes if (x := p.load_avg_max) is not None]
    bases = sorted({p.energy_basis for p in passes if p.energy_basis})
    return {
        "energy_j": energy,
        "j_per_unit": energy / units_completed if energy is not None and units_completed else None,
        "power_w": {
            "mean": energy / seconds if energy is not None and seconds > 0 else _mean(power),
            "max": max(power) if power else None,
        },
        "gpu_busy_share": sum(gpu) / len(gpu) / 100 if gpu else None,
        "mem_busy_share": sum(mem) / len(mem) / 100 if mem else None,
        "server_cpu_share": (sum(c for c in cpu if c is not None) / seconds if have_cpu else None),
        "server_busiest_thread_share": (
            sum(b for b in busiest if b is not None) / seconds if have_busiest else None
        ),
        "telemetry": {
            "source": None if reader is None else reader.source,
            "reason": reason,
            "devices": [] if reader is None else list(reader.devices),
            "interval_s": interval_s,
            "samples": len(samples),
            "window_s": seconds,
            "energy_basis": bases[0] if len(bases) == 1 else (bases or None),
            "sm_clock_mhz": {"mean": _mean(col("sm_clock_mhz")), "max": _maxf(col("sm_clock_mhz"))},
            "temp_c_max": _maxf(col("temp_c")),
            "mem_used_mib_max": _maxf(col("mem_used_mib")),
            # What the sampler itself cost: its thread's CPU time over the window, and how
            # many ticks came a whole interval late.
            "sampler_cpu_s": sampler_cpu,
            "sampler_cpu_share": sampler_cpu / seconds if seconds > 0 else None,
            "sampler_late_ticks": sum(p.sampler_late for p in passes),
            "file": TELEMETRY_FILE if samples else None,
            "host_other_cpu_s": other,
            "host_other_cores": other / seconds if other is not None and seconds > 0 else None,
            "load_avg_max": max(loads) if loads else None,
            "cpu_count": os.cpu_count(),
        },
    }


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _maxf(xs: Sequence[float]) -> float | None:
    return max(xs) if xs else None


def absent(reason: str) -> TelemetryMetrics:
    """The telemetry keys of a job that sampled nothing (an external server, telemetry off)."""
    return summarise([], 0, None, reason, 0.0)


def load_samples(path: Path) -> list[SampleRow]:
    """telemetry.jsonl's rows (none when the file is missing or unreadable; a line that is not
    a sample is passed over)."""
    out: list[SampleRow] = []
    with contextlib.suppress(OSError):
        for line in bounded.lines(path):
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if _is_sample_row(row):
                    out.append(row)
    return out


def _is_sample_row(row: object) -> TypeGuard[SampleRow]:
    """A JSON object whose `t` is a number, `pass` (if any) an int and each reading SampleRow
    names a number or null: what write_samples writes. Keys it does not name pass through."""
    if not isinstance(row, dict) or not isinstance(row.get("pass", 0), int):
        return False
    readings = SampleRow.__optional_keys__ - {"pass"}
    return as_float(row.get("t")) is not None and all(
        v is None or as_float(v) is not None for k, v in row.items() if k in readings
    )


# A result.json object as loaded (its own type kept through drop_partial).
_Result = TypeVar("_Result", bound=Mapping[str, object])
# A sampler runs from before a pass's first request to after its last response: its window is
# never much shorter than the pass's wall clock. Shorter, it saw only part of the job.
COVER = 0.95
# The metrics a sampler gives, and those the server's counters give.
SAMPLED_KEYS = (
    "energy_j", "j_per_unit", "gpu_busy_share", "mem_busy_share", "server_cpu_share",
    "server_busiest_thread_share",
)  # fmt: skip
COUNTED_KEYS = ("server_steps_per_s", "seqs_per_step", "server_prompt_tok_s", "server_decode_tok_s")


def covers(window_s: object, wall_s: object) -> bool:
    """Whether a telemetry window spans a wall clock (COVER)."""
    return (
        isinstance(window_s, int | float)
        and isinstance(wall_s, int | float)
        and wall_s > 0
        and window_s >= COVER * wall_s
    )


def is_partial(metrics: object) -> bool:
    """Whether a result's telemetry sampled only part of its wall clock (a race's extension
    written before benchkit joined the earlier run's telemetry to its own)."""
    if not isinstance(metrics, Mapping):
        return False
    info = metrics.get("telemetry")
    if not isinstance(info, Mapping) or not info.get("samples"):
        return False
    return not covers(info.get("window_s"), metrics.get("wall_s"))


def drop_partial(data: _Result) -> _Result:
    """A loaded result with the figures of a partial sampler left out (None): energy, power,
    busy shares; for an extended job also the server's counters, read over the same last run.
    They are not the job's; the report says which jobs (caveat `partial_telemetry`)."""
    m = data.get("metrics")
    if not isinstance(m, dict) or not is_partial(m):
        return data
    out = {**m, **{k: None for k in SAMPLED_KEYS if k in m}, "power_w": {"mean": None, "max": None}}
    prov = data.get("provenance")
    if isinstance(prov, dict) and prov.get("extended"):
        out.update({k: None for k in COUNTED_KEYS if k in m})
        out["server"] = None
    return cast(_Result, {**data, "metrics": out})

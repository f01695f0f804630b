"""CPU time of a server process tree from /proc: per process, and per thread of the root.

Read at the edges of a replay pass (benchkit/measure/telemetry.py), so a job says how much CPU the
server used and whether one thread (llama-server's main loop) was busy the whole time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(path: Path) -> list[str] | None:
    """The fields after the command name of a /proc stat file (the name may hold spaces)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    close = text.rfind(")")
    if close < 0:
        return None
    return text[close + 2 :].split()


def _cpu_s(fields: Sequence[str]) -> float:
    # After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU seconds of a process tree at one moment: per process and per thread of the root."""

    processes: dict[int, float]
    threads: dict[int, float]


def process_tree(pid: int, proc: Path = Path("/proc")) -> list[int]:
    """`pid` and every process descended from it (vLLM and SGLang start workers)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir(proc) if e.isdigit()]
    except OSError:
        return [pid]
    for e in entries:
        f = _stat_fields(proc / e / "stat")
        if f is not None and len(f) > 1:
            children.setdefault(int(f[1]), []).append(int(e))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_snapshot(pid: int, proc: Path = Path("/proc"), tree: bool = True) -> CpuSnapshot | None:
    """CPU seconds of `pid` (and its descendants), None when the process is gone."""
    root = _stat_fields(proc / str(pid) / "stat")
    if root is None:
        return None
    procs = {pid: _cpu_s(root)}
    if tree:
        for p in process_tree(pid, proc)[1:]:
            f = _stat_fields(proc / str(p) / "stat")
            if f is not None:
                procs[p] = _cpu_s(f)
    threads: dict[int, float] = {}
    try:
        tids = [int(t) for t in os.listdir(proc / str(pid) / "task") if t.isdigit()]
    except OSError:
        tids = []
    for tid in tids:
        f = _stat_fields(proc / str(pid) / "task" / str(tid) / "stat")
        if f is not None:
            threads[tid] = _cpu_s(f)
    return CpuSnapshot(procs, threads)


def cpu_delta(a: CpuSnapshot | None, b: CpuSnapshot | None) -> tuple[float, float] | None:
    """(CPU seconds of the tree, CPU seconds of the busiest root thread) between a and b.
    A process or thread that appeared meanwhile counts from zero."""
    if a is None or b is None:
        return None
    total = sum(max(v - a.processes.get(p, 0.0), 0.0) for p, v in b.processes.items())
    busiest = max((max(v - a.threads.get(t, 0.0), 0.0) for t, v in b.threads.items()), default=0.0)
    return total, busiest


def proc_cpu_s(pid: int, proc: Path = Path("/proc")) -> float | None:
    f = _stat_fields(proc / str(pid) / "stat")
    return None if f is None else _cpu_s(f)


@dataclass(frozen=True)
class HostSnapshot:
    """The whole machine's busy CPU seconds (/proc/stat: user, nice, system, irq, softirq,
    steal over every core), this process's own CPU seconds, and the 1-minute load average."""

    busy_s: float
    own_s: float
    load_avg: float


def host_snapshot(proc: Path = Path("/proc")) -> HostSnapshot | None:
    """Now, or None where /proc/stat cannot be read (not Linux)."""
    try:
        first = (proc / "stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not first or first[0] != "cpu" or len(first) < 9:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in first[1:9])
    busy = (user + nice + system + irq + softirq + steal) / _CLK_TCK
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    t = os.times()
    return HostSnapshot(busy, t.user + t.system, load)


def other_cpu_s(
    a: HostSnapshot | None, b: HostSnapshot | None, server_s: float | None
) -> float | None:
    """CPU seconds other processes used between a and b: the machine's busy time less the
    server tree's and benchkit's own (never below zero: the counters tick at different
    moments). None where the machine or the server was not read."""
    if a is None or b is None or server_s is None:
        return None
    return max((b.busy_s - a.busy_s) - server_s - (b.own_s - a.own_s), 0.0)

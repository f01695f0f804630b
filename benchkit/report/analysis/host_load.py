"""The host's own load during the timed passes: other processes' CPU time on the machine that
ran the server (read from /proc at each pass's edges, benchkit/proc_cpu.py) and its load
average. A server that shares its cores runs slower by an amount no setting explains; the
report names the jobs where that happened, with the figures, whatever the verdicts say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchkit.report.lang import fmt, tr
from benchkit.report.lang.i18n import jobs_text

# Other processes keeping a quarter of a core busy on average over a pass is a host that was
# not quiet: named.
OTHER_CORES = 0.25


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def detect(by_job: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One caveat naming the jobs whose passes shared the machine (other processes kept at least
    OTHER_CORES busy), with the most other processes' cores and the highest load average among
    them (none: every pass was quiet, or the host was not read)."""
    busy: list[str] = []
    cores: list[float] = []
    loads: list[float] = []
    count: int | None = None
    for job, data in sorted(by_job.items(), key=lambda kv: (len(kv[0]), kv[0])):
        metrics = data.get("metrics")
        tel = metrics.get("telemetry") if isinstance(metrics, Mapping) else None
        if not isinstance(tel, Mapping):
            continue
        other, load = _num(tel.get("host_other_cores")), _num(tel.get("load_avg_max"))
        n = _num(tel.get("cpu_count"))
        if other is None and load is None:
            continue
        # The load average counts the server's own threads and the client too: it is said
        # beside, never the test (other processes' CPU time is).
        if other is not None and other >= OTHER_CORES:
            busy.append(job)
            cores += [other] if other is not None else []
            loads += [load] if load is not None else []
            count = int(n) if n else count
    if not busy:
        return []
    return [
        {
            "kind": "host_busy",
            "jobs": busy,
            "other_cores_max": max(cores) if cores else None,
            "load_avg_max": max(loads) if loads else None,
            "cpu_count": count,
        }
    ]


def say(c: Mapping[str, Any], lang: str) -> str:
    return tr(
        lang,
        "The machine was not quiet during the timed passes of {jobs}: other processes kept up "
        "to {cores} cores busy on average over a pass (load average up to {load} on {count} "
        "cores). The server shared its cores with them, so those jobs' times include a "
        "slowdown no setting explains; compare them with care, or measure again on a quiet "
        "machine.",
        jobs=jobs_text(c["jobs"], lang),
        cores=fmt.num(c["other_cores_max"], 2),
        load=fmt.num(c["load_avg_max"], 1),
        count=c["cpu_count"] if c["cpu_count"] is not None else fmt.DASH,
    )

"""A job measured in two runs (a race's extension after its earlier run, or a job finished from
an interrupted run's calls): the figures that the calls alone cannot give (telemetry, the
server's counters, where the model file was) carried over from the earlier run, and the
earlier run kept as it was when its extension is interrupted.

Why: an extension's sampler and counters see only its own run. Divided by every unit the job
completed, job 4 of the H100 study read 726 J a unit where its first run alone had measured
1,964; an interrupted extension's partial units added their time to the wall clock of the
units it kept (job 5: 10.1 s a unit where its complete 3-unit run had 6.2); a job finished from
the calls of a run stopped in its drift probe had no telemetry and no model file (job 10).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from benchkit.measure.telemetry import (
    TELEMETRY_FILE,
    PassTelemetry,
    TelemetryMetrics,
    covers,
    integrate_power,
    load_samples,
)
from benchkit.racing.extend import Prior
from benchkit.results import bounded
from benchkit.results.reuse import DATA_FILES
from benchkit.results.store import RESULT_FILE
from benchkit.server.metrics import ServerCounters, plus

# The keys of result.json's metrics that telemetry and the server's counters give.
TELEMETRY_KEYS = tuple(TelemetryMetrics.__annotations__)
COUNTER_KEYS = ("server", "server_steps_per_s", "seqs_per_step")


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) else None


def earlier_pass(prior: Prior, job_dir: Path) -> PassTelemetry | None:
    """The earlier run's telemetry as a pass of the extended job, over its kept units only;
    None where it did not see them all (an older benchkit's extension, telemetry lost)."""
    m = prior.result.get("metrics") or {}
    info = m.get("telemetry") or {}
    rows: list[dict[str, float | None]] = [
        {k: _num(v) for k, v in r.items() if k != "pass"}
        for r in load_samples(job_dir / TELEMETRY_FILE)
    ]
    lo = min(r.t_sent for r in prior.records)
    if prior.result.get("status") == "complete":
        window = _num(info.get("window_s"))
        if window is None or not covers(window, prior.wall_s):
            return None
        cpu, busiest = _num(m.get("server_cpu_share")), _num(m.get("server_busiest_thread_share"))
        basis = info.get("energy_basis")
        return PassTelemetry(
            t_start=lo,
            t_end=lo + window,
            energy_j=_num(m.get("energy_j")),
            energy_basis=basis if isinstance(basis, str) else None,
            samples=rows,
            server_cpu_s=None if cpu is None else cpu * window,
            server_busiest_thread_s=None if busiest is None else busiest * window,
            sampler_cpu_s=_num(info.get("sampler_cpu_s")) or 0.0,
            sampler_late=int(info.get("sampler_late_ticks") or 0),
        )
    # Stopped in a unit: the kept units' span, from the samples inside it (the pass's energy
    # counter and CPU times include the unit that was cut).
    hi = prior.end_t
    inside = [r for r in rows if (t := r.get("t")) is not None and lo <= t <= hi]
    if len(inside) < 2:
        return None
    energy = integrate_power(inside, lo, hi)
    cpu_readings = [c for r in inside if (c := _num(r.get("server_cpu_s"))) is not None]
    return PassTelemetry(
        t_start=lo,
        t_end=hi,
        energy_j=energy,
        energy_basis=None if energy is None else "power_integral",
        samples=inside,
        server_cpu_s=cpu_readings[-1] - cpu_readings[0] if len(cpu_readings) > 1 else None,
        server_busiest_thread_s=None,
        sampler_cpu_s=0.0,
        sampler_late=0,
    )


def earlier_counters(prior: Prior) -> ServerCounters | None:
    """The earlier run's server counters, None where they are not its kept units' alone (a run
    stopped in a unit counted the cut unit's tokens; an older extension, its last run only)."""
    m = prior.result.get("metrics") or {}
    server = m.get("server")
    if prior.result.get("status") != "complete" or not isinstance(server, dict):
        return None
    extended = (prior.result.get("provenance") or {}).get("extended")
    if extended and not covers((m.get("telemetry") or {}).get("window_s"), prior.wall_s):
        return None
    return cast(ServerCounters, server)


def joined_counters(prior: Prior, mine: ServerCounters | None) -> ServerCounters | None:
    """Both runs' counters together (None where either is unknown)."""
    return plus(earlier_counters(prior), mine)


def carry_finished(result: Mapping[str, object], prior: Prior) -> list[str]:
    """A job finished from an interrupted run's calls (every unit had completed): that run's
    provenance of the server, its warm-up and model file, and its telemetry and counters where
    they cover its pass. Returns the metric keys carried (none: the caller states them absent)."""
    old_prov = prior.result.get("provenance") or {}
    prov = cast(dict[str, object], result["provenance"])
    for key in ("server", "warmup", "client"):
        if key in old_prov:
            prov[key] = old_prov[key]
    model = prov.get("model")
    if isinstance(model, dict) and isinstance(old_prov.get("model"), dict):
        model.update({k: v for k, v in old_prov["model"].items() if v is not None})
    m = prior.result.get("metrics") or {}
    metrics = cast(dict[str, object], result["metrics"])
    if not covers((m.get("telemetry") or {}).get("window_s"), _num(m.get("wall_s"))):
        return []
    keys = [k for k in (*TELEMETRY_KEYS, *COUNTER_KEYS) if k in m]
    metrics.update({k: m[k] for k in keys})
    return keys


@dataclass
class Kept:
    """The job folder's files before an extension ran: put back when it is interrupted."""

    files: dict[str, bytes | None]

    @classmethod
    def take(cls, job_dir: Path) -> Kept:
        # The result, the files its digest covers, and the server's log beside them.
        names = (RESULT_FILE, *DATA_FILES, "server.log")
        return cls(
            {n: (bounded.read_bytes(p) if (p := job_dir / n).exists() else None) for n in names}
        )

    def restore(self, job_dir: Path) -> None:
        for name, data in self.files.items():
            path = job_dir / name
            if data is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(data)


def join_devices(metrics: dict[str, object], prior: Prior) -> None:
    """Both runs' cards in the job's telemetry block, the earlier run's first: a race resumed
    on another lent machine measures one point's units on two cards, and the report names a
    job whose cards differ from the rest (evidence.gpu_of)."""
    tel = metrics.get("telemetry")
    old = (prior.result.get("metrics") or {}).get("telemetry") or {}
    earlier = old.get("devices") if isinstance(old, dict) else None
    if not isinstance(tel, dict) or not isinstance(earlier, list):
        return
    got = tel.get("devices")
    mine: list[object] = list(got) if isinstance(got, list) else []
    seen = {d.get("uuid") for d in mine if isinstance(d, dict)}
    before = [d for d in earlier if isinstance(d, dict) and d.get("uuid") not in seen]
    tel["devices"] = [*before, *mine]

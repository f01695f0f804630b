"""A job's telemetry and server counters: the sampler set-up for its backend, and the figures
they give written into its metrics (over both runs of a race's extension, benchkit.job.extend),
with the samples beside the result."""

from __future__ import annotations

from benchkit.config.schema import BenchConfig
from benchkit.job import extend as job_extend
from benchkit.job.record import JobContext
from benchkit.measure.calls import server_rates
from benchkit.measure.telemetry import TELEMETRY_FILE, JobTelemetry, open_reader
from benchkit.measure.telemetry import absent as telemetry_absent
from benchkit.racing.extend import Prior
from benchkit.server.metrics import ServerCounters


def job_telemetry(cfg: BenchConfig) -> JobTelemetry:
    """The job's sampler set-up: the GPU reader for its backend and device, or the reason
    there is none (the server's CPU time is read either way)."""
    if not cfg.telemetry.enabled:
        return JobTelemetry(None, "telemetry.enabled=false", cfg.telemetry.interval_s)
    indices = None if cfg.hardware.device is None else [cfg.hardware.device]
    reader, reason = open_reader(cfg.backend.name.value, indices)
    return JobTelemetry(reader, reason, cfg.telemetry.interval_s)


def job_figures(
    cfg: BenchConfig,
    ctx: JobContext,
    m: dict[str, object],
    tel: JobTelemetry | None,
    server_side: list[ServerCounters | None],
    prior: Prior | None,
) -> None:
    """The job's telemetry and server counters into its metrics `m`: over both runs of a
    race's extension (benchkit.job.extend), with its samples written beside the result."""
    if tel is not None and prior is not None:
        # The earlier run's samples, energy and CPU time beside this run's: the job's own.
        earlier = job_extend.earlier_pass(prior, ctx.job_dir)
        if earlier is None:
            tel.reason = "the run this job extends has no telemetry over its units"
            tel.passes.clear()
        else:
            tel.passes.insert(0, earlier)
    if tel is None:
        m.update(
            telemetry_absent(
                f"backend={cfg.backend.name.value}: benchkit did not start the server, so "
                "neither its process nor its GPU is known to be this job's"
            )
        )
    else:
        # GPU energy, power, busy shares and the server's CPU time over the replay passes.
        completed = m.get("units_completed")
        m.update(tel.metrics(completed if isinstance(completed, int) else 0))
        if prior is not None:
            job_extend.join_devices(m, prior)
        if tel.passes and any(p.samples for p in tel.passes):
            # An extension's runs are one pass of the job, on one clock.
            tel.write_samples(ctx.job_dir / TELEMETRY_FILE, one_pass=prior is not None)
        # The server's own counters from /metrics, per pass, beside the client's measurements.
        m["server"] = server_side[0] if len(server_side) == 1 else server_side
        if prior is not None and len(server_side) == 1:
            m["server"] = job_extend.joined_counters(prior, server_side[0])
        # The job's own counters: both runs' for an extension, over its wall clock.
        one = m["server"] if isinstance(m["server"], dict) else None
        m["server_steps_per_s"], m["seqs_per_step"] = server_rates(one, m.get("wall_s"))

"""Every metric a job writes into result.json's `metrics`, declared once.

A `Metric` says what a metric is: its key, its Python type, its unit, which code measures it
(`source`), its definition (English, marked with N_ so the report's catalogs translate it), its
column in the report's "All results" table, and whether it means the same at every slot count.
The rest is derived from `METRICS`: each measuring module's DEFINITIONS (`definitions`), the
report's table columns (`table_columns`), and the keys schema.Metrics types, which
tests/unit/measure/test_metrics.py holds equal to `schema_keys()` (a dataclass built at run time
would be invisible to mypy, so schema.Metrics stays written out and the test keeps the two one).

`METRICS` is in the order the report lists the definitions; result.json keeps schema.Metrics'
order and the table its columns' `place`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchkit.report.lang import N_
from benchkit.results.schema import Percentiles

# Which code measures the metric: `calls` measure.compute_metrics (measure.CallMetrics),
# `server` the server's own counters (measure.server_rates, added by the job), `telemetry`
# benchkit.measure.telemetry (TelemetryMetrics), `load` benchkit.load.measure (open-loop passes
# only).
Source = Literal["calls", "server", "telemetry", "load"]
# Where in result.json: the `metrics` block itself or its open-loop block `metrics.open_loop`.
Block = Literal["metrics", "open_loop"]
# The report's cell formatters (benchkit.report.lang.fmt.filters), by their template names.
Format = Literal["num", "int", "secs", "pct", "ms"]


@dataclass(frozen=True)
class Column:
    """A metric's column in the report's "All results" table."""

    header: str  # English, marked with N_ (the catalogs translate it)
    place: int  # left to right among the table's metric columns
    format: Format = "num"
    digits: int | None = None  # the format's precision where not its default
    # A second metric shown in the same cell after " / " (calls ok / failed).
    beside: str | None = None


@dataclass(frozen=True)
class Metric:
    key: str
    type: type  # int, float, Percentiles (p50..p99) or dict (another small block)
    unit: str
    source: Source
    definition: str | None = None  # printed under the report where set
    column: Column | None = None
    # False where the figure means something else with several slots busy (decode_tok_s):
    # no verdict, comparison or figure may set two slot counts side by side on it.
    across_slots: bool = True
    block: Block = "metrics"
    # False: schema.Metrics has no field for it and it is kept in `extra` as written (typing
    # it would write a null into every result without telemetry).
    typed: bool = True


_F = float
METRICS: tuple[Metric, ...] = (
    Metric(
        "wall_s", _F, "s", "calls",
        N_("Client wall clock from the first request sent to the last response received."),
    ),
    Metric(
        "s_per_unit_throughput", _F, "s", "calls",
        N_(
            "Throughput basis: wall_s / units completed. What each unit costs when the units "
            "run through all slots together."
        ),
        Column(N_("s/unit (throughput)"), 1, "secs"),
    ),
    Metric(
        "s_per_unit_slot_latency", _F, "s", "calls",
        N_(
            "Slot-latency basis: mean over completed units of (last response of the unit - "
            "first request of the unit). What one unit waits; about slots x the throughput "
            "basis."
        ),
        Column(N_("s/unit (slot latency)"), 2, "secs"),
    ),
    Metric(
        "prefill_tok_s", _F, "tok/s", "calls",
        N_(
            "Aggregate prefill throughput: prompt tokens the server evaluated (its "
            "timings.prompt_n, cached tokens excluded) / the wall time during which at least "
            "one call was between its request and its first token."
        ),
        Column(N_("prefill tok/s (aggregate)"), 7),
    ),
    Metric(
        "decode_tok_s", _F, "tok/s", "calls",
        N_(
            "Decode-window throughput: completion tokens after each call's first / the wall "
            "time during which at least one call was between its first and its last token. "
            "With one slot that window is pure decoding; with several it holds other slots' "
            "prefill too, so this figure does not compare across slot counts and no verdict, "
            "comparison or figure uses it."
        ),
        Column(N_("decode-window tok/s (not comparable across slots)"), 6),
        across_slots=False,
    ),
    Metric(
        "output_tok_s", _F, "tok/s", "calls",
        N_(
            "Aggregate output rate: completion tokens / wall_s. What the server produced per "
            "second of the pass, at any slot count."
        ),
        Column(N_("output tok/s (aggregate)"), 3),
    ),
    Metric(
        "seq_decode_tok_s", _F, "tok/s", "calls",
        N_(
            "Per-sequence decode rate: completion tokens after each call's first / the summed "
            "time from each call's first token to its last. How fast one answer streams."
        ),
        Column(N_("decode tok/s per sequence"), 4),
    ),
    Metric(
        "seqs_per_step", _F, "sequences/step", "server",
        N_(
            "Sequences per server step: the server's own mean of busy slots per llama_decode "
            "call (its n_busy_slots_per_decode counter), the batch it actually ran."
        ),
        Column(N_("sequences per step (server)"), 5, digits=2),
    ),
    Metric(
        "server_steps_per_s", _F, "steps/s", "server",
        N_(
            "Server steps per second: llama_decode calls (its n_decode_total counter, the "
            "pass's own, warm-up left out) / wall_s."
        ),
    ),
    Metric(
        "prefill_busy_share", _F, "share", "calls",
        N_(
            "Share of wall_s during which at least one call waited for its first token "
            "(client side: prompt processing and queueing)."
        ),
    ),
    Metric(
        "decode_busy_share", _F, "share", "calls",
        N_(
            "Share of wall_s during which at least one call was between its first and last "
            "token."
        ),
    ),
    Metric(
        "idle_share", _F, "share", "calls",
        N_(
            "Share of wall_s during which no call was in flight (between one call's answer "
            "and the next request)."
        ),
    ),
    Metric(
        "ttft_ms", Percentiles, "ms", "calls",
        N_(
            "Time to first token on the client: request sent to first token received, "
            "queueing inside the server included (p50, p90, p95, p99 over completed calls)."
        ),
    ),
    Metric(
        "itl_ms", Percentiles, "ms", "calls",
        N_(
            "Inter-token latency per call: (last token - first token) / (completion tokens - "
            "1), counting tokens, not stream chunks."
        ),
    ),
    Metric(
        "server_prompt_tok_s", _F, "tok/s", "calls",
        N_("Mean of the server's own per-call timings.prompt_per_second."),
    ),
    Metric(
        "server_decode_tok_s", _F, "tok/s", "calls",
        N_("Mean of the server's own per-call timings.predicted_per_second."),
    ),
    Metric(
        "draft_acceptance", _F, "share", "calls",
        N_(
            "Accepted draft tokens / drafted tokens, summed over calls from the server's "
            "timings (draft_n_accepted / draft_n); null when no drafts were made."
        ),
    ),
    Metric(
        "calls_hit_cap", int, "calls", "calls",
        N_(
            "Calls that ran to the workload's generation cap (finish_reason = length with "
            "completion tokens = cap): runaway outputs."
        ),
        Column(N_("hit cap"), 9, "int"),
    ),
    Metric(
        "cap_time_share", _F, "share", "calls",
        N_("Share of summed call time spent in calls that hit the cap."),
    ),
    Metric("error_rate", _F, "share", "calls", N_("Failed calls / calls attempted.")),
    Metric(
        "prompt_token_mismatches", int, "calls", "calls",
        N_(
            "Completed calls whose prompt the server tokenized to a different count than the "
            "fixture records (usage.prompt_tokens vs the fixture): a different tokenizer."
        ),
    ),
    # Counts the report shows or divides by, without a definition of their own.
    Metric("units_completed", int, "units", "calls"),
    Metric("units_planned", int, "units", "calls"),
    Metric(
        "calls_completed", int, "calls", "calls",
        column=Column(N_("calls ok / failed"), 8, "int", beside="calls_failed"),
    ),
    Metric("calls_failed", int, "calls", "calls"),
    Metric("calls_planned", int, "calls", "calls"),
    Metric("prompt_tokens", int, "tokens", "calls"),
    Metric("prompt_tokens_evaluated", int, "tokens", "calls"),
    Metric("cached_prompt_tokens", int, "tokens", "calls"),
    Metric("completion_tokens", int, "tokens", "calls"),
    Metric("draft_tokens", int, "tokens", "calls"),
    Metric("draft_tokens_accepted", int, "tokens", "calls"),
    Metric("fixture_prompt_tokens", int, "tokens", "calls"),
    Metric("fixture_completion_tokens", int, "tokens", "calls"),
    # GPU and server-process telemetry (benchkit/measure/telemetry.py), where the job had it.
    Metric(
        "energy_j", _F, "J", "telemetry",
        N_(
            "GPU energy over the replay passes: the GPU's own energy counter (NVML "
            "nvmlDeviceGetTotalEnergyConsumption, amdsmi's energy accumulator) read when each "
            "pass starts and ends, summed over the sampled GPUs; the GPU board only, not the "
            "host CPU."
        ),
    ),
    Metric(
        "j_per_unit", _F, "J/unit", "telemetry",
        N_("energy_j / units completed: what one unit costs in GPU energy."),
    ),
    Metric(
        "power_w", dict, "W", "telemetry",
        N_(
            "Mean: energy_j / the passes' duration. Max: the highest of the board-power "
            "samples."
        ),
        typed=False,
    ),
    Metric(
        "gpu_busy_share", _F, "share", "telemetry",
        N_(
            "Mean over the samples of the GPU's utilisation (NVML utilization.gpu: the share "
            "of the driver's sample period in which at least one kernel ran; amdsmi "
            "gfx_activity), as a share of 1. Busy is not saturated: one small kernel at a "
            "time counts as busy."
        ),
    ),
    Metric(
        "mem_busy_share", _F, "share", "telemetry",
        N_(
            "Mean over the samples of the memory controller's utilisation (NVML "
            "utilization.memory: the share of time device memory was read or written)."
        ),
        typed=False,
    ),
    Metric(
        "server_cpu_share", _F, "cores", "telemetry",
        N_(
            "CPU time of the server process and its children (user + system, /proc) / the "
            "passes' duration, in cores: 1.0 is one core busy the whole time."
        ),
    ),
    Metric(
        "server_busiest_thread_share", _F, "share", "telemetry",
        N_(
            "CPU time of the server's busiest thread / the passes' duration: near 1.0 means "
            "one thread (llama-server's main loop) was on a CPU the whole time, whether "
            "working or spin-waiting for the GPU."
        ),
        typed=False,
    ),
    # Open-loop passes only (benchkit/load/measure.py); most in `metrics.open_loop`.
    Metric(
        "offered_rps", _F, "calls/s", "load",
        N_(
            "Offered rate: calls per second the arrival process sends (load.rate; for a "
            "recorded trace, its arrivals over its span at load.speed). A Poisson schedule of "
            "few calls offers more or less than that by chance: scheduled_rps is the rate its "
            "arrivals actually had (arrivals - 1 over the time from the first to the last)."
        ),
        block="open_loop",
    ),
    Metric(
        "achieved_rps", _F, "calls/s", "load",
        N_(
            "Achieved rate: calls completed / wall_s. Below the offered rate when the server "
            "fell behind or the pass ended at a bound."
        ),
        block="open_loop",
    ),
    Metric(
        "e2e_ms", Percentiles, "ms", "load",
        N_(
            "End-to-end latency per call: request sent to last token received, queueing "
            "inside the server included (p50, p90, p95, p99 over completed calls)."
        ),
    ),
    Metric(
        # Written as schedule_lag_ms_p50, _p99 and _max.
        "schedule_lag_ms", Percentiles, "ms", "load",
        N_(
            "How late the client sent each call: time sent - time its arrival was due (its "
            "connection is opened just before). The client's own error in the offered load."
        ),
        block="open_loop",
    ),
    Metric(
        "goodput_rps", _F, "calls/s", "load",
        N_(
            "Goodput: completed calls that met every per-call limit of the study's SLO (its "
            "ttft_ms, itl_ms and e2e_ms limits, each applied to the call's own value) / "
            "wall_s."
        ),
        block="open_loop",
    ),
    Metric(
        "goodput_tok_s", _F, "tok/s", "load",
        N_("Goodput in tokens: completion tokens of the calls that met the SLO / wall_s."),
        block="open_loop",
    ),
)  # fmt: skip

BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}


def definitions(*sources: Source) -> dict[str, str]:
    """The definitions of the metrics these sources measure, in `METRICS`' order (the order
    the report prints them), each still English (the report translates where it prints)."""
    return {m.key: m.definition for m in METRICS if m.source in sources and m.definition}


def keys(*sources: Source) -> tuple[str, ...]:
    """The keys of the metrics these sources measure, in `METRICS`' order."""
    return tuple(m.key for m in METRICS if m.source in sources)


def schema_keys(block: Block = "metrics") -> frozenset[str]:
    """The keys schema.Metrics (or schema.OpenLoop) types: every typed metric of the block."""
    return frozenset(m.key for m in METRICS if m.block == block and m.typed)


def table_columns() -> tuple[Metric, ...]:
    """The metrics the "All results" table shows, left to right."""
    shown = [m for m in METRICS if m.column is not None]
    return tuple(sorted(shown, key=lambda m: m.column.place if m.column else 0))

"""The numbers behind the capacity verdict (open-loop load): one row per offered rate of each
server setting, and each setting's capacity. Plain typed records; the verdict fills them
(report/verdicts/kinds/capacity/verdict.py), the section and figures read them."""

from __future__ import annotations

from typing import TypedDict

# From numbers_base, where they are defined: numbers imports this module (CapacityNumbers).
from benchkit.report.analysis.numbers_base import Point, SloBreak


class CapacityRow(TypedDict):
    """One offered rate of one setting, as measured (means over its repeats)."""

    load: float  # the load axis's value: a rate (calls/s) or a trace's speed
    offered_rps: float | None
    achieved_rps: float | None
    ttft_ms_p50: float | None
    ttft_ms_p95: float | None
    ttft_ms_p99: float | None
    e2e_ms_p95: float | None
    goodput_rps: float | None
    goodput_tok_s: float | None
    output_tok_s: float | None  # aggregate: every user's tokens per wall second
    per_user_tok_s: float | None  # one answer's streaming rate (seq_decode_tok_s)
    ended: str | None  # the bound that ended an overloaded pass (load.max_in_flight, ...)
    calls_failed: int
    breaks: list[SloBreak]
    held: bool
    # Within the noise of a limit: held or broken by less than the noise.
    marginal: bool
    jobs: list[str]


class SettingCapacity(TypedDict):
    """One server setting's capacity: the highest load whose SLO held, every lower load tried
    holding too; `bracketed` when a higher load was tried and broke it."""

    setting: Point
    capacity: float | None  # None: the lowest load tried already broke the SLO
    capacity_rps: float | None  # the offered calls/s at that load
    bracketed: bool
    below_lowest: bool
    marginal: bool
    goodput_tok_s: float | None  # at the capacity
    rows: list[CapacityRow]

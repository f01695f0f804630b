"""Metric arithmetic on hand-made call records (no server: these test the formulas)."""

from __future__ import annotations

import pytest

from benchkit.client.replay import CallRecord
from benchkit.measure.calls import compute_metrics, percentiles, union_length


def rec(
    unit: str,
    seq: int,
    t0: float,
    t1: float,
    t2: float,
    *,
    n: int = 11,
    ok: bool = True,
    prompt_n: int = 100,
    cached: int = 0,
    finish: str = "stop",
    worker: int = 0,
) -> CallRecord:
    return CallRecord(
        repeat=0, unit=unit, seq=seq, role="r", worker=worker, t_sent=t0, t_first=t1,
        t_last=t2, t_done=t2, ok=ok, error=None if ok else "boom", finish_reason=finish,
        prompt_tokens=prompt_n + cached, cached_tokens=cached, completion_tokens=n,
        timings={"prompt_n": prompt_n, "predicted_per_second": 50.0},
    )  # fmt: skip


def test_union_length_counts_overlap_once() -> None:
    assert union_length([(0, 2), (1, 3), (5, 6)]) == pytest.approx(4.0)
    assert union_length([]) == 0.0
    assert union_length([(2, 1)]) == 0.0


def test_percentiles_interpolate() -> None:
    p = percentiles([1, 2, 3, 4, 5])
    assert p == {
        "p50": 3,
        "p90": pytest.approx(4.6),
        "p95": pytest.approx(4.8),
        "p99": pytest.approx(4.96),
    }
    assert percentiles([]) == {"p50": None, "p90": None, "p95": None, "p99": None}


def test_one_slot_sequential_units() -> None:
    # Two units of two calls each, run back to back on one slot; 10 s wall clock.
    rs = [
        rec("a", 0, 0.0, 1.0, 2.0), rec("a", 1, 2.0, 3.0, 5.0),
        rec("b", 0, 5.0, 6.0, 7.0), rec("b", 1, 7.0, 8.0, 10.0),
    ]  # fmt: skip
    m = compute_metrics(rs, wall_s=10.0, units_planned=2, calls_planned=4,
                        calls_per_unit={"a": 2, "b": 2})  # fmt: skip
    assert m["units_completed"] == 2
    assert m["s_per_unit_throughput"] == pytest.approx(5.0)
    assert m["s_per_unit_slot_latency"] == pytest.approx(5.0)
    # Prefill windows 1+1+1+1 s, 400 prompt tokens evaluated.
    assert m["prefill_tok_s"] == pytest.approx(100.0)
    # Decode windows 1+2+1+2 = 6 s for 4 x 10 tokens after the first.
    assert m["decode_tok_s"] == pytest.approx(40 / 6)
    assert m["ttft_ms"]["p50"] == pytest.approx(1000.0)
    assert m["itl_ms"]["p50"] == pytest.approx(150.0)
    assert m["completion_tokens"] == 44 and m["prompt_tokens"] == 400


def test_two_slots_slot_latency_is_about_slots_times_throughput() -> None:
    # Two units in parallel, each taking 10 s: wall 10 s.
    rs = [rec("a", 0, 0, 1, 10, worker=0), rec("b", 0, 0, 1, 10, worker=1)]
    m = compute_metrics(rs, wall_s=10.0, units_planned=2, calls_planned=2,
                        calls_per_unit={"a": 1, "b": 1})  # fmt: skip
    assert m["s_per_unit_throughput"] == pytest.approx(5.0)
    assert m["s_per_unit_slot_latency"] == pytest.approx(10.0)
    # Overlapping decode windows count once: 20 tokens in 9 s.
    assert m["decode_tok_s"] == pytest.approx(20 / 9)


def test_failed_call_makes_its_unit_incomplete_and_is_counted_not_averaged() -> None:
    rs = [rec("a", 0, 0, 1, 2), rec("a", 1, 2, 3, 4, ok=False), rec("b", 0, 4, 5, 6)]
    m = compute_metrics(rs, wall_s=6.0, units_planned=2, calls_planned=3,
                        calls_per_unit={"a": 2, "b": 1})  # fmt: skip
    assert m["units_completed"] == 1
    assert m["calls_failed"] == 1 and m["calls_completed"] == 2
    assert m["error_rate"] == pytest.approx(1 / 3)
    # The failed call's tokens are not in the totals.
    assert m["completion_tokens"] == 22


def test_capped_calls_and_their_time_share() -> None:
    rs = [rec("a", 0, 0, 1, 9, finish="length"), rec("a", 1, 9, 10, 10.5)]
    m = compute_metrics(rs, wall_s=10.5, units_planned=1, calls_planned=2,
                        calls_per_unit={"a": 2})  # fmt: skip
    assert m["calls_hit_cap"] == 1
    assert m["cap_time_share"] == pytest.approx(9 / 10.5)


def test_draft_acceptance_only_when_drafting() -> None:
    r1 = rec("a", 0, 0, 1, 2)
    assert compute_metrics([r1], wall_s=2, units_planned=1, calls_planned=1,
                           calls_per_unit={"a": 1})["draft_acceptance"] is None  # fmt: skip
    r1.timings.update(draft_n=10, draft_n_accepted=5)
    assert compute_metrics([r1], wall_s=2, units_planned=1, calls_planned=1,
                           calls_per_unit={"a": 1})["draft_acceptance"] == 0.5  # fmt: skip


def test_prompt_token_mismatch_counts_calls_the_server_tokenized_differently() -> None:
    a, b = rec("a", 0, 0, 1, 2), rec("a", 1, 2, 3, 4)
    a.fixture_prompt_tokens = 100  # the server counted 100: same tokenizer
    b.fixture_prompt_tokens = 90  # the server counted 100: another tokenizer
    m = compute_metrics([a, b], wall_s=4, units_planned=1, calls_planned=2, calls_per_unit={"a": 2})
    assert m["prompt_token_mismatches"] == 1
    assert m["fixture_prompt_tokens"] == 190 and m["prompt_tokens"] == 200


def test_throughput_figures_that_compare_across_slot_counts() -> None:
    """One slot: two calls back to back. Two slots: the same two calls side by side, where
    each call's decode is slower (they share steps) but output per second doubles. Output
    per wall second and the per-sequence rate keep their meaning; the decode-window figure
    is the one whose meaning changes (definitions in measure.DEFINITIONS)."""
    one = [rec("a", 0, 0.0, 1.0, 3.0), rec("b", 0, 3.0, 4.0, 6.0)]
    two = [rec("a", 0, 0.0, 1.0, 5.0, worker=0), rec("b", 0, 0.0, 1.0, 5.0, worker=1)]
    per_unit = {"a": 1, "b": 1}
    m1 = compute_metrics(one, wall_s=6.0, units_planned=2, calls_planned=2, calls_per_unit=per_unit)
    m2 = compute_metrics(two, wall_s=5.0, units_planned=2, calls_planned=2, calls_per_unit=per_unit)
    # 22 tokens in 6 s, then in 5 s: the output rate rose with the second slot.
    assert m1["output_tok_s"] == pytest.approx(22 / 6)
    assert m2["output_tok_s"] == pytest.approx(22 / 5)
    # One answer streams 10 tokens in 2 s, then in 4 s.
    assert m1["seq_decode_tok_s"] == pytest.approx(5.0)
    assert m2["seq_decode_tok_s"] == pytest.approx(2.5)
    # Where the wall clock went: 2 of 6 s waiting for first tokens, 4 of 6 s decoding.
    assert m1["prefill_busy_share"] == pytest.approx(2 / 6)
    assert m1["decode_busy_share"] == pytest.approx(4 / 6)
    assert m1["idle_share"] == pytest.approx(0.0)


def test_idle_share_counts_time_with_no_call_in_flight() -> None:
    rs = [rec("a", 0, 0.0, 1.0, 2.0), rec("b", 0, 3.0, 4.0, 5.0)]
    m = compute_metrics(rs, wall_s=5.0, units_planned=2, calls_planned=2,
                        calls_per_unit={"a": 1, "b": 1})  # fmt: skip
    assert m["idle_share"] == pytest.approx(1 / 5)


def test_a_pass_wall_clock_runs_from_its_first_request_to_its_last_response() -> None:
    from benchkit.client.replay import pass_wall

    rs = [rec("a", 0, 0.13, 1.0, 2.0), rec("b", 0, 2.5, 3.0, 4.2)]
    assert pass_wall(rs, 9.9) == pytest.approx(4.2 - 0.13)
    assert pass_wall([], 1.5) == 1.5


def test_server_rates_from_the_counters_of_a_pass() -> None:
    from benchkit.measure.calls import server_rates

    steps, seqs = server_rates({"n_decode": 600, "busy_slots_per_decode": 3.13}, 60.0)
    assert steps == pytest.approx(10.0) and seqs == pytest.approx(3.13)
    assert server_rates(None, 60.0) == (None, None)
    assert server_rates({"n_decode": 600}, 0) == (None, None)

"""A call stuck waiting while the other slots keep working is a stall (phase `wait`), which the
per-token rules cannot see; a wave of prompts queued behind each other's prefill is not."""

from __future__ import annotations

from benchkit.report.analysis.stalls import find_stalls


def _call(unit: str, seq: int, sent: float, prompt_s: float, first: float, decode_s: float):  # type: ignore[no-untyped-def]
    return {
        "unit": unit,
        "seq": seq,
        "ok": True,
        "t_sent": sent,
        "t_first": first,
        "t_last": first + decode_s,
        "t_done": first + decode_s,
        "prompt_tokens": 200,
        "completion_tokens": 101,
        "timings": {
            "prompt_n": 200,
            "prompt_ms": prompt_s * 1000,
            "predicted_n": 100,
            "predicted_ms": decode_s * 1000,
        },
    }


def _steady(units: int = 4, calls: int = 6, stuck: tuple[str, int] | None = None) -> list[dict]:  # type: ignore[type-arg]
    """Four slots, each running one unit's calls back to back: 0.1 s of prompt, 1 s of decode,
    5 ms from sending to the server taking the prompt up. `stuck` waits 8 s instead."""
    out = []
    for u in range(units):
        t = 0.0
        for k in range(calls):
            wait = 8.0 if stuck == (f"u{u}", k) else 0.005
            first = t + wait + 0.1
            out.append(_call(f"u{u}", k, t, 0.1, first, 1.0))
            t = first + 1.0
    return out


def test_one_call_stuck_while_the_other_slots_work_is_named() -> None:
    calls = _steady(stuck=("u2", 3))
    js = find_stalls("0", calls, wall_s=15.0, units=4, warmed=True)
    waits = [s for s in js.stalls if s.phase == "wait"]
    assert [(s.unit, s.call) for s in waits] == [("u2", 3)]
    # 8 s, less the 0.3 s the server spent on the other slots' prompts meanwhile.
    assert abs(waits[0].seconds - 7.7) < 1e-9 and waits[0].excess_s > 7.6


def test_quiet_calls_name_no_wait() -> None:
    js = find_stalls("0", _steady(), wall_s=7.0, units=4, warmed=True)
    assert [s for s in js.stalls if s.phase == "wait"] == []


def test_a_wave_queued_behind_each_others_prefill_is_no_stall() -> None:
    # Sixteen prompts sent together at t=0, taken up one after another (0.5 s each): call k
    # waits k x 0.5 s, all of it behind the other prompts' prefill.
    calls = [_call(f"u{k}", 0, 0.0, 0.5, 0.5 * (k + 1), 1.0) for k in range(16)]
    calls += [
        _call(f"u{k}", 1, 0.5 * (k + 1) + 1.0, 0.5, 0.5 * (k + 1) + 1.5, 1.0) for k in range(16)
    ]
    js = find_stalls("0", calls, wall_s=12.0, units=16, warmed=False)
    assert [s for s in js.stalls if s.phase == "wait"] == []

"""The stall rule on recorded calls (benchkit.report.analysis.stalls): real H200 jobs, and altered
copies for each kind of stall and of non-stall."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchkit.report.analysis.stalls import find_stalls, job_stalls
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.results.store import read_jsonl

DATA = Path(__file__).parents[3] / "data" / "h200-vulkan-1slot"


def _job(n: str):  # type: ignore[no-untyped-def]
    m = json.loads((DATA / n / "result.json").read_text())["metrics"]
    return job_stalls(n, DATA / n, m["wall_s"], m["units_completed"], "calls.jsonl")


def test_vulkan_first_call_is_named_with_what_the_telemetry_saw() -> None:
    js = _job("0")
    assert js is not None
    first = js.stalls[0]
    assert (first.unit, first.call, first.phase) == ("u000", 0, "prefill")
    assert first.seconds == pytest.approx(20.415, abs=0.01)
    assert first.tokens == 1203
    assert first.times_median > 100
    assert first.excess_s == pytest.approx(20.26, abs=0.05)
    # The GPU sat nearly idle at a low clock while the server held one core.
    assert first.telemetry is not None
    assert first.telemetry["gpu_busy"] is not None and first.telemetry["gpu_busy"] < 0.05
    assert first.telemetry["sm_clock_mhz"] is not None and first.telemetry["sm_clock_mhz"] < 600
    # Two later calls of the first unit (new prompt shapes) stalled too: 3 in all.
    assert [(s.unit, s.call) for s in js.stalls] == [("u000", 0), ("u000", 8), ("u000", 9)]
    assert js.wall_share == pytest.approx(0.265, abs=0.005)
    # Without them: the wall clock less their excess, per unit.
    assert js.without("s_per_unit_throughput", 12.2158) == pytest.approx(8.975, abs=0.01)
    assert js.without("ttft_ms_p95", 100.0) is None  # not restated


def test_a_job_without_stalls_names_nothing() -> None:
    js = _job("4")
    assert js is not None and js.stalls == []


def test_the_backend_verdict_states_the_comparison_with_and_without_the_stall(
    tmp_path: Path,
) -> None:
    src = tmp_path / "sweep"
    shutil.copytree(DATA, src, ignore=shutil.ignore_patterns("README.md"))
    a = analyse_folder(src)
    v = a.verdict("backend")
    assert v is not None and v.verdict == "cuda"
    assert v.status == "provisional" and "stalled" in v.reasons
    notes = v.numbers.stalled  # type: ignore[union-attr]
    assert notes is not None and [n["job"] for n in notes] == ["0"]
    (pair,) = notes[0]["pairs"]
    assert pair["other"]["backend"] == "cuda"
    # Rules v6: the first call (no warm-up before it: results from before the warm-up) is
    # a cold start, left out of the figure compared (1.61x measured); the two later stalls
    # stay provisional, stated with and without.
    assert notes[0]["stalls"] == 2
    assert pair["ratio"] == pytest.approx(1.272, abs=0.005)
    assert pair["ratio_without"] == pytest.approx(1.179, abs=0.005)
    (cold,) = v.numbers.cold  # type: ignore[union-attr]
    assert cold["job"] == "0" and cold["calls"] == [{"unit": "u000", "call": 0}]
    assert cold["objective_measured"] == pytest.approx(12.216, abs=0.01)
    assert any(c["kind"] == "stall" for c in a.caveats)


def _calls(
    n: int, slow: dict[int, float] | None = None, prompt_n: int = 1000
) -> list[dict[str, object]]:
    """`n` calls one after another (one slot), each 1,000 prompt tokens in 0.1 s (or in
    `slow[i]` seconds) then 40 tokens in 0.8 s."""
    out = []
    t = 0.0
    for i in range(n):
        prompt_s = (slow or {}).get(i, 0.1)
        out.append(
            {
                "unit": f"u{i:03d}", "seq": 0, "ok": True, "t_sent": t,
                "t_first": t + prompt_s, "t_last": t + prompt_s + 0.8,
                "t_done": t + prompt_s + 0.8, "completion_tokens": 41,
                "timings": {"prompt_n": prompt_n, "prompt_ms": 1000 * prompt_s,
                            "predicted_n": 40, "predicted_ms": 800.0},
            }
        )  # fmt: skip
        t += prompt_s + 0.9
    return out


def test_calls_that_wait_on_each_other_are_not_stalls() -> None:
    """16 prompts arriving at once (16 slots) each take 16x a lone prompt's time: the server
    went through all of them in that window, so the rate it ran at is normal."""
    calls = _calls(12)
    for i in range(16):
        calls.append(
            {
                "unit": f"w{i:02d}", "seq": 0, "ok": True, "t_sent": 20.0,
                "t_first": 21.6, "t_last": 22.4, "t_done": 22.4, "completion_tokens": 41,
                "timings": {"prompt_n": 1000, "prompt_ms": 1600.0,
                            "predicted_n": 40, "predicted_ms": 800.0},
            }
        )  # fmt: skip
    assert find_stalls("j", calls, wall_s=23.0, units=28).stalls == []


def test_a_small_blip_is_not_named_but_a_slow_call_is() -> None:
    assert find_stalls("j", _calls(20, {5: 0.15}), wall_s=20.0, units=20).stalls == []
    (s,) = find_stalls("j", _calls(20, {7: 3.0}), wall_s=22.9, units=20).stalls
    assert (s.unit, s.phase) == ("u007", "prefill")
    assert s.excess_s == pytest.approx(2.9)


def test_a_unit_far_slower_than_the_others_is_named_when_no_call_explains_it() -> None:
    calls = _calls(10)
    # A second call of unit u003 sent 6 s after its first: no call is slow, the unit is.
    t = float(calls[3]["t_sent"]) + 6.0  # type: ignore[arg-type]
    calls.append({**calls[3], "seq": 1, "t_sent": t, "t_first": t + 0.1, "t_last": t + 0.9,
                  "t_done": t + 0.9})  # fmt: skip
    found = find_stalls("j", calls, wall_s=16.0, units=10).stalls
    assert [(s.unit, s.phase) for s in found] == [("u003", "unit")]


def test_overlapping_stalls_add_their_union_not_their_sum() -> None:
    calls = _calls(20, {4: 2.5})
    # Two slots waited on the same 2.5 s: a second prompt sent with the fourth.
    calls.append({**calls[4], "unit": "v000", "timings": {**calls[4]["timings"], "prompt_n": 1}})  # type: ignore[dict-item]
    calls.append({**calls[4], "unit": "v001"})
    js = find_stalls("j", calls, wall_s=25.0, units=22)
    assert len(js.stalls) == 2
    # Each waited 2.5 s for about 2,000 tokens' work (0.2 s at the median rate): 2.3 s of
    # excess each, but in the same window, so the pass lost 2.3 s, not 4.6.
    assert js.excess_s == pytest.approx(2.5 - 2001 * 0.0001, abs=0.01)


def test_unreadable_lines_are_skipped(tmp_path: Path) -> None:
    p = tmp_path / "calls.jsonl"
    p.write_text('{"a": 1}\nnot json\n[1]\n')
    assert read_jsonl(p) == [{"a": 1}]
    assert read_jsonl(tmp_path / "missing.jsonl") == []


def test_a_cut_calls_file_is_named_not_skipped_silently(tmp_path: Path) -> None:
    """A calls.jsonl whose line was cut short (or edited): the report names the job and the
    line, since those calls are in no figure drawn from the calls."""
    src = tmp_path / "sweep"
    shutil.copytree(DATA, src, ignore=shutil.ignore_patterns("README.md"))
    calls = src / "4" / "calls.jsonl"
    lines = calls.read_text().splitlines()
    lines[9] = lines[9][: len(lines[9]) // 2]
    calls.write_text("\n".join(lines) + "\n")
    a = analyse_folder(src)
    (c,) = [c for c in a.caveats if c["kind"] == "unreadable_calls"]
    assert c["jobs"] == [{"job": "4", "lines": [10]}]
    from benchkit.report.analysis.caveats import caveat_sentence

    text = caveat_sentence(c, "en")
    assert "job 4, line 10" in text and "could not be read" in text

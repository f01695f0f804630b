"""Cold starts (rules v6): a stall in the first work of a server with no warm-up before its
timed pass is named as a cold start and left out of the figures the verdicts compare; with a
warm-up, or later in the pass, a stall keeps the stall rule's treatment, and the ledger keeps
the seconds each verdict left out. (The ledger's ranges and corrections: ledger/test_ranges.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchkit.report.analysis.numbers import BackendNumbers, of
from benchkit.report.analysis.stalls import find_stalls, first_wave
from benchkit.report.analysis.warmup import job_warmup, study_warmup
from benchkit.report.verdicts.cold_words import cold_text, warmup_lines
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.verdicts.light import Light
from benchkit.results.store import load_result

DATA = Path(__file__).parents[3] / "data" / "h200-vulkan-1slot"


def _calls(n: int, slow: dict[int, float] | None = None) -> list[dict[str, object]]:
    """`n` calls one after another (one slot): 1,000 prompt tokens in 0.1 s (or `slow[i]`)
    then 40 tokens in 0.8 s."""
    out = []
    t = 0.0
    for i in range(n):
        prompt_s = (slow or {}).get(i, 0.1)
        out.append(
            {
                "unit": f"u{i:03d}", "seq": 0, "ok": True, "t_sent": t,
                "t_first": t + prompt_s, "t_last": t + prompt_s + 0.8,
                "t_done": t + prompt_s + 0.8, "completion_tokens": 41,
                "timings": {"prompt_n": 1000, "prompt_ms": 1000 * prompt_s,
                            "predicted_n": 40, "predicted_ms": 800.0},
            }
        )  # fmt: skip
        t += prompt_s + 0.9
    return out


def test_a_first_call_stall_without_warm_up_is_a_cold_start_left_out() -> None:
    js = find_stalls("j", _calls(20, {0: 5.0}), wall_s=22.9, units=20, warmed=False)
    (s,) = js.stalls
    assert s.cold and js.cold == [s] and js.later == []
    assert js.cold_excess_s == pytest.approx(4.9)
    # Left out of the per-unit figure; nothing else stays to make a verdict provisional.
    assert js.excess_s == 0.0 and js.wall_share == 0.0
    assert js.cold_free("s_per_unit_throughput", 22.9 / 20) == pytest.approx(18.0 / 20)
    assert js.cold_free("ttft_ms_p50", 100.0) == 100.0  # not a per-unit figure


def test_with_a_warm_up_or_unrecorded_the_first_call_is_a_stall_not_a_cold_start() -> None:
    for warmed in (True, None):
        js = find_stalls("j", _calls(20, {0: 5.0}), wall_s=22.9, units=20, warmed=warmed)
        (s,) = js.stalls
        assert not s.cold and js.cold == []
        assert js.excess_s == pytest.approx(4.9)
        assert js.cold_free("s_per_unit_throughput", 1.0) == 1.0


def test_a_later_stall_is_not_a_cold_start() -> None:
    js = find_stalls("j", _calls(20, {0: 5.0, 7: 3.0}), wall_s=25.8, units=20, warmed=False)
    assert [(s.unit, s.cold) for s in js.stalls] == [("u000", True), ("u007", False)]
    assert js.cold_excess_s == pytest.approx(4.9)
    assert js.excess_s == pytest.approx(2.9)
    # The figure compared leaves out the cold start; "without" then leaves out the rest.
    cold_free = js.cold_free("s_per_unit_throughput", 25.8 / 20)
    assert cold_free == pytest.approx((25.8 - 4.9) / 20)
    assert js.without("s_per_unit_throughput", cold_free) == pytest.approx((25.8 - 7.8) / 20)


def test_every_call_of_a_several_slot_first_wave_is_a_cold_start() -> None:
    """Four slots: four prompts sent together at the start, all slowed by the server's first
    work; a later wave is ordinary."""
    calls = _calls(16)
    for c in calls:
        c["unit"] = f"w{c['unit']}"
    wave = []
    for i in range(4):
        wave.append(
            {
                "unit": f"u{i:03d}", "seq": 0, "ok": True, "t_sent": 0.0,
                "t_first": 6.0 + i * 0.1, "t_last": 6.8 + i * 0.1, "t_done": 6.8 + i * 0.1,
                "completion_tokens": 41,
                "timings": {"prompt_n": 1000, "prompt_ms": 6000.0 + i * 100,
                            "predicted_n": 40, "predicted_ms": 800.0},
            }
        )  # fmt: skip
    for c in calls:  # the one-slot calls follow the first wave
        for k in ("t_sent", "t_first", "t_last", "t_done"):
            c[k] = float(c[k]) + 7.0  # type: ignore[arg-type]
    allc = wave + calls
    assert first_wave(allc) == {(f"u{i:03d}", 0) for i in range(4)}
    js = find_stalls("j", allc, wall_s=30.0, units=20, warmed=False)
    assert {s.unit for s in js.stalls} == {f"u{i:03d}" for i in range(4)}
    assert all(s.cold for s in js.stalls)
    # One window the four waited in together: its excess counts once.
    assert js.cold_excess_s < sum(s.excess_s for s in js.stalls)
    assert js.excess_s == 0.0


def _sweep(tmp_path: Path) -> Path:
    src = tmp_path / "sweep"
    shutil.copytree(DATA, src, ignore=shutil.ignore_patterns("README.md"))
    return src


def test_the_real_vulkan_job_without_warm_up_states_its_cold_start(tmp_path: Path) -> None:
    """The H200 study's job 0 (no warm-up yet): its 20.4 s first call is a cold start; the
    backend ratio compared is 1.27x, not the 1.61x measured."""
    src = _sweep(tmp_path)
    r = load_result(src / "0" / "result.json")
    assert "warmup" not in r.provenance and job_warmup(r) == "off"
    a = analyse_folder(src)
    v = a.verdict("backend")
    assert v is not None
    n = of(BackendNumbers, v.numbers)
    assert n.ratio_range is not None
    assert n.ratio_range["vulkan"][0] == pytest.approx(1.272, abs=0.005)
    assert n.value_range is not None and n.value_range["vulkan"][0] == pytest.approx(9.68, abs=0.01)
    (cold,) = n.cold or []
    assert cold["objective_measured"] == pytest.approx(12.216, abs=0.01)
    text = cold_text(n.cold, "s_per_unit_throughput", "en")
    assert "12.2 s was measured" in text and "cold start in unit u000, call 0" in text
    assert "not isolated" in text
    assert "없었던 서버의 첫 작업" in cold_text(n.cold, "s_per_unit_throughput", "ko")
    assert warmup_lines({"0": "off", "4": "off"}, "en")[0].startswith("Warm-up: none preceded")
    # Kept by the ledger.
    kept = Light.keep(v.numbers)
    assert set(kept) >= {"ratio_range", "value_range"}


def test_with_a_warm_up_recorded_the_same_job_has_no_cold_start(tmp_path: Path) -> None:
    src = _sweep(tmp_path)
    for job in ("0", "4"):
        p = src / job / "result.json"
        data = json.loads(p.read_text())
        data["provenance"]["warmup"] = {"enabled": True, "calls": 7, "seconds": 1.0}
        p.write_text(json.dumps(data))
    a = analyse_folder(src)
    v = a.verdict("backend")
    assert v is not None
    n = of(BackendNumbers, v.numbers)
    assert n.cold is None
    assert n.ratio_range is not None
    assert n.ratio_range["vulkan"][1] == pytest.approx(1.605, abs=0.005)
    assert "stalled" in v.reasons
    assert study_warmup({"0": "on", "4": "on"}) == "on"
    assert study_warmup({"0": "on", "4": "off", "5": "unknown"}) == "mixed"
    assert study_warmup({"0": "unknown"}) is None


def test_a_verdict_with_cold_starts_keeps_their_seconds_in_the_ledger(tmp_path: Path) -> None:
    a = analyse_folder(_sweep(tmp_path))
    v = a.verdict("backend")
    assert v is not None
    kept = Light.keep(v.numbers)
    assert kept["cold_s"] == {"0": pytest.approx(20.3, abs=0.1)}
    assert Light.of(kept).cold_s == kept["cold_s"]


def test_the_energy_figures_leave_out_the_cold_starts_the_time_leaves_out(tmp_path: Path) -> None:
    """Rules v7: a mark applies to every figure drawn from the unit. J/unit leaves the cold
    start out at the power sampled during it, as seconds per unit do, and says so."""
    from benchkit.report.analysis.energy_numbers import cold_energy_j, job_rows
    from benchkit.report.writeup.energy import energy_view

    a = analyse_folder(_sweep(tmp_path))
    lines = energy_view(a, None, "en").get("lines") or []
    assert any("leaves out the cold starts" in str(x) and "job 0 (20.3 s)" in str(x) for x in lines)
    js = a.sweep.stalls["0"]
    cold = cold_energy_j(js)
    assert cold is not None and cold > 0
    row = next(r for r in job_rows(a.results, a.sweep.stalls) if r["job"] == "0")
    energy = float(str(row["energy_j"]))
    assert row["j_per_unit"] == pytest.approx((energy - cold) / js.units)
    measured = next(r for r in job_rows(a.results) if r["job"] == "0")
    assert float(str(measured["j_per_unit"])) > float(str(row["j_per_unit"]))


def test_reference_data_has_no_warm_up_state() -> None:
    """The seed study's transcribed results: benchkit did not measure them, so whether a
    warm-up preceded their passes is not known (the ledger had recorded 'off')."""
    from benchkit.paths import repo_root
    from benchkit.report.analysis.warmup import job_warmup
    from benchkit.results.store import find_results

    seed = find_results(repo_root() / "fixtures" / "results" / "seed-r9700")
    assert seed and all(job_warmup(r) == "unknown" for r in seed)


def test_overlapping_cold_starts_count_their_energy_once() -> None:
    """Six first calls of one wave waiting on one compile: the time they added is their
    union, and so is their energy (the H200 study's job 3 had 4.8 s of cold start left out of
    its time, and 18.9 s summed over its calls)."""
    from benchkit.report.analysis.energy_numbers import cold_energy_j
    from benchkit.report.analysis.stalls import JobStalls, Stall

    def stall(unit: str) -> Stall:
        return Stall(
            job="3", unit=unit, call=0, phase="prefill", seconds=5.0, tokens=100,
            per_token_s=0.05, median_per_token_s=0.001, times_median=50.0, excess_s=4.0,
            start_s=0.0, telemetry={"samples": 3, "gpu_busy": 0.02, "sm_clock_mhz": 500.0,
                                    "power_w": 150.0, "server_cores": 1.0},
            cold=True,
        )  # fmt: skip

    js = JobStalls(job="3", wall_s=60.0, units=8, stalls=[stall(f"u{i}") for i in range(6)])
    assert js.cold_excess_s < 6 * 4.0
    assert cold_energy_j(js) == pytest.approx(js.cold_excess_s * 150.0)


def test_a_decode_held_up_by_other_prompts_is_contention_not_a_stall() -> None:
    """Rules v12 (review 7, H200 Vulkan jobs 2 and 3): a call whose decoding waits while the
    server works on the prompts of a wave that arrived with it is slowed by contention; only
    the time its server did not spend on other prompts is charged to it. Sixteen one-slot
    calls decode 40 tokens in 0.8 s; a first call's 40 tokens take 6.8 s, 6 s of which the
    server spent on three other 2,000-token prompts (their windows cover it): no stall. The
    same 6.8 s with nothing else running is one."""
    calls = _calls(16)
    first = dict(calls[0])
    first["t_last"] = first["t_done"] = 0.1 + 6.8
    others = []
    for i in range(3):
        start = 0.1 + 2.0 * i
        others.append(
            {
                "unit": f"p{i}", "seq": 0, "ok": True, "t_sent": 0.0,
                "t_first": start + 2.0, "t_last": start + 2.05, "t_done": start + 2.05,
                "completion_tokens": 2,
                "timings": {"prompt_n": 2000, "prompt_ms": 2000.0,
                            "predicted_n": 1, "predicted_ms": 50.0},
            }
        )  # fmt: skip
    rest = calls[1:]
    for c in rest:
        for k in ("t_sent", "t_first", "t_last", "t_done"):
            c[k] = float(c[k]) + 7.0  # type: ignore[arg-type]
    held = find_stalls("j", [first, *others, *rest], wall_s=24.0, units=19, warmed=False)
    assert [s for s in held.stalls if s.phase == "decode"] == []
    alone = find_stalls("j", [first, *rest], wall_s=24.0, units=16, warmed=False)
    (s,) = [s for s in alone.stalls if s.phase == "decode"]
    assert s.cold and s.other_prompts_s == 0.0
    assert s.excess_s == pytest.approx(6.8 - 0.8)


def test_a_stalls_words_give_what_its_multiplier_is_of() -> None:
    """Review 8: "prefill of 994 tokens took 3.1 s, 4.61x the job's median rate" could not be
    checked from what it printed, the rate counting the other prompts in its window. The words
    now give those tokens, and seconds / (own + others) over the job's median is the multiple."""
    from benchkit.report.analysis import stall_words

    a = analyse_folder(
        Path(__file__).parents[4] / "docs" / "studies" / "h200-vulkan-vs-cuda" / "results"
    )
    (s,) = [s for s in a.sweep.stalls["3"].stalls if s.unit == "u004"]
    j = s.to_json()
    text = stall_words._one(j, "en")
    others = stall_words._other_prompt_tokens(j)
    assert f"with {round(others):,} tokens of other prompts in the same window" in text
    assert j["median_per_token_ms"] is not None and j["tokens"] is not None
    per_token_ms = 1000 * j["seconds"] / (j["tokens"] + others)
    assert per_token_ms / j["median_per_token_ms"] == pytest.approx(j["times_median"])

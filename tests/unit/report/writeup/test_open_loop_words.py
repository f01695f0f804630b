"""An open-loop sweep's words and figures (#45), on tables of known jobs: a title and question
from the load and the factors swept beside it, the one setting's capacity without an empty
name, the repeats, pace, stall and cap sentences that apply to loads held, and no figure of
seconds per unit against slots (the real sweep's whole report: tests/test_open_loop_report.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pandas as pd

from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis import rate_swing
from benchkit.report.analysis.caveats import sentence
from benchkit.report.analysis.stall_words import say_stalls
from benchkit.report.analysis.sweep import Sweep, build_sweep
from benchkit.report.verdicts.analyse import analyse
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kinds.capacity.words import (
    capacity_clause,
    capacity_sentence,
    capacity_value,
)
from benchkit.report.verdicts.kinds.repeats.verdict import repeats_verdict
from benchkit.report.verdicts.kinds.slots.figure import slots_figure
from benchkit.report.verdicts.sentences import repeats_sentence
from benchkit.report.writeup.render import _figures
from benchkit.report.writeup.titles import composed


def row(job: int, slots: int, rate: float, ttft: float) -> dict[str, Any]:
    return {
        "job": str(job),
        "status": "complete",
        "backend": "cpu",
        "slots": slots,
        "load": "poisson",
        "rate": rate,
        "ttft_ms_p50": ttft / 2,
        "ttft_ms_p95": ttft,
        "ttft_ms_p99": ttft * 1.1,
        "calls_failed": 0,
        "open_loop_ended": None,
        "open_loop_offered_rps": rate,
        "open_loop_achieved_rps": rate * 0.95,
        "open_loop_goodput_rps": rate * 0.9,
        "open_loop_goodput_tok_s": rate * 40,
        "output_tok_s": rate * 45,
        "seq_decode_tok_s": 100.0 / slots,
        "s_per_unit_throughput": 20.0,
        "s_per_unit_slot_latency": 30.0,
        "identity_problem": None,
    }


def sweep(rows: list[dict[str, Any]], slo: dict[str, float] | None = None) -> Sweep:
    planned = {
        "slots": sorted({r["slots"] for r in rows}),
        "rate": sorted({r["rate"] for r in rows}),
    }
    return build_sweep(
        pd.DataFrame(rows),
        ["backend", "slots", "load", "rate"],
        {k: v for k, v in planned.items() if len(v) > 1},
        objective=ev.objective_of("throughput", slo or {}),
    )


def analysed(sw: Sweep) -> Analysed:
    return cast(
        Analysed, SimpleNamespace(results=[], sweep=sw, df=sw.df, verdicts=analyse(sw, 100))
    )


ONE_SETTING = [row(0, 2, 1.0, 200), row(1, 2, 4.0, 400)]
TWO_SLOTS = [*ONE_SETTING, row(2, 4, 1.0, 150), row(3, 4, 4.0, 300)]


def test_the_title_and_question_follow_the_load_and_the_factors_beside_it() -> None:
    assert composed(analysed(sweep(ONE_SETTING)), "en") == (
        "a model on the CPU: open-loop load",
        "How much load does this setting keep up with for this workload?",
    )
    slo = {"ttft_ms_p95": 1000.0}
    assert composed(analysed(sweep(ONE_SETTING, slo)), "en")[1] == (
        "How much load does this setting hold under the SLO for this workload?"
    )
    assert composed(analysed(sweep(TWO_SLOTS, slo)), "en") == (
        "a model on the CPU: parallel slots under open-loop load",
        "How do parallel slots change the most load held under the SLO for this workload?",
    )
    title, question = composed(analysed(sweep(TWO_SLOTS)), "ko")
    assert title.endswith("개방 루프 부하에서의 동시 슬롯") and question.endswith("달라질까요?")


def test_one_settings_capacity_is_said_without_an_empty_name() -> None:
    a = analysed(sweep(ONE_SETTING))
    v = next(v for v in a.verdicts if v.factor == "capacity")
    assert capacity_value(v, "en").startswith("at least 4.00 calls/s offered")
    assert "The setting measured holds at least 4.00 calls/s offered" in capacity_sentence(v, "en")
    # Two settings holding the same load: each named.
    two = next(v for v in analysed(sweep(TWO_SLOTS)).verdicts if v.factor == "capacity")
    assert capacity_value(two, "en").startswith("2 slots / 4 slots: at least")


def test_no_setting_holding_a_load_is_said_not_left_as_no_verdict() -> None:
    """The CPU sweep whose every load broke its bound read 'No verdict: no planned point has
    a complete result yet' above 'Every planned point finished (4)', and 'Capacity: –'."""
    broke = [row(0, 2, 1.0, 5000), row(1, 2, 4.0, 9000), row(2, 4, 1.0, 5000)]
    v = next(v for v in analysed(sweep(broke, {"ttft_ms_p95": 1000.0})).verdicts)
    assert v.factor == "capacity" and v.verdict is None
    assert capacity_value(v, "en") == capacity_clause(v, "en") == "no setting held any load tried"


def test_repeats_under_open_loop_load_speak_of_loads_held_not_units_compared() -> None:
    said = repeats_sentence(repeats_verdict(sweep(ONE_SETTING)), "en", 0.05)
    assert said == (
        "Each point ran once: whether a load held rests on its one pass, and a load whose SLO "
        "figures came within 5% of a limit leaves the capacity verdict provisional."
    )


def test_the_pace_stall_and_cap_caveats_say_how_the_capacity_takes_them() -> None:
    rows = [{**row(0, 2, 1.0, 200), "itl_ms_p50": 10.0, "itl_ms_p99": 80.0}]
    (swing,) = rate_swing.detect(rows, ["rate"], 4.0, open_loop=True)
    assert rate_swing.say(swing, "en").endswith(
        "The capacity verdict judges each load by its pass's percentiles against the SLO, such "
        "slow calls included."
    )
    (closed,) = rate_swing.detect(rows, ["rate"], 4.0, open_loop=False)
    assert "verdicts use per-unit seconds" in rate_swing.say(closed, "en")
    stall = {"kind": "stall", "open_loop": True, "jobs": []}
    assert "a capacity resting on a job whose stalls, cold starts included" in say_stalls(
        stall, "en"
    )
    cap = {"kind": "cap", "jobs": 1, "calls": 1, "max_share": None, "over": [], "common": []}
    assert "hold" in sentence({**cap, "open_loop": True}, "en")
    assert "one unit much slower" in sentence(cap, "en")


def test_no_figure_of_seconds_per_unit_against_slots_under_open_loop_load(tmp_path: Path) -> None:
    figs = _figures(analysed(sweep(TWO_SLOTS)), None, tmp_path, "en")
    assert "slots" not in figs and not (tmp_path / "slots.png").exists()
    assert {"capacity", "pareto"} <= set(figs)
    # Nothing to draw is no figure, whatever the load: an empty slots.png said nothing.
    empty = pd.DataFrame([{**row(0, 2, 1.0, 200), "s_per_unit_throughput": None}])
    assert slots_figure(empty, tmp_path, "en") is None

"""The capacity verdict's rules on a table of known jobs: a load holds only when its pass
ended by itself, no call failed and the SLO was met; a setting's capacity is bracketed only by
a higher load that broke it; a margin inside the noise keeps the verdict provisional."""

from __future__ import annotations

from typing import Any

import pandas as pd

from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.numbers import CapacityNumbers, of
from benchkit.report.analysis.sweep import build_sweep
from benchkit.report.verdicts.kinds.capacity.verdict import capacity_verdict, next_loads

SLO = {"ttft_ms_p95": 1000.0}


def row(job: int, slots: int, rate: float, ttft: float, ended: str | None = None) -> dict[str, Any]:
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
        "open_loop_ended": ended,
        "open_loop_offered_rps": rate,
        "open_loop_achieved_rps": rate * 0.95,
        "open_loop_goodput_rps": rate * 0.9,
        "open_loop_goodput_tok_s": rate * 40,
        "output_tok_s": rate * 45,
        "seq_decode_tok_s": 100.0 / slots,
        "identity_problem": None,
    }


def verdict(rows: list[dict[str, Any]], noise: float | None = None) -> Any:
    df = pd.DataFrame(rows)
    sw = build_sweep(
        df,
        ["backend", "slots", "load", "rate"],
        {"slots": [1, 2], "rate": [1.0, 2.0, 4.0]},
        objective=ev.objective_of("throughput", SLO),
        noise=noise,
    )
    return capacity_verdict(sw)


def test_the_setting_that_holds_the_most_load_and_each_capacity() -> None:
    v = verdict(
        [
            row(0, 1, 1.0, 200),
            row(1, 1, 2.0, 400),
            row(2, 1, 4.0, 5000),  # over the SLO: 1 slot's capacity is 2, bracketed
            row(3, 2, 1.0, 150),
            row(4, 2, 2.0, 300),
            row(5, 2, 4.0, 500),  # held at the highest load tried: at least 4
        ]
    )
    n = of(CapacityNumbers, v.numbers)
    by = {s["setting"]["slots"]: s for s in n.settings or []}
    assert v.verdict == {"slots": 2} and v.point == {"slots": 2, "rate": 4.0}
    assert by[1]["capacity"] == 2.0 and by[1]["bracketed"]
    assert by[2]["capacity"] == 4.0 and not by[2]["bracketed"]
    assert v.status == "provisional" and "not_bracketed" in v.reasons
    assert n.runner_up == {"slots": 1}


def test_an_overloaded_pass_never_holds_even_when_its_finished_calls_were_fast() -> None:
    v = verdict(
        [
            row(0, 1, 1.0, 200),
            row(1, 1, 2.0, 300, ended="max_in_flight"),
            row(2, 1, 4.0, 300, ended="max_in_flight"),
            row(3, 2, 1.0, 200),
            row(4, 2, 2.0, 300),
            row(5, 2, 4.0, 3000),
        ]
    )
    n = of(CapacityNumbers, v.numbers)
    by = {s["setting"]["slots"]: s for s in n.settings or []}
    assert by[1]["capacity"] == 1.0 and by[1]["bracketed"]
    assert [r["held"] for r in by[1]["rows"]] == [True, False, False]
    assert v.verdict == {"slots": 2} and v.status == "complete", v.reasons


def test_a_capacity_within_the_noise_of_the_limit_is_provisional() -> None:
    rows = [
        row(0, 1, 1.0, 200),
        row(1, 1, 2.0, 980),  # held, but 2% under the limit: inside a 10% noise
        row(2, 1, 4.0, 5000),
        row(3, 2, 1.0, 200),
        row(4, 2, 2.0, 3000),
        row(5, 2, 4.0, 6000),
    ]
    v = verdict(rows, noise=0.1)
    assert v.verdict == {"slots": 1} and "capacity_marginal" in v.reasons
    assert verdict(rows, noise=0.01).status == "complete"


def test_no_capacity_where_the_lowest_load_already_broke_the_slo() -> None:
    v = verdict([row(i, s, r, 5000) for i, (s, r) in enumerate([(1, 1.0), (2, 1.0)])])
    assert v.verdict is None and v.status == "provisional"
    n = of(CapacityNumbers, v.numbers)
    assert all(s["below_lowest"] and s["capacity"] is None for s in n.settings or [])
    assert "capacity_tie" not in v.reasons


def test_the_next_loads_bisect_each_capacity_until_it_is_bracketed_closely() -> None:
    v = verdict(
        [
            row(0, 1, 1.0, 200),
            row(1, 1, 2.0, 400),
            row(2, 1, 4.0, 5000),  # bracketed by 2 and 4: halfway (geometric) is 2.83
            row(3, 2, 1.0, 150),
            row(4, 2, 2.0, 300),
            row(5, 2, 4.0, 500),  # held at the highest tried: twice it
        ]
    )
    assert next_loads(of(CapacityNumbers, v.numbers)) == [2.83, 8.0]
    below = verdict([row(i, s, 1.0, 5000) for i, s in enumerate((1, 2))])
    assert next_loads(of(CapacityNumbers, below.numbers)) == [0.5]
    close = verdict(
        [row(0, 1, 1.0, 200), row(1, 1, 1.2, 5000), row(2, 2, 1.0, 200), row(3, 2, 1.2, 5000)]
    )
    assert next_loads(of(CapacityNumbers, close.numbers)) == []  # 1.2 / 1.0 <= BRACKET


def test_a_capacity_is_stated_as_the_rate_the_schedule_offered_with_the_achieved_beside_it() -> (
    None
):
    # The CPU finding: a short seeded schedule at load.rate=6.4 offered 4.02 calls/s and the
    # server achieved 2.96/s; the capacity was stated as "at least 6.4 calls/s".
    from benchkit.report.verdicts.kinds.capacity.words import capacity_text

    rows = [row(0, 1, 1.0, 200), row(1, 1, 2.0, 300), row(2, 1, 4.0, 400)]
    rows[2].update(open_loop_offered_rps=4.02 / 1.6, open_loop_achieved_rps=2.96 / 1.6)
    n = of(CapacityNumbers, verdict(rows).numbers)
    (s,) = n.settings or []
    text = capacity_text(s, "rate", "en")
    assert text == "at least 2.51 calls/s offered (1.85 calls/s achieved; load.rate=4)"
    assert "4 calls/s offered" not in text

"""Open-loop load, for real: `python -m benchkit -m load=poisson load.rate=... slots=1,2`
against real llama-server (the CPU build and the synthetic model benchkit writes), then the
report's capacity per setting.

Three rates, the highest far past what two cores serve: ten calls arriving within a fifth of
a second queue in the server, so time to first token must grow there, whatever this machine's
speed. Kept short (ten calls a point) for CI's two cores.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_sweep_integration import results_of, run_benchkit

RATES = (2.0, 8.0, 64.0)


@pytest.mark.slow
def test_real_rate_sweep_over_two_slot_counts(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m",
        "load=poisson",
        f"load.rate={','.join(str(r) for r in RATES)}",
        "load.requests=10",
        "slots=1,2",
        "workload=first",
        "+study.slo.ttft_ms_p95=1500",
        "quality.probe=false",
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert len(results) == 6
    by: dict[tuple[int, float], dict[str, object]] = {}
    for res in results.values():
        assert res["status"] == "complete", res["reason"]
        f, m = res["factors"], res["metrics"]
        assert f["load"] == "poisson" and f["rate"] in RATES
        ol = m["open_loop"]
        # Offered and achieved rates recorded, every arrival sent, each call on the clock of
        # its schedule (the calls file says when each was due).
        assert ol["offered_rps"] == f["rate"] and ol["achieved_rps"] > 0
        assert ol["arrivals_planned"] == 10 and ol["calls_unfinished"] == 0
        assert ol["arrivals_sent"] == 10 and ol["ended"] is None
        assert m["calls_completed"] == 10 and m["calls_failed"] == 0
        assert ol["slo_per_call"] == "ttft_ms <= 1500" and ol["calls_met_slo"] is not None
        assert m["e2e_ms"]["p95"] >= m["ttft_ms"]["p95"]
        job = next(n for n, r in results.items() if r is res)
        calls = [json.loads(x) for x in (sweep / str(job) / "calls.jsonl").read_text().split("\n")
                 if x]  # fmt: skip
        assert len(calls) == 10 and all(c["t_sent"] >= c["t_scheduled"] for c in calls)
        by[(int(f["slots"]), float(f["rate"]))] = m
        if f["rate"] == RATES[-1]:
            _queued_calls_wait_for_a_slot(calls, int(f["slots"]), ol)
    # The report names each setting's capacity under the SLO.
    md = (sweep / "report" / "report.md").read_text()
    section = md.split("## Capacity under the SLO (open-loop load)", 1)[1].split("\n## ", 1)[0]
    assert "ttft\\_ms\\_p95 \\<= 1500" in section
    for name in ("1 slot", "2 slots"):
        line = next(x for x in section.splitlines() if x.startswith(f"| {name} |") or
                    x.startswith(f"| **{name}** |"))  # fmt: skip
        assert re.search(r"\| (at least |below )?\d[\d.,]* calls/s", line), line
    verdicts = json.loads((sweep / "report" / "verdicts.json").read_text())
    cap = next(v for v in verdicts if v["factor"] == "capacity")
    settings = cap["numbers"]["settings"]
    assert sorted(s["setting"]["slots"] for s in settings) == [1, 2]
    assert all(len(s["rows"]) == 3 for s in settings)
    assert (sweep / "report" / "capacity.png").stat().st_size > 0
    assert (sweep / "report" / "pareto.png").stat().st_size > 0
    summary = (sweep / "report" / "summary.txt").read_text()
    assert "capacity under the SLO" in summary


def _queued_calls_wait_for_a_slot(
    calls: list[dict[str, Any]], slots: int, ol: dict[str, Any]
) -> None:
    """Past what the server holds, the wait shows in time to first token, within one job
    (comparing the p95 of two jobs instead, as this test did, is a comparison of two runs that
    a busy machine inverted: 5.5 s against 8.5 s, issue #42). Ten arrivals within a fifth of a
    second outnumber the slots, so calls queue; each call sent while every slot was busy got
    its first token only after one of the calls holding them ended, and the client's time to
    first token counts that wait."""
    assert ol["peak_in_flight"] > slots, ol
    queued = 0
    for c in calls:
        busy = [o for o in calls if o is not c and o["t_sent"] <= c["t_sent"] < o["t_done"]]
        if len(busy) < slots:
            continue
        queued += 1
        freed = min(o["t_done"] for o in busy)
        # The slot's last event and the queued call's first come on two connections: a few
        # milliseconds either way between their receive times, never a whole prefill.
        # Its time to first token (t_first - t_sent, benchkit.measure.calls) holds that wait.
        assert c["t_first"] >= freed - 0.02, (c, freed)
    assert queued > 0


@pytest.mark.slow
def test_real_capacity_search_bisects_the_rate_and_reuses_what_it_measured(
    tmp_path: Path,
) -> None:
    sweep = tmp_path / "search"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit.search", "--rounds", "2",
         "load=poisson", "load.rate=4,64", "load.requests=8", "slots=1", "workload=first",
         "+study.slo.ttft_ms_p95=300", "quality.probe=false", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1800, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in sweep.iterdir()) == ["round-1", "round-2"]
    sweep = sweep / "round-2"  # the last round's folder holds every load tried
    results = list(results_of(sweep).values())
    rates = sorted({float(r["factors"]["rate"]) for r in results})
    # Round 2 added one load: halfway between held and broken (16), or twice the highest
    # held (128), or half the lowest broken (2), whichever this machine's capacity called for.
    assert len(rates) == 3 and {4.0, 64.0} < set(rates), rates
    assert set(rates) - {4.0, 64.0} <= {2.0, 16.0, 128.0}
    # Round 1's two points were reused, not measured again.
    reused = [r for r in results if r["provenance"].get("reused_from")]
    assert len(reused) == 2, [r["provenance"].get("reused_from") for r in results]
    assert "search: round 2 of at most 2" in proc.stderr
    verdicts = json.loads((sweep / "report" / "verdicts.json").read_text())
    cap = next(v for v in verdicts if v["factor"] == "capacity")
    assert [r["load"] for r in cap["numbers"]["settings"][0]["rows"]] == rates

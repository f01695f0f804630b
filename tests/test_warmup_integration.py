"""The warm-up before a timed pass, against a real CPU llama-server: it runs, it is recorded,
and it is in no figure (the server's own counters match the timed calls exactly)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.report.analysis.stalls import RATIO, job_stalls
from benchkit.workload import load_workload


@pytest.mark.slow
def test_warmup_is_recorded_and_left_out_of_every_figure(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit", "slots=2", "workload.units=3", "quality.probe=false",
         f"hydra.run.dir={run}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1200, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((run / "result.json").read_text())
    assert res["status"] == "complete", res["reason"]
    warm = res["provenance"]["warmup"]
    assert warm["enabled"] is True and warm["error"] is None
    # Every prompt shape one at a time, then 1 and 2 concurrent generations.
    assert warm["batch_sizes"] == [1, 2]
    assert warm["calls"] == len(warm["prompt_lengths"]) + 1 + 2
    assert 512 in warm["prompt_lengths"] and 520 in warm["prompt_lengths"]  # -ub and a tail
    assert warm["seconds"] > 0 and warm["seconds_by_pass"] == [warm["seconds"]]

    # Only the workload's calls were timed and recorded.
    fixture = load_workload("mini")
    units = fixture.units[:3]
    calls = [json.loads(x) for x in (run / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == sum(len(u.calls) for u in units)
    m = res["metrics"]
    # The server's counters are the pass's own: the warm-up's prompt and generated tokens
    # were taken out, so they equal what the timed calls' own timings add up to.
    server = m["server"]
    assert server["prompt_tokens"] == m["prompt_tokens_evaluated"]
    assert server["tokens_predicted"] == m["completion_tokens"]
    assert 1.0 <= m["seqs_per_step"] <= 2.0 and m["server_steps_per_s"] > 0

    # The first timed call ran at the job's normal prompt rate: it is no prefill stall, and
    # its time per prompt token is within RATIO of the job's median. (Other calls may stall
    # on a machine busy with other work: the rule names those, and this test does not ask
    # the machine to be idle.)
    stalls = job_stalls("run", run, m["wall_s"], m["units_completed"], "calls.jsonl")
    assert stalls is not None
    # calls.jsonl is in the order calls finished; the first timed call is the first sent.
    first = min(calls, key=lambda c: c["t_sent"])
    first_key = (first["unit"], first["seq"])
    assert first_key not in {(s.unit, s.call) for s in stalls.stalls if s.phase == "prefill"}
    rate = [
        c["timings"]["prompt_ms"] / c["timings"]["prompt_n"]
        for c in calls
        if c["timings"].get("prompt_n", 0) >= 64
    ]
    first_rate = first["timings"]["prompt_ms"] / first["timings"]["prompt_n"]
    assert first_rate <= RATIO * statistics.median(rate)
    # The pass's clock starts at its first request.
    assert m["wall_s"] == pytest.approx(
        max(c["t_done"] for c in calls) - min(c["t_sent"] for c in calls), abs=1e-6
    )


@pytest.mark.slow
def test_warmup_can_be_turned_off(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit", "slots=1", "workload.units=1", "quality.probe=false",
         "replay.warmup=false", f"hydra.run.dir={run}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1200, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((run / "result.json").read_text())
    assert res["provenance"]["warmup"]["enabled"] is False
    assert res["provenance"]["warmup"]["calls"] == 0

"""A job measured in two runs (benchkit.job.extend): the earlier run's telemetry and counters
joined to the extension's, a partial sampler's figures left out of the report, and the
earlier run's files put back when its extension is cut.

The arithmetic only (the real-server proof is tests/test_racing_integration.py, which checks
the joined counters against the calls of both runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchkit.client.replay import CallRecord
from benchkit.job.extend import Kept, carry_finished, earlier_counters, earlier_pass
from benchkit.measure.telemetry import covers, drop_partial, is_partial, summarise
from benchkit.racing.extend import Prior
from benchkit.server.metrics import ServerCounters, plus


def _calls(spans: list[tuple[str, float, float]]) -> list[CallRecord]:
    return [
        CallRecord(repeat=0, unit=u, seq=i, role="ask", worker=0, t_sent=a, t_done=b, ok=True)
        for i, (u, a, b) in enumerate(spans)
    ]


def _samples(path: Path, ts: list[float], power: float = 200.0, cpu0: float = 0.0) -> None:
    rows = [
        {"pass": 0, "t": t, "power_w": power, "gpu_util": 50.0, "server_cpu_s": cpu0 + t}
        for t in ts
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _complete(window: float, wall: float, **extra: Any) -> dict[str, Any]:
    return {
        "status": "complete",
        "provenance": extra.pop("provenance", {}),
        "metrics": {
            "wall_s": wall,
            "energy_j": 1000.0,
            "server_cpu_share": 1.0,
            "server_busiest_thread_share": 0.9,
            "telemetry": {"window_s": window, "samples": 5, "energy_basis": "counter"},
            **extra,
        },
    }


def test_counters_of_two_runs_add_up() -> None:
    a: ServerCounters = {
        "prompt_tokens": 100, "tokens_predicted": 40, "n_decode": 10,
        "busy_slots_per_decode": 2.0, "n_tokens_max": 300,
        "draft_tokens": 20, "draft_tokens_accepted": 5, "draft_steps": 10,
        "draft_accepted_by_position": [4, 1],
    }  # fmt: skip
    b: ServerCounters = {
        "prompt_tokens": 50, "tokens_predicted": 60, "n_decode": 30,
        "busy_slots_per_decode": 4.0, "n_tokens_max": 200,
        "draft_tokens": 30, "draft_tokens_accepted": 15, "draft_steps": 15,
        "draft_accepted_by_position": [10, 4, 1],
    }  # fmt: skip
    c = plus(a, b)
    assert c is not None
    assert c["prompt_tokens"] == 150 and c["tokens_predicted"] == 100 and c["n_decode"] == 40
    # Weighted by decode steps: (2 x 10 + 4 x 30) / 40.
    assert c["busy_slots_per_decode"] == 3.5
    assert c["n_tokens_max"] == 300
    assert c["draft_acceptance"] == 20 / 50
    assert c["draft_accepted_by_position"] == [14, 5, 1]
    # Half a job's counters are not the job's.
    assert plus(None, b) is None and plus(a, None) is None


def test_a_complete_earlier_run_is_one_pass_of_the_job(tmp_path: Path) -> None:
    _samples(tmp_path / "telemetry.jsonl", [0.0, 2.0, 4.0, 6.0, 8.0])
    prior = Prior(_complete(10.0, 10.0), _calls([("u0", 0.1, 9.9)]), ["u0"], 10.0, 9.9)
    p = earlier_pass(prior, tmp_path)
    assert p is not None
    assert p.seconds == 10.0 and p.energy_j == 1000.0 and p.energy_basis == "counter"
    assert p.server_cpu_s == 10.0 and p.server_busiest_thread_s == 9.0
    assert len(p.samples) == 5 and "pass" not in p.samples[0]
    # Joined with a second run of 5 s and 400 J: the job's energy over its 3 units.
    later = earlier_pass(
        Prior(_complete(5.0, 5.0), _calls([("u1", 0.0, 5.0)]), ["u1"], 5.0, 5.0), tmp_path
    )
    assert later is not None
    later.energy_j = 400.0
    m = summarise([p, later], 3, None, None, 0.2)
    assert m["energy_j"] == 1400.0 and m["j_per_unit"] == 1400.0 / 3
    assert m["telemetry"]["window_s"] == 15.0


def test_an_earlier_run_that_saw_part_of_its_job_is_not_carried(tmp_path: Path) -> None:
    # An older benchkit's extension: its sampler saw the last 4 s of a 10 s job.
    _samples(tmp_path / "telemetry.jsonl", [6.0, 8.0])
    data = _complete(
        4.0, 10.0, provenance={"extended": [{"units": ["u0"]}]}, server={"n_decode": 5}
    )
    prior = Prior(data, _calls([("u0", 0.0, 10.0)]), ["u0"], 10.0, 10.0)
    assert earlier_pass(prior, tmp_path) is None
    assert earlier_counters(prior) is None
    assert not covers(4.0, 10.0) and covers(9.6, 10.0)


def test_a_run_cut_in_a_unit_keeps_its_kept_units_span(tmp_path: Path) -> None:
    # Units u0 (0-4 s) and u1 (4-8 s) ended; u2 was cut at 9.5 s. Power 200 W throughout.
    _samples(tmp_path / "telemetry.jsonl", [0.0, 2.0, 4.0, 6.0, 8.0, 9.0])
    data = {"status": "incomplete", "metrics": {"server": {"n_decode": 9}}, "provenance": {}}
    prior = Prior(data, _calls([("u0", 0.0, 4.0), ("u1", 4.0, 8.0)]), ["u0", "u1"], 8.0, 8.0)
    p = earlier_pass(prior, tmp_path)
    assert p is not None
    assert p.seconds == 8.0 and p.energy_basis == "power_integral"
    assert p.energy_j == 1600.0  # 200 W over the kept 8 s, not the cut unit's
    assert p.server_cpu_s == 8.0 and p.server_busiest_thread_s is None
    assert [s["t"] for s in p.samples] == [0.0, 2.0, 4.0, 6.0, 8.0]
    # Its counters counted the cut unit's tokens too.
    assert earlier_counters(prior) is None
    # An unknown busiest thread leaves the job's share unknown, not understated.
    assert summarise([p], 2, None, None, 0.2)["server_busiest_thread_share"] is None


def test_a_job_finished_from_its_calls_keeps_its_run_s_figures() -> None:
    old = _complete(10.0, 10.0, server={"n_decode": 5}, seqs_per_step=1.0)
    old["provenance"] = {
        "model": {"path": "/m/x.gguf", "file_bytes": 7},
        "server": {"argv": ["llama-server"]},
        "warmup": {"calls": 3},
    }
    prior = Prior(old, _calls([("u0", 0.0, 10.0)]), ["u0"], 10.0, 10.0)
    result: dict[str, Any] = {
        "provenance": {"model": {"name": "m", "path": None, "file_bytes": None}},
        "metrics": {"wall_s": 10.0},
    }
    keys = carry_finished(result, prior)
    assert "energy_j" in keys and "server" in keys
    assert result["metrics"]["energy_j"] == 1000.0 and result["metrics"]["server"] == {
        "n_decode": 5
    }
    assert result["provenance"]["model"] == {"name": "m", "path": "/m/x.gguf", "file_bytes": 7}
    assert result["provenance"]["warmup"] == {"calls": 3}
    # A run that recorded no telemetry over its pass gives none.
    bare = Prior({"status": "incomplete", "metrics": {}, "provenance": {}}, [], ["u0"], 1.0, 1.0)
    assert carry_finished({"provenance": {}, "metrics": {}}, bare) == []


def test_a_partial_sampler_s_figures_are_left_out_when_read() -> None:
    data: dict[str, object] = {
        "provenance": {"extended": [{"units": ["u0"]}, {"units": ["u1"]}]},
        "metrics": {
            "wall_s": 39.0,
            "energy_j": 3629.0,
            "j_per_unit": 726.0,
            "gpu_busy_share": 0.5,
            "power_w": {"mean": 215.0, "max": 300.0},
            "seqs_per_step": 1.9,
            "server": {"n_decode": 10},
            "telemetry": {"window_s": 16.9, "samples": 80},
        },
    }
    assert is_partial(data["metrics"])
    m = drop_partial(data)["metrics"]
    assert isinstance(m, dict)
    assert m["energy_j"] is None and m["j_per_unit"] is None and m["gpu_busy_share"] is None
    assert m["power_w"] == {"mean": None, "max": None}
    assert m["seqs_per_step"] is None and m["server"] is None
    assert m["wall_s"] == 39.0  # the calls' own figures stay
    # A sampler that saw the whole pass, or nothing at all, changes nothing.
    whole = {
        "metrics": {"wall_s": 10.0, "energy_j": 1.0, "telemetry": {"window_s": 10.1, "samples": 5}}
    }
    assert drop_partial(whole) is whole
    none = {"metrics": {"wall_s": 10.0, "telemetry": {"window_s": 0.0, "samples": 0}}}
    assert drop_partial(none) is none


def test_kept_files_come_back_as_they_were(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text("{}")
    (tmp_path / "calls.jsonl").write_text("a\n")
    kept = Kept.take(tmp_path)
    (tmp_path / "calls.jsonl").write_text("a\nb\n")
    (tmp_path / "telemetry.jsonl").write_text("x\n")
    kept.restore(tmp_path)
    assert (tmp_path / "calls.jsonl").read_text() == "a\n"
    assert not (tmp_path / "telemetry.jsonl").exists()
    assert (tmp_path / "result.json").read_text() == "{}"

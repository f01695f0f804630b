"""Open-loop load: the arrival processes, the goodput arithmetic, and the open-loop client's
bookkeeping against the scripted server (bench/scripted_server.py: a server whose timing is
known, for the timing arithmetic only; the real llama-server proof is
tests/test_load_integration.py). How close to schedule the client sends is measured in
bench/openloop.py, not asserted here."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchkit.client.replay import CallRecord, OpenLoopPass, RecordSink
from benchkit.config.schema import LoadConfig, LoadProcess, OutputPolicy
from benchkit.errors import UserError
from benchkit.load.arrivals import (
    calls_for,
    constant_offsets,
    poisson_offsets,
    schedule,
    trace_offsets,
)
from benchkit.load.measure import meets, open_loop_metrics, per_call_limits
from benchkit.load.openloop import ENDED_IN_FLIGHT, OpenLoopReplayer, calls_text
from benchkit.server.plan import ReplaySpec
from benchkit.workload import load_workload

REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------- arrivals


def test_poisson_schedule_is_reproducible_and_has_the_rate_asked() -> None:
    a = poisson_offsets(4.0, 20_000, seed=7)
    assert a == poisson_offsets(4.0, 20_000, seed=7)
    assert a != poisson_offsets(4.0, 20_000, seed=8)
    assert a[0] == 0.0 and all(y > x for x, y in itertools.pairwise(a))
    # 19,999 exponential gaps of mean 0.25 s: their mean is within 2% of it (the seed fixes
    # the draw, so this is arithmetic on one known sample, not a chance).
    assert (a[-1] / (len(a) - 1)) == pytest.approx(0.25, rel=0.02)


def test_constant_and_trace_schedules() -> None:
    assert constant_offsets(4.0, 5) == [0.0, 0.25, 0.5, 0.75, 1.0]
    # A trace replayed twice as fast keeps its shape at half the gaps, from its first arrival.
    assert trace_offsets([10.0, 11.0, 14.0], 2.0) == [0.0, 0.5, 2.0]


def test_calls_go_round_the_workload_when_more_arrivals_are_asked() -> None:
    w = load_workload("first")
    calls = calls_for(w, None, w.n_calls + 3)
    assert len(calls) == w.n_calls + 3
    assert calls[w.n_calls :] == list(w.calls[:3])


def test_a_schedule_that_cannot_be_made_is_one_sentence_naming_the_fix() -> None:
    w = load_workload("first")
    with pytest.raises(UserError, match=r"load\.rate="):
        schedule(LoadConfig(process=LoadProcess.poisson, rate=None), w)
    with pytest.raises(UserError, match="recorded arrival times"):
        schedule(LoadConfig(process=LoadProcess.trace), w)
    s = schedule(LoadConfig(process=LoadProcess.constant, rate=2.0, requests=4), w)
    assert s.offsets == (0.0, 0.5, 1.0, 1.5) and s.offered_rps == 2.0


def test_a_recorded_trace_offers_its_own_rate_scaled_by_speed(tmp_path: Path) -> None:
    src = load_workload("first").path
    (tmp_path / "fixture.json").write_text((src / "fixture.json").read_text())
    lines = (src / "calls.jsonl").read_text().splitlines()[:5]
    # Arrivals 1 s apart, written out of order in the file (pipeline order differs).
    stamped = [json.dumps({**json.loads(x), "arrival_s": 4.0 - i}) for i, x in enumerate(lines)]
    (tmp_path / "calls.jsonl").write_text("\n".join(stamped) + "\n")
    w = load_workload(tmp_path)
    s = schedule(LoadConfig(process=LoadProcess.trace, speed=2.0), w)
    assert s.offsets == (0.0, 0.5, 1.0, 1.5, 2.0)
    assert s.offered_rps == pytest.approx(2.0)  # 4 gaps over 2 s
    assert [c.arrival_s for c in s.calls] == [0.0, 1.0, 2.0, 3.0, 4.0]


# --------------------------------------------------------------------------- goodput


def rec(t_sent: float, ttft: float, e2e: float, tokens: int = 11, **kw: object) -> CallRecord:
    r = CallRecord(repeat=0, unit="u", seq=0, role="r", worker=0, t_sent=t_sent, **kw)  # type: ignore[arg-type]
    r.t_first, r.t_last, r.t_done = t_sent + ttft, t_sent + e2e, t_sent + e2e
    r.completion_tokens, r.ok, r.finish_reason = tokens, True, "stop"
    return r


def test_goodput_counts_the_calls_within_every_per_call_limit() -> None:
    limits = per_call_limits({"ttft_ms_p95": 500, "ttft_ms_p50": 300, "e2e_ms_p99": 2000})
    assert limits == {"ttft_ms": 300.0, "e2e_ms": 2000.0}  # the tightest of each metric
    good = rec(0.0, 0.2, 1.0)
    slow_first = rec(1.0, 0.4, 1.0)
    slow_end = rec(2.0, 0.1, 2.5)
    assert meets(good, limits) and not meets(slow_first, limits) and not meets(slow_end, limits)
    failed = rec(3.0, 0.1, 0.5)
    failed.ok = False
    cut = CallRecord(repeat=0, unit="u", seq=0, role="r", worker=1, t_sent=3.5, cut=True)
    p = OpenLoopPass("poisson", 2.0, 6, 5, 3, 64, "max_in_flight", 4.0)
    m = open_loop_metrics([good, slow_first, slow_end, failed, cut], p, 4.0, {"ttft_ms_p95": 300})
    assert m["calls_met_slo"] == 2  # good and slow_end (no e2e limit in this SLO)
    assert m["goodput_rps"] == pytest.approx(2 / 4.0)
    assert m["goodput_tok_s"] == pytest.approx(22 / 4.0)
    assert m["achieved_rps"] == pytest.approx(3 / 4.0)  # failed and cut calls did not complete
    assert m["calls_unfinished"] == 1 and m["ended"] == "max_in_flight"
    assert open_loop_metrics([good], p, 4.0, {})["goodput_rps"] is None  # no SLO: none


# --------------------------------------------------------------------------- the client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(url: str, body: dict[str, object]) -> None:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    urllib.request.urlopen(req, timeout=10).read()


@pytest.fixture
def scripted() -> Iterator[str]:
    port = _free_port()
    cmd = [sys.executable, str(REPO / "bench" / "scripted_server.py"), "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--alias", "scripted", "--slots", "64"])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _replayer(url: str, load: LoadConfig, path: Path, progress: bool = False) -> OpenLoopReplayer:
    w = load_workload("first")
    spec = ReplaySpec(
        workers=load.max_in_flight,
        output_policy=OutputPolicy.replay,
        cap=w.cap,
        sampling={},
        stall_timeout_s=30.0,
        job_deadline_s=None,
        units=None,
        repeats=1,
    )
    return OpenLoopReplayer(
        schedule=schedule(load, w),
        max_pass_s=load.max_pass_s,
        base_url=url,
        alias="scripted",
        spec=spec,
        workload=w,
        n_vocab=320,
        sink=RecordSink(path),
        progress=progress,
    )


def test_calls_are_sent_on_their_schedule_and_recorded_with_it(
    scripted: str, tmp_path: Path
) -> None:
    _post(scripted + "/_bench/script", {"ttft_ms": 20, "itl_ms": 1, "tokens": 4})
    load = LoadConfig(process=LoadProcess.constant, rate=20.0, requests=8)
    r = _replayer(scripted, load, tmp_path / "calls.jsonl")
    out = r.run()
    assert out.open_loop is not None and out.open_loop.ended is None
    assert out.open_loop.arrivals_sent == 8 and len(out.records) == 8
    assert all(x.ok and not x.cut for x in out.records)
    due = sorted(x.t_scheduled for x in out.records if x.t_scheduled is not None)
    # The schedule's gaps, exactly: each record carries the time it was due.
    assert [round(b - a, 9) for a, b in itertools.pairwise(due)] == [0.05] * 7
    # Never early: a call goes when it is due or after (how much after: bench/openloop.py).
    assert all(x.t_sent >= (x.t_scheduled or 0.0) for x in out.records)
    lines = [json.loads(x) for x in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert all("t_scheduled" in x and "cut" not in x for x in lines)


def test_an_overloaded_pass_ends_at_its_bound_and_its_stopped_calls_are_not_failures(
    scripted: str, tmp_path: Path
) -> None:
    # Every call takes about 2 s; 20 calls/s with at most 3 in flight cannot hold.
    _post(scripted + "/_bench/script", {"ttft_ms": 2000, "itl_ms": 1, "tokens": 4})
    load = LoadConfig(process=LoadProcess.constant, rate=20.0, requests=50, max_in_flight=3)
    out = _replayer(scripted, load, tmp_path / "calls.jsonl").run()
    assert out.open_loop is not None and out.open_loop.ended == ENDED_IN_FLIGHT
    assert out.open_loop.arrivals_sent == 3 and out.open_loop.peak_in_flight == 3
    assert len(out.records) == 3 and all(x.cut and not x.ok for x in out.records)
    assert all("load.max_in_flight" in (x.error or "") for x in out.records)
    assert out.interrupted is None  # ended by its bound, not interrupted


def _rec(ok: bool, cut: bool = False) -> CallRecord:
    return CallRecord(repeat=0, unit="u0", seq=0, role="r", worker=0, t_sent=0.0, ok=ok, cut=cut)


def test_the_progress_line_counts_cut_calls_apart_from_finished_ones() -> None:
    """Issue #45: the open-loop line said `calls 5` for 2 finished calls and 3 the pass cut
    at its bound; a cut call is neither finished nor failed."""
    records = [_rec(True), _rec(True), _rec(False), *[_rec(False, cut=True) for _ in range(3)]]
    assert calls_text(records) == "2 done, 1 failed, 3 cut"
    assert calls_text([_rec(True)] * 4) == "4 done"
    assert calls_text([_rec(False, cut=True)] * 2) == "0 done, 2 cut"
    assert calls_text([]) == "0 done"


def test_an_overloaded_pass_shows_its_stopped_calls_as_cut(
    scripted: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _post(scripted + "/_bench/script", {"ttft_ms": 2000, "itl_ms": 1, "tokens": 4})
    load = LoadConfig(process=LoadProcess.constant, rate=20.0, requests=50, max_in_flight=3)
    out = _replayer(scripted, load, tmp_path / "calls.jsonl", progress=True).run()
    assert out.open_loop is not None and out.open_loop.ended == ENDED_IN_FLIGHT
    last = capsys.readouterr().err.strip().split("\r")[-1]
    assert "arrivals 3/50" in last and "calls 0 done, 3 cut" in last, last

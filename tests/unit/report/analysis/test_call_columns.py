"""The calls read as columns (benchkit.report.analysis.call_columns) and the stall rules on arrays
(benchkit.report.analysis.stall_calls) give every figure the per-call loops gave, to the last bit:
the readers with columns against the same readers on the dicts, the array steps against the loops
they replace, and a call not as benchkit writes it refused as columns."""

from __future__ import annotations

import bisect
import json
import random
import statistics
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from benchkit.measure.calls import time_figures, union_length
from benchkit.report.analysis import call_columns, intervals, stall_calls, stalls
from benchkit.report.analysis.caps import job_caps
from benchkit.report.analysis.slot_use import windows_of
from benchkit.report.analysis.table import _time_figures, _Times
from benchkit.results.store import spans_of


def _calls(seed: int, n: int, slots: int, stall_at: int | None) -> list[dict[str, Any]]:
    """Calls as a replay writes them (bench/report_scale.py's), one of them stalled."""
    rng = random.Random(seed)
    out, t = [], 0.0
    for i in range(n):
        prompt_n, tokens = rng.randint(5, 3000), rng.randint(2, 128)
        prompt_ms = prompt_n * rng.uniform(0.3, 0.7) * (30 if i == stall_at else 1)
        sent = t if slots == 1 else t * rng.uniform(0.2, 0.9)
        first = sent + prompt_ms / 1000 + rng.uniform(0.0, 0.02)
        last = first + tokens * rng.uniform(0.008, 0.03) * (25 if i == stall_at else 1)
        t = last + 0.001
        out.append(
            {
                "ok": True, "t_sent": sent, "t_first": first, "t_last": last, "t_done": t,
                "completion_tokens": tokens, "prompt_tokens": prompt_n, "cap": 128,
                "finish_reason": rng.choice(["stop", "length"]), "unit": f"u{i // 6:03d}",
                "seq": i % 6, "repeat": 0, "role": "bench", "worker": i % slots,
                "timings": {
                    "prompt_ms": rng.choice([prompt_ms, prompt_ms, 0.0]), "prompt_n": prompt_n,
                    "predicted_n": tokens,
                },
            }
        )  # fmt: skip
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 80),
    st.sampled_from([1, 2, 4, 8]),
    st.one_of(st.none(), st.integers(0, 79)),
    st.sampled_from([None, False, True]),
)
def test_readers_read_the_same_from_columns(
    seed: int, n: int, slots: int, stall_at: int | None, warmed: bool | None
) -> None:
    calls = _calls(seed, n, slots, stall_at)
    cols = call_columns.columns_of(calls)
    assert cols is not None
    assert repr(job_caps("j", calls, None, cols)) == repr(job_caps("j", calls))
    assert call_columns.spans(cols) == spans_of(calls)
    assert call_columns.windows(cols) == windows_of(calls)
    got = stalls.find_stalls("j", calls, 30.0, 5, (), warmed, cols)
    assert repr(got) == repr(stalls.find_stalls("j", calls, 30.0, 5, (), warmed))
    times = [
        _Times(c["ok"], c["t_sent"], c["t_first"], c["t_last"], c["t_done"], c["completion_tokens"])
        for c in calls
    ]
    assert _time_figures(cols, 30.0) == time_figures(times, 30.0)


def test_a_stall_is_found_from_columns() -> None:
    calls = _calls(3, 60, 1, 20)
    cols = call_columns.columns_of(calls)
    found = stalls.find_stalls("j", calls, 30.0, 10, (), None, cols)
    assert found.stalls and {s.call for s in found.stalls} >= {2}


def test_calls_not_as_benchkit_writes_them_are_not_columns() -> None:
    def changed(change: Any) -> list[dict[str, Any]]:
        calls = _calls(1, 12, 2, None)
        change(calls[5])
        return calls

    assert call_columns.columns_of([]) is None
    for change in (
        lambda c: c.update(ok=False),
        lambda c: c.update(ok=1),
        lambda c: c.update(t_first=None),
        lambda c: c.update(t_sent=int(c["t_sent"])),
        lambda c: c.update(t_done=float("nan")),
        lambda c: c.update(timings=None),
        lambda c: c["timings"].pop("prompt_ms"),
        lambda c: c.pop("seq"),
        lambda c: c.update(seq=True),
        lambda c: c.update(unit=5),
        lambda c: c.update(cap="128"),
        lambda c: c.update(completion_tokens=2**60),
    ):
        assert call_columns.columns_of(changed(change)) is None
    # Calls of several passes are columns, but their units' windows are grouped by pass.
    calls = changed(lambda c: c.update(repeat=1))
    cols = call_columns.columns_of(calls)
    assert cols is not None and call_columns.windows(cols) is None


def _bytes(calls: list[dict[str, Any]], end: bytes = b"\n") -> bytes:
    return b"\n".join(json.dumps(c).encode() for c in calls) + end


def _same(a: call_columns.Columns, b: call_columns.Columns) -> bool:
    """Every column equal, to the bit for the floats and the type for the rest."""
    for f in a.__dataclass_fields__:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.tobytes() != y.tobytes():
                return False
        elif repr(x) != repr(y):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 80), st.sampled_from([b"\n", b"", b"\r\n"]))
def test_columns_from_bytes_as_from_the_dicts(seed: int, n: int, end: bytes) -> None:
    calls = _calls(seed, n, 3, None)
    for c in calls[::7]:
        c["extra"] = {"nested": [1, None, "x"]}  # a field no reader takes is skipped
    fast = call_columns.from_bytes(_bytes(calls, end))
    cols = call_columns.columns_of(calls)
    assert fast is not None and cols is not None
    assert len(fast[0]) == n and _same(fast[1], cols)


def test_bytes_not_as_benchkit_writes_them_are_read_as_dicts() -> None:
    """Where a line is not exactly one call as benchkit writes it, the bytes give no columns
    and the file is read line by line (each line judged alone, as before)."""
    calls = _calls(2, 12, 2, None)
    lines = [json.dumps(c).encode() for c in calls]
    assert call_columns.from_bytes(b"") is None
    for data in (
        b"\n".join(lines[:3]) + b"\n\n" + b"\n".join(lines[3:]),  # a blank line
        b"\n".join(lines) + b"\n\n",  # a blank last line
        b"\n".join(lines[:3]) + b"\n \n" + b"\n".join(lines[3:]),
        lines[0] + lines[1] + b"\n" + b"\n".join(lines[2:]),  # two calls on one line
        lines[0] + b" " + lines[1] + b"\n" + b"\n".join(lines[2:]),
        lines[0].replace(b", ", b",\n", 1) + b"\n" + b"\n".join(lines[1:]),  # one across two
        b"\n".join(lines) + b"\n[1]",  # a line that is not an object
        b"\xef\xbb\xbf" + b"\n".join(lines),
    ):
        assert call_columns.from_bytes(data) is None
    for change in (
        lambda c: c.update(ok=False),
        lambda c: c.update(ok=1),
        lambda c: c.update(t_first=None),
        lambda c: c.update(t_sent=int(c["t_sent"])),
        lambda c: c.update(t_done=float("nan")),
        lambda c: c.update(t_done=float("inf")),
        lambda c: c.update(timings=None),
        lambda c: c["timings"].pop("prompt_ms"),
        lambda c: c["timings"].update(prompt_n=1.0),
        lambda c: c.pop("seq"),
        lambda c: c.pop("worker"),
        lambda c: c.update(seq=True),
        lambda c: c.update(unit=5),
        lambda c: c.update(cap="128"),
        lambda c: c.update(completion_tokens=2**60),
    ):
        changed = _calls(2, 12, 2, None)
        change(changed[5])
        assert call_columns.from_bytes(_bytes(changed)) is None
        assert call_columns.columns_of(changed) is None
    # A key twice in one call: the last one, as the dicts' parser keeps it.
    twice = lines[0].replace(b'"seq": 0', b'"seq": 9, "seq": 0')
    fast = call_columns.from_bytes(b"\n".join([twice, *lines[1:]]))
    cols = call_columns.columns_of(calls)
    assert fast is not None and cols is not None and _same(fast[1], cols)


_TIMES = st.lists(
    st.tuples(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.25]), st.floats(-1.0, 4.0)), max_size=30
).map(lambda xs: [(a, round(a + b, 3)) for a, b in xs])


@given(_TIMES)
def test_union_length_as_the_loop(spans: list[tuple[float, float]]) -> None:
    s = np.array([a for a, _ in spans], dtype=np.float64)
    e = np.array([b for _, b in spans], dtype=np.float64)
    assert call_columns.union_length(s, e) == union_length(spans)


class _UnionLoop:
    """benchkit.report.analysis.intervals.Union as it was, a binary search a window."""

    def __init__(self, spans: list[tuple[float, float]]) -> None:
        merged: list[list[float]] = []
        for a, b in sorted(x for x in spans if x[1] > x[0]):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.starts = [a for a, _ in merged]
        self.ends = [b for _, b in merged]
        self.before = [0.0]
        for a, b in merged:
            self.before.append(self.before[-1] + (b - a))

    def upto(self, t: float) -> float:
        i = bisect.bisect_right(self.starts, t)
        if i == 0:
            return 0.0
        return self.before[i - 1] + min(t, self.ends[i - 1]) - self.starts[i - 1]

    def covered(self, start: float, end: float) -> float:
        return max(0.0, self.upto(end) - self.upto(start)) if end > start else 0.0


@given(_TIMES, _TIMES)
def test_union_covers_as_the_loop(
    spans: list[tuple[float, float]], queries: list[tuple[float, float]]
) -> None:
    arr = [np.array(x, dtype=np.float64) for x in zip(*spans, strict=True)] if spans else []
    union = intervals.Union(*arr) if arr else intervals.Union(np.zeros(0), np.zeros(0))
    loop = _UnionLoop(spans)
    qs = np.array([a for a, _ in queries], dtype=np.float64)
    qe = np.array([b for _, b in queries], dtype=np.float64)
    assert union.covered(qs, qe).tolist() == [loop.covered(a, b) for a, b in queries]


@given(_TIMES, st.lists(st.integers(0, 5000), min_size=30, max_size=30))
def test_concurrent_tokens_as_the_loop(spans: list[tuple[float, float]], n: list[int]) -> None:
    spans = [(a, b) for a, b in spans if b > a]
    s = np.array([a for a, _ in spans], dtype=np.float64)
    e = np.array([b for _, b in spans], dtype=np.float64)
    tokens = np.array(n[: len(spans)], dtype=np.float64)
    loop = stall_calls._concurrent_near(s.tolist(), e.tolist(), tokens.tolist())
    assert stall_calls._concurrent(s, e, tokens).tolist() == loop


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40))
def test_median_as_statistics(values: list[float]) -> None:
    assert stalls._median(np.array(values, dtype=np.float64)) == statistics.median(values)


def test_too_many_pairs_are_weighed_a_window_at_a_time(monkeypatch: Any) -> None:
    calls = stall_calls.from_columns(call_columns.columns_of(_calls(5, 60, 8, 10)))  # type: ignore[arg-type]
    s, e, n = calls.prefill
    whole = stall_calls._concurrent(s, e, n).tolist()
    monkeypatch.setattr(stall_calls, "_MAX_PAIRS", 0)
    assert stall_calls._overlapping(s, e) is None
    assert stall_calls._concurrent(s, e, n).tolist() == whole

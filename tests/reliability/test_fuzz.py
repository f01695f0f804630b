"""Hypothesis fuzzing of the parsers that read what others wrote: SSE streams and results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchkit.client.replay import CallRecord
from benchkit.client.stream import apply_event, parse_sse_line
from benchkit.errors import UserError
from benchkit.measure.calls import compute_metrics
from benchkit.results.store import load_result

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


def _rec() -> CallRecord:
    return CallRecord(repeat=0, unit="u", seq=0, role="r", worker=0, t_sent=0.0)


@given(st.text(max_size=200))
def test_sse_line_parser_returns_or_raises_value_error(line: str) -> None:
    try:
        out = parse_sse_line(line)
    except ValueError:
        return
    assert out is None or out == "DONE" or isinstance(out, dict)


@given(
    st.dictionaries(
        st.sampled_from(["choices", "usage", "timings", "model", "error", "x"]),
        json_values,
        max_size=5,
    )
)
def test_apply_event_never_crashes_on_odd_events(event: dict[str, Any]) -> None:
    rec = _rec()
    try:
        apply_event(rec, event, 1.0)
    except ValueError as exc:
        # The replay ends such a call as a malformed stream, with this message.
        assert "unexpected event shape" in str(exc) or "is not a non-negative integer" in str(exc)
        return
    # Whatever was accepted, the metrics can do their arithmetic on it.
    rec.ok, rec.t_done = True, 2.0
    m = compute_metrics(
        [rec], wall_s=2.0, units_planned=1, calls_planned=1, calls_per_unit={"u": 1}
    )
    assert m["calls_completed"] == 1


def test_sse_stream_of_llama_server_shape() -> None:
    rec = _rec()
    stream = [
        'data: {"choices":[{"text":"a","index":0,"finish_reason":null}],"model":"m"}',
        ": keep-alive",
        "",
        'data: {"choices":[{"text":"bc","index":0,"finish_reason":null}],"model":"m"}',
        'data: {"choices":[{"text":"","index":0,"finish_reason":"length"}],"model":"m",'
        '"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":'
        '{"cached_tokens":2}},"timings":{"prompt_n":5,"predicted_n":3}}',
        "data: [DONE]",
    ]
    for i, line in enumerate(stream):
        ev = parse_sse_line(line)
        if isinstance(ev, dict):
            apply_event(rec, ev, float(i))
    assert (rec.t_first, rec.t_last, rec.chunks) == (0.0, 3.0, 2)
    assert (rec.prompt_tokens, rec.cached_tokens, rec.completion_tokens) == (7, 2, 3)
    assert rec.finish_reason == "length" and rec.timings["prompt_n"] == 5


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(st.one_of(st.binary(max_size=300), json_values.map(lambda v: json.dumps(v).encode())))
def test_results_loader_loads_or_says_why(tmp_path: Path, blob: bytes) -> None:
    p = tmp_path / "result.json"
    p.write_bytes(blob)
    try:
        r = load_result(p)
    except UserError as exc:
        assert str(p) in str(exc)
        return
    assert r.status in ("complete", "incomplete", "failed", "unavailable")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(
    st.dictionaries(
        st.sampled_from(["schema_version", "status", "factors", "metrics", "provenance", "reason"]),
        json_values,
        max_size=6,
    )
)
def test_results_loader_on_near_miss_objects(tmp_path: Path, obj: dict[str, Any]) -> None:
    p = tmp_path / "result.json"
    p.write_text(json.dumps(obj))
    try:
        r = load_result(p)
    except UserError as exc:
        assert str(p) in str(exc) and "\n" not in str(exc)
        return
    assert isinstance(r.metrics, dict) and isinstance(r.factors, dict)

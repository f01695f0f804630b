"""benchkit/measure/metrics.py is the one declaration of each metric: what the measuring code
returns, what schema.Metrics types, what result.json holds and what the Korean catalog translates
all agree with it, so a metric removed from one of them fails here instead of falling into a block's
`extra` (issue 43)."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from benchkit.client.replay import CallRecord
from benchkit.job.extend import COUNTER_KEYS
from benchkit.load import measure as measure_load
from benchkit.load.measure import OpenLoopMetrics
from benchkit.measure import calls as measure
from benchkit.measure import metrics, telemetry
from benchkit.measure.calls import CallMetrics, compute_metrics
from benchkit.measure.telemetry import TelemetryMetrics
from benchkit.report.lang import fmt, marked
from benchkit.results import schema
from benchkit.results.store import as_written


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - {"extra"}


def test_keys_are_declared_once() -> None:
    assert len(metrics.BY_KEY) == len(metrics.METRICS)


def test_schema_metrics_types_exactly_the_declared_metrics() -> None:
    # `open_loop` is the open-loop block, whose keys are declared with block="open_loop".
    assert _fields(schema.Metrics) - {"open_loop"} == metrics.schema_keys()
    hints = typing.get_type_hints(schema.Metrics)
    for key in metrics.schema_keys():
        assert hints[key] == metrics.BY_KEY[key].type | None, key


def test_the_open_loop_block_types_each_declared_figure() -> None:
    fields = _fields(schema.OpenLoop)
    for key in metrics.schema_keys("open_loop"):
        # schedule_lag_ms is written as its percentiles (schedule_lag_ms_p50, ...).
        assert key in fields or any(f.startswith(f"{key}_") for f in fields), key
    produced = set(OpenLoopMetrics.__annotations__)
    assert fields == produced


def test_each_measuring_module_returns_its_declared_keys() -> None:
    assert set(CallMetrics.__annotations__) == set(metrics.keys("calls"))
    assert set(TelemetryMetrics.__annotations__) - {"telemetry"} == set(metrics.keys("telemetry"))
    assert set(COUNTER_KEYS) - {"server"} == set(metrics.keys("server"))


def test_compute_metrics_returns_every_calls_metric() -> None:
    rec = CallRecord(
        repeat=0, unit="a", seq=0, role="r", worker=0, t_sent=0.0, t_first=1.0, t_last=2.0,
        t_done=2.0, ok=True, error=None, finish_reason="stop", prompt_tokens=10,
        cached_tokens=0, completion_tokens=5, timings={"prompt_n": 10},
    )  # fmt: skip
    m = compute_metrics(
        [rec], wall_s=2.0, units_planned=1, calls_planned=1, calls_per_unit={"a": 1}
    )
    assert list(m) and set(m) == set(metrics.keys("calls"))


def _value(m: metrics.Metric) -> object:
    if m.type is schema.Percentiles:
        return {"p50": 1.0, "p90": 2.0, "p95": 3.0, "p99": 4.0}
    return 7 if m.type is int else {"mean": 1.0, "max": 2.0} if m.type is dict else 1.5


@pytest.mark.parametrize("m", metrics.METRICS, ids=lambda m: m.key)
def test_a_declared_metric_reaches_result_json_typed(m: metrics.Metric) -> None:
    """Written through the schema (results.write_result), a metric keeps its value; a typed one
    is a field of its block, not a leftover in `extra`."""
    opened = m.block == "open_loop"
    # schedule_lag_ms is written as its percentiles (schedule_lag_ms_p50, ...).
    key = f"{m.key}_p50" if opened and m.type is schema.Percentiles else m.key
    value = 1.5 if opened else _value(m)
    data = {
        "schema_version": schema.SCHEMA_VERSION, "status": "complete", "reason": None,
        "factors": {}, "provenance": {},
        "metrics": {"open_loop": {key: value}} if opened else {key: value},
    }  # fmt: skip
    loaded = schema.load(data).metrics
    inner = loaded.open_loop if opened else loaded
    assert inner is not None
    assert (key in inner.extra) is not m.typed
    written = as_written(data)["metrics"]
    assert (written["open_loop"] if opened else written)[key] == value


def test_definitions_are_derived_and_translated() -> None:
    assert metrics.definitions("calls", "server") == measure.DEFINITIONS
    assert metrics.definitions("telemetry") == telemetry.DEFINITIONS
    assert metrics.definitions("load") == measure_load.DEFINITIONS
    for m in metrics.METRICS:
        for text in (m.definition, m.column.header if m.column else None):
            if text is not None:
                assert marked("ko", text) != text, f"{m.key}: {text!r} has no Korean"


def test_table_columns_are_well_formed() -> None:
    cols = metrics.table_columns()
    places = [m.column.place for m in cols if m.column]
    assert places == sorted(set(places)), "each column its own place"
    filters = fmt.filters("en")
    for m in cols:
        assert m.column is not None and m.column.format in filters
        assert m.column.beside is None or m.column.beside in metrics.BY_KEY
    # The one figure that does not compare across slot counts says so in its header.
    for m in metrics.METRICS:
        if not m.across_slots and m.column:
            assert "not comparable across slots" in m.column.header

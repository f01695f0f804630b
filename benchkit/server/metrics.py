"""Read a server's `/metrics` (Prometheus text) into the counters result.json keeps, for
llama-server, vLLM and SGLang under one set of keys, without a network call.

The server's own counters are a second witness beside the per-call timings the client adds
up: they count what the server did, including speculative drafting, whatever the client saw.
Counters run from the server's start, and each pass of a job starts a fresh server, so the
values read at the end of a pass are that pass's totals. llama-server (b11434) prints them
with C++'s default 6 significant digits, so a counter past 999,999 is rounded (1234567 reads
1.23457e+06): prefer the per-call timings for exact token counts.

The exposition format is read by `prometheus_client.parser`; the engines' metric names were
read in their sources at the versions in benchkit.server.vllm_sglang.ENGINE_VERSIONS.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypedDict

from prometheus_client.parser import text_string_to_metric_families

from benchkit.server.vllm_sglang import EngineName

_PREFIX = "llamacpp:"
# A `# TYPE` line: prometheus_client renames the samples of a counter whose TYPE line names it
# without `_total` to OpenMetrics' `<name>_total` (llama-server's n_tokens_max). Samples are
# looked up here by the names the server printed, and nothing here uses the types.
_TYPE_LINE = re.compile(r"^\s*#\s*TYPE\s")
_METRIC_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")

# result.json's server counters, in the order they are written, for every engine.
COUNTER_KEYS = (
    "prompt_tokens", "prompt_tokens_cached", "prompt_seconds", "tokens_predicted",
    "tokens_predicted_seconds", "n_decode", "n_tokens_max", "busy_slots_per_decode",
    "draft_tokens", "draft_tokens_accepted", "draft_steps", "draft_acceptance",
    "draft_accepted_by_position", "draft_acceptance_by_position",
)  # fmt: skip


class ServerCounters(TypedDict, total=False):
    """A server's counters as result.json keeps them (metrics.server), COUNTER_KEYS first.

    A TypedDict, not a dataclass: it is written into result.json as it is, key order kept, and
    each engine fills the keys it has (an engine that is not llama-server adds `engine` and
    the keys after it).
    """

    prompt_tokens: int | None
    prompt_tokens_cached: int | None
    prompt_seconds: float | None
    tokens_predicted: int | None
    tokens_predicted_seconds: float | None
    n_decode: int | None
    n_tokens_max: int | None
    busy_slots_per_decode: float | None
    draft_tokens: int | None
    draft_tokens_accepted: int | None
    draft_steps: int | None
    draft_acceptance: float | None
    draft_accepted_by_position: list[int]
    draft_acceptance_by_position: list[float]
    engine: str
    requests: int | None
    requests_running: int | None
    requests_waiting: int | None
    draft_accept_length: float | None
    draft_accept_length_recent: float | None
    draft_acceptance_recent: float | None


@dataclass(frozen=True)
class Sample:
    """One line of the exposition: a metric name, its labels and its value."""

    name: str
    labels: Mapping[str, str]
    value: float

    @property
    def key(self) -> str:
        """`name`, or `name{k="v",...}` with the labels sorted."""
        if not self.labels:
            return self.name
        return (
            self.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items())) + "}"
        )


class Samples(Mapping[str, float]):
    """Every sample of one `/metrics` page, in order (`rows`); as a mapping, each value under
    its Sample.key (a later sample with the same key wins)."""

    def __init__(self, rows: list[Sample]) -> None:
        self.rows = tuple(rows)
        self._by_key = {r.key: r.value for r in self.rows}

    def __getitem__(self, key: str) -> float:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def total(self, name: str, **where: str) -> float | None:
        """The sum over every label set of `name` whose labels include `where` (NaN left out);
        None when there is no such sample."""
        vals = [
            r.value
            for r in self.rows
            if r.name == name
            and all(r.labels.get(k) == w for k, w in where.items())
            and not math.isnan(r.value)
        ]
        return sum(vals) if vals else None

    def by_position(self, name: str) -> dict[int, int]:
        """`name`'s samples per value of their `position` label, summed over other labels."""
        out: dict[int, int] = {}
        for r in self.rows:
            if r.name == name and "position" in r.labels:
                pos = int(r.labels["position"])
                out[pos] = out.get(pos, 0) + round(r.value)
        return out


def parse_prometheus(text: str) -> Samples:
    """Every sample of a Prometheus text exposition (comments and blank lines skipped); a
    line that is not a sample raises ValueError naming it."""
    kept = "\n".join(x for x in text.splitlines() if not _TYPE_LINE.match(x)) + "\n"
    try:
        rows = [
            Sample(s.name, dict(s.labels), float(s.value))
            for family in text_string_to_metric_families(kept)
            for s in family.samples
        ]
    except ValueError:
        raise ValueError(_first_bad_line(text)) from None
    return Samples(rows)


def _first_bad_line(text: str) -> str:
    """Which line of `text` the parser refused, and whether it lacks a name or a number."""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except ValueError:
            name = line.split("{", 1)[0].split(None, 1)[0]
            if _METRIC_NAME.fullmatch(name):
                return f"line {n} of the metrics text has no number: {raw!r}"
            return f"line {n} of the metrics text is not a sample: {raw!r}"
    return "the metrics text is not Prometheus' text format"


def _count(v: float | None) -> int | None:
    return None if v is None or math.isnan(v) else round(v)


def draft_fields(
    drafted: int | None, accepted: int | None, steps: int | None, by_position: dict[int, int]
) -> ServerCounters:
    """The speculative-decoding counters as result fields (these six keys).
    `draft_acceptance` = accepted / drafted tokens (None when nothing was drafted), the
    server's view of what measure.py computes from per-call timings;
    `draft_acceptance_by_position[i]` = accepted at draft position i / verification steps."""
    positions = [by_position.get(i, 0) for i in range(max(by_position) + 1)] if by_position else []
    return {
        "draft_tokens": drafted,
        "draft_tokens_accepted": accepted,
        "draft_steps": steps,
        "draft_acceptance": (accepted / drafted) if drafted and accepted is not None else None,
        "draft_accepted_by_position": positions,
        "draft_acceptance_by_position": [a / steps for a in positions] if steps else [],
    }


def _spec_decode(samples: Samples, prefix: str) -> ServerCounters:
    """llama-server's and vLLM's speculative counters (the same names under their prefix)."""
    name = prefix + "spec_decode_num_"
    return draft_fields(
        _count(samples.total(name + "draft_tokens_total")),
        _count(samples.total(name + "accepted_tokens_total")),
        _count(samples.total(name + "drafts_total")),
        samples.by_position(name + "accepted_tokens_per_pos_total"),
    )


def server_counters(samples: Samples) -> ServerCounters:
    """llama-server's counters as result fields; absent counters are None, not zero."""

    def get(name: str) -> float | None:
        return samples.get(_PREFIX + name)

    def count(name: str) -> int | None:
        return _count(get(name))

    out: ServerCounters = {
        "prompt_tokens": count("prompt_tokens_total"),
        "prompt_tokens_cached": count("prompt_tokens_cached_total"),
        "prompt_seconds": get("prompt_seconds_total"),
        "tokens_predicted": count("tokens_predicted_total"),
        "tokens_predicted_seconds": get("tokens_predicted_seconds_total"),
        "n_decode": count("n_decode_total"),
        "n_tokens_max": count("n_tokens_max"),
        "busy_slots_per_decode": get("n_busy_slots_per_decode"),
    }
    out.update(_spec_decode(samples, _PREFIX))
    return out


def engine_counters(engine: EngineName, prometheus_text: str) -> ServerCounters:
    """The engine's /metrics as the result fields server_counters gives for llama-server
    (same keys, None where the engine has no equivalent), plus `requests` (finished),
    `requests_running`, `requests_waiting` and `draft_accept_length` (mean tokens per
    verification step, bonus token included). Sums over label sets (engines, finish reasons,
    streaming or not). ValueError for text that is not Prometheus'."""
    samples = parse_prometheus(prometheus_text)
    out = ServerCounters(
        prompt_tokens=None,
        prompt_tokens_cached=None,
        prompt_seconds=None,
        tokens_predicted=None,
        tokens_predicted_seconds=None,
        n_decode=None,
        n_tokens_max=None,
        busy_slots_per_decode=None,
        draft_tokens=None,
        draft_tokens_accepted=None,
        draft_steps=None,
        draft_acceptance=None,
        draft_accepted_by_position=[],
        draft_acceptance_by_position=[],
        engine=engine.value,
    )
    if engine is EngineName.vllm:
        _vllm(samples, out)
    else:
        _sglang(samples, out)
    return out


def _gauge(samples: Samples, name: str) -> float | None:
    # SGLang logs scheduler gauges per TP rank (by default rank 0 only); read rank 0's.
    vals = [
        r.value
        for r in samples.rows
        if r.name == name and r.labels.get("tp_rank", "0") == "0" and not math.isnan(r.value)
    ]
    return sum(vals) if vals else None


def _vllm(samples: Samples, out: ServerCounters) -> None:
    p = "vllm:"
    all_prompt = samples.total(p + "prompt_tokens_total")
    cached = samples.total(p + "prompt_tokens_cached_total")
    computed = samples.total(p + "prompt_tokens_by_source_total", source="local_compute")
    if computed is None and all_prompt is not None:
        computed = all_prompt - (cached or 0.0)
    out.update(
        {
            # llama-server's prompt_tokens_total excludes cached tokens; so does this.
            "prompt_tokens": _count(computed),
            "prompt_tokens_cached": _count(cached),
            "tokens_predicted": _count(samples.total(p + "generation_tokens_total")),
            "requests": _count(samples.total(p + "request_success_total")),
            "requests_running": _count(_gauge(samples, p + "num_requests_running")),
            "requests_waiting": _count(_gauge(samples, p + "num_requests_waiting")),
        }
    )
    draft = _spec_decode(samples, p)
    out.update(draft)
    accepted, steps = draft["draft_tokens_accepted"], draft["draft_steps"]
    # vLLM's own definition (v1/spec_decode/metrics.py): 1 + accepted / drafts.
    out["draft_accept_length"] = 1 + accepted / steps if steps and accepted is not None else None


def _sglang(samples: Samples, out: ServerCounters) -> None:
    p = "sglang:"
    all_prompt = samples.total(p + "prompt_tokens_total")
    cached = samples.total(p + "cached_tokens_total")
    if all_prompt is not None and cached is None:
        cached = 0.0  # a labelled counter appears with its first cache hit
    generated = samples.total(p + "generation_tokens_total")
    # SGLang counts verification steps only; drafted and accepted tokens are not counters.
    steps = _count(samples.total(p + "spec_verify_calls_total"))
    out.update(
        {
            "prompt_tokens": _count(None if all_prompt is None else all_prompt - (cached or 0.0)),
            "prompt_tokens_cached": _count(cached),
            "tokens_predicted": _count(generated),
            "requests": _count(samples.total(p + "num_requests_total")),
            "requests_running": _count(_gauge(samples, p + "num_running_reqs")),
            "requests_waiting": _count(_gauge(samples, p + "num_queue_reqs")),
            "draft_steps": steps,
            # SGLang's own definition (managers/tokenizer_manager.py): completion tokens /
            # steps.
            "draft_accept_length": generated / steps if steps and generated is not None else None,
            # Gauges of the last logging interval, not totals: kept apart under their own names.
            "draft_accept_length_recent": _gauge(samples, p + "spec_accept_length"),
            "draft_acceptance_recent": _gauge(samples, p + "spec_accept_rate"),
        }
    )


# Counters that only grow, subtracted to give what a pass did after the warm-up.
_MONOTONIC = (
    "prompt_tokens", "prompt_tokens_cached", "prompt_seconds", "tokens_predicted",
    "tokens_predicted_seconds", "n_decode", "requests",
)  # fmt: skip


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None else a - (b or 0)


def since(before: ServerCounters | None, after: ServerCounters | None) -> ServerCounters | None:
    """The counters of what the server did between two readings: the warm-up's share taken
    out of a pass's totals. Averages are recomputed from their totals (busy slots per decode
    = busy-slot total / decode calls); gauges (n_tokens_max, requests running) keep the
    later reading."""
    if before is None or after is None:
        return after
    out: ServerCounters = {**after}
    for key in _MONOTONIC:
        a, b = after.get(key), before.get(key)
        if isinstance(a, int | float):
            diff = _minus(a, b if isinstance(b, int | float) else None)
            out[key] = round(diff) if isinstance(a, int) and diff is not None else diff  # type: ignore[literal-required]
    n_a, n_b = after.get("n_decode"), before.get("n_decode")
    busy_a, busy_b = after.get("busy_slots_per_decode"), before.get("busy_slots_per_decode")
    if n_a and busy_a is not None:
        steps = n_a - (n_b or 0)
        busy = busy_a * n_a - (busy_b or 0.0) * (n_b or 0)
        out["busy_slots_per_decode"] = busy / steps if steps > 0 else None
    pos_a = after.get("draft_accepted_by_position") or []
    pos_b = before.get("draft_accepted_by_position") or []
    positions = {i: a - (pos_b[i] if i < len(pos_b) else 0) for i, a in enumerate(pos_a)}

    def left(key: str) -> int | None:
        a, b = after.get(key), before.get(key)
        return None if not isinstance(a, int) else a - (b if isinstance(b, int) else 0)

    if any(after.get(k) is not None for k in ("draft_tokens", "draft_steps")):
        out.update(
            draft_fields(
                left("draft_tokens"),
                left("draft_tokens_accepted"),
                left("draft_steps"),
                {i: v for i, v in positions.items() if v or positions},
            )
        )
    return out


def plus(first: ServerCounters | None, second: ServerCounters | None) -> ServerCounters | None:
    """The counters of two runs of one job (a race's extension after the run it extends):
    totals summed, averages recomputed from their totals, gauges the larger reading; None when
    either run's counters are unknown (half a job's counters are not the job's)."""
    if first is None or second is None:
        return None
    out: ServerCounters = {**second}
    for key in _MONOTONIC:
        a, b = first.get(key), second.get(key)
        both = isinstance(a, int | float) and isinstance(b, int | float)
        out[key] = a + b if both else None  # type: ignore[literal-required,operator]
    n_a, n_b = first.get("n_decode") or 0, second.get("n_decode") or 0
    busy_a, busy_b = first.get("busy_slots_per_decode"), second.get("busy_slots_per_decode")
    if busy_a is not None and busy_b is not None and n_a + n_b > 0:
        out["busy_slots_per_decode"] = (busy_a * n_a + busy_b * n_b) / (n_a + n_b)
    else:
        out["busy_slots_per_decode"] = None
    tokens_max = [
        v for v in (first.get("n_tokens_max"), second.get("n_tokens_max")) if v is not None
    ]
    out["n_tokens_max"] = max(tokens_max) if tokens_max else None
    if any(c.get(k) is not None for c in (first, second) for k in ("draft_tokens", "draft_steps")):
        pa = first.get("draft_accepted_by_position") or []
        pb = second.get("draft_accepted_by_position") or []
        positions = {
            i: (pa[i] if i < len(pa) else 0) + (pb[i] if i < len(pb) else 0)
            for i in range(max(len(pa), len(pb)))
        }

        def total(key: str) -> int | None:
            a, b = first.get(key), second.get(key)
            return a + b if isinstance(a, int) and isinstance(b, int) else None

        out.update(
            draft_fields(
                total("draft_tokens"),
                total("draft_tokens_accepted"),
                total("draft_steps"),
                positions,
            )
        )
    return out

"""A job's calls as columns: every field the report's readers take from a call, read once for
all of them, and what they take that is the same for several (each unit's first and last
moment).

The report takes five things from a job's calls (benchkit.report.analysis.job_calls), and each
reader went through every call's dict for its own fields, checking each value's type as it went: at
1,000 jobs of 200 calls, 200,000 dicts read five times over, most of the report's time. Here the
fields are taken from a job's calls at once (operator.itemgetter, in C) and their types checked a
column at a time. Only a calls.jsonl as benchkit writes it is read this way: every call complete,
every field there with the type benchkit writes it with (times finite numbers, counts integers, the
unit and finish reason strings). A file with anything else (a failed call, a field missing or null)
gives no columns, and each reader reads its dicts as before; either way each figure is the same to
the last bit (tests/unit/report/analysis/test_call_columns.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

_FIELDS = (
    "ok", "t_sent", "t_first", "t_last", "t_done", "completion_tokens", "prompt_tokens", "cap",
    "finish_reason", "unit", "seq", "repeat", "timings", "role", "worker",
)  # fmt: skip
# The fields every call of a job as `Columns` has (a reader that needs others asks the dicts).
FIELDS = frozenset(_FIELDS)
_TIMINGS = ("prompt_ms", "prompt_n", "predicted_n")
_GET = itemgetter(*_FIELDS)
_GET_TIMINGS = itemgetter(*_TIMINGS)
# Integers as large as a float holds exactly: a count read as a float (the stall rules read
# every number as one) is then the same integer.
_EXACT = 2**53


@dataclass(frozen=True)
class Columns:
    """A job's calls, field by field, in the file's order (every call ok). Times and the
    server's prompt time as floats; counts as the integers in the file."""

    sent: Floats
    first: Floats
    last: Floats
    done: Floats
    completion: tuple[int, ...]
    prompt_tokens: tuple[int, ...]
    cap: tuple[int, ...]
    finish: tuple[str, ...]
    unit: tuple[str, ...]
    seq: tuple[int, ...]
    repeat: tuple[int, ...]
    prompt_ms: Floats
    prompt_n: tuple[int, ...]
    predicted_n: tuple[int, ...]
    # Each unit's first request and last response, by unit, in the order units first appear
    # (as every reader that groups calls by unit lists them).
    bounds: dict[str, tuple[float, float]]


class _Timings(msgspec.Struct):
    """The server's timings of a call, as far as the readers take them."""

    prompt_ms: float | int
    prompt_n: int
    predicted_n: int


class _Call(msgspec.Struct):
    """A call as far as the readers take it. Times may come as integers (the checks of
    `_columns` then refuse them, as they refuse them in dicts); an integer that is a bool, a
    string that is not one or a missing field fails the decoding, and the file is read as
    dicts."""

    ok: bool
    t_sent: float | int
    t_first: float | int
    t_last: float | int
    t_done: float | int
    completion_tokens: int
    prompt_tokens: int
    cap: int
    finish_reason: str
    unit: str
    seq: int
    repeat: int
    timings: _Timings
    # Only their being there is checked (as itemgetter checks them in the dicts).
    role: msgspec.Raw
    worker: msgspec.Raw


_DECODE = msgspec.json.Decoder(list[_Call]).decode
_ATTRS = attrgetter(*_FIELDS)
_ATTRS_TIMINGS = attrgetter(*_TIMINGS)


def from_bytes(data: bytes) -> tuple[list[_Call], Columns] | None:
    """A calls.jsonl's bytes straight to `Columns`, without a dict for each call: the calls
    and their columns where every line is one call as benchkit writes it (what `columns_of`
    gives for the file's dicts), else None, and the file is read line by line as dicts.

    The lines are decoded as one JSON array (each newline a comma), so that a line that is
    not exactly one JSON value (two on one line, one across two, a blank line) makes the
    array malformed and the file is read the slow way, which judges each line alone; fields
    the readers do not take are skipped by the decoder, not built (msgspec: a third of the
    standard-library-compatible parse of a 1,000-job sweep's calls)."""
    body = data[:-1] if data.endswith(b"\n") else data
    if not body:
        return None
    try:
        calls = _DECODE(b"[" + body.replace(b"\n", b",") + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    cols = _columns(list(map(_ATTRS, calls)), _ATTRS_TIMINGS)
    return None if cols is None else (calls, cols)


def columns_of(calls: Sequence[Mapping[str, object]]) -> Columns | None:
    """`calls` as `Columns`; None where any call is not as benchkit writes one (see the module
    docstring): its readers then read the dicts. Each kind of field is checked at once over
    every call (its types in one set, its range in one pass)."""
    if not calls:
        return None
    try:
        rows = list(map(_GET, calls))
    except (KeyError, TypeError):
        return None
    if set(map(type, (r[12] for r in rows))) != {dict}:
        return None
    return _columns(rows, _GET_TIMINGS)


def _columns(
    rows: list[tuple[Any, ...]], timing: Callable[[Any], tuple[Any, ...]]
) -> Columns | None:
    """`columns_of` of the calls' fields (each call's `_FIELDS` in a tuple); `timing` takes the
    timings' fields from each call's timings."""
    ok, sent, first, last, done, comp, prompt, cap, finish, unit, seq, rep, timings, _, _ = zip(
        *rows, strict=True
    )
    try:
        ms, prompt_n, predicted_n = zip(*map(timing, timings), strict=True)
    except KeyError:
        return None
    if set(map(type, ok)) != {bool} or not all(ok):
        return None
    ints = (comp, prompt, cap, seq, rep, prompt_n, predicted_n)
    if set(map(type, chain(*ints))) != {int} or set(map(type, chain(finish, unit))) != {str}:
        return None
    # Integers a float holds exactly: the stall rules read every count as a float.
    if min(map(min, ints)) <= -_EXACT or max(map(max, ints)) >= _EXACT:
        return None
    # Times finite floats (an integer too is refused: the readers that keep a time as written
    # would keep it an integer).
    if set(map(type, chain(sent, first, last, done, ms))) != {float}:
        return None
    times = np.array((sent, first, last, done, ms), dtype=np.float64)
    if not np.isfinite(times).all():
        return None
    return Columns(
        sent=times[0],
        first=times[1],
        last=times[2],
        done=times[3],
        completion=comp,
        prompt_tokens=prompt,
        cap=cap,
        finish=finish,
        unit=unit,
        seq=seq,
        repeat=rep,
        prompt_ms=times[4],
        prompt_n=prompt_n,
        predicted_n=predicted_n,
        bounds=_bounds(unit, sent, done),
    )


def _bounds(
    units: Sequence[str], sent: Sequence[float], done: Sequence[float]
) -> dict[str, tuple[float, float]]:
    """Each unit's earliest request and latest response, as the readers that group by unit
    take them (the first value kept where a later one ties it)."""
    lo: dict[str, float] = {}
    hi: dict[str, float] = {}
    for u, s, e in zip(units, sent, done, strict=True):
        if u in lo:
            if s < lo[u]:
                lo[u] = s
            if e > hi[u]:
                hi[u] = e
        else:
            lo[u] = s
            hi[u] = e
    return {u: (lo[u], hi[u]) for u in lo}


def spans(cols: Columns) -> dict[str, float]:
    """`results.spans_of` of the calls: each unit's span, where it is longer than nothing."""
    return {u: e - s for u, (s, e) in cols.bounds.items() if e > s}


def windows(cols: Columns) -> list[tuple[float, float]] | None:
    """`slot_use.windows_of` of the calls (each unit of each pass), where every call is of one
    pass; None for calls of several (the units of each are grouped apart)."""
    if len(set(cols.repeat)) > 1:
        return None
    return [(s, e) for s, e in cols.bounds.values() if e > s]


def union_length(starts: Floats, ends: Floats) -> float:
    """`measure.union_length` of the intervals (starts[i], ends[i]): the same merges in the same
    order, the same sum (each interval after the last merged one, in the order sorted tuples
    come in, begins a new piece where it starts after the pieces's end)."""
    keep = ends > starts
    s, e = starts[keep], ends[keep]
    if not len(s):
        return 0.0
    order = np.lexsort((e, s))
    s, e = s[order], e[order]
    # The piece's end so far: the running maximum of the ends (a new piece's end is its own,
    # since it starts after every end before it).
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    np.greater(s[1:], reach[:-1], out=new[1:])
    heads = np.flatnonzero(new)
    tails = np.append(heads[1:] - 1, len(s) - 1)
    # `total += end - start` piece by piece: an accumulation, one addition at a time.
    return float(np.add.accumulate(reach[tails] - s[heads])[-1])

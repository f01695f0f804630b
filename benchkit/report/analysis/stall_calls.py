"""A job's calls as the stall rules read them (benchkit.report.analysis.stalls), as arrays, and what
the rules compute over all of them at once: each call's rate per token in a phase, with the prompts
that overlapped its own; each wait for the server less the prompts it queued behind; each unit's
span.

The rules went through the calls one at a time, each call against the calls that overlapped
it: a third of a 1,000-job report's time. Here each step is one array operation over a job's
calls. Every figure is computed as the loop computed it, to the last bit: the same operations
on the same values in the same order (an element-wise operation rounds as the loop's did; each
sum is Python's own `sum` over the same terms in the same order; `max` and `min` pick as
Python's do), so a stall found, and its numbers, are the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchkit.report.analysis import intervals
from benchkit.report.analysis.call_columns import Columns

Floats = npt.NDArray[np.float64]
# Calls with fewer tokens than this in a phase are not judged on it: per-token rates of a few
# tokens are dominated by fixed costs.
MIN_TOKENS = 8
_NAN = math.nan


@dataclass(frozen=True)
class StallCalls:
    """A job's ok calls as the stall rules read them, in the file's order: the unit and the
    call's seq as written, and each number read as a finite float or NaN (not known). Each
    phase is (start, end, tokens) per call: prefill the server's own prompt time ending at the
    first token (queueing left out), else the client's wait for it; decode from first to last
    token, the server's predicted tokens (else the completion's less its first)."""

    unit: Sequence[str]
    seq: Sequence[object]
    sent: Floats
    first: Floats
    done: Floats
    prompt_ms: Floats
    prefill: tuple[Floats, Floats, Floats]
    decode: tuple[Floats, Floats, Floats]


def _num(x: object) -> float:
    # One conversion, NaN for what is not a finite number: this runs for every field of every
    # call where the file is not as benchkit writes it.
    if isinstance(x, (int, float)):
        f = float(x)
        if math.isfinite(f):
            return f
    return _NAN


def from_dicts(ok: Sequence[Mapping[str, object]]) -> StallCalls:
    """The ok calls' `StallCalls`, each field checked as it is read."""
    rows = []
    for c in ok:
        t = c.get("timings")
        timings: Mapping[str, object] = t if isinstance(t, Mapping) else {}
        first, sent = _num(c.get("t_first")), _num(c.get("t_sent"))
        ms = _num(timings.get("prompt_ms"))
        pre = dec = (_NAN, _NAN, _NAN)
        if first == first:
            n = _num(timings.get("prompt_n"))
            if n == n and ms == ms and ms > 0:
                pre = (first - ms / 1000, first, n)
            else:
                n = _num(c.get("prompt_tokens"))
                if n == n and sent == sent:
                    pre = (sent, first, n)
            n = _num(timings.get("predicted_n"))
            if n != n:
                n = _num(c.get("completion_tokens")) - 1
            last = _num(c.get("t_last"))
            if n == n and last == last:
                dec = (first, last, n)
        rows.append((first, sent, _num(c.get("t_done")), ms, *pre, *dec))
    a = np.array(rows, dtype=np.float64).reshape(len(rows), 10).T
    return StallCalls(
        unit=[str(c.get("unit")) for c in ok],
        seq=[c.get("seq") for c in ok],
        sent=a[1],
        first=a[0],
        done=a[2],
        prompt_ms=a[3],
        prefill=(a[4], a[5], a[6]),
        decode=(a[7], a[8], a[9]),
    )


def from_columns(cols: Columns) -> StallCalls:
    """`from_dicts` of calls as benchkit writes them (every field there and a number)."""
    ms = cols.prompt_ms
    prompt_n = np.array(cols.prompt_n, dtype=np.float64)
    timed = ms > 0
    return StallCalls(
        unit=cols.unit,
        seq=cols.seq,
        sent=cols.sent,
        first=cols.first,
        done=cols.done,
        prompt_ms=ms,
        prefill=(
            np.where(timed, cols.first - ms / 1000, cols.sent),
            cols.first,
            np.where(timed, prompt_n, np.array(cols.prompt_tokens, dtype=np.float64)),
        ),
        decode=(cols.first, cols.last, np.array(cols.predicted_n, dtype=np.float64)),
    )


@dataclass(frozen=True)
class Rates:
    """The calls judged in a phase (those of MIN_TOKENS tokens or more), each with its window,
    its tokens, the tokens the server went through meanwhile (`concurrent`) and its seconds
    per token (see stalls._Rate)."""

    index: list[int]
    start: list[float]
    end: list[float]
    tokens: list[int]
    concurrent: Floats
    seconds: Floats
    # The part of each window charged to the call: all of it for prefill (other prompts are in
    # `concurrent`); for decode, the window less the time the server spent meanwhile on other
    # calls' prompts (rules v12).
    charged: Floats
    per_token: Floats


def phase_rates(calls: StallCalls, phase: str) -> Rates:
    """The rates of the calls' windows of `phase` (a window that ends after it starts). For
    prefill, each other call's tokens are spread evenly over its own window and count for the
    part of it that overlaps; for decode only the call's own tokens count, over the part of
    its window the server did not spend on other calls' prompts (a wave of prompts arriving
    together holds up every slot's decoding: contention, not the call's own slowness)."""
    s, e, n = calls.prefill if phase == "prefill" else calls.decode
    spans = np.flatnonzero(e > s)
    s, e, n = s[spans], e[spans], n[spans]
    concurrent = _concurrent(s, e, n) if phase == "prefill" else n
    judged = np.flatnonzero(n >= MIN_TOKENS)
    s, e, n, concurrent = s[judged], e[judged], n[judged], concurrent[judged]
    concurrent = np.where(n > concurrent, n, concurrent)  # max(concurrent, n)
    seconds = e - s
    charged = seconds if phase == "prefill" else seconds - _prompts(calls).covered(s, e)
    return Rates(
        index=spans[judged].tolist(),
        start=s.tolist(),
        end=e.tolist(),
        tokens=_truncated(n),
        concurrent=concurrent,
        seconds=seconds,
        charged=charged,
        per_token=charged / concurrent,
    )


def _prompts(calls: StallCalls) -> intervals.Union:
    """The time the server spent on prompts: the union of the windows its own prompt times
    give (a call without them adds none: its wait for the first token is not all prompt)."""
    ms = calls.prompt_ms
    timed = np.flatnonzero(~np.isnan(calls.first) & ~np.isnan(ms) & (ms > 0))
    return intervals.Union(calls.first[timed] - ms[timed] / 1000, calls.first[timed])


def _truncated(n: Floats) -> list[int]:
    """int(x) of each of `n` (finite): at once where each fits an int64 exactly."""
    if n.size and n.min() > -(2**53) and n.max() < 2**53:
        return list(n.astype(np.int64).tolist())
    return [int(x) for x in n.tolist()]


def _concurrent(s: Floats, e: Floats, n: Floats) -> Floats:
    """For each window, the tokens of every window that overlaps it (itself included), each
    spread evenly over its own window: Python's sum of the terms in the windows' order."""
    pairs = _overlapping(s, e)
    if pairs is None:
        return np.array(_concurrent_near(s.tolist(), e.tolist(), n.tolist()), dtype=np.float64)
    i, j = pairs
    # n2 * (min(e, e2) - max(s, s2)) / (e2 - s2), each as the loop's min and max pick.
    low = np.where(s[j] > s[i], s[j], s[i])
    high = np.where(e[j] < e[i], e[j], e[i])
    terms = n[j] * (high - low) / (e[j] - s[j])
    # Window by window, each one's terms a run of `terms`: a run of one term is its sum
    # (0 + term: what `sum` gives); longer runs are summed by `sum` itself.
    counts = np.bincount(i, minlength=len(s))
    ends = counts.cumsum()
    out = np.zeros(len(s))
    one = counts == 1
    out[one] = terms[ends[one] - 1] + 0.0
    several = np.flatnonzero(counts > 1).tolist()
    if several:
        listed, stops, lengths = terms.tolist(), ends.tolist(), counts.tolist()
        for w in several:
            out[w] = sum(listed[stops[w] - lengths[w] : stops[w]])
    return out


# The most (window, candidate) pairs weighed at once; beyond, a window at a time.
_MAX_PAIRS = 1 << 22


def _overlapping(s: Floats, e: Floats) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None:
    """Every pair of windows (i, j) that overlap, i ascending, then j: the candidates of
    `intervals.near` (each window that starts before i ends and no longer before i starts
    than the longest window lasts), kept where they overlap. None where the candidates are
    too many to hold at once (a window as long as the job makes every other one one)."""
    m = len(s)
    if not m:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.argsort(s, kind="stable")
    starts = s[order]
    longest = max(0.0, float((e - s).max()))
    lo = np.searchsorted(starts, s - 2 * longest - 4 * np.spacing(np.abs(s)), side="left")
    hi = np.searchsorted(starts, e, side="left")
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    if total > _MAX_PAIRS:
        return None
    i = np.repeat(np.arange(m), counts)
    # Each window's candidates: its run lo..hi of the windows sorted by start.
    j = order[np.arange(total) + np.repeat(lo - (counts.cumsum() - counts), counts)]
    keep = (s[j] < e[i]) & (e[j] > s[i])
    i, j = i[keep], j[keep]
    k = np.lexsort((j, i))
    return i[k], j[k]


def _concurrent_near(s: list[float], e: list[float], n: list[float]) -> list[float]:
    """`_concurrent` a window at a time, against the windows that may overlap it."""
    spans = list(zip(s, e, strict=True))
    near = intervals.near(spans, spans)
    return [
        sum(
            n[j] * (min(e1, e[j]) - max(s1, s[j])) / (e[j] - s[j])
            for j in near[i]
            if s[j] < e1 and e[j] > s1
        )
        for i, (s1, e1) in enumerate(spans)
    ]


@dataclass(frozen=True)
class Waits:
    """Each call with a known wait (its index), when it was sent, and its wait for the server
    less the time the server spent meanwhile on other calls' prompts."""

    index: list[int]
    sent: list[float]
    wait: Floats


def waits(calls: StallCalls) -> Waits:
    """Each call's wait: from its request to the start of its prompt (time to first token less
    the server's own prompt time), less what the union of every call's prompt covers of it."""
    known = np.flatnonzero(
        ~np.isnan(calls.sent) & ~np.isnan(calls.first) & ~np.isnan(calls.prompt_ms)
    )
    sent, got, ms = calls.sent[known], calls.first[known], calls.prompt_ms[known]
    prompt = got - ms / 1000
    union = intervals.Union(prompt, got)
    start = np.where(sent > prompt, sent, prompt)  # max(got - ms / 1000, sent)
    return Waits(
        index=known.tolist(),
        sent=sent.tolist(),
        wait=(start - sent) - union.covered(sent, start),
    )


def unit_spans(calls: StallCalls) -> dict[str, tuple[float, float]]:
    """Each unit's earliest request and latest response among its calls that have both, in
    the order units first appear."""
    lo: dict[str, float] = {}
    hi: dict[str, float] = {}
    for u, s, e in zip(calls.unit, calls.sent.tolist(), calls.done.tolist(), strict=True):
        if s != s or e != e:
            continue
        if u in lo:
            if s < lo[u]:
                lo[u] = s
            if e > hi[u]:
                hi[u] = e
        else:
            lo[u] = s
            hi[u] = e
    return {u: (lo[u], hi[u]) for u in lo}

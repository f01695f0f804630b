"""Interval arithmetic for a job's calls on its clock: which spans may overlap a window, and
how much of a window a set of spans covers. The stall rules ask both of every call, so each
answers from sorted starts in a binary search rather than against every other call (the
second for all of a job's calls at once, as arrays)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def near(
    spans: Sequence[tuple[float, float]], queries: Sequence[tuple[float, float]]
) -> list[list[int]]:
    """For each (start, end) of `queries`, the indices of the `spans` that may overlap it, in
    their order: every span that starts before the query ends and no longer before it starts
    than the longest span lasts. The caller keeps its exact test; this only spares it the
    others."""
    # Comparing every call with every other was 40,000 pairs a job of 200 calls, most of a
    # 1,000-job report's time. The candidates come back in the calls' order so that the
    # caller's sum adds the same terms in the same order: the same figure to the last bit.
    if not spans:
        return [[] for _ in queries]
    order = sorted(range(len(spans)), key=lambda i: spans[i][0])
    starts = [spans[i][0] for i in order]
    longest = max(0.0, max(e - s for s, e in spans))
    out = []
    for s, e in queries:
        # Twice the longest span and a few units of rounding: a margin, never a cut, since a
        # span ending after `s` started at most `longest` (as computed) before it.
        lo = bisect.bisect_left(starts, s - 2 * longest - 4 * math.ulp(s))
        hi = bisect.bisect_left(starts, e)
        out.append(sorted(order[lo:hi]))
    return out


class Union:
    """The union of a set of intervals, merged, with the length covered before each piece:
    how much of any [start, end] the intervals cover, in a binary search."""

    def __init__(self, starts: Floats, ends: Floats) -> None:
        # The intervals (starts[i], ends[i]) that are longer than nothing, sorted as tuples
        # sort; an interval that starts at or before the piece's end so far extends it.
        keep = ends > starts
        a, b = starts[keep], ends[keep]
        order = np.lexsort((b, a))
        a, b = a[order], b[order]
        # The piece's end so far is the running maximum of the ends: a new piece's end is its
        # own, since it starts after every end before it.
        reach = np.maximum.accumulate(b) if len(b) else b
        new = np.ones(len(a), dtype=bool)
        np.greater(a[1:], reach[:-1], out=new[1:])
        heads = np.flatnonzero(new)
        self.starts = a[heads]
        self.ends = reach[np.append(heads[1:] - 1, len(a) - 1)] if len(a) else a
        # The length before each piece: one addition at a time, as a running total.
        self.before = np.add.accumulate(np.append(0.0, self.ends - self.starts))

    def _upto(self, t: Floats) -> Floats:
        """The length covered before each of `t`."""
        if not len(self.starts):
            return np.zeros(len(t))
        i = np.searchsorted(self.starts, t, side="right")
        k = np.maximum(i - 1, 0)
        ends = self.ends[k]
        # before + min(t, end) - start, each as Python's min picks.
        upto = self.before[k] + np.where(ends < t, ends, t) - self.starts[k]
        return np.where(i == 0, 0.0, upto)

    def covered(self, start: Floats, end: Floats) -> Floats:
        """How much of each [start[i], end[i]] the intervals cover (0 for an empty window)."""
        d = self._upto(end) - self._upto(start)
        return np.where(end > start, np.where(d > 0.0, d, 0.0), 0.0)

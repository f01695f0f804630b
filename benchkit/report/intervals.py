"""Interval arithmetic for a job's calls on its clock: which spans may overlap a window, and
how much of a window a set of spans covers. The stall rules ask both of every call, so each
answers from sorted starts in a binary search rather than against every other call."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence


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

    def __init__(self, spans: Sequence[tuple[float, float]]) -> None:
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

    def _upto(self, t: float) -> float:
        """The length covered before `t`."""
        i = bisect.bisect_right(self.starts, t)
        if i == 0:
            return 0.0
        return self.before[i - 1] + min(t, self.ends[i - 1]) - self.starts[i - 1]

    def covered(self, start: float, end: float) -> float:
        return max(0.0, self._upto(end) - self._upto(start)) if end > start else 0.0

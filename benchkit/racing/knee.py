"""What the slots verdict's knee needs from a race: the best's series of slot counts, the
noise the report judges the knee against, and the counts whose further units can no longer
change the knee (`knee_rests`).

The report's knee (benchkit.report.verdicts.kinds.slots.verdict) is the fewest slot count of the
best's series that is within the knee margin of the best count or inside the series' noise of it:
"no different". It never lies above the best count, and once a count is known to be no different, no
count above that one can move it. Such a count needs no more units for the knee, and none for any
other verdict unless it could still be the best, which sets every count's ratio: a count above the
knee that is surely slower than the best rests.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence

from benchkit.racing.stats import Prior, finite, log_ratios, spread, t_quantile, t_sf

# The factor whose verdict is a knee against the best count
# (benchkit.report.verdicts.kinds.slots.verdict).
KNEE_FACTOR = "slots"


def knee_series(points: Mapping[str, Mapping[str, object]], best: str) -> list[str]:
    """The points that differ from `best` in the slot count only: the series whose knee the
    slots verdict takes."""
    keys = {k for v in points.values() for k in v}
    return [
        p
        for p in points
        if p != best
        and [k for k in keys if points[p].get(k) != points[best].get(k)] == [KNEE_FACTOR]
    ]


def series_noise(
    values: Mapping[str, Mapping[str, float]], series: Sequence[str], best: str, units: int
) -> float | None:
    """The knee's noise as the report will take it on the full grid
    (benchkit.report.verdicts.kinds.slots.verdict._series_noise): the largest spread of the series'
    paired log-ratios against the best, as a 95% half-width on `units` units (the workload's). A
    count of the series within it of the best is "no different" there, so the race may not stop it
    on the margin alone. None with no pair of three units."""
    sds = [
        statistics.stdev(x) for p in series if len(x := log_ratios(values[p], values[best])) >= 3
    ]
    if not sds or units < 2:
        return None
    return math.exp(t_quantile(0.975, units - 1) * max(sds) / math.sqrt(units)) - 1


def knee_rests(
    values: Mapping[str, Mapping[str, float]],
    points: Mapping[str, Mapping[str, object]],
    series: Sequence[str],
    best: str,
    running: Collection[str],
    stopped: Collection[str],
    bound: float,
    prior: Prior | None,
    confidence: float,
    total_units: int = 0,
    bound_units: int | None = None,
) -> tuple[set[str], set[str]]:
    """The `running` counts of `series` (the best's series) that rest, and every count above
    the knee, whose pair with the best no longer matters.

    The knee is at most the fewest count whose ratio to the best is surely within `bound`
    (the knee margin or the series' noise, the larger; a `stopped` count is not, the report
    takes it as worse), and at most the best's own count. A
    running count above it rests where it is surely slower than the best: it can neither be
    the knee nor the best. "Surely" is at `confidence`, on the full grid's figure over the
    workload's `total_units` (`finite`; 0: over an unbounded population of units), with the
    pair's spread moderated by the round's `prior`. Within `bound` is judged on
    `bound_units` (`total_units` where not given): 0 where the bound is the series' noise,
    which the race estimates, and an interval over an unbounded population covers its error."""
    counts = {p: _count(points[p].get(KNEE_FACTOR)) for p in [best, *series]}
    if any(c is None for c in counts.values()):
        return set(), set()
    within = total_units if bound_units is None else bound_units
    inside = [
        q
        for q in series
        if q not in stopped
        and _interval(log_ratios(values[q], values[best]), prior, confidence, within)[1]
        < math.log1p(bound)
    ]
    knee_at = min(int(counts[q] or 0) for q in [best, *inside])
    above = {q for q in series if int(counts[q] or 0) > knee_at}
    rest = {
        q
        for q in above
        if q in running
        and _slower(log_ratios(values[q], values[best]), prior, confidence, total_units)
    }
    return rest, above


def _count(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _interval(
    xs: Sequence[float], prior: Prior | None, confidence: float, total_units: int
) -> tuple[float, float]:
    """The two-sided interval at `confidence` of the full grid's mean log-ratio, as
    policy.pair_decided takes it; unbounded with fewer than two units."""
    if len(xs) < 2:
        return -math.inf, math.inf
    sd, dof = spread(xs, prior)
    se = max(max(sd, 1e-9) / math.sqrt(len(xs)) * finite(len(xs), total_units), 1e-12)
    half = t_quantile((1 + confidence) / 2, dof) * se
    mean = statistics.fmean(xs)
    return mean - half, mean + half


def _slower(xs: Sequence[float], prior: Prior | None, confidence: float, total_units: int) -> bool:
    """Is the point surely slower than the best (one-sided, at `confidence`)?"""
    if len(xs) < 2:
        return False
    sd, dof = spread(xs, prior)
    se = max(max(sd, 1e-9) / math.sqrt(len(xs)) * finite(len(xs), total_units), 1e-12)
    return t_sf(statistics.fmean(xs) / se, dof) < 1 - confidence

"""The questions verdicts ask of the comparison engine, each answered from comparisons alone:
the knee of a series of counts, and the best of a set of points.

A verdict's value comes from the comparisons' figures (so every number it states is a field of
one); it is complete only when every comparison it rests on is decided the way the value needs,
and otherwise names the open comparisons and the units each would need."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from benchkit.compare.engine import ACROSS, BETTER, OPEN, WITHIN, WORSE, Comparison, Engine


@dataclass(frozen=True)
class Knee:
    """The knee of a series (`points` in increasing count): the fewest point whose figure is
    within the margin of the best point's, every point before it more than the margin worse.
    `rests_on` holds every point against the best; `open` those not decided the way the knee
    needs (a point before the knee decided worse, the knee itself decided not worse, any other
    point decided not faster than the best beyond the margin). `reached` is False when the
    knee is the last point of several: the series was still improving where it stopped."""

    knee: str | None
    best: str | None
    reached: bool
    rests_on: list[Comparison] = field(default_factory=list)
    open: list[Comparison] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # Points before the knee that only a comparison across machines put beyond the margin:
    # two cards of one model differ on one point by more than a margin, so the knee may lie
    # at any of them (rules v11).
    across: list[Comparison] = field(default_factory=list)
    # Where the knee may lie while comparisons are open (rules v11): `low`, the fewest point
    # not decided slower than the best beyond the margin (every point below it decided so);
    # `high`, the best where the knee itself is not decided within the margin of it. Both
    # are the knee where its comparisons are decided.
    low: str | None = None
    high: str | None = None
    # Points above the knee not settled against the best (open, or compared only across
    # machines): any of them could be the faster beyond the margin, so the knee may lie up
    # to the last of them, and "no larger count was faster" is not established (rules v13).
    above: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.open and not self.missing


def _ratio(c: Comparison | None, figures: Mapping[str, float], base: str, other: str) -> float:
    if c is not None and c.ratio is not None:
        return c.ratio
    return figures[other] / figures[base] if figures.get(base) else math.inf


def knee(engine: Engine, points: Sequence[str], figures: Mapping[str, float]) -> Knee:
    """The knee of `points` (eligible points of one series, in increasing count), `figures`
    their objective (lower is better), the best being the lowest."""
    pts = [p for p in points if p in figures]
    if not pts:
        return Knee(None, None, False)
    best = min(pts, key=lambda p: (figures[p], pts.index(p)))
    margin = engine.settings.margin
    rests: list[Comparison] = []
    open_: list[Comparison] = []
    missing: list[str] = []
    across: list[Comparison] = []
    chosen = best
    for p in pts:
        if p == best:
            chosen = best
            break
        c = engine.compare(best, p)
        if c is None:
            missing.append(p)
        else:
            rests.append(c)
        if _ratio(c, figures, best, p) <= 1 + margin:
            chosen = p
            if c is not None and c.outcome not in (WITHIN, BETTER):
                open_.append(c)
            break
        if c is not None and c.outcome != WORSE:
            open_.append(c)
        if c is not None and c.machine == ACROSS:
            across.append(c)
    # The knee is measured from the best, so it rests on no other point being faster than
    # the best beyond the margin: each point the walk above did not compare is compared with
    # the best too, and one that could be (its interval reaches past the margin, or it was
    # measured only on another machine) leaves the knee open.
    compared = {c.other for c in rests} | set(missing)
    floor = 1 / (1 + margin)
    for p in pts:
        if p == best or p in compared:
            continue
        c = engine.compare(best, p)
        if c is None:
            missing.append(p)
            continue
        rests.append(c)
        settled = c.outcome in (WORSE, WITHIN) or (
            c.outcome == OPEN and c.machine != ACROSS and c.low is not None and c.low > floor
        )
        if not settled:
            open_.append(c)
    reached = not (chosen == pts[-1] and len(pts) > 1)
    low, high = _range(pts, chosen, best, {c.other: c for c in rests})
    above = tuple(
        p
        for p in pts[pts.index(chosen) + 1 :]
        if p in missing
        or any(c.other == p for c in open_)
        # The best itself, where the knee's own comparison with it is open.
        or (p == best and any(c.other == chosen for c in open_))
    )
    if above and pts.index(above[-1]) > pts.index(high):
        high = above[-1]
    return Knee(chosen, best, reached, rests, open_, missing, across, low, high, above)


def _range(
    pts: Sequence[str], knee: str, best: str, against: Mapping[str, Comparison]
) -> tuple[str, str]:
    """The points the knee may be while comparisons are open: from the fewest point not
    decided worse than the best (a point below the knee whose comparison is open, across
    machines or missing could be within the margin: the knee), to the best where the knee's
    own comparison is not decided within the margin (it could be beyond it: the knee lies
    above)."""
    low = knee
    for p in pts[: pts.index(knee)]:
        c = against.get(p)
        if c is None or c.outcome != WORSE:
            low = p
            break
    own = against.get(knee)
    high = best if knee != best and (own is None or own.outcome not in (WITHIN, BETTER)) else knee
    return low, high


@dataclass(frozen=True)
class Best:
    """The best of a set of points and every other point against it: complete when each of
    those comparisons is decided (worse beyond the margin, or within it)."""

    best: str | None
    against: list[Comparison] = field(default_factory=list)
    open: list[Comparison] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.open and not self.missing


def best_of(engine: Engine, points: Sequence[str], figures: Mapping[str, float]) -> Best:
    """The lowest-figure point of `points` and each other point compared with it."""
    pts = [p for p in points if p in figures]
    if not pts:
        return Best(None)
    best = min(pts, key=lambda p: (figures[p], pts.index(p)))
    against: list[Comparison] = []
    missing: list[str] = []
    for p in pts:
        if p == best:
            continue
        c = engine.compare(best, p)
        if c is None:
            missing.append(p)
        else:
            against.append(c)
    return Best(best, against, [c for c in against if c.outcome == OPEN], missing)


__all__ = ["BETTER", "OPEN", "WITHIN", "WORSE", "Best", "Knee", "best_of", "knee"]

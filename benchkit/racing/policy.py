"""The racing policy, purely: which points of a sweep stop and which get more units.

Every point of a race is measured on the same units in the same order, so two points can be
compared unit by unit. After each round the point with the lowest objective (lower is better)
is the current best, and every other running point is compared with it by a one-sided
**paired** t-test on the per-unit log-ratio `log(point / best)` over the units both have: a
point is stopped when it is worse than the best by more than the practical margin with the
study's confidence. With few shared units the spread of one pair's log-ratios is itself
unsure, so it is moderated by the other pairs' (an empirical-Bayes prior, Smyth's moderated
t: borrowed whole where the pairs share one spread, little where they differ). The
comparisons of one round are corrected together with Holm's method, so `confidence` holds for
the round as a whole, not per comparison.

A running point whose log-ratio is inside the margin on both sides with the same confidence
(two one-sided tests) is *settled*: it is practically as good as the best and gets no more
units. The survivors get `units_per_round` more units until none is undecided, `max_units`
is reached, or the next round would spend more than the budget.

The race's target is the full grid's verdicts, and the full grid judges a verdict pair on its
point estimate over the workload's N units, a finite set the race partly measured: a pair is
decided once the full grid's ratio is known well enough, with the N - n unmeasured units as
its only unknown (`finite`), so a pair that sits inside a bound is decided at the latest when
every unit is measured, not left open for ever.

Nothing here measures or reads files: `observe` reads per-unit values from job folders, the
sweeper plugin (hydra_plugins/benchkit_racing) runs the rounds, bench/racing.py replays
recorded grids through `simulate`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from benchkit.racing.knee import KNEE_FACTOR, knee_rests, knee_series, series_noise
from benchkit.racing.stats import (
    Prior,
    finite,
    holm,
    log_ratios,
    prior_of,
    spread,
    t_quantile,
    t_sf,
)

# Point status after a round.
RUNNING = "running"
BEST = "best"
STOPPED = "stopped"
SETTLED = "settled"
# Where a test's interval is of the full grid's figure on the workload's finite set of units
# (`finite`) rather than of a mean over an unbounded population of units: nowhere, in the
# verdict pairs (the default), or in every test (stop, settle, verdict pairs).
Finite = Literal["none", "verdict_pairs", "every_test"]
FINITE_NONE: Finite = "none"
FINITE_PAIRS: Finite = "verdict_pairs"
FINITE_ALL: Finite = "every_test"
FINITE_CHOICES: dict[str, Finite] = {f: f for f in (FINITE_NONE, FINITE_PAIRS, FINITE_ALL)}


@dataclass(frozen=True)
class RaceSettings:
    """The sweeper's options (hydra/sweeper=racing), checked before anything is measured."""

    confidence: float = 0.95
    margin: float = 0.05
    min_units: int = 3
    units_per_round: int = 2
    max_units: int | None = None
    budget_s: float | None = None
    settle: bool = True
    # The full grid's verdict pairs are judged on their point estimate over the workload's N
    # units; the race predicts that figure (`finite`). Stop and settle keep the unbounded
    # population's interval: it covers the error of the series noise they are judged against,
    # which the race estimates from pairs it stopped early (docs/perf/racing.md).
    finite: Finite = FINITE_PAIRS
    # Rest the slot counts whose units can no longer change the knee (benchkit.racing.knee).
    knee_rest: bool = True

    def check(self) -> None:
        """One sentence naming the option and the fix, for a value that cannot race."""
        if not 0.5 < self.confidence < 1:
            raise ValueError(
                f"hydra.sweeper.confidence={self.confidence} must be between 0.5 and 1 (e.g. 0.95)."
            )
        if not 0 <= self.margin < 1:
            raise ValueError(
                f"hydra.sweeper.margin={self.margin} must be a share between 0 and 1 "
                "(e.g. 0.05 for 5%)."
            )
        if self.min_units < 2:
            raise ValueError(
                f"hydra.sweeper.min_units={self.min_units} must be at least 2: a paired "
                "comparison needs two units."
            )
        if self.units_per_round < 1:
            raise ValueError(
                f"hydra.sweeper.units_per_round={self.units_per_round} must be at least 1."
            )
        if self.max_units is not None and self.max_units < self.min_units:
            raise ValueError(
                f"hydra.sweeper.max_units={self.max_units} is below min_units="
                f"{self.min_units}: raise max_units or lower min_units."
            )
        if self.finite not in FINITE_CHOICES:
            raise ValueError(
                f"hydra.sweeper.finite={self.finite} must be one of {', '.join(FINITE_CHOICES)}."
            )
        # nan compares false both ways (a budget never spent) and inf is no budget either.
        if self.budget_s is not None and not (0 < self.budget_s < math.inf):
            raise ValueError(
                f"hydra.sweeper.budget_h={self.budget_s / 3600:g} must be a number of hours "
                "above 0 (or null for no budget)."
            )


@dataclass(frozen=True)
class Comparison:
    """`point` against the round's best on the units both have.

    `ratio` is point / best (geometric mean of the per-unit ratios, >1: slower); `p_worse` the
    one-sided p-value of "worse by more than the margin"; `p_adjusted` after Holm's correction."""

    point: str
    best: str
    units: int
    ratio: float
    p_worse: float
    p_adjusted: float = 1.0
    p_within: float = 1.0


@dataclass
class RoundDecision:
    """What one round decided: each point's status, and the comparisons behind it."""

    best: str
    status: dict[str, str]
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    # Points out of contention that a factor's verdict still needs measured (`verdict_pairs`).
    for_verdicts: list[str] = field(default_factory=list)

    @property
    def undecided(self) -> list[str]:
        running = [p for p, s in self.status.items() if s == RUNNING]
        return running + [p for p in self.for_verdicts if p not in running]


# --------------------------------------------------------------------------- one round


def best_of(values: Mapping[str, Mapping[str, float]], candidates: Sequence[str]) -> str:
    """The candidate with the lowest objective: lowest mean log-ratio against the candidate
    with the most units (ties by name), so unit difficulty cancels when units differ."""
    ref = max(candidates, key=lambda p: (len(values[p]), p))

    def score(p: str) -> tuple[float, str]:
        logs = log_ratios(values[p], values[ref]) if p != ref else [0.0]
        return (statistics.fmean(logs) if logs else math.inf, p)

    return min(candidates, key=score)


def decide(
    values: Mapping[str, Mapping[str, float]],
    settings: RaceSettings,
    stopped: Sequence[str] = (),
    pairs: Sequence[tuple[str, str]] = (),
    thresholds: Sequence[float] = (),
    points: Mapping[str, Mapping[str, object]] | None = None,
    total_units: int = 0,
) -> RoundDecision:
    """One round: the best of the points not yet stopped, and each other point's status.

    `values` maps point -> {unit: objective value} (units in measuring order); points in
    `stopped` stay stopped; a point settled earlier is compared again, and runs again if it
    is no longer within the margin. With `points` (point -> factor values) and the
    workload's `total_units`, a slot count of the best's series is stopped only when worse
    than the best by more than the margin and the series' noise (`series_noise`), and a
    verdict pair of that series is decided against that noise too: the knee takes a count
    within it as no different from the best."""
    alive = [p for p in values if p not in stopped and values[p]]
    status = {p: STOPPED for p in stopped if p in values}
    if not alive:
        raise ValueError("no point has a measured unit to race on")
    best = best_of(values, alive)
    status[best] = BEST
    others = [p for p in alive if p != best]
    logs = {p: log_ratios(values[p], values[best]) for p in others}
    pair_logs = {pair: log_ratios(values[pair[1]], values[pair[0]]) for pair in pairs}
    # One prior for the round: every comparison with the best and every verdict pair.
    prior = prior_of([*logs.values(), *pair_logs.values()])
    series = knee_series({p: points[p] for p in values}, best) if points else []
    noise = series_noise(values, series, best, total_units) if series else None
    wide = math.log1p(max(settings.margin, noise or 0.0))
    worse_p: dict[str, float] = {}
    within_p: dict[str, float] = {}
    comps: dict[str, Comparison] = {}
    margin = math.log1p(settings.margin)
    for p in others:
        xs = logs[p]
        n = len(xs)
        mean = statistics.fmean(xs) if xs else 0.0
        if n < 2:
            worse_p[p], within_p[p] = 1.0, 1.0
        else:
            sd, dof = spread(xs, prior)
            fpc = finite(n, total_units) if settings.finite == FINITE_ALL else 1.0
            se = max(max(sd, 1e-9) / math.sqrt(n) * fpc, 1e-12)
            worse_p[p] = t_sf((mean - (wide if p in series else margin)) / se, dof)
            # Two one-sided tests: inside (-bound, +bound) with the same confidence.
            within_p[p] = max(t_sf((margin - mean) / se, dof), t_sf((mean + margin) / se, dof))
        comps[p] = Comparison(p, best, n, math.exp(mean), worse_p[p])
    alpha = 1 - settings.confidence
    adj_worse, reject_worse = holm(worse_p, alpha)
    adj_within, reject_within = holm(within_p, alpha)
    for p in others:
        c = comps[p]
        comps[p] = Comparison(p, best, c.units, c.ratio, c.p_worse, adj_worse[p], adj_within[p])
        if p in reject_worse:
            status[p] = STOPPED
        elif settings.settle and p in reject_within:
            status[p] = SETTLED
        else:
            status[p] = RUNNING
    knee_bounds = [*thresholds, *([noise] if noise else [])]
    # The full grid's figure over its finite units (`finite`), where the bound it is judged
    # against is known. The series' noise is itself estimated from the race's units, some of
    # them on pairs stopped early (docs/perf/racing.md: 0.86-1.36 of the full grid's at the
    # race's end); an interval over an unbounded population of units is what covers its error,
    # so a pair held to it keeps that interval unless every test is finite.
    whole = total_units if settings.finite != FINITE_NONE else 0
    known = whole if settings.finite == FINITE_ALL or not noise else 0
    if settings.knee_rest and series and points:
        running = [p for p in others if status[p] == RUNNING]
        rest, above = knee_rests(
            values,
            points,
            series,
            best,
            running,
            [q for q in series if status.get(q) == STOPPED],
            max(settings.margin, noise or 0.0),
            prior,
            settings.confidence,
            whole,
            known if (noise or 0.0) > settings.margin else whole,
        )
        status.update(dict.fromkeys(rest, SETTLED))
        # The knee pair of a count above the knee cannot move the knee.
        pairs = [pair for pair in pairs if not (best in pair and set(pair) & above)]
    open_pairs = [
        pair
        for pair in pairs
        if not (
            pair_decided(values, pair, knee_bounds, settings.confidence, prior, known)
            if best in pair and set(pair) & set(series)
            else pair_decided(values, pair, thresholds, settings.confidence, prior, whole)
        )
    ]
    needed = sorted({p for pair in open_pairs for p in pair if status.get(p) != BEST})
    return RoundDecision(best, status, comps, needed)


def pair_decided(
    values: Mapping[str, Mapping[str, float]],
    pair: tuple[str, str],
    thresholds: Sequence[float],
    confidence: float,
    prior: Prior | None = None,
    total_units: int = 0,
) -> bool:
    """Is the ratio of two points decided against every relative threshold a verdict holds
    it to (the margin, a declared noise)? Decided when the ratio's two-sided interval at
    `confidence`, on the units both have, lies wholly on one side of each bound `1 - t` and
    `1 + t`. A pair near a bound stays open: its verdict would flip with the units drawn.
    The pair's spread is moderated by the round's `prior`, as in `decide`. With the workload's
    `total_units`, the interval is of the full grid's ratio over them (`finite`): what the
    full grid's verdict judges against the bounds is its point estimate on those units."""
    a, b = pair
    xs = log_ratios(values[b], values[a])
    if len(xs) < 2:
        return False
    mean = statistics.fmean(xs)
    sd, dof = spread(xs, prior)
    se = max(max(sd, 1e-9) / math.sqrt(len(xs)) * finite(len(xs), total_units), 1e-12)
    # The two-sided critical value: the t with (1 - confidence) / 2 above it.
    crit = t_quantile((1 + confidence) / 2, dof)
    lo, hi = mean - crit * se, mean + crit * se
    for t in thresholds:
        # A noise of 100% or more has no lower bound: no ratio is below 1 - t (the H100
        # study's 2-slot series measured 120%, and the replay of that shape crashed here).
        bounds = (math.log1p(t),) if t >= 1 else (math.log1p(-t), math.log1p(t))
        for bound in bounds:
            if lo <= bound <= hi:
                return False
    return True


def verdict_pairs(points: Mapping[str, Mapping[str, object]], best: str) -> list[tuple[str, str]]:
    """The pairs a factor's verdict compares near the best: two points that differ in one
    factor only, each differing from the best in at most one other factor (MTP on against
    off at each slot count of the best's backend; the backends at each slot count with the
    best's MTP setting). The slots verdict (the knee) compares each slot count with the best
    count only, in the best's series, so a pair differing in slots is watched only when it
    holds the best."""
    keys = sorted({k for v in points.values() for k in v})

    def diff(x: str, y: str) -> list[str]:
        return [k for k in keys if points[x].get(k) != points[y].get(k)]

    names = sorted(points)
    out = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            d = diff(x, y)
            if len(d) != 1 or (d[0] == KNEE_FACTOR and best not in (x, y)):
                continue
            if all(len([k for k in diff(p, best) if k != d[0]]) <= 1 for p in (x, y)):
                out.append((x, y))
    return out


def first_round(
    points: Sequence[str], settings: RaceSettings, total_units: int, slots: Mapping[str, int]
) -> dict[str, int]:
    """Each point's units in the first round: `min_units`, or one a slot where the point has
    more slots (`slots`: point -> its parallel slots), rounded up to a whole number of units a
    slot, within the workload's units."""
    cap = min(total_units, settings.max_units or total_units)
    return {
        p: _whole(max(settings.min_units, slots.get(p, 1)), slots.get(p, 1), cap) for p in points
    }


def _whole(units: int, slots: int, cap: int) -> int:
    """`units` rounded up to a multiple of `slots`, within `cap`. A pass of 3 units on 2 slots
    runs its third unit after the first two, mostly alone: its time is not the others' kind
    (the H100 study's 2-slot job: 6.9 s against 11.6 and 13.3), and the per-unit noise the
    slot verdict is judged against took it for the server's."""
    return min(cap, -(-units // max(slots, 1)) * max(slots, 1))


def next_round(
    decision: RoundDecision,
    units_done: Mapping[str, int],
    settings: RaceSettings,
    total_units: int,
    unit_cost_s: Mapping[str, float],
    spent_s: float,
    slots: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """How many units each point should have after the next round ({} when the race is
    over): the best and the undecided points get `units_per_round` more, or one a slot where
    a point has more slots, within `max_units`, the workload's units and the budget. A round
    of fewer units than slots would leave slots idle, and its throughput-basis time per unit
    would be worse than a full pass's: the race would measure something else at high slot
    counts than the full grid."""
    if not decision.undecided:
        return {}
    cap = min(total_units, settings.max_units or total_units)
    want: dict[str, int] = {}
    for p in [decision.best, *decision.undecided]:
        k = (slots or {}).get(p, 1)
        n = _whole(units_done.get(p, 0) + max(settings.units_per_round, k), k, cap)
        if n > units_done.get(p, 0):
            want[p] = n
    if not want:
        return {}
    if settings.budget_s is not None:
        cost = sum((n - units_done.get(p, 0)) * unit_cost_s.get(p, 0.0) for p, n in want.items())
        if spent_s + cost > settings.budget_s:
            return {}
    return want


# --------------------------------------------------------------------------- replay


@dataclass
class RaceOutcome:
    """A whole race: each point's units measured, final status, and the last comparisons."""

    units: dict[str, int]
    status: dict[str, str]
    best: str
    comparisons: dict[str, Comparison]
    spent_s: float
    rounds: int
    # How many times each point's job was launched (its first round and each extension).
    launches: dict[str, int] = field(default_factory=dict)
    # Each stopped point -> the best it was stopped against (what racing.json records).
    stopped_by: dict[str, str] = field(default_factory=dict)

    def share_of(self, full_s: float) -> float:
        return self.spent_s / full_s if full_s else 0.0


def simulate(
    per_unit: Mapping[str, Sequence[float]],
    cost: Mapping[str, Sequence[float]],
    settings: RaceSettings,
    points: Mapping[str, Mapping[str, object]] | None = None,
    thresholds: Sequence[float] = (),
    start_s: Mapping[str, float] | None = None,
    slots: Mapping[str, int] | None = None,
) -> RaceOutcome:
    """Race recorded per-unit values (point -> values in the order the race measures them)
    and their machine time per unit: what a racing sweep would have measured and decided.
    With `points` (point -> its factor values), the pairs a verdict compares near the best
    are measured until decided against `thresholds` (verdict_pairs, pair_decided). With
    `start_s` (point -> the seconds a launch of its job costs besides its units: server
    start, warm-up, teardown), every launch is charged: a race launches a point once a round
    it takes part in, the full grid once. With `slots` (point -> its parallel slots), a
    round gives a point at least one unit a slot (`first_round`, `next_round`)."""
    total = min(len(v) for v in per_unit.values())
    units = first_round(list(per_unit), settings, total, slots or {})
    launches = dict.fromkeys(per_unit, 1)
    stopped: list[str] = []
    stopped_by: dict[str, str] = {}
    rounds = 0
    while True:
        rounds += 1
        values = {p: {str(i): float(per_unit[p][i]) for i in range(units[p])} for p in per_unit}
        pairs = (
            verdict_pairs(points, best_of(values, [p for p in values if p not in stopped]))
            if points
            else []
        )
        decision = decide(values, settings, stopped, pairs, thresholds, points, total)
        stopped = [p for p, s in decision.status.items() if s == STOPPED]
        for p in stopped:
            stopped_by.setdefault(p, decision.best)
        spent = sum(sum(cost[p][: units[p]]) for p in per_unit)
        if start_s:
            spent += sum(launches[p] * start_s.get(p, 0.0) for p in per_unit)
        unit_cost = {p: statistics.fmean(cost[p][: units[p]]) for p in per_unit}
        want = next_round(decision, units, settings, total, unit_cost, spent, slots)
        if not want:
            return RaceOutcome(
                dict(units),
                decision.status,
                decision.best,
                decision.comparisons,
                spent,
                rounds,
                launches,
                stopped_by,
            )
        units.update(want)
        for p in want:
            launches[p] += 1

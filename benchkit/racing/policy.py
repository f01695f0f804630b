"""The racing policy, purely: which points of a sweep stop and which get more units.

Every point of a race is measured on the same units in the same order, so two points can be
compared unit by unit. After each round the point with the lowest objective (lower is better)
is the current best, and every other point is compared with it by the comparison engine the
report's verdicts ask (benchkit.compare, through benchkit.racing.judge), on the race's
observations so far, each unit with the machine that measured it:

- a point is **stopped** only where the engine decides it `worse` than the best (its
  replication interval wholly above 1 + margin, on one machine or bridged through an anchor
  point measured on both machines); a point stopped earlier is judged again each round
  against the current best, and runs again where the engine no longer calls it worse;
- a point is **settled** (practically as good as the best, no more units) only where the
  engine decides it `within` the margin;
- a **verdict pair** is decided only where the engine decides it (outcome not open).

So a raced point and the report cannot disagree: the race stops nothing the report's engine
would leave open on the same units, and two points measured on different machines with no
anchor point between them are never decided by the race (the pair is measured further, or
reported open when the race ends).

The race's own statistics (a one-sided paired t-test on the per-unit log-ratio with its
spread moderated by the other pairs', Smyth's moderated t, Holm-corrected across the round;
and the finite-population interval of the full grid's figure, `finite`) stay for what they
are good at, prioritising units: they are recorded beside each comparison, and they rest the
slot counts above the knee whose further units cannot move it (benchkit.racing.knee). They
never stop a point. The survivors get `units_per_round` more units until none is undecided,
`max_units` is reached, or the next round would spend more than the budget.

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

from benchkit.compare.engine import OPEN, WITHIN, WORSE
from benchkit.compare.engine import Comparison as EngineComparison
from benchkit.racing.judge import Anchored, Machines, outcome_of, race_engine
from benchkit.racing.knee import KNEE_FACTOR, knee_rests, knee_series, series_noise
from benchkit.racing.stats import Prior, finite, holm, log_ratios, prior_of, spread, t_sf

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
    # which the race estimates from pairs it stopped early (docs/perf/racing/racing.md).
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
    one-sided p-value of "worse by more than the margin"; `p_adjusted` after Holm's correction
    (the race's moderated statistics, for the record). `outcome`, `machine` and `via` are the
    engine's: what decided the point's status (benchkit.compare.engine)."""

    point: str
    best: str
    units: int
    ratio: float
    p_worse: float
    p_adjusted: float = 1.0
    p_within: float = 1.0
    outcome: str = "open"
    machine: str = "same"
    via: str | None = None


@dataclass
class RoundDecision:
    """What one round decided: each point's status, and the comparisons behind it."""

    best: str
    status: dict[str, str]
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    # Points out of contention that a factor's verdict still needs measured (`verdict_pairs`).
    for_verdicts: list[str] = field(default_factory=list)
    # The verdict pairs the engine left open this round (what a resumed race anchors for).
    open_pairs: list[tuple[str, str]] = field(default_factory=list)

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
    machines: Machines | None = None,
    anchors: Anchored | None = None,
) -> RoundDecision:
    """One round: the best of the points not yet stopped, and each other point's status.

    `values` maps point -> {unit: objective value} (units in measuring order), `machines`
    point -> {unit: the machine that measured it} (absent: one machine), `anchors` the units
    measured again on another machine (benchkit.racing.anchors). Every other point is
    judged by the engine against the best (the module's docstring): stopped where it is
    `worse`, settled where `within`, running otherwise; a point in `stopped` is judged again
    and runs again where it is no longer worse. A verdict pair in `pairs` is open until the
    engine decides it. `thresholds` are the verdicts' relative bounds, the margin first and
    the study's declared noise after it: the engine takes that noise for a pair with too few
    units for a paired interval, as the report's engine does. With `points` (point -> factor
    values) and the workload's `total_units`, the slot counts above the knee that cannot move
    it rest (benchkit.racing.knee, on the race's moderated
    statistics against the margin or the series' noise)."""
    alive = [p for p in values if p not in stopped and values[p]]
    status = {p: STOPPED for p in stopped if p in values}
    if not alive:
        raise ValueError("no point has a measured unit to race on")
    best = best_of(values, alive)
    status[best] = BEST
    noise = max(thresholds[1:]) if len(thresholds) > 1 else None
    eng = race_engine(values, machines or {}, settings.margin, settings.confidence, noise, anchors)
    others = [p for p in values if p != best and values[p]]
    logs = {p: log_ratios(values[p], values[best]) for p in others}
    prior = prior_of(list(logs.values()))
    series = knee_series({p: points[p] for p in values}, best) if points else []
    noise_s = series_noise(values, series, best, total_units) if series else None
    comps = _moderated(logs, best, settings, total_units, prior)
    for p in others:
        c = eng.compare(best, p)
        comps[p] = _with_engine(comps[p], c)
        outcome = outcome_of(c)
        if outcome == WORSE:
            status[p] = STOPPED
        elif settings.settle and outcome == WITHIN:
            status[p] = SETTLED
        else:
            status[p] = RUNNING
    if settings.knee_rest and series and points:
        # Prioritising only: a resting count is neither stopped nor settled by the engine, and
        # the report's knee rests on no pair of a count above the knee.
        whole = total_units if settings.finite != FINITE_NONE else 0
        known = whole if settings.finite == FINITE_ALL or not noise_s else 0
        rest, above = knee_rests(
            values,
            points,
            series,
            best,
            [p for p in others if status[p] == RUNNING],
            [q for q in series if status.get(q) == STOPPED],
            max(settings.margin, noise_s or 0.0),
            prior,
            settings.confidence,
            whole,
            known if (noise_s or 0.0) > settings.margin else whole,
        )
        status.update(dict.fromkeys(rest, SETTLED))
        # The knee pair of a count above the knee cannot move the knee.
        pairs = [pair for pair in pairs if not (best in pair and set(pair) & above)]
    open_pairs = [pair for pair in pairs if not pair_decided(eng.compare(*pair))]
    needed = sorted({p for pair in open_pairs for p in pair if status.get(p) != BEST})
    return RoundDecision(best, status, comps, needed, open_pairs)


def _moderated(
    logs: Mapping[str, Sequence[float]],
    best: str,
    settings: RaceSettings,
    total_units: int,
    prior: Prior | None,
) -> dict[str, Comparison]:
    """Each point's moderated paired test against the best, Holm-corrected across the round:
    the race's own statistics, recorded beside the engine's outcome (they decide nothing)."""
    worse_p: dict[str, float] = {}
    within_p: dict[str, float] = {}
    comps: dict[str, Comparison] = {}
    margin = math.log1p(settings.margin)
    for p, xs in logs.items():
        n = len(xs)
        mean = statistics.fmean(xs) if xs else 0.0
        if n < 2:
            worse_p[p], within_p[p] = 1.0, 1.0
        else:
            sd, dof = spread(xs, prior)
            fpc = finite(n, total_units) if settings.finite == FINITE_ALL else 1.0
            se = max(max(sd, 1e-9) / math.sqrt(n) * fpc, 1e-12)
            worse_p[p] = t_sf((mean - margin) / se, dof)
            # Two one-sided tests: inside (-bound, +bound) with the same confidence.
            within_p[p] = max(t_sf((margin - mean) / se, dof), t_sf((mean + margin) / se, dof))
        comps[p] = Comparison(p, best, n, math.exp(mean), worse_p[p])
    alpha = 1 - settings.confidence
    adj_worse, _ = holm(worse_p, alpha)
    adj_within, _ = holm(within_p, alpha)
    for p, c in comps.items():
        comps[p] = Comparison(p, best, c.units, c.ratio, c.p_worse, adj_worse[p], adj_within[p])
    return comps


def _with_engine(c: Comparison, e: EngineComparison | None) -> Comparison:
    """The race's comparison with the engine's outcome, machine and anchor beside it."""
    if e is None:
        return c
    return Comparison(
        c.point,
        c.best,
        c.units,
        c.ratio,
        c.p_worse,
        c.p_adjusted,
        c.p_within,
        e.outcome,
        e.machine,
        e.via,
    )


def pair_decided(c: EngineComparison | None) -> bool:
    """Is a verdict pair decided? Only where the engine decides it (worse, better or within
    the margin, on one machine or bridged): a pair the report's engine would leave open stays
    open for the race too, and is measured further or reported open."""
    return outcome_of(c) != OPEN


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
    machines: Mapping[str, Sequence[str]] | None = None,
) -> RaceOutcome:
    """Race recorded per-unit values (point -> values in the order the race measures them)
    and their machine time per unit: what a racing sweep would have measured and decided.
    With `points` (point -> its factor values), the pairs a verdict compares near the best
    are measured until the engine decides them (verdict_pairs, pair_decided). With
    `start_s` (point -> the seconds a launch of its job costs besides its units: server
    start, warm-up, teardown), every launch is charged: a race launches a point once a round
    it takes part in, the full grid once. With `slots` (point -> its parallel slots), a
    round gives a point at least one unit a slot (`first_round`, `next_round`). With
    `machines` (point -> the machine of each unit, in the same order), each unit is compared
    as measured there (`decide`)."""
    where = {p: {str(i): str(m) for i, m in enumerate(ms)} for p, ms in (machines or {}).items()}
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
        decision = decide(values, settings, stopped, pairs, thresholds, points, total, where)
        stopped = [p for p, s in decision.status.items() if s == STOPPED]
        # Each stopped point is judged again every round: the best it is worse than now.
        stopped_by = {p: decision.best for p in stopped}
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

"""Comparisons between two points of a sweep, paired on the units both ran, within one
machine or bridged across machines through an anchor point measured on both.

A comparison's figure is `ratio`: the other point's time over the base's, on their shared
units (both ran every unit: exactly the ratio of their seconds per unit), a ratio of sums.
Its interval is a *replication* interval: where, at the study's confidence, the same
comparison run again would put its figure. Per unit, the residual other - ratio x base is one
paired observation; their spread over the units, over the other's mean time, gives the
standard error of the log of that ratio (the ratio estimator's linearisation, so the interval
is centred on the figure itself), and a replication's figure differs from this one's by
sqrt(2) of that. A comparison is decided when that interval clears the margin:

- `worse`: the other point took more than (1 + margin) the base's time;
- `better`: it took less than 1 / (1 + margin);
- `within`: it lies inside both bounds;
- `open`: the interval straddles a bound, or no interval exists (fewer than three paired
  units and no repeats, or machines that no anchor bridges).

Why replication and not a confidence interval of this run's figure: a verdict is meant to hold
when the study is run again. Deciding at the replication interval means a second identical
run puts its figure on the same side of the margin with at least the study's confidence, so
two identical sweeps give the same answer, or one of them says it is provisional. No
finite-population correction is applied: even a whole workload's units carry run-to-run noise
that only their spread estimates, and the correction would remove it at the last unit.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from benchkit.racing.stats import t_quantile

WORSE, BETTER, WITHIN, OPEN = "worse", "better", "within", "open"
# How the two points were brought onto one machine.
SAME, BRIDGED, ACROSS = "same", "bridged", "across"
# How the interval was obtained.
PAIRED, REPEATS, DECLARED, NONE = "paired", "repeats", "declared", "none"
# A paired interval needs this many shared units (two give one degree of freedom and a
# t-quantile of 12.7 at 95%: no decision, only a wide interval).
MIN_UNITS = 3


# Where a paired comparison's run-to-run term came from (Comparison.run_noise).
TWINS, UNMEASURED = "twins", "unmeasured"


@dataclass(frozen=True)
class Settings:
    """What a comparison is decided at: the study's margin (relative) and confidence, the
    declared run-to-run noise of a single run (study.noise), if any, and the run-to-run
    spread of one run's log figure measured on twin jobs (`run_sd`, with its degrees of
    freedom), if any.

    Why a run-to-run term: two single runs compared unit by unit share every unit, so their
    per-unit spread says how well this pair of runs is measured, not how far a second pair
    of runs would land. A job whose server ran 8-13% faster on every unit (measured on a
    quiet 16-core machine, docs/perf/verdict-stability/verdict-stability.md) moves every unit
    alike, which no per-unit spread shows. Measured on twins, or declared, it widens each
    paired interval by two runs' worth; where neither exists the comparison says so
    (`run_noise` unmeasured) and a verdict resting on it is provisional."""

    margin: float = 0.05
    confidence: float = 0.95
    declared_noise: float | None = None
    run_sd: float | None = None
    run_dof: float = math.inf

    @property
    def run_term(self) -> tuple[float, float, str] | None:
        """(sd, dof, source) of one run's log figure: twins first, else declared."""
        if self.run_sd is not None:
            return self.run_sd, self.run_dof, TWINS
        if self.declared_noise is not None:
            return math.log1p(self.declared_noise) / 1.96, math.inf, DECLARED
        return None


@dataclass(frozen=True)
class Series:
    """One point's observations from one job on one machine: per-unit values on the
    objective's basis (seconds; marked units already left out), or, for a job that replayed
    its workload several times, its per-pass figures. `machine` is '' where unknown, which
    counts as the machine of the other series it is compared with."""

    point: str
    job: str
    machine: str
    units: Mapping[str, float] = field(default_factory=dict)
    repeats: tuple[float, ...] = ()
    value: float | None = None
    # How many runs its units are the mean of (twin jobs of one machine pooled, `pooled`).
    runs: int = 1
    # The units one machine measured of a job measured on several: its mean is of those
    # units alone, no figure of the point to compare without a unit in common.
    part: bool = False

    @property
    def figure(self) -> float | None:
        if self.value is not None:
            return self.value
        if self.repeats:
            return statistics.fmean(self.repeats)
        return statistics.fmean(self.units.values()) if self.units else None


@dataclass(frozen=True)
class Comparison:
    """`other` against `base` (lower is better): `ratio` = other's time / base's, `low` and
    `high` its replication interval (None where none exists), `units` the paired units,
    `outcome` (worse, better, within, open), `machine` (same, bridged, across) with the
    anchor point in `via`, and `needed` the shared units the pair would need to be decided at
    its observed spread (None: decided, no spread known, or it sits on the margin)."""

    base: str
    other: str
    ratio: float | None
    low: float | None
    high: float | None
    units: int
    basis: str
    machine: str
    outcome: str
    jobs: tuple[str, ...] = ()
    via: str | None = None
    needed: int | None = None
    machines: tuple[str, ...] = ()
    # What its interval holds of run-to-run noise: "repeats" (its points' own repeats),
    # "twins" or "declared" (added to a paired interval), "unmeasured" (units only).
    run_noise: str = UNMEASURED
    # Open with its figure within a quarter of the margin of the margin itself: no practical
    # number of units decides it, and it is the figure's place that says why, not its spread.
    near_margin: bool = False
    # A bridged comparison: the spread of the two machines' ratio from point to point (the
    # card-by-point term, log scale) its interval holds, None where fewer than two points ran
    # on both machines and it is not measured.
    interaction: float | None = None
    # Paired on fewer units than either point's figure holds (a race stopped one early, an
    # anchor ran a subset): each side's mean on the paired units (base, other), which the
    # ratio is of, so that a reader comparing it with the two figures sees why they differ.
    sides: tuple[float, float] | None = None
    # Paired: each side's mean on the paired units (base, other), whether or not they are all
    # its units; a verdict's table shows them where the pair is not the table's own two jobs.
    means: tuple[float, float] | None = None
    # A bridge over more than two machines: every anchor point in order, one per step from
    # one machine to the next (`via` is the first); () for one step or none.
    chain: tuple[str, ...] = ()
    # A bridge a step of which had no term of its own: the study's largest card-by-point
    # term (log sd) its interval holds in its place (Engine.borrowed, rules v15).
    borrowed: float | None = None

    @property
    def decided(self) -> bool:
        return self.outcome != OPEN

    def to_json(self) -> dict[str, object]:
        return {
            "base": self.base,
            "other": self.other,
            "ratio": self.ratio,
            "low": self.low,
            "high": self.high,
            "units": self.units,
            "basis": self.basis,
            "machine": self.machine,
            "via": self.via,
            "outcome": self.outcome,
            "needed": self.needed,
            "jobs": list(self.jobs),
            "machines": list(self.machines),
            "run_noise": self.run_noise,
            "interaction": self.interaction,
            "sides": list(self.sides) if self.sides else None,
            "chain": list(self.chain),
        }


@lru_cache(maxsize=512)
def _t(confidence: float, dof: float) -> float:
    return t_quantile((1 + confidence) / 2, dof)


@dataclass(frozen=True)
class _Log:
    """A log-ratio with its standard error and degrees of freedom (se None: no interval)."""

    mean: float
    se: float | None
    dof: float
    units: int
    basis: str
    sd: float | None = None
    run_noise: str = UNMEASURED
    # The run-to-run variance its standard error holds (log scale), which no unit removes.
    run_var: float = 0.0
    # Paired on fewer units than either side's figure holds: the two sides' means on the
    # shared units (base, other), the figures the ratio is of (Comparison.sides).
    sides: tuple[float, float] | None = None
    means: tuple[float, float] | None = None


def _paired(base: Series, other: Series, s: Settings) -> _Log | None:
    shared = [u for u in base.units if u in other.units]
    shared = [u for u in shared if base.units[u] > 0 and other.units[u] > 0]
    if not shared:
        return None
    ratio = sum(other.units[u] for u in shared) / sum(base.units[u] for u in shared)
    if len(shared) < MIN_UNITS:
        return _declared(math.log(ratio), len(shared), s)
    # The figure is a ratio of sums (each unit weighs by its time, as seconds per unit do), so
    # its spread is the ratio estimator's: each unit's residual o - R b, on the log scale over
    # the mean of o. A spread of per-unit log-ratios centres on their geometric mean instead,
    # which is not the figure wherever long and short units change by different factors.
    n = len(shared)
    mean_other = math.fsum(other.units[u] for u in shared) / n
    means = (math.fsum(base.units[u] for u in shared) / n, mean_other)
    # A part of a job (its units on one of several machines) holds fewer units than the job's
    # figure: its means are said too (review 13 read the H100 2-slot MTP pair's 1.31x, of
    # card A's 3 units, beside the jobs' figures over all 4).
    fewer = n < len(base.units) or n < len(other.units) or base.part or other.part
    sides = means if fewer else None
    sd = _stdev([(other.units[u] - ratio * base.units[u]) / mean_other for u in shared])
    run = s.run_term
    if run is None:
        return _Log(
            math.log(ratio), sd / math.sqrt(n), n - 1, n, PAIRED, sd, sides=sides, means=means
        )
    # Each side's run-to-run variance beside the units' (a side pooled from k twin runs has
    # a k-th of it): Welch-Satterthwaite degrees of freedom.
    units_var = sd * sd / n
    run_var = run[0] * run[0] * (1 / base.runs + 1 / other.runs)
    var = units_var + run_var
    parts = units_var**2 / max(n - 1, 1) + run_var**2 / run[1]
    dof = var * var / parts if parts > 0 else math.inf
    return _Log(math.log(ratio), math.sqrt(var), dof, n, PAIRED, sd, run[2], run_var, sides, means)


def _stdev(xs: Sequence[float]) -> float:
    """The sample standard deviation in floating point: statistics.stdev computes it exactly
    in fractions, a tenth of a 1,000-job report's verdict time, for digits no interval shows."""
    m = math.fsum(xs) / len(xs)
    return math.sqrt(math.fsum((x - m) * (x - m) for x in xs) / (len(xs) - 1))


def _declared(mean: float, units: int, s: Settings) -> _Log:
    """A single run against a single run without a paired spread: the declared noise, read as
    one run's 95% half-width, else no interval."""
    if s.declared_noise is None:
        return _Log(mean, None, 0, units, NONE)
    # One run's half-width h = 1.96 se: the pair's log-ratio has sqrt(2) of that se.
    se = math.log1p(s.declared_noise) / 1.96 * math.sqrt(2)
    return _Log(mean, se, math.inf, units, DECLARED, run_noise=DECLARED)


def _repeats(base: Series, other: Series, s: Settings) -> _Log | None:
    a, b = base.repeats, other.repeats
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    if ma <= 0 or mb <= 0:
        return None
    # The delta method: var(log mean) = var / (n mean^2), the two added.
    var = _stdev(a) ** 2 / (len(a) * ma * ma) + _stdev(b) ** 2 / (len(b) * mb * mb)
    return _Log(
        math.log(mb / ma), math.sqrt(var), min(len(a), len(b)) - 1, 0, REPEATS, None, REPEATS
    )


def _log_of(base: Series, other: Series, s: Settings) -> _Log | None:
    """The log-ratio of two series of one machine, by the strongest basis they have."""
    rep = _repeats(base, other, s)
    if rep is not None:
        return rep
    paired = _paired(base, other, s)
    if paired is not None:
        return paired
    fa, fb = base.figure, other.figure
    if not fa or not fb or fa <= 0 or fb <= 0:
        return None
    return _declared(math.log(fb / fa), 0, s)


def _decide(log: _Log, s: Settings) -> tuple[str, float | None, float | None]:
    """The outcome and the replication interval (as ratios) of a log-ratio."""
    if log.se is None:
        return OPEN, None, None
    half = _t(s.confidence, log.dof) * math.sqrt(2) * log.se if log.dof > 0 else math.inf
    lo, hi = log.mean - half, log.mean + half
    bound = math.log1p(s.margin)
    if lo > bound:
        outcome = WORSE
    elif hi < -bound:
        outcome = BETTER
    elif lo > -bound and hi < bound:
        outcome = WITHIN
    else:
        outcome = OPEN
    return outcome, _exp(lo), _exp(hi)


def _exp(x: float) -> float | None:
    return math.exp(x) if math.isfinite(x) else None


# Beyond this many units a pair is called undecidable at its spread, not given a count.
MAX_NEEDED = 10_000_000


def _needed(log: _Log, s: Settings) -> int | None:
    """Shared units that would decide an open paired log-ratio at its observed spread: its
    distance to the nearest bound must exceed the replication half-width."""
    if log.basis != PAIRED or log.sd is None or log.sd <= 0:
        return None
    bound = math.log1p(s.margin)
    gap = min(abs(log.mean - bound), abs(log.mean + bound))
    if gap < 1e-9:
        return None
    run_var, sd = log.run_var, log.sd

    def decides(n: int) -> bool:
        # The replication half-width at n units (the t-quantile shrinks as n grows) against
        # the distance to the nearest bound.
        half = _t(s.confidence, max(n - 1, 1)) * math.sqrt(2) * math.sqrt(sd**2 / n + run_var)
        return half < gap

    # The smallest count that decides, by bisection (the half-width falls as n grows): a
    # fixed-point loop returned its first overshoot (113 where 80 units decide; reviews 10).
    lo, hi = log.units, max(log.units + 1, 2)
    while not decides(hi):
        if hi > MAX_NEEDED:
            # The margin leaves no room beside two runs' run-to-run term: no number of
            # units decides it (a repeat of both runs might).
            return None
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decides(mid) else (mid, hi)
    return hi


def on_margin(c: Comparison) -> bool:
    """An open comparison whose figure sits so close to the margin that no practical number
    of units would decide it (more than PRACTICAL times the units it has): what would tell
    is a larger effect or a margin the study cares about, not more of the same units."""
    far = c.needed is None or c.needed > PRACTICAL * max(c.units, 1)
    return c.outcome == OPEN and c.near_margin and far


# An open pair needing more than this many times its units is "on the margin" (on_margin).
PRACTICAL = 20
# How near the margin a figure sits to be "on" it: within this share of the margin's own width
# (a ratio of 1.05 against a 5% margin is; a ratio of 1.11 whose spread is wide is not).
NEAR = 0.25


def _comparison(
    base: str, other: str, log: _Log, s: Settings, machine: str, jobs: tuple[str, ...]
) -> Comparison:
    outcome, lo, hi = _decide(log, s)
    if machine == ACROSS:
        outcome = OPEN
    bound = math.log1p(s.margin)
    near = (
        outcome == OPEN
        and machine != ACROSS
        and min(abs(log.mean - bound), abs(log.mean + bound)) < NEAR * bound
    )
    return Comparison(
        base=base,
        other=other,
        ratio=math.exp(log.mean),
        low=lo,
        high=hi,
        units=log.units,
        basis=log.basis,
        machine=machine,
        outcome=outcome,
        jobs=jobs,
        needed=_needed(log, s) if outcome == OPEN and machine != ACROSS else None,
        run_noise=log.run_noise,
        near_margin=near,
        sides=log.sides,
        means=log.means,
    )


def pooled(series: Sequence[Series]) -> list[Series]:
    """A point's series with its twin runs on one machine (single-run jobs with per-unit
    times) pooled into one series: each unit's mean over the twins that ran it all, with
    `runs` the number of twins. Compared as one, a point measured twice is not answered by
    whichever of its runs happens to give the narrowest interval, and its run-to-run term is
    halved, as the mean of two runs has half one run's variance."""
    groups: dict[str, list[Series]] = {}
    out: list[Series] = []
    for x in series:
        # An unknown machine ('') is one machine here, as `same_machine` takes it.
        if x.units and not x.repeats:
            groups.setdefault(x.machine, []).append(x)
        else:
            out.append(x)
    for machine, twins in groups.items():
        shared = set.intersection(*(set(t.units) for t in twins))
        if len(twins) < 2 or not shared:
            out += twins
            continue
        units = {
            u: statistics.fmean(t.units[u] for t in twins) for u in twins[0].units if u in shared
        }
        job = " + ".join(t.job for t in twins)
        out.append(Series(twins[0].point, job, machine, units, (), None, len(twins)))
    return out


def same_machine(a: Series, b: Series, single: bool = True) -> bool:
    """Whether two series ran on one machine. An unknown machine ('') is the other's only
    where the sweep knows at most one machine (`single`): where its jobs ran on several known
    ones, an unknown one may be any of them (rules v10, from a review that found a job whose
    telemetry named no card paired as one machine with a job on another session's card)."""
    if several(a.machine) or several(b.machine):
        return False
    if a.machine and b.machine:
        return a.machine == b.machine
    return single


# How a job measured on several machines whose units' machine is not known is named
# (evidence.gpu_of joins its cards: "card A + card C").
SEVERAL = " + "


def several(machine: str) -> bool:
    """Whether `machine` names several machines: its units ran on one or the other, which is
    not known unit by unit, so it is no machine to pair with, not even another job named the
    same (rules v14: two jobs each extended from card A to card C paired unit u003, measured
    on C by one and on A by the other)."""
    return SEVERAL in machine


def known(machine: str) -> bool:
    """A machine a bridge may stand on: named, and one machine."""
    return bool(machine) and not several(machine)


def _with_machines(c: Comparison, machines: Sequence[str]) -> Comparison:
    return Comparison(**{**c.__dict__, "machines": tuple(m for m in machines if m)})


def _strength(c: Comparison) -> tuple[int, float]:
    """Prefer a comparison with an interval, then the narrower one."""
    if c.low is None or c.high is None:
        return (0, -float(c.units))
    return (1, -(math.log(c.high) - math.log(c.low)))


def by_point(series: Iterable[Series]) -> Mapping[str, Sequence[Series]]:
    out: dict[str, list[Series]] = {}
    for x in series:
        out.setdefault(x.point, []).append(x)
    return out

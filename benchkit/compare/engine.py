"""The comparison engine: every series of a sweep by point, and any two points compared
within one machine or bridged across machines through anchor points measured on both, one
machine to the next (benchkit.compare.pairs decides each one-machine pair)."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Iterator, Sequence

from benchkit.compare.pairs import (
    ACROSS,
    BETTER,
    BRIDGED,
    DECLARED,
    OPEN,
    PRACTICAL,
    SAME,
    UNMEASURED,
    WITHIN,
    WORSE,
    Comparison,
    Series,
    Settings,
    _comparison,
    _Log,
    _log_of,
    _stdev,
    _strength,
    _with_machines,
    by_point,
    known,
    on_margin,
    pooled,
    same_machine,
)

# What the verdicts, the race and the tests import from the engine: the pair's vocabulary too.
__all__ = [
    "ACROSS",
    "BETTER",
    "BRIDGED",
    "OPEN",
    "PRACTICAL",
    "SAME",
    "UNMEASURED",
    "WITHIN",
    "WORSE",
    "Comparison",
    "Engine",
    "Series",
    "Settings",
    "by_point",
    "on_margin",
    "pooled",
    "same_machine",
]


class Engine:
    """Every series of a sweep, by point; `compare` answers any pair of points."""

    def __init__(self, series: Iterable[Series], settings: Settings) -> None:
        self.settings = settings
        self.by_point: dict[str, list[Series]] = {}
        for x in series:
            self.by_point.setdefault(x.point, []).append(x)
        if settings.run_sd is not None:
            self.by_point = {p: pooled(xs) for p, xs in self.by_point.items()}
        named = {x.machine for xs in self.by_point.values() for x in xs if x.machine}
        # Whether an unknown machine may be taken for the one known machine (same_machine).
        self.single = len(named) <= 1
        self._memo: dict[tuple[str, str], Comparison | None] = {}
        self._terms: dict[tuple[str, str], tuple[float, float] | None] = {}
        # Each machine -> the machines it measured a point in common with (Engine._paths).
        self._links: dict[str, set[str]] | None = None
        # Engine.borrowed, found once: () where no pair of machines measured a term.
        self._borrowed: tuple[float, float] | tuple[()] | None = None

    def points(self) -> list[str]:
        return list(self.by_point)

    def figure(self, point: str) -> float | None:
        vals = [f for x in self.by_point.get(point, []) if (f := x.figure) is not None]
        return statistics.fmean(vals) if vals else None

    def compare(self, base: str, other: str) -> Comparison | None:
        """`other` against `base`: on one machine where both were measured there (the pair
        with the most shared units), else bridged through an anchor point measured on both
        machines, else across machines, which is never decided. None: nothing to compare."""
        key = (base, other)
        if key not in self._memo:
            self._memo[key] = self._compare(base, other)
        return self._memo[key]

    def _compare(self, base: str, other: str) -> Comparison | None:
        s = self.settings
        direct = self._direct(base, other)
        # One machine's figures without a unit in common give no interval; a bridge with one
        # answers better (rules v14: two jobs extended onto one card, one unit each there).
        if direct is not None and (direct.low is not None or direct.units > 0):
            return direct
        bridged = self._bridged(base, other) or self._chained(base, other)
        if bridged is not None and (direct is None or bridged.low is not None):
            return bridged
        if direct is not None:
            return direct
        # Across machines, a job measured on several is taken whole: its parts' units are
        # one job's, and a figure with no interval rests on every unit both jobs ran (review
        # 13: the H100 CUDA 2-slot MTP pair took 3 of the 4 units, one part of job 15).
        pairs = [
            (a, b)
            for a in _whole(self.by_point.get(base, []))
            for b in _whole(self.by_point.get(other, []))
        ]
        logs = [(a, b, lg) for a, b in pairs if (lg := _log_of(a, b, s)) is not None]
        if not logs:
            return None
        a, b, lg = max(logs, key=lambda t: t[2].units)
        c = _comparison(base, other, lg, s, ACROSS, (a.job, b.job))
        return _with_machines(c, (a.machine, b.machine))

    def _direct(self, base: str, other: str) -> Comparison | None:
        s = self.settings
        best: Comparison | None = None
        for a in self.by_point.get(base, []):
            for b in self.by_point.get(other, []):
                if not same_machine(a, b, self.single):
                    continue
                lg = _log_of(a, b, s)
                # Part of a job without a unit in common: its mean is of other units.
                if lg is None or (lg.units == 0 and (a.part or b.part) and not lg.se):
                    continue
                c = _with_machines(
                    _comparison(base, other, lg, s, SAME, (a.job, b.job)), (a.machine or b.machine,)
                )
                if best is None or _strength(c) > _strength(best):
                    best = c
        return best

    def machine_ratios(self) -> list[tuple[str, str, str, float, int]]:
        """Each point measured on two known machines, as (point, first machine, second, the
        second's time over the first's on the units both ran, those units)."""
        out = []
        for point, xs in self.by_point.items():
            named = [x for x in xs if known(x.machine)]
            for i, a in enumerate(named):
                for b in named[i + 1 :]:
                    lg = _log_of(a, b, self.settings) if a.machine != b.machine else None
                    if lg is not None and lg.units > 0:
                        out.append((point, a.machine, b.machine, math.exp(lg.mean), lg.units))
        return out

    def interaction(self, m1: str, m2: str) -> tuple[float, float] | None:
        """(sd, degrees of freedom) of the card-by-point term between two machines, on the
        log scale: how far the second machine's ratio to the first moves from one point to
        another, beyond what each point's own interval explains. A bridge applies one
        point's ratio to another point, so it carries this term twice. None where fewer than
        two points ran on both machines with an interval: then it is not measured."""
        key = (m1, m2) if m1 <= m2 else (m2, m1)
        if key in self._terms:
            return self._terms[key]
        logs: list[_Log] = []
        for xs in self.by_point.values():
            a = next((x for x in xs if x.machine == key[0]), None)
            b = next((x for x in xs if x.machine == key[1]), None)
            lg = _log_of(a, b, self.settings) if a is not None and b is not None else None
            if lg is not None and lg.se is not None:
                logs.append(lg)
        term = None
        if len(logs) >= 2:
            means = [lg.mean for lg in logs]
            own = statistics.fmean(lg.se**2 for lg in logs if lg.se is not None)
            term = (math.sqrt(max(0.0, _stdev(means) ** 2 - own)), float(len(logs) - 1))
        self._terms[key] = term
        return term

    def borrowed(self) -> tuple[float, float] | None:
        """The largest card-by-point term measured between any two machines of the study,
        which a bridge whose own machines share one point holds in its place (rules v15, from
        a review that would sign such bridges' direction only: the H100 cards' ratio moved
        1.09x-1.16x from point to point between the two that shared five); None where no
        pair of machines measured one."""
        if self._borrowed is not None:
            return self._borrowed or None
        machines = sorted(
            {x.machine for xs in self.by_point.values() for x in xs if known(x.machine)}
        )
        found = [
            t
            for m1, m2 in itertools.combinations(machines, 2)
            if (t := self.interaction(m1, m2)) is not None
        ]
        best = max(found, key=lambda t: t[0], default=None)
        self._borrowed = best or ()
        return best

    def _bridged(self, base: str, other: str) -> Comparison | None:
        """base on machine M1 and other on M2, through an anchor X measured on both: other /
        base = (other / X on M2) x (X / base on M1); the log variances add."""
        s = self.settings
        best: Comparison | None = None
        for x in self.by_point:
            if x in (base, other):
                continue
            for a in self.by_point.get(base, []):
                for b in self.by_point.get(other, []):
                    # An unknown machine is no side of a bridge: its anchor could not be told.
                    two = known(a.machine) and known(b.machine)
                    if same_machine(a, b, self.single) or not two:
                        continue
                    xa = [y for y in self.by_point[x] if y.machine == a.machine]
                    xb = [y for y in self.by_point[x] if y.machine == b.machine]
                    for ya in xa:
                        for yb in xb:
                            term = self.interaction(a.machine, b.machine)
                            c = _bridge(base, other, (a, ya, yb, b), s, x, term, self.borrowed())
                            if c is not None and (best is None or _strength(c) > _strength(best)):
                                best = c
        return best

    def _chained(self, base: str, other: str) -> Comparison | None:
        """base on machine M0 and other on Mk with no point run on both: a chain of bridges
        M0 -> M1 -> ... -> Mk, each step through a point measured on the two machines of that
        step (the fewest steps that connect them, at most MAX_STEPS). The one-machine legs'
        log ratios add, with their variances, and each step's card-by-point term (rules v14,
        from a review that found the H100 study's pairs on two cards left open where its
        check card's points joined them)."""
        s = self.settings
        best: Comparison | None = None
        for a in self.by_point.get(base, []):
            for b in self.by_point.get(other, []):
                if same_machine(a, b, self.single) or not known(a.machine) or not known(b.machine):
                    continue
                for path in self._paths(a.machine, b.machine):
                    for c in self._chains(base, other, a, b, path, s):
                        if best is None or _strength(c) > _strength(best):
                            best = c
        return best

    def _paths(self, start: str, end: str) -> list[tuple[str, ...]]:
        """The machine paths of the fewest steps (two or more) from `start` to `end`, a step
        joining two machines that measured a point in common."""
        if self._links is None:
            self._links = {}
            for xs in self.by_point.values():
                ms = {x.machine for x in xs if known(x.machine)}
                for m in ms:
                    self._links.setdefault(m, set()).update(ms - {m})
        if start not in self._links:
            return []
        paths: list[tuple[str, ...]] = [(start,)]
        for _ in range(MAX_STEPS):
            grown = [(*p, m) for p in paths for m in sorted(self._links[p[-1]]) if m not in p]
            # A path of one step is the plain bridge's (Engine._bridged), tried first.
            done = [p for p in grown if p[-1] == end and len(p) > 2]
            if done:
                return done
            paths = [p for p in grown if p[-1] != end]
        return []

    def _chains(
        self, base: str, other: str, a: Series, b: Series, path: tuple[str, ...], s: Settings
    ) -> Iterator[Comparison]:
        """Every chain along `path` from series `a` to `b`: one anchor point a step."""

        def on(point: str, machine: str) -> Series | None:
            xs = [x for x in self.by_point.get(point, []) if x.machine == machine]
            return max(xs, key=lambda x: len(x.units) or len(x.repeats), default=None)

        steps = [
            [x for x in self.by_point if x not in (base, other) and on(x, m1) and on(x, m2)]
            for m1, m2 in itertools.pairwise(path)
        ]
        terms = [self.interaction(m1, m2) for m1, m2 in itertools.pairwise(path)]
        for anchors in itertools.product(*steps):
            # Leg i runs on machine i: from `a` (or the anchor that reached machine i) to the
            # anchor that leaves it (or `b` on the last machine).
            los = [a, *(on(x, m) for x, m in zip(anchors, path[1:], strict=True))]
            his = [*(on(x, m) for x, m in zip(anchors, path[:-1], strict=True)), b]
            pairs = [(lo, hi) for lo, hi in zip(los, his, strict=True) if lo and hi]
            legs = [_log_of(lo, hi, s) for lo, hi in pairs if lo.point != hi.point]
            if len(pairs) < len(los) or any(lg is None for lg in legs):
                continue
            jobs = tuple(x.job for pair in pairs for x in pair)
            legs_ = [lg for lg in legs if lg]
            c = _bridge_of(base, other, legs_, terms, jobs, s, anchors, self.borrowed())
            if c is not None:
                yield _with_machines(c, path)


# The most machine-to-machine steps a chain of bridges takes (three: four machines).
MAX_STEPS = 3


def _bridge(
    base: str,
    other: str,
    chain: tuple[Series, Series, Series, Series],
    s: Settings,
    via: str,
    term: tuple[float, float] | None,
    fallback: tuple[float, float] | None = None,
) -> Comparison | None:
    """`other` / `base` through the anchor: `chain` is base and the anchor on the first
    machine, the anchor and other on the second. The two log-ratios' variances add, and the
    card-by-point term twice where it is measured (`term`: Engine.interaction)."""
    a, ya, yb, b = chain
    first, second = _log_of(a, ya, s), _log_of(yb, b, s)
    if first is None or second is None:
        return None
    jobs = (a.job, ya.job, yb.job, b.job)
    c = _bridge_of(base, other, [first, second], [term], jobs, s, (via,), fallback)
    return None if c is None else _with_machines(c, (a.machine, b.machine))


def _bridge_of(
    base: str,
    other: str,
    legs: Sequence[_Log],
    terms: Sequence[tuple[float, float] | None],
    jobs: tuple[str, ...],
    s: Settings,
    anchors: tuple[str, ...],
    fallback: tuple[float, float] | None = None,
) -> Comparison | None:
    """A bridged comparison from its one-machine legs (their log ratios add, and their
    variances) and one card-by-point term a step from one machine to the next, twice each
    (Welch-Satterthwaite over the legs and the terms, rules v11): a step's own where its
    machines measured it, else `fallback`, the study's largest (Engine.borrowed, rules v15)."""
    if not legs or any(lg.se is None for lg in legs):
        return None
    var = sum((lg.se or 0.0) ** 2 for lg in legs)
    dof = min(lg.dof for lg in legs)
    own = [t for t in terms if t is not None]
    measured: list[tuple[float, float]] = [
        x for t in terms if (x := t if t is not None else fallback) is not None
    ]
    if measured:
        parts = var**2 / max(dof, 1) + sum((2 * t[0] ** 2) ** 2 / t[1] for t in measured)
        var += sum(2 * t[0] ** 2 for t in measured)
        # Never more degrees of freedom than the legs': a term added to the variance may not
        # narrow the interval (a bridge of a 3-unit leg went from 1.16x-1.94x to 1.22x-1.83x
        # with a term added, its t quantile falling faster than its variance rose).
        dof = min(dof, var * var / parts) if parts > 0 else dof
    bases = {lg.basis for lg in legs}
    noises = {lg.run_noise for lg in legs}
    log = _Log(
        sum(lg.mean for lg in legs),
        math.sqrt(var),
        dof,
        min(lg.units for lg in legs),
        bases.pop() if len(bases) == 1 else DECLARED,
        run_noise=noises.pop() if len(noises) == 1 else UNMEASURED,
    )
    c = _comparison(base, other, log, s, BRIDGED, jobs)
    # A step whose term is not measured leaves the chain's term unmeasured (None), and says
    # what its interval holds in its place.
    term = math.sqrt(sum(t[0] ** 2 for t in own)) if len(own) == len(terms) else None
    lent = fallback[0] if fallback is not None and len(own) < len(terms) else None
    c = Comparison(
        **{
            **c.__dict__,
            "via": anchors[0],
            "needed": None,
            "interaction": term,
            "borrowed": lent,
            "chain": anchors if len(anchors) > 1 else (),
        }
    )
    return c


def _whole(series: Sequence[Series]) -> list[Series]:
    """A point's series with each job's parts (one per machine, `Series.part`) joined into
    the job's whole: its units on whichever machine ran each, its machines named together."""
    out: list[Series] = []
    parts: dict[str, list[Series]] = {}
    for x in series:
        if x.part:
            parts.setdefault(x.job, []).append(x)
        else:
            out.append(x)
    for job, xs in parts.items():
        units = {u: t for x in xs for u, t in x.units.items()}
        machines = " + ".join(sorted({x.machine for x in xs if x.machine}))
        out.append(Series(xs[0].point, job, machines, units, runs=xs[0].runs))
    return out

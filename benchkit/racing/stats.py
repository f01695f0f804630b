"""The statistics the racing policy rests on: Student's t tail and quantile, Holm's
correction, and the empirical-Bayes spread of paired log-ratios (Smyth's moderated t), in
the standard library alone."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom (the normal beyond 10,000)."""
    if df <= 0:
        return 0.5
    if df > 1e4:
        return 0.5 * math.erfc(t / math.sqrt(2))
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def holm(pvalues: Mapping[str, float], alpha: float) -> tuple[dict[str, float], set[str]]:
    """Holm's step-down correction: the adjusted p-values and the hypotheses rejected at
    `alpha` (familywise)."""
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m = len(order)
    adjusted: dict[str, float] = {}
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        adjusted[k] = running
    return adjusted, {k for k in order if adjusted[k] <= alpha}


def _digamma(x: float) -> float:
    """psi(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    f = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f / 252))


def _trigamma(x: float) -> float:
    """psi'(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    acc = 0.0
    while x < 6:
        acc += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return acc + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def _trigamma_inverse(v: float) -> float:
    """The y with psi'(y) = v (psi' falls from infinity to 0 on y > 0), by bisection on
    log y."""
    lo, hi = math.log(1e-8), math.log(1e8)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _trigamma(math.exp(mid)) > v:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


@dataclass(frozen=True)
class Prior:
    """What the round's pairs say about one pair's spread before its own units do: a prior
    variance `s2` worth `dof` degrees of freedom (at most the pairs' own)."""

    s2: float
    dof: float


def prior_of(pairs: Sequence[Sequence[float]]) -> Prior | None:
    """The empirical-Bayes prior of the pairs' log-ratio variances (Smyth 2004, the
    moderated t of limma): where the pairs' sample variances scatter no more than sampling
    explains, they share one spread and a pair with few units borrows it whole; where the
    pairs differ (an MTP pair against a slot pair of the same backend), the prior is worth
    few degrees of freedom and each pair keeps mostly its own. None with fewer than three
    pairs of two units and a spread (a pair whose ratio is exact, a job's twin, says nothing
    of the noise)."""
    # The same series twice (a verdict pair that is also a comparison with the best, the
    # twins of a job) is one pair.
    distinct = {tuple(round(v, 12) for v in x) for x in pairs if len(x) >= 2}
    var = [(statistics.variance(x), len(x) - 1) for x in distinct]
    var = [(v, d) for v, d in var if v > 1e-12]
    if len(var) < 3:
        return None
    e = [math.log(v) - _digamma(d / 2) + math.log(d / 2) for v, d in var]
    mean = statistics.fmean(e)
    excess = statistics.variance(e) - statistics.fmean(_trigamma(d / 2) for _, d in var)
    # The prior is estimated from the pairs' own degrees of freedom and is never worth more.
    most = float(sum(d for _, d in var))
    d0 = most if excess <= 0 else min(2 * _trigamma_inverse(excess), most)
    return Prior(math.exp(mean + _digamma(d0 / 2) - math.log(d0 / 2)), d0)


def spread(xs: Sequence[float], prior: Prior | None) -> tuple[float, float]:
    """One pair's spread of log-ratios and its degrees of freedom, moderated by the round's
    prior: its own variance and the prior's, weighted by their degrees of freedom."""
    own, dof = statistics.variance(xs), len(xs) - 1
    if prior is None:
        return math.sqrt(own), dof
    var = (prior.dof * prior.s2 + dof * own) / (prior.dof + dof)
    return math.sqrt(var), prior.dof + dof


def t_quantile(q: float, df: float) -> float:
    """The t with P(T <= t) = q (q >= 0.5): Newton's method on t_sf from the normal quantile,
    else bisection. Bisection alone took 100 steps of the incomplete beta each time, and the
    comparison engine asks for a few hundred quantiles in a 1,000-job report (a third of a
    second); Newton reaches the same root to 1e-12 in three to five steps."""
    t = _t_newton(q, df, _cornish_fisher(q, df)) if df >= 3 else None
    if t is None:
        t = _t_newton(q, df)
    return t if t is not None else _t_bisect(q, df)


def _cornish_fisher(q: float, df: float) -> float | None:
    """A start for Newton's method near the root: the t quantile's expansion in 1/df about
    the normal's (Abramowitz and Stegun 26.7.5), within about 1e-4 from three degrees of
    freedom, so that Newton needs two or three steps instead of four to six."""
    if not 0.5 <= q < 1:
        return None
    z = statistics.NormalDist().inv_cdf(q)
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _t_newton(q: float, df: float, start: float | None = None) -> float | None:
    if not 0.5 <= q < 1 or df < 1:
        return None
    t = statistics.NormalDist().inv_cdf(q)
    if df > 1e4:
        return t
    t = t if start is None else start
    # The t density's constant, on the log scale (df can be in the thousands).
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(30):
        pdf = math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))
        step = ((1 - t_sf(t, df)) - q) / pdf
        # A step that would cross zero or leave the bracket: not converging, bisect instead.
        if not math.isfinite(step) or t - step < 0 or t - step > 1000:
            return None
        t -= step
        if abs(step) < 1e-13 * max(1.0, t):
            return t
    return None


def _t_bisect(q: float, df: float) -> float:
    lo, hi = 0.0, 1000.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 1 - t_sf(mid, df) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def log_ratios(point: Mapping[str, float], best: Mapping[str, float]) -> list[float]:
    """log(point / best) per shared unit, in the best's unit order."""
    return [
        math.log(point[u] / best[u]) for u in best if u in point and point[u] > 0 and best[u] > 0
    ]


def finite(n: int, total_units: int) -> float:
    """The finite-population correction sqrt(1 - n/N) of a mean over `n` of the workload's
    `total_units` N units (1 where N is not given). The full grid's figure is the mean over
    all N: n of them are measured and only the other N - n are unknown, so the error of the
    n-unit mean as a prediction of the N-unit one is sd / sqrt(n) * sqrt(1 - n/N) (the
    predictive error of the N - n unknown units, the n-unit mean's own error included). It
    vanishes at n = N, where sd / sqrt(n) would keep a pair that sits inside a bound open
    whatever was measured."""
    if total_units <= 0:
        return 1.0
    return math.sqrt(max(0.0, 1 - n / total_units))

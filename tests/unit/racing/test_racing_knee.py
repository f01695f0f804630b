"""The knee's part of the racing policy (benchkit/racing/knee.py): which slot counts of the
best's series rest because their units can no longer change the knee. Pure arithmetic."""

from __future__ import annotations

import math
import random

from benchkit.racing.knee import knee_rests, knee_series
from benchkit.racing.policy import FINITE_ALL, RUNNING, SETTLED, RaceSettings, decide

DIFFICULTY = [10.0, 30.0, 14.0, 22.0, 11.0, 27.0, 16.0, 19.0, 25.0, 12.0, 21.0, 17.0]


def _noisy(factor: float, n: int, sd: float, seed: int) -> dict[str, float]:
    """Per-unit values `factor` times the reference with a paired log-noise of `sd`."""
    rng = random.Random(seed)
    return {str(i): DIFFICULTY[i % 12] * factor * math.exp(rng.gauss(0, sd)) for i in range(n)}


def _grid(factors: dict[int, tuple[float, float]], n: int) -> dict[str, dict[str, float]]:
    return {str(k): _noisy(f, n, sd, seed=k) for k, (f, sd) in factors.items()}


POINTS = {str(k): {"slots": k} for k in (1, 2, 4, 8, 16)}


def test_a_count_above_a_surely_no_different_one_rests_when_surely_slower() -> None:
    # Best 8 slots; 2 slots 2% slower and tight: surely within the 5% bound, so the knee is
    # at most 2. 4 slots, 3% slower and tight, is above it and surely slower than the best:
    # it can be neither the knee nor the best. 1 slot (30% slower) is below the knee.
    values = _grid({1: (1.3, 0.01), 2: (1.02, 0.005), 4: (1.03, 0.005), 8: (1.0, 0.0)}, 8)
    series = knee_series({p: POINTS[p] for p in values}, "8")
    rest, above = knee_rests(values, POINTS, series, "8", ["1", "2", "4"], [], 0.05, None, 0.95)
    assert above == {"4"}
    assert rest == {"4"}


def test_a_count_that_may_be_the_best_keeps_running() -> None:
    # 16 slots as fast as the best 8 on a wide spread: above the best count, so no knee, but
    # it may be the full grid's best, and the best sets every count's ratio.
    values = _grid({2: (1.3, 0.01), 8: (1.0, 0.0), 16: (1.0, 0.2)}, 8)
    series = knee_series({p: POINTS[p] for p in values}, "8")
    rest, above = knee_rests(values, POINTS, series, "8", ["2", "16"], [], 0.05, None, 0.95)
    assert above == {"16"}
    assert rest == set()


def test_no_count_rests_below_the_best_while_none_is_surely_no_different() -> None:
    # 2 and 4 slots 3% and 4% slower on a wide spread: inside the bound on the estimate but
    # not surely, so the knee may be either or the best; nothing below the best rests.
    values = _grid({2: (1.03, 0.2), 4: (1.04, 0.2), 8: (1.0, 0.0)}, 6)
    series = knee_series({p: POINTS[p] for p in values}, "8")
    rest, above = knee_rests(values, POINTS, series, "8", ["2", "4"], [], 0.05, None, 0.95)
    assert rest == set() and above == set()


def test_a_stopped_count_is_never_the_knee() -> None:
    # The report takes a count the race stopped as worse than the best, whatever its ratio.
    values = _grid({2: (1.02, 0.005), 4: (1.03, 0.005), 8: (1.0, 0.0)}, 8)
    series = knee_series({p: POINTS[p] for p in values}, "8")
    rest, above = knee_rests(values, POINTS, series, "8", ["4"], ["2"], 0.05, None, 0.95)
    assert rest == set() and above == set()


def test_the_whole_workload_decides_what_an_unbounded_population_cannot() -> None:
    # 2 slots 2% slower against a 5% bound on a spread of 0.05: on 8 units an interval over an
    # unbounded population straddles 5%; on all 8 of the workload's 8 units it is the figure.
    values = _grid({2: (1.0, 0.05), 4: (1.03, 0.005), 8: (1.0, 0.0)}, 8)
    xs = [math.log(values["2"][u] / values["8"][u]) for u in values["8"]]
    assert 0 < sum(xs) / 8 < math.log1p(0.05)
    series = knee_series({p: POINTS[p] for p in values}, "8")
    args = (values, POINTS, series, "8", ["2", "4"], [], 0.05, None, 0.95)
    assert knee_rests(*args)[0] == set()
    assert knee_rests(*args, total_units=8)[0] == {"4"}


def test_decide_rests_the_count_and_drops_its_knee_pair() -> None:
    # 4 slots 5% slower on a tight spread: on the margin, so the engine neither stops nor
    # settles it, and it would run to the end; 2 slots is surely no different, so 4 is above
    # the knee and rests (prioritising: it is not stopped, and no knee pair rests on it).
    values = _grid({1: (1.3, 0.15), 2: (1.02, 0.005), 4: (1.05, 0.005), 8: (1.0, 0.0)}, 8)
    points = {p: POINTS[p] for p in values}
    pairs = [("4", "8"), ("2", "8")]
    on = decide(values, RaceSettings(), [], pairs, [0.05], points, total_units=16)
    off = decide(values, RaceSettings(knee_rest=False), [], pairs, [0.05], points, 16)
    assert on.best == off.best == "8"
    assert off.status["4"] == RUNNING and on.status["4"] == SETTLED
    assert "4" in off.undecided and "4" not in on.undecided


def test_a_knee_pair_is_decided_by_the_engine_whatever_the_finite_setting() -> None:
    # 4 slots drawn 6% slower than the best 8 on all 16 of the workload's units with a
    # spread of 0.05: the engine's replication interval straddles the 5% margin, so the knee
    # pair stays open under every `finite` setting (the moderated finite figure once decided
    # it where every test was finite; the report's engine would not).
    values = _grid({1: (1.3, 0.15), 4: (1.06, 0.05), 8: (1.0, 0.0)}, 16)
    points = {p: POINTS[p] for p in values}
    pairs = [("4", "8")]
    default = decide(values, RaceSettings(), [], pairs, [0.05], points, total_units=16)
    every = decide(values, RaceSettings(finite=FINITE_ALL), [], pairs, [0.05], points, 16)
    assert default.best == every.best == "8"
    assert default.comparisons["4"].outcome == every.comparisons["4"].outcome == "open"
    assert "4" in default.undecided and "4" in every.undecided

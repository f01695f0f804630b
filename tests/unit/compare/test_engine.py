"""The comparison engine (benchkit.compare): paired ratios and their replication interval,
decisions at the margin, machines (same, bridged, across) and the knee question."""

from __future__ import annotations

import math
import random

from benchkit.compare import questions
from benchkit.compare.engine import (
    ACROSS,
    BETTER,
    BRIDGED,
    OPEN,
    SAME,
    WITHIN,
    WORSE,
    Engine,
    Series,
    Settings,
)


def units(n: int, scale: float, noise: float, seed: int, base: float = 1.0) -> dict[str, float]:
    """`n` units whose times are `base` per unit (unit-shaped: unit i costs 1 + i/n) times
    `scale`, each with log-normal noise of `noise`."""
    rng = random.Random(seed)
    return {f"u{i}": base * (1 + i / n) * scale * math.exp(rng.gauss(0, noise)) for i in range(n)}


def test_a_paired_ratio_is_the_ratio_of_the_shared_units_times() -> None:
    a = Series("a", "0", "", {"u0": 1.0, "u1": 2.0, "u2": 3.0, "u9": 50.0})
    b = Series("b", "1", "", {"u0": 1.2, "u1": 2.5, "u2": 3.4})
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.units == 3 and c.machine == SAME
    assert math.isclose(c.ratio or 0, (1.2 + 2.5 + 3.4) / 6.0)


def test_a_clear_difference_is_decided_worse_and_a_tiny_one_within() -> None:
    a = Series("a", "0", "", units(16, 1.0, 0.01, 1))
    slow = Series("slow", "1", "", units(16, 1.30, 0.01, 2))
    same = Series("same", "2", "", units(16, 1.005, 0.01, 3))
    eng = Engine([a, slow, same], Settings(margin=0.05))
    assert (eng.compare("a", "slow") or _no()).outcome == WORSE
    assert (eng.compare("slow", "a") or _no()).outcome == BETTER
    assert (eng.compare("a", "same") or _no()).outcome == WITHIN


def test_a_noisy_pair_near_the_margin_stays_open_and_says_the_units_it_needs() -> None:
    a = Series("a", "0", "", units(6, 1.0, 0.10, 4))
    b = Series("b", "1", "", units(6, 1.12, 0.10, 5))
    c = Engine([a, b], Settings(margin=0.05)).compare("a", "b")
    assert c is not None and c.outcome == OPEN
    assert c.needed is not None and c.needed > 6
    assert c.low is not None and c.high is not None and c.low < 1.05 < c.high


def test_the_interval_is_the_pairs_own_not_the_noisiest_pair_of_the_series() -> None:
    # The finding: "inside the noise" judged on the series' largest noise (1 vs 6: 7.4%)
    # where the pair compared has its own (3 vs 6: 3.6%). Here one pair is quiet, one noisy.
    best = Series("6", "0", "", units(16, 1.0, 0.002, 6))
    quiet = Series("3", "1", "", {u: t * 1.07 for u, t in best.units.items()})
    noisy = Series("1", "2", "", units(16, 1.07, 0.30, 7))
    eng = Engine([best, quiet, noisy], Settings(margin=0.05))
    assert (eng.compare("6", "3") or _no()).outcome == WORSE
    assert (eng.compare("6", "1") or _no()).outcome == OPEN


def test_two_machines_are_never_compared_directly() -> None:
    a = Series("a", "0", "m1", units(16, 1.0, 0.01, 8))
    b = Series("b", "1", "m2", units(16, 1.3, 0.01, 9))
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.machine == ACROSS and c.outcome == OPEN and c.needed is None


def test_an_anchor_measured_on_both_machines_bridges_them() -> None:
    # Machine 2 is 15% slower on everything; b is 1.30x a on one machine.
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 10))
    x1 = Series("x", "1", "m1", units(16, 1.1, 0.01, 11))
    x2 = Series("x", "2", "m2", units(16, 1.1 * 1.15, 0.01, 12))
    b2 = Series("b", "3", "m2", units(16, 1.3 * 1.15, 0.01, 13))
    c = Engine([a1, x1, x2, b2], Settings()).compare("a", "b")
    assert c is not None and c.machine == BRIDGED and c.via == "x"
    assert c.outcome == WORSE and abs((c.ratio or 0) - 1.3) < 0.03
    # Across the machines directly the figure would have been about 1.5x.
    direct = sum(b2.units.values()) / sum(a1.units.values())
    assert direct > 1.45


def test_the_same_machine_pair_is_preferred_over_a_bridge() -> None:
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 14))
    b1 = Series("b", "1", "m1", units(16, 1.04, 0.01, 15))
    b2 = Series("b", "2", "m2", units(16, 1.2, 0.01, 16))
    c = Engine([a1, b1, b2], Settings()).compare("a", "b")
    assert c is not None and c.machine == SAME and c.jobs == ("0", "1")


def test_repeats_give_the_interval_where_units_are_not_paired() -> None:
    a = Series("a", "0", "", {}, (10.0, 10.2, 9.8))
    b = Series("b", "1", "", {}, (13.0, 13.1, 12.9))
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.basis == "repeats" and c.outcome == WORSE


def test_a_single_run_without_units_or_declared_noise_has_no_interval() -> None:
    a = Series("a", "0", "", {}, (), 10.0)
    b = Series("b", "1", "", {}, (), 20.0)
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.low is None and c.outcome == OPEN
    d = Engine([a, b], Settings(declared_noise=0.11)).compare("a", "b")
    assert d is not None and d.basis == "declared" and d.outcome == WORSE


def test_the_knee_needs_every_count_below_it_decided_worse_than_the_best() -> None:
    # The CPU finding: 1 slot 7.9, 2 slots 6.0, 4 slots the best with a wide spread. The knee
    # by the figures is 4 slots; it is complete only if 1 and 2 are each decided worse.
    best = Series("4", "2", "", units(8, 4.0, 0.30, 17))
    one = Series("1", "0", "", units(8, 7.9, 0.05, 18))
    two = Series("2", "1", "", units(8, 6.0, 0.05, 19))
    eng = Engine([one, two, best], Settings(margin=0.05))
    figures = {"1": 7.9, "2": 6.0, "4": 4.0}
    k = questions.knee(eng, ["1", "2", "4"], figures)
    assert k.knee == "4" and not k.reached
    assert [c.other for c in k.rests_on] == ["1", "2"]
    assert {c.other for c in k.open} == {c.other for c in k.rests_on if c.outcome != WORSE}


def test_a_knee_within_the_margin_of_the_best_is_complete_only_when_decided_within() -> None:
    best = Series("4", "2", "", units(16, 1.0, 0.005, 20))
    one = Series("1", "0", "", units(16, 2.0, 0.005, 21))
    two = Series("2", "1", "", units(16, 1.01, 0.005, 22))
    eng = Engine([one, two, best], Settings(margin=0.05))
    k = questions.knee(eng, ["1", "2", "4"], {"1": 2.0, "2": 1.01, "4": 1.0})
    assert k.knee == "2" and k.best == "4" and k.reached and k.complete
    assert [c.outcome for c in k.rests_on] == [WORSE, WITHIN]


def test_a_knee_at_the_fewest_count_rests_on_no_smaller_count() -> None:
    best = Series("1", "0", "", units(16, 1.0, 0.005, 23))
    two = Series("2", "1", "", units(16, 1.2, 0.005, 24))
    eng = Engine([best, two], Settings())
    k = questions.knee(eng, ["1", "2"], {"1": 1.0, "2": 1.2})
    assert k.knee == "1" and k.complete and k.reached
    # Below the knee nothing; beyond it, 2 slots against the best, decided slower.
    assert [(c.other, c.outcome) for c in k.rests_on] == [("2", WORSE)]


def test_a_knee_rests_on_no_larger_count_being_faster_than_the_best() -> None:
    # The H200 Qwen3 finding: 8 and 16 slots ran on the card in another state (memory in
    # use by something else) and measured 4% and 2% slower than 6 slots. "No larger count
    # was more than 5% faster" is then a comparison across machines, never decided: the
    # knee stays open, naming them. On one machine with a tight pair it is complete.
    low = Series("1", "0", "m", units(16, 1.3, 0.005, 30))
    best = Series("6", "1", "m", units(16, 1.0, 0.005, 31))
    beyond = Series("8", "2", "m [+19.7 GiB]", units(16, 1.04, 0.005, 32))
    eng = Engine([low, best, beyond], Settings(margin=0.05))
    k = questions.knee(eng, ["1", "6", "8"], {"1": 1.3, "6": 1.0, "8": 1.04})
    assert k.knee == "6" and not k.complete
    assert [(c.other, c.machine) for c in k.open] == [("8", ACROSS)]
    same = Series("8", "2", "m", units(16, 1.04, 0.005, 32))
    k = questions.knee(Engine([low, best, same], Settings(margin=0.05)), ["1", "6", "8"],
                       {"1": 1.3, "6": 1.0, "8": 1.04})  # fmt: skip
    assert k.knee == "6" and k.complete
    # A larger count whose own interval reaches past the margin below the best: open too.
    wide = Series("8", "2", "m", units(4, 1.04, 0.3, 33))
    k = questions.knee(Engine([low, best, wide], Settings(margin=0.05)), ["1", "6", "8"],
                       {"1": 1.3, "6": 1.0, "8": 1.04})  # fmt: skip
    assert [c.other for c in k.open] == ["8"] and k.open[0].low is not None
    assert k.open[0].low < 1 / 1.05


def _no() -> object:
    raise AssertionError("no comparison")


def _run(truth: dict[str, float], n: int, noise: float, rng: random.Random) -> questions.Knee:
    series = [
        Series(p, p, "", units(n, scale, noise, rng.randrange(1 << 30)))
        for p, scale in truth.items()
    ]
    eng = Engine(series, Settings(margin=0.05))
    figures = {x.point: x.figure or 0.0 for x in series}
    return questions.knee(eng, list(truth), figures)


def test_a_complete_knee_is_its_identical_twins_knee_in_95_percent_of_runs() -> None:
    # Truths placed at, inside and beyond the margin, twin runs drawn independently: where one
    # run's knee is complete, its twin's figures give the same knee in at least 95% of pairs
    # (the replication interval's promise), and two complete knees never differ.
    rng = random.Random(41)
    truths = [
        {"1": 1.30, "2": 1.05, "4": 1.0},
        {"1": 1.20, "2": 1.06, "4": 1.0},
        {"1": 1.08, "2": 1.04, "4": 1.0},
        {"1": 1.5, "2": 1.0, "4": 1.01},
    ]
    complete = same = contradicted = 0
    for truth in truths:
        for _ in range(100):
            a, b = _run(truth, 12, 0.05, rng), _run(truth, 12, 0.05, rng)
            if a.complete:
                complete += 1
                same += b.knee == a.knee
                contradicted += b.complete and b.knee != a.knee
    # Enough complete knees for the share to mean something (45 of 400 since a knee also
    # rests on no larger count being faster than the best beyond the margin: rules v10).
    assert complete > 40
    assert same >= 0.95 * complete and contradicted == 0


def test_an_unrecorded_machine_is_the_known_one_only_where_there_is_one() -> None:
    # Review 4: the H100 study's job 10 named no card in its telemetry; its pass ran in a later
    # session than job 0's card. Where the sweep ran on several known machines, an unknown one
    # may be any of them: never compared as the same; where it knows one, it is that one.
    a = Series("a", "0", "card-1", units(12, 1.0, 0.01, 40))
    b = Series("b", "1", "", units(12, 1.5, 0.01, 41))
    other = Series("c", "2", "card-2", units(12, 1.0, 0.01, 42))
    c = Engine([a, b, other], Settings()).compare("a", "b")
    assert c is not None and c.machine == ACROSS and c.outcome == OPEN
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.machine == SAME and c.outcome == WORSE


def test_on_the_margin_is_where_the_figure_sits_not_how_wide_it_spreads() -> None:
    # A first-run report said "1 slot took 1.11x the time of 4 slots (0.61x-2.05x ...): it
    # sits on the margin": 1.11x is twice the 5% margin away from it; the spread is what makes
    # it need many units. Only a figure on the margin itself is said to sit there.
    rng = random.Random(50)
    base = units(6, 1.0, 0.0, 51)
    wide = {u: t * 1.11 * math.exp(rng.gauss(0, 0.5)) for u, t in base.items()}
    c = Engine([Series("4", "0", "", base), Series("1", "1", "", wide)], Settings()).compare(
        "4", "1"
    )
    assert c is not None and c.outcome == OPEN and not c.near_margin
    tight = {u: t * (1.051 + (0.01 if i % 2 else -0.01)) for i, (u, t) in enumerate(base.items())}
    c = Engine([Series("4", "0", "", base), Series("1", "1", "", tight)], Settings()).compare(
        "4", "1"
    )
    assert c is not None and c.outcome == OPEN and c.near_margin


def test_a_bridge_holds_the_machines_point_to_point_spread_where_two_points_ran_on_both() -> None:
    """Rules v11: a bridge applies the anchor's machine ratio to another point, so where the
    machines' ratio moves from point to point (two anchors: 1.05x and 1.20x) its interval
    holds that spread twice; with one anchor it is not measured (interaction None)."""
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 20))
    x1 = Series("x", "1", "m1", units(16, 1.1, 0.01, 21))
    x2 = Series("x", "2", "m2", units(16, 1.1 * 1.05, 0.01, 22))
    b2 = Series("b", "3", "m2", units(16, 1.3 * 1.12, 0.01, 23))
    one = Engine([a1, x1, x2, b2], Settings()).compare("a", "b")
    assert one is not None and one.machine == BRIDGED and one.interaction is None
    y1 = Series("y", "4", "m1", units(16, 0.9, 0.01, 24))
    y2 = Series("y", "5", "m2", units(16, 0.9 * 1.20, 0.01, 25))
    two = Engine([a1, x1, x2, b2, y1, y2], Settings()).compare("a", "b")
    assert two is not None and two.machine == BRIDGED and two.interaction is not None
    # log(1.20 / 1.05) = 0.134 between the two anchors: a spread of about 0.09 a point.
    assert 0.05 < two.interaction < 0.15
    width = math.log(two.high or math.inf) - math.log(two.low or 1e-9)
    assert width > 2 * (math.log(one.high or math.inf) - math.log(one.low or 1e-9))


def test_a_knee_that_only_comparisons_across_machines_place_names_them() -> None:
    """Rules v11: 2 slots measured only on another card than the best (16) took 1.25x its
    time there; the knee at 8 (same card as 16) may lie at 2, and the knee says which."""
    best = Series("16", "0", "m1", units(16, 1.0, 0.01, 30))
    eight = Series("8", "1", "m1", units(16, 1.02, 0.01, 31))
    two = Series("2", "2", "m2", units(16, 1.25, 0.01, 32))
    eng = Engine([best, eight, two], Settings())
    k = questions.knee(eng, ["2", "8", "16"], {"2": 1.25, "8": 1.02, "16": 1.0})
    assert k.knee == "8" and [c.other for c in k.across] == ["2"]
    # On one card nothing is across.
    same = Engine([best, eight, Series("2", "2", "m1", units(16, 1.25, 0.01, 32))], Settings())
    k = questions.knee(same, ["2", "8", "16"], {"2": 1.25, "8": 1.02, "16": 1.0})
    assert k.knee == "8" and not k.across


def test_a_provisional_knee_says_between_which_counts_it_may_lie() -> None:
    """Rules v11 (review 6): a knee whose neighbours are not decided is not located. Below
    it, the fewest count not decided slower than the best; above it, the best where the knee
    itself is not decided within the margin. Decided comparisons leave the knee alone."""
    best = Series("8", "0", "m", units(16, 1.0, 0.01, 40))
    four = Series("4", "1", "m", units(16, 1.03, 0.08, 41))
    two = Series("2", "2", "m", units(16, 1.08, 0.08, 42))
    one = Series("1", "3", "m", units(16, 1.4, 0.01, 43))
    eng = Engine([best, four, two, one], Settings())
    figures = {"1": 1.4, "2": 1.08, "4": 1.03, "8": 1.0}
    k = questions.knee(eng, ["1", "2", "4", "8"], figures)
    assert k.knee == "4" and k.low == "2" and k.high == "8"
    # Tight spreads decide every comparison: the range is the knee itself.
    tight = Engine(
        [
            best,
            Series("4", "1", "m", units(16, 1.01, 0.002, 44)),
            Series("2", "2", "m", units(16, 1.2, 0.002, 45)),
            one,
        ],
        Settings(),
    )
    k = questions.knee(tight, ["1", "2", "4", "8"], {"1": 1.4, "2": 1.2, "4": 1.01, "8": 1.0})
    assert k.knee == "4" and k.low == "4" and k.high == "4" and k.complete

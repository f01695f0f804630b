"""The racing policy's decisions on constructed per-unit values: stop, keep, settle, Holm,
the margin and the budget (benchkit/racing/policy.py). Pure arithmetic, no server."""

from __future__ import annotations

import math
import random

import pytest

from benchkit.racing.estimate import imputed_by_machine, imputed_means, paired_estimates
from benchkit.racing.judge import race_engine
from benchkit.racing.policy import (
    BEST,
    FINITE_ALL,
    FINITE_NONE,
    RUNNING,
    SETTLED,
    STOPPED,
    RaceSettings,
    decide,
    first_round,
    next_round,
    pair_decided,
    simulate,
    verdict_pairs,
)
from benchkit.racing.stats import finite, holm, prior_of, t_sf

# Unit difficulty that every point shares: units differ by 3x, which an unpaired comparison
# would call noise and a paired one cancels.
DIFFICULTY = [10.0, 30.0, 14.0, 22.0, 11.0, 27.0, 16.0, 19.0, 25.0, 12.0, 21.0, 17.0]
JITTER = [0.01, -0.012, 0.004, -0.006, 0.009, -0.003, 0.0, 0.007, -0.01, 0.005, -0.004, 0.002]


def point(factor: float, n: int, jitter_scale: float = 1.0, shift: int = 0) -> dict[str, float]:
    """Per-unit values of a point `factor` times the reference, with a little paired noise."""
    return {
        str(i): DIFFICULTY[i] * factor * math.exp(jitter_scale * JITTER[(i + shift) % 12])
        for i in range(n)
    }


def test_t_sf_matches_known_quantiles() -> None:
    # Student's t table: t_{0.975}(2) = 4.303, t_{0.95}(10) = 1.812, normal limit 1.645.
    assert t_sf(4.303, 2) == pytest.approx(0.025, abs=2e-4)
    assert t_sf(1.812, 10) == pytest.approx(0.05, abs=2e-4)
    assert t_sf(1.645, 10_000) == pytest.approx(0.05, abs=5e-4)
    assert t_sf(0.0, 5) == pytest.approx(0.5)
    assert t_sf(-1.812, 10) == pytest.approx(0.95, abs=2e-4)


def test_holm_steps_down_and_stops_at_first_keep() -> None:
    adjusted, rejected = holm({"a": 0.01, "b": 0.02, "c": 0.04}, 0.05)
    # a: 3 x 0.01 = 0.03; b: max(0.03, 2 x 0.02) = 0.04; c: max(0.04, 0.04) = 0.04.
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.04, "c": 0.04})
    assert rejected == {"a", "b", "c"}
    adjusted, rejected = holm({"a": 0.01, "b": 0.03, "c": 0.04}, 0.05)
    # b: 2 x 0.03 = 0.06 > 0.05: b is kept, and so is c although 0.04 alone would pass.
    assert rejected == {"a"}
    assert adjusted["c"] == pytest.approx(0.06)


def test_clearly_slower_point_is_stopped_after_three_units() -> None:
    values = {"fast": point(1.0, 3), "slow": point(1.31, 3, shift=5)}
    d = decide(values, RaceSettings())
    assert d.best == "fast"
    assert d.status == {"fast": BEST, "slow": STOPPED}
    c = d.comparisons["slow"]
    assert c.units == 3
    assert c.ratio == pytest.approx(1.31, rel=0.03)
    assert c.p_adjusted <= 0.05


def test_paired_comparison_cancels_unit_difficulty() -> None:
    # 10% slower on every unit although the units' own times overlap by far.
    values = {"a": point(1.0, 6), "b": point(1.10, 6, shift=3)}
    d = decide(values, RaceSettings(margin=0.05))
    assert d.status["b"] == STOPPED


def test_difference_inside_margin_is_never_stopped() -> None:
    # 3% slower on every unit, measured precisely: worse, but not by more than the 5% margin.
    values = {"a": point(1.0, 12, 0.1), "b": point(1.03, 12, 0.1, shift=2)}
    d = decide(values, RaceSettings(margin=0.05))
    assert d.status["b"] != STOPPED
    # With no margin the same 3% is a real difference and the point stops.
    assert decide(values, RaceSettings(margin=0.0)).status["b"] == STOPPED


def test_equal_points_settle_only_with_enough_units() -> None:
    few = {"a": point(1.0, 3, 4.0), "b": point(1.0, 3, 4.0, shift=4)}
    assert sorted(decide(few, RaceSettings()).status.values()) == [BEST, RUNNING]
    many = {"a": point(1.0, 12, 2.0), "b": point(1.0, 12, 2.0, shift=4)}
    assert sorted(decide(many, RaceSettings()).status.values()) == [BEST, SETTLED]
    assert sorted(decide(many, RaceSettings(settle=False)).status.values()) == [BEST, RUNNING]


def test_noisy_small_difference_keeps_running() -> None:
    # 8% slower but with per-unit noise of about 10x the jitter: three units cannot tell.
    values = {"a": point(1.0, 3, 10.0), "b": point(1.08, 3, 10.0, shift=6)}
    d = decide(values, RaceSettings())
    assert d.status["b"] == RUNNING
    assert d.undecided == ["b"]


def test_holm_across_points_keeps_a_borderline_one() -> None:
    # Alone, `mid` would be stopped at 95%; beside many clearly-stopped points the correction
    # asks more of it, and the count of comparisons is what changes the outcome.
    base = {"best": point(1.0, 4, 4.0)}
    mid = {"mid": point(1.14, 4, 4.0, shift=1)}
    alone = decide({**base, **mid}, RaceSettings())
    crowd = {f"slow{i}": point(2.0 + i, 4, 4.0, shift=i) for i in range(6)}
    with_crowd = decide({**base, **mid, **crowd}, RaceSettings())
    assert alone.comparisons["mid"].p_adjusted == pytest.approx(alone.comparisons["mid"].p_worse)
    assert with_crowd.comparisons["mid"].p_adjusted >= with_crowd.comparisons["mid"].p_worse
    assert all(with_crowd.status[f"slow{i}"] == STOPPED for i in range(6))


def test_a_stopped_point_is_judged_again_each_round() -> None:
    # Stopped earlier, but on these units the engine does not call `b` worse than the best:
    # it runs again; `c`, still worse, stays stopped.
    values = {"a": point(1.0, 5), "b": point(1.0, 5, shift=1), "c": point(1.5, 5, shift=2)}
    d = decide(values, RaceSettings(settle=False), stopped=["b", "c"])
    assert d.status == {"a": BEST, "b": RUNNING, "c": STOPPED}


def test_next_round_extends_best_and_undecided_within_max_units() -> None:
    values = {"a": point(1.0, 3, 10.0), "b": point(1.08, 3, 10.0, shift=6), "c": point(2, 3)}
    d = decide(values, RaceSettings())
    assert d.status["c"] == STOPPED
    done = {"a": 3, "b": 3, "c": 3}
    cost = {"a": 10.0, "b": 11.0, "c": 20.0}
    s = RaceSettings(units_per_round=2, max_units=4)
    assert next_round(d, done, s, 12, cost, 0.0) == {"a": 4, "b": 4}
    # The next round costs 2 units of a and b (42 s); a budget below what would be spent
    # after it ends the race.
    assert next_round(d, done, RaceSettings(budget_s=100.0), 12, cost, 60.0) == {}
    assert next_round(d, done, RaceSettings(budget_s=103.0), 12, cost, 60.0) == {"a": 5, "b": 5}


def test_rounds_give_a_point_one_unit_a_slot_at_least() -> None:
    settings = RaceSettings(min_units=3, units_per_round=2)
    assert first_round(["a", "b", "c"], settings, 12, {"a": 1, "b": 4, "c": 16}) == {
        "a": 3,
        "b": 4,
        "c": 12,
    }
    values = {"a": point(1.0, 3), "b": point(1.0, 4, shift=3)}
    d = decide(values, RaceSettings(settle=False))
    want = next_round(d, {"a": 3, "b": 4}, settings, 12, {}, 0.0, {"a": 1, "b": 4})
    assert want == {"a": 5, "b": 8}


def test_rounds_give_every_slot_a_whole_number_of_units() -> None:
    # 3 units on 2 slots run the third after the first two, mostly alone (the H100 study's
    # 2-slot job): a round asks a multiple of the slots, within the workload's units.
    settings = RaceSettings(min_units=3, units_per_round=2)
    slots = {"a": 2, "b": 3, "c": 6, "d": 5}
    assert first_round(["a", "b", "c", "d"], settings, 12, slots) == {
        "a": 4,
        "b": 3,
        "c": 6,
        "d": 5,
    }
    values = {"a": point(1.0, 4), "d": point(1.0, 5, shift=3)}
    d = decide(values, RaceSettings(settle=False))
    # 4 + 2 on 2 slots; 5 + 5 on 5 slots would be 10, within the 12 units.
    assert next_round(d, {"a": 4, "d": 5}, settings, 12, {}, 0.0, slots) == {"a": 6, "d": 10}
    # An earlier round's odd count (a race begun before this rule) is made whole.
    assert next_round(d, {"a": 3, "d": 10}, settings, 12, {}, 0.0, slots) == {"a": 6, "d": 12}


def test_simulate_spends_less_than_the_grid_and_keeps_the_best() -> None:
    grid = {f"p{k}": [DIFFICULTY[i] * f for i in range(12)] for k, f in enumerate([1, 1.3, 2])}
    grid["p0"] = [v * math.exp(JITTER[i]) for i, v in enumerate(grid["p0"])]
    out = simulate(grid, grid, RaceSettings())
    full = sum(sum(v) for v in grid.values())
    assert out.best == "p0"
    assert out.status["p1"] == STOPPED and out.status["p2"] == STOPPED
    assert out.units["p1"] == 3
    assert out.share_of(full) < 0.5


def test_simulate_charges_a_launch_per_round_a_point_takes_part_in() -> None:
    grid = {f"p{k}": [DIFFICULTY[i] * f for i in range(12)] for k, f in enumerate([1, 1.3, 2])}
    grid["p0"] = [v * math.exp(JITTER[i]) for i, v in enumerate(grid["p0"])]
    plain = simulate(grid, grid, RaceSettings())
    charged = simulate(grid, grid, RaceSettings(), start_s={"p0": 5.0, "p1": 5.0, "p2": 5.0})
    # The stopped points were launched once, the best once a round it ran in.
    assert charged.launches["p1"] == 1 and charged.launches["p2"] == 1
    assert charged.launches["p0"] == 1 + (plain.units["p0"] - 3 + 1) // 2
    assert charged.spent_s == pytest.approx(plain.spent_s + 5.0 * sum(charged.launches.values()))


def test_prior_borrows_whole_where_pairs_share_a_spread_little_where_they_differ() -> None:
    rng = random.Random(1)
    same = prior_of([[rng.gauss(0, 0.1) for _ in range(3)] for _ in range(40)])
    # Worth every degree of freedom the 40 pairs have (2 each), never more.
    assert same is not None and same.dof == 80
    assert 0.07 < math.sqrt(same.s2) < 0.13
    # A series repeated (a job's twin) is one pair: three copies are too few.
    twice = [0.1, 0.3, -0.2]
    assert prior_of([twice, list(twice), list(twice)]) is None
    mixed = prior_of([[rng.gauss(0, sd) for _ in range(3)] for sd in (0.01, 0.2) * 20])
    assert mixed is not None and mixed.dof < 2
    # An exact ratio (a job's twin) says nothing of the noise, and two pairs are too few.
    assert prior_of([[0.0, 0.0, 0.0], [0.1, 0.2, 0.0], [0.05, -0.1, 0.0]]) is None


def test_settings_refuse_values_that_cannot_race() -> None:
    with pytest.raises(ValueError, match="confidence"):
        RaceSettings(confidence=1.5).check()
    with pytest.raises(ValueError, match="min_units"):
        RaceSettings(min_units=1).check()
    with pytest.raises(ValueError, match="max_units"):
        RaceSettings(min_units=4, max_units=3).check()
    with pytest.raises(ValueError, match="budget_h"):
        RaceSettings(budget_s=0).check()


def test_verdict_pairs_near_the_best() -> None:
    grid = {
        f"{b}-{s}-{m}": {"backend": b, "slots": s, "mtp": m}
        for b in ("vulkan", "hip")
        for s in (1, 2, 4)
        for m in (False, True)
    }
    pairs = {tuple(sorted(p)) for p in verdict_pairs(grid, "vulkan-4-False")}
    # MTP on against off at every slot count of the best's backend.
    for s in (1, 2, 4):
        assert (f"vulkan-{s}-False", f"vulkan-{s}-True") in pairs
    # The knee compares slot counts with the best count only.
    assert ("vulkan-1-False", "vulkan-4-False") in pairs
    assert ("vulkan-1-True", "vulkan-2-True") not in pairs
    # Far from the best (other backend, other MTP setting): no verdict compares these.
    assert ("hip-1-True", "hip-2-True") not in pairs
    assert ("hip-1-False", "hip-1-True") not in pairs


def test_a_verdict_pair_is_decided_only_where_the_engine_decides_it() -> None:
    # 6% slower: a 3-unit replication interval straddles the 5% margin, so the pair is open
    # and both its points are measured on; 40% slower is decided.
    near = {"best": point(0.9, 3), "a": point(1.0, 3, 3.0), "b": point(1.06, 3, 3.0, shift=5)}
    d = decide(near, RaceSettings(settle=False), pairs=[("a", "b")])
    assert not pair_decided(race_engine(near, {}, 0.05, 0.95).compare("a", "b"))
    # `b` is out of contention (worse than the best), and measured on for the open pair.
    assert d.status["b"] == STOPPED and d.for_verdicts == ["a", "b"]
    far = {"best": point(0.9, 3), "a": point(1.0, 3), "b": point(1.4, 3, shift=5)}
    assert pair_decided(race_engine(far, {}, 0.05, 0.95).compare("a", "b"))


def test_decision_keeps_measuring_points_an_open_pair_needs() -> None:
    values = {"best": point(1.0, 3), "off": point(1.30, 3, shift=2), "on": point(1.45, 3, 3.0)}
    d = decide(values, RaceSettings(), pairs=[("off", "on")], thresholds=[0.05, 0.11])
    # Both are out of contention, and both are measured on for the open pair's verdict.
    assert d.status["off"] == STOPPED and d.status["on"] == STOPPED
    assert d.for_verdicts == ["off", "on"]
    assert set(d.undecided) == {"off", "on"}


def test_estimates_state_a_stopped_point_on_the_best_units() -> None:
    # `slow` is 1.3x the best on every unit but was stopped on the three easiest units.
    best = {str(i): DIFFICULTY[i] for i in range(12)}
    easy = sorted(best, key=lambda u: best[u])[:3]
    measured = {"best": best, "slow": {u: best[u] * 1.3 for u in easy}}
    full_mean = sum(best.values()) / 12
    assert sum(measured["slow"].values()) / 3 < full_mean  # its raw mean looks faster
    assert paired_estimates(measured, "best")["slow"] == pytest.approx(1.3 * full_mean)
    assert imputed_means(measured)["slow"] == pytest.approx(1.3 * full_mean)
    assert imputed_means(measured)["best"] == pytest.approx(full_mean)


def test_a_stopped_point_is_restated_only_from_its_own_machines_points() -> None:
    """Rules v11: on a card where the hard units take 1.5x what they take on another card
    (a card-by-unit difference, not one factor), a point stopped on the easy units is stated
    on its own card's difficulty, not the other card's; alone on its card it keeps its mean."""
    best = {str(i): DIFFICULTY[i] for i in range(12)}
    easy = sorted(best, key=lambda u: best[u])[:3]
    hard = {u: v * (1.5 if u not in easy else 1.0) for u, v in best.items()}
    measured = {
        "best": best,
        "peer": {u: v * 1.1 for u, v in hard.items()},
        "slow": {u: hard[u] * 1.3 for u in easy},
        "alone": {u: best[u] * 2 for u in easy},
    }
    where = {
        "best": dict.fromkeys(best, "A"),
        "peer": dict.fromkeys(best, "B"),
        "slow": dict.fromkeys(easy, "B"),
        "alone": dict.fromkeys(easy, "C"),
    }
    got = imputed_by_machine(measured, where)
    assert got["slow"] == pytest.approx(1.3 * sum(hard.values()) / 12)
    assert got["best"] == pytest.approx(sum(best.values()) / 12)
    assert got["alone"] == pytest.approx(2 * sum(best[u] for u in easy) / 3)
    # Through every card at once it would be stated on a difficulty no card measured.
    assert imputed_means(measured)["slow"] != pytest.approx(got["slow"], rel=0.02)


def _noisy(factor: float, n: int, sd: float, seed: int) -> dict[str, float]:
    """Per-unit values `factor` times the reference with a paired log-noise of `sd`."""
    rng = random.Random(seed)
    return {str(i): DIFFICULTY[i % 12] * factor * math.exp(rng.gauss(0, sd)) for i in range(n)}


def test_a_slot_count_is_stopped_as_the_engine_judges_it_whatever_the_series_noise() -> None:
    # 6 slots best; 4 slots 9% slower on a tight paired spread; 8 slots as fast as 6 but with
    # a wide spread, which put the series' noise well above 9% (the report's knee once took 4
    # as no different from 6 there). The report's knee now asks the engine, which judges the
    # pair on its own units at the margin (benchkit.compare.questions.knee): the race stops
    # 4 slots exactly where that knee takes it as worse.
    values = {"6": _noisy(1.0, 12, 0.01, 1), "4": _noisy(1.09, 12, 0.01, 2)}
    values["8"] = _noisy(1.0, 12, 0.4, 4)
    values["3"] = _noisy(1.6, 12, 0.01, 3)
    points = {p: {"slots": p} for p in values}
    plain = decide(values, RaceSettings(), thresholds=[0.05])
    knee = decide(values, RaceSettings(), thresholds=[0.05], points=points, total_units=16)
    assert plain.best == knee.best == "6"
    assert plain.status["4"] == knee.status["4"] == STOPPED
    assert knee.comparisons["4"].outcome == "worse"
    assert knee.status["3"] == STOPPED  # 60% slower
    # The same pair outside the slot series (another backend) is held to the margin alone.
    other = {**points, "4": {"slots": "6", "backend": "vulkan"}}
    assert (
        decide(values, RaceSettings(), thresholds=[0.05], points=other, total_units=16).status["4"]
        == STOPPED
    )


def test_simulate_records_which_best_stopped_each_point() -> None:
    per_unit = {
        "a": [v for v in point(1.0, 12).values()],
        "b": [v for v in point(1.5, 12).values()],
    }
    race = simulate(per_unit, per_unit, RaceSettings())
    assert race.status["b"] == STOPPED
    assert race.stopped_by == {"b": "a"}


def test_finite_population_correction() -> None:
    # n of N units measured: the N-unit mean's unknown part shrinks as sqrt(1 - n/N).
    assert finite(4, 16) == pytest.approx(math.sqrt(0.75))
    assert finite(16, 16) == 0.0
    assert finite(20, 16) == 0.0
    assert finite(4, 0) == 1.0  # N not given: the unbounded population's error


def test_finite_never_stops_a_point_the_engine_does_not_call_worse() -> None:
    # `b` 8% slower with a per-unit spread of 0.1 on all 16 units: the moderated test on the
    # full grid's finite figure would stop it (docs/perf/racing/racing.md's `every_test`); the
    # engine's replication interval still straddles the 5% margin, so it runs on.
    values = {"a": _noisy(1.0, 16, 0.0, 1), "b": _noisy(1.08, 16, 0.1, 1)}
    values["c"] = _noisy(1.5, 16, 0.1, 3)
    for finite_ in (FINITE_NONE, FINITE_ALL):
        d = decide(values, RaceSettings(finite=finite_), total_units=16)
        assert d.status["b"] == RUNNING and d.comparisons["b"].outcome == "open"
        assert d.status["c"] == STOPPED and d.comparisons["c"].outcome == "worse"

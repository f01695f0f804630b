"""Bridges over more than two machines (rules v14): a pair whose machines share no point is
compared through a chain of machines, one anchor a step, and a job whose units ran on
several machines without knowing which is no machine to pair with."""

from __future__ import annotations

import random

from benchkit.compare.engine import ACROSS, BRIDGED, OPEN, SAME, WORSE, Engine, Series, Settings


def units(n: int, mean: float, sd: float, seed: int, scale: float = 1.0) -> dict[str, float]:
    rng = random.Random(seed)
    # Units differ in size (the workload's), the run adds its own noise on top.
    size = random.Random(0)
    return {
        f"u{i:03d}": mean * scale * (0.5 + size.random()) * (1 + rng.gauss(0, sd)) for i in range(n)
    }


def test_three_machines_in_a_row_are_bridged_through_two_anchors() -> None:
    # a on m1, b on m3; x ran on m1 and m2, y on m2 and m3. Each machine is slower than the
    # last (1.15x, then 1.10x); on one machine b is 1.30x a.
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 1))
    x1 = Series("x", "1", "m1", units(16, 1.1, 0.01, 2))
    x2 = Series("x", "2", "m2", units(16, 1.1, 0.01, 3, 1.15))
    y2 = Series("y", "3", "m2", units(16, 0.9, 0.01, 4, 1.15))
    y3 = Series("y", "4", "m3", units(16, 0.9, 0.01, 5, 1.15 * 1.10))
    b3 = Series("b", "5", "m3", units(16, 1.3, 0.01, 6, 1.15 * 1.10))
    eng = Engine([a1, x1, x2, y2, y3, b3], Settings())
    c = eng.compare("a", "b")
    assert c is not None and c.machine == BRIDGED and c.outcome == WORSE
    assert c.chain == ("x", "y") and c.via == "x"
    assert c.machines == ("m1", "m2", "m3")
    assert abs((c.ratio or 0) - 1.3) < 0.03
    # One step's machines share one point: its card-by-point term is not measured.
    assert c.interaction is None
    # Directly across the machines the figure would have been about 1.64x.
    assert sum(b3.units.values()) / sum(a1.units.values()) > 1.6
    assert c.to_json()["chain"] == ["x", "y"]


def test_a_chain_is_not_taken_where_one_anchor_bridges_the_two() -> None:
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 7))
    x1 = Series("x", "1", "m1", units(16, 1.1, 0.01, 8))
    x3 = Series("x", "2", "m3", units(16, 1.1, 0.01, 9, 1.2))
    b3 = Series("b", "3", "m3", units(16, 1.3, 0.01, 10, 1.2))
    y1 = Series("y", "4", "m1", units(16, 0.9, 0.01, 11))
    y2 = Series("y", "5", "m2", units(16, 0.9, 0.01, 12, 1.1))
    c = Engine([a1, x1, x3, b3, y1, y2], Settings()).compare("a", "b")
    assert c is not None and c.machine == BRIDGED and c.via == "x" and c.chain == ()


def test_machines_no_anchor_joins_stay_across() -> None:
    a1 = Series("a", "0", "m1", units(16, 1.0, 0.01, 13))
    x1 = Series("x", "1", "m1", units(16, 1.1, 0.01, 14))
    x2 = Series("x", "2", "m2", units(16, 1.1, 0.01, 15, 1.1))
    b3 = Series("b", "3", "m3", units(16, 1.3, 0.01, 16, 1.2))
    c = Engine([a1, x1, x2, b3], Settings()).compare("a", "b")
    assert c is not None and c.machine == ACROSS and c.outcome == OPEN


def test_a_job_on_several_machines_unit_by_unit_unknown_pairs_with_nothing() -> None:
    # Two jobs each extended from m1 onto m2 carry the same joined name; which of their
    # units ran where is not known, so pairing them unit by unit could pair m1 with m2.
    both = "m1 + m2"
    a = Series("a", "0", both, units(8, 1.0, 0.01, 17))
    b = Series("b", "1", both, units(8, 1.3, 0.01, 18))
    c = Engine([a, b], Settings()).compare("a", "b")
    assert c is not None and c.machine == ACROSS and c.outcome == OPEN
    # Nor is it a machine a bridge or a chain stands on.
    x = Series("x", "2", both, units(8, 1.1, 0.01, 19))
    x1 = Series("x", "3", "m1", units(8, 1.1, 0.01, 20))
    a1 = Series("a", "4", "m1", units(8, 1.0, 0.01, 21))
    d = Engine([a1, x1, x, b], Settings()).compare("a", "b")
    assert d is not None and d.machine == ACROSS


def test_figures_of_one_machine_without_a_shared_unit_yield_to_a_bridge_with_an_interval() -> None:
    # a and b each have a unit on m2, not the same one (0 paired); on m1 and m3 they have
    # units that a chain through x and y pairs.
    a2 = Series("a", "0", "m2", {"u100": 1.0})
    b2 = Series("b", "1", "m2", {"u101": 1.3})
    a1 = Series("a", "2", "m1", units(16, 1.0, 0.01, 22))
    x1 = Series("x", "3", "m1", units(16, 1.1, 0.01, 23))
    x4 = Series("x", "4", "m4", units(16, 1.1, 0.01, 24, 1.1))
    y4 = Series("y", "5", "m4", units(16, 0.9, 0.01, 25, 1.1))
    y3 = Series("y", "6", "m3", units(16, 0.9, 0.01, 26, 1.2))
    b3 = Series("b", "7", "m3", units(16, 1.3, 0.01, 27, 1.2))
    only = Engine([a2, b2], Settings()).compare("a", "b")
    assert only is not None and only.machine == SAME and only.units == 0 and only.low is None
    c = Engine([a2, b2, a1, x1, x4, y4, y3, b3], Settings()).compare("a", "b")
    assert c is not None and c.machine == BRIDGED and c.low is not None and c.outcome == WORSE

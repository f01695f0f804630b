"""A race resumed on another machine measures anchor points there first (benchkit.racing.anchors),
and never decides what the machine offset alone explains. Pure arithmetic, no server."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from benchkit.compare.engine import ACROSS, OPEN
from benchkit.racing.anchors import (
    Anchor,
    machines_of,
    offset_of,
    open_across,
    plan_anchors,
    simulate_moved,
)
from benchkit.racing.policy import (
    BEST,
    RUNNING,
    SETTLED,
    STOPPED,
    RaceSettings,
    RoundDecision,
    decide,
    simulate,
)

DIFFICULTY = [10.0, 30.0, 14.0, 22.0, 11.0, 27.0, 16.0, 19.0, 25.0, 12.0, 21.0, 17.0]
OFFSET = 1.10  # the second machine is 10% slower on every point


def _units(factor: float, sd: float, rng: random.Random, n: int = 12) -> list[float]:
    return [DIFFICULTY[i % 12] * factor * math.exp(rng.gauss(0, sd)) for i in range(n)]


def _grid(seed: int, factors: dict[str, float], sd: float = 0.03) -> tuple[dict, dict]:
    """Each point's units on the first machine, and the same units on the second (10% slower,
    measured again: their own noise)."""
    rng = random.Random(seed)
    first = {p: _units(f, sd, rng) for p, f in factors.items()}
    second = {p: [v * OFFSET * math.exp(rng.gauss(0, sd)) for v in vs] for p, vs in first.items()}
    return first, second


FACTORS = {"best": 1.0, "near": 1.02, "equal": 1.0, "slow": 1.3, "edge": 1.08}
# The outcome a point's final status stands for: stopped is worse, settled is within.
DECIDED = {STOPPED: "worse", SETTLED: "within"}


def test_the_resumed_race_measures_the_best_there_first() -> None:
    first, second = _grid(1, FACTORS)
    race = simulate_moved(first, second, RaceSettings(), move_after=1)
    on_b = [e for e in race.events if e[3] == "b"]
    assert on_b, "the race never ran on the second machine"
    # Its first work on the second machine is the anchor of the best, before any unit there.
    assert on_b[0][1] == "anchor"
    best_anchor = race.anchors[0]
    assert best_anchor.machine == "b" and best_anchor.units >= RaceSettings().min_units
    assert "current best" in best_anchor.why
    # Anchors only once: the race stays on the second machine after them.
    assert [e[1] for e in on_b[: len(race.anchors)]] == ["anchor"] * len(race.anchors)
    assert all(e[1] == "units" for e in on_b[len(race.anchors) :])


def test_final_decisions_match_the_one_machine_race_or_are_open() -> None:
    # The second machine 10% slower on every unit, nothing else changed: a decision the
    # one-machine race made is made the same or left open, never the opposite; a decision it
    # left open is made only on one machine's pairs (the units measured after the move, a
    # subset of the one-machine race's) or bridged, never across machines.
    opposite = {"worse": "within", "within": "worse"}
    for seed in range(12):
        first, _ = _grid(seed, FACTORS)
        second = {p: [v * OFFSET for v in vs] for p, vs in first.items()}
        one = simulate(first, first, RaceSettings())
        for move_after in (1, 2):
            moved = simulate_moved(first, second, RaceSettings(), move_after=move_after)
            for p, status in moved.decision.status.items():
                if p == moved.decision.best or status not in DECIDED:
                    continue
                got, ref = DECIDED[status], DECIDED.get(one.status.get(p) or "")
                assert ref in (got, None) and opposite[got] != ref, (seed, p, status, ref)
                assert moved.decision.comparisons[p].machine != ACROSS, (seed, p)
                if ref is None:  # decided on the second machine's units alone: the true side
                    assert (FACTORS[p] > 1 + RaceSettings().margin) == (got == "worse"), (seed, p)


def test_the_offset_alone_never_stops_an_equal_point() -> None:
    # `equal` is as fast as the best; measured on the second machine only after the move, a
    # cross-machine comparison would call it 10% slower (beyond the 5% margin).
    for seed in range(20):
        first, second = _grid(seed, {"best": 1.0, "equal": 1.0, "other": 1.01}, sd=0.02)
        moved = simulate_moved(first, second, RaceSettings(), move_after=1)
        for p, status in moved.decision.status.items():
            assert status != STOPPED, (seed, p, moved.decision.comparisons.get(p))


def test_an_anchor_is_planned_only_after_a_move() -> None:
    values = {"a": {"0": 1.0, "1": 1.1, "2": 1.2}, "b": {"0": 1.3, "1": 1.4, "2": 1.5}}
    same = {p: dict.fromkeys(v, "m1") for p, v in values.items()}
    d = decide(values, RaceSettings(), machines=same)
    assert plan_anchors(d, values, same, {}, "m1", RaceSettings()) == []
    assert plan_anchors(d, values, same, {}, "", RaceSettings()) == []
    plan = plan_anchors(d, values, same, {}, "m2", RaceSettings())
    assert [(a.point, a.machine, a.units) for a in plan] == [(d.best, "m2", 3)]
    # Once measured there, it is not measured again.
    anchored = {d.best: {"m2": {"0": 1.0, "1": 1.1, "2": 1.2}}}
    assert plan_anchors(d, values, same, anchored, "m2", RaceSettings()) == []


def test_a_partner_no_point_bridges_is_anchored_too() -> None:
    # A race stopped twice: `old` ran on m0 only, `mid` and the best on m1, `run` is running.
    # On m2, `run` must be compared with `old` (a verdict pair): nothing measured on m0 is
    # measured anywhere else, so `old` is anchored on m2 as well as the best.
    values = {p: {str(i): 1.0 + i for i in range(4)} for p in ("best", "old", "run")}
    machines = {
        "best": dict.fromkeys(values["best"], "m1"),
        "old": dict.fromkeys(values["old"], "m0"),
        "run": dict.fromkeys(values["run"], "m1"),
    }
    d = RoundDecision(
        "best", {"best": BEST, "old": SETTLED, "run": RUNNING}, open_pairs=[("old", "run")]
    )
    plan = plan_anchors(d, values, machines, {}, "m2", RaceSettings(min_units=3), {"old": 2})
    assert [a.point for a in plan] == ["best", "old"]
    assert plan[1].units == 4  # min_units 3 in whole rounds of its 2 slots
    assert "no point measured on both" in plan[1].why
    assert machines_of("old", machines, {"old": {"m2": {}}}) == {"m0", "m2"}


def test_an_anchor_measures_the_machine_offset_on_the_same_units() -> None:
    values = {"a": {"0": 10.0, "1": 20.0, "2": 30.0}}
    machines = {"a": dict.fromkeys(values["a"], "m1")}
    got = offset_of("a", values, machines, {"0": 11.0, "1": 22.0, "2": 33.0})
    assert got is not None and abs(got - 1.1) < 1e-9


def test_a_pair_left_open_across_machines_says_why() -> None:
    rng = random.Random(5)
    values = {
        "best": {str(i): DIFFICULTY[i] * math.exp(rng.gauss(0, 0.01)) for i in range(6)},
        "far": {str(i): DIFFICULTY[i] * 1.5 for i in range(6)},
    }
    machines = {
        "best": dict.fromkeys(values["best"], "a"),
        "far": dict.fromkeys(values["far"], "b"),
    }
    d = decide(values, RaceSettings(), machines=machines)
    assert d.status["far"] == RUNNING
    got = open_across(d, values, machines, {}, RaceSettings())
    assert [(o["pair"], o["machine"]) for o in got] == [(["best", "far"], ACROSS)]
    assert "no point measured on both" in got[0]["reason"]
    # Bridged through a noisy anchor: open, and the reason names the bridge.
    values["mid"] = {str(i): DIFFICULTY[i] * math.exp(rng.gauss(0, 0.3)) for i in range(6)}
    machines["mid"] = {u: "a" if int(u) < 3 else "b" for u in values["mid"]}
    d = decide(values, RaceSettings(), machines=machines)
    wide = [o for o in open_across(d, values, machines, {}, RaceSettings()) if "far" in o["pair"]]
    assert wide and wide[0]["machine"] == "bridged" and wide[0]["via"] == "mid"
    assert "too wide to decide" in wide[0]["reason"]
    assert d.comparisons["far"].outcome == OPEN


def test_anchor_is_a_plain_record() -> None:
    a = Anchor("3", "H100 GPU-b", 3, "the current best")
    assert (a.point, a.units) == ("3", 3)


def test_racing_json_recorded_before_anchors_still_reads(tmp_path: Path) -> None:
    from benchkit.racing.run import _earlier

    old = Path(__file__).resolve().parents[3] / "docs/studies/h100-vulkan-vs-cuda-warm/results"
    got = _earlier(old / "racing.json")
    assert got is not None and got["anchors"] == []
    # An anchor's job is where the next launch writes: only anchors/N is taken from the file.
    data = {
        "launch_s": {},
        "launches": {},
        "anchors": [
            {"point": "0", "machine": "m", "units": 3, "why": "w", "job": "anchors/0"},
            {"point": "1", "machine": "m", "units": 3, "why": "w", "job": "../../etc"},
        ],
    }
    (tmp_path / "racing.json").write_text(json.dumps(data))
    got = _earlier(tmp_path / "racing.json")
    assert got is not None and [a["job"] for a in got["anchors"]] == ["anchors/0"]
    assert got["anchors"][0]["status"] == "planned"

"""Whether a race ended by its own rule or was stopped from outside (Ctrl-C, a lease's end):
a stopped race claims no saving, and its open points say the race stopped before deciding
them, not that a unit limit or budget ended it (the H100 study's race, stopped in round 2)."""

from __future__ import annotations

from typing import Any

from benchkit.report.analysis.racing import _stopped_early, _unfinished, point_line


def _race(finished: bool | None, units: int, budget: float | None = None) -> dict[str, Any]:
    race: dict[str, Any] = {
        "settings": {"margin": 0.05, "confidence": 0.95, "max_units": None, "budget_s": budget},
        "total_units": 16,
        "rounds": 2,
        "machine_s": 600.0,
        "points": {
            "0": {"factors": {"slots": "16"}, "units": 16, "status": "best"},
            "1": {"factors": {"slots": "2"}, "units": units, "status": "undecided"},
        },
    }
    if finished is not None:
        race["finished"] = finished
    return race


def test_racing_json_says_whether_the_race_ended() -> None:
    assert not _stopped_early(_race(True, 5), [])
    assert _stopped_early(_race(False, 16), [])


def test_an_older_racing_json_is_read_from_its_points() -> None:
    def early(r: dict[str, Any]) -> bool:
        return _stopped_early(r, list(r["points"].values()))

    # Undecided below the unit limit with no budget: only a stop from outside leaves that.
    assert early(_race(None, 5))
    # At the unit limit, or with a budget that may have ended it: the race's own end.
    assert not early(_race(None, 16))
    assert not early(_race(None, 5, budget=1800.0))


def test_a_stopped_race_claims_no_saving_and_names_its_open_points() -> None:
    race = _race(False, 5)
    line = _unfinished(race, "en")
    assert line is not None and "did not finish" in line and "saved" not in line
    assert point_line(race, "1", "en") == (
        "measured on 5 units; the race stopped before deciding it"
    )
    ended = _race(True, 16)
    assert _unfinished(ended, "en") is None
    assert "unit limit or its budget" in str(point_line(ended, "1", "en"))


def test_a_verdict_on_a_point_the_finished_race_left_undecided_is_provisional_for_it() -> None:
    """The H100 race left CUDA at 4 slots (MTP off) undecided against 16 slots (p 0.0502):
    the slot verdict's 'still cut by more than 5%' rests on that pair, and now says so."""
    from benchkit.paths import repo_root
    from benchkit.report.verdicts.folder import analyse_folder

    a = analyse_folder(repo_root() / "docs" / "studies" / "h100-vulkan-vs-cuda-warm" / "results")
    assert a.sweep.race_undecided == ["7"]
    # The verdicts on the engine (rules v7) judge the pair themselves: it is one of their open
    # comparisons, with its own interval, whatever the race's test said (MTP at 4 slots: its
    # off point is job 7, its on point ran on the other card, no anchor between them).
    for factor in ("slots", "backend", "mtp"):
        v = a.verdict(factor)
        assert v is not None and "open_pairs" in v.reasons, factor
        jobs = {j for c in v.numbers.open or [] for j in c["jobs"]}  # type: ignore[union-attr]
        assert "7" in jobs, factor

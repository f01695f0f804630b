"""A verdict given per series (MTP on each backend) keeps each series' runs in the ledger, and
a series whose effect moved is a correction though the first series, the verdict's value, did
not move (rules v14: the H100 study's Vulkan series went from 'hurt at 8+ slots' to 'hurt at
4+ slots' while its CUDA series stayed, and no row said so)."""

from __future__ import annotations

from benchkit.report import ledger
from benchkit.report.ledger import Entry
from benchkit.report.writeup.view import _series_text

CUDA = [{"effect": "hurts", "from": 1, "to": 1}, {"effect": "open", "from": 2, "to": 4}]


def _entry(vulkan: list[dict[str, object]], date: str) -> Entry:
    series = [
        {"series": {"backend": "cuda"}, "runs": CUDA},
        {"series": {"backend": "vulkan"}, "runs": vulkan},
    ]
    return {
        "ledger_version": 1,
        "study": "s",
        "published_utc": date,
        "source": "results",
        "verdicts": [
            {
                "factor": "mtp",
                "verdict": CUDA,
                "status": "provisional",
                "missing": [],
                "reasons": ["open_pairs"],
                "numbers": {"largest": 16, "series": series},
            }
        ],
        "rules": 14,
    }


def test_a_series_that_moved_is_a_correction() -> None:
    before = _entry(
        [{"effect": "open", "from": 1, "to": 4}, {"effect": "hurts", "from": 8, "to": None}],
        "2026-12-07T10:04:00Z",
    )
    after = _entry(
        [{"effect": "open", "from": 1, "to": 2}, {"effect": "hurts", "from": 4, "to": None}],
        "2026-12-07T12:00:00Z",
    )
    corr = ledger.corrections([before], after)
    (change,) = corr["changes"]
    assert not change["diff"]["value"]
    (moved,) = change["diff"].get("series") or []
    assert moved["series"] == {"backend": "vulkan"}
    said = _series_text(change, "en")
    assert said == [
        "on Vulkan: hurt at 8+ slots, not decided at 1–4 slots → hurt at 4+ slots, not decided "
        "at 1–2 slots"
    ]
    # The same runs again: nothing to correct.
    assert ledger.corrections([after], after)["changes"] == []


def test_an_entry_that_kept_no_series_is_not_compared_by_series() -> None:
    before = _entry([{"effect": "hurts", "from": 8, "to": None}], "2026-12-07T10:04:00Z")
    before["verdicts"][0]["numbers"] = {"largest": 16}
    after = _entry([{"effect": "hurts", "from": 4, "to": None}], "2026-12-07T12:00:00Z")
    assert ledger.corrections([before], after)["changes"] == []

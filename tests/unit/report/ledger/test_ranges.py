"""The ledger keeps each comparison's ranges (rules v6) and lists one that moved, with its
cause (the warm-up, the cold starts a verdict now leaves out, the rules version); an older
entry without them lists nothing. (The cold starts themselves: analysis/test_cold_start.py.)"""

from __future__ import annotations

import copy
from pathlib import Path

from benchkit.report import ledger
from benchkit.report.ledger import Entry
from benchkit.report.ledger import words as ledger_words
from benchkit.report.verdicts.light import Light

LEDGERS = Path(__file__).parents[3] / "data" / "ledgers"


def _entry(numbers: dict[str, object], date: str, rules: int = 6) -> Entry:
    return {
        "ledger_version": 1,
        "study": "s",
        "published_utc": date,
        "source": "results",
        "verdicts": [
            {
                "factor": "backend",
                "verdict": "cuda",
                "status": "provisional",
                "missing": [],
                "reasons": ["stalled"],
                "numbers": numbers,
            }
        ],
        "rules": rules,
    }


def test_a_ratio_range_that_moved_is_a_correction_with_its_cause() -> None:
    before = _entry(
        {"ratio_range": {"vulkan": [1.30, 1.61]}, "value_range": {"vulkan": [7.8, 12.2]}},
        "2026-12-06T06:31:25Z",
        rules=5,
    )
    before["context"] = {"warmup": "off"}
    now = _entry(
        {"ratio_range": {"vulkan": [1.20, 1.31]}, "value_range": {"vulkan": [7.2, 9.7]}},
        "2026-12-08T00:00:00Z",
    )
    now["context"] = {"warmup": "on"}
    (c,) = ledger.corrections([before], now)["changes"]
    assert not c["diff"]["value"] and not c["diff"]["status"]
    what = ledger_words.what_changed(c, "en")
    assert "Vulkan 1.30x–1.61x → 1.20x–1.31x" in what
    assert "Vulkan 7.8 s–12.2 s → 7.2 s–9.7 s" in what and what.endswith("rules v5 → v6")
    why = ledger_words.correction_why(c["why"], "en")
    assert "warm-up off → on" in why and "v5 → v6" in why
    assert "1.30~1.61배" in ledger_words.what_changed(c, "ko")
    # Inside the tolerance: no correction.
    close = _entry({"ratio_range": {"vulkan": [1.21, 1.32]}}, "2026-12-09T00:00:00Z")
    assert ledger.corrections([now], close)["changes"] == []


def test_an_old_entry_without_ranges_reports_no_change() -> None:
    """The published ledgers' lines (rules v5 and before) kept no ranges: they load, and a
    later entry with ranges shows no change from them."""
    path = LEDGERS / "h200-vulkan-vs-cuda.ledger.jsonl"
    old = ledger.load(path, "h200-vulkan-vs-cuda")
    assert old and all("ratio_range" not in (v.get("numbers") or {}) for v in old[-1]["verdicts"])
    now = copy.deepcopy(old[-1])
    now["published_utc"] = "2026-12-09T00:00:00Z"
    next(v for v in now["verdicts"] if v["factor"] == "backend")["numbers"] = {
        "ratio_range": {"vulkan": [1.2, 1.31]}
    }
    assert ledger.corrections([old[-1]], now)["changes"] == []
    assert Light.of({}).ratio_range is None
    assert Light.of({"ratio_range": {"vulkan": [1.2, "x"]}}).ratio_range is None


def test_a_correction_names_the_cold_starts_it_now_leaves_out() -> None:
    """The ledger keeps the seconds of cold start each verdict left out, so the correction of
    a figure that a cold start had inflated names that cause, not only the rules version."""
    before = _entry({"ratio_range": {"vulkan": [1.30, 1.61]}}, "2026-12-06T09:03:55Z", rules=5)
    now = _entry(
        {"ratio_range": {"vulkan": [1.20, 1.31]}, "cold_s": {"0": 20.3}}, "2026-12-06T10:00:00Z"
    )
    (c,) = ledger.corrections([before], now)["changes"]
    why = ledger_words.correction_why(c["why"], "en")
    assert "cold starts now left out of the figures: job 0 (20.3 s)" in why
    assert "v5 → v6" in why
    assert "콜드 스타트" in ledger_words.correction_why(c["why"], "ko")
    # Left out in both entries: not a cause of this change.
    again = _entry(
        {"ratio_range": {"vulkan": [1.30, 1.45]}, "cold_s": {"0": 20.3}}, "2026-12-07T00:00:00Z"
    )
    (c2,) = ledger.corrections([now], again)["changes"]
    assert "cold" not in c2["why"]

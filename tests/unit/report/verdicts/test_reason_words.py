"""Every reason a verdict can record reads as words in the report's prose, in every language:
the H100 study's slot verdict printed 'knee\\_not\\_reached' for a reason that had no sentence."""

from __future__ import annotations

import pytest

from benchkit.report.analysis.numbers import CapacityNumbers, SlotsNumbers
from benchkit.report.lang.words import REASON_WORDS
from benchkit.report.verdicts import reasons
from benchkit.report.verdicts.analyse import Verdict


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("code", sorted(REASON_WORDS))
def test_every_recorded_reason_reads_as_words(code: str, lang: str) -> None:
    for numbers in (SlotsNumbers(), CapacityNumbers()):
        v = Verdict("slots", None, "provisional", [], "m", numbers, reasons=[code])
        text = reasons.reason_text(code, v, lang)
        assert "_" not in text and text != code
        # These three are stated from their numbers (empty here, so nothing to state).
        assert text or code in {"inside_noise", "stalled", "contaminated"}


def test_a_telemetry_reason_benchkit_wrote_is_stated_in_the_report_language() -> None:
    """The H100 study's Korean report quoted job 4's and job 10's telemetry reasons in English:
    benchkit's own fixed reasons are translated, a library's own words are quoted as recorded."""
    from benchkit.report.writeup.energy import KNOWN_REASONS, reason_words

    for reason in KNOWN_REASONS:
        ko = reason_words(reason + ".", "ko")
        assert ko != reason and not any("a" <= ch <= "z" for ch in ko)
        assert reason_words(reason, "en") == reason
    raw = "no GPU telemetry: NVML found no usable GPU (NVMLError: Driver Not Loaded)"
    assert reason_words(raw, "ko") == raw

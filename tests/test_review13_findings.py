"""Review 13 (two experts recomputing the six studies from results/), each finding on the
published data it came from."""

from __future__ import annotations

from functools import cache

from benchkit.paths import repo_root
from benchkit.report.verdicts.cold_words import cold_decides_all
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.writeup import claim_figures, headline

STUDIES = repo_root() / "docs" / "studies"


@cache
def h200_vulkan() -> Analysed:
    return analyse_folder(STUDIES / "h200-vulkan-vs-cuda" / "results")


def _verdict(a: Analysed, factor: str) -> Verdict:
    return next(v for v in a.verdicts if v.factor == factor)


def test_a_drafting_effect_decided_only_without_a_cold_start_is_named_by_no_headline() -> None:
    """H200 Vulkan: MTP at Vulkan, 1 slot is decided (1.59x) only with job 0's cold start
    left out; as measured 1.26x, open. The headline read "MTP appears to have hurt at 1 slot,
    and at 1 slot only with a cold start left out ... MTP on took 1.59x"."""
    a = h200_vulkan()
    mtp = _verdict(a, "mtp")
    assert cold_decides_all(mtp, {"backend": "vulkan"})
    by = {v.factor: v for v in a.verdicts}
    said = headline.headline(by, "en", "unit")
    assert "MTP appears to have hurt" not in said
    assert "on Vulkan MTP was not decided as measured at 1 slot (1.26x), only with a cold " in said
    figure = claim_figures.figures(mtp, "en")
    assert figure == ["with the cold start left out, MTP on took 1.59x the time of MTP off"]

"""Review 10's findings on the republished studies, each on its data: the units that would
decide an open pair are the fewest that do (the engine returned its first overshoot: 113
where 80 decide); a sweep of two workloads describes each; a projection beside twin runs
gives their noise, not "no confidence interval"; a factor open at every setting says so."""

from __future__ import annotations

from functools import cache

from benchkit.paths import repo_root
from benchkit.report.analysis.numbers import ProjectionNumbers, SlotsNumbers
from benchkit.report.verdicts.factor_words import factor_sentence
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.verdicts.reasons import reason_text
from benchkit.report.writeup.conditions import _workload_view

STUDIES = repo_root() / "docs" / "studies"
ANCHORS = (
    "study.anchors=[../machine-check/slots-1,../machine-check/slots-8,../machine-check/slots-16]"
)


@cache
def cpu() -> Analysed:
    return analyse_folder(
        STUDIES / "cpu-qwen2.5-coder-real" / "results",
        ["study.anchors=[../results-twin]", "study.quality.limit={changed: 0.25}"],
    )


def test_the_units_needed_are_the_fewest_that_decide() -> None:
    """Two reviewers recomputed the counts from the Definitions' formula: H100 8 against 16
    slots 80 (printed 113), MTP 2 and 4 against 8 slots 15 and 144 (18, 206), H200 Vulkan
    2 and 4 against 8 slots 23 and 42 (30, 57)."""
    h100 = analyse_folder(STUDIES / "h100-vulkan-vs-cuda-warm" / "results", [ANCHORS])
    s = h100.verdict("slots")
    assert s is not None and isinstance(s.numbers, SlotsNumbers)
    needed = {c["other"]["slots"]: c["needed"] for c in s.numbers.open or []}
    assert needed[8] == 80
    mtp = analyse_folder(STUDIES / "h200-glm4moe-30b-a3b-mtp" / "results").verdict("slots")
    assert mtp is not None and isinstance(mtp.numbers, SlotsNumbers)
    assert {c["other"]["slots"]: c["needed"] for c in mtp.numbers.open or []} == {2: 15, 4: 144}


def test_each_workload_swept_is_described() -> None:
    """The CPU study swept code-edit-10 and prose-10; its Workload line gave code-edit-10's
    alone."""
    _, line = _workload_view(cpu().results, "en")
    assert line is not None
    assert "Workload code-edit-10:" in line and "Workload prose-10:" in line


def test_a_projection_beside_twins_gives_their_noise() -> None:
    p = cpu().verdict("projection")
    assert p is not None and isinstance(p.numbers, ProjectionNumbers)
    assert p.numbers.twin_noise is not None and 0.02 < p.numbers.twin_noise < 0.04
    said = reason_text("single_run", p, "en")
    assert "no confidence interval" not in said
    assert "whose run-to-run noise twin runs measured at about 3.0%" in said


def test_a_factor_open_at_every_setting_says_so() -> None:
    k = cpu().verdict("cache_type_k")
    assert k is not None
    said = factor_sentence(k, "en")
    assert "The verdict is the same at the 5 other settings of the other factors" in said

"""Review 9's findings on the published studies (rules v13), each on its data, and the CPU
study's quiet rerun with its twin: a ratio paired on fewer units than a figure holds gives the
two means it is of; a partly imputed figure is marked and its job's own stands beside it; the
knee may lie up to a count only another machine state measured, and "no larger count was
faster" is said only of counts settled on one; twins say how far a run moves; a swept
factor's open pair is proposed again."""

from __future__ import annotations

from functools import cache

import pytest

from benchkit.paths import repo_root
from benchkit.report.analysis.numbers import ProjectionNumbers, RepeatsNumbers, SlotsNumbers
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.compare_words import how_text
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.writeup import use_this
from benchkit.report.writeup.time_rows import imputed_jobs, rows_note

STUDIES = repo_root() / "docs" / "studies"
H100 = STUDIES / "h100-vulkan-vs-cuda-warm"
ANCHORS = (
    "study.anchors=[../machine-check/slots-1,../machine-check/slots-8,../machine-check/slots-16]"
)
CPU = STUDIES / "cpu-qwen2.5-coder-real"


@cache
def h100() -> Analysed:
    return analyse_folder(H100 / "results", [ANCHORS])


@cache
def cpu() -> Analysed:
    return analyse_folder(
        CPU / "results", ["study.anchors=[../results-twin]", "study.quality.limit={changed: 0.25}"]
    )


def test_a_ratio_on_fewer_units_than_its_figures_gives_the_means_it_is_of() -> None:
    """Review 9: "8 slots took 1.04x the time of 16 slots ... from the anchor runs" beside the
    anchor runs' figures 5.747 and 5.751 s (1.00x): the 8-slot run ran 8 units, the 16-slot
    run 16, and the ratio is of the 8 both ran."""
    s = h100().verdict("slots")
    assert s is not None and isinstance(s.numbers, SlotsNumbers)
    c = next(
        c
        for c in s.numbers.comparisons or []
        if c["other"].get("slots") == 8 and any("machine-check" in j for j in c["jobs"])
    )
    assert c["units"] == 8 and "sides" in c
    base, other = c["sides"]
    assert c["ratio"] == pytest.approx(other / base)
    assert other / base == pytest.approx(1.04, abs=0.005)
    text = how_text(c, "en")
    assert "8 units paired, on those units 5.7 s against 5.5 s a unit" in text
    assert "그 단위에서는 단위당" in how_text(c, "ko")


def test_a_partly_imputed_figure_is_marked_with_its_own_beside_it() -> None:
    """Review 9: job 9's 6.1 s read as measured (it ran 8 of the 16 units it is stated on,
    5.85 s a unit on them); the projection and the headline rested on it."""
    a = h100()
    assert "9" in imputed_jobs(a)
    assert a.sweep.restated["9"].own == pytest.approx(5.854, abs=0.001)
    note = rows_note(a, "en")
    assert "‡ Partly imputed" in note and "job 9 5.9 s (8 of 16 units)" in note
    p = a.verdict("projection")
    assert p is not None and isinstance(p.numbers, ProjectionNumbers)
    assert p.numbers.own_s_per_unit == pytest.approx(5.854, abs=0.001)
    # A job that ran every unit it is stated on is not marked.
    assert "3" not in imputed_jobs(a)


def test_larger_counts_on_another_machine_state_leave_the_knee_open_above() -> None:
    """Review 9 would not sign the qwen3 knee: 8 and 16 slots ran with 19.7 GiB more of the
    card in use, compared with 6 slots only across machine states, yet "no larger count was
    more than 5% faster"."""
    s = analyse_folder(STUDIES / "h200-qwen3-30b-a3b" / "results").verdict("slots")
    assert s is not None and isinstance(s.numbers, SlotsNumbers)
    assert s.numbers.above_open == [8, 16] and s.numbers.knee_high == 16
    said = sentences.slots_sentence(s, "en")
    assert "No larger count was more than" not in said
    assert "Whether 8 slots and 16 slots would be more than 5% faster was not decided" in said
    # The decode study's larger counts are settled on one machine: said as before.
    d = analyse_folder(STUDIES / "h200-glm4moe-30b-a3b-decode" / "results").verdict("slots")
    assert d is not None and isinstance(d.numbers, SlotsNumbers) and not d.numbers.above_open


def test_twins_measure_the_run_to_run_noise_and_the_report_says_so() -> None:
    """The CPU study run twice on a quiet machine (results, results-twin): each comparison's
    interval holds the twins' run-to-run noise, and the repeats section says that each point
    ran twice, not "once"."""
    r = cpu().verdict("repeats")
    assert r is not None and isinstance(r.numbers, RepeatsNumbers)
    assert r.numbers.twin_sd is not None and 0 < r.numbers.twin_sd < 0.1
    said = sentences.repeats_sentence(r, "en", 0.05)
    assert said.startswith("Each point ran once in this sweep and again in the anchor runs")
    d = cpu().verdict("spec=draft")
    assert d is not None and d.status == "complete"


def test_a_swept_factors_open_pair_is_proposed_again() -> None:
    """The CPU study's recommendation names "f16 K cache", whose verdict has an open pair, yet
    said "no further run of this sweep would settle them": a swept factor is acted on."""
    a = cpu()
    k = a.verdict("cache_type_k")
    assert k is not None and k.status == "provisional"
    assert "cache_type_k" in {v.factor for v in use_this.factor_verdicts(a)}
    steps = use_this.next_steps(a, "python -m benchkit")
    assert any("server.cache_type_k=f16,q8_0" in s.command for s in steps)


def test_a_knee_range_that_moves_is_a_changed_value_in_the_ledger() -> None:
    """The qwen3 knee's range moved from 3-6 to 3-16 slots (its value, 6, stayed) and the
    ledger said "No verdict has changed": the range is part of the value a reader sees."""
    from benchkit.report import ledger

    def entry(high: int | None, across: bool = False) -> dict[str, object]:
        numbers: dict[str, object] = {"knee_low": 3, "knee_high": high}
        if across:
            numbers["knee_across"] = True
        return {"verdict": 6, "status": "provisional", "reasons": [], "numbers": numbers}

    moved = ledger.diff("slots", entry(None), entry(16), 0.05)  # type: ignore[arg-type]
    assert moved is not None and moved["value"]
    assert ledger.diff("slots", entry(16), entry(16), 0.05) is None  # type: ignore[arg-type]
    placed = ledger.diff("slots", entry(16), entry(16, True), 0.05, True)  # type: ignore[arg-type]
    assert placed is not None and placed["value"]
    # From rules v11 an entry leaves an end that is the knee itself out (None is not written):
    # between two such entries an absent end is the knee, and its arrival a change.
    bare = {"verdict": 6, "status": "provisional", "reasons": [], "numbers": {"knee_low": 3}}
    grown = ledger.diff("slots", bare, entry(16), 0.05, True)  # type: ignore[arg-type]
    assert grown is not None and grown["value"]
    # An entry from before rules v11 recorded no range: nothing to compare it on.
    old = {"verdict": 6, "status": "provisional", "reasons": [], "numbers": {}}
    assert ledger.diff("slots", old, entry(16), 0.05) is None  # type: ignore[arg-type]

"""Rules v14, each finding on the published data it came from: pairs of the H100 study whose
cards share no point compared through a chain of cards; a job extended across cards placed
unit by unit where its runs say which card each had, and never paired as one machine where
they do not; a unit that held a cold start still paired less its excess (H200 Vulkan, job 0);
a job that started with more of its card in use said so (qwen3, jobs 5 and 6), not "another
machine"."""

from __future__ import annotations

from functools import cache

from benchkit.compare.engine import ACROSS, BRIDGED, SAME, WORSE
from benchkit.paths import repo_root
from benchkit.report.analysis.numbers import ProjectionNumbers, SlotsNumbers, of
from benchkit.report.verdicts.compare_words import comparison_text
from benchkit.report.verdicts.engine_of import comparison_json, engine_of
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.verdicts.reasons import reason_text

STUDIES = repo_root() / "docs" / "studies"
ANCHORS = (
    "study.anchors=[../machine-check/slots-1,../machine-check/slots-8,../machine-check/slots-16]"
)
CARD_A, CARD_B, CARD_C = "GPU-3d382b62", "GPU-a482737e", "GPU-dd00b660"


@cache
def h100() -> Analysed:
    return analyse_folder(STUDIES / "h100-vulkan-vs-cuda-warm" / "results", [ANCHORS])


def point(backend: str, slots: int, mtp: bool) -> str:
    return f"backend={backend}, slots={slots}, mtp={str(mtp).lower()}"


def test_cards_that_share_no_point_are_bridged_through_a_chain() -> None:
    """Vulkan at 4 slots ran MTP off on card A and on on card B, which share no point; A and
    the check card share Vulkan 8 slots, the check card and B CUDA 8 slots. Through both the
    pair is decided (left open "on two machines" before)."""
    c = engine_of(h100().sweep).compare(point("vulkan", 4, False), point("vulkan", 4, True))
    assert c is not None and c.machine == BRIDGED and c.outcome == WORSE
    assert c.chain == (point("vulkan", 8, False), point("cuda", 8, False))
    assert len(c.machines) == 3 and CARD_A in c.machines[0] and CARD_B in c.machines[-1]
    # Each step's term rests on one point run on both cards: not measured.
    assert c.interaction is None
    said = comparison_text(comparison_json(h100().sweep, c), "en")
    assert "bridged over 3 machines through Vulkan, 8 slots, MTP off and CUDA, 8 slots" in said


def test_an_extended_job_is_placed_unit_by_unit_only_where_its_runs_say_so() -> None:
    """Job 15 ran twice on two cards (B, then C): each run's units on its card. Job 5 ran six
    times on two cards: only its last run's units are known to be C's; the rest are on A or
    C, not known, and pair with nothing (jobs 5 and 7 each carried the name "A + C" and were
    paired unit by unit as one machine, u003 measured on C by one and on A by the other)."""
    eng = engine_of(h100().sweep)
    by_job = {
        (x.job, (x.machine.split() or [""])[-1] if "+" not in x.machine else "A+C"): set(x.units)
        for xs in eng.by_point.values()
        for x in xs
    }
    assert by_job[("15", CARD_B)] == {"u000", "u001", "u002"}
    assert by_job[("15", CARD_C)] == {"u003"}
    assert by_job[("5", CARD_C)] == {"u010", "u011"}
    assert len(by_job[("5", "A+C")]) == 10
    c = eng.compare(point("cuda", 2, False), point("cuda", 4, False))
    assert c is not None and c.machine != SAME


def test_a_part_of_a_job_gives_no_figure_without_a_unit_in_common() -> None:
    """CUDA 2 slots: job 5's last run (u010, u011) and job 15's (u003) both ran on card C
    but share no unit: their means are of other units, so no "0.92x" on one machine."""
    c = engine_of(h100().sweep).compare(point("cuda", 2, False), point("cuda", 2, True))
    assert c is not None and c.units > 0 and c.machine == ACROSS
    said = comparison_text(comparison_json(h100().sweep, c), "en")
    assert "measured on several cards, which unit on which not recorded" in said


def test_the_unit_that_held_a_cold_start_is_paired_less_its_excess() -> None:
    """H200 Vulkan job 0: its first unit held the 20.3 s cold start and two stalls. Leaving
    such units out of every pair (a v14 draft) decided the 1-slot backend pair only through
    the stalls, and took 5 of the 8-slot job's 8 units, a first wave (review 12): the unit is
    paired less the cold start's excess, and the pair stays open (1.27x, 0.95x-1.69x)."""
    a = analyse_folder(STUDIES / "h200-vulkan-vs-cuda" / "results")
    v = a.verdict("backend")
    assert v is not None and "open_pairs" in v.reasons
    assert "decided_without_cold" not in v.reasons
    jobs = {x.job: x for xs in engine_of(a.sweep).by_point.values() for x in xs}
    assert "u000" in jobs["0"].units and len(jobs["3"].units) == 8


def test_two_states_of_one_card_are_not_called_two_machines() -> None:
    """qwen3 jobs 5 and 6 (8 and 16 slots) started with 19.7 GiB more of the card's memory in
    use: the comparisons said "on two machines, no point run on both". Said as measured: the
    memory at the server's start (review 12 would not sign "while something else held")."""
    a = analyse_folder(STUDIES / "h200-qwen3-30b-a3b" / "results")
    v = a.verdict("slots")
    assert v is not None
    n = of(SlotsNumbers, v.numbers)
    far = [c for c in n.open or [] if c["other"].get("slots") in (8, 16)]
    assert far
    for c in far:
        said = comparison_text(c, "en")
        assert (
            "one of the two started, in another sweep, with 19.7 GiB more of the card's memory "
            "in use" in said
        )
        assert "on two machines" not in said


def test_a_projection_says_which_machine_its_figure_is_of() -> None:
    """The H100 projection (CUDA, 8 slots, MTP off, job 9 on card B) was said bare, where
    the study's points differ by up to 1.16x between cards (Vulkan 8 slots, card A against
    the check card); the projected point itself took 1.02x the check card's time on B."""
    p = h100().verdict("projection")
    assert p is not None and isinstance(p.numbers, ProjectionNumbers)
    spread = p.numbers.machines
    assert spread is not None and "other_machines" in p.reasons
    assert CARD_B in spread["machine"] and "GPU-9ec42d2e" in spread.get("other", "")
    assert spread["points"] == 6 and round(spread["ratio"], 2) == 1.16
    assert round(spread.get("own", 0.0), 2) == 1.02
    said = reason_text("other_machines", p, "en")
    assert "measured on GPU-a482737e (1.02x its time on GPU-9ec42d2e)" in said
    assert "up to 1.16x" in said
    # One machine: nothing to say.
    one = analyse_folder(STUDIES / "h200-glm4moe-30b-a3b-mtp" / "results").verdict("projection")
    assert one is not None and "other_machines" not in one.reasons

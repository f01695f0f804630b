"""An open-loop sweep's report reads as one (#45): its title and question come from the load
swept, not seconds per unit against parallel slots; no closed-loop text (the two per-unit
bases, units compared pairwise, units in flight) and no figure of seconds per unit against
slots, drawn or linked. From a real CPU sweep (fixtures/results/open-loop-cpu)."""

from __future__ import annotations

from pathlib import Path

from benchkit.paths import repo_root
from benchkit.report.writeup.render import render_report

OPEN = repo_root() / "fixtures" / "results" / "open-loop-cpu"

# Sentences of the closed-loop report that say nothing true of open-loop load.
CLOSED_LOOP = (
    "change seconds per unit",
    'Every "seconds per unit" names its basis',
    "projections use it",
    "Two points are compared on the units both replayed",
    "the time-integral of the units in flight",
    "verdicts use per-unit seconds",
    "make one unit much slower",
    "states its comparison without them",
    "How do rate change",
    "–:",
)


def test_an_open_loop_report_has_no_closed_loop_text_and_no_slots_figure(tmp_path: Path) -> None:
    out = render_report(OPEN, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert md.startswith("# tiny-moe on a host of 2 CPU threads: open-loop load\n")
    assert "Question: How much load does this setting keep up with for this workload?" in md
    for text in CLOSED_LOOP:
        assert text not in md, text
    # The capacity of the one setting measured, said without a setting's empty name.
    assert "The setting measured holds at least 4.00 calls/s offered" in md
    assert "Each point ran once: whether a load held rests on its one pass" in md
    assert "the time-integral of the calls in flight" in md
    # The figures it draws are its own, each linked; none of seconds per unit against slots.
    assert sorted(p.name for p in out.glob("*.png")) == ["capacity.png", "pareto.png"]
    assert "slots.png" not in md and "slots.png" not in (out / "report.html").read_text()
    assert "](capacity.png)" in md and "](pareto.png)" in md


def test_the_korean_open_loop_report_says_the_same(tmp_path: Path) -> None:
    out = render_report(OPEN, tmp_path / "ko", overrides=["study.lang=ko"])
    md = (out / "report.md").read_text()
    assert md.startswith("# CPU 스레드 2개인 호스트에서 tiny-moe 돌리기: 개방 루프 부하\n")
    assert "이 워크로드에서 이 설정은 얼마나 큰 부하를 따라가는가?" in md
    assert "–:" not in md and "slots.png" not in md

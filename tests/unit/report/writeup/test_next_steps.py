"""The Next commands of a provisional report (a hostile user's review): slot counts the units
a job replays fill in whole rounds, the report rendered as this one was (its study.*
overrides), and every new sweep into a folder of its own beside the results."""

from __future__ import annotations

import shlex
from itertools import product

from benchkit.paths import repo_root
from benchkit.report.analysis.numbers import SlotsNumbers
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.exercise import fills
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.verdicts.kind import RunUnits
from benchkit.report.verdicts.kinds.slots.next_run import proposes
from benchkit.report.writeup.use_this import StepKind, next_steps, shown

STUDIES = repo_root() / "docs" / "studies"
H100 = STUDIES / "h100-vulkan-vs-cuda-warm" / "results"
VULKAN = STUDIES / "h200-vulkan-vs-cuda" / "results"
CHECKS = ",".join(f"../machine-check/slots-{n}" for n in (1, 8, 16))
GIVEN = [f"study.anchors=[{CHECKS}]", "study.knee_gain=0.04", "study.quality.limit={changed: 0.25}"]


def _slots_verdict(counts: list[int], *, one: bool = False) -> Verdict:
    rows = [{"slots": n} for n in counts]
    numbers = SlotsNumbers(rows=rows, knee_reached=False)  # type: ignore[arg-type]
    reasons = ["one_slot_count"] if one else ["knee_not_reached"]
    return Verdict("slots", max(counts), "provisional", reasons=reasons, numbers=numbers)


def test_every_proposed_slot_count_is_filled_in_whole_rounds_by_the_units() -> None:
    """The class, not the example: whatever was measured and however many units the run and
    the workload have, each new count fills the units the proposal replays (exercise.fills)."""
    measured = [[1], [4], [1, 16], [1, 2, 4, 8], [2, 3, 4, 6], [1, 12], [3]]
    for counts, units, extra in product(measured, [1, 3, 6, 8, 12, 16, 24], [0, 8, 40]):
        run = RunUnits(units, units + extra)
        for one in (True, False):
            if one != (len(counts) == 1):
                continue
            p = proposes(_slots_verdict(counts, one=one), run)
            if p is None:
                continue
            replays = int(dict(p.also).get("workload.units", units))
            assert units <= replays <= units + extra
            for point in p.points:
                assert fills(int(point["slots"]), replays), (counts, units, extra, p)
            assert set(p.left_out).isdisjoint(int(pt["slots"]) for pt in p.points)


def test_the_vulkan_studys_next_counts_fill_its_units() -> None:
    """It replays 8 of gpu-16's 16 units: 6 slots (a last round of 2) is left out, and 16
    slots run on all 16 units rather than 8, half of its slots idle."""
    (step,) = [s for s in next_steps(analyse_folder(VULKAN), "b") if s.kind is StepKind.more_slots]
    args = shlex.split(step.command)
    assert "slots=1,2,4,8,16" in args and "workload.units=16" in args
    assert step.left_out == (6,) and step.units == 16


def test_a_next_run_writes_a_new_folder_and_renders_its_report_as_this_one() -> None:
    a = analyse_folder(H100, GIVEN)
    steps = next_steps(a, "python -m benchkit")
    assert {s.kind for s in steps} == {StepKind.repeats, StepKind.twins}
    for s in steps:
        # A repeats step runs one sweep per cross product of its points, each with its report.
        parts = s.command.split(" && ")
        assert len(parts) % 2 == 0
        sweep, report = parts[-2:]
        folders = [x.split("=", 1)[1] for x in shlex.split(sweep) if x.startswith("hydra.sweep")]
        # Beside the results, named as the working folder reaches them (a post shows no
        # local paths).
        assert len(folders) == 1 and folders[0] != str(shown(H100))
        assert folders[0].startswith(f"{shown(H100)}-")
        words = shlex.split(report)
        assert words[:3] == ["python", "-m", "benchkit.report"]
        assert "study.knee_gain=0.04" in words and "study.quality.limit={changed: 0.25}" in words
        anchors = next(w for w in words if w.startswith("study.anchors="))
        if s.kind is StepKind.twins:
            # This report again, with the twin beside the anchors it was given.
            assert words[3] == str(shown(H100))
            assert anchors == f"study.anchors=[{CHECKS},../results-twin]"
        else:
            # The new folder's report, rendered as this one was.
            assert words[3] == folders[0] and anchors == GIVEN[0]
    # A declared noise too (it leaves no twin to propose: the noise is given).
    noisy = next_steps(analyse_folder(H100, [*GIVEN, "study.noise=0.05"]), "python -m benchkit")
    (repeats,) = noisy
    assert repeats.kind is StepKind.repeats and "study.noise=0.05" in repeats.command


def test_a_resumed_sweep_goes_into_its_own_folder_and_a_plain_report_adds_nothing() -> None:
    steps = next_steps(analyse_folder(VULKAN), "python -m benchkit")
    (resume,) = [s for s in steps if s.kind is StepKind.resume]
    assert resume.command.endswith(f"hydra.sweep.dir={shown(VULKAN)}")
    for s in steps:
        if s.kind is not StepKind.twins:
            # The sweep renders its own report: only sweeps are joined (one per block).
            assert all(
                p.split()[:3] == ["python", "-m", "benchkit"] for p in s.command.split(" && ")
            )
        if s.kind is not StepKind.resume:
            assert f"hydra.sweep.dir={shown(VULKAN)}-" in s.command


def test_a_twin_already_among_the_anchors_is_not_proposed_again() -> None:
    """The CPU study is rendered with its twin (../results-twin) as anchors: proposing "the
    same sweep again into a twin folder" named the same folder, whose jobs a rerun reuses, so
    following Next looped on itself (review 12's hostile user)."""
    cpu = repo_root() / "docs" / "studies" / "cpu-qwen2.5-coder-real" / "results"
    a = analyse_folder(cpu, ["study.anchors=[../results-twin]"])
    assert not [s for s in next_steps(a, "python -m benchkit") if s.kind is StepKind.twins]
    bare = analyse_folder(cpu)
    assert [s for s in next_steps(bare, "python -m benchkit") if s.kind is StepKind.twins]

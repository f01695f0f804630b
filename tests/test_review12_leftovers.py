"""What review 12 left, each on the published data it came from: a table row whose verdict
pairs other jobs than the row's figures gives that pair's own figures (H100, 8 slots, MTP
off); a CPU post's title says the threads and cores it ran on; jobs that one machine is only
assumed to have run (a hardware profile on a shared host name, separate sweeps) are said to
be so (the MTP study's job 7); settings where a drafter drafted nothing are given with their
measured figures, not as "the same work"; and a new job records its boot, which tells two
lent machines of one host name apart."""

from __future__ import annotations

import json
import math
import shutil
from functools import cache
from pathlib import Path

import pytest

from benchkit.compare.engine import ACROSS, OPEN
from benchkit.config.schema import HardwareConfig
from benchkit.host.provenance import hardware_info
from benchkit.paths import repo_root
from benchkit.report.analysis import machine_profile
from benchkit.report.analysis.numbers import BackendNumbers, DraftingNumbers, of
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.engine_of import comparison_json, engine_of
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.verdicts.kind import Page
from benchkit.report.verdicts.kinds.backend.section import section
from benchkit.report.verdicts.reasons import reason_text
from benchkit.report.writeup.post import post_title
from benchkit.results.store import find_results

STUDIES = repo_root() / "docs" / "studies"
H100_ANCHORS = (
    "study.anchors=[../machine-check/slots-1,../machine-check/slots-8,../machine-check/slots-16]"
)


@cache
def h100() -> Analysed:
    return analyse_folder(STUDIES / "h100-vulkan-vs-cuda-warm" / "results", [H100_ANCHORS])


@cache
def cpu() -> Analysed:
    return analyse_folder(
        STUDIES / "cpu-qwen2.5-coder-real" / "results", ["study.anchors=[../results-twin]"]
    )


def _verdict(a: Analysed, factor: str) -> Verdict:
    return next(v for v in a.verdicts if v.factor == factor)


def test_a_row_whose_verdict_pairs_other_jobs_gives_their_figures() -> None:
    """H100, 8 slots, MTP off: the row's figures are jobs 9 and 8 (6.1 s, 6.6 s, two cards);
    the verdict's 1.28x pairs the check card's anchor runs, whose own means it divides."""
    a = h100()
    b = _verdict(a, "backend")
    c = next(
        c
        for c in of(BackendNumbers, b.numbers).comparisons or []
        if c["base"].get("slots") == 8 and c["base"].get("mtp") is False
    )
    assert any("/" in j for j in c["jobs"]) and "means" in c
    base, other = c["means"]
    assert other / base == pytest.approx(c["ratio"], rel=1e-9)
    page = Page(lang="en", unit="unit", sweep=a.sweep, knee_gain=0.05, figs={})
    row = next(r for r in section(b, page)["table"] if r["setting"] == "8 slots, MTP off †")
    assert row["paired"] == f"Vulkan 1.28x (anchor runs: {other:.1f} s against {base:.1f} s)"


def test_a_cpu_post_title_says_its_threads_and_cores() -> None:
    """Every job of the CPU study passed --threads 1 on a host of 2 cores: "on the CPU" hid
    what its figures depend on."""
    a = cpu()
    argv = [list(r.result.provenance.server.argv) for r in a.results]  # type: ignore[union-attr]
    assert {x[x.index("--threads") + 1] for x in argv} == {"1"}
    assert {r.result.provenance.hardware["cpu_count"] for r in a.results} == {2}
    assert "on 1 of 2 CPU threads" in post_title(a, "en")
    assert "CPU 스레드 2개 중 1개" in post_title(a, "ko")


def test_jobs_of_separate_sweeps_known_only_by_profile_are_said_so() -> None:
    """The MTP study's job 7 came from a one-job sweep (alias benchkit-mtp8-0-...) beside jobs
    0-6 (benchkit-mtp-N-...), no card UUID or boot ID recorded: compared as one machine by
    'h200@vm', which the report now says."""
    a = analyse_folder(STUDIES / "h200-glm4moe-30b-a3b-mtp" / "results")
    found = [c for c in a.caveats if c["kind"] == "machine_by_profile"]
    assert found == [
        {
            "kind": "machine_by_profile",
            "machine": "h200@vm",
            "sweeps": {"mtp": [str(j) for j in range(7)], "mtp8": ["7"]},
            # Job 6 ended 07:40:59, job 7 started 07:46:26 (review 13: how far apart).
            "gaps": [("mtp", "mtp8", 327.0)],
        }
    ]
    said = machine_profile.say(found[0], "en")
    assert said.startswith("jobs 0–6 (sweep mtp) and job 7 (sweep mtp8) ran in separate sweeps")
    assert "the report compares them as two machine states" in said
    # Review 13: so the 8-slot MTP pair (job 3 against job 7) is no longer decided on "one
    # machine" at an interval of 1.52x-1.54x, but across two machine states, with none.
    eng = engine_of(a.sweep)
    c = eng.compare("slots=8, mtp=false", "slots=8, mtp=true")
    assert c is not None and c.machine == ACROSS and c.outcome == OPEN
    assert comparison_json(a.sweep, c).get("sweeps") is True
    # The CPU study's twin sweep is the same case, its anchor folder's jobs named as a folder.
    twin = [c for c in cpu().caveats if c["kind"] == "machine_by_profile"]
    assert len(twin) == 1 and "the 18 jobs of ../results-twin" in machine_profile.say(twin[0], "en")


def test_a_recorded_boot_tells_machines_apart_and_silences_the_caveat(tmp_path: Path) -> None:
    """A job of today records its boot ID; two jobs of one profile and host name with two
    boots are two machines to the engine, and the caveat (which is for jobs that recorded
    none) says nothing of them."""
    boot = hardware_info(HardwareConfig()).get("boot_id")
    assert boot and len(boot) >= 32
    src = STUDIES / "h200-glm4moe-30b-a3b-mtp" / "results"
    dst = tmp_path / "results"
    shutil.copytree(src, dst)
    for r in find_results(dst):
        path = r.job_dir / "result.json"
        data = json.loads(path.read_text())
        data["provenance"]["hardware"]["boot_id"] = "b" * 32 if r.job_dir.name == "7" else boot
        path.write_text(json.dumps(data))
    a = analyse_folder(dst)
    assert not [c for c in a.caveats if c["kind"] == "machine_by_profile"]
    machines = {a.sweep.setups[j].get("machine") for j in ("3", "7")}
    assert len(machines) == 2


def test_settings_where_the_drafter_drafted_nothing_give_their_figures() -> None:
    """CPU study, n-gram: four settings drafted no token. Review 12 read "the server did the
    same work as with it off" beside job 8 at 1.11x job 2's time (4% in the twin run): the
    lookup ran, so the settings are given with the ratios measured there, none decided."""
    v = _verdict(cpu(), "spec=ngram")
    n = of(DraftingNumbers, v.numbers)
    idle = [e for e in n.contexts if e["drafted"] == 0]
    assert len(idle) == 4 and all(e["comparison"]["outcome"] == "open" for e in idle)
    ratios = [e["comparison"]["ratio"] for e in idle]
    said = reason_text("no_drafts_at", v, "en")
    assert "so no draft was verified there" in said and "same work" not in said
    assert f"took {min(ratios):.2f}x–{max(ratios):.2f}x the time with it off" in said
    assert "none decided apart" in said
    assert not math.isclose(max(ratios), 1.0, abs_tol=0.05)

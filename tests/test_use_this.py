"""The report's "Use this" and the closing summary, from results alone: the recommended
point's llama-server command as its job ran it, the benchkit run that measures it again, and
while the verdicts are not settled, the runs that would settle them, as commands.

The seed's reference results: Vulkan, 4 slots, MTP off, provisional because 4 slots beats 3
by less than the post's 11% noise. The real CPU sweep is in tests/test_first_run.py.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.closing import SUMMARY_FILE
from benchkit.report.writeup.render import render_report
from benchkit.report.writeup.use_this import StepKind, shown, use_this

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"


def test_the_seeds_recommendation_as_commands_and_what_would_settle_it(tmp_path: Path) -> None:
    u = use_this(analyse_folder(SEED), program="benchkit")
    assert u.point == {"backend": "vulkan", "slots": 4, "mtp": False} and not u.settled
    # The job that ran that point, its command as a user runs it (whole paths: a bare file
    # name fails from anywhere else), its environment (the device it was given) first.
    assert u.server_command is not None
    assert u.server_command.startswith(
        "GGML_VK_VISIBLE_DEVICES=0 /opt/llama.cpp/build/bin/llama-server --model "
        "/models/Qwen3.6-35B-A3B-Q4_K_M.gguf "
    )
    assert "--parallel 4 " in u.server_command and "--cache-type-k q8_0" in u.server_command
    assert u.rerun == "benchkit backend=vulkan slots=4 mtp=false"
    # 4 slots against 2 and 3 is not decided inside the declared noise, nor MTP on against off
    # at 1 and 2 slots (0.80x and 1.12x, each interval across the margin), nor (rules v10)
    # whether 6 and 8 slots are faster than 4 beyond the margin: those points again, with
    # repeats.
    (step,) = u.next_steps
    assert step.kind is StepKind.repeats
    assert {p["slots"] for p in step.points} == {1, 2, 3, 4, 6, 8}
    assert {(p["slots"], p["mtp"]) for p in step.points if p["mtp"]} == {(1, True), (2, True)}
    # Into folders of their own beside the results: following it overwrites nothing. Those
    # points and no other (slots=1,2,3,4,6,8 mtp=false,true swept 12 for these 8): one sweep
    # per cross product, each open comparison inside one of them.
    assert step.command == (
        "benchkit -m backend=vulkan slots=2,3,4,6,8 mtp=false study=seed-r9700 "
        f"workload=seed-12 repeats=3 hydra.sweep.dir={shown(SEED)}-repeats && "
        "benchkit -m backend=vulkan slots=1,2 mtp=false,true study=seed-r9700 "
        f"workload=seed-12 repeats=3 hydra.sweep.dir={shown(SEED)}-repeats-2"
    )


def test_the_report_and_its_summary_say_the_same(tmp_path: Path) -> None:
    out = render_report(SEED, tmp_path / "report")
    md = (out / "report.md").read_text()
    section = md.split("## Use this", 1)[1].split("\n## ", 1)[0]
    assert "Provisional recommendation: Vulkan, 4 slots, MTP off." in section
    # As a user runs it: whole paths, no harness flags (#45: a bare model file name failed).
    assert (
        "```sh\nGGML_VK_VISIBLE_DEVICES=0 /opt/llama.cpp/build/bin/llama-server --model "
        "/models/Qwen3.6-35B-A3B-Q4_K_M.gguf --parallel 4 --ctx-size" in section
    )
    use = section.split("```sh\n", 1)[1].split("\n", 1)[0]
    for flag in ("--host", "--port", "--alias", "--metrics", "--slots", "--no-webui"):
        assert f"{flag} " not in f"{use} "
    assert "-m benchkit backend=vulkan slots=4 mtp=false\n```" in section
    noise = "A comparison is not decided yet (Vulkan, 4 slots, MTP off; Vulkan, 2 slots"
    assert noise in section
    assert (
        "slots=1,2 mtp=false,true study=seed-r9700 workload=seed-12 repeats=3 "
        f"hydra.sweep.dir={shown(SEED)}-repeats-2\n```" in section
    )
    summary = (out / SUMMARY_FILE).read_text().splitlines()
    assert summary[0].startswith("Summary: A 35B MoE on the Radeon AI PRO R9700")
    assert summary[1].split() == ["factor", "verdict", "status"]
    assert summary[2].split() == ["backend", "Vulkan", "provisional"]  # derived figures
    assert summary[3].split() == [
        *("parallel", "slots", "2-8", "slots,", "4", "by", "the", "figures", "provisional")
    ]
    rec = "Provisional recommendation: Vulkan, 4 slots, MTP off"
    assert any(x.startswith(rec) for x in summary)
    assert any(x.startswith("Projection: About 4.8 h per 100 stocks") for x in summary)
    assert any(
        x.startswith("Provisional (parallel slots): comparisons not decided at the margin: 2 slots")
        for x in summary
    )
    assert any(
        x.startswith("Use this: GGML_VK_VISIBLE_DEVICES=0 /opt/llama.cpp/build/bin/llama-server")
        for x in summary
    )
    assert any(x.startswith("Next: A comparison is not decided yet") for x in summary)
    assert summary[-1] == f"Report: {out / 'report.html'}"


def test_missing_points_are_measured_by_the_same_sweep_into_its_folder(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(SEED, sweep, ignore=shutil.ignore_patterns("history"))
    # The 4-slot Vulkan job without MTP did not finish, as in the seed's first sweep.
    job = next(
        p.parent
        for p in sweep.glob("*/result.json")
        if json.loads(p.read_text())["factors"]
        == {"backend": "vulkan", "slots": 4, "mtp": False}
        | {
            k: v
            for k, v in json.loads(p.read_text())["factors"].items()
            if k not in ("backend", "slots", "mtp")
        }
    )
    data = json.loads((job / "result.json").read_text())
    data["status"], data["reason"] = "incomplete", "stopped by hand"
    (job / "result.json").write_text(json.dumps(data))
    (sweep / "multirun.yaml").write_text(
        "hydra:\n  overrides:\n    task:\n    - backend=vulkan,hip\n    - slots=1,2,3,4,6,8\n"
        "    - mtp=false,true\n    - hydra.sweep.dir=/elsewhere\n"
    )
    u = use_this(analyse_folder(sweep), program="benchkit")
    assert not u.settled
    resume = next(s for s in u.next_steps if s.kind is StepKind.resume)
    assert {"backend": "vulkan", "slots": 4, "mtp": False} in resume.points
    assert resume.command == (
        f"benchkit -m backend=vulkan,hip slots=1,2,3,4,6,8 mtp=false,true hydra.sweep.dir={sweep}"
    )


def test_in_korean_the_section_and_the_summary_are_korean_and_aligned(tmp_path: Path) -> None:
    out = render_report(SEED, tmp_path / "ko", overrides=["study.lang=ko"])
    md = (out / "report.md").read_text()
    section = md.split("## 이렇게 쓰십시오", 1)[1].split("\n## ", 1)[0]
    assert "잠정 권장 설정: Vulkan, 슬롯 4개, MTP 끔." in section
    assert "판가름하지 못한 판정을 가리는 다음 실행" in section
    summary = (out / SUMMARY_FILE).read_text().splitlines()
    assert summary[0].startswith("요약: ")
    assert summary[-1] == f"보고서: {out / 'report.html'}"
    # The status column starts at one terminal cell in every row (Hangul takes two cells).

    def cells(text: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    table = summary[1:4]
    words = ("상태", "완료", "잠정")
    at = [cells(line[: max(line.rfind(w) for w in words)]) for line in table]
    assert len(set(at)) == 1, table


def test_a_verdict_waiting_on_stalls_proposes_the_stalled_points_again() -> None:
    """The first run's slots verdict was provisional on stalls alone and the report said no
    further run would settle it, with no Next (#45): the stalled points are measured again."""
    from benchkit.report.analysis.numbers import SlotsNumbers
    from benchkit.report.verdicts.common import Verdict
    from benchkit.report.writeup.use_this import _stalled_points

    note = {
        "job": "2",
        "point": {"slots": 4},
        "stalls": 4,
        "excess_s": 1.2,
        "wall_share": 0.119,
        "objective": 1.7,
        "objective_without": 1.5,
        "pairs": [],
    }
    numbers = SlotsNumbers(rows=[], stalled=[note])  # type: ignore[list-item]
    v = Verdict("slots", 1, "provisional", numbers=numbers, reasons=["stalled"])
    seen: set[frozenset[tuple[str, object]]] = set()
    assert _stalled_points([v], seen) == [{"slots": 4}]  # type: ignore[arg-type]
    assert _stalled_points([v], seen) == []  # type: ignore[arg-type]

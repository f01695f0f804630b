"""Review 15 (a hostile user, the command line): each finding driven through the real CLI or
the real function it names."""

from __future__ import annotations

import shlex
import subprocess
import sys
from itertools import product
from pathlib import Path

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.report.analysis.stall_words import stalled_text
from benchkit.report.lang.i18n import point_text
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts.folder import analyse_folder, resolve_study
from benchkit.report.writeup.closing import step_text
from benchkit.report.writeup.use_this import StepKind, next_steps, sweep_overrides


def _benchkit(*args: str, module: str = "benchkit") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True, text=True, cwd=repo_root(), check=False, timeout=600,
    )  # fmt: skip


def test_a_sweep_that_measured_nothing_writes_its_report_and_exits_1(tmp_path: Path) -> None:
    """`-m slots=1,2 workload.units=0`: every job failed on its range and the sweep exited 0,
    as if it had measured; now its report says why and it exits 1 with one line."""
    sweep = tmp_path / "sweep"
    proc = _benchkit("-m", "slots=1,2", "workload.units=0", f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    said = [x for x in proc.stderr.splitlines() if x.startswith("benchkit: ")]
    assert said == [
        "benchkit: no job of the sweep completed, so nothing was measured: "
        f"{sweep / 'report' / 'report.md'} says why each did not."
    ]
    md = (sweep / "report" / "report.md").read_text(encoding="utf-8")
    assert "workload.units=0 is out of range" in md


def test_a_list_for_a_setting_of_one_value_and_a_key_given_twice_are_one_sentence() -> None:
    """`-m 'slots=[1,2]'` printed Hydra's conversion error (and `slots=1,2` without -m Hydra's
    advice to write that list); `slots=1 slots=2` ran slots=2 alone. Each is refused before
    anything runs, in one sentence naming the key and the fix."""
    cases = {
        ("-m", "slots=[1,2]"): "slots=[1,2] gives slots a list, but it takes one value: to "
        "sweep those values, write -m slots=1,2.",
        ("-m", "backend=[cpu,vulkan]"): "write -m backend=cpu,vulkan.",
        ("-m", "workload.units=[2,4]"): "write -m workload.units=2,4.",
        ("slots=1,2",): "slots=1,2 sweeps slots: add -m to run one job per value",
        ("slots=1", "slots=2"): "slots is given twice (slots=1 and slots=2), and only the last "
        "would count: give it once",
        ("-m", "workload.units=2", "+workload.units=3"): "workload.units is given twice",
        ("-m", "slots=1,2", "--cfg", "job"): "-m and --cfg cannot be given together",
    }
    for args, says in cases.items():
        proc = _benchkit(*args)
        assert proc.returncode == 2, (args, proc.stderr[-1500:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (args, proc.stderr[-1500:])
    # A list where the setting is a list stays Hydra's to read.
    ok = _benchkit("study.anchors=[a,b]", "slots=2", "--cfg", "job")
    assert ok.returncode == 0 and "\nslots: 2\n" in ok.stdout, ok.stderr[-1500:]


def test_a_one_job_run_with_its_twin_as_anchor_is_reported_and_a_mis_spelt_one_says_how(
    tmp_path: Path,
) -> None:
    """`python -m benchkit slots=1 ...` twice, then the first's report with the second as its
    anchor: named from the working folder (`study.anchors=[twin]`), it was refused saying only
    that anchors are read relative to the results folder; it now gives the spelling that
    works, and that spelling renders the report with the twin."""
    run = tmp_path / "run"
    proc = _benchkit("slots=1", "workload.units=1", f"hydra.run.dir={run}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = _benchkit("slots=1", "workload.units=1", f"hydra.run.dir={tmp_path / 'twin'}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = [sys.executable, "-m", "benchkit.report", "run", "--out", "again"]
    bad = subprocess.run(
        [*report, "study.anchors=[twin]"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=600,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    (line,) = bad.stderr.strip().splitlines()
    assert line.endswith("twin is one from the working folder, so write study.anchors=[../twin].")
    good = subprocess.run(
        [*report, "study.anchors=[../twin]"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=600,
    )  # fmt: skip
    assert good.returncode == 0, good.stderr[-2000:]
    md = (tmp_path / "again" / "report.md").read_text(encoding="utf-8")
    assert "again in the anchor runs" in md


def test_a_point_of_no_factor_is_named_and_the_language_code_takes_any_case() -> None:
    """A one-point sweep's stalls read '– (job 0) had 4 stalls'; `study.lang=KO` was refused
    as no such language."""
    note = {"point": {}, "job": "0", "stalls": 4, "excess_s": 5.5, "wall_share": 0.168}
    said = stalled_text([{**note, "pairs": []}], "en")  # type: ignore[list-item]
    assert said.startswith("the setting measured (job 0) had 4 stalls"), said
    assert point_text({}, "ko") == "측정한 설정"
    folder = resolve_study([], ["study.lang=KO"])
    assert folder.lang == "ko"
    try:
        resolve_study([], ["study.lang=xx"])
    except UserError as exc:
        assert "choose one of en, ko" in str(exc)
    else:
        raise AssertionError("study.lang=xx was accepted")


def test_out_never_replaces_a_report_md_benchkit_did_not_write(tmp_path: Path) -> None:
    """`--out notes` where notes/report.md is the user's own: its name is one benchkit makes,
    so a folder without benchkit's manifest was taken for an old report and replaced. Only a
    folder whose page benchkit rendered (its generator mark) is taken for one now."""
    seed = repo_root() / "fixtures" / "results" / "seed-r9700"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "report.md").write_text("# my own report\n", encoding="utf-8")
    proc = _benchkit(str(seed), "--out", str(notes), module="benchkit.report")
    assert proc.returncode == 2, proc.stderr[-2000:]
    (line,) = proc.stderr.strip().splitlines()
    assert line == (
        f"benchkit.report: {notes} holds files benchkit did not write (report.md), and writing "
        f"the report there would replace them: give --out a new or empty folder (e.g. "
        f"{notes / 'report'})."
    )
    assert (notes / "report.md").read_text(encoding="utf-8") == "# my own report\n"
    # A page of the user's own beside it is no mark of benchkit's either.
    (notes / "report.html").write_text("<html><head><title>mine</title></head></html>")
    again = _benchkit(str(seed), "--out", str(notes), module="benchkit.report")
    assert again.returncode == 2 and "(report.html, report.md)" in again.stderr
    # What benchkit rendered there itself (its manifest) it renders again.
    ours = tmp_path / "ours"
    assert _benchkit(str(seed), "--out", str(ours), module="benchkit.report").returncode == 0
    assert _benchkit(str(seed), "--out", str(ours), module="benchkit.report").returncode == 0


def _swept_points(command: str, factors: dict[str, str]) -> list[dict[str, str]]:
    """The points the sweeps of a Next command run, as Hydra's basic sweeper expands them
    (each sweep the cross product of its factors' values)."""
    out: list[dict[str, str]] = []
    for part in command.split(" && "):
        args = dict(a.split("=", 1) for a in shlex.split(part) if "=" in a)
        values = [args[key].split(",") for key in factors.values()]
        out += [dict(zip(factors, combo, strict=True)) for combo in product(*values)]
    return out


def test_a_next_repeats_command_sweeps_the_points_it_names_with_their_own_units() -> None:
    """The H100 study's Next named 13 points and swept all 20 (`backend=cuda,vulkan
    slots=1,2,4,8,16 mtp=false,true`), and its raced jobs' own `workload.units` (3 to 16)
    were dropped, so each repeat replayed the whole workload. The class: in every published
    study, the sweeps of a repeats step run exactly the points it names, every open
    comparison inside one sweep, each with the most units any of its points' jobs ran."""
    studies = repo_root() / "docs" / "studies"
    checked = 0
    for results in sorted(studies.glob("*/results")):
        a = analyse_folder(results)
        swept = [o.split("=", 1)[0] for o in sweep_overrides(results) or []]
        keys = {
            f: next((k for k in swept if k.rsplit(".", 1)[-1] == f), f) for f in a.sweep.varying
        }
        pairs = [
            ({k: an.norm(v) for k, v in c["base"].items()},
             {k: an.norm(v) for k, v in c["other"].items()})
            for v in a.verdicts if "open_pairs" in v.reasons
            for c in getattr(v.numbers, "open", None) or []
        ]  # fmt: skip
        for step in next_steps(a, "python -m benchkit"):
            if step.kind not in (StepKind.repeats, StepKind.stalled):
                continue
            named = {tuple(sorted((k, an.norm(v)) for k, v in p.items())) for p in step.points}
            ran = _swept_points(step.command, keys)
            assert {tuple(sorted(p.items())) for p in ran} == named, results
            parts = step.command.split(" && ")
            blocks = [_swept_points(part, keys) for part in parts]
            if step.kind is StepKind.repeats:
                for x, y in pairs:
                    assert any(x in b and y in b for b in blocks), (results, x, y)
            for part, block in zip(parts, blocks, strict=True):
                own = [
                    int(o.split("=", 1)[1])
                    for r in a.results
                    for o in r.result.provenance.overrides
                    if o.startswith("workload.units=")
                    and {k: an.norm(r.factors.get(k)) for k in keys} in block
                ]
                units = [w for w in shlex.split(part) if w.startswith("workload.units=")]
                assert not own or units == [f"workload.units={max(own)}"], (results, part)
            checked += 1
    assert checked >= 5
    h100 = analyse_folder(studies / "h100-vulkan-vs-cuda-warm" / "results")
    (step,) = [s for s in next_steps(h100, "b") if s.kind is StepKind.repeats]
    assert len(step.points) == 13 and "workload.units=3 " in step.command


def test_a_slot_count_proposal_that_changes_the_units_says_so() -> None:
    """The H200 backends study's Next proposed `slots=1,2,4,8,16 workload.units=16` after
    jobs of 8 units, and its sentence said nothing of the units. The class: every slot count
    proposal of a published study names the units where its command changes them, and only
    there, in English and Korean."""
    studies = repo_root() / "docs" / "studies"
    said = 0
    for results in sorted(studies.glob("*/results")):
        for step in next_steps(analyse_folder(results), "python -m benchkit"):
            if step.kind not in (StepKind.more_slots, StepKind.other_slots):
                continue
            ran = {w for w in shlex.split(step.command) if w.startswith("workload.units=")}
            before = set(sweep_overrides(results) or []) & ran
            changed = bool(ran) and not before
            en, ko = step_text(step, "en"), step_text(step, "ko")
            assert ("not the" in en and "units" in en) is changed, (results, en)
            assert ("재생합니다" in ko) is changed, (results, ko)
            said += changed
    assert said >= 1
    vulkan = analyse_folder(studies / "h200-vulkan-vs-cuda" / "results")
    (step,) = [s for s in next_steps(vulkan, "b") if s.kind is StepKind.more_slots]
    assert step_text(step, "en").endswith("Each job replays 16 units, not the 8 that ran:")

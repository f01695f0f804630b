"""Review 15 (a hostile user, the command line): each finding driven through the real CLI or
the real function it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.report.analysis.stall_words import stalled_text
from benchkit.report.lang.i18n import point_text
from benchkit.report.verdicts.folder import resolve_study


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

"""Review 15 (a hostile user, the command line): each finding driven through the real CLI or
the real function it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchkit.paths import repo_root


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

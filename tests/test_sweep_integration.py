"""The spine, for real: `python -m benchkit -m ...` in a subprocess against real llama-server.

These build (or reuse from the cache) llama-server from the pinned source and write the
synthetic tiny-moe model, so they are marked slow; CI runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchkit.paths import repo_root
from benchkit.workload import load_workload


def run_benchkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit", *args],
        capture_output=True, text=True, cwd=cwd, timeout=1800, check=False,
    )  # fmt: skip


def results_of(sweep: Path) -> dict[int, dict[str, Any]]:
    return {int(p.parent.name): json.loads(p.read_text()) for p in sweep.glob("*/result.json")}


@pytest.mark.slow
def test_real_sweep_over_slots(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit("-m", "slots=1,2", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert sorted(results) == [0, 1]
    fixture = load_workload("mini")
    for num, res in results.items():
        assert res["status"] == "complete", res["reason"]
        assert res["schema_version"] == 1
        m = res["metrics"]
        assert res["factors"]["slots"] == num + 1 and res["factors"]["backend"] == "cpu"
        assert m["units_completed"] == m["units_planned"] == len(fixture.units)
        assert m["calls_completed"] == fixture.n_calls and m["calls_failed"] == 0
        # The server saw exactly the fixture's tokens, and generated exactly its lengths.
        assert m["prompt_tokens"] == fixture.prompt_tokens
        assert m["completion_tokens"] == fixture.completion_tokens
        assert m["calls_hit_cap"] == fixture.capped_calls
        # One raw record per call, in the job folder, beside the server log.
        lines = (sweep / str(num) / "calls.jsonl").read_text().splitlines()
        assert len(lines) == fixture.n_calls
        assert all(json.loads(x)["ok"] for x in lines)
        # Loopback http on Linux: the calls timed by the kernel's receive times, and the job
        # says so (the httpx fallback would be a caveat in the report). A call one of whose
        # reads carried no usable kernel time (the realtime clock stepped under a busy VM: the
        # transport's own bounds, client/transport.py _stamp) is labelled as read-timed, not
        # passed off as kernel-timed; CI saw one such call in a run of this test.
        labels = [json.loads(x)["client"] for x in lines]
        assert set(labels) <= {"raw-http/1.1+SO_TIMESTAMPNS", "raw-http/1.1"}
        assert labels.count("raw-http/1.1+SO_TIMESTAMPNS") >= 0.8 * len(labels)
        assert res["provenance"]["client"] == {
            "path": "raw-http/1.1+SO_TIMESTAMPNS",
            "fallback": None,
        }
        assert (sweep / str(num) / "server.log").stat().st_size > 0
        assert (sweep / str(num) / ".hydra" / "config.yaml").exists()
        # Provenance names the build and the flags.
        prov = res["provenance"]
        assert "build" in prov["server_build"]["version"]
        assert "--parallel" in prov["server"]["argv"]
        assert prov["server"]["props"]["total_slots"] == num + 1
    # Both bases, consistent: slot latency is about slots x throughput basis.
    one, two = results[0]["metrics"], results[1]["metrics"]
    assert one["s_per_unit_slot_latency"] == pytest.approx(one["s_per_unit_throughput"], rel=0.2)
    ratio = two["s_per_unit_slot_latency"] / two["s_per_unit_throughput"]
    assert 1.2 < ratio < 2.5
    # The sweep's report exists and shows both points.
    md = (sweep / "report" / "report.md").read_text()
    html = (sweep / "report" / "report.html").read_text()
    results_table = md.split("## All results", 1)[1].split("\n## ", 1)[0]
    rows = [x for x in results_table.splitlines() if x.startswith("| ") and "| cpu |" in x]
    assert len(rows) == 2
    assert "s/unit (throughput)" in md and "s/unit (slot latency)" in md
    assert (sweep / "report" / "slots.png").exists()
    assert "<table>" in html and "data:image/png;base64," in html
    # Rendering again from results alone gives the same table.
    again = subprocess.run(
        [sys.executable, "-m", "benchkit.report", str(sweep)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    md2 = (sweep / "report" / "report.md").read_text()
    again_table = md2.split("## All results", 1)[1].split("\n## ", 1)[0]
    assert [x for x in again_table.splitlines() if "| cpu |" in x] == rows


def test_unavailable_backends_finish_the_sweep_with_reasons(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "backend=hip,vulkan", "slots=1,2", "backend.build_requires=[no-such-tool-xyz]",
        f"hydra.sweep.dir={sweep}", cwd=tmp_path,
    )  # fmt: skip
    # Nothing was measured: the sweep exits 1, saying so in one line, its report written.
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "no job of the sweep completed, so nothing was measured" in proc.stderr
    assert "Traceback" not in proc.stderr
    results = results_of(sweep)
    assert len(results) == 4
    for res in results.values():
        assert res["status"] == "unavailable"
        assert "no-such-tool-xyz not found" in res["reason"]
    md = (sweep / "report" / "report.md").read_text()
    assert "Not run or not complete" in md
    assert md.count("unavailable") >= 4


def test_real_hip_is_unavailable_here_with_a_reason_naming_hip(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit("-m", "backend=hip", "slots=1", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    (res,) = results_of(sweep).values()
    if res["status"] != "unavailable":
        pytest.skip("this machine has ROCm; the HIP job ran")
    assert proc.returncode == 1, proc.stderr[-3000:]  # nothing measured
    assert "HIP" in res["reason"] or "ROCm" in res["reason"]


def test_report_of_a_folder_without_results_is_one_clear_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit.report", str(tmp_path)],
        capture_output=True, text=True, cwd=repo_root(), check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "holds no result.json" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "report").exists()

"""The drift probe, for real (benchkit.quality): a CPU sweep on the real llama-server over a
setting that changes the numerics (a q8_0 K cache), and the same setting measured twice.

Marked slow: it builds (or reuses) llama-server and writes the synthetic tiny-moe model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchkit.quality.drift import compare, read_probes
from benchkit.workload import load_workload
from tests.test_sweep_integration import results_of, run_benchkit

# A short probe: 4 prompts x 8 positions, on one unit of the mini workload.
PROBE = ("workload.units=1", "quality.prompts=4", "quality.tokens=8", "slots=1")


@pytest.mark.slow
def test_a_numerics_change_shows_drift_and_the_probe_is_in_no_timed_figure(
    tmp_path: Path,
) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "server.cache_type_k=f16,q8_0", *PROBE, f"hydra.sweep.dir={sweep}", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    fixture = load_workload("mini")
    calls_one_unit = len(fixture.units[0].calls)
    for num, res in results.items():
        assert res["status"] == "complete", res["reason"]
        q = res["quality"]
        assert (q["probes"], q["positions"], q["errors"], q["skipped"]) == (4, 32, 0, None)
        assert q["positions_missing"] == 0
        # The probe's requests are not calls of the replay: calls.jsonl holds the unit's calls
        # only, and the measured wall clock leaves the probe's seconds out.
        lines = (sweep / str(num) / "calls.jsonl").read_text().splitlines()
        assert len(lines) == calls_one_unit == res["metrics"]["calls_completed"]
        assert res["metrics"]["wall_s"] + q["seconds"] <= res["provenance"]["job_seconds"]
    f16, q8 = (
        read_probes(sweep / str(n) / "quality.jsonl")
        for n in sorted(results, key=lambda n: results[n]["factors"]["cache_type_k"])
    )
    assert results[0]["factors"]["cache_type_k"] == "f16"
    d = compare(q8, f16)
    assert d.kld_mean is not None and d.kld_mean > 0  # a q8_0 K cache moves the distributions
    assert compare(f16, f16).kld_mean == 0.0
    # The report's Quality section: f16 is the reference (the most precise K cache), q8_0's
    # drift is stated, the random-weights note stands beside it.
    md = (sweep / "report" / "report.md").read_text()
    quality = md.split("## Quality", 1)[1].split("\n## ", 1)[0]
    assert "Reference: f16 K cache" in quality, quality
    assert "q8\\_0 K cache changed" in quality
    (row,) = [x for x in quality.splitlines() if x.startswith("| 1 | q8")]
    (head,) = [x for x in quality.splitlines() if x.startswith("| job | config |")]
    kld_cell = row.split("|")[[c.strip() for c in head.split("|")].index("mean KL divergence")]
    kld_cell = kld_cell.strip()
    assert float(kld_cell) > 0, row  # a small divergence is printed, not rounded to 0
    assert "random weights" in quality
    assert "drift" in md.split("## Summary", 1)[1]  # the summary names the drift too


@pytest.mark.slow
def test_the_same_setting_measured_twice_shows_no_drift(tmp_path: Path) -> None:
    probes = []
    for run in ("a", "b"):
        out = tmp_path / run
        proc = run_benchkit(*PROBE, "resume=false", f"hydra.run.dir={out}", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        res = json.loads((out / "result.json").read_text())
        assert res["status"] == "complete" and res["quality"]["errors"] == 0
        probes.append(read_probes(out / "quality.jsonl"))
    d = compare(probes[1], probes[0])
    assert (d.identical, d.probes, d.kld_mean, d.top1_agreement) == (4, 4, 0.0, 1.0)

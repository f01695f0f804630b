"""Sweeps through a real scheduler: Hydra's submitit launcher on a one-node SLURM cluster.

The cluster (scripts/slurm-local.sh) declares two simulated GPUs as GRES, so each job that
asks for one gets it from SLURM the way a GPU node gives it; the CPU backend runs the
server. Each case is the README's recipe as a user types it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.conftest import Cluster, report_rows, results_of, run_benchkit, span

pytestmark = pytest.mark.cluster

LAUNCHER = (
    "hydra/launcher=submitit_slurm",
    "hydra.launcher.partition=local",
    "hydra.launcher.timeout_min=20",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.gpus_per_node=1",
)


def test_a_two_job_sweep_runs_as_two_slurm_jobs_and_reports_once(
    slurm: Cluster, tiny_workload: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", *LAUNCHER, "backend=cpu", "model=tiny-moe", "slots=1,2", "workload.units=1",
        f"workload.fixture={tiny_workload}", f"hydra.sweep.dir={sweep}",
        cwd=tmp_path, env=slurm.env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert sorted(results) == [0, 1]
    allocs = {}
    for num, res in results.items():
        assert res["status"] == "complete", res["reason"]
        assert res["factors"]["slots"] == num + 1
        m = res["metrics"]
        assert m["units_completed"] == m["units_planned"] == 1 and m["calls_failed"] == 0
        alloc = res["provenance"]["allocation"]
        assert alloc["scheduler"] == "slurm" and alloc["partition"] == "local"
        assert alloc["node"] and alloc["job_id"].endswith(f"_{num}")  # the array's task
        # One simulated GPU each, as SLURM's gres/gpu named it; the CPU server runs on the
        # one CPU the job was given.
        assert len(alloc["devices"]) == 1 and alloc["cpus"] == 1
        argv = res["provenance"]["server"]["argv"]
        assert argv[argv.index("--threads") + 1] == "1"
        allocs[num] = alloc
    assert allocs[0]["slurm_job_id"] != allocs[1]["slurm_job_id"]
    assert allocs[0]["job_id"] != allocs[1]["job_id"]
    ports = {res["provenance"]["server"]["port"] for res in results.values()}
    assert len(ports) == 2
    (a0, b0), (a1, b1) = span(results[0]), span(results[1])
    if a0 < b1 and a1 < b0:  # they ran at the same time: never on the same GPU
        assert allocs[0]["devices"] != allocs[1]["devices"]
    # Each job ran in its own SLURM job, wrote into the shared sweep folder, and the report
    # was rendered once, by the launching process, after both had ended.
    assert len(list((sweep / ".submitit").glob("*_[01]/*_result.pkl"))) == 2
    assert proc.stdout.strip().splitlines()[-1] == str(sweep / "report" / "report.html")
    assert proc.stderr.count("[benchkit] sweep report:") == 1
    rows = report_rows(sweep)
    assert len(rows) == 2 and all("| complete |" in r for r in rows)
    assert slurm.squeue() == ""


def test_a_failed_job_does_not_stop_the_report(
    slurm: Cluster, tiny_workload: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", *LAUNCHER, "backend=cpu", "model=tiny-moe", "slots=1,0", "workload.units=1",
        f"workload.fixture={tiny_workload}", f"hydra.sweep.dir={sweep}",
        cwd=tmp_path, env=slurm.env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert results[0]["status"] == "complete", results[0]["reason"]
    assert results[1]["status"] == "failed"
    assert "slots=0 is out of range (parallel slots)" in results[1]["reason"]
    assert results[1]["provenance"]["allocation"]["scheduler"] == "slurm"
    rows = report_rows(sweep)
    assert len(rows) == 2
    assert any("| 0 |" in r and "| failed |" in r for r in rows)
    md = (sweep / "report" / "report.md").read_text()
    assert "Provisional" in md and "slots=0 is out of range (parallel slots)" in md


def test_a_job_stopped_at_its_slurm_time_limit_is_written_and_reported(
    slurm: Cluster, tmp_path: Path
) -> None:
    # Twenty passes of mini would take many minutes; SLURM warns the job 95 s before its
    # 2-minute limit (submitit's signal), submitit stops it, and benchkit writes what it
    # has with its server stopped, so the launcher gets the job back and the report renders.
    # The warning comes 25 s in: at 10 s, a loaded 2-core machine was still starting Python
    # and composing the config, and submitit's handler ended the job before benchkit's.
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "hydra/launcher=submitit_slurm", "hydra.launcher.partition=local",
        "hydra.launcher.timeout_min=2", "hydra.launcher.signal_delay_s=95",
        "hydra.launcher.cpus_per_task=1", "backend=cpu", "slots=1", "repeats=20",
        f"hydra.sweep.dir={sweep}", cwd=tmp_path, env=slurm.env, timeout=600,
    )  # fmt: skip
    # Its one job stopped before it completed: nothing measured, exit 1, the report written.
    assert proc.returncode == 1, proc.stderr[-3000:]
    res = results_of(sweep)[0]
    assert res["status"] in ("failed", "incomplete")
    assert "time limit" in res["reason"] and "timeout_min" in res["reason"], res["reason"]
    assert res["provenance"]["stopped"]  # what the job saw: submitit's error or the server's end
    assert res["provenance"]["job_seconds"] < 120
    assert len(report_rows(sweep)) == 1
    assert slurm.squeue() == ""

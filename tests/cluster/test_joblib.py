"""Parallel jobs on one host with several GPUs: Hydra's joblib launcher and benchkit's device
lease, with the device count simulated on the CPU backend (hardware.device_count)."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from tests.cluster.conftest import report_rows, results_of, run_benchkit

pytestmark = pytest.mark.cluster


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_parallel_jobs_never_share_a_device_or_a_port(tiny_workload: Path, tmp_path: Path) -> None:
    # Three workers for two devices: one job at a time must wait for a device, so at most two
    # llama-servers run at once and never two on one device.
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=3", "hardware.device_count=2",
        "backend=cpu", "slots=1,2,3,4", "workload.units=1", f"workload.fixture={tiny_workload}",
        f"hydra.sweep.dir={sweep}", cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert sorted(results) == [0, 1, 2, 3]
    leases = [json.loads(x) for x in (sweep / ".devices" / "leases.jsonl").read_text().splitlines()]
    by_job = {int(x["job"]): x for x in leases}
    assert sorted(by_job) == [0, 1, 2, 3]
    for num, res in results.items():
        assert res["status"] == "complete", res["reason"]
        alloc = res["provenance"]["allocation"]
        assert alloc["scheduler"] == "local" and alloc["device_count"] == 2
        assert alloc["devices"] == [str(by_job[num]["device"])]
        assert by_job[num]["acquired"] <= by_job[num]["released"]
    spans = {n: (x["acquired"], x["released"]) for n, x in by_job.items()}
    pairs = [(a, b) for a in spans for b in spans if a < b and overlap(spans[a], spans[b])]
    assert pairs, f"no two jobs ran at the same time: {spans}"
    for a, b in pairs:
        assert by_job[a]["device"] != by_job[b]["device"], (a, b, by_job)
        port_a = results[a]["provenance"]["server"]["port"]
        port_b = results[b]["provenance"]["server"]["port"]
        assert port_a != port_b
    # Never more than two at once (intervals that overlap pairwise share a moment).
    for trio in combinations(spans.values(), 3):
        assert not all(overlap(x, y) for x, y in combinations(trio, 2)), spans
    # The report was rendered once, after all four, by the launching process.
    assert proc.stderr.count("[benchkit] sweep report:") == 1
    assert len(report_rows(sweep)) == 4

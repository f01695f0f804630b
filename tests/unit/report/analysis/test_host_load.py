"""The host's own load during a pass (benchkit/measure/proc_cpu.py): other processes' CPU seconds
from /proc/stat less the server's and benchkit's, and the report's caveat naming busy jobs."""

from __future__ import annotations

from pathlib import Path

from benchkit.measure.proc_cpu import HostSnapshot, host_snapshot, other_cpu_s
from benchkit.report.analysis import host_load


def test_other_processes_cpu_is_the_machines_busy_time_less_the_servers_and_ours() -> None:
    a = HostSnapshot(busy_s=100.0, own_s=1.0, load_avg=0.5)
    b = HostSnapshot(busy_s=130.0, own_s=3.0, load_avg=2.5)
    # 30 s busy: 10 the server's, 2 benchkit's, 18 someone else's.
    assert other_cpu_s(a, b, 10.0) == 18.0
    # Counters tick apart: never below zero; nothing where the server was not read.
    assert other_cpu_s(a, b, 40.0) == 0.0
    assert other_cpu_s(a, b, None) is None and other_cpu_s(None, b, 1.0) is None


def test_a_host_snapshot_reads_proc_stat(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text("cpu  100 20 30 5000 7 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8\n")
    snap = host_snapshot(tmp_path)
    assert snap is not None
    import os

    tck = os.sysconf("SC_CLK_TCK")
    assert snap.busy_s == (100 + 20 + 30 + 1 + 2 + 3) / tck
    assert host_snapshot(tmp_path / "missing") is None


def _job(cores: float | None, load: float | None, count: int = 2) -> dict[str, object]:
    return {
        "metrics": {
            "telemetry": {"host_other_cores": cores, "load_avg_max": load, "cpu_count": count}
        }
    }


def test_busy_jobs_are_named_with_the_figures_and_quiet_ones_are_not() -> None:
    jobs = {"0": _job(0.02, 0.4), "1": _job(0.9, 3.1), "2": _job(0.3, 5.0), "3": {"metrics": {}}}
    (c,) = host_load.detect(jobs)
    assert c["jobs"] == ["1", "2"] and c["other_cores_max"] == 0.9 and c["load_avg_max"] == 5.0
    text = host_load.say(c, "en")
    assert "jobs 1 and 2" in text and "0.90 cores" in text and "5.0 on 2 cores" in text
    # A load average above the cores is the benchmark's own threads as much as anyone's: a
    # pass whose other processes were quiet is not named for it.
    assert host_load.detect({"0": _job(0.02, 3.0)}) == []
    assert host_load.detect({"0": _job(0.02, 0.4)}) == []

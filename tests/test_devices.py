"""Where a job runs: SLURM's allocation read from the job's environment, and the local device
lease that keeps two parallel jobs off one device (benchkit.host.devices)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.app import run_placed
from benchkit.config.backends import BackendName, backend, selector
from benchkit.config.schema import BenchConfig
from benchkit.host.devices import (
    LEASE_LOG,
    SLURM_GPU_VARS,
    DeviceLease,
    apply,
    placement,
    slurm_allocation,
)
from benchkit.job.record import JobContext

Compose = Callable[..., BenchConfig]

CUDA = backend(BackendName.cuda).device

SLURM_JOB = {
    "SLURM_JOB_ID": "41",
    "SLURM_ARRAY_JOB_ID": "40",
    "SLURM_ARRAY_TASK_ID": "1",
    "SLURMD_NODENAME": "gpu07",
    "SLURM_JOB_PARTITION": "gpu",
    "SLURM_CPUS_PER_TASK": "8",
}


# --- SLURM's allocation --------------------------------------------------------------------


def test_outside_slurm_there_is_no_allocation() -> None:
    assert slurm_allocation({"CUDA_VISIBLE_DEVICES": "3"}, CUDA) is None


def test_cuda_gets_what_slurm_set_and_the_record_names_the_job() -> None:
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "3", "CUDA_VISIBLE_DEVICES": "3"}
    alloc = slurm_allocation(env, CUDA)
    assert alloc is not None
    assert alloc.env == {"CUDA_VISIBLE_DEVICES": "3"}
    assert alloc.record() == {
        "scheduler": "slurm",
        "job_id": "40_1",
        "node": "gpu07",
        "devices": ["3"],
        "source": "SLURM_JOB_GPUS",
        "server_env": {"CUDA_VISIBLE_DEVICES": "3"},
        "cpus": 8,
        "slurm_job_id": "41",
        "partition": "gpu",
    }


def test_with_cgroup_constraints_cuda_numbers_from_zero_and_that_is_passed_through() -> None:
    env = {**SLURM_JOB, "SLURM_STEP_GPUS": "2,5", "CUDA_VISIBLE_DEVICES": "0,1"}
    alloc = slurm_allocation(env, CUDA)
    assert alloc is not None and alloc.devices == ("2", "5")
    assert alloc.env == {"CUDA_VISIBLE_DEVICES": "0,1"}


def test_hip_counts_from_zero_inside_what_rocr_lets_through() -> None:
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "4,6", "ROCR_VISIBLE_DEVICES": "4,6"}
    alloc = slurm_allocation(env, backend(BackendName.hip).device)
    assert alloc is not None and alloc.env == {"HIP_VISIBLE_DEVICES": "0,1"}


def test_vulkan_names_the_nodes_gpu_indices() -> None:
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "1", "CUDA_VISIBLE_DEVICES": "1"}
    alloc = slurm_allocation(env, backend(BackendName.vulkan).device)
    assert alloc is not None and alloc.env == {"GGML_VK_VISIBLE_DEVICES": "1"}


def test_sycl_names_level_zero_devices_counted_inside_what_ze_affinity_mask_lets_through() -> None:
    sycl = backend(BackendName.sycl).device
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "2,3", "ZE_AFFINITY_MASK": "2,3"}
    alloc = slurm_allocation(env, sycl)
    assert alloc is not None
    assert alloc.env == {"ONEAPI_DEVICE_SELECTOR": "level_zero:0;level_zero:1"}
    bare = slurm_allocation({**SLURM_JOB, "SLURM_JOB_GPUS": "5"}, sycl)
    assert bare is not None and bare.env == {"ONEAPI_DEVICE_SELECTOR": "level_zero:5"}


def test_one_sycl_device_becomes_hardware_device(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=sycl")
    alloc = slurm_allocation({**SLURM_JOB, "SLURM_JOB_GPUS": "3"}, selector(cfg.backend))
    assert alloc is not None
    apply(cfg, alloc)
    # The selector's value read back as the index it names, not dropped as "not a number".
    assert cfg.hardware.device == 3
    assert cfg.backend.env == {"ONEAPI_DEVICE_SELECTOR": "level_zero:3"}


def test_a_job_without_gpus_has_none_and_the_cpu_backend_sets_no_variable() -> None:
    alloc = slurm_allocation({**SLURM_JOB, "CUDA_VISIBLE_DEVICES": "NoDevFiles"}, None)
    assert alloc is not None and alloc.devices == () and alloc.env == {}


def test_one_gpu_becomes_hardware_device_and_the_backend_variable(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=cuda", "hardware=h200")  # the profile says device 0
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "3", "CUDA_VISIBLE_DEVICES": "3"}
    alloc = slurm_allocation(env, selector(cfg.backend))
    assert alloc is not None
    apply(cfg, alloc)
    assert cfg.hardware.device == 3 and cfg.backend.env["CUDA_VISIBLE_DEVICES"] == "3"
    assert cfg.server.threads is None  # a GPU backend's threads stay llama.cpp's choice


def test_several_gpus_reach_the_server_as_the_variable_not_one_device(
    compose_cfg: Compose,
) -> None:
    from benchkit.server.plan import plan_server

    cfg = compose_cfg("backend=cuda", "hardware=h200")
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "2,5", "CUDA_VISIBLE_DEVICES": "2,5"}
    alloc = slurm_allocation(env, selector(cfg.backend))
    assert alloc is not None
    apply(cfg, alloc)
    assert cfg.hardware.device is None
    spec = plan_server(
        cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=10, cap=10
    )
    assert spec.env["CUDA_VISIBLE_DEVICES"] == "2,5"


def test_the_cpu_backend_runs_on_the_cpus_slurm_gave(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=cpu")
    alloc = slurm_allocation({**SLURM_JOB, "SLURM_JOB_GPUS": "1"}, None)
    assert alloc is not None
    apply(cfg, alloc)
    assert cfg.server.threads == 8
    # Nothing to select on the CPU: the config stays as it was (and so its resume key).
    assert cfg.hardware.device is None and cfg.backend.env == {}
    pinned = compose_cfg("backend=cpu", "server.threads=2")
    apply(pinned, alloc)
    assert pinned.server.threads == 2  # what the user set stays


def test_a_gpu_backend_in_a_slurm_job_without_gpus_is_a_failed_job(
    tmp_path: Path, compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in SLURM_JOB.items():
        monkeypatch.setenv(k, v)
    for k in SLURM_GPU_VARS:
        monkeypatch.delenv(k, raising=False)
    cfg = compose_cfg("backend=cuda", "slots=2")
    ctx = JobContext(job_dir=tmp_path / "3", label="3", sweep=True)
    result = run_placed(cfg, ctx, lease_root=tmp_path, job_num=3)
    assert result["status"] == "failed"
    assert "was given no GPU" in result["reason"] and "gpus_per_node=1" in result["reason"]
    on_disk = json.loads((tmp_path / "3" / "result.json").read_text())
    assert on_disk["reason"] == result["reason"] and on_disk["factors"]["slots"] == 2
    # ... and the sweep report renders it as a failed point.
    from benchkit.report.writeup.render import render_report

    out = render_report(tmp_path, tmp_path / "report")
    assert "was given no GPU" in (out / "report.md").read_text()


def test_slurm_wins_over_a_local_device_count(tmp_path: Path, compose_cfg: Compose) -> None:
    cfg = compose_cfg("hardware.device_count=4")
    env = {**SLURM_JOB, "SLURM_JOB_GPUS": "1"}
    with placement(cfg, lease_root=tmp_path, job_num=0, label="0", environ=env) as alloc:
        assert alloc is not None and alloc.scheduler == "slurm"
    assert not (tmp_path / ".devices").exists()


# --- the local lease -----------------------------------------------------------------------


def test_without_a_device_count_nothing_is_leased(tmp_path: Path, compose_cfg: Compose) -> None:
    cfg = compose_cfg()
    with placement(cfg, lease_root=tmp_path, job_num=0, label="0", environ={}) as alloc:
        assert alloc is None and cfg.hardware.device is None


def test_a_job_prefers_its_number_modulo_the_count_and_takes_another_when_held(
    tmp_path: Path,
) -> None:
    d = tmp_path / ".devices"
    with DeviceLease(d, 3, prefer=4, label="4") as a:
        assert a.device == 1
        with DeviceLease(d, 3, prefer=1, label="1") as b:
            assert b.device == 0
            with DeviceLease(d, 3, prefer=7, label="7") as c:
                assert c.device == 2
    log = [json.loads(x) for x in (d / LEASE_LOG).read_text().splitlines()]
    assert [(x["job"], x["device"]) for x in log] == [("7", 2), ("1", 0), ("4", 1)]
    assert all(x["acquired"] <= x["released"] for x in log)


def test_the_lease_points_the_config_at_the_device(tmp_path: Path, compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend=vulkan", "hardware.device_count=2")
    with placement(cfg, lease_root=tmp_path, job_num=5, label="5", environ={}) as alloc:
        assert alloc is not None and alloc.scheduler == "local"
        assert alloc.record()["devices"] == ["1"] and alloc.record()["device_count"] == 2
        assert cfg.hardware.device == 1
        assert cfg.backend.env["GGML_VK_VISIBLE_DEVICES"] == "1"


def test_a_sycl_lease_selects_its_device_as_level_zero(
    tmp_path: Path, compose_cfg: Compose
) -> None:
    cfg = compose_cfg("backend=sycl", "hardware.device_count=2")
    with placement(cfg, lease_root=tmp_path, job_num=1, label="1", environ={}) as alloc:
        assert alloc is not None and alloc.env == {"ONEAPI_DEVICE_SELECTOR": "level_zero:1"}
        assert cfg.hardware.device == 1


def test_a_device_count_below_one_fails_the_job(tmp_path: Path, compose_cfg: Compose) -> None:
    cfg = compose_cfg("hardware.device_count=0")
    ctx = JobContext(job_dir=tmp_path / "0", label="0", sweep=True)
    result = run_placed(cfg, ctx, lease_root=tmp_path, job_num=0)
    assert result["status"] == "failed" and "device_count=0" in result["reason"]


HOLD = """
import sys, time
from pathlib import Path
from benchkit.host.devices import DeviceLease
lease = DeviceLease(Path(sys.argv[1]), int(sys.argv[2]), prefer=0, label=sys.argv[3], poll_s=0.05)
with lease:
    print(lease.device, flush=True)
    time.sleep(float(sys.argv[4]))
"""


def _holder(d: Path, count: int, label: str, hold_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLD, str(d), str(count), label, str(hold_s)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_processes_contending_for_one_device_take_turns(tmp_path: Path) -> None:
    d = tmp_path / ".devices"
    first = _holder(d, 1, "a", 1.5)
    assert first.stdout is not None and first.stdout.readline().strip() == "0"
    second = _holder(d, 1, "b", 0.0)
    assert second.wait(timeout=30) == 0 and first.wait(timeout=30) == 0
    log = {x["job"]: x for x in map(json.loads, (d / LEASE_LOG).read_text().splitlines())}
    # b waited for a: its lease starts after a's ended.
    assert log["b"]["acquired"] >= log["a"]["released"]
    assert log["b"]["device"] == log["a"]["device"] == 0


def test_two_processes_with_two_devices_never_share_one(tmp_path: Path) -> None:
    d = tmp_path / ".devices"
    procs = [_holder(d, 2, str(i), 1.0) for i in range(2)]
    devices = []
    for p in procs:
        assert p.stdout is not None
        devices.append(p.stdout.readline().strip())
    assert sorted(devices) == ["0", "1"]
    assert all(p.wait(timeout=30) == 0 for p in procs)


def test_a_killed_holder_frees_its_device(tmp_path: Path) -> None:
    d = tmp_path / ".devices"
    first = _holder(d, 1, "a", 60.0)
    assert first.stdout is not None and first.stdout.readline().strip() == "0"
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    t0 = time.monotonic()
    with DeviceLease(d, 1, prefer=0, label="b") as lease:
        assert lease.device == 0
    assert time.monotonic() - t0 < 5


def test_an_exception_releases_the_lease(tmp_path: Path) -> None:
    d = tmp_path / ".devices"
    with pytest.raises(RuntimeError), DeviceLease(d, 1, prefer=0, label="a"):
        raise RuntimeError("job broke")
    with DeviceLease(d, 1, prefer=0, label="b", poll_s=0.01) as lease:
        assert lease.device == 0

"""The telemetry sampler (benchkit/measure/telemetry.py) against a fake NVML and a fake amdsmi, the
/proc CPU readings against real processes, the reasons when nothing can be sampled, and a
real CPU job that records why it has no GPU telemetry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.measure.telemetry import (
    AmdSmiReader,
    CpuSnapshot,
    JobTelemetry,
    NvmlReader,
    PassTelemetry,
    Sampler,
    cpu_delta,
    cpu_snapshot,
    integrate_power,
    load_samples,
    open_reader,
    summarise,
)


class NVMLError(Exception):
    pass


class FakeNvml:
    """NVML's calls as pynvml names them, over a scripted GPU: power and utilisation come from
    `profile(t)`, and the energy counter (mJ) is the exact integral of that power, so a test
    knows what energy the sampler must report."""

    NVML_CLOCK_SM = 1
    NVML_TEMPERATURE_GPU = 0

    def __init__(
        self,
        profile: Callable[[float], tuple[float, float]],
        count: int = 1,
        energy: bool = True,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.profile, self.count, self.has_energy, self.clock = profile, count, energy, clock
        self.t0 = clock()
        self.inited = self.shut = 0
        self.calls: list[str] = []

    def _t(self) -> float:
        return self.clock() - self.t0

    def nvmlInit(self) -> None:
        self.inited += 1

    def nvmlShutdown(self) -> None:
        self.shut += 1

    def nvmlDeviceGetCount(self) -> int:
        return self.count

    def nvmlDeviceGetHandleByIndex(self, i: int) -> str:
        return f"h{i}"

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"580.159.04"  # older pynvml returns bytes

    def nvmlDeviceGetName(self, h: str) -> str:
        return "NVIDIA H200"

    def nvmlDeviceGetUUID(self, h: str) -> str:
        return f"GPU-{h}"

    def nvmlDeviceGetEnforcedPowerLimit(self, h: str) -> int:
        return 700_000

    def nvmlDeviceGetPowerUsage(self, h: str) -> int:
        self.calls.append("power")
        return int(self.profile(self._t())[0] * 1000)

    def nvmlDeviceGetUtilizationRates(self, h: str) -> SimpleNamespace:
        return SimpleNamespace(gpu=self.profile(self._t())[1], memory=30)

    def nvmlDeviceGetMemoryInfo(self, h: str) -> SimpleNamespace:
        return SimpleNamespace(used=20 * 2**30, total=141 * 2**30)

    def nvmlDeviceGetClockInfo(self, h: str, kind: int) -> int:
        assert kind == self.NVML_CLOCK_SM
        return 1980

    def nvmlDeviceGetTemperature(self, h: str, sensor: int) -> int:
        raise NVMLError("Not Supported")  # one unsupported reading must not stop the rest

    def nvmlDeviceGetTotalEnergyConsumption(self, h: str) -> int:
        if not self.has_energy:
            raise NVMLError("Not Supported")
        # Power is a step function in these tests: the integral is exact.
        return int(1000 * self.energy_to(self._t()))

    def energy_to(self, t: float) -> float:
        # Riemann sum at 1 ms: exact for the step profiles used here up to 1 ms x power.
        steps = int(t * 1000)
        return sum(self.profile(k / 1000)[0] for k in range(steps)) / 1000


def step(t: float) -> tuple[float, float]:
    """100 W and 0% busy for 0.3 s, then 400 W and 90% busy."""
    return (100.0, 0.0) if t < 0.3 else (400.0, 90.0)


def importer_with(**mods: Any) -> Callable[[str], ModuleType]:
    def imp(name: str) -> ModuleType:
        if name in mods:
            return mods[name]  # type: ignore[no-any-return]
        raise ImportError(name)

    return imp


# --- the readers --------------------------------------------------------------------------


def test_nvml_reader_names_the_device_and_reads_every_field() -> None:
    nvml = FakeNvml(step)
    r = NvmlReader(nvml, [0])
    assert r.devices == [
        {
            "index": 0,
            "name": "NVIDIA H200",
            "uuid": "GPU-h0",
            "driver": "580.159.04",
            "power_limit_w": 700.0,
        }
    ]
    s = r.sample()
    assert s["power_w"] == 100.0 and s["gpu_util"] == 0.0 and s["mem_util"] == 30.0
    assert s["mem_used_mib"] == 20 * 1024 and s["sm_clock_mhz"] == 1980.0
    assert s["temp_c"] is None  # unsupported: None, and the other fields still read
    r.close()
    assert nvml.inited == 1 and nvml.shut == 1


def test_nvml_reader_sums_power_over_the_gpus_it_samples() -> None:
    r = NvmlReader(FakeNvml(step, count=2), None)
    assert [d["index"] for d in r.devices] == [0, 1]
    assert r.sample()["power_w"] == 200.0
    one = NvmlReader(FakeNvml(step, count=2), [1])
    assert [d["index"] for d in one.devices] == [1] and one.sample()["power_w"] == 100.0


def test_nvml_reader_refuses_a_device_it_does_not_see_and_shuts_nvml_down() -> None:
    nvml = FakeNvml(step, count=1)
    with pytest.raises(LookupError, match="NVML sees 1 GPU"):
        NvmlReader(nvml, [3])
    assert nvml.shut == 1


def test_amdsmi_reader_reads_the_keys_of_either_rocm_release() -> None:
    calls: list[str] = []
    amd = SimpleNamespace(
        AmdSmiClkType=SimpleNamespace(GFX="gfx"),
        AmdSmiTemperatureType=SimpleNamespace(HOTSPOT="hotspot"),
        AmdSmiTemperatureMetric=SimpleNamespace(CURRENT="current"),
        amdsmi_init=lambda: calls.append("init"),
        amdsmi_shut_down=lambda: calls.append("shut"),
        amdsmi_get_processor_handles=lambda: ["a0", "a1"],
        amdsmi_get_gpu_driver_info=lambda h: {"driver_version": "6.10.5"},
        amdsmi_get_gpu_asic_info=lambda h: {"market_name": "AMD Radeon AI PRO R9700"},
        amdsmi_get_gpu_device_uuid=lambda h: f"uuid-{h}",
        # A key whose value is not a number ("N/A") is passed over for the next one.
        amdsmi_get_power_info=lambda h: {
            "average_socket_power": 250,
            "current_socket_power": "N/A",
        },
        amdsmi_get_gpu_activity=lambda h: {"gfx_activity": 80, "umc_activity": 40},
        amdsmi_get_gpu_vram_usage=lambda h: {"vram_used": 12000, "vram_total": 32000},
        amdsmi_get_clock_info=lambda h, kind: {"clk": 2350},
        amdsmi_get_temp_metric=lambda h, kind, metric: 71,
        amdsmi_get_energy_count=lambda h: {
            "energy_accumulator": 4_000_000,
            "counter_resolution": 15.3,
        },
    )
    r = AmdSmiReader(amd, [1])
    assert r.devices == [
        {"index": 1, "name": "AMD Radeon AI PRO R9700", "uuid": "uuid-a1", "driver": "6.10.5"}
    ]
    assert r.sample() == {
        "power_w": 250.0,
        "gpu_util": 80.0,
        "mem_util": 40.0,
        "mem_used_mib": 12000.0,
        "sm_clock_mhz": 2350.0,
        "temp_c": 71.0,
    }
    assert r.energy_j() == pytest.approx(4_000_000 * 15.3 / 1e6)
    r.close()
    assert calls == ["init", "shut"]


# --- which reader, or why none ------------------------------------------------------------


def test_a_cpu_job_gets_no_gpu_reader_and_says_why() -> None:
    reader, reason = open_reader("cpu", None, importer=importer_with(pynvml=FakeNvml(step)))
    assert reader is None
    assert reason is not None and reason.startswith("backend=cpu runs on the CPU")


def test_a_gpu_job_without_any_vendor_library_names_what_is_missing() -> None:
    reader, reason = open_reader("cuda", None, importer=importer_with(), which=lambda _: None)
    assert reader is None
    assert reason == (
        "no GPU telemetry: nvidia-ml-py is not installed; amdsmi (ROCm's Python package) is "
        "not installed"
    )


def test_nvml_without_a_driver_is_a_reason_not_an_error() -> None:
    class NoDriver(FakeNvml):
        def nvmlInit(self) -> None:
            raise NVMLError("Driver Not Loaded")

    reader, reason = open_reader(
        "vulkan", [0], importer=importer_with(pynvml=NoDriver(step)), which=lambda _: None
    )
    assert reader is None and reason is not None
    assert "NVML found no usable GPU (NVMLError: Driver Not Loaded)" in reason


def test_rocm_smi_without_amdsmi_is_named() -> None:
    _, reason = open_reader("hip", None, importer=importer_with(), which=lambda _: "/opt/rocm")
    assert reason is not None and reason.endswith("benchkit reads AMD GPUs through amdsmi only")


def test_hip_tries_amdsmi_before_nvml() -> None:
    amd_error = ModuleType("amdsmi")  # no amdsmi_init: the reader fails, NVML is next
    reader, reason = open_reader(
        "hip", None, importer=importer_with(amdsmi=amd_error, pynvml=FakeNvml(step))
    )
    assert reader is not None and reader.source == "nvml" and reason is None


# --- the sampler --------------------------------------------------------------------------


def test_sampler_energy_is_the_counter_difference_and_samples_come_at_a_fixed_rate() -> None:
    nvml = FakeNvml(step)
    reader = NvmlReader(nvml, [0])
    s = Sampler(reader, os.getpid(), interval_s=0.05, t0=nvml.t0)
    s.start()
    time.sleep(0.8)
    p = s.stop()
    # The counter moved by the integral of the step profile over the window, to 1 ms.
    want = nvml.energy_to(p.t_end) - nvml.energy_to(p.t_start)
    assert p.energy_basis == "counter"
    assert p.energy_j == pytest.approx(want, abs=0.5 + 0.01 * want)
    # 0.8 s at 0.05 s: 17 ticks, give or take a slow test machine.
    assert 12 <= len(p.samples) <= 18
    ts = [float(x["t"]) for x in p.samples if x["t"] is not None]
    assert ts == sorted(ts) and ts[0] == pytest.approx(p.t_start, abs=0.02)
    assert {x["power_w"] for x in p.samples} <= {100.0, 400.0}
    assert all(x["server_cpu_s"] is not None for x in p.samples)
    assert p.sampler_cpu_s >= 0.0 and p.server_cpu_s is not None


def test_without_an_energy_counter_power_is_integrated_over_the_window() -> None:
    nvml = FakeNvml(step, energy=False)
    s = Sampler(NvmlReader(nvml, [0]), None, interval_s=0.02, t0=nvml.t0)
    s.start()
    time.sleep(0.6)
    p = s.stop()
    assert p.energy_basis == "power_integral"
    want = nvml.energy_to(p.t_end) - nvml.energy_to(p.t_start)
    # A 20 ms sampling of a step: off by at most one interval at the step's full height.
    assert p.energy_j == pytest.approx(want, abs=0.02 * 400 + 0.05 * want)


def test_integrate_power_is_the_trapezoid_rule_held_to_the_edges() -> None:
    samples = [{"t": 1.0, "power_w": 100.0}, {"t": 2.0, "power_w": 300.0}]
    # 0.5 s flat at 100 before, the ramp 1->2 (200 J), 1 s flat at 300 after.
    assert integrate_power(samples, 0.5, 3.0) == pytest.approx(50 + 200 + 300)
    assert integrate_power([], 0.0, 1.0) is None
    assert integrate_power([{"t": 0.1, "power_w": None}], 0.0, 1.0) is None


def test_a_reading_that_hangs_stalls_only_the_sampler() -> None:
    release = threading.Event()

    class Hung(FakeNvml):
        def nvmlDeviceGetPowerUsage(self, h: str) -> int:
            release.wait(5)
            return 1000

    s = Sampler(NvmlReader(Hung(step), [0]), None, interval_s=0.01, join_timeout_s=0.1)
    s.start()
    t0 = time.perf_counter()
    # The caller (the replay) keeps running while the sampler is stuck in its first reading.
    busy = sum(1 for _ in range(200_000))
    p = s.stop()
    took = time.perf_counter() - t0
    release.set()
    assert busy == 200_000 and took < 2.0
    assert p.samples == []  # nothing came back in time


def test_sampler_counts_ticks_it_missed_when_a_reading_is_slow() -> None:
    class Slow(FakeNvml):
        def nvmlDeviceGetPowerUsage(self, h: str) -> int:
            time.sleep(0.05)
            return 1000

    s = Sampler(NvmlReader(Slow(step), [0]), None, interval_s=0.01)
    s.start()
    time.sleep(0.3)
    p = s.stop()
    assert p.sampler_late > 0 and len(p.samples) < 30


# --- /proc --------------------------------------------------------------------------------


def test_cpu_snapshot_follows_a_busy_child_and_its_busiest_thread() -> None:
    # The child burns 0.4 s of CPU on one thread between "go" and "done" (CPU time, not wall
    # time, so a loaded test machine changes how long it takes, not what it uses).
    code = (
        "import sys,time\n"
        "sys.stdin.readline()\n"
        "while time.thread_time() < 0.4: pass\n"
        "print('done', flush=True); time.sleep(30)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        time.sleep(0.2)
        a = cpu_snapshot(proc.pid)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"
        b = cpu_snapshot(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert a is not None and b is not None
    d = cpu_delta(a, b)
    assert d is not None
    total, busiest = d
    # Start-up time before the first snapshot is not counted; /proc counts in clock ticks.
    assert 0.3 <= total <= 0.6
    assert 0.3 <= busiest <= total + 0.02


def test_cpu_delta_counts_new_processes_from_zero_and_a_gone_process_as_none() -> None:
    a = CpuSnapshot({1: 10.0}, {1: 6.0, 2: 4.0})
    b = CpuSnapshot({1: 12.0, 7: 0.5}, {1: 7.5, 2: 4.5, 3: 0.25})
    assert cpu_delta(a, b) == (2.5, 1.5)
    assert cpu_delta(a, None) is None
    assert cpu_snapshot(2**22 + 12345) is None


# --- result.json's keys -------------------------------------------------------------------


def _pass(t0: float, t1: float, energy: float | None, gpu: list[float]) -> PassTelemetry:
    samples: list[dict[str, float | None]] = [
        {"t": t0 + i * 0.2, "power_w": 300.0 + i, "gpu_util": g, "mem_util": 50.0}
        for i, g in enumerate(gpu)
    ]
    return PassTelemetry(t0, t1, energy, "counter", samples, 12.0, 9.0, 0.01, 0)


def test_summary_gives_energy_per_unit_power_and_busy_shares() -> None:
    reader = NvmlReader(FakeNvml(step), [0])
    m = summarise(
        [_pass(0.0, 10.0, 3000.0, [80.0, 100.0]), _pass(20.0, 30.0, 2000.0, [60.0])],
        units_completed=8,
        reader=reader,
        reason=None,
        interval_s=0.2,
    )
    assert m["energy_j"] == 5000.0
    assert m["j_per_unit"] == 625.0
    assert m["power_w"] == {"mean": 250.0, "max": 301.0}  # mean from the counter: 5000 J / 20 s
    assert m["gpu_busy_share"] == pytest.approx(0.8)
    assert m["mem_busy_share"] == pytest.approx(0.5)
    assert m["server_cpu_share"] == pytest.approx(24.0 / 20.0)
    assert m["server_busiest_thread_share"] == pytest.approx(18.0 / 20.0)
    t = m["telemetry"]
    assert t["source"] == "nvml" and t["reason"] is None and t["samples"] == 3
    assert t["devices"][0]["name"] == "NVIDIA H200" and t["energy_basis"] == "counter"
    assert t["sampler_cpu_share"] == pytest.approx(0.02 / 20.0)


def test_summary_without_a_gpu_keeps_the_reason_and_the_cpu_share() -> None:
    p = PassTelemetry(0.0, 4.0, None, None, [{"t": 0.0, "server_cpu_s": 1.0}], 2.0, 1.0, 0.0, 0)
    m = summarise([p], 3, None, "backend=cpu runs on the CPU", 0.2)
    assert m["energy_j"] is None and m["j_per_unit"] is None
    assert m["power_w"] == {"mean": None, "max": None}
    assert m["gpu_busy_share"] is None
    assert m["server_cpu_share"] == 0.5
    assert m["telemetry"]["reason"] == "backend=cpu runs on the CPU"


def test_one_pass_without_energy_makes_the_job_s_energy_unknown() -> None:
    m = summarise([_pass(0, 1, 10.0, [1.0]), _pass(1, 2, None, [1.0])], 2, None, None, 0.2)
    assert m["energy_j"] is None and m["j_per_unit"] is None


def test_job_telemetry_writes_one_line_per_sample_with_its_pass(tmp_path: Path) -> None:
    tel = JobTelemetry(None, "why", 0.2, [_pass(0, 1, None, [1.0, 2.0]), _pass(2, 3, None, [3.0])])
    tel.write_samples(tmp_path / "telemetry.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "telemetry.jsonl").read_text().splitlines()]
    assert [(r["pass"], r["gpu_util"]) for r in rows] == [(0, 1.0), (0, 2.0), (1, 3.0)]


def test_telemetry_settings_compose(compose_cfg: Callable[..., BenchConfig]) -> None:
    cfg = compose_cfg("telemetry.interval_s=0.5")
    assert cfg.telemetry.enabled is True and cfg.telemetry.interval_s == 0.5
    from benchkit.job.run import job_telemetry

    off = job_telemetry(compose_cfg("telemetry.enabled=false"))
    assert off.reader is None and off.reason == "telemetry.enabled=false"
    cpu = job_telemetry(compose_cfg("backend=cpu"))
    assert cpu.reader is None and cpu.reason is not None and "backend=cpu" in cpu.reason


# --- a real job on this CPU machine -------------------------------------------------------


@pytest.mark.slow
def test_a_real_cpu_job_records_why_it_has_no_gpu_telemetry(tmp_path: Path) -> None:
    """`python -m benchkit` on the CPU backend: no GPU energy, the reason in the result, and
    the server's CPU time measured from /proc."""
    run = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "benchkit", "workload.units=1", "slots=2", f"hydra.run.dir={run}",
         "resume=false"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1800, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((run / "result.json").read_text())
    assert res["status"] == "complete"
    m = res["metrics"]
    assert m["energy_j"] is None and m["j_per_unit"] is None and m["gpu_busy_share"] is None
    assert m["telemetry"]["source"] is None
    assert m["telemetry"]["reason"].startswith("backend=cpu runs on the CPU")
    # llama-server's CPU threads worked through the replay: more than a tenth of a core.
    assert m["server_cpu_share"] > 0.1
    assert 0 < m["server_busiest_thread_share"] <= m["server_cpu_share"] + 0.01
    # Samples of the server's CPU time were written beside the calls.
    lines = (run / "telemetry.jsonl").read_text().splitlines()
    assert len(lines) >= 2 and "server_cpu_s" in json.loads(lines[0])
    assert m["telemetry"]["sampler_cpu_share"] < 0.01


def test_load_samples_reads_back_what_write_samples_wrote(tmp_path: Path) -> None:
    tel = JobTelemetry(None, "why", 0.2, [_pass(0, 1, None, [1.0]), _pass(2, 3, None, [3.0])])
    path = tmp_path / "telemetry.jsonl"
    tel.write_samples(path)
    written = [json.loads(x) for x in path.read_text().splitlines()]
    # A line that is not a sample (no time, a reading that is not a number) is passed over;
    # one without a pass is kept (readers take it as pass 0).
    with path.open("a") as fh:
        fh.write('{"pass": 0}\n{"pass": 0, "t": 1.0, "power_w": "high"}\nnot json\n{"t": 2}\n')
    assert load_samples(path) == [*written, {"t": 2}]
    assert load_samples(tmp_path / "missing.jsonl") == []


def test_a_pass_records_the_cpu_other_processes_used_on_the_machine() -> None:
    # A quiet "server" (a sleeping child) and another process burning 0.5 s of CPU during the
    # pass: the pass counts at least that as other processes' time (more where the shared
    # machine had other work too: only the lower bound is the mechanism's).
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    burn = "import time\nwhile time.process_time() < 0.5: pass\n"
    try:
        s = Sampler(None, server.pid, interval_s=0.05)
        s.start()
        subprocess.run([sys.executable, "-c", burn], check=True)
        p = s.stop()
    finally:
        server.kill()
        server.wait()
    assert p.host_other_cpu_s is not None and p.host_other_cpu_s >= 0.4
    assert p.load_avg_max is not None
    m = summarise([p], 1, None, "no GPU", 0.05)
    assert m["telemetry"]["host_other_cores"] == p.host_other_cpu_s / p.seconds

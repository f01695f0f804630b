"""Reading a job's GPUs: one reader per vendor library (NVML through nvidia-ml-py on NVIDIA,
amdsmi on AMD) behind one protocol, and the choice of reader for a job (`open_reader`), which
says in one sentence why there is none. The sampler that calls them is
benchkit/measure/telemetry.py.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple, NotRequired, Protocol, TypedDict

from benchkit.config.backends import BACKENDS, BackendName

# GPU backends: a job on one of these has a GPU whose power is the job's.
GPU_BACKENDS = frozenset(b.name.value for b in BACKENDS.values() if b.gpu)


class GpuDevice(TypedDict):
    """One sampled GPU as result.json's `telemetry.devices` lists it."""

    index: int
    name: str | None
    uuid: str | None
    driver: str | None
    power_limit_w: NotRequired[float | None]  # NVML only


class GpuReader(Protocol):
    """One vendor's view of the job's GPUs. `sample` never raises: a reading the device
    does not support is None."""

    source: str
    devices: list[GpuDevice]

    def sample(self) -> dict[str, float | None]: ...

    def energy_j(self) -> float | None: ...

    def close(self) -> None: ...


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), or None when the vendor library raises (its own error type for "not
    supported on this device" and the like)."""
    try:
        return fn(*args)
    except Exception:
        return None


def as_float(x: Any, scale: float = 1.0) -> float | None:
    """A reading as a float (x / scale), None when it is not a number."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x) / scale
    return None


def _sum(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) if vals else None


def _avg(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def _max(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return max(vals) if vals else None


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return x.decode() if isinstance(x, bytes) else str(x)


class DeviceReading(NamedTuple):
    """One GPU's readings at one tick, None where the device does not give one."""

    power_w: float | None
    gpu_util: float | None
    mem_util: float | None
    mem_used_mib: float | None
    sm_clock_mhz: float | None
    temp_c: float | None


def _reading(devices: Sequence[DeviceReading]) -> dict[str, float | None]:
    """One sample over the job's GPUs: power and memory summed, utilisation and clock
    averaged, the hottest temperature."""
    return {
        "power_w": _sum([d.power_w for d in devices]),
        "gpu_util": _avg([d.gpu_util for d in devices]),
        "mem_util": _avg([d.mem_util for d in devices]),
        "mem_used_mib": _sum([d.mem_used_mib for d in devices]),
        "sm_clock_mhz": _avg([d.sm_clock_mhz for d in devices]),
        "temp_c": _max([d.temp_c for d in devices]),
    }


class _LibraryReader:
    """What the vendor readers share: the library is started and the GPUs found in one step
    that shuts the library again when it fails; a tick reads each GPU alone (`_read`) and
    combines the readings."""

    handles: list[Any]
    devices: list[GpuDevice]

    def __init__(self, lib: ModuleType | Any, indices: Sequence[int] | None) -> None:
        self.lib = lib  # the vendor's Python module (or a test's stand-in)
        self._start()
        try:
            self.handles, self.devices = self._find(indices)
        except BaseException:
            self.close()
            raise

    def sample(self) -> dict[str, float | None]:
        return _reading([self._read(h) for h in self.handles])

    def _start(self) -> None:
        raise NotImplementedError

    def _find(self, indices: Sequence[int] | None) -> tuple[list[Any], list[GpuDevice]]:
        raise NotImplementedError

    def _read(self, h: object) -> DeviceReading:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class NvmlReader(_LibraryReader):
    """NVIDIA GPUs through NVML (the `pynvml` module of nvidia-ml-py)."""

    source = "nvml"

    def _start(self) -> None:
        self.lib.nvmlInit()

    def _find(self, indices: Sequence[int] | None) -> tuple[list[Any], list[GpuDevice]]:
        nvml = self.lib
        count = int(nvml.nvmlDeviceGetCount())
        wanted = list(range(count)) if indices is None else [i for i in indices if i < count]
        if not wanted:
            asked = ", ".join(map(str, indices or []))
            raise LookupError(f"NVML sees {count} GPU(s), none with index {asked}")
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in wanted]
        driver = _text(_call(nvml.nvmlSystemGetDriverVersion))
        devices: list[GpuDevice] = [
            {
                "index": i,
                "name": _text(_call(nvml.nvmlDeviceGetName, h)),
                "uuid": _text(_call(nvml.nvmlDeviceGetUUID, h)),
                "driver": driver,
                "power_limit_w": as_float(_call(nvml.nvmlDeviceGetEnforcedPowerLimit, h), 1000),
            }
            for i, h in zip(wanted, handles, strict=True)
        ]
        return handles, devices

    def _read(self, h: object) -> DeviceReading:
        n = self.lib
        util = _call(n.nvmlDeviceGetUtilizationRates, h)
        info = _call(n.nvmlDeviceGetMemoryInfo, h)
        return DeviceReading(
            power_w=as_float(_call(n.nvmlDeviceGetPowerUsage, h), 1000),  # mW
            gpu_util=as_float(getattr(util, "gpu", None)),
            mem_util=as_float(getattr(util, "memory", None)),
            mem_used_mib=as_float(getattr(info, "used", None), 2**20),
            sm_clock_mhz=as_float(_call(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_SM)),
            temp_c=as_float(_call(n.nvmlDeviceGetTemperature, h, n.NVML_TEMPERATURE_GPU)),
        )

    def energy_j(self) -> float | None:
        vals = [
            as_float(_call(self.lib.nvmlDeviceGetTotalEnergyConsumption, h), 1000)  # mJ
            for h in self.handles
        ]
        return _sum(vals) if all(v is not None for v in vals) else None

    def close(self) -> None:
        _call(self.lib.nvmlShutdown)


def _pick(d: Any, *keys: str) -> float | None:
    """The first of `keys` in `d` that holds a number."""
    if not isinstance(d, dict):
        return None
    for k in keys:
        v = as_float(d.get(k))
        if v is not None:
            return v
    return None


class AmdSmiReader(_LibraryReader):
    """AMD GPUs through ROCm's amdsmi Python package. Its dictionaries' keys changed between
    ROCm releases; each reading takes the first key present, else None."""

    source = "amdsmi"

    def _start(self) -> None:
        self.lib.amdsmi_init()

    def _find(self, indices: Sequence[int] | None) -> tuple[list[Any], list[GpuDevice]]:
        amd = self.lib
        every = list(amd.amdsmi_get_processor_handles())
        wanted = list(range(len(every))) if indices is None else list(indices)
        wanted = [i for i in wanted if i < len(every)]
        if not wanted:
            raise LookupError(f"amdsmi sees {len(every)} GPU(s), none of those asked for")
        handles = [every[i] for i in wanted]
        info = _call(amd.amdsmi_get_gpu_driver_info, handles[0])
        driver = info.get("driver_version") if isinstance(info, dict) else None
        devices: list[GpuDevice] = []
        for i, h in zip(wanted, handles, strict=True):
            asic = _call(amd.amdsmi_get_gpu_asic_info, h)
            devices.append(
                {
                    "index": i,
                    "name": asic.get("market_name") if isinstance(asic, dict) else None,
                    "uuid": _text(_call(amd.amdsmi_get_gpu_device_uuid, h)),
                    "driver": driver,
                }
            )
        return handles, devices

    def _read(self, h: object) -> DeviceReading:
        a = self.lib
        power = _call(a.amdsmi_get_power_info, h)
        act = _call(a.amdsmi_get_gpu_activity, h)
        clk = _call(a.amdsmi_get_clock_info, h, a.AmdSmiClkType.GFX)
        temp = _call(
            a.amdsmi_get_temp_metric,
            h,
            a.AmdSmiTemperatureType.HOTSPOT,
            a.AmdSmiTemperatureMetric.CURRENT,
        )
        return DeviceReading(
            power_w=_pick(power, "current_socket_power", "average_socket_power"),
            gpu_util=_pick(act, "gfx_activity"),
            mem_util=_pick(act, "umc_activity"),
            mem_used_mib=_pick(_call(a.amdsmi_get_gpu_vram_usage, h), "vram_used"),  # MB
            sm_clock_mhz=_pick(clk, "clk", "cur_clk"),
            temp_c=as_float(temp),
        )

    def energy_j(self) -> float | None:
        vals: list[float | None] = []
        for h in self.handles:
            e = _call(self.lib.amdsmi_get_energy_count, h)
            acc = _pick(e, "energy_accumulator", "power")
            res = _pick(e, "counter_resolution")
            vals.append(None if acc is None or res is None else acc * res / 1e6)  # µJ -> J
        return _sum(vals) if all(v is not None for v in vals) else None

    def close(self) -> None:
        _call(self.lib.amdsmi_shut_down)


Importer = Callable[[str], ModuleType]


def open_reader(
    backend: str,
    indices: Sequence[int] | None,
    *,
    importer: Importer = importlib.import_module,
    which: Callable[[str], str | None] = shutil.which,
) -> tuple[GpuReader | None, str | None]:
    """The GPU reader for a job on `backend`, or None and the one-sentence reason there is
    none, trying the readers the backend declares in order (benchkit.config.backends: NVML first,
    amdsmi first on HIP); `importer` and `which` are for tests."""
    if backend not in GPU_BACKENDS:
        return None, (
            f"backend={backend} runs on the CPU, so no GPU power is this job's "
            "(CPU energy is not read)"
        )
    why: list[str] = []
    for name in BACKENDS[BackendName(backend)].readers:
        try:
            mod = importer(name)
        except ImportError:
            pkg = "nvidia-ml-py" if name == "pynvml" else "amdsmi (ROCm's Python package)"
            why.append(f"{pkg} is not installed")
            continue
        try:
            reader: GpuReader = (
                NvmlReader(mod, indices) if name == "pynvml" else AmdSmiReader(mod, indices)
            )
        except Exception as exc:  # NVMLError_LibraryNotFound, AmdSmiLibraryException, ...
            lib = "NVML" if name == "pynvml" else "amdsmi"
            why.append(f"{lib} found no usable GPU ({type(exc).__name__}: {exc})")
            continue
        return reader, None
    if which("rocm-smi") and not any("amdsmi found" in w for w in why):
        why.append("rocm-smi is present but benchkit reads AMD GPUs through amdsmi only")
    return None, "no GPU telemetry: " + "; ".join(why)


def device_indices(device: int | None, visible: str | None) -> list[int] | None:
    """The GPU indices to sample: `hardware.device` when set, else the backend's visible
    devices variable when it lists plain indices, else None (every GPU the library sees)."""
    if device is not None:
        return [device]
    if visible:
        parts = [p.strip() for p in visible.split(",") if p.strip()]
        if parts and all(p.isdigit() for p in parts):
            return [int(p) for p in parts]
    return None

"""The backends benchkit runs, each declared once: the name its config group selects, how
llama-server is built for it and what the build needs, how its runtime is told which devices
to use, and which GPU readers sample it. The config's groups, plan, the engines, devices,
build, telemetry and the report read a backend's facts here instead of comparing its name.

Adding one: a `BackendName` member, its `Backend` in `BACKENDS`, and conf/backend/<name>.yaml
(`defaults: [base_<name>]`); docs/architecture.md, "Where to add… a backend".
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Protocol


class BackendName(StrEnum):
    cpu = "cpu"
    vulkan = "vulkan"
    hip = "hip"
    cuda = "cuda"
    metal = "metal"
    sycl = "sycl"
    vllm = "vllm"
    sglang = "sglang"
    external = "external"


class EngineKind(StrEnum):
    """What starts a backend's server (benchkit.server.engines); the config's backend.engine."""

    llama_cpp = "llama.cpp"
    vllm = "vllm"
    sglang = "sglang"
    external = "external"  # a server someone else started


@dataclass(frozen=True)
class DeviceSelector:
    """How a runtime is told which devices to use: one environment variable, each device
    index written by `form`, several joined by `sep`."""

    var: str
    # One device: "{}" is the bare index; oneAPI names a Level Zero GPU "level_zero:0".
    form: str = "{}"
    # Between devices: a comma in index lists; a semicolon between oneAPI selector terms
    # ("level_zero:0;level_zero:1", as llama.cpp's SYCL guide writes two GPUs).
    sep: str = ","
    # A variable that, where SLURM set it, already narrows what this runtime numbers, from 0
    # (the HIP runtime sees only the GPUs ROCR_VISIBLE_DEVICES lets through).
    filtered_by: str | None = None

    def value(self, devices: Sequence[int | str]) -> str:
        """The variable's value that selects exactly `devices`."""
        return self.sep.join(self.form.format(d) for d in devices)

    def env(self, devices: Sequence[int | str]) -> dict[str, str]:
        return {self.var: self.value(devices)}

    def device(self, value: str) -> int | None:
        """The one device index `value` selects; None when it selects several or is not
        written in this selector's form."""
        prefix, _, suffix = self.form.partition("{}")
        if not (value.startswith(prefix) and value.endswith(suffix)):
            return None
        core = value[len(prefix) : len(value) - len(suffix)]
        return int(core) if core.isdigit() else None


@dataclass(frozen=True)
class Requirement:
    """An executable a backend's build needs, and the fix where it is missing."""

    exe: str
    hint: str


@dataclass(frozen=True)
class Need:
    """What this machine must have before a backend is built or run, beyond executables: a
    path (`/dev/kfd`) or a platform (`darwin`); `why` is the one-sentence reason it is
    unavailable ({platform} is this machine's)."""

    path: str | None = None
    platform: str | None = None
    why: str = ""

    def problem(self) -> str | None:
        if self.path is not None and not Path(self.path).exists():
            return self.why.format(platform=sys.platform)
        if self.platform is not None and sys.platform != self.platform:
            return self.why.format(platform=sys.platform)
        return None


# NVIDIA's reader first; AMD's where the backend is AMD's own (benchkit.measure.gpu_readers).
NVIDIA_FIRST = ("pynvml", "amdsmi")
AMD_FIRST = ("amdsmi", "pynvml")


@dataclass(frozen=True)
class Backend:
    """One backend: everything benchkit does differently for it."""

    name: BackendName
    # How the report names it: a name, the same in every language.
    label: str
    engine: EngineKind = EngineKind.llama_cpp
    # CMake flags that select this backend when benchkit builds llama-server.
    cmake_flags: tuple[str, ...] = ()
    # Executables the build needs, each with its fix: a missing one makes it `unavailable`.
    requires: tuple[Requirement, ...] = ()
    needs: tuple[Need, ...] = ()
    # How its runtime selects devices; None: it runs on the CPU, there is nothing to select.
    device: DeviceSelector | None = None
    # The device selected when the config names none (hardware.device overrides it).
    default_device: int | None = None
    n_gpu_layers: str = "0"
    # GPU readers tried in order for its telemetry; empty: it runs on the CPU.
    readers: tuple[str, ...] = ()

    @property
    def gpu(self) -> bool:
        return bool(self.readers)

    @property
    def on_cpu(self) -> bool:
        """llama-server on the CPU: no device to list or select; its threads are the CPUs."""
        return self.engine is EngineKind.llama_cpp and not self.gpu

    def default_env(self) -> dict[str, str]:
        """The environment its config group starts with."""
        if self.device is None or self.default_device is None:
            return {}
        return self.device.env([self.default_device])


_CUDA = DeviceSelector("CUDA_VISIBLE_DEVICES")

_DECLARED = (
    Backend(BackendName.cpu, "CPU"),
    Backend(
        BackendName.vulkan,
        "Vulkan",
        cmake_flags=("-DGGML_VULKAN=ON",),
        requires=(
            Requirement(
                "glslc",
                "Vulkan needs the glslc shader compiler (Debian: glslc; run "
                "scripts/vulkan-deps.sh)",
            ),
        ),
        device=DeviceSelector("GGML_VK_VISIBLE_DEVICES"),
        # ggml skips CPU-type Vulkan devices (Mesa's llvmpipe) unless devices are named;
        # naming device 0 lets a machine without a GPU run on llvmpipe.
        default_device=0,
        n_gpu_layers="all",
        readers=NVIDIA_FIRST,
    ),
    Backend(
        BackendName.hip,
        "HIP",
        cmake_flags=("-DGGML_HIP=ON", "-DAMDGPU_TARGETS=gfx1201"),
        requires=(
            Requirement(
                "hipcc",
                "HIP needs ROCm's hipcc (install ROCm, or choose backend=vulkan or backend=cpu)",
            ),
        ),
        needs=(
            Need(
                path="/dev/kfd",
                why="no ROCm device: /dev/kfd is missing, so HIP has no GPU to run on.",
            ),
        ),
        device=DeviceSelector("HIP_VISIBLE_DEVICES", filtered_by="ROCR_VISIBLE_DEVICES"),
        n_gpu_layers="all",
        readers=AMD_FIRST,
    ),
    Backend(
        BackendName.cuda,
        "CUDA",
        cmake_flags=("-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=native"),
        requires=(
            Requirement("nvcc", "CUDA needs the CUDA toolkit's nvcc"),
            Requirement(
                "nvidia-smi",
                "CUDA needs an NVIDIA driver (nvidia-smi not found, so no CUDA device)",
            ),
        ),
        device=_CUDA,
        n_gpu_layers="all",
        readers=NVIDIA_FIRST,
    ),
    Backend(
        BackendName.metal,
        "Metal",
        needs=(
            Need(platform="darwin", why="Metal runs only on macOS; this machine is {platform}."),
        ),
        readers=NVIDIA_FIRST,
    ),
    Backend(
        BackendName.sycl,
        "SYCL",
        # Intel's compilers, as llama.cpp's SYCL guide builds it (after oneAPI's setvars.sh).
        cmake_flags=("-DGGML_SYCL=ON", "-DCMAKE_C_COMPILER=icx", "-DCMAKE_CXX_COMPILER=icpx"),
        requires=(
            Requirement(
                "icx",
                "SYCL needs Intel oneAPI's icx compiler (source /opt/intel/oneapi/setvars.sh)",
            ),
            Requirement(
                "icpx",
                "SYCL needs Intel oneAPI's icpx compiler (source /opt/intel/oneapi/setvars.sh)",
            ),
        ),
        # oneAPI's selector names a runtime before the index (level_zero:N); a bare index is
        # no selector. SLURM narrows Intel GPUs with ZE_AFFINITY_MASK (gres.conf's
        # intel_gpu_env), and Level Zero numbers the GPUs it lets through from 0.
        device=DeviceSelector(
            "ONEAPI_DEVICE_SELECTOR", form="level_zero:{}", sep=";", filtered_by="ZE_AFFINITY_MASK"
        ),
        n_gpu_layers="all",
        readers=NVIDIA_FIRST,
    ),
    Backend(BackendName.vllm, "vLLM", engine=EngineKind.vllm, device=_CUDA, readers=NVIDIA_FIRST),
    Backend(
        BackendName.sglang, "SGLang", engine=EngineKind.sglang, device=_CUDA, readers=NVIDIA_FIRST
    ),
    Backend(BackendName.external, "external", engine=EngineKind.external),
)

BACKENDS: Mapping[BackendName, Backend] = MappingProxyType({b.name: b for b in _DECLARED})

# Every build requirement's fix, by executable: a config that lists another backend's tool
# (backend.build_requires=[nvcc]) still gets that tool's fix.
REQUIRE_HINTS: Mapping[str, str] = MappingProxyType(
    {r.exe: r.hint for b in _DECLARED for r in b.requires}
)


def backend(name: BackendName | str) -> Backend:
    """The declaration of backend `name`."""
    return BACKENDS[BackendName(name)]


class Chosen(Protocol):
    """A job's backend as its config names it (config.BackendConfig)."""

    name: BackendName
    device_env: str | None


def selector(chosen: Chosen) -> DeviceSelector | None:
    """How a job selects its devices: the declared selector where its config names the
    declared variable (as every conf/backend group does); a bare index in the variable a
    config names instead (backend.device_env=...); none where it names none."""
    if not chosen.device_env:
        return None
    declared = backend(chosen.name).device
    if declared is not None and declared.var == chosen.device_env:
        return declared
    return DeviceSelector(chosen.device_env)

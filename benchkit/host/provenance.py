"""What made a result: benchkit and git state, machine, server build, times. Pure reads."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import NotRequired, TypedDict

from benchkit import __version__
from benchkit.config.schema import HardwareConfig
from benchkit.paths import checkout_root, installed_from_wheel


class GitState(TypedDict):
    describe: str | None
    commit: str | None


class BenchkitInfo(TypedDict):
    """provenance.benchkit: the code that measured."""

    version: str
    installed: str  # "wheel" or "checkout"
    git: GitState
    python: str


class HardwareInfo(TypedDict):
    """provenance.hardware: the declared profile, then what the machine says of itself."""

    name: str
    vendor: str
    description: str
    memory_gb: float | None
    bandwidth_gbs: float | None
    power_cap_w: float | None
    device: int | None
    host: str
    os: str
    cpu: str
    cpu_count: int | None
    ram_gb: float | None
    detected_gpus: NotRequired[list[str]]  # only where hardware.detect is on
    # This boot of the host (the kernel's random boot ID): lent machines share a host name
    # ('vm'), so where no card UUID names the machine, this tells two machines (or two boots
    # of one) apart. Absent where the kernel does not give one.
    boot_id: NotRequired[str]


def _cmd(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=cwd, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def git_state() -> GitState:
    """The checkout's git state; None for both from an installed wheel (its folder is no
    checkout of benchkit, and may sit inside someone else's repository)."""
    root = checkout_root()
    if root is None:
        return {"describe": None, "commit": None}
    return {
        "describe": _cmd(["git", "describe", "--always", "--dirty", "--tags"], cwd=root),
        "commit": _cmd(["git", "rev-parse", "HEAD"], cwd=root),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def detect_gpus() -> list[str]:
    """The GPUs as their vendor's tool reports them, driver included: 'NVIDIA H200, 143771 MiB,
    driver 580.159.04, power limit 700.00 W'. Empty where no such tool answers."""
    gpus: list[str] = []
    if shutil.which("nvidia-smi"):
        out = _cmd(
            [
                "nvidia-smi",
                "--query-gpu=name,memory.total,driver_version,power.limit",
                "--format=csv,noheader",
            ]
        )
        for line in (out or "").splitlines():
            parts = [x.strip() for x in line.split(",")]
            if len(parts) == 4:
                name, mem, driver, power = parts
                gpus.append(f"{name}, {mem}, driver {driver}, power limit {power}")
    if shutil.which("rocm-smi"):
        out = _cmd(["rocm-smi", "--showproductname", "--showdriverversion"])
        if out:
            gpus += [
                " ".join(x.split()) for x in out.splitlines() if "Card series" in x or "Driver" in x
            ]
    return gpus


def hardware_info(hw: HardwareConfig) -> HardwareInfo:
    """The declared hardware profile, plus what this machine says about itself."""
    info: HardwareInfo = {
        "name": hw.name,
        "vendor": hw.vendor,
        "description": hw.description,
        "memory_gb": hw.memory_gb,
        "bandwidth_gbs": hw.bandwidth_gbs,
        "power_cap_w": hw.power_cap_w,
        "device": hw.device,
        "host": platform.node(),
        "os": f"{platform.system()} {platform.release()}",
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_gb": _mem_gb(),
    }
    if hw.detect:
        info["detected_gpus"] = detect_gpus()
    boot = _boot_id()
    if boot:
        info["boot_id"] = boot
    return info


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def benchkit_info() -> BenchkitInfo:
    return {
        "version": __version__,
        # From an installed wheel there is no git state: the version is what names the code.
        "installed": "wheel" if installed_from_wheel() else "checkout",
        "git": git_state(),
        "python": platform.python_version(),
    }

"""Whether a native llama.cpp build may compile ggml's AMX kernels here: the CMake flags that
keep them out where the compiler and CPU together cannot run them.

A native build (GGML_NATIVE, benchkit's default) on a CPU whose /proc/cpuinfo lists AMX
compiles ggml's AMX kernels, and llama-server uses them for Q8_0 and Q4 weights held on the CPU.
Before its first tile instruction ggml fills a tile configuration on the stack and loads it
(`_tile_loadconfig`); GCC 12 (Debian 12's) drops the stores of the rows and column widths as
dead, because its builtin does not say it reads that memory, so the configuration loaded has
no tile, and the first `tilezero` traps: llama-server dies of SIGILL (exit -4) loading a Q8_0
model, with nothing in its log to say why. A virtual machine that lists AMX without enabling
its tile state ends the same way.

The probe is ggml's pattern in a dozen lines, compiled as the build would compile it and run
once; where it dies of SIGILL, the native build gets `-mno-amx-*` (its __AMX_INT8__ is then
undefined and ggml compiles no AMX kernel: the AVX-512 ones run those weights). The answer is
kept beside the builds, keyed by the compiler's version and the CPU, so a job does not compile
the probe again; the flags are part of the build's identity (its stamp), so a build made
before the probe existed is made again once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from benchkit import log
from benchkit.results.store import atomic_write_text

_log = log.get(__name__)

NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
PROBE_FILE = "amx-probe.json"

# ggml-cpu/amx/mmq.cpp's ggml_tile_config_init and a kernel's first instruction.
_PROBE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
struct tile_config_t {
    uint8_t palette_id = 0;
    uint8_t start_row = 0;
    uint8_t reserved_0[14] = {0};
    uint16_t colsb[16] = {0};
    uint8_t rows[16] = {0};
};
int main() {
    if (syscall(SYS_arch_prctl, 0x1023, 18)) return 3;  // ARCH_REQ_XCOMP_PERM, XTILEDATA
    alignas(64) tile_config_t tc = {};
    tc.palette_id = 1;
    tc.rows[4] = 16;
    tc.colsb[4] = 64;
    _tile_loadconfig(&tc);
    _tile_zero(4);
    _tile_release();
    return 0;
}
"""


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, list[str]]:
    """The CPU's model name and its feature flags, from /proc/cpuinfo ("", [] elsewhere)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return "", []
    lines = text.splitlines()
    model = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "")
    flags = next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("flags")), [])
    return model, flags


def advertises_amx(flags: list[str]) -> bool:
    return "amx_tile" in flags and "amx_int8" in flags


def _compiler() -> str | None:
    """The C++ compiler CMake will pick: $CXX, else c++ on PATH."""
    cxx = os.environ.get("CXX") or "c++"
    return shutil.which(cxx)


def _version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.splitlines()[0].strip() if out.stdout else ""


def probe(cxx: str) -> str:
    """Compile and run the probe: "runs", "traps" (SIGILL) or "unknown" (it did not
    compile, or ended another way: nothing to act on)."""
    with tempfile.TemporaryDirectory(prefix="benchkit-amx-") as tmp:
        src, exe = Path(tmp) / "probe.cpp", Path(tmp) / "probe"
        src.write_text(_PROBE)
        try:
            built = subprocess.run(
                [cxx, "-O3", "-march=native", str(src), "-o", str(exe)],
                capture_output=True,
                timeout=120,
            )
            if built.returncode != 0:
                return "unknown"
            ran = subprocess.run([str(exe)], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
    if ran.returncode == 0:
        return "runs"
    return "traps" if ran.returncode == -signal.SIGILL else "unknown"


def native_flags(cache_dir: Path) -> list[str]:
    """The CMake flags a native build needs on this machine: [] where the CPU lists no AMX
    or ggml's AMX pattern runs, else C and C++ flags that compile no AMX kernel."""
    model, flags = cpu_flags()
    if not advertises_amx(flags):
        return []
    cxx = _compiler()
    if cxx is None:
        return []
    key = hashlib.sha256(f"{_version(cxx)}\n{model}\n{' '.join(flags)}".encode()).hexdigest()
    record = cache_dir / PROBE_FILE
    try:
        seen = json.loads(record.read_text())
    except (OSError, ValueError):
        seen = {}
    verdict = seen.get(key) if isinstance(seen, dict) else None
    if verdict not in ("runs", "traps", "unknown"):
        verdict = probe(cxx)
        if verdict == "traps":
            _log.warning(
                f"{_version(cxx) or cxx} on this CPU ({model or 'AMX listed'}) runs ggml's AMX "
                f"kernels into SIGILL (the compiler drops the tile configuration's stores, or "
                f"the machine does not enable AMX): the native build is made with {NO_AMX}"
            )
        cache_dir.mkdir(parents=True, exist_ok=True)
        merged = {**(seen if isinstance(seen, dict) else {}), key: verdict}
        atomic_write_text(record, json.dumps(merged, indent=1) + "\n")
    if verdict != "traps":
        return []
    return [f"-DCMAKE_C_FLAGS={NO_AMX}", f"-DCMAKE_CXX_FLAGS={NO_AMX}"]

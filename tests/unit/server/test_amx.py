"""A native build compiles ggml's AMX kernels only where they run (benchkit.server.amx): the
probe, the answer kept beside the builds, and the flags in the build's identity."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchkit.server import amx
from benchkit.server.build import build_flags
from benchkit.server.provide import backend_from_conf

CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R) Processor
flags\t\t: fpu sse avx2 avx512f avx512_vnni amx_bf16 amx_tile amx_int8
"""


@pytest.fixture
def amx_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A CPU that lists AMX, a compiler whose version the test sets, and a probe that
    records its calls and answers "traps"."""
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    real = amx.cpu_flags
    monkeypatch.setattr(amx, "cpu_flags", lambda: real(info))
    monkeypatch.setattr(amx, "_compiler", lambda: "/usr/bin/c++")
    monkeypatch.setattr(amx, "_version", lambda cxx: "c++ (Debian 12.2.0) 12.2.0")
    calls: list[str] = []

    def probe(cxx: str) -> str:
        calls.append(cxx)
        return "traps"

    monkeypatch.setattr(amx, "probe", probe)
    monkeypatch.setenv("BENCHKIT_CACHE", str(tmp_path / "cache"))
    return calls


def test_cpuinfo_is_read_for_the_model_and_its_flags(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    model, flags = amx.cpu_flags(info)
    assert model == "Intel(R) Xeon(R) Processor"
    assert amx.advertises_amx(flags)
    assert not amx.advertises_amx(["avx2", "amx_bf16"])
    assert amx.cpu_flags(tmp_path / "missing") == ("", [])


def test_a_cpu_without_amx_is_not_probed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(amx, "cpu_flags", lambda: ("Some CPU", ["avx2", "fma"]))

    def probe(cxx: str) -> str:
        raise AssertionError("probed a CPU that lists no AMX")

    monkeypatch.setattr(amx, "probe", probe)
    assert amx.native_flags(tmp_path) == []
    assert not (tmp_path / amx.PROBE_FILE).exists()


def test_a_trap_turns_amx_off_once_per_compiler_and_cpu(
    amx_cpu: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = amx.native_flags(tmp_path)
    assert flags == [f"-DCMAKE_C_FLAGS={amx.NO_AMX}", f"-DCMAKE_CXX_FLAGS={amx.NO_AMX}"]
    assert amx.native_flags(tmp_path) == flags
    assert len(amx_cpu) == 1  # the second answer came from the record
    assert "traps" in (tmp_path / amx.PROBE_FILE).read_text()
    # Another compiler is another question.
    monkeypatch.setattr(amx, "_version", lambda cxx: "c++ (Debian 14.2.0) 14.2.0")
    amx.native_flags(tmp_path)
    assert len(amx_cpu) == 2


def test_the_flags_are_in_a_native_builds_identity_only(amx_cpu: list[str]) -> None:
    native = build_flags(backend_from_conf("cpu"))
    assert f"-DCMAKE_CXX_FLAGS={amx.NO_AMX}" in native
    # A portable build compiles for AVX2 and no AMX already.
    assert not any("amx" in f for f in build_flags(backend_from_conf("cpu"), portable=True))


@pytest.mark.skipif(
    not amx.advertises_amx(amx.cpu_flags()[1]) or shutil.which("c++") is None,
    reason="this CPU lists no AMX (or there is no C++ compiler): nothing to probe",
)
def test_the_real_probe_answers_on_an_amx_cpu() -> None:
    # On Debian 12's GCC 12 it traps (the tile configuration's stores are dropped).
    cxx = shutil.which("c++")
    assert cxx is not None
    assert amx.probe(cxx) in ("runs", "traps")

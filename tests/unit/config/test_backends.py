"""The backend declarations (benchkit.config.backends): each config group composes to exactly what
its YAML file said before the declarations moved (so earlier jobs' resume keys still match),
and every step that names a device (plan, the vLLM/SGLang engines, the build's checks, the
report's names) reads one declaration, SYCL's `level_zero:N` included."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from benchkit.config import backends
from benchkit.config.backends import BACKENDS, BackendName, DeviceSelector, backend, selector
from benchkit.config.schema import BenchConfig, to_plain
from benchkit.errors import Unavailable
from benchkit.paths import repo_root
from benchkit.report.lang.words import BACKENDS as NAMES
from benchkit.server import build
from benchkit.server.plan import plan_server
from benchkit.server.provide import backend_from_conf
from benchkit.server.vllm_sglang import engine_env

Compose = Callable[..., BenchConfig]

# What conf/backend/<name>.yaml held before benchkit.config.backends declared it: name, engine,
# cmake_flags, build_requires, device_env, env, n_gpu_layers. A change here changes the
# resume key of every job on that backend (its resolved config is part of the key).
COMPOSED = {
    "cpu": ("cpu", "llama.cpp", [], [], None, {}, "0"),
    "cuda": (
        "cuda",
        "llama.cpp",
        ["-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=native"],
        ["nvcc", "nvidia-smi"],
        "CUDA_VISIBLE_DEVICES",
        {},
        "all",
    ),
    "hip": (
        "hip",
        "llama.cpp",
        ["-DGGML_HIP=ON", "-DAMDGPU_TARGETS=gfx1201"],
        ["hipcc"],
        "HIP_VISIBLE_DEVICES",
        {},
        "all",
    ),
    "vulkan": (
        "vulkan",
        "llama.cpp",
        ["-DGGML_VULKAN=ON"],
        ["glslc"],
        "GGML_VK_VISIBLE_DEVICES",
        {"GGML_VK_VISIBLE_DEVICES": "0"},
        "all",
    ),
    "vllm": ("vllm", "vllm", [], [], "CUDA_VISIBLE_DEVICES", {}, "0"),
    "sglang": ("sglang", "sglang", [], [], "CUDA_VISIBLE_DEVICES", {}, "0"),
    "external": ("external", "external", [], [], None, {}, "0"),
    # Added with its declaration (the proof that a backend is one declaration and a YAML).
    "sycl": (
        "sycl",
        "llama.cpp",
        ["-DGGML_SYCL=ON", "-DCMAKE_C_COMPILER=icx", "-DCMAKE_CXX_COMPILER=icpx"],
        ["icx", "icpx"],
        "ONEAPI_DEVICE_SELECTOR",
        {},
        "all",
    ),
}
KEYS = ("name", "engine", "cmake_flags", "build_requires", "device_env", "env", "n_gpu_layers")


def _spec_env(cfg: BenchConfig) -> dict[str, str]:
    spec = plan_server(
        cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=10, cap=10
    )
    return spec.env


def test_every_config_group_is_a_declared_backend() -> None:
    groups = {p.stem for p in (repo_root() / "conf" / "backend").glob("*.yaml")}
    assert groups == set(COMPOSED)
    assert groups <= {b.value for b in BACKENDS}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_a_backend_group_composes_to_its_declaration(compose_cfg: Compose, name: str) -> None:
    plain = to_plain(compose_cfg(f"backend={name}"))["backend"]
    assert isinstance(plain, dict)
    assert tuple(plain[k] for k in KEYS) == COMPOSED[name]


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_the_build_command_reads_a_group_as_a_job_composes_it(
    compose_cfg: Compose, name: str
) -> None:
    # `python -m benchkit.provide NAME` reads the YAML without composing a job.
    assert backend_from_conf(name) == compose_cfg(f"backend={name}").backend


def test_a_group_key_still_overrides_the_declaration(compose_cfg: Compose) -> None:
    cfg = compose_cfg(
        "backend=hip", "backend.cmake_flags=['-DGGML_HIP=ON','-DAMDGPU_TARGETS=gfx1100']"
    )
    assert cfg.backend.cmake_flags == ["-DGGML_HIP=ON", "-DAMDGPU_TARGETS=gfx1100"]


@pytest.mark.parametrize(
    ("name", "device", "expected"),
    [
        ("cuda", 2, {"CUDA_VISIBLE_DEVICES": "2"}),
        ("hip", 2, {"HIP_VISIBLE_DEVICES": "2"}),
        ("vulkan", 2, {"GGML_VK_VISIBLE_DEVICES": "2"}),
        ("vulkan", None, {"GGML_VK_VISIBLE_DEVICES": "0"}),  # llvmpipe reachable by default
        ("sycl", 2, {"ONEAPI_DEVICE_SELECTOR": "level_zero:2"}),
        ("cpu", 2, {}),
    ],
)
def test_the_server_selects_hardware_device_as_its_backend_names_devices(
    compose_cfg: Compose, name: str, device: int | None, expected: dict[str, str]
) -> None:
    cfg = compose_cfg(f"backend={name}", f"hardware.device={'null' if device is None else device}")
    assert _spec_env(cfg) == expected


def test_vllm_and_sglang_select_their_device_as_llama_server_does(compose_cfg: Compose) -> None:
    for name in ("vllm", "sglang"):
        cfg = compose_cfg(f"backend={name}", "hardware.device=3", "server.host=0.0.0.0")
        assert engine_env(cfg) == {"CUDA_VISIBLE_DEVICES": "3"}


def test_a_device_variable_the_config_names_instead_gets_a_bare_index(
    compose_cfg: Compose,
) -> None:
    cfg = compose_cfg("backend=hip", "backend.device_env=ROCR_VISIBLE_DEVICES", "hardware.device=1")
    assert selector(cfg.backend) == DeviceSelector("ROCR_VISIBLE_DEVICES")
    assert _spec_env(cfg) == {"ROCR_VISIBLE_DEVICES": "1"}
    assert selector(compose_cfg("backend=cuda", "backend.device_env=null").backend) is None


def test_a_selector_reads_back_the_one_device_it_names() -> None:
    sycl = backend(BackendName.sycl).device
    assert sycl is not None
    assert sycl.device("level_zero:3") == 3
    assert sycl.device(sycl.value([0, 1])) is None  # two devices: no one hardware.device
    assert sycl.device("3") is None  # not oneAPI's form
    cuda = backend("cuda").device
    assert cuda is not None and cuda.device("3") == 3 and cuda.device("0,1") is None


def test_sycl_is_unavailable_without_oneapis_compilers(
    compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch
) -> None:
    sycl = compose_cfg("backend=sycl").backend
    monkeypatch.setattr(build.shutil, "which", lambda exe: None if exe == "icx" else f"/x/{exe}")
    with pytest.raises(Unavailable, match=r"^icx not found: SYCL needs Intel oneAPI's icx"):
        build.check_prerequisites(sycl)


def test_hip_needs_a_rocm_device(compose_cfg: Compose, monkeypatch: pytest.MonkeyPatch) -> None:
    hip = compose_cfg("backend=hip").backend
    monkeypatch.setattr(build.shutil, "which", lambda exe: f"/x/{exe}")
    monkeypatch.setattr(backends.Path, "exists", lambda self: str(self) != "/dev/kfd")
    with pytest.raises(Unavailable, match="no ROCm device: /dev/kfd is missing"):
        build.check_prerequisites(hip)


def test_the_report_names_every_declared_backend() -> None:
    assert {b.value: BACKENDS[b].label for b in BACKENDS} == NAMES
    assert NAMES["sycl"] == "SYCL" and NAMES["vllm"] == "vLLM"

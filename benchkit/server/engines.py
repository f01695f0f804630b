"""The engines a job can measure, behind one interface: llama-server (built by benchkit),
vLLM and SGLang (installed by the user), and a server someone else started (`external`).

benchkit.job.run runs every engine the same way: `provide` what runs the server, find its
`models`, `plan` its command, start a `server` per pass (which proves it is this job's),
replay, read its `counters`. What differs between engines lives here, one class each; vLLM
and SGLang share one, since everything that tells them apart is already keyed by EngineName
in vllm_sglang.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypedDict

import httpx

from benchkit.config.backends import EngineKind, backend
from benchkit.config.schema import BenchConfig, CtxPolicy
from benchkit.errors import Unavailable, UserError
from benchkit.models.draft import provide_draft_model
from benchkit.models.trained_context import trained_context
from benchkit.server.metrics import (
    ServerCounters,
    engine_counters,
    parse_prometheus,
    server_counters,
)
from benchkit.server.plan import (
    ServerSecret,
    ServerSpec,
    api_key,
    context_size,
    longest_prompt,
    plan_server,
)
from benchkit.server.provide import (
    ServerBuildInfo,
    fit_flash_attn,
    provide_model,
    provide_server,
)
from benchkit.server.serve import (
    ENGINE_TERMS,
    NOT_OURS,
    ExternalServer,
    RunningServer,
    Server,
    ServerError,
    Shown,
    control_get,
    external_identity,
    identity_problems,
)
from benchkit.server.vllm_sglang import (
    ENGINE_LABEL,
    ENGINE_VERSIONS,
    METRICS_PATH,
    MODELS_PATH,
    EngineName,
    engine_argv,
    engine_env,
    engine_identity,
    engine_info_path,
    engine_launcher,
    engine_models,
    engine_of,
    engine_secret,
    engine_unavailable,
)
from benchkit.workload import Unit


class DraftFile(TypedDict, total=False):
    """provenance.model.draft: the draft model spec=draft loads."""

    name: str
    path: str


class ModelBlock(TypedDict, total=False):
    """provenance.model: the config's model (filled by the job), then the files the engine
    loads (Models.info: path, file_bytes, draft)."""

    name: str
    architecture: str | None
    params_total_b: float | None
    params_active_b: float | None
    quant: str | None
    size_gb: float | None
    synthetic: bool
    path: str | None
    file_bytes: int
    draft: DraftFile
    n_vocab: int | None
    # A real model fetched from its packages (model.package): what it is and where it is from.
    license: str
    upstream: str
    source: str
    sha256: str
    # A synthetic model's shape, from the recipe it was written from: the report's roofline
    # counts the KV cache a decode step reads from it (report.analysis.kv_read).
    n_layers: int
    n_kv_heads: int
    head_dim: int
    d_model: int


class PropsBlock(TypedDict):
    """provenance.server.props: what the server said of itself on its first start."""

    build_info: object
    model_alias: object
    model_path: object
    total_slots: object
    n_ctx_per_slot: object
    default_sampling: dict[str, object]


class LaunchInfo(TypedDict, total=False):
    """provenance.server: a started server's command and sizes (server_info), or an external
    server's URL; `props` is added by the job from the server's own answers."""

    argv: list[str]
    env: dict[str, str]
    host: str
    port: int
    alias: str
    ctx_total: int
    ctx_per_slot: int
    slots: int
    url: str
    external: bool
    props: PropsBlock


@dataclass(frozen=True)
class Build:
    """What runs a job's server."""

    # The resume key's part that names the build: the same config, workload and build is the
    # same measurement.
    id: str
    # The program the server's flags follow (llama-server's path, the engine's launcher).
    command: tuple[str, ...]
    # provenance.server_build; None for a server benchkit did not start.
    info: ServerBuildInfo | None


@dataclass(frozen=True)
class Models:
    """The model files a server loads (none for a server someone else started)."""

    path: str | None = None
    draft: str | None = None
    # Merged into provenance.model.
    info: ModelBlock = field(default_factory=lambda: ModelBlock())


@dataclass(frozen=True)
class Launch:
    """A planned server: how each pass starts it, and what provenance records about it."""

    spec: ServerSpec
    info: LaunchInfo
    secret: ServerSecret | None = None


@dataclass(frozen=True)
class Target:
    """What the job decides for its server, whatever the engine."""

    # The workload's name and generation cap (context sizing).
    workload: str
    cap: int
    # A port that was free, and the alias nonce the server must answer to.
    port: int
    alias: str
    # A private folder that lives as long as the job, for files the server reads at start.
    scratch: Path


class Engine(Protocol):
    """One engine's side of a job; benchkit.job.run drives every engine through these, in order."""

    @property
    def label(self) -> str:
        """What the job's progress line calls it (the backend, or the external URL)."""

    @property
    def started_here(self) -> bool:
        """Whether benchkit starts and stops the server: then its process is sampled, its
        /metrics are read, and an earlier job with the same resume key may be reused."""

    def provide(self) -> Build:
        """Find or build what runs the server (Unavailable when this machine cannot)."""

    def models(self) -> Models:
        """Find or write the model files the server loads."""

    def plan(self, build: Build, models: Models, units: list[Unit], *, target: Target) -> Launch:
        """The server's command for this workload and target (pure but for SGLang's key
        file and an external server's identity check)."""

    def server(self, launch: Launch, log: Path) -> Server:
        """One pass's server, not started yet; it proves its identity when started."""

    def counters(self, srv: Server) -> ServerCounters | None:
        """The server's own counters under llama-server's keys (None: none to read)."""


def engine_for(cfg: BenchConfig) -> Engine:
    """The job's engine; Unavailable, with the reason, when this machine cannot run it."""
    if backend(cfg.backend.name).engine is EngineKind.external:
        return External(cfg)
    name = engine_of(cfg)
    if name is None:
        return LlamaCpp(cfg)
    if why := engine_unavailable(cfg):
        raise Unavailable(why)
    return Checkpoint(cfg, name)


def server_info(spec: ServerSpec) -> LaunchInfo:
    """provenance.server of a server benchkit starts (the API key never in it)."""
    return {
        "argv": spec.redacted_argv(),
        "env": dict(spec.env),
        "host": spec.host,
        "port": spec.port,
        "alias": spec.alias,
        "ctx_total": spec.ctx_total,
        "ctx_per_slot": spec.ctx_per_slot,
        "slots": spec.slots,
    }


def _read_counters(srv: Server, parse: Callable[[str], ServerCounters]) -> ServerCounters | None:
    """/metrics through `parse`; None when it cannot be read (not worth a failure)."""
    try:
        return parse(control_get(srv.base_url, METRICS_PATH, srv.headers()).text)
    except (httpx.HTTPError, ValueError):
        return None


@dataclass(frozen=True)
class _Started:
    """An engine whose server benchkit starts, named by its backend."""

    cfg: BenchConfig
    started_here = True

    @property
    def label(self) -> str:
        return self.cfg.backend.name.value


@dataclass(frozen=True)
class LlamaCpp(_Started):
    """llama-server, built by benchkit from the pinned source (or the user's binary)."""

    def provide(self) -> Build:
        binary = provide_server(self.cfg)
        info: ServerBuildInfo = {
            "binary": str(binary.path),
            "source": binary.source,
            "version": binary.version,
            "devices": binary.devices,
            "built_now_s": binary.build_seconds,
            "software_device": binary.software_device,
            # Where and how it was built: flags, machine, portable or native, carried or not.
            "build": binary.build,
        }
        # Before the resume key is taken: it may switch flash attention off in the config.
        fit_flash_attn(self.cfg, binary, info)
        return Build(f"{binary.path}\n{binary.version}", (str(binary.path),), info)

    def models(self) -> Models:
        cfg = self.cfg
        path = provide_model(cfg)
        info: ModelBlock = {"path": str(path), "file_bytes": path.stat().st_size}
        m = cfg.model
        if m.synthetic is not None and m.path is None and m.params_total_b is None:
            # A model benchkit wrote: its parameters are known exactly, so the report's
            # model line has them without the config declaring them.
            from benchkit.models.synthetic import param_counts

            total, active = param_counts(m.synthetic)
            info["params_total_b"], info["params_active_b"] = total / 1e9, active / 1e9
        if m.synthetic is not None and m.path is None:
            r = m.synthetic
            info["n_layers"], info["n_kv_heads"] = r.n_layers, r.n_kv_heads
            info["head_dim"], info["d_model"] = r.head_dim, r.d_model
        if m.package is not None and m.path is None:
            # Real weights from the package index: the report's first lines say what they are.
            pkg = m.package
            info["license"], info["upstream"] = pkg.license, pkg.upstream
            info["source"], info["sha256"] = ", ".join(pkg.packages), pkg.sha256
        draft = provide_draft_model(cfg, path)
        if draft is not None and cfg.spec.draft_model is not None:
            info["draft"] = {"name": cfg.spec.draft_model.name, "path": str(draft)}
        return Models(str(path), str(draft) if draft else None, info)

    def plan(self, build: Build, models: Models, units: list[Unit], *, target: Target) -> Launch:
        spec = plan_server(
            self.cfg,
            server_bin=build.command[0],
            model_path=str(models.path),
            port=target.port,
            alias=target.alias,
            longest_prompt=longest_prompt(self.cfg, units, target.workload),
            cap=target.cap,
            draft_model_path=models.draft,
            # What the file was trained for bounds a fitted slot (read only where it is fitted).
            trained=trained_context(models.path)
            if models.path and self.cfg.server.ctx_policy is CtxPolicy.fit
            else None,
        )
        return Launch(spec, server_info(spec))

    def server(self, launch: Launch, log: Path) -> Server:
        return RunningServer(launch.spec, log)

    def counters(self, srv: Server) -> ServerCounters | None:
        return _read_counters(srv, lambda text: server_counters(parse_prometheus(text)))


@dataclass(frozen=True)
class Checkpoint(_Started):
    """vLLM or SGLang serving a Hugging Face checkpoint: the same replay and records as
    llama-server's, with the engine's command line, identity and metrics (vllm_sglang.py)."""

    name: EngineName

    def provide(self) -> Build:
        launcher = engine_launcher(self.cfg)
        info: ServerBuildInfo = {
            "engine": self.name.value,
            "source": ENGINE_LABEL[self.name],
            "launcher": launcher,
            # The engine's version is whatever is installed; the flags were checked against
            # this one.
            "flags_checked_against": ENGINE_VERSIONS[self.name],
        }
        return Build(f"{' '.join(launcher)}\n{self.name.value}", tuple(launcher), info)

    def models(self) -> Models:
        path, draft = engine_models(self.cfg)
        info: ModelBlock = {"path": path}
        if draft is not None:
            info["draft"] = {"path": draft}
        return Models(path, draft, info)

    def plan(self, build: Build, models: Models, units: list[Unit], *, target: Target) -> Launch:
        cfg, cap, port, alias = self.cfg, target.cap, target.port, target.alias
        secret = engine_secret(cfg)
        longest = longest_prompt(cfg, units, target.workload)
        secret_path: str | None = None
        if secret.config_text is not None:
            # SGLang takes an API key only from argv or a --config file: a file only we can
            # read, outside the job folder, gone when the job ends.
            path = target.scratch / "api-key.yaml"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secret.config_text)
            secret_path = str(path)
        total, per_slot = context_size(cfg, longest, cap)
        argv = engine_argv(
            cfg, model_path=str(models.path), port=port, alias=alias, per_slot=per_slot,
            draft_model_path=models.draft, launcher=build.command, secret_config_path=secret_path,
        )  # fmt: skip
        spec = ServerSpec(
            argv=tuple(argv), env=engine_env(cfg), host=cfg.server.host, port=port,
            alias=alias, ctx_total=total, ctx_per_slot=per_slot, slots=cfg.slots,
            api_key=api_key(cfg),
        )  # fmt: skip
        return Launch(spec, server_info(spec), secret)

    def server(self, launch: Launch, log: Path) -> Server:
        return RunningServer(
            launch.spec, log, name=ENGINE_LABEL[self.name], identify=self.identify,
            secret=launch.secret,
        )  # fmt: skip

    def identify(self, srv: RunningServer) -> dict[str, object]:
        """The engine's proof that it is this job's server: its served model name is the
        job's alias nonce and, where it shows one, its slot count is the job's."""
        info_path = engine_info_path(self.cfg)
        try:
            models = control_get(srv.base_url, MODELS_PATH, srv.headers()).json()
            info = None
            if info_path is not None:
                info = control_get(srv.base_url, info_path, srv.headers()).json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ServerError(f"{MODELS_PATH} or {info_path} could not be read: {exc}") from exc
        # /server_info holds the API key (SGLang): only the two values below are kept.
        alias, slots = engine_identity(self.name, models, info)
        problems = identity_problems(
            Shown(alias, slots), name=srv.spec.alias, slots=srv.spec.slots, terms=ENGINE_TERMS
        )
        if problems:
            raise ServerError(NOT_OURS + "; ".join(problems))
        return {"model_alias": alias, "total_slots": slots}

    def counters(self, srv: Server) -> ServerCounters | None:
        return _read_counters(srv, lambda text: engine_counters(self.name, text))


@dataclass(frozen=True)
class External:
    """A llama-server someone else started at backend.url, measured only once its /props
    shows the declared model.name and slot count."""

    cfg: BenchConfig

    @property
    def label(self) -> str:
        return f"external server {self.cfg.backend.url}"

    started_here = False

    def provide(self) -> Build:
        return Build(f"external {self.cfg.backend.url}", (), None)

    def models(self) -> Models:
        return Models()

    def plan(self, build: Build, models: Models, units: list[Unit], *, target: Target) -> Launch:
        cfg = self.cfg
        url = (cfg.backend.url or "").rstrip("/")
        if not url:
            raise UserError("backend=external needs backend.url=URL of a running llama-server.")
        spec = ServerSpec(
            argv=(), env={}, alias=cfg.model.name, slots=cfg.slots, api_key=api_key(cfg), url=url
        )
        # The client names the model as the server does.
        props = external_identity(spec, model=cfg.model.name)
        spec = replace(spec, alias=str(props.get("model_alias") or cfg.model.name))
        return Launch(spec, {"url": url, "external": True, "alias": spec.alias})

    def server(self, launch: Launch, log: Path) -> Server:
        return ExternalServer(launch.spec, self.cfg.model.name)

    def counters(self, srv: Server) -> ServerCounters | None:
        return None

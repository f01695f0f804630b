"""Run one server for one pass of a job: start it, prove it is ours, and always stop it.

The client must only ever measure the server this job started. Proof: the port was free
when we chose it, the server answers to this job's alias nonce, its slot count matches, and
(llama-server) its model path is the one we passed. Anything else refuses the job before a
single call is measured. Every engine's proof goes through one comparison,
`identity_problems`; what differs is where each engine shows those values
(benchkit.server.engines) and the words it uses for them. A server someone else started
(`backend=external`) is proven the same way against the model name and slot count the user
declared.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import httpx

from benchkit import timeouts
from benchkit.errors import UserError
from benchkit.host.lifeline import die_with_parent, forget_server, note_server
from benchkit.server.plan import ServerSecret, ServerSpec, llama_secret


class ServerError(Exception):
    """The server did not start, is not ours, or died; the message is the one-line reason."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on now. llama-server then binds it without --reuse-port, so a
    port taken meanwhile makes it exit instead of sharing the port with someone else."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeouts.PORT_PROBE_S)
        return s.connect_ex((host, port)) == 0


def log_reason(log: Path, limit: int = 300) -> str:
    """The most telling line of a server log: the first error-looking line, else the last."""
    try:
        lines = [x.strip() for x in log.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no server log"
    if not lines:
        return "the server printed nothing"
    keys = ("error", "failed", "couldn't", "invalid", "unknown argument", "exiting")
    for line in lines:
        low = line.lower()
        if any(k in low for k in keys):
            return line[:limit]
    return lines[-1][:limit]


# ---------------------------------------------------------------------------------------
# Identity: one comparison for every engine


@dataclass(frozen=True)
class Shown:
    """What a server says it is, from its own answers."""

    # The model name it answers to (llama-server's model_alias, the engines' served name).
    name: str | None
    # Its slot count; None where it shows none.
    slots: int | None
    # The model file it loaded (llama-server's /props); None: not compared.
    model_path: str | None = None
    # Further names that count as the model's (an external server's model file stem).
    other_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Terms:
    """How one engine's mismatches read, in its own words ({got}: shown, {want}: expected)."""

    name: str
    slots: str
    # Whether a server that shows no slot count passes (vLLM shows it only in dev mode).
    slots_optional: bool = False


LLAMA_TERMS = Terms(
    name="model_alias is {got!r}, expected this job's nonce {want!r}",
    slots="total_slots is {got!r}, expected {want}",
)
ENGINE_TERMS = Terms(
    name="served model is {got!r}, expected this job's nonce {want!r}",
    slots="it runs {got} sequences at once, expected {want}",
    slots_optional=True,
)
EXTERNAL_TERMS = Terms(
    name="it serves {got}, not model.name={want!r}",
    slots="it has total_slots={got}, not slots={want}",
)
NOT_OURS = "the server on this port is not this job's: "


def identity_problems(
    shown: Shown, *, name: str, slots: int, terms: Terms, model_path: str | None = None
) -> list[str]:
    """What in a server's own answers contradicts this job (empty when it is the one)."""
    problems = []
    names = {shown.name, *shown.other_names}
    if name not in names:
        got: object = sorted(n for n in names if n) if shown.other_names else shown.name
        problems.append(terms.name.format(got=got, want=name))
    if shown.slots != slots and not (terms.slots_optional and shown.slots is None):
        problems.append(terms.slots.format(got=shown.slots, want=slots))
    if model_path and shown.model_path and Path(shown.model_path).name != Path(model_path).name:
        problems.append(f"model_path is {shown.model_path!r}, expected {model_path!r}")
    return problems


def control_get(base_url: str, path: str, headers: dict[str, str]) -> httpx.Response:
    """GET a control endpoint of a server (/props, /v1/models, /metrics, /server_info);
    httpx.HTTPError when it does not answer or answers with an error status."""
    r = httpx.get(base_url + path, headers=headers, timeout=timeouts.CONTROL_S)
    r.raise_for_status()
    return r


def llama_identify(srv: RunningServer) -> dict[str, object]:
    """llama-server's /props, or ServerError unless it proves this is the job's server."""
    try:
        props = control_get(srv.base_url, "/props", srv.headers()).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ServerError(f"/props could not be read: {exc}") from exc
    if not isinstance(props, dict):
        raise ServerError("/props did not return a JSON object")
    shown = Shown(props.get("model_alias"), props.get("total_slots"), props.get("model_path"))
    spec = srv.spec
    problems = identity_problems(
        shown, name=spec.alias, slots=spec.slots, terms=LLAMA_TERMS, model_path=_arg(spec.argv)
    )
    if problems:
        raise ServerError(NOT_OURS + "; ".join(problems))
    return props


def _arg(argv: tuple[str, ...], flag: str = "--model") -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None


def external_identity(spec: ServerSpec, *, model: str) -> dict[str, object]:
    """/props of a server someone else started, or UserError unless it serves `model` with
    the job's slot count."""
    url = spec.base_url
    try:
        r = httpx.get(f"{url}/props", headers=spec.headers(), timeout=timeouts.CONTROL_S)
    except httpx.HTTPError as exc:
        raise UserError(
            f"backend.url={url} does not answer ({exc}): start the server first."
        ) from exc
    if r.status_code != 200:
        raise UserError(
            f"backend.url={url} has no usable /props (HTTP {r.status_code}), so benchkit cannot "
            "prove which model and how many slots it serves; it measures nothing."
        )
    props = r.json()
    stem = Path(str(props.get("model_path") or "")).stem
    shown = Shown(str(props.get("model_alias") or ""), props.get("total_slots"), None, (stem,))
    problems = identity_problems(shown, name=model, slots=spec.slots, terms=EXTERNAL_TERMS)
    if problems:
        raise UserError(
            f"Refusing to measure {url}: " + "; ".join(problems) + ". Fix the server or the config."
        )
    return dict(props)


def n_vocab(srv: Server) -> int:
    """The vocabulary size the server reports in /v1/models (token-id workloads need it)."""
    try:
        data = control_get(srv.base_url, "/v1/models", srv.headers()).json()
        meta = data["data"][0].get("meta") or {}
    except (httpx.HTTPError, ValueError, LookupError, TypeError, AttributeError) as exc:
        raise ServerError(f"/v1/models could not be read for n_vocab: {exc}") from exc
    n = meta.get("n_vocab")
    if not isinstance(n, int) or n <= 0:
        raise ServerError("the server did not report n_vocab in /v1/models: set model.n_vocab")
    return n


# ---------------------------------------------------------------------------------------
# Servers


class Server(Protocol):
    """One pass's server, proven to be this job's: a context manager that stops what it
    started, whatever happens."""

    spec: ServerSpec
    props: dict[str, object]

    @property
    def base_url(self) -> str: ...

    @property
    def pid(self) -> int | None:
        """The server's process when this job started it (its CPU time is sampled)."""

    def start(self, timeout_s: float) -> None: ...

    def headers(self) -> dict[str, str]: ...

    def alive(self) -> bool: ...

    def end_problem(self) -> str | None:
        """After a pass: why its measurement does not stand (the server died, or is no
        longer the job's), else None."""

    def __enter__(self) -> Server: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass
class RunningServer(contextlib.AbstractContextManager["RunningServer"]):
    """A server process this job starts; use as a context manager so it is stopped."""

    spec: ServerSpec
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    props: dict[str, object] = field(default_factory=dict)
    _log: IO[bytes] | None = None
    # For messages: "llama-server", "vLLM", "SGLang".
    name: str = "llama-server"
    # The engine's proof that it is this job's server (raises ServerError, returns what to
    # record as its props); None: llama-server's /props check.
    identify: Callable[[RunningServer], dict[str, object]] | None = None
    # How the API key reaches the process (never recorded); None: llama-server's way.
    secret: ServerSecret | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return self.spec.base_url

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def headers(self) -> dict[str, str]:
        return self.spec.headers()

    def start(self, timeout_s: float) -> None:
        if port_in_use(self.spec.host, self.spec.port):
            raise ServerError(
                f"port {self.spec.port} on {self.spec.host} was taken before the server started"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        # A new session so that a stop reaches the server and anything it spawned (and a
        # Ctrl-C at the terminal reaches only benchkit, which stops it in order); a death
        # signal so that it never outlives this process, however that ends (kill -9).
        self.proc = subprocess.Popen(
            list(self.spec.argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self._env(),
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGKILL),
        )
        # For a later run in this folder, should this process die where no signal reaches.
        note_server(self.log_path.parent, self.proc.pid, self.spec.alias)
        self._wait_healthy(timeout_s)
        self.props = self.verify_identity()

    def _env(self) -> dict[str, str]:
        secret = self.secret or llama_secret(self.spec.api_key)
        env = {**os.environ, **self.spec.env}
        for k in secret.unset:
            env.pop(k, None)
        return {**env, **secret.env}

    def _wait_healthy(self, timeout_s: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        url = f"{self.base_url}/health"
        with httpx.Client(timeout=timeouts.PROBE_S) as client:
            while True:
                rc = self.proc.poll()
                if rc is not None:
                    raise ServerError(
                        f"{self.name} exited with code {rc} while starting: "
                        f"{log_reason(self.log_path)}"
                    )
                try:
                    r = client.get(url)
                    if r.status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise ServerError(
                        f"{self.name} was not healthy after {timeout_s:.0f} s "
                        f"(server.startup_timeout_s): {log_reason(self.log_path)}"
                    )
                time.sleep(timeouts.STARTUP_POLL_S)

    def verify_identity(self) -> dict[str, object]:
        """Raise ServerError unless the server proves it is the one this job started."""
        return (self.identify or llama_identify)(self)

    def end_problem(self) -> str | None:
        if not self.alive():
            return "the server was not running at the end of the job"
        try:
            self.verify_identity()
        except ServerError as exc:
            return str(exc)
        return None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = timeouts.STOP_GRACE_S) -> int | None:
        """SIGTERM, then SIGKILL after `grace_s`; reaps the process (no zombies)."""
        proc = self.proc
        rc: int | None = None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            rc = proc.returncode
            forget_server(self.log_path.parent)
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class ExternalServer(contextlib.AbstractContextManager["ExternalServer"]):
    """A server someone else started (`backend=external`): nothing to start or stop; it is
    proven to serve the declared model with the declared slots when a pass starts and ends."""

    spec: ServerSpec
    model: str
    props: dict[str, object] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return self.spec.base_url

    @property
    def pid(self) -> int | None:
        return None

    def headers(self) -> dict[str, str]:
        return self.spec.headers()

    def start(self, timeout_s: float) -> None:
        self.props = external_identity(self.spec, model=self.model)

    def alive(self) -> bool:
        return True

    def end_problem(self) -> str | None:
        try:
            external_identity(self.spec, model=self.model)
        except UserError as exc:
            return f"at the end of the job: {exc}"
        return None

    def __exit__(self, *exc: object) -> None:
        return None  # someone else's server: it goes on running

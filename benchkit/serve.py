"""Run one server for one job: start it, prove it is ours, and always stop it.

The client must only ever measure the server this job started. Proof: the port was free
when we chose it, the server answers with this job's alias nonce in `/props`, its slot count
matches, and its model path is the one we passed. Anything else refuses the job before a
single call is measured. Other engines (vLLM, SGLang) run the same way with their own
identity check (`identify`) and environment.
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
from types import TracebackType
from typing import IO, Any

import httpx

from benchkit.plan import ServerSpec


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
        s.settimeout(0.5)
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


@dataclass
class RunningServer:
    """A started server; use as a context manager so it is stopped whatever happens."""

    spec: ServerSpec
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    props: dict[str, Any] = field(default_factory=dict)
    _log: IO[bytes] | None = None
    # For messages: "llama-server", "vLLM", "SGLang".
    name: str = "llama-server"
    # Another engine's proof that it is this job's server (raises ServerError, returns what
    # to record); None: llama-server's /props check.
    identify: Callable[[RunningServer], dict[str, Any]] | None = None
    # Another engine's secret environment (never recorded) and variables to drop from the
    # inherited one; llama-server's key goes through LLAMA_API_KEY instead.
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)
    unset_env: tuple[str, ...] = ()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.spec.api_key}"} if self.spec.api_key else {}

    def start(self, timeout_s: float) -> None:
        if port_in_use(self.spec.host, self.spec.port):
            raise ServerError(
                f"port {self.spec.port} on {self.spec.host} was taken before the server started"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        # A new session so that a stop reaches the server and anything it spawned.
        self.proc = subprocess.Popen(
            list(self.spec.argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self._env(),
            start_new_session=True,
        )
        self._wait_healthy(timeout_s)
        self.props = self.verify_identity()

    def _env(self) -> dict[str, str]:
        env = {**os.environ, **self.spec.env}
        if self.identify is not None:
            for k in self.unset_env:
                env.pop(k, None)
            return {**env, **self.secret_env}
        if self.spec.api_key:
            env["LLAMA_API_KEY"] = self.spec.api_key
        else:
            # A key in the user's environment must not switch auth on behind our back.
            env.pop("LLAMA_API_KEY", None)
        return env

    def _wait_healthy(self, timeout_s: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        url = f"{self.spec.base_url}/health"
        with httpx.Client(timeout=5.0) as client:
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
                time.sleep(0.2)

    def fetch_props(self) -> dict[str, Any]:
        r = httpx.get(f"{self.spec.base_url}/props", headers=self.headers(), timeout=10.0)
        r.raise_for_status()
        data = r.json()
        if not isinstance(data, dict):
            raise ServerError("/props did not return a JSON object")
        return data

    def verify_identity(self) -> dict[str, Any]:
        """Raise ServerError unless /props proves this is the server this job started."""
        if self.identify is not None:
            return self.identify(self)
        try:
            props = self.fetch_props()
        except (httpx.HTTPError, ValueError) as exc:
            raise ServerError(f"/props could not be read: {exc}") from exc
        problems = check_identity(props, self.spec)
        if problems:
            raise ServerError("the server on this port is not this job's: " + "; ".join(problems))
        return props

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 10.0) -> int | None:
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
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def check_identity(
    props: dict[str, Any], spec: ServerSpec, model_path: str | None = None
) -> list[str]:
    """What in /props contradicts the spec (empty when the server is ours)."""
    problems = []
    alias = props.get("model_alias")
    if alias != spec.alias:
        problems.append(f"model_alias is {alias!r}, expected this job's nonce {spec.alias!r}")
    slots = props.get("total_slots")
    if slots != spec.slots:
        problems.append(f"total_slots is {slots!r}, expected {spec.slots}")
    want_path = model_path or _arg(spec.argv, "--model")
    got_path = props.get("model_path")
    if want_path and got_path and Path(str(got_path)).name != Path(want_path).name:
        problems.append(f"model_path is {got_path!r}, expected {want_path!r}")
    return problems


def _arg(argv: tuple[str, ...], flag: str) -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None

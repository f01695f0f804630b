"""Which device(s) a job runs on: the cluster scheduler's allocation, or a local lease.

Two ways a sweep spreads over several GPUs, both through Hydra's launchers:

- on a SLURM cluster (`hydra/launcher=submitit_slurm`) the scheduler gives each job its
  GPUs; `slurm_allocation` reads them from the job's environment and the server gets
  exactly those (`hardware.device` and the backend's device variable);
- on one host with N GPUs (`hydra/launcher=joblib`, `hardware.device_count=N`) jobs run in
  parallel and `DeviceLease` gives each one a device nobody else holds: one lock file per
  device under the sweep folder, held for the whole job, released when the job ends however
  it ends (the kernel drops a dead process's locks).

What was used goes into result.json as `provenance.allocation`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from benchkit.config.backends import DeviceSelector, backend, selector
from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError

# Where SLURM names a job's GPUs, most specific first: a step's, then the job's (gres/gpu sets
# both to the GPU indices of the node), then the runtime variables it also sets.
SLURM_GPU_VARS = (
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
)
# SLURM's placeholder for "this job has no GPU" in older versions.
_NO_DEVICES = {"", "NoDevFiles", "none", "None"}

LEASE_DIR = ".devices"
LEASE_LOG = "leases.jsonl"


@dataclass(frozen=True)
class Allocation:
    """The devices a job runs on and who gave them."""

    scheduler: str  # "slurm" or "local" (a lease among hardware.device_count devices)
    node: str
    devices: tuple[str, ...]  # as the scheduler numbers them (GPU indices of the node)
    # The device variable the server gets, with its value (empty for the CPU backend).
    env: dict[str, str] = field(default_factory=dict)
    job_id: str | None = None
    source: str | None = None  # the variable the devices were read from, or the lock file
    cpus: int | None = None
    # What only this scheduler knows (SLURM's partition, the local device count), recorded
    # after the common keys.
    extra: Mapping[str, str | int | None] = field(default_factory=dict)

    def record(self) -> dict[str, object]:
        """What result.json keeps as provenance.allocation."""
        out: dict[str, object] = {
            "scheduler": self.scheduler,
            "job_id": self.job_id,
            "node": self.node,
            "devices": list(self.devices),
            "source": self.source,
            "server_env": dict(self.env),
            "cpus": self.cpus,
        }
        out.update(self.extra)
        return out


def _split(value: str | None) -> tuple[str, ...]:
    if value is None or value.strip() in _NO_DEVICES:
        return ()
    return tuple(x.strip() for x in value.split(",") if x.strip())


def _parse_int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def slurm_allocation(environ: Mapping[str, str], sel: DeviceSelector | None) -> Allocation | None:
    """The GPUs SLURM gave this job, and what the backend's device variable must say for the
    server to use exactly those (`sel`, benchkit.config.backends; None: a CPU backend selects
    none); None outside a SLURM job."""
    slurm_id = environ.get("SLURM_JOB_ID")
    if not slurm_id:
        return None
    array, task = environ.get("SLURM_ARRAY_JOB_ID"), environ.get("SLURM_ARRAY_TASK_ID")
    job_id = f"{array}_{task}" if array and task else slurm_id
    source = next((v for v in SLURM_GPU_VARS if _split(environ.get(v))), None)
    devices = _split(environ.get(source)) if source else ()
    env: dict[str, str] = {}
    if sel is not None and devices:
        if _split(environ.get(sel.var)):
            # SLURM set the backend's own variable (CUDA_VISIBLE_DEVICES): pass it through as
            # it is; with cgroup device constraints it numbers the job's GPUs from 0.
            env[sel.var] = environ[sel.var]
        elif sel.filtered_by and _split(environ.get(sel.filtered_by)):
            env.update(sel.env(range(len(devices))))
        else:
            # Nothing filters for this runtime (Vulkan): name the node's GPU indices.
            env.update(sel.env(devices))
    return Allocation(
        scheduler="slurm",
        node=environ.get("SLURMD_NODENAME") or platform.node(),
        devices=devices,
        env=env,
        job_id=job_id,
        source=source,
        cpus=_parse_int(environ.get("SLURM_CPUS_PER_TASK")),
        extra={"slurm_job_id": slurm_id, "partition": environ.get("SLURM_JOB_PARTITION")},
    )


def apply(cfg: BenchConfig, alloc: Allocation) -> None:
    """Point the job's config at the allocation: the backend's device variable (so
    --list-devices and the server see the same devices) and hardware.device when that is one
    device; the CPU backend's threads at the CPUs SLURM gave when server.threads is unset.

    A backend without a device variable (cpu) keeps hardware.device as configured: there is
    nothing to select, and the config (hence the resume key) stays the same whichever
    device the job happened to be given.
    """
    sel = selector(cfg.backend)
    if sel is not None and sel.var in alloc.env:
        value = alloc.env[sel.var]
        cfg.backend.env[sel.var] = value
        cfg.hardware.device = sel.device(value)
    if alloc.cpus and cfg.server.threads is None and backend(cfg.backend.name).on_cpu:
        cfg.server.threads = alloc.cpus


def check_gpu_backend(cfg: BenchConfig, alloc: Allocation) -> None:
    """A GPU backend in a SLURM job that was given no GPU would run on whichever GPU the node
    numbers first, maybe another job's: refuse it with the fix."""
    if alloc.scheduler == "slurm" and selector(cfg.backend) is not None and not alloc.devices:
        raise UserError(
            f"SLURM job {alloc.job_id} was given no GPU for backend={cfg.backend.name.value}: "
            "ask for one per job with hydra.launcher.gpus_per_node=1 (or "
            "hydra.launcher.gres=gpu:1)."
        )


class DeviceLease:
    """One of `count` local devices, held by this process alone until released.

    A lock file per device, `<lease_dir>/<i>.lock`, taken with flock: the job prefers device
    `prefer % count` and otherwise takes the first free one, waiting while all are held.
    Every lease is appended to `<lease_dir>/leases.jsonl` when it ends (device, job, pid and
    wall-clock times), so overlaps can be checked afterwards.
    """

    def __init__(
        self, lease_dir: Path, count: int, *, prefer: int, label: str, poll_s: float = 0.2
    ) -> None:
        if count < 1:
            raise UserError(f"hardware.device_count={count} must be 1 or more.")
        self.dir = lease_dir
        self.count = count
        self.prefer = prefer % count
        self.label = label
        self.poll_s = poll_s
        self.device: int | None = None
        self.acquired: float | None = None
        self._fh: IO[str] | None = None

    def _order(self) -> list[int]:
        return [self.prefer] + [i for i in range(self.count) if i != self.prefer]

    def _try(self, i: int) -> IO[str] | None:
        fh = (self.dir / f"{i}.lock").open("a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            return None
        return fh

    def acquire(self) -> int:
        self.dir.mkdir(parents=True, exist_ok=True)
        said = False
        while True:
            for i in self._order():
                fh = self._try(i)
                if fh is None:
                    continue
                self._fh, self.device, self.acquired = fh, i, time.time()
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps({"job": self.label, "pid": os.getpid()}) + "\n")
                fh.flush()
                return i
            if not said:
                print(
                    f"[benchkit] job {self.label}: all {self.count} devices are leased, "
                    f"waiting for one (hardware.device_count={self.count}; run at most that "
                    "many jobs at once, e.g. hydra.launcher.n_jobs)",
                    file=sys.stderr,
                    flush=True,
                )
                said = True
            time.sleep(self.poll_s)

    def release(self) -> None:
        fh = self._fh
        if fh is None:
            return
        line = {
            "device": self.device,
            "job": self.label,
            "pid": os.getpid(),
            "acquired": self.acquired,
            "released": time.time(),
        }
        # One short O_APPEND write: lines from concurrent jobs never interleave.
        with (self.dir / LEASE_LOG).open("a") as log:
            log.write(json.dumps(line) + "\n")
        fh.seek(0)
        fh.truncate()
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()
        self._fh = None

    def allocation(self) -> Allocation:
        assert self.device is not None
        return Allocation(
            scheduler="local",
            node=platform.node(),
            devices=(str(self.device),),
            job_id=self.label,
            source=str(self.dir / f"{self.device}.lock"),
            extra={"device_count": self.count},
        )

    def __enter__(self) -> DeviceLease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def placement(
    cfg: BenchConfig,
    *,
    lease_root: Path,
    job_num: int,
    label: str,
    environ: Mapping[str, str] | None = None,
) -> Iterator[Allocation | None]:
    """The devices this job runs on, for as long as the block runs: SLURM's allocation inside
    a SLURM job, else a lease when hardware.device_count is set, else None (as configured).
    The config is pointed at them before the block starts."""
    env = os.environ if environ is None else environ
    sel = selector(cfg.backend)
    alloc = slurm_allocation(env, sel)
    if alloc is not None:
        apply(cfg, alloc)
        check_gpu_backend(cfg, alloc)
        yield alloc
        return
    count = cfg.hardware.device_count
    if count is None:
        yield None
        return
    with DeviceLease(lease_root / LEASE_DIR, count, prefer=job_num, label=label) as lease:
        alloc = lease.allocation()
        if sel is not None and lease.device is not None:
            alloc.env.update(sel.env([lease.device]))
        apply(cfg, alloc)
        yield alloc


@dataclass
class TimeLimitWatch:
    """Whether SLURM signalled that the job's time limit is near while the block ran."""

    signalled: bool = False
    reason: str = (
        "stopped by SLURM: the job's time limit (hydra.launcher.timeout_min) was "
        "near (hydra.launcher.signal_delay_s before it): raise hydra.launcher.timeout_min"
    )


@contextlib.contextmanager
def slurm_time_limit_watch() -> Iterator[TimeLimitWatch]:
    """Notes SLURM's warning signal before the time limit (USR1/USR2, whichever submitit
    handles) and passes it on to submitit, which stops the job by raising in it; the job is
    then written with the reason, its server stopped, and the launcher gets it back."""
    watch = TimeLimitWatch()
    previous: dict[int, Callable[[int, FrameType | None], Any]] = {}

    def noted(signum: int, frame: FrameType | None) -> Any:
        watch.signalled = True
        return previous[signum](signum, frame)

    for sig in (signal.SIGUSR1, signal.SIGUSR2):
        handler = signal.getsignal(sig)
        if callable(handler):
            previous[sig] = handler
            signal.signal(sig, noted)
    try:
        yield watch
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)

"""A single-node SLURM cluster on this machine for the session (scripts/slurm-local.sh),
and helpers to run benchkit sweeps through Hydra's launchers as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from benchkit.paths import repo_root
from benchkit.workload.synth import Dist, load_recipe, synth

SLURM_LOCAL = repo_root() / "scripts" / "slurm-local.sh"
SLURM_TOOLS = (
    "/usr/sbin/slurmctld",
    "/usr/sbin/slurmd",
    "/usr/sbin/slurmdbd",
    "/usr/sbin/munged",
    "/usr/sbin/mariadbd",
)


@dataclass(frozen=True)
class Cluster:
    dir: Path
    env: dict[str, str]  # this process's environment with SLURM_CONF pointing at the cluster

    def squeue(self, settle_s: float = 30.0) -> str:
        """The queue once it is empty, or as it is after `settle_s` (a job may still be
        completing a moment after its result came back)."""
        deadline = time.monotonic() + settle_s
        while True:
            out = subprocess.run(
                ["squeue", "-h"], env=self.env, capture_output=True, text=True, check=False
            ).stdout
            if not out.strip() or time.monotonic() > deadline:
                return out
            time.sleep(0.5)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """munged, MariaDB, slurmdbd, slurmctld and slurmd with two simulated GPUs (GRES), all
    under a tmp folder; stopped at the end of the session with every job and process they
    started."""
    missing = [t for t in SLURM_TOOLS if not Path(t).exists()] + [
        t for t in ("sbatch", "srun", "sinfo", "sacct", "mariadb") if shutil.which(t) is None
    ]
    if missing:
        pytest.fail(
            f"SLURM is not installed here ({', '.join(missing)} missing): `make test` "
            "installs Debian's SLURM, munge and MariaDB packages (scripts/apt-deps.sh test).",
            pytrace=False,
        )
    if os.geteuid() != 0:
        pytest.fail("The cluster tests start slurmd, which needs root.", pytrace=False)
    d = tmp_path_factory.mktemp("slurm")
    start = subprocess.run(
        [str(SLURM_LOCAL), "start", str(d)], capture_output=True, text=True, check=False
    )
    if start.returncode != 0:
        pytest.fail(
            f"scripts/slurm-local.sh start failed: {start.stderr.strip()[-2000:]}", pytrace=False
        )
    try:
        yield Cluster(dir=d, env={**os.environ, "SLURM_CONF": str(d / "etc" / "slurm.conf")})
    finally:
        subprocess.run([str(SLURM_LOCAL), "stop", str(d)], capture_output=True, check=False)


@pytest.fixture(scope="session")
def tiny_workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One unit of three short calls (about 900 prompt tokens): a job takes seconds."""
    mini = load_recipe(repo_root() / "fixtures" / "workloads" / "mini" / "recipe.json")
    tiny = replace(
        mini, name="cluster-tiny", description="mini's shape, a few seconds a job",
        units=1, calls_per_unit=(3, 3), system_len=Dist(100, 0.3, 50, 200),
        data_len=Dist(150, 0.3, 50, 300), prompt_mean=300, prompt_max=1200,
        completion_len=Dist(8, 0.5, 4, 16), cap=16, capped_share=0.0,
    )  # fmt: skip
    return synth(tiny, tmp_path_factory.mktemp("workload") / "fixture")


def run_benchkit(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def results_of(sweep: Path) -> dict[int, dict[str, Any]]:
    return {int(p.parent.name): json.loads(p.read_text()) for p in sweep.glob("*/result.json")}


def span(res: dict[str, Any]) -> tuple[float, float]:
    """When a job ran (result.json's second-resolution UTC times) as epoch seconds."""
    prov = res["provenance"]
    fmt = "%Y-%m-%dT%H:%M:%S%z"
    start = datetime.strptime(prov["started_utc"].replace("Z", "+0000"), fmt).timestamp()
    end = datetime.strptime(prov["finished_utc"].replace("Z", "+0000"), fmt).timestamp()
    return start, end + 1.0


def report_rows(sweep: Path) -> list[str]:
    md = (sweep / "report" / "report.md").read_text()
    table = md.split("## All results", 1)[1].split("\n## ", 1)[0]  # not the energy table's
    return [x for x in table.splitlines() if x.startswith("| ") and "| cpu |" in x]

"""What `make study` and `make test` install on the machine, and that no service comes of it.

`make study` installs only what building and running llama-server needs; Chromium, fonts,
SLURM, munge and MariaDB are the test suite's (`make test`). scripts/apt-deps.sh prints each
target's packages (--list) and the commands it would run (--dry-run), so the lists are tested
here without installing anything; what an install left running is checked on this machine.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchkit.paths import repo_root

ROOT = repo_root()
APT_DEPS = ROOT / "scripts" / "apt-deps.sh"
# Packages (by name pattern) that are the tests' and must never come with `make study`.
TEST_ONLY = re.compile(r"^(slurm.*|munge|libmunge.*|mariadb.*|mysql.*|chromium.*|fonts-.*)$")
# The daemons those packages carry (process names).
DAEMONS = ("slurmctld", "slurmd", "slurmdbd", "munged", "mariadbd")


def apt_deps(*args: str, assume_missing: bool = False) -> list[str]:
    env = {**os.environ, "APT_DEPS_ASSUME_MISSING": "1" if assume_missing else ""}
    proc = subprocess.run(
        [str(APT_DEPS), *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def make_dry_run(target: str) -> str:
    """The commands `make TARGET` would run from a fresh checkout (no .venv yet)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Under `make test` (CI) the parent make's variables would make this a sub-make, which
    # prints "make[1]: Entering/Leaving directory" around the commands: run it as a user would.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    proc = subprocess.run(
        ["make", "-n", "-B", target, "VENV=/nonexistent/venv"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_build_list_is_only_what_building_llama_server_needs() -> None:
    assert apt_deps("--list", "build") == ["cmake", "g++", "make"]


def test_the_test_list_adds_the_suites_tools() -> None:
    build, test = apt_deps("--list", "build"), apt_deps("--list", "test")
    assert test[: len(build)] == build
    extra = set(test) - set(build)
    assert {"chromium", "fonts-noto-cjk", "slurmctld", "slurmd", "slurmdbd", "munge"} <= extra
    assert {"mariadb-server-core", "mariadb-client-core", "slurm-client"} <= extra
    assert all(TEST_ONLY.match(p) for p in extra), extra


def test_make_study_installs_no_test_package() -> None:
    steps = make_dry_run("study")
    assert "apt-deps.sh build" in steps
    assert "apt-deps.sh test" not in steps
    assert "vulkan-deps" not in steps  # Vulkan is the tests' build, not the study's
    assert "[dev]" not in steps  # nor are pytest, ruff and mypy
    assert "benchkit.provide cpu" in steps and "benchkit.provide vulkan" not in steps
    # The study, last: the default sweep (Makefile STUDY).
    assert steps.rstrip().splitlines()[-1].endswith("-m benchkit -m slots=1,2,4 workload=first")


def test_make_test_installs_the_test_packages_then_runs_everything() -> None:
    steps = make_dry_run("test")
    assert "apt-deps.sh build" in steps and "apt-deps.sh test" in steps
    assert "vulkan-deps.sh" in steps and "benchkit.provide vulkan" in steps
    assert "[dev]" in steps
    last = steps.rstrip().splitlines()[-1]
    assert "pytest" in last and '"slow or cluster or not slow"' in last


def test_an_install_enables_and_starts_nothing() -> None:
    """The install command: no recommendations, with starts refused and units not enabled."""
    for target in ("build", "test"):
        # As on a fresh machine: every package missing.
        lines = apt_deps("--dry-run", target, assume_missing=True)
        text = "\n".join(lines)
        install = next(x for x in lines if "apt-get install" in x)
        assert "--no-install-recommends" in install
        assert "policy-rc.d (exit 101)" in text and "(disable *)" in text
        named = install.split("--no-install-recommends", 1)[1].split()
        assert named == apt_deps("--list", target)
        if target == "build":
            assert not [p for p in named if TEST_ONLY.match(p)]


def test_missing_is_a_subset_of_the_list() -> None:
    for target in ("build", "test"):
        assert set(apt_deps("--missing", target)) <= set(apt_deps("--list", target))


def _private(pid: str) -> bool:
    """A daemon of the tests' own cluster (scripts/slurm-local.sh): it is told its private
    folder on its command line or through SLURM_CONF; a system service is not."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return True  # gone meanwhile
    private_args = (b"--socket=", b"--datadir=", b"--no-defaults")
    return any(a.startswith(private_args) for a in cmd) or any(
        e.startswith(b"SLURM_CONF=") for e in env
    )


def test_no_system_daemon_of_the_test_packages_runs() -> None:
    """After `make test`'s install: no slurmctld, slurmd, slurmdbd, munged or mariadbd runs as
    a service (the cluster tests' own, under their tmp folder, are not services)."""
    if shutil.which("pgrep") is None:
        pytest.skip("pgrep is not installed")
    services = []
    for name in DAEMONS:
        proc = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True, check=False)
        services += [f"{name} ({pid})" for pid in proc.stdout.split() if not _private(pid)]
    assert not services, f"running as system services: {', '.join(services)}"


def test_the_guards_are_gone_after_an_install() -> None:
    # apt-deps.sh removes its preset and restores policy-rc.d however it ends.
    assert not Path("/etc/systemd/system-preset/00-benchkit-apt-deps.preset").exists()
    leftovers = list(Path("/usr/sbin").glob("policy-rc.d.benchkit.*"))
    assert not leftovers, leftovers


@pytest.mark.skipif(os.geteuid() != 0, reason="reads the system's apt state as root")
def test_the_dry_run_installs_nothing(tmp_path: Path) -> None:
    before = subprocess.run(["dpkg-query", "-W"], capture_output=True, text=True, check=False)
    apt_deps("--dry-run", "test", assume_missing=True)
    after = subprocess.run(["dpkg-query", "-W"], capture_output=True, text=True, check=False)
    assert before.stdout == after.stdout

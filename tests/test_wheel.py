"""benchkit as a user installs it: the wheel, built from the sdist as a release would be,
installed into a fresh virtual environment outside the checkout and run from a folder of its
own, where it writes `outputs/`.

Offline by design: the fresh environment's own site-packages holds only the wheel (installed
with `--no-deps --no-index`), and one `.pth` line puts this test environment's site-packages
after it, so benchkit's dependencies, already installed and tested here, are reused rather than
downloaded again (no network, seconds instead of minutes, nothing that a PyPI hiccup breaks).
What the wheel declares is still checked: every `Requires-Dist` must be satisfied by the
versions it runs against. benchkit itself comes only from the wheel (the checkout's editable
install is a `.pth` hook of this environment, which a plain path line does not run; the test
asserts where `benchkit` was imported from). llama-server is the cached build in
~/.cache/benchkit, found by the wheel's benchkit exactly as by the checkout's.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from benchkit.paths import DATA_DIRS, checkout_root
from benchkit.server.source import extract_tar

ROOT = checkout_root()
pytestmark = pytest.mark.skipif(ROOT is None, reason="builds the wheel from a checkout")

USER_STUDY = """\
defaults: [base_study]
name: tickets
title: "Ticket triage: does a second slot pay?"
question: "How many seconds per ticket with one slot?"
lang: en
unit_name: ticket
projection_units: 40
"""
USER_MODEL = """\
# The user's own entry: tiny-moe's recipe under their own name.
defaults: [base_model]
name: my-tiny
architecture: qwen3moe
quant: F32
synthetic: {arch: qwen3moe, n_layers: 2, d_model: 128, n_heads: 4, n_kv_heads: 2, head_dim: 32,
  n_experts: 8, n_experts_used: 2, expert_ff: 64, n_vocab: 320, ctx_train: 65536, dtype: f32,
  seed: 0}
n_vocab: 320
"""
USER_WORKLOAD = """\
defaults: [base_workload]
fixture: my-fixture   # a folder beside the command, relative to where it runs
output_policy: fixture
"""


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path
    user: Path  # the folder the user runs benchkit from, outside the checkout

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        exe = argv[0] if argv[0].startswith("/") else str(self.venv / "bin" / argv[0])
        return subprocess.run(
            [exe, *argv[1:]], capture_output=True, text=True, cwd=self.user, env=env,
            timeout=timeout, check=False,
        )  # fmt: skip


def _build_meta(hook: str, out: Path, cwd: Path) -> Path:
    """Call setuptools' PEP 517 hook with this environment's setuptools (offline)."""
    code = f"import sys, setuptools.build_meta as b; print(b.{hook}(sys.argv[1]))"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        capture_output=True, text=True, cwd=cwd, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    assert ROOT is not None
    tmp = tmp_path_factory.mktemp("wheel")
    # sdist first, then the wheel from the unpacked sdist (as `python -m build` does), so a
    # file the sdist forgets is a failure here too.
    sdist = _build_meta("build_sdist", tmp / "sdist", ROOT)
    extract_tar(sdist, tmp / "unpacked")  # our own sdist, just built
    (src,) = (tmp / "unpacked").iterdir()
    wheel = _build_meta("build_wheel", tmp / "dist", src)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--no-deps", "--no-index", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    # The dependencies: this environment's, after the venv's own site-packages.
    (site,) = (venv / "lib").glob("python3*/site-packages")
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz-benchkit-test-deps.pth").write_text("".join(f"{p}\n" for p in sorted(here)))
    user = tmp / "user"
    user.mkdir()
    yield Installed(venv, wheel, user)


def test_the_wheel_carries_configs_templates_and_workloads(installed: Installed) -> None:
    assert ROOT is not None
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for d in DATA_DIRS:
        here = {
            f"benchkit/_data/{p.relative_to(ROOT).as_posix()}"
            for p in (ROOT / d).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert here and here <= names, sorted(here - names)[:5]


def test_the_wheels_dependencies_are_satisfied(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(z.read(meta_name))
    unmet = []
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # an extra (dev)
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            unmet.append(f"{req} (not installed)")
            continue
        if not req.specifier.contains(have, prereleases=True):
            unmet.append(f"{req} (have {have})")
    assert not unmet


def test_benchkit_runs_from_the_wheel_anywhere(installed: Installed) -> None:
    where = installed.run(
        "python", "-c",
        "import benchkit, benchkit.paths as p; "
        "print(benchkit.__file__, p.installed_from_wheel(), p.checkout_root(), p.conf_dir())",
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    module, wheel, checkout, conf = where.stdout.split()
    assert Path(module).is_relative_to(installed.venv)  # not the checkout's editable install
    assert (wheel, checkout) == ("True", "None")
    assert Path(conf).is_relative_to(installed.venv) and (Path(conf) / "config.yaml").is_file()
    job = installed.run("benchkit", "--cfg", "job")
    assert job.returncode == 0, job.stderr[-3000:]
    assert "slots: 4" in job.stdout and "fixture: mini" in job.stdout
    assert not (installed.user / "outputs").exists()  # --cfg only composes


def _user_conf(user: Path) -> Path:
    conf = user / "my-conf"
    for group, text in (("study", USER_STUDY), ("model", USER_MODEL), ("workload", USER_WORKLOAD)):
        (conf / group).mkdir(parents=True, exist_ok=True)
        name = {"study": "tickets", "model": "my-tiny", "workload": "tickets"}[group]
        (conf / group / f"{name}.yaml").write_text(text)
    return conf


def test_a_users_config_folder_adds_entries_beside_ours(installed: Installed) -> None:
    conf = _user_conf(installed.user)
    picks = ("study=tickets", "model=my-tiny", "workload=tickets")
    for how in (("--config-dir", str(conf)), (f"hydra.searchpath=[file://{conf}]",)):
        job = installed.run("benchkit", *how, *picks, "--cfg", "job")
        assert job.returncode == 0, job.stderr[-3000:]
        assert "Ticket triage" in job.stdout and "name: my-tiny" in job.stdout
        assert "fixture: my-fixture" in job.stdout
    # Ours stay choosable beside the user's.
    both = installed.run("benchkit", "--config-dir", str(conf), "study=seed-r9700", "--cfg", "job")
    assert both.returncode == 0, both.stderr[-3000:]


@pytest.mark.slow
def test_a_sweep_and_its_report_from_the_installed_wheel(installed: Installed) -> None:
    sweep = installed.run("benchkit", "-m", "slots=1,2", "workload.units=1", timeout=1800)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    (folder,) = (installed.user / "outputs" / "sweeps").iterdir()  # under the user's folder
    results = [json.loads(p.read_text()) for p in sorted(folder.glob("*/result.json"))]
    assert [r["status"] for r in results] == ["complete", "complete"], results[0]["reason"]
    assert [r["factors"]["slots"] for r in results] == [1, 2]
    for r in results:
        assert r["metrics"]["units_completed"] == 1
        bk = r["provenance"]["benchkit"]
        assert bk["installed"] == "wheel" and bk["git"] == {"describe": None, "commit": None}
    assert (folder / "report" / "report.html").is_file()
    shutil.rmtree(folder / "report")
    rel = str(folder.relative_to(installed.user))  # as the user types it, from their folder
    again = installed.run("python", "-m", "benchkit.report", rel)
    assert again.returncode == 0, again.stderr[-3000:]
    md = (folder / "report" / "report.md").read_text()
    table = md.split("## All results", 1)[1].split("\n## ", 1)[0]  # not the energy table's
    assert len([x for x in table.splitlines() if x.startswith("| ") and "| cpu |" in x]) == 2


@pytest.mark.slow
def test_a_users_own_study_renders_its_report(installed: Installed) -> None:
    conf = _user_conf(installed.user)
    # The user's own fixture: the bundled mini, copied beside the command.
    mini = next(installed.venv.glob("lib/python3*/site-packages/benchkit/_data/fixtures"))
    shutil.copytree(mini / "workloads" / "mini", installed.user / "my-fixture")
    run = installed.run(
        "benchkit", "--config-dir", str(conf), "study=tickets", "model=my-tiny",
        "workload=tickets", "workload.units=1", "slots=1", "hydra.run.dir=outputs/tickets",
        timeout=1800,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = installed.user / "outputs" / "tickets"
    assert run.stdout.strip().splitlines()[-1] == str(out / "report" / "report.html")
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "complete", result["reason"]
    md = (out / "report" / "report.md").read_text()
    assert "Ticket triage: does a second slot pay?" in md
    assert "my-tiny" in md

"""The planned space and the factors a job records (benchkit.config.space, job.record.factors_of):
the seed sweep, planned and composed as `python -m benchkit -m` would, records exactly the
factors its results hold; a newly swept key is recorded without a list naming it; and the
report plans a key under the name the job records it by."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import open_dict

from benchkit.app import to_typed
from benchkit.config import space
from benchkit.config.schema import BenchConfig
from benchkit.job.record import Factor, JobContext, factors_of
from benchkit.paths import repo_root
from benchkit.report.analysis.sweep import planned_space

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"
STUDIES = sorted((repo_root() / "docs" / "studies").glob("*/results"))
# The seed sweep's command (conf/study/seed-r9700.yaml) but for what it sweeps, which its
# multirun.yaml gives.
SEED_FIXED = (
    "study=seed-r9700",
    "hardware=r9700",
    "model=qwen3.6-35b-a3b",
    "server=seed",
    "workload=seed-12",
)
# Every seed job's factors but for its point; a key added or lost here changes result.json.
SEED_FACTORS: dict[str, Factor] = {
    "model": "Qwen3.6-35B-A3B",
    "hardware": "r9700",
    "sampling": "qwen-recommended",
    "workload": "seed-12",
    "batch": 4096,
    "ubatch": 2048,
    "flash_attn": "on",
    "cache_type_k": "q8_0",
    "cache_type_v": "q8_0",
    "kv_unified": False,
    "repeats": 1,
    "spec": "none",
    "server": "seed",
    "study": "seed-r9700",
}


class Planner:
    """Composes one job of a sweep as the entry point does: its config and group choices."""

    def job(self, *overrides: str, planned: tuple[str, ...] = ()) -> tuple[BenchConfig, JobContext]:
        cfg = compose(config_name="config", overrides=list(overrides), return_hydra_config=True)
        choices = {str(k): str(v) for k, v in cfg.hydra.runtime.choices.items()}
        with open_dict(cfg):
            del cfg["hydra"]
        ctx = JobContext(job_dir=Path("/nonexistent"), choices=choices, planned=planned)
        return to_typed(cfg), ctx

    def factors(self, *overrides: str, planned: tuple[str, ...] = ()) -> dict[str, Factor]:
        return factors_of(*self.job(*overrides, planned=planned))


@pytest.fixture
def planner() -> Iterator[Planner]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):
        yield Planner()
    GlobalHydra.instance().clear()


def test_the_seed_sweep_records_the_factors_its_results_hold(planner: Planner) -> None:
    swept = space.swept(yaml.safe_load((SEED / "multirun.yaml").read_text()))
    points = {k: v for k, v in swept.items() if len(v) > 1}
    assert points == {
        "backend": ["vulkan", "hip"],
        "slots": [1, 2, 3, 4, 6, 8],
        "mtp": [False, True],
    }
    held = {}
    for p in sorted(SEED.glob("*/result.json")):
        f = json.loads(p.read_text())["factors"]
        held[(f["backend"], f["slots"], f["mtp"])] = f
    for backend, slots, mtp in itertools.product(*points.values()):
        point = [f"backend={backend}", f"slots={slots}", f"mtp={str(mtp).lower()}"]
        got = planner.factors(*SEED_FIXED, *point, planned=space.sweep_keys(SEED))
        assert got == {"backend": backend, "slots": slots, "mtp": mtp, **SEED_FACTORS}
        assert got == held[(backend, slots, mtp)]
    assert len(held) == 24


def test_a_swept_key_is_recorded_without_a_list_naming_it(planner: Planner) -> None:
    got = planner.factors("server.threads=4", planned=("server.threads", "slots"))
    assert got["threads"] == 4
    # After the standing factors, before the group choices.
    names = list(got)
    assert names[: len(space.STANDING)] == [n for n, _ in space.STANDING]
    assert names.index("threads") == len(space.STANDING)
    # Unswept, it stays out: the factors of every study so far.
    assert "threads" not in planner.factors("server.threads=4")


def test_a_key_the_study_declares_is_recorded_too(planner: Planner) -> None:
    got = planner.factors("server.ctx=8192", "+study.factors={server.ctx: [4096, 8192]}")
    assert got["ctx"] == 8192


def test_a_standing_factor_swept_by_its_key_is_recorded_once(planner: Planner) -> None:
    got = planner.factors("spec=ngram", planned=("spec.type", "workload.fixture", "model"))
    assert got["spec"] == "ngram" and "type" not in got and "fixture" not in got
    # The report plans it under the same name, so its points are found.
    planned = planned_space({}, {"spec.type": ["none", "ngram"], "server.threads": [4, 8]})
    assert set(planned) == {"spec", "threads"}


def test_the_load_axis_keeps_its_place_when_its_rate_is_swept(planner: Planner) -> None:
    got = planner.factors("load=poisson", "load.rate=2", planned=("load.rate",))
    names = list(got)
    assert names[len(space.STANDING) :][:2] == ["load", "rate"] and got["rate"] == 2.0


def test_no_published_study_plans_a_key_its_results_lack() -> None:
    # Each study's sweep and declared factors name only standing factors and group choices:
    # its new jobs record the keys its result.json files hold, no more.
    for results in [SEED, *STUDIES]:
        saved = yaml.safe_load((results / "multirun.yaml").read_text())
        keys = [*space.sweep_keys(results), *((saved.get("study") or {}).get("factors") or {})]
        assert keys and {space.factor_name(k) for k in keys} <= {n for n, _ in space.STANDING}
        for p in results.glob("*/result.json"):
            assert set(json.loads(p.read_text())["factors"]) >= {n for n, _ in space.STANDING}


def test_sweep_keys_read_the_command_and_the_sweepers_params(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    saved = {
        "hydra": {
            "overrides": {"task": ["slots=1,2", "study=x", "hydra.sweep.dir=/s"]},
            "sweeper": {"params": {"server.threads": "4,8"}},
        }
    }
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(saved))
    assert space.sweep_keys(tmp_path) == ("server.threads", "slots")
    (tmp_path / "multirun.yaml").write_text("hydra: [unclosed")
    with caplog.at_level(logging.WARNING):
        assert space.sweep_keys(tmp_path) == ()
    assert "only the standing factors are recorded" in caplog.text
    assert space.sweep_keys(tmp_path / "none") == ()

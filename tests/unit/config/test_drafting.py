"""Drafting as a factor (benchkit.config.drafting), composed as `python -m benchkit -m` composes
each job: one override names the draft model of every spec option; a job records the drafting
settings it uses, and every swept one; spec=none jobs that differ only in a drafter's setting share
one resume key, so a sweep measures them once; the report plans each swept drafting key under the
name the jobs record it by, and finds every point. No server runs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import open_dict

from benchkit.app import to_typed
from benchkit.config import drafting, space
from benchkit.config.schema import BenchConfig
from benchkit.job.record import Factor, JobContext, factors_of
from benchkit.job.run import resume_key
from benchkit.paths import repo_root
from benchkit.report.analysis.sweep import norm, planned_space

# The README's sweep: spec on/off at two draft lengths and two slot counts.
SWEEP = ("spec=none,draft", "spec.draft_max=2,4", "slots=1,2")


class Planner:
    """One job of a sweep composed as the entry point composes it: config, group choices and
    the sweep's planned keys."""

    def job(self, *overrides: str, planned: tuple[str, ...] = ()) -> tuple[BenchConfig, JobContext]:
        cfg = compose(config_name="config", overrides=list(overrides), return_hydra_config=True)
        choices = {str(k): str(v) for k, v in cfg.hydra.runtime.choices.items()}
        with open_dict(cfg):
            del cfg["hydra"]
        ctx = JobContext(job_dir=Path("/nonexistent"), choices=choices, planned=planned)
        return to_typed(cfg), ctx

    def factors(self, *overrides: str, planned: tuple[str, ...] = ()) -> dict[str, Factor]:
        return factors_of(*self.job(*overrides, planned=planned))

    def key(self, *overrides: str) -> str:
        return resume_key(self.job(*overrides)[0], "fp", "build")


@pytest.fixture
def planner() -> Iterator[Planner]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):
        yield Planner()
    GlobalHydra.instance().clear()


@pytest.mark.parametrize("spec", ["none", "draft", "ngram"])
def test_one_override_names_the_draft_model_of_every_spec_option(
    planner: Planner, spec: str
) -> None:
    # It failed for spec=none ("Could not override 'model@spec.draft_model'") when only
    # spec/draft.yaml composed the draft model.
    cfg, ctx = planner.job(f"spec={spec}", f"{drafting.DRAFT_CHOICE}=tiny-moe-f16")
    assert cfg.spec.draft_model is not None and cfg.spec.draft_model.name == "tiny-moe-f16"
    assert ctx.choices[drafting.DRAFT_CHOICE] == "tiny-moe-f16"


def test_a_job_records_the_drafting_settings_it_uses(planner: Planner) -> None:
    none, draft, ngram = (planner.factors(f"spec={s}") for s in ("none", "draft", "ngram"))
    # Unswept, spec=none records what it did before every spec option composed a draft.
    assert drafting.DRAFT_MODEL not in none and drafting.DRAFT_MAX not in none
    assert drafting.DRAFT_CHOICE not in none
    assert (draft["spec"], draft["draft_model"], draft["draft_max"]) == ("draft", "tiny-moe", 3)
    assert drafting.DRAFT_CHOICE not in draft
    # n-gram's draft length (64) is recorded only where swept: unswept beside spec=draft's 3,
    # it would read as a difference no swept factor explains.
    assert ngram["spec"] == "ngram" and drafting.DRAFT_MAX not in ngram
    named = planner.factors("spec=draft", "model@spec.draft_model=qwen2.5-coder-0.5b")
    assert named["draft_model"] == "qwen2.5-coder-0.5b"


def test_every_job_of_a_sweep_records_the_swept_drafting_keys(planner: Planner) -> None:
    planned = ("spec", "spec.draft_max", drafting.DRAFT_CHOICE)
    for spec in ("none", "draft"):
        got = planner.factors(
            f"spec={spec}", "spec.draft_max=4", "model@spec.draft_model=tiny-moe-f16",
            planned=planned,
        )  # fmt: skip
        assert (got["spec"], got["draft_max"], got["draft_model"]) == (spec, 4, "tiny-moe-f16")


def test_spec_none_at_other_drafter_settings_is_one_measurement(planner: Planner) -> None:
    base = planner.key("spec=none")
    assert planner.key("spec=none", "spec.draft_max=4") == base
    assert planner.key("spec=none", "model@spec.draft_model=qwen2.5-coder-0.5b") == base
    assert planner.key("spec=none", "spec.ngram_mode=map_k") == base
    # A drafter's own settings are its measurement.
    assert planner.key("spec=draft", "spec.draft_max=2") != planner.key(
        "spec=draft", "spec.draft_max=4"
    )
    assert planner.key("spec=draft") != planner.key(
        "spec=draft", "model@spec.draft_model=tiny-moe-f16"
    )
    assert planner.key("spec=ngram", "spec.draft_max=2") != planner.key(
        "spec=ngram", "spec.draft_max=4"
    )
    # ...but not another drafter's: n-grams use no draft model, a draft model no n-gram mode.
    assert planner.key("spec=ngram") == planner.key(
        "spec=ngram", "model@spec.draft_model=tiny-moe-f16"
    )
    assert planner.key("spec=draft") == planner.key("spec=draft", "spec.ngram_mode=map_k")


def test_the_readme_sweep_plans_every_point_and_measures_spec_none_once(
    planner: Planner,
) -> None:
    swept = space.parse_sweep_overrides(SWEEP)
    planned = planned_space({}, swept)
    assert planned == {"spec": ["none", "draft"], "draft_max": [2, 4], "slots": [1, 2]}
    keys: dict[str, list[dict[str, Factor]]] = {}
    for spec, n, slots in itertools.product(["none", "draft"], [2, 4], [1, 2]):
        over = (f"spec={spec}", f"spec.draft_max={n}", f"slots={slots}")
        got = planner.factors(*over, planned=tuple(swept))
        # Every planned point is found among the jobs' factors, so none reads as not run.
        assert all(norm(got[k]) == norm(v) for k, v in zip(planned, (spec, n, slots), strict=True))
        keys.setdefault(planner.key(*over), []).append(got)
    # 8 jobs launched, 6 measurements: spec=none once per slot count, the other draft length's
    # job reusing it (benchkit.results.reuse finds the same key in the sweep's folders).
    assert len(keys) == 6
    shared = [jobs for jobs in keys.values() if len(jobs) > 1]
    assert len(shared) == 2
    assert all({j["spec"] for j in jobs} == {"none"} for jobs in shared)


def test_a_swept_draft_model_is_planned_under_the_name_jobs_record(planner: Planner) -> None:
    swept = space.parse_sweep_overrides(
        ["spec=none,draft", "model@spec.draft_model=tiny-moe,tiny-moe-f16"]
    )
    assert planned_space({}, swept) == {
        "spec": ["none", "draft"],
        "draft_model": ["tiny-moe", "tiny-moe-f16"],
    }
    got = planner.factors("spec=none", "model@spec.draft_model=tiny-moe-f16", planned=tuple(swept))
    assert got["draft_model"] == "tiny-moe-f16"

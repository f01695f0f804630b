"""The report's analysis entry point: `analyse` runs every verdict over a sweep, in report
order, and `detect_caveats` runs the caveat table (`caveats`).

The work lives in `sweep` (the table of cells every verdict reads), the `verdicts` modules
(one per verdict kind), `claims` and `caveats`; this module re-exports the names other
modules and tests import from `benchkit.report.verdicts.analyse`. Nothing here reads files or
formats text for people; `render` and `i18n` do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from benchkit.report.analysis import caveats
from benchkit.report.analysis.claims import ClaimCheck as ClaimCheck
from benchkit.report.analysis.claims import check_claims as check_claims
from benchkit.report.analysis.job_builds import JobBuild as JobBuild
from benchkit.report.analysis.job_builds import build_identity as build_identity
from benchkit.report.analysis.job_builds import build_summary as build_summary
from benchkit.report.analysis.job_builds import build_traits as build_traits
from benchkit.report.analysis.job_builds import identity_problem as identity_problem
from benchkit.report.analysis.job_builds import job_build as job_build
from benchkit.report.analysis.sweep import BASIS_FACTORS as BASIS_FACTORS
from benchkit.report.analysis.sweep import COMPLETE as COMPLETE
from benchkit.report.analysis.sweep import DECODE as DECODE
from benchkit.report.analysis.sweep import METRICS as METRICS
from benchkit.report.analysis.sweep import NOT_RUN as NOT_RUN
from benchkit.report.analysis.sweep import PREFILL as PREFILL
from benchkit.report.analysis.sweep import PROVISIONAL as PROVISIONAL
from benchkit.report.analysis.sweep import SLOT_LATENCY as SLOT_LATENCY
from benchkit.report.analysis.sweep import THROUGHPUT as THROUGHPUT
from benchkit.report.analysis.sweep import Cell as Cell
from benchkit.report.analysis.sweep import Missing as Missing
from benchkit.report.analysis.sweep import Stats as Stats
from benchkit.report.analysis.sweep import Sweep as Sweep
from benchkit.report.analysis.sweep import build_sweep as build_sweep
from benchkit.report.analysis.sweep import compare as compare
from benchkit.report.analysis.sweep import describe as describe
from benchkit.report.analysis.sweep import label as label
from benchkit.report.analysis.sweep import norm as norm
from benchkit.report.analysis.sweep import parse_sweep_overrides as parse_sweep_overrides
from benchkit.report.analysis.sweep import planned_space as planned_space
from benchkit.report.analysis.sweep import records as records
from benchkit.report.analysis.sweep import t95 as t95
from benchkit.report.analysis.sweep import usable as usable
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.common import Verdict as Verdict
from benchkit.report.verdicts.exercise import exercised as exercised
from benchkit.report.verdicts.kind import Found
from benchkit.report.verdicts.kinds.backend.verdict import backend_verdict as backend_verdict
from benchkit.report.verdicts.kinds.builds.verdict import compare_builds as compare_builds
from benchkit.report.verdicts.kinds.capacity.verdict import capacity_verdict as capacity_verdict
from benchkit.report.verdicts.kinds.drafting.verdict import drafting_verdict as drafting_verdict
from benchkit.report.verdicts.kinds.drafting.verdict import mtp_effect_at as mtp_effect_at
from benchkit.report.verdicts.kinds.drafting.verdict import mtp_verdict as mtp_verdict
from benchkit.report.verdicts.kinds.drafting.verdict import spec_verdicts as spec_verdicts
from benchkit.report.verdicts.kinds.factor.verdict import factor_verdicts as factor_verdicts
from benchkit.report.verdicts.kinds.projection.verdict import (
    projection_verdict as projection_verdict,
)
from benchkit.report.verdicts.kinds.repeats.verdict import repeats_verdict as repeats_verdict
from benchkit.report.verdicts.kinds.slots.verdict import knee as knee
from benchkit.report.verdicts.kinds.slots.verdict import slots_verdict as slots_verdict
from benchkit.report.verdicts.kinds.validity.verdict import validity_verdict as validity_verdict


def analyse(sw: Sweep, projection_units: int) -> list[Verdict]:
    """Every verdict the sweep supports, in report order (the kinds of `verdicts.registry`):
    a factor the run could not have exercised (exercise.py) keeps its numbers but has no
    verdict; open-loop load has no closed-loop verdicts (knee, MTP, projection), its per-unit
    seconds following the arrival schedule, not the setting."""
    return registry.verdicts_of(Found(sw, projection_units))


def detect_caveats(
    df: pd.DataFrame,
    by_job: Mapping[str, Mapping[str, Any]],
    sw: Sweep,
    *,
    spread_cv: float = 0.10,
    swing: float = 4.0,
) -> list[caveats.Caveat]:
    """Measurement problems the data show: capped calls and their time share, high spread
    between repeats, per-call rate swings, sampling left to the server's defaults, identity
    problems, failed calls inside complete jobs, results spanning models or hardware,
    backends run from different builds, synthetic models and derived reference data.
    `by_job` maps job -> its result.json data. Each caveat is {"kind": ..., **numbers}."""
    rows = records(df)
    done = [r for r in rows if usable(r)]
    return caveats.detect(caveats.Data(df, rows, done, by_job, sw, spread_cv, swing))

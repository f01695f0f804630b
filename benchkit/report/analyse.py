"""The report's analysis entry point: `analyse` runs every verdict over a sweep, in report
order, and `detect_caveats` runs the caveat table (`caveats`).

The work lives in `sweep` (the table of cells every verdict reads), the `verdicts` modules
(one per verdict kind), `claims` and `caveats`; this module re-exports the names other
modules and tests import from `benchkit.report.analyse`. Nothing here reads files or
formats text for people; `render` and `i18n` do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from benchkit.report.claims import ClaimCheck as ClaimCheck
from benchkit.report.claims import check_claims as check_claims
from benchkit.report.numbers import Point
from benchkit.report.sweep import BASIS_FACTORS as BASIS_FACTORS
from benchkit.report.sweep import COMPLETE as COMPLETE
from benchkit.report.sweep import DECODE as DECODE
from benchkit.report.sweep import METRICS as METRICS
from benchkit.report.sweep import NOT_RUN as NOT_RUN
from benchkit.report.sweep import PREFILL as PREFILL
from benchkit.report.sweep import PROVISIONAL as PROVISIONAL
from benchkit.report.sweep import SLOT_LATENCY as SLOT_LATENCY
from benchkit.report.sweep import THROUGHPUT as THROUGHPUT
from benchkit.report.sweep import Cell as Cell
from benchkit.report.sweep import Missing as Missing
from benchkit.report.sweep import Stats as Stats
from benchkit.report.sweep import Sweep as Sweep
from benchkit.report.sweep import build_sweep as build_sweep
from benchkit.report.sweep import compare as compare
from benchkit.report.sweep import describe as describe
from benchkit.report.sweep import label as label
from benchkit.report.sweep import norm as norm
from benchkit.report.sweep import parse_sweep_overrides as parse_sweep_overrides
from benchkit.report.sweep import planned_space as planned_space
from benchkit.report.sweep import records as records
from benchkit.report.sweep import t95 as t95
from benchkit.report.sweep import usable as usable
from benchkit.report.verdicts.backend import backend_verdict as backend_verdict
from benchkit.report.verdicts.builds import JobBuild as JobBuild
from benchkit.report.verdicts.builds import build_identity as build_identity
from benchkit.report.verdicts.builds import build_summary as build_summary
from benchkit.report.verdicts.builds import compare_builds as compare_builds
from benchkit.report.verdicts.builds import identity_problem as identity_problem
from benchkit.report.verdicts.builds import job_build as job_build
from benchkit.report.verdicts.capacity import capacity_verdict as capacity_verdict
from benchkit.report.verdicts.common import Verdict as Verdict
from benchkit.report.verdicts.drafting import drafting_verdict as drafting_verdict
from benchkit.report.verdicts.drafting import mtp_effect_at as mtp_effect_at
from benchkit.report.verdicts.drafting import mtp_verdict as mtp_verdict
from benchkit.report.verdicts.drafting import spec_verdicts as spec_verdicts
from benchkit.report.verdicts.exercise import exercised as exercised
from benchkit.report.verdicts.factor import factor_verdicts as factor_verdicts
from benchkit.report.verdicts.projection import projection_verdict as projection_verdict
from benchkit.report.verdicts.repeats import repeats_verdict as repeats_verdict
from benchkit.report.verdicts.slots import knee as knee
from benchkit.report.verdicts.slots import slots_verdict as slots_verdict
from benchkit.report.verdicts.validity import validity_verdict as validity_verdict


def analyse(sw: Sweep, projection_units: int) -> list[Verdict]:
    """Every verdict the sweep supports, in report order: a factor the run could not have
    exercised (exercise.py) keeps its numbers but has no verdict."""
    capacity = capacity_verdict(sw)
    if capacity is not None:
        # Open-loop load: per-unit seconds follow the arrival schedule, not the setting, so
        # the closed-loop verdicts (knee, MTP, projection) have nothing to judge.
        return [capacity, repeats_verdict(sw), validity_verdict(sw)]
    b = backend_verdict(sw)
    s = exercised(sw, slots_verdict(sw, b))
    m = exercised(sw, mtp_verdict(sw, s, b))
    specs = [exercised(sw, v) for v in spec_verdicts(sw, s, b)]
    where: Point = dict((s.point if s is not None else None) or {})
    if not where and b is not None and b.point:
        where = dict(b.point)
    factors = factor_verdicts(sw, where)
    out = [v for v in (b, s, m, *specs) if v is not None]
    out += factors
    out.append(repeats_verdict(sw))
    out.append(projection_verdict(sw, projection_units, b, s, m, specs, factors))
    out.append(validity_verdict(sw))
    return out


def detect_caveats(
    df: pd.DataFrame,
    by_job: Mapping[str, Mapping[str, Any]],
    sw: Sweep,
    *,
    spread_cv: float = 0.10,
    swing: float = 4.0,
) -> list[dict[str, Any]]:
    """Measurement problems the data show: capped calls and their time share, high spread
    between repeats, per-call rate swings, sampling left to the server's defaults, identity
    problems, failed calls inside complete jobs, results spanning models or hardware,
    backends run from different builds, synthetic models and derived reference data.
    `by_job` maps job -> its result.json data. Each caveat is {"kind": ..., **numbers}."""
    # Imported here: caveats reads i18n, which reads this module at import time.
    from benchkit.report import caveats

    rows: list[dict[str, Any]] = records(df)
    done = [r for r in rows if usable(r)]
    return caveats.detect(caveats.Data(df, rows, done, by_job, sw, spread_cv, swing))

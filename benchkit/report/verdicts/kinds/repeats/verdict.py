"""The repeats verdict: how much noise repeats show and whether more would help."""

from __future__ import annotations

from benchkit.report.analysis.numbers import (
    RepeatedConfig,
    RepeatsNumbers,
)
from benchkit.report.analysis.sweep import COMPLETE, Sweep
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.engine_of import engine_of
from benchkit.report.verdicts.kinds.capacity.verdict import load_axis


def repeats_verdict(sw: Sweep) -> Verdict:
    """Noise of every configuration that ran more than once: mean, CV and 95% CI on the
    objective's metric."""
    rows: list[RepeatedConfig] = []
    for c in sw.cells:
        s = c.stats(sw.metric)
        if s is not None and s.n > 1:
            rows.append(
                {
                    "config": dict(c.values),
                    "n": s.n,
                    "mean": s.mean,
                    "sd": s.sd,
                    "cv": s.cv,
                    "ci95": s.ci,
                    "jobs": list(c.jobs),
                }
            )
    settings = engine_of(sw).settings if sw.cells else None
    numbers = RepeatsNumbers(
        configs=rows,
        declared_noise=sw.noise,
        open_loop=load_axis(sw) is not None or None,
        twin_sd=settings.run_sd if settings is not None else None,
        twin_dof=settings.run_dof if settings is not None and settings.run_sd is not None else None,
    )
    if not rows:
        return Verdict("repeats", None, COMPLETE, [], sw.metric, numbers)
    max_cv = max((r["cv"] or 0.0) for r in rows)
    return Verdict(
        "repeats",
        {"configs_repeated": len(rows), "max_cv": max_cv},
        COMPLETE,
        [],
        sw.metric,
        numbers,
    )

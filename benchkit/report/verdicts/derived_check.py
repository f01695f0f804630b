"""Verdicts resting on derived figures: a comparison whose jobs' objective the results say was
derived from a publication's stated shapes (result.json's reference.derived), not measured,
decides nothing by itself. The seed fixture transcribes a study's post: a review found its
"Vulkan won (complete)" resting on 22 of 24 seconds-per-unit figures derived, not taken from
the post. Such a verdict is provisional (reason `derived_figures`), whatever its comparisons
say; a verdict on figures the post gave keeps its status."""

from __future__ import annotations

import dataclasses

from benchkit.report.analysis.sweep import PROVISIONAL, Sweep
from benchkit.report.verdicts.common import Verdict

REASON = "derived_figures"


def derived_check(sw: Sweep, v: Verdict) -> Verdict:
    """`v`, provisional where a comparison it rests on uses a job whose objective was derived."""
    if not sw.derived:
        return v
    comparisons = getattr(v.numbers, "comparisons", None) or []
    jobs = {j for c in comparisons for j in c["jobs"]}
    if not any(v.basis in sw.derived.get(j, ()) for j in jobs) or REASON in v.reasons:
        return v
    return dataclasses.replace(v, status=PROVISIONAL, reasons=[*v.reasons, REASON])

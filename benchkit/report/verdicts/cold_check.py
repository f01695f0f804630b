"""Decisions a cold start's leaving out made, and the comparisons it changed: each decided
comparison a verdict rests on that involves a point whose figure leaves out a cold start,
compared again with the cold start kept (engine_of.measured_engine). Where that outcome
differs, the decision rests on benchkit's rule that a cold start is the server starting, not
the setting's speed, a cause the data do not isolate: the verdict is provisional (reason
`decided_without_cold`) and names both (rules v10, from a review that found the H200 Vulkan
study's MTP verdict decided only without job 0's 20.3 s cold start: 1.59x, 1.20x-2.10x; as
measured 1.26x, 0.50x-3.14x). Every comparison a cold start's leaving out touches is kept as
measured too (`cold_kept`, rules v12), for the words beside the figures."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from benchkit.compare.engine import OPEN
from benchkit.report.analysis.numbers import (
    BackendNumbers,
    ComparisonJson,
    DraftingNumbers,
    FactorNumbers,
    SlotsNumbers,
)
from benchkit.report.analysis.sweep import Sweep, label, norm
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.engine_of import comparison_json, measured_engine

REASON = "decided_without_cold"
_CHECKED = BackendNumbers | SlotsNumbers | DraftingNumbers | FactorNumbers


def _key(point: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, norm(v)) for k, v in point.items()))


def cold_check(sw: Sweep, v: Verdict) -> Verdict:
    """`v`, provisional with the comparisons as measured where a cold start's leaving out
    decided one it rests on; `v` itself otherwise."""
    n = v.numbers
    if not isinstance(n, _CHECKED) or not n.cold or not n.comparisons:
        return v
    eng = measured_engine(sw)
    if eng is None:
        return v
    cold = {_key(c["point"]) for c in n.cold}
    changed: list[ComparisonJson] = []
    kept: list[ComparisonJson] = []
    for c in n.comparisons:
        if not ({_key(c["base"]), _key(c["other"])} & cold):
            continue
        again = eng.compare(label(c["base"]), label(c["other"]))
        if again is None:
            continue
        kept.append(comparison_json(sw, again))
        if c["outcome"] != OPEN and again.outcome != c["outcome"]:
            changed.append(kept[-1])
    numbers = dataclasses.replace(n, cold_kept=kept or None)
    if not changed:
        return dataclasses.replace(v, numbers=numbers) if kept else v
    reasons = [*v.reasons, REASON] if REASON not in v.reasons else v.reasons
    return dataclasses.replace(
        v,
        status="provisional",
        reasons=reasons,
        numbers=dataclasses.replace(numbers, as_measured=changed),
    )

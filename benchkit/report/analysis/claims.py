"""Checks of published claims against the sweep's numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pandas as pd

from benchkit.report.analysis.sweep import _is_num, records, usable


class ClaimCheck(TypedDict):
    """A declared claim and what the measurements say of it."""

    premise: str
    source: str
    metric: str
    expected_min: float | None
    expected_max: float | None
    n: int
    measured_min: float | None
    measured_max: float | None
    status: NotRequired[str]
    # Every value the claim was checked against was derived from a publication's stated
    # figures (result.json's reference.derived), not measured: said beside its status.
    derived: NotRequired[bool]


class Refuted(TypedDict):
    """A premise the data refute, as the corrections section lists it: the claim, its
    expected range (lo, hi) and the range measured (mlo, mhi)."""

    premise: str
    source: str
    metric: str
    lo: float | None
    hi: float | None
    mlo: float | None
    mhi: float | None
    derived: NotRequired[bool]


def check_claims(
    df: pd.DataFrame,
    claims: Sequence[Mapping[str, Any]],
    derived: Mapping[str, Sequence[str]] | None = None,
) -> list[ClaimCheck]:
    """Each declared claim (a premise, its source, a metric and an expected range) against
    the complete measurements: `supported` when every measured value is in the range,
    `refuted` when none is, `partly` otherwise, `untestable` when the metric was not
    measured. Values the results say were derived (`derived`: job -> metrics, result.json's
    reference.derived) are not measurements: a claim whose every value is derived says so
    beside its status (a review found derived draft acceptances called "measured")."""
    derived = derived or {}
    rows = records(df)
    out: list[ClaimCheck] = []
    for claim in claims:
        metric = str(claim.get("metric") or "")
        lo, hi = claim.get("expected_min"), claim.get("expected_max")
        used = [r for r in rows if usable(r) and _is_num(r.get(metric))]
        vals = [float(r[metric]) for r in used]
        made_up = all(metric in derived.get(str(r.get("job")), ()) for r in used)
        entry: ClaimCheck = {
            "premise": claim.get("premise", ""),
            "source": claim.get("source", ""),
            "metric": metric,
            "expected_min": lo,
            "expected_max": hi,
            "n": len(vals),
            "measured_min": min(vals) if vals else None,
            "measured_max": max(vals) if vals else None,
        }
        if vals and made_up:
            entry["derived"] = True
        if not vals or (lo is None and hi is None):
            entry["status"] = "untestable"
        else:
            inside = [(lo is None or v >= lo) and (hi is None or v <= hi) for v in vals]
            entry["status"] = (
                "supported" if all(inside) else "refuted" if not any(inside) else "partly"
            )
        out.append(entry)
    return out

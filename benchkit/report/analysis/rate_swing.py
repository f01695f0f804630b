"""The rate-swing caveat: per-call token pace that swung widely within a job (ITL p99 against
p50), as a detector and a sentence (registered in `caveats.KINDS`). Under open-loop load the
sentence says how the capacity verdict takes such calls; closed-loop verdicts leave them to
per-unit seconds and aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.sweep import _is_num
from benchkit.report.lang import fmt, trn
from benchkit.report.lang.i18n import point_text


def detect(
    done: Sequence[Mapping[str, Any]], varying: Sequence[str], swing: float, open_loop: bool
) -> list[dict[str, Any]]:
    """One caveat naming every usable job whose ITL p99 is at least `swing` times its p50
    (`open_loop`: the sweep ran open-loop load)."""
    swings = []
    for r in done:
        if not (_is_num(r.get("itl_ms_p50")) and _is_num(r.get("itl_ms_p99"))):
            continue
        p50, p99 = float(r["itl_ms_p50"]), float(r["itl_ms_p99"])
        if p50 > 0 and p99 / p50 >= swing:
            swings.append(
                {
                    "job": r["job"],
                    "p50": p50,
                    "p99": p99,
                    "ratio": p99 / p50,
                    "point": {k: r.get(k) for k in varying},
                }
            )
    if not swings:
        return []
    caveat: dict[str, Any] = {"kind": "rate_swing", "threshold": swing, "jobs": swings}
    if open_loop:
        caveat["open_loop"] = True  # its verdict judges loads, not per-unit seconds
    return [caveat]


def say(c: Mapping[str, Any], lang: str) -> str:
    worst = max(c["jobs"], key=lambda x: x["ratio"])
    n = len(c["jobs"])
    kw = {
        "ratio": fmt.ratio(worst["ratio"], lang),
        "p50": fmt.millis(worst["p50"], lang),
        "p99": fmt.millis(worst["p99"], lang),
        "point": point_text(worst["point"], lang),
    }
    if c.get("open_loop"):
        return trn(
            lang,
            "Per-call token pace swung widely ({n} job, up to {ratio}: ITL p50 {p50}, p99 "
            "{p99}, {point}). The capacity verdict judges each load by its pass's percentiles "
            "against the SLO, such slow calls included.",
            "Per-call token pace swung widely ({n} jobs, up to {ratio}: ITL p50 {p50}, p99 "
            "{p99}, {point}). The capacity verdict judges each load by its pass's percentiles "
            "against the SLO, such slow calls included.",
            n,
            **kw,
        )
    return trn(
        lang,
        "Per-call token pace swung widely ({n} job, up to {ratio}: ITL p50 {p50}, p99 {p99}, "
        "{point}). Instantaneous rates are not verdict material: verdicts use per-unit seconds "
        "and aggregates.",
        "Per-call token pace swung widely ({n} jobs, up to {ratio}: ITL p50 {p50}, p99 {p99}, "
        "{point}). Instantaneous rates are not verdict material: verdicts use per-unit seconds "
        "and aggregates.",
        n,
        **kw,
    )

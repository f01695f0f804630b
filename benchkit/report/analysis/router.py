"""The caveat a slot sweep on a synthetic mixture of experts carries: its router is random.

benchkit's synthetic MoE models (benchkit.models.synthetic) write the router's weights at
random like every other weight, so which experts a token chooses is not what a trained router
would choose; a trained router's choices are skewed toward some experts. A decode step of
several slots reads every expert any of its sequences chose, so how many distinct experts a
step reads, and with it how decode scales with slots, is where that difference would show.
Nothing in the results counts expert use and the model file is not kept with them, so the
report says it as untested, beside the slots verdict (caveats.KINDS, `beside`), once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.lang import trn

# The section the caveat is said in, in place of the caveats list (writeup.view).
BESIDE = "slots"


def detect(by_job: Mapping[str, Mapping[str, Any]], varying: Sequence[str]) -> list[dict[str, Any]]:
    """One caveat where the sweep varies slots over jobs on a synthetic mixture of experts
    (fewer active than total parameters); none otherwise."""
    if "slots" not in varying:
        return []
    jobs = [
        j for j, d in by_job.items() if _synthetic_moe((d.get("provenance") or {}).get("model"))
    ]
    if not jobs:
        return []
    return [{"kind": "random_router", "jobs": len(jobs), "beside": BESIDE}]


def _synthetic_moe(model: object) -> bool:
    if not isinstance(model, Mapping) or not model.get("synthetic"):
        return False
    total, active = model.get("params_total_b"), model.get("params_active_b")
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (total, active))
    return numbers and float(active) < float(total)  # type: ignore[arg-type]


def say(c: Mapping[str, Any], lang: str) -> str:
    return trn(
        lang,
        "Not isolated: {n} job ran a synthetic mixture of experts whose router weights are "
        "random, not trained, so which experts its tokens chose is not what a trained router, "
        "whose choices are skewed, would choose. A step of several slots reads every expert "
        "its sequences chose, so how many distinct experts a step read, and with it how this "
        "slot scaling carries to a trained model of the same shape, is untested: the results "
        "count no expert use.",
        "Not isolated: {n} jobs ran a synthetic mixture of experts whose router weights are "
        "random, not trained, so which experts its tokens chose is not what a trained router, "
        "whose choices are skewed, would choose. A step of several slots reads every expert "
        "its sequences chose, so how many distinct experts a step read, and with it how this "
        "slot scaling carries to a trained model of the same shape, is untested: the results "
        "count no expert use.",
        int(c["jobs"]),
    )

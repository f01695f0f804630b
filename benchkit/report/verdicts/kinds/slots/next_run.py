"""The next run a slots verdict asks for: other slot counts where one completed, larger ones
(and the gap below the largest) where the knee was not reached."""

from __future__ import annotations

from benchkit.report.analysis.numbers import Point, SlotsNumbers, of
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Proposal


def proposes(slots: Verdict) -> Proposal | None:
    if slots.verdict is None:
        return None
    sn = of(SlotsNumbers, slots.numbers)
    counts = [r["slots"] for r in sn.rows or []]
    if "one_slot_count" in slots.reasons:
        why, more = "other_slots", sorted({1, 2, 4, *counts})
    elif counts and not sn.knee_reached:
        # The gap below the largest count first: the knee may lie inside it.
        top = sorted(counts)[-2:]
        gap = [(top[0] + top[1]) // 2] if len(top) == 2 and top[1] - top[0] > 1 else []
        why, more = "more_slots", sorted({*counts, *gap, 2 * max(counts)})
    else:
        return None
    new: list[Point] = [{"slots": n} for n in more if n not in counts]
    return Proposal(why, "slots", ",".join(map(str, more)), new)

"""The next run a slots verdict asks for: other slot counts where one completed, larger ones
(and the gap below the largest) where the knee was not reached; only counts the units of the
run fill in whole rounds (`exercise.fills`), with more of the workload's units where it has
them."""

from __future__ import annotations

import math

from benchkit.report.analysis.numbers import Point, SlotsNumbers, of
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.exercise import fills
from benchkit.report.verdicts.kind import Proposal, RunUnits


def proposes(slots: Verdict, run: RunUnits) -> Proposal | None:
    if slots.verdict is None:
        return None
    sn = of(SlotsNumbers, slots.numbers)
    counts = [r["slots"] for r in sn.rows or []]
    if "one_slot_count" in slots.reasons:
        why, wanted = "other_slots", sorted({1, 2, 4} - set(counts))
    elif counts and not sn.knee_reached:
        # The gap below the largest count first: the knee may lie inside it.
        top = sorted(counts)[-2:]
        gap = [_between(top[0], top[1], run)] if len(top) == 2 and top[1] - top[0] > 1 else []
        why, wanted = "more_slots", [n for n in [*gap, 2 * max(counts)] if n not in counts]
    else:
        return None
    kept, units = _filled(counts, wanted, run)
    if not kept:
        return None
    more = sorted({*counts, *kept})
    new: list[Point] = [{"slots": n} for n in more if n not in counts]
    also = (("workload.units", str(units)),) if units is not None and units != run.units else ()
    left = tuple(n for n in wanted if n not in kept)
    return Proposal(why, "slots", ",".join(map(str, more)), new, also=also, left_out=left,
                    units=units)  # fmt: skip


def _between(low: int, high: int, run: RunUnits) -> int:
    """A count between two measured ones: the one nearest their middle that the run's units
    fill in whole rounds, else the middle (more units may fill it)."""
    mid = (low + high) // 2
    filled = [n for n in range(low + 1, high) if run.units is not None and fills(n, run.units)]
    return min(filled, key=lambda n: (abs(n - mid), n)) if filled else mid


def _filled(counts: list[int], wanted: list[int], run: RunUnits) -> tuple[list[int], int | None]:
    """The wanted counts the run's units fill in whole rounds, raising the units within what
    the workload has where a count needs more (keeping the counts measured whole, whole), and
    the units the run then replays. Unknown units: every count, as before."""
    units = run.units
    if units is None:
        return list(wanted), None
    kept: list[int] = []
    for n in wanted:
        if fills(n, units):
            kept.append(n)
            continue
        whole = [c for c in [*counts, *kept] if fills(c, units)]
        step = math.lcm(n, *whole)
        more = -(-units // step) * step
        if run.available is not None and more <= run.available:
            units = more
            kept.append(n)
    return kept, units

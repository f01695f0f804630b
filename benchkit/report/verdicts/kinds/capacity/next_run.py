"""The next round of the capacity search (open-loop load): the loads `next_loads` proposes,
in one sweep with the loads tried that reuses this folder's complete jobs, so the next
report brackets each capacity more closely."""

from __future__ import annotations

from benchkit.report.analysis.numbers import CapacityNumbers, Point, of
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Proposal, RunUnits
from benchkit.report.verdicts.kinds.capacity.verdict import next_loads


def proposes(v: Verdict, run: RunUnits) -> Proposal | None:
    n = of(CapacityNumbers, v.numbers)
    tried = sorted({r["load"] for s in n.settings or [] for r in s["rows"]})
    new = next_loads(n)
    if not new:
        return None
    loads = ",".join(f"{x:g}" for x in sorted(tried + new))
    points: list[Point] = [{n.axis: x} for x in sorted(new)]
    return Proposal("loads", f"load.{n.axis}", loads, points, reuse=True)

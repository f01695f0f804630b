"""What every verdict shares: the `Verdict` record, its status rule, and the helpers
that group cells, order them and note contamination and capped calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchkit.compare.engine import BRIDGED, UNMEASURED, Comparison
from benchkit.report.analysis import caps
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.numbers import (
    BackendNumbers,
    CallRef,
    Capped,
    Cold,
    ColdNote,
    Contaminated,
    DraftingNumbers,
    FactorNumbers,
    FactorValue,
    Point,
    ProjectionNumbers,
    SlotsNumbers,
    Stalled,
    StallNote,
    StallPair,
    VerdictNumbers,
)
from benchkit.report.analysis.stalls import PER_UNIT
from benchkit.report.analysis.sweep import (
    COMPLETE,
    PROVISIONAL,
    Cell,
    Missing,
    Sweep,
    _is_num,
    norm,
)
from benchkit.report.verdicts.engine_of import MACHINE_ATTRIBUTES


@dataclass
class Verdict:
    """One factor's verdict, the numbers behind it, and how sure it is.

    `verdict` is language-free JSON (a backend name, a slot count, effect runs, hours);
    `status` is `complete` or `provisional`; `missing` names the planned points it depends
    on that did not complete; `reasons` lists other causes of `provisional`; `point` is the
    configuration the verdict singles out, when there is one."""

    factor: str
    verdict: Any
    status: str
    missing: list[Missing] = field(default_factory=list)
    basis: str | None = None
    numbers: VerdictNumbers = field(default_factory=SlotsNumbers)
    point: Point | None = None
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "factor": self.factor,
            "verdict": self.verdict,
            "status": self.status,
            "missing": [m.to_json() for m in self.missing],
            "reasons": list(self.reasons),
            "basis": self.basis,
            "point": self.point,
            "numbers": self.numbers.to_json(),
        }


def _status(missing: Sequence[Missing], reasons: Sequence[str] = ()) -> str:
    return PROVISIONAL if missing or reasons else COMPLETE


def _group(cells: Iterable[Cell], keys: Sequence[str]) -> dict[tuple[str, ...], list[Cell]]:
    out: dict[tuple[str, ...], list[Cell]] = {}
    for c in cells:
        out.setdefault(tuple(c.get(k) for k in keys), []).append(c)
    return out


def _context(cell: Cell, keys: Sequence[str]) -> Point:
    return {k: cell.values.get(k) for k in keys}


def _sort_key(v: Any) -> tuple[int, float, str]:
    if isinstance(v, bool):
        return (0, float(v), "")
    if _is_num(v):
        return (0, float(v), "")
    return (1, 0.0, norm(v))


def _values(c: Cell) -> dict[str, float | None]:
    return {m: c.mean(m) for m in c.samples}


def _taint(
    sw: Sweep, cells: Sequence[Cell], reasons: list[str], *, engine: bool = False
) -> Contaminated | None:
    """A verdict resting on jobs that differ in something no swept factor explains is
    provisional, and names the jobs and the difference (None: no such jobs). A verdict on the
    comparison engine (`engine`) has the machines handled in its comparisons (same machine,
    bridged, or open) and the race's open pairs among them, so neither is named again here."""
    # Called by every verdict on the cells it compares: also where a finished race left one
    # of them undecided (a pair its paired test did not settle, whatever the point estimate).
    if not engine and any(j in sw.race_undecided for c in cells for j in c.jobs):
        reasons.append("race_undecided")
    bad = sw.taint(cells)
    if engine:
        bad = [e for e in bad if e["attribute"] not in MACHINE_ATTRIBUTES]
    if bad:
        reasons.append("contaminated")
        return list(bad)
    return None


def _capped(sw: Sweep, cell: Cell, peers: Sequence[Cell] = ()) -> Capped | None:
    """The cell's job with the most runaway output, when it is over the study's cap limit.
    Where the jobs' calls are known and `peers` (the points the verdict compares it with)
    are given, only the capped calls its peers did not have count (benchkit.report.analysis.caps);
    calls capped alike everywhere are the workload's, not the point's."""
    worst: Capped | None = None
    peer_caps = [sw.caps[j] for p in peers if p is not cell for j in p.jobs if j in sw.caps]
    for job in cell.jobs:
        row = sw.row(job)
        own = sw.caps.get(job)
        keys: list[str] | None = None
        calls: float | None
        time_share: float | None
        if own is not None and peer_caps:
            d = caps.differing(own, peer_caps)
            calls, time_share, keys = d.share_calls, d.share_time, d.keys
            uncapped = _without_share(cell.mean(sw.metric), time_share, sw)
        else:
            calls, time_share = ev.cap_shares(row)
            uncapped = cell.mean(f"{sw.metric}_uncapped")
        over = [x for x in (calls, time_share) if x is not None and x > sw.cap_limit]
        if not over:
            continue
        share = max(over)
        if worst is None or share > worst["share"]:
            worst = {
                "job": job,
                "point": dict(cell.values),
                "share": share,
                "share_calls": calls,
                "share_time": time_share,
                "calls": len(keys) if keys is not None else row.get("calls_hit_cap"),
                "limit": sw.cap_limit,
                "objective": cell.mean(sw.metric),
                "objective_uncapped": uncapped,
                "differing": keys,
            }
    return worst


def _without_share(value: float | None, share: float, sw: Sweep) -> float | None:
    """A per-unit objective with `share` of the call time taken out (an estimate)."""
    if value is None or sw.metric not in ev.PER_UNIT:
        return None
    return value * (1.0 - share)


def _uncapped_values(sw: Sweep, cells: Sequence[Cell]) -> list[float | None]:
    """Each cell's objective without the capped calls that differ from the other cells'."""
    out: list[float | None] = []
    for c in cells:
        peer_caps = [sw.caps[j] for p in cells if p is not c for j in p.jobs if j in sw.caps]
        own = [sw.caps[j] for j in c.jobs if j in sw.caps]
        if own and peer_caps:
            d = caps.differing(own[0], peer_caps)
            out.append(_without_share(c.mean(sw.metric), d.share_time, sw))
        else:
            out.append(c.mean(f"{sw.metric}_uncapped"))
    return out


def _neighbours(sw: Sweep, cell: Cell) -> list[Cell]:
    """The cells that differ from `cell` in exactly one varying factor: the points a verdict
    compares it with."""
    out = []
    for c in sw.cells:
        diff = [k for k in sw.varying if norm(c.values.get(k)) != norm(cell.values.get(k))]
        if len(diff) == 1:
            out.append(c)
    return out


def _ctx_sort(group: Sequence[Cell], keys: Sequence[str]) -> list[tuple[int, float, str]]:
    return [_sort_key(group[0].values.get(k)) for k in keys]


def _stalled(
    sw: Sweep, cells: Sequence[Cell], reasons: list[str], factor: str, cold_out: bool = True
) -> Stalled | None:
    """The points among `cells` whose jobs stalled (benchkit.report.analysis.stalls), each with the
    verdict's comparisons (the cells that differ from it in `factor` alone) with and without
    the stalls. A stall that added at least the study's smallest counted effect to its job's
    wall clock could flip the verdict: it is provisional, and says so (None: no stalls).
    Cold starts are left out of the figures compared (`_cold`), so only the other stalls
    count here, unless `cold_out` is False (a verdict on figures that keep them)."""
    m = sw.metric
    notes: Stalled = []
    for c in cells:
        for job in c.jobs:
            js = sw.stalls.get(job)
            counted = (js.later if cold_out else js.stalls) if js is not None else []
            if js is None or not counted:
                continue
            value = c.mean(m)
            excess = js.excess_s if cold_out else js.all_excess_s
            without = js.without(m, value) if cold_out else js.without(m, js.cold_free(m, value))
            notes.append(
                StallNote(
                    job=job,
                    point=dict(c.values),
                    stalls=len(counted),
                    excess_s=excess,
                    wall_share=excess / js.wall_s if js.wall_s > 0 else 0.0,
                    objective=value,
                    objective_without=without,
                    pairs=_stall_pairs(sw, c, cells, factor, value, without),
                )
            )
    if not notes:
        return None
    if any(n["wall_share"] >= sw.min_effect for n in notes):
        reasons.append("stalled")
    return notes


def _cold(sw: Sweep, cells: Sequence[Cell]) -> Cold | None:
    """The points among `cells` whose figure leaves out cold starts (folder.py takes their
    excess out of the per-unit figures before any verdict compares them): each with the
    calls, the time left out and the figure measured with it (None: no cold starts)."""
    m = sw.metric
    notes: Cold = []
    for c in cells:
        for job in c.jobs:
            js = sw.stalls.get(job)
            if js is None or not js.cold or m not in PER_UNIT:
                continue
            value = c.mean(m)
            calls: list[CallRef] = [{"unit": s.unit, "call": s.call} for s in js.cold]
            notes.append(
                ColdNote(
                    job=job,
                    point=dict(c.values),
                    calls=calls,
                    excess_s=js.cold_excess_s,
                    objective_measured=(
                        None if value is None else value + js.cold_excess_s / js.units
                    ),
                    objective=value,
                )
            )
    return notes or None


def _stall_pairs(
    sw: Sweep,
    c: Cell,
    cells: Sequence[Cell],
    factor: str,
    value: float | None,
    without: float | None,
) -> list[StallPair]:
    """Each cell differing from `c` in `factor` alone: its value over `c`'s (the stalled
    point's ratio to it), with the stall and without (the other's own stalls left out too)."""
    out: list[StallPair] = []
    rest = [k for k in sw.varying if k != factor]
    for o in cells:
        if o is c or any(norm(o.values.get(k)) != norm(c.values.get(k)) for k in rest):
            continue
        if norm(o.values.get(factor)) == norm(c.values.get(factor)):
            continue
        ov = o.mean(sw.metric)
        o_js = [sw.stalls[j] for j in o.jobs if j in sw.stalls]
        ov_without = o_js[0].without(sw.metric, ov) if o_js else ov
        out.append(
            StallPair(
                other=dict(o.values),
                ratio=value / ov if value is not None and ov else None,
                ratio_without=without / ov_without if without is not None and ov_without else None,
            )
        )
    return out


def _run_noise(comparisons: Sequence[Comparison], reasons: list[str]) -> None:
    """Add `run_noise_unmeasured` where a comparison the verdict rests on holds no run-to-run
    noise (single runs, no twins, nothing declared): its interval is of the units alone, and
    a second run of both points could land elsewhere (benchkit.compare.engine.Settings)."""
    if any(c.run_noise == UNMEASURED for c in comparisons):
        reasons.append("run_noise_unmeasured")
    # A decided bridge whose card-by-point term is not measured (one point ran on both
    # machines) rests on that point's ratio holding for the others (rules v11).
    if any(c.machine == BRIDGED and c.decided and c.interaction is None for c in comparisons):
        reasons.append("bridge_term_unmeasured")


def _objective_of(v: Verdict) -> str:
    n = v.numbers
    judged = BackendNumbers | SlotsNumbers | DraftingNumbers | ProjectionNumbers | FactorNumbers
    objective = n.objective if isinstance(n, judged) else None
    return str((objective["metric"] if objective else None) or v.basis or "")


def _first_num(df: pd.DataFrame, jobs: Sequence[str], col: str) -> float | None:
    if col not in df.columns:
        return None
    for v in df[df["job"].isin(list(jobs))][col]:
        if _is_num(v):
            return float(v)
    return None


def _number(x: FactorValue) -> float:
    """A numeric factor's value (a slot count, say), held as a number or its text."""
    if x is None:
        raise TypeError("a numeric factor has no value")
    return float(x)


# Units a point from which single runs give a paired interval (compare.engine.MIN_UNITS).
PAIRED_UNITS = 3


def is_setting(v: Verdict) -> bool:
    """A verdict that settles part of the recommendation: backend, slots, drafting, and every
    factor verdict of a setting (not an application choice)."""
    if v.factor in ("backend", "slots", "mtp", "capacity") or v.factor.startswith("spec="):
        return True
    return isinstance(v.numbers, FactorNumbers) and v.numbers.kind == "setting"

"""The projection verdict: the study's whole workload at the recommended point."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from benchkit.report.analysis.numbers import (
    ApplicationPoint,
    BetterPoint,
    DraftingNumbers,
    FactorValue,
    MachineSpread,
    Point,
    ProjectionNumbers,
    SlotsNumbers,
)
from benchkit.report.analysis.sweep import (
    BASIS_FACTORS,
    COMPLETE,
    PROVISIONAL,
    SLOT_LATENCY,
    THROUGHPUT,
    Cell,
    Stats,
    Sweep,
    norm,
)
from benchkit.report.verdicts.common import (
    Verdict,
    _capped,
    _cold,
    _first_num,
    _neighbours,
    _number,
    _sort_key,
    _stalled,
    _status,
    _taint,
    _values,
)
from benchkit.report.verdicts.engine_of import (
    MACHINE_ATTRIBUTES,
    comparison_json,
    engine_of,
    machine_of,
    point_of,
)
from benchkit.report.verdicts.kinds.drafting.verdict import mtp_effect_at
from benchkit.report.verdicts.kinds.factor.verdict import apply_factors


def projection_verdict(
    sw: Sweep,
    units: int,
    backend: Verdict | None,
    slots: Verdict | None,
    mtp: Verdict | None,
    specs: Sequence[Verdict] = (),
    factors: Sequence[Verdict] = (),
) -> Verdict:
    """The recommended point (winning backend, the knee, MTP or the drafter that helps most
    there, if any) and the time for `units` units there, on the throughput basis (what a
    batch of units costs). Where another complete point is better on the objective, it is
    named with why it is not the recommendation (`better_point`). Every other swept factor
    takes its factor verdict's value (`factor.apply_factors`); an application factor
    (sampling) is held at one value and the projection is also given at each of its values
    (`application`), never recommending one."""
    m = sw.metric
    point, application = apply_factors(sw, _recommended(sw, backend, slots, mtp, specs), factors)
    depends = [v for v in (backend, slots, mtp, *specs, *factors) if v is not None]
    depends = [v for v in depends if v.factor not in application]
    reasons = [f"depends_on:{v.factor}" for v in depends if v.status != COMPLETE]

    def fits(c: Cell) -> bool:
        return c.mean(m) is not None and not sw.objective.meets(_values(c))

    matching = [
        c for c in sw.cells if all(c.get(k) == norm(v) for k, v in point.items() if k in c.values)
    ]
    # Several cells fit the point when a factor had no verdict (mixed backends, say): the
    # best of them on the objective.
    cell = min(
        (c for c in matching if fits(c)),
        key=lambda c: float(c.mean(m) or 0.0),
        default=None,
    )
    missing = sw.missing_where(point) if point else []
    s = cell.stats(THROUGHPUT) if cell is not None else None
    if cell is None or s is None:
        return Verdict(
            "projection",
            None,
            PROVISIONAL,
            missing,
            THROUGHPUT,
            ProjectionNumbers(units=units, objective=sw.objective.to_json()),
            point or None,
            [*reasons, "no_result"],
        )
    numbers = _measured_numbers(sw, cell, s, units, reasons)
    if spread := _machine_spread(sw, cell):
        numbers = replace(numbers, machines=spread)
        reasons.append("other_machines")
    # Never worse than another complete point without saying so (at the same application
    # choices: those are the user's, not a speed setting; and on the same basis: a point on
    # another workload or model did other work, so its time is no better setting).
    basis = [f for f in BASIS_FACTORS if f in cell.values]
    same_use = [
        c
        for c in sw.cells
        if fits(c)
        and all(c.get(f) == (norm(point[f]) if f in point else cell.get(f)) for f in application)
        and all(c.get(f) == cell.get(f) for f in basis)
    ]
    best_cell = min(same_use, key=lambda c: float(c.mean(m) or 0.0), default=cell)
    better = _better_point(sw, cell, best_cell, slots)
    if better is not None:
        numbers = replace(numbers, better_point=better)
    # A single run varies nothing: name its point from the settings every job shared.
    where: Point = {k: sw.constants[k] for k in ("backend", "slots", "mtp") if k in sw.constants}
    where.update(cell.values)
    if busy := _busy(sw, cell):
        numbers = replace(numbers, host_busy=busy)
    if application:
        at = {k: v for k, v in where.items() if k in application} or None
        numbers = replace(
            numbers, application=_application(sw, where, application, units), application_at=at
        )
        where = {k: v for k, v in where.items() if k not in application}
    return Verdict(
        "projection",
        round(units * s.mean / 3600, 2),
        _status(missing, reasons),
        missing,
        THROUGHPUT,
        numbers,
        where,
        reasons,
    )


def _recommended(
    sw: Sweep,
    backend: Verdict | None,
    slots: Verdict | None,
    mtp: Verdict | None,
    specs: Sequence[Verdict],
) -> Point:
    """The point the backend, slots, MTP and drafting verdicts recommend, before the other
    factors' verdicts: the slots verdict's point (else the backend's), MTP on where it helps
    at those slots, the drafter that helps most there (else none), and the fewest slots where
    the run exercised none."""
    point: Point = {}
    if slots is not None and slots.point:
        point.update(slots.point)
    elif backend is not None and backend.point:
        point.update(backend.point)
    at = int(_number(point["slots"])) if "slots" in point else None
    if "mtp" in sw.varying:
        point["mtp"] = mtp_effect_at(mtp, at) == "helps"
    if "spec" in sw.varying:
        helping = [v for v in specs if mtp_effect_at(v, at) == "helps"]
        best = min(helping, key=lambda v: _ratio_at(v, at), default=None)
        drafted = best.numbers if best is not None else None
        point["spec"] = drafted.on_value if isinstance(drafted, DraftingNumbers) else "none"
    if slots is not None and isinstance(slots.numbers, SlotsNumbers):
        idle = slots.numbers.not_exercised
        if idle is not None and "slots" not in point:
            # Slot counts the run did not exercise: the fewest, which cost the least context.
            point["slots"] = min(idle["values"], key=_sort_key)
    return point


def _measured_numbers(
    sw: Sweep, cell: Cell, s: Stats, units: int, reasons: list[str]
) -> ProjectionNumbers:
    """The projection's figures at the recommended point's cell `cell` (`s` its throughput
    statistics); a single run, runaway outputs and what taints its jobs added to `reasons`."""
    if s.n < 2:
        reasons.append("single_run")
    # A point the race stopped early has a figure restated from its machine's other points.
    stated = [r for j in cell.jobs if (r := sw.restated.get(j)) is not None]
    units_stated = (
        stated[0].stated if len(stated) == 1 and stated[0].measured < stated[0].stated else None
    )
    own = None
    if units_stated is not None:
        reasons.append("restated")
        own = stated[0].own if sw.metric == THROUGHPUT else None
    uncapped = cell.mean(f"{THROUGHPUT}_uncapped")
    cap = _capped(sw, cell, _neighbours(sw, cell))
    if cap is not None:
        reasons.append("capped")
    return ProjectionNumbers(
        units=units,
        s_per_unit=s.mean,
        seconds=units * s.mean,
        ci_seconds=None if s.ci is None else units * s.ci,
        n=s.n,
        units_measured=_first_num(sw.df, cell.jobs, "units_completed"),
        units_stated=units_stated,
        own_s_per_unit=own,
        twin_noise=_twin_noise(sw),
        slot_latency=cell.mean(SLOT_LATENCY),
        objective=sw.objective.to_json(),
        objective_value=cell.mean(sw.metric),
        capped=cap,
        seconds_uncapped=None if uncapped is None else units * uncapped,
        contaminated=_taint(sw, [cell], reasons),
        stalled=_stalled(sw, [cell], reasons, "slots"),
        cold=_cold(sw, [cell]),
        measured=True,
    )


def _machine_spread(sw: Sweep, cell: Cell) -> MachineSpread | None:
    """Where the sweep's points ran on several machines: the projected figure's machine and
    the largest ratio between two machines' figures of one point. A projection is of its
    machine's speed; said bare, it read as the model's on any such card (the H100 study's
    three lent cards and its check card differ by up to 1.16x on one point)."""
    ratios = engine_of(sw).machine_ratios()
    machines = {machine_of(sw, j) for j in cell.jobs}
    if not ratios or len(machines) != 1:
        return None
    worst = max(max(r, 1 / r) for *_, r, _ in ratios)
    machine = machines.pop() or "?"
    out = MachineSpread(machine=machine, points=len({p for p, *_ in ratios}), ratio=worst)
    for p, m1, m2, r, _ in ratios:
        if p == point_of(cell) and machine in (m1, m2):
            # The projected figure's machine over the other's: "took 1.02x the time on B".
            out["other"], out["own"] = (m2, 1 / r) if m1 == machine else (m1, r)
    return out


def _twin_noise(sw: Sweep) -> float | None:
    """One run's run-to-run noise from the sweep's twin jobs, None without twins."""
    sd = engine_of(sw).settings.run_sd
    return math.expm1(sd) if sd is not None else None


def _better_point(
    sw: Sweep, cell: Cell, best_cell: Cell, slots: Verdict | None
) -> BetterPoint | None:
    """The complete point that measured better than the recommendation on the objective, with
    why it is not the recommendation (None: the recommendation is the best measured)."""
    m = sw.metric
    best_v, rec_v = best_cell.mean(m), cell.mean(m)
    if best_cell is cell or best_v is None or not rec_v or best_v >= rec_v:
        return None
    # The comparison engine's figure where it has one (paired units, one machine or bridged):
    # the table's means may come from two machines (rules v7).
    eng = engine_of(sw)
    comp = eng.compare(point_of(cell), point_of(best_cell))
    ratio = comp.ratio if comp is not None and comp.ratio is not None else best_v / rec_v
    if ratio >= 1:
        return None
    why = "other"

    # Another setup sets the faster point apart only where the recommendation's is the usual
    # one (the H100 study: both ran on the first of two machines, and 'its job ran on a
    # different setup' was no reason to prefer the other). Machines are the engine's.
    def setup(c: Cell) -> list[str]:
        return [e["attribute"] for e in sw.taint([c]) if e["attribute"] not in MACHINE_ATTRIBUTES]

    if setup(best_cell) and not setup(cell):
        why = "contaminated"
    elif _capped(sw, best_cell, [cell]) is not None:
        why = "capped"
    elif slots is not None and norm(best_cell.values.get("slots")) == norm(_faster_slots(slots)):
        why = "knee"
    return {
        "point": dict(best_cell.values),
        "faster_by": 1 - ratio,
        # Whether it is decided faster (better), within the margin or open is the
        # comparison's outcome; None: the engine had nothing to compare them on.
        "comparison": None if comp is None else comparison_json(sw, comp),
        "margin": eng.settings.margin,
        "why": why,
        "ctx_ratio": _ratio_or_none(
            _first_num(sw.df, best_cell.jobs, "ctx_total"),
            _first_num(sw.df, cell.jobs, "ctx_total"),
        ),
    }


def _application(
    sw: Sweep, where: Point, factors: Sequence[str], units: int
) -> list[ApplicationPoint]:
    """The projection at each value of each application factor, the rest of the point kept."""
    out: list[ApplicationPoint] = []
    for f in factors:
        seen = {norm(c.values.get(f)): c.values.get(f) for c in sw.cells}
        for value in sw.planned.get(f) or list(seen.values()):
            want = {**where, f: value}
            cell = next(
                (
                    c
                    for c in sw.cells
                    if all(c.get(k) == norm(x) for k, x in want.items() if k in c.values)
                ),
                None,
            )
            s = cell.mean(THROUGHPUT) if cell is not None else None
            point: ApplicationPoint = {
                "factor": f,
                "value": value,
                "seconds": None if s is None else units * s,
            }
            if cell is not None and (busy := _busy(sw, cell)):
                point["host_busy"] = busy
            out.append(point)
    return out


def _busy(sw: Sweep, cell: Cell) -> list[str]:
    """A cell's jobs that ran on a host busy with other work (evidence.host_busy)."""
    return [j for j in cell.jobs if sw.setups.get(j, {}).get("host_busy") == "busy"]


def _ratio_or_none(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _faster_slots(v: Verdict) -> FactorValue:
    """The slot count that measured faster than the slots verdict's knee ("-": none)."""
    f = v.numbers.faster if isinstance(v.numbers, SlotsNumbers) else None
    return f["slots"] if f else "-"


def _ratio_at(v: Verdict, slots: int | None) -> float:
    if not isinstance(v.numbers, DraftingNumbers):
        return math.inf
    for e in v.numbers.contexts:
        if slots is None or norm(e["context"].get("slots")) == norm(slots):
            return float(e["ratio"])
    return math.inf

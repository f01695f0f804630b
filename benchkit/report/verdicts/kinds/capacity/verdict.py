"""The capacity verdict (open-loop load): per server setting, the most load whose SLO held,
and the setting that holds the most.

A load held when its pass ended by itself (no bound: load.max_in_flight, load.max_pass_s),
no call failed and every limit of the study's SLO was met (with repeats: in every repeat).
A setting's capacity is the highest load tried with every load up to it held; it is
bracketed when a higher load was tried and broke the SLO, else it is a floor ("at least")
and the verdict provisional. A capacity whose SLO metric is within the noise of its limit
(held by less than the noise, or the next load broke it by less) is marginal: the verdict
keeps it but is provisional, as a margin inside a single run's noise makes the other
verdicts provisional. Without an SLO the capacity is the most load the server kept up with
(no bound reached), and the verdict says there was no SLO.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.load_numbers import CapacityRow, SettingCapacity
from benchkit.report.analysis.numbers import CapacityNumbers, Point
from benchkit.report.analysis.sweep import PROVISIONAL, Cell, Sweep, _is_num, norm
from benchkit.report.verdicts.common import (
    Verdict,
    _capped,
    _context,
    _group,
    _stalled,
    _status,
    _taint,
    _values,
)

# The load factors, in the order one is taken as the axis.
AXES = ("rate", "speed")
# A capacity bracketed by loads at most this far apart (the one that broke it over the one
# that held) is searched no further: a quarter of the load is finer than most SLOs need.
BRACKET = 1.25


def load_axis(sw: Sweep) -> str | None:
    """The sweep's load factor when its jobs ran open-loop load, else None."""
    if "load" not in sw.df.columns:
        return None
    loads = {norm(x) for x in sw.df["load"] if x is not None and x == x}
    if not loads - {"closed"}:
        return None
    return next((a for a in AXES if a in sw.df.columns), None)


def capacity_verdict(sw: Sweep) -> Verdict | None:
    """The setting that holds the most load under the study's SLO (None: no open-loop jobs)."""
    axis = load_axis(sw)
    if axis is None:
        return None
    rest = [k for k in sw.varying if k != axis]
    groups = _group(sw.cells, rest)
    settings = [_setting(sw, axis, _context(cells[0], rest), cells) for cells in groups.values()]
    settings.sort(key=lambda s: [_order(s["setting"].get(k)) for k in rest])
    reasons: list[str] = []
    cells = [c for cs in groups.values() for c in cs]
    numbers = CapacityNumbers(
        axis=axis,
        objective=sw.objective.to_json(),
        settings=settings,
        contaminated=_taint(sw, cells, reasons),
    )
    if not settings:
        return Verdict("capacity", None, PROVISIONAL, list(sw.missing), axis, numbers, None,
                       [*reasons, "no_comparison"])  # fmt: skip
    if not sw.objective.slo:
        reasons.append("no_slo")
    ranked = sorted(settings, key=_order_key)
    best = ranked[0]
    if any(not s["bracketed"] for s in settings):
        # An unbracketed capacity is a floor: the setting may hold more than was tried.
        reasons.append("not_bracketed")
    if best["marginal"] or (len(ranked) > 1 and ranked[1]["marginal"]):
        reasons.append("capacity_marginal")
    runner = ranked[1] if len(ranked) > 1 else None
    if runner is not None and best["capacity"] is not None and _rank(runner) == _rank(best):
        reasons.append("capacity_tie")
    at_best = [c for c in cells if _is_at(c, best, axis)]
    peers = [c for c in cells if _is_at_load(c, best["capacity"], axis) and c not in at_best]
    capped = _capped(sw, at_best[0], peers) if at_best else None
    if capped is not None:
        reasons.append("capped")
    # Capacity is no per-unit figure: no cold start is left out of it, every stall counts.
    stalled = _stalled(sw, [*at_best, *peers], reasons, axis, cold_out=False)
    numbers = CapacityNumbers(
        axis=axis,
        objective=numbers.objective,
        settings=settings,
        runner_up=dict(runner["setting"]) if runner is not None else None,
        contaminated=numbers.contaminated,
        stalled=stalled,
        capped=capped,
    )
    value = dict(best["setting"]) if best["capacity"] is not None else None
    # The point to use: the setting at its capacity (its job's command is the one to run).
    point = {**value, axis: best["capacity"]} if value is not None else None
    missing = list(sw.missing)
    return Verdict(
        "capacity", value, _status(missing, reasons), missing, axis, numbers, point, reasons
    )


def _rank(s: SettingCapacity) -> float:
    """Capacity first; a setting that held no load ranks last."""
    return -math.inf if s["capacity"] is None else float(s["capacity"])


def _order_key(s: SettingCapacity) -> tuple[float, float]:
    """Capacity, then goodput in tokens at it: settings that held the same load are named in
    that order (the tie itself keeps the verdict provisional)."""
    return (-_rank(s), -(s["goodput_tok_s"] or 0.0))


def _order(v: Any) -> tuple[int, float, str]:
    return (0, float(v), "") if _is_num(v) and not isinstance(v, bool) else (1, 0.0, norm(v))


def _is_at_load(c: Cell, load: float | None, axis: str) -> bool:
    return load is not None and _num(c.values.get(axis)) == load


def _is_at(c: Cell, s: SettingCapacity, axis: str) -> bool:
    same = all(norm(c.values.get(k)) == norm(v) for k, v in s["setting"].items())
    return same and _is_at_load(c, s["capacity"], axis)


def _setting(sw: Sweep, axis: str, where: Point, cells: Sequence[Cell]) -> SettingCapacity:
    """One setting's rows, by load, and its capacity."""
    rows = sorted(
        (_row(sw, axis, c) for c in cells if _is_num(c.values.get(axis))), key=lambda r: r["load"]
    )
    capacity: CapacityRow | None = None
    for r in rows:
        if not r["held"]:
            break
        capacity = r
    above = [r for r in rows if capacity is None or r["load"] > capacity["load"]]
    bracketed = capacity is not None and bool(above)
    nxt = above[0] if above else None
    marginal = (capacity is not None and capacity["marginal"]) or (
        nxt is not None and nxt["marginal"] and not nxt["held"]
    )
    return {
        "setting": dict(where),
        "capacity": capacity["load"] if capacity else None,
        "capacity_rps": capacity["offered_rps"] if capacity else None,
        "bracketed": bracketed,
        "below_lowest": capacity is None and bool(rows),
        "marginal": marginal,
        "goodput_tok_s": capacity["goodput_tok_s"] if capacity else None,
        "rows": rows,
    }


def _row(sw: Sweep, axis: str, c: Cell) -> CapacityRow:
    """One load of one setting: its figures (means over the cell's jobs) and whether it held."""
    jobs = [sw.row(j) for j in c.jobs]
    ended = next((str(r["open_loop_ended"]) for r in jobs if r.get("open_loop_ended")), None)
    failed = sum(int(r.get("calls_failed") or 0) for r in jobs)
    values = _values(c)
    breaks = sw.objective.meets(values)
    # Every repeat must hold: one that broke the SLO or ended at a bound breaks the load.
    each = [sw.objective.meets({m: _num(r.get(m)) for m in sw.objective.slo}) for r in jobs]
    held = ended is None and failed == 0 and not breaks and not any(each)
    noise = sw.noise if sw.noise is not None else sw.min_effect
    marginal = ended is None and any(
        v is not None and limit > 0 and abs(v / limit - 1) <= noise
        for m, limit in sw.objective.slo.items()
        if (v := values.get(m)) is not None
    )
    return {
        "load": _num(c.values.get(axis)) or 0.0,
        "offered_rps": _mean(jobs, "open_loop_offered_rps"),
        "achieved_rps": _mean(jobs, "open_loop_achieved_rps"),
        "ttft_ms_p50": _mean(jobs, "ttft_ms_p50"),
        "ttft_ms_p95": _mean(jobs, "ttft_ms_p95"),
        "ttft_ms_p99": _mean(jobs, "ttft_ms_p99"),
        "e2e_ms_p95": _mean(jobs, "e2e_ms_p95"),
        "goodput_rps": _mean(jobs, "open_loop_goodput_rps"),
        "goodput_tok_s": _mean(jobs, "open_loop_goodput_tok_s"),
        "output_tok_s": _mean(jobs, "output_tok_s"),
        "per_user_tok_s": _mean(jobs, "seq_decode_tok_s"),
        "ended": ended,
        "calls_failed": failed,
        "breaks": breaks,
        "held": held,
        "marginal": marginal,
        "jobs": list(c.jobs),
    }


def _num(v: object) -> float | None:
    return float(v) if _is_num(v) else None


def _mean(rows: Sequence[Mapping[str, object]], key: str) -> float | None:
    vals = [float(str(r[key])) for r in rows if _is_num(r.get(key))]
    return sum(vals) / len(vals) if vals else None


def next_loads(n: CapacityNumbers) -> list[float]:
    """The next round of a bisection on the load, per setting: geometrically halfway between
    its capacity and the lowest load that broke it, while those are more than BRACKET apart;
    twice the highest load where even that held; half the lowest where even that broke.
    Loads already tried are not proposed again; three significant digits."""
    tried = {r["load"] for s in n.settings or [] for r in s["rows"]}
    new: list[float] = []
    for s in n.settings or []:
        loads = [r["load"] for r in s["rows"]]
        if not loads:
            continue
        if s["capacity"] is None:
            want = min(loads) / 2
        elif not s["bracketed"]:
            want = max(loads) * 2
        else:
            broke = min(x for x in loads if x > s["capacity"])
            if broke / s["capacity"] <= BRACKET:
                continue
            want = math.sqrt(broke * s["capacity"])
        want = float(f"{want:.3g}")
        if want not in tried and want not in new:
            new.append(want)
    return sorted(new)

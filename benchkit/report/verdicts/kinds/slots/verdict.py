"""The slots verdict: where more parallel slots stop paying (the knee), per backend."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from benchkit.compare import questions
from benchkit.compare.engine import Engine
from benchkit.report.analysis.numbers import (
    Beyond,
    ElsewhereKnee,
    Faster,
    PartialRound,
    SlotsNumbers,
    SlotsRow,
)
from benchkit.report.analysis.sweep import (
    OUTPUT,
    PROVISIONAL,
    SEQ_DECODE,
    SEQS_PER_STEP,
    SLOT_LATENCY,
    THROUGHPUT,
    Cell,
    Sweep,
    norm,
)
from benchkit.report.verdicts.common import (
    Verdict,
    _capped,
    _cold,
    _context,
    _first_num,
    _group,
    _number,
    _run_noise,
    _stalled,
    _status,
    _taint,
    _uncapped_values,
    _values,
)
from benchkit.report.verdicts.engine_of import comparison_json, engine_of, machine_of, point_of


def knee(
    counts: Sequence[int],
    cost: Sequence[float | None],
    gain: float,
    same: Callable[[int, int], bool] = lambda best, i: False,
) -> tuple[int | None, bool]:
    """The smallest count whose cost (lower is better) is within `gain` of the best count's,
    or that `same(best, i)` says is no different from it; (knee, reached). `reached` is False
    when that is the largest count: every smaller count was more than `gain` worse, so the
    curve was still improving where the sweep stopped. (None, False) without any cost."""
    ok = [i for i, c in enumerate(cost) if c is not None]
    if not ok:
        return None, False
    best = min(ok, key=lambda i: float(cost[i] or 0.0))
    limit = float(cost[best] or 0.0) * (1 + gain)
    k = next(i for i in ok if float(cost[i] or 0.0) <= limit or same(best, i))
    return counts[k], not (k == len(counts) - 1 and len(counts) > 1)


def slots_verdict(sw: Sweep, backend: Verdict | None) -> Verdict | None:
    """The knee of the study's objective against slots, on the series (one backend, MTP
    setting, ...) that holds the best point: the smallest slot count within the knee margin of
    the best count (or no different from it, with repeats). Points that break the study's SLO
    are left out; a faster count than the knee, runaway outputs at the knee, a knee margin
    inside a single run's noise and contaminated jobs are named."""
    if "slots" not in sw.varying:
        return None
    m = sw.metric
    rest = [k for k in sw.varying if k != "slots"]
    series = _group(sw.cells, rest)
    if not series:
        return Verdict("slots", None, PROVISIONAL, list(sw.missing), m, reasons=["no_comparison"])

    def eligible(c: Cell) -> bool:
        return c.mean(m) is not None and not sw.objective.meets(_values(c))

    primary = _primary(sw, list(series.values()), backend, eligible)
    ctx = _context(primary[0], rest) if primary else {}
    missing = sw.missing_where(ctx)
    counts = [int(_number(c.values["slots"])) for c in primary]
    cost = [c.mean(m) if eligible(c) else None for c in primary]
    rows = _rows(sw, primary, counts)
    known = SlotsNumbers(
        series=ctx,
        rows=rows,
        knee_gain=sw.knee_gain,
        objective=sw.objective.to_json(),
        slo_excluded=[
            {"slots": r["slots"], "breaks": r["slo_breaks"]} for r in rows if r["slo_breaks"]
        ],
    )
    reasons: list[str] = []
    known = replace(
        known, contaminated=_taint(sw, primary, reasons, engine=True), knee_reached=False
    )
    if all(c is None for c in cost):
        reasons.append("slo_none" if primary else "no_comparison")
        return Verdict("slots", None, PROVISIONAL, missing, m, known, None, reasons)
    if len(primary) < 2:
        return Verdict(
            "slots",
            counts[0],
            PROVISIONAL,
            missing,
            m,
            known,
            {**ctx, "slots": counts[0]},
            [*reasons, "one_slot_count"],
        )
    k, numbers = _knee_numbers(sw, series, primary, counts, cost, rows, known, eligible, reasons)
    return Verdict(
        "slots", k, _status(missing, reasons), missing, m, numbers, {**ctx, "slots": k}, reasons
    )


def _primary(
    sw: Sweep,
    candidates: list[list[Cell]],
    backend: Verdict | None,
    eligible: Callable[[Cell], bool],
) -> list[Cell]:
    """The series the verdict is drawn on, its measured cells by slot count: the one holding
    the best eligible point, among the backend verdict's backend's series where it has any."""
    m = sw.metric

    def best_of(cells: Sequence[Cell]) -> float:
        return min((float(c.mean(m) or 0.0) for c in cells if eligible(c)), default=math.inf)

    if backend is not None and isinstance(backend.point, dict):
        preferred = [g for g in candidates if g[0].get("backend") == norm(backend.point["backend"])]
        candidates = preferred or candidates
    return sorted(
        (c for c in min(candidates, key=best_of) if c.mean(m) is not None),
        key=lambda c: _number(c.values["slots"]),
    )


def _knee_numbers(
    sw: Sweep,
    series: dict[tuple[str, ...], list[Cell]],
    primary: Sequence[Cell],
    counts: Sequence[int],
    cost: Sequence[float | None],
    rows: Sequence[SlotsRow],
    known: SlotsNumbers,
    eligible: Callable[[Cell], bool],
    reasons: list[str],
) -> tuple[int, SlotsNumbers]:
    """The knee of a series of two counts or more (`rows` its table) and the numbers its
    sentences state, `known` completed; what weakens it is added to `reasons`."""
    # The knee is a question to the comparison engine (benchkit.compare): the fewest count
    # whose time is within the knee margin of the best count's, every count below it more
    # than the margin slower; complete only when each of those comparisons is decided on its
    # own pairs (and machine), never on another pair's noise.
    eng = engine_of(sw)
    figures = {point_of(c): float(v) for c, v in zip(primary, cost, strict=True) if v is not None}
    kq = questions.knee(eng, [point_of(c) for c in primary], figures)
    labels = [point_of(c) for c in primary]
    ki, bi = labels.index(str(kq.knee)), labels.index(str(kq.best))
    k, reached = counts[ki], kq.reached
    if not reached:
        # No count beyond the knee was measured to show the curve had flattened.
        reasons.append("knee_not_reached")
    if not kq.complete:
        reasons.append("open_pairs")
    if kq.across:
        reasons.append("knee_across")
    _run_noise(kq.rests_on, reasons)
    # The figures the sentences state are the comparisons' (paired, one machine where there
    # is one), not the table's means, which may come from two machines.
    ratio = _ratios(eng, labels, cost, ki)
    faster = _faster(rows, ratio, counts, ki, bi)
    cap = _capped(sw, primary[ki], primary)
    knee_uncapped = None
    if cap is not None:
        reasons.append("capped")
        knee_uncapped = _knee_uncapped(sw, primary, counts, k, eligible)
    beyond = _beyond(rows, ratio, counts, ki)
    partial = _partial_rounds(sw, primary, counts, counts[bi], k)
    if partial:
        reasons.append("partial_rounds")
    numbers = replace(
        known,
        knee_reached=reached,
        best_slots=counts[bi],
        best_throughput_slots=min(rows, key=lambda r: r["s_per_unit_throughput"] or math.inf)[
            "slots"
        ],
        faster=faster,
        comparisons=[comparison_json(sw, c) for c in kq.rests_on],
        open=[comparison_json(sw, c) for c in kq.open],
        across=[comparison_json(sw, c) for c in kq.across] or None,
        knee_low=counts[labels.index(kq.low)] if kq.low not in (None, kq.knee) else None,
        knee_high=counts[labels.index(kq.high)] if kq.high not in (None, kq.knee) else None,
        above_open=[counts[labels.index(p)] for p in kq.above] or None,
        capped=cap,
        stalled=_stalled(sw, primary, reasons, "slots"),
        cold=_cold(sw, primary),
        knee_uncapped=knee_uncapped,
        beyond=beyond,
        latency_grows=(all((b["latency_ratio"] or 0) > 1 for b in beyond) if beyond else None),
        partial_rounds=partial or None,
        elsewhere=_elsewhere(sw, eng, series, primary, k, eligible) or None,
    )
    return k, numbers


def _knee_uncapped(
    sw: Sweep,
    primary: Sequence[Cell],
    counts: Sequence[int],
    k: int,
    eligible: Callable[[Cell], bool],
) -> int | None:
    """Where runaway outputs hit the cap at the knee: the knee on the uncapped figures where
    every count has one and it differs from `k`, else None."""
    plain = [
        v if eligible(c) else None
        for c, v in zip(primary, _uncapped_values(sw, primary), strict=True)
    ]
    if all(x is not None for x in plain):
        k2, _ = knee(counts, plain, sw.knee_gain)
        if k2 != k:
            return k2
    return None


def _rows(sw: Sweep, primary: Sequence[Cell], counts: Sequence[int]) -> list[SlotsRow]:
    """One row per slot count of the series: the objective and what stands beside it."""
    m = sw.metric
    rows: list[SlotsRow] = []
    machines = [_machines(sw, c) for c in primary]
    spans = len({x for x in machines if x}) > 1
    for i, c in enumerate(primary):
        prev = primary[i - 1].mean(m) if i else None
        one = machines[i] and " + " not in machines[i] and machines[i] == machines[i - 1]
        if spans and not one:
            # Two cards differ by more than the margin on one point (the H100 study: 9-16%):
            # the table does not compare rows of different machines; the verdict compares
            # them on one machine or bridged.
            prev = None
        rows.append(
            {
                "slots": counts[i],
                "objective": c.mean(m),
                "objective_uncapped": c.mean(f"{m}_uncapped"),
                "change_vs_previous": None if not prev else float(c.mean(m) or 0.0) / prev - 1,
                "s_per_unit_throughput": c.mean(THROUGHPUT),
                "s_per_unit_slot_latency": c.mean(SLOT_LATENCY),
                "output_tok_s": c.mean(OUTPUT),
                "seq_decode_tok_s": c.mean(SEQ_DECODE),
                "seqs_per_step": c.mean(SEQS_PER_STEP),
                "ctx_total": _first_num(sw.df, c.jobs, "ctx_total"),
                "slo_breaks": sw.objective.meets(_values(c)),
                "capped": _capped(sw, c, primary) is not None,
            }
        )
        if spans:
            rows[-1]["machine"] = machines[i] or "?"
    return rows


def _machines(sw: Sweep, c: Cell) -> str:
    """The machines a cell's jobs ran on, short ('GPU-3d382b62 + GPU-dd00b660'), '' unknown."""
    found = {machine_of(sw, j) for j in c.jobs}
    found |= {x for j in c.jobs for x in sw.unit_machines.get(j, {}).values()}
    parts = sorted({_short(p) for x in found for p in x.split(" + ") if p.strip()})
    return " + ".join(parts)


def _short(machine: str) -> str:
    """A machine's last word (the card's UUID, the host), with the card memory in use at the
    job's start where it marks a shared card ('h200@vm [20.2 GiB]')."""
    name, _, memory = machine.strip().partition(" [")
    return name.split(" ")[-1] + (f" [{memory}" if memory else "")


def _ratios(
    eng: Engine, labels: Sequence[str], cost: Sequence[float | None], ki: int
) -> list[float | None]:
    """Each count's time over the knee's: the engine's comparison where there is one (paired
    units, one machine or bridged), else the table's means."""
    out: list[float | None] = []
    for i, label in enumerate(labels):
        c = eng.compare(labels[ki], label) if i != ki else None
        if c is not None and c.ratio is not None:
            out.append(c.ratio)
        elif cost[i] is not None and cost[ki]:
            out.append(float(cost[i] or 0.0) / float(cost[ki] or 1.0))
        else:
            out.append(None)
    return out


def _faster(
    rows: Sequence[SlotsRow],
    ratio: Sequence[float | None],
    counts: Sequence[int],
    ki: int,
    bi: int,
) -> Faster | None:
    """The best count when it is not the knee: how much faster, at what context and latency."""
    if bi == ki or ratio[bi] is None:
        return None
    k = counts[ki]
    ck, cb = rows[ki]["ctx_total"], rows[bi]["ctx_total"]
    lk, lb = rows[ki]["s_per_unit_slot_latency"], rows[bi]["s_per_unit_slot_latency"]
    return {
        "slots": counts[bi],
        "faster_by": 1 - float(ratio[bi] or 0.0),
        "ctx_ratio": cb / ck if cb and ck else counts[bi] / k,
        "latency_ratio": lb / lk if lb and lk else None,
    }


def _beyond(
    rows: Sequence[SlotsRow], ratio: Sequence[float | None], counts: Sequence[int], ki: int
) -> list[Beyond]:
    """What each count above the knee gains on the objective and costs in latency and context."""
    k = counts[ki]
    beyond: list[Beyond] = []
    for i in range(ki + 1, len(counts)):
        lat_k, lat_i = rows[ki]["s_per_unit_slot_latency"], rows[i]["s_per_unit_slot_latency"]
        ctx_k, ctx_i = rows[ki]["ctx_total"], rows[i]["ctx_total"]
        r = ratio[i]
        # The table's latencies divide two jobs' own figures: not where those ran on different
        # machines (the change beside it is the engine's, on one machine or bridged).
        mk, mi = rows[ki].get("machine"), rows[i].get("machine")
        apart = mk != mi or " + " in str(mk or "")
        beyond.append(
            {
                "slots": counts[i],
                "change_vs_knee": r - 1 if r is not None else 0.0,
                "latency_ratio": lat_i / lat_k if lat_i and lat_k and not apart else None,
                "ctx_ratio": ctx_i / ctx_k if ctx_i and ctx_k else counts[i] / k,
                "ctx_total": ctx_i,
            }
        )
    return beyond


def _partial_rounds(
    sw: Sweep, primary: Sequence[Cell], counts: Sequence[int], best: int, k: int
) -> list[PartialRound]:
    """The counts the knee rests on (every count of the series from 2 slots) whose units did
    not fill whole rounds of their slots: n units on s slots run ceil(n/s) rounds, and
    1 - n / (rounds x s) of the slot-time has no unit to run (6 units on 4 slots: a round of
    4, one of 2, a quarter idle), so the count is measured slower than its slots run a full
    workload: the run did not exercise it (the issue's "enough units for every slot to work
    whole rounds").

    Units of unequal length leave slots idle at the end of any round, whole or not (a review
    found 15% idle at 16 slots on 16 units, one whole round, against 4% at 3 slots on a last
    round of 1): where the calls measured the idle share, a partial round is named only where
    its count's idle exceeds every whole-round count's of the series, the figure that shows
    the last round cost more than unequal lengths do."""
    out: list[PartialRound] = []
    whole: list[float] = []
    for c, s in zip(primary, counts, strict=True):
        n = _units(sw, c)
        seen = [sw.slots_idle[j] for j in c.jobs if j in sw.slots_idle]
        if n and seen and n % s == 0:
            whole.append(sum(seen) / len(seen))
    for c, s in zip(primary, counts, strict=True):
        n = _units(sw, c)
        # A count past the knee too, where its idle was measured: "no larger count was faster"
        # rests on it (the first run's 4 slots on 6 units, a last round of 2, 19% of slot-time
        # idle against 2 slots' 0.2%).
        seen = [sw.slots_idle[j] for j in c.jobs if j in sw.slots_idle]
        if s < 2 or not n or (s > k and s != best and not seen):
            continue
        idle = 1 - n / (math.ceil(n / s) * s)
        if idle > 0:
            entry: PartialRound = {"slots": s, "units": n, "idle_share": idle}
            if seen:
                entry["measured_idle"] = sum(seen) / len(seen)
                if not whole or entry["measured_idle"] <= max(whole):
                    continue
            out.append(entry)
    return out


def _units(sw: Sweep, c: Cell) -> int | None:
    """The fewest units a cell's jobs completed (None: not known)."""
    units = [sw.row(j).get("units_completed") for j in c.jobs]
    known = [int(float(u)) for u in units if isinstance(u, int | float) and u == u and u > 0]
    return min(known) if known else None


def _elsewhere(
    sw: Sweep,
    eng: Engine,
    series: dict[tuple[str, ...], list[Cell]],
    primary: Sequence[Cell],
    k: int,
    eligible: Callable[[Cell], bool],
) -> list[ElsewhereKnee]:
    """The other series' knees where they differ from this one's: a knee drawn on one
    ubatch (or MTP setting, ...) holds there, and the words say where it does not, with this
    knee's count against that series' knee on that series' own comparison."""
    out: list[ElsewhereKnee] = []
    mine = {id(c) for c in primary}
    for group in series.values():
        cells = sorted(
            (c for c in group if id(c) not in mine and eligible(c)),
            key=lambda c: _number(c.values["slots"]),
        )
        if len(cells) < 2 or any(id(c) in mine for c in group):
            continue
        figures = {point_of(c): float(c.mean(sw.metric) or 0.0) for c in cells}
        kq = questions.knee(eng, [point_of(c) for c in cells], figures)
        at = {point_of(c): int(_number(c.values["slots"])) for c in cells}
        there = at.get(str(kq.knee))
        if there is None or there == k:
            continue
        rest = [x for x in sw.varying if x != "slots"]
        same_k = next((p for p, n in at.items() if n == k), None)
        comp = eng.compare(str(kq.knee), same_k) if same_k is not None else None
        out.append(
            {
                "series": _context(cells[0], rest),
                "knee": there,
                "reached": kq.reached,
                "comparison": comparison_json(sw, comp) if comp is not None else None,
            }
        )
    return out

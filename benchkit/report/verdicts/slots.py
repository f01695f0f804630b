"""The slots verdict: where more parallel slots stop paying (the knee), per backend."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from benchkit.report import evidence as ev
from benchkit.report.numbers import (
    Beyond,
    Faster,
    NoiseEntry,
    SlotsNumbers,
    SlotsRow,
)
from benchkit.report.sweep import (
    OUTPUT,
    PROVISIONAL,
    SEQ_DECODE,
    SEQS_PER_STEP,
    SLOT_LATENCY,
    THROUGHPUT,
    Cell,
    Sweep,
    norm,
    t95,
)
from benchkit.report.verdicts.common import (
    Verdict,
    _capped,
    _cold,
    _context,
    _group,
    _noise_entry,
    _stalled,
    _status,
    _taint,
    _uncapped_values,
    _values,
)
from benchkit.report.verdicts.drafting import _first_num, _number


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

    def best_of(cells: Sequence[Cell]) -> float:
        return min((float(c.mean(m) or 0.0) for c in cells if eligible(c)), default=math.inf)

    candidates = list(series.values())
    if backend is not None and isinstance(backend.point, dict):
        preferred = [g for g in candidates if g[0].get("backend") == norm(backend.point["backend"])]
        candidates = preferred or candidates
    primary = sorted(
        (c for c in min(candidates, key=best_of) if c.mean(m) is not None),
        key=lambda c: _number(c.values["slots"]),
    )
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
    known = replace(known, contaminated=_taint(sw, primary, reasons), knee_reached=False)
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

    series_noise = _series_noise(sw, primary, cost)

    def same(best: int, i: int) -> bool:
        # No different from the best, on what this sweep measured: intervals that overlap
        # (repeats), or a single run's margin inside the series' per-unit noise, whatever its
        # size. A declared noise (study.noise) is a bound stated for every pair, not a
        # measurement of this one: a margin inside it keeps the knee's direction and makes it
        # provisional (_noise), it does not make the counts equal.
        j = sw.judge(primary[best], primary[i])
        if j is None:
            return False
        if j.effect == "worse" and j.basis == "per_unit" and series_noise is not None:
            return j.inside_noise or j.rel <= series_noise
        return (j.effect == "same" and j.basis == "ci") or (
            j.effect == "worse" and j.inside_noise and j.basis != "declared"
        )

    k, reached = knee(counts, cost, sw.knee_gain, same)
    assert k is not None
    if not reached:
        # No count beyond the knee was measured to show the curve had flattened.
        reasons.append("knee_not_reached")
    ki = counts.index(k)
    bi = min((i for i, c in enumerate(cost) if c is not None), key=lambda i: float(cost[i] or 0.0))
    faster = _faster(rows, cost, counts, ki, bi)
    noise = _noise(sw, primary, cost, ki, bi, faster, reasons, series_noise)
    cap = _capped(sw, primary[ki], primary)
    knee_uncapped = None
    if cap is not None:
        reasons.append("capped")
        plain = [
            v if eligible(c) else None
            for c, v in zip(primary, _uncapped_values(sw, primary), strict=True)
        ]
        if all(x is not None for x in plain):
            k2, _ = knee(counts, plain, sw.knee_gain)
            if k2 != k:
                knee_uncapped = k2
    beyond = _beyond(primary, rows, cost, counts, ki, m)
    numbers = replace(
        known,
        knee_reached=reached,
        flat_from=_flat_from(cost, counts, ki, bi, sw.knee_gain, same) if reached else None,
        best_slots=counts[bi],
        best_throughput_slots=min(rows, key=lambda r: r["s_per_unit_throughput"] or math.inf)[
            "slots"
        ],
        faster=faster,
        noise=noise,
        capped=cap,
        stalled=_stalled(sw, primary, reasons, "slots"),
        cold=_cold(sw, primary),
        knee_uncapped=knee_uncapped,
        beyond=beyond,
        latency_grows=(all((b["latency_ratio"] or 0) > 1 for b in beyond) if beyond else None),
    )
    return Verdict(
        "slots", k, _status(missing, reasons), missing, m, numbers, {**ctx, "slots": k}, reasons
    )


def _rows(sw: Sweep, primary: Sequence[Cell], counts: Sequence[int]) -> list[SlotsRow]:
    """One row per slot count of the series: the objective and what stands beside it."""
    m = sw.metric
    rows: list[SlotsRow] = []
    for i, c in enumerate(primary):
        prev = primary[i - 1].mean(m) if i else None
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
    return rows


def _faster(
    rows: Sequence[SlotsRow], cost: Sequence[float | None], counts: Sequence[int], ki: int, bi: int
) -> Faster | None:
    """The best count when it is not the knee: how much faster, at what context and latency."""
    if bi == ki:
        return None
    k = counts[ki]
    ck, cb = rows[ki]["ctx_total"], rows[bi]["ctx_total"]
    lk, lb = rows[ki]["s_per_unit_slot_latency"], rows[bi]["s_per_unit_slot_latency"]
    return {
        "slots": counts[bi],
        "faster_by": 1 - float(cost[bi] or 0.0) / float(cost[ki] or 1.0),
        "ctx_ratio": cb / ck if cb and ck else counts[bi] / k,
        "latency_ratio": lb / lk if lb and lk else None,
    }


def _series_noise(sw: Sweep, primary: Sequence[Cell], cost: Sequence[float | None]) -> float | None:
    """The noise the knee is judged against when single runs are compared on their per-unit
    times: the largest paired per-unit spread of the series' counts against the best count,
    as the 95% half-width on the most units any of those pairs shares. Each pair's spread
    rests on a few units and varies from pair to pair; the knee calls a count no different
    from the best when any pair of the series shows that much noise, the cautious side, since
    "no different" makes the verdict provisional, never settled. In a raced sweep a count
    measured on fewer units is not noisier for that: its spread is projected to the units the
    others had (a count the race stopped included, as the race itself takes it:
    benchkit.racing.policy.series_noise)."""
    ok = [i for i, c in enumerate(cost) if c is not None]
    if not ok:
        return None
    best = min(ok, key=lambda i: float(cost[i] or 0.0))
    spreads = []
    for i in ok:
        j = None if i == best else sw.judge(primary[best], primary[i])
        if j is None or j.basis not in ("per_unit", "race"):
            continue
        spread = ev.paired_spread(
            sw.spans.get(primary[best].jobs[0], {}), sw.spans.get(primary[i].jobs[0], {})
        )
        if spread is not None:
            spreads.append(spread)
    if not spreads:
        return None
    return ev.noise_at(max(sd for sd, _ in spreads), max(n for _, n in spreads), t95)


def _flat_from(
    cost: Sequence[float | None],
    counts: Sequence[int],
    ki: int,
    bi: int,
    gain: float,
    same: Callable[[int, int], bool],
) -> int | None:
    """The knee, when it was taken on the noise and the curve is flat from it: a count more
    than `gain` worse than the best but no different from it, whose every count from the knee
    up is within `gain` of the best or no different from it or from the knee (None: a knee
    within the margin, the best count itself, or a count past it measurably worse)."""
    limit = float(cost[bi] or 0.0) * (1 + gain)
    if ki == bi or float(cost[ki] or 0.0) <= limit:
        return None
    for i in range(ki, len(counts)):
        if i == bi or cost[i] is None:
            continue
        # Flat: no different from the best count, or from the knee itself.
        if not (float(cost[i] or 0.0) <= limit or same(bi, i) or same(i, ki) or same(ki, i)):
            return None
    return counts[ki]


def _noise(
    sw: Sweep,
    primary: Sequence[Cell],
    cost: Sequence[float | None],
    ki: int,
    bi: int,
    faster: Faster | None,
    reasons: list[str],
    series_noise: float | None = None,
) -> list[NoiseEntry] | None:
    """Where the knee rests on a difference inside the noise (adds "inside_noise")."""
    noise: list[NoiseEntry] | None = None
    # A knee taken because it is no different from the best count (intervals that overlap,
    # a margin inside the noise), not because it is within the knee margin: the data cannot
    # tell them apart yet.
    if faster is not None and float(cost[ki] or 0.0) > float(cost[bi] or 0.0) * (1 + sw.knee_gain):
        j = sw.judge(primary[bi], primary[ki])
        if j is not None:
            reasons.append("inside_noise")
            entry = _noise_entry(j, primary[bi].values, primary[ki].values)
            if j.basis == "per_unit" and series_noise is not None and not j.inside_noise:
                entry["noise"], entry["basis"] = series_noise, "series"
            noise = [entry]
            faster["inside_noise"] = True
    # Is the knee's margin over the next smaller count real?
    if ki > 0:
        j = sw.judge(primary[ki], primary[ki - 1])
        inside = j is not None and j.inside_noise
        if j is not None and j.basis == "per_unit" and series_noise is not None:
            inside = j.inside_noise or j.rel <= series_noise
        if j is not None and inside and j.effect == "worse" and noise is None:
            reasons.append("inside_noise")
            entry = _noise_entry(j, primary[ki].values, primary[ki - 1].values)
            if not j.inside_noise and series_noise is not None:
                entry["noise"], entry["basis"] = series_noise, "series"
            noise = [entry]
    return noise


def _beyond(
    primary: Sequence[Cell],
    rows: Sequence[SlotsRow],
    cost: Sequence[float | None],
    counts: Sequence[int],
    ki: int,
    m: str,
) -> list[Beyond]:
    """What each count above the knee gains on the objective and costs in latency and context."""
    k = counts[ki]
    beyond: list[Beyond] = []
    for i in range(ki + 1, len(primary)):
        lat_k, lat_i = rows[ki]["s_per_unit_slot_latency"], rows[i]["s_per_unit_slot_latency"]
        ctx_k, ctx_i = rows[ki]["ctx_total"], rows[i]["ctx_total"]
        beyond.append(
            {
                "slots": counts[i],
                "change_vs_knee": float(primary[i].mean(m) or 0.0) / float(cost[ki] or 1.0) - 1,
                "latency_ratio": lat_i / lat_k if lat_i and lat_k else None,
                "ctx_ratio": ctx_i / ctx_k if ctx_i and ctx_k else counts[i] / k,
                "ctx_total": ctx_i,
            }
        )
    return beyond

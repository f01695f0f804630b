"""The backend verdict: which backend is faster on the study's objective, by how much,
and how sure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchkit.compare.engine import ACROSS, OPEN, WORSE, Comparison, Engine
from benchkit.report.analysis.numbers import (
    BackendContext,
    BackendNumbers,
    BuildTraits,
)
from benchkit.report.analysis.sweep import PROVISIONAL, Cell, Sweep, _is_num
from benchkit.report.verdicts.common import (
    Verdict,
    _cold,
    _context,
    _ctx_sort,
    _group,
    _run_noise,
    _stalled,
    _status,
    _taint,
)
from benchkit.report.verdicts.engine_of import comparison_json, engine_of, point_of


def backend_verdict(sw: Sweep) -> Verdict | None:
    """Which backend is better on the study's objective, the ratio at each other setting
    (each slot count, with and without MTP, ...), and the winner. None when the backend
    did not vary. Each other backend is compared with the best of its setting by the
    comparison engine (benchkit.compare): on one machine or bridged, with the pair's own
    interval; a pair it leaves open makes the verdict provisional and is named."""
    if "backend" not in sw.varying:
        return None
    m = sw.metric
    rest = [k for k in sw.varying if k != "backend"]
    eng = engine_of(sw)
    contexts = []
    winners: dict[str, int] = {}
    clear: dict[str, int] = {}
    ties = 0
    comparisons: list[Comparison] = []
    used: list[Cell] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        scored = [c for c in group if c.mean(m) is not None]
        if len(scored) < 2:
            continue
        used += scored
        entry, real = _setting(sw, eng, scored, rest, comparisons)
        contexts.append(entry)
        winner = entry["winner"]
        if winner is None:
            ties += 1
        else:
            winners[winner] = winners.get(winner, 0) + 1
            if real:
                clear[winner] = clear.get(winner, 0) + 1
    missing = list(sw.missing)
    if not contexts:
        return Verdict(
            "backend",
            None,
            PROVISIONAL,
            missing,
            m,
            BackendNumbers(contexts=[]),
            reasons=["no_comparison"],
        )
    # One backend that wins wherever any difference counts is the winner (ties elsewhere
    # are listed in the numbers); two backends that each win somewhere is "mixed".
    if not winners:
        verdict: Any = "no difference"
    elif len(winners) == 1:
        verdict = next(iter(winners))
    else:
        verdict = "mixed"
    reasons: list[str] = []
    open_ = [c for c in comparisons if c.outcome == OPEN]
    if open_:
        reasons.append("open_pairs")
    _run_noise(comparisons, reasons)
    builds = builds_differ(sw, used)
    if builds:
        reasons.append("builds_differ")
    numbers = BackendNumbers(
        contexts=contexts,
        winners=winners,
        ties=ties,
        ratio_range=_ratio_range(sw, comparisons),
        range_over=_range_over(comparisons, len(contexts)),
        value_range=_value_range(contexts),
        compared=len(contexts),
        objective=sw.objective.to_json(),
        contaminated=_taint(sw, used, reasons, engine=True),
        stalled=_stalled(sw, used, reasons, "backend"),
        cold=_cold(sw, used),
        comparisons=[comparison_json(sw, c) for c in comparisons],
        open=[comparison_json(sw, c) for c in open_],
        builds_differ=builds or None,
    )
    point = None if verdict in ("mixed", "no difference") else {"backend": verdict}
    return Verdict(
        "backend", verdict, _status(missing, reasons), missing, m, numbers, point, reasons
    )


def builds_differ(sw: Sweep, cells: list[Cell]) -> dict[str, BuildTraits]:
    """Each backend's build traits that differ between the backends compared ({} where none
    do): a portable build against a native one, or builds made on different systems (their
    compilers), is a difference besides the backend that its ratio carries unisolated. A
    trait a backend's jobs do not agree on, or that some backend does not record, is left
    out: it is not one backend's."""
    by_backend: dict[str, list[BuildTraits]] = {}
    for c in cells:
        for job in c.jobs:
            by_backend.setdefault(str(c.values["backend"]), []).append(sw.build_traits.get(job, {}))
    if len(by_backend) < 2:
        return {}
    out: dict[str, BuildTraits] = {b: {} for b in by_backend}
    for key in ("portable", "built_on"):
        values = {}
        for backend, traits in by_backend.items():
            seen = {str(t.get(key)) for t in traits}
            if len(seen) != 1 or any(key not in t for t in traits):
                break
            values[backend] = traits[0][key]
        else:
            if len(set(map(str, values.values()))) > 1:
                for backend, v in values.items():
                    out[backend][key] = v
    return out if any(out.values()) else {}


def _setting(
    sw: Sweep,
    eng: Engine,
    scored: list[Cell],
    rest: list[str],
    comparisons: list[Comparison],
) -> tuple[BackendContext, bool]:
    """One setting of the other factors (`scored`: its backends' cells with a figure): its
    row, each other backend compared with the best one (the comparisons added to
    `comparisons`), and whether the best is decided better than one of them (else a winner
    is only the margin's, inside the noise)."""
    m = sw.metric
    best_c = min(scored, key=lambda c: float(c.mean(m) or 0.0))
    best_v = float(best_c.mean(m) or 0.0)
    entry: BackendContext = {"context": _context(best_c, rest), "values": {}, "ratios": {}}
    real = shaky = False
    for c in sorted(scored, key=lambda c: float(c.mean(m) or 0.0)):
        b = str(c.values["backend"])
        v = float(c.mean(m) or 0.0)
        entry["values"][b] = v
        entry["ratios"][b] = v / best_v if best_v else None
        if c is best_c:
            continue
        comp = eng.compare(point_of(best_c), point_of(c))
        if comp is None:
            continue
        # The table's ratio stays its own seconds' (the row prints them); the comparison's
        # figure, on paired units and one machine, is the verdict's and its sentence's.
        comparisons.append(comp)
        if comp.outcome == WORSE:
            real = True
        elif comp.outcome == OPEN:
            shaky = shaky or (comp.ratio or 0.0) > 1 + sw.knee_gain
    answers = _answers(sw, scored)
    if answers:
        entry["answers"] = answers
        tie = _near_tie(sw, scored, answers)
        if tie is not None:
            entry["near_tie"] = tie
    entry["winner"] = str(best_c.values["backend"]) if real or shaky else None
    entry["inside_noise"] = shaky and not real
    return entry, real


def _answers(sw: Sweep, cells: list[Cell]) -> dict[str, list[int]]:
    """Each backend's drift probes at one setting, [changed, probes], when any of them
    changed an answer against the reference ({} otherwise, or where no probe ran)."""
    out: dict[str, list[int]] = {}
    if "drift_changed_n" not in sw.df.columns:
        return out
    for c in cells:
        # The job's row (sw.row's index, NaN as None), not the frame filtered for each cell.
        row = sw.row(c.jobs[0])
        if not row:
            continue
        changed, probes = row.get("drift_changed_n"), row.get("drift_probes")
        if _is_num(changed) and _is_num(probes) and float(probes) > 0:
            out[str(c.values["backend"])] = [int(float(changed)), int(float(probes))]
    return out if any(k for k, _ in out.values()) and len(out) > 1 else {}


# Flips where the reference held the two tokens closer than this are near-ties tipping.
NEAR_TIE = 0.05


def _near_tie(sw: Sweep, cells: list[Cell], answers: Mapping[str, list[int]]) -> float | None:
    """The widest gap at which a backend with changed answers tipped the reference's choice,
    where every such gap is under NEAR_TIE: the answers changed only where a near-tie tipped,
    which rounding alone does. A backend's gap is where it flipped the likeliest token at a
    forced position (Drift.flip_gap); one that changed a greedy answer without such a flip
    is held to the reference's own median margin. None otherwise."""
    if "drift_flip_gap" not in sw.df.columns:
        return None
    gaps = []
    for c in cells:
        b = str(c.values["backend"])
        if b not in answers or not answers[b][0]:
            continue
        row = sw.row(c.jobs[0]) or {}
        gap = row.get("drift_flip_gap")
        gap = gap if _is_num(gap) else row.get("drift_ref_margin")
        if not _is_num(gap):
            return None
        gaps.append(float(str(gap)))
    return max(gaps) if gaps and max(gaps) < NEAR_TIE else None


def _range_over(comparisons: list[Comparison], contexts: int) -> int | None:
    """How many settings the ratio range is over, where the comparisons across machines
    (left out of it) leave fewer than every setting compared."""
    kept = {c.base for c in comparisons if c.machine != ACROSS}
    return len(kept) if kept and len(kept) < contexts else None


def _ratio_range(sw: Sweep, comparisons: list[Comparison]) -> dict[str, list[float]]:
    """Each slower backend's ratio to the best, least and most, over the comparisons made on
    one machine or bridged; comparisons across machines count only where there are no
    others (they are open, and named as such)."""
    backends = {point_of(c): str(c.values["backend"]) for c in sw.cells}
    kept = [c for c in comparisons if c.machine != ACROSS] or comparisons
    out: dict[str, list[float]] = {}
    for c in kept:
        if c.ratio is not None:
            out.setdefault(backends[c.other], []).append(c.ratio)
    return {b: [min(v), max(v)] for b, v in out.items()}


def _value_range(contexts: list[BackendContext]) -> dict[str, list[float]]:
    """Each backend's objective, least and most, across the settings compared: the size of
    the comparison the ledger keeps beside the ratios."""
    values: dict[str, list[float]] = {}
    for e in contexts:
        for b, v in e["values"].items():
            values.setdefault(b, []).append(v)
    return {b: [min(v), max(v)] for b, v in values.items()}

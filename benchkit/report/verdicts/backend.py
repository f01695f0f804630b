"""The backend verdict: which backend is faster on the study's objective, by how much,
and how sure.
"""

from __future__ import annotations

import math
from typing import Any

from benchkit.report.numbers import (
    BackendContext,
    BackendNumbers,
    NoiseEntry,
)
from benchkit.report.sweep import PROVISIONAL, Cell, Sweep
from benchkit.report.verdicts.common import (
    Verdict,
    _cold,
    _context,
    _ctx_sort,
    _group,
    _noise_entry,
    _stalled,
    _status,
    _taint,
)


def backend_verdict(sw: Sweep) -> Verdict | None:
    """Which backend is better on the study's objective, the ratio at each other setting
    (each slot count, with and without MTP, ...), and the winner. None when the backend
    did not vary. A win whose margins are all inside a single run's noise is provisional."""
    if "backend" not in sw.varying:
        return None
    m = sw.metric
    rest = [k for k in sw.varying if k != "backend"]
    contexts = []
    winners: dict[str, int] = {}
    clear: dict[str, int] = {}
    ties = 0
    ratios: dict[str, list[float]] = {}
    noise: list[NoiseEntry] = []
    used: list[Cell] = []
    for _, group in sorted(_group(sw.cells, rest).items(), key=lambda kv: _ctx_sort(kv[1], rest)):
        scored = [c for c in group if c.mean(m) is not None]
        if len(scored) < 2:
            continue
        used += scored
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
            ratios.setdefault(b, []).append(v / best_v if best_v else math.inf)
            j = sw.judge(best_c, c)
            if j is not None and j.effect == "worse":
                if j.inside_noise:
                    shaky = True
                    noise.append(_noise_entry(j, best_c.values, c.values))
                else:
                    real = True
        winner = str(best_c.values["backend"]) if real or shaky else None
        entry["winner"] = winner
        entry["inside_noise"] = shaky and not real
        contexts.append(entry)
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
    shaky = isinstance(verdict, str) and verdict in winners and not clear.get(verdict)
    if shaky:
        reasons.append("inside_noise")
    numbers = BackendNumbers(
        contexts=contexts,
        winners=winners,
        ties=ties,
        ratio_range={b: [min(v), max(v)] for b, v in ratios.items()},
        value_range=_value_range(contexts),
        compared=len(contexts),
        objective=sw.objective.to_json(),
        noise=noise if shaky else None,
        contaminated=_taint(sw, used, reasons),
        stalled=_stalled(sw, used, reasons, "backend"),
        cold=_cold(sw, used),
    )
    point = None if verdict in ("mixed", "no difference") else {"backend": verdict}
    return Verdict(
        "backend", verdict, _status(missing, reasons), missing, m, numbers, point, reasons
    )


def _value_range(contexts: list[BackendContext]) -> dict[str, list[float]]:
    """Each backend's objective, least and most, across the settings compared: the size of
    the comparison the ledger keeps beside the ratios."""
    values: dict[str, list[float]] = {}
    for e in contexts:
        for b, v in e["values"].items():
            values.setdefault(b, []).append(v)
    return {b: [min(v), max(v)] for b, v in values.items()}

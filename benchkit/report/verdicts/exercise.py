"""Could the run have shown a factor's effect at all? Checked before a factor is judged: a
factor the run never exercised has no verdict, only the reason and what to run instead.

- **slots**: a slot is busy only while a unit is in flight, and one unit's calls run one after
  another. With no more units than the smallest slot count, every count ran the same work in
  flight; where the server's own sequences per decode step (`seqs_per_step`) stayed near 1 at
  every count, the extra slots were idle whatever the units.
- **batch, ubatch**: a (micro-)batch larger than every prompt in flight splits nothing; values
  that all cover the longest prompt times the units in flight are the same setting here.
- **mtp, spec**: drafting that drafted no token is not drafting.

A KV cache type the server did not apply would belong here too; llama-server's log at its
default verbosity does not say which types it applied, so that is not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from benchkit.report.analysis.numbers import (
    DraftingNumbers,
    FactorValue,
    NotExercised,
    SlotsNumbers,
)
from benchkit.report.analysis.sweep import PROVISIONAL, SEQS_PER_STEP, Cell, Sweep, _is_num, norm
from benchkit.report.verdicts.common import Verdict

V = TypeVar("V", bound=Verdict | None)

# Sequences per decode step at or below this, at every slot count, is one slot at work.
ONE_SEQUENCE = 1.15
# Factors whose effect is splitting prompts into batches.
BATCH_FACTORS = ("batch", "ubatch")


def _num(x: object) -> float | None:
    return float(x) if _is_num(x) else None


def _row_num(sw: Sweep, c: Cell, key: str) -> float | None:
    """The smallest of a cell's jobs' values of a table column (None: no job has one)."""
    vals = [v for j in c.jobs if (v := _num(sw.row(j).get(key))) is not None]
    return min(vals) if vals else None


def _setting(sw: Sweep, c: Cell, key: str) -> float | None:
    """A numeric setting of a cell: its swept value, else the sweep's constant."""
    return _num(c.values[key]) if key in c.values else _num(sw.constants.get(key))


def _values(sw: Sweep, factor: str) -> list[FactorValue]:
    seen: dict[str, FactorValue] = {}
    for c in sw.cells:
        seen.setdefault(norm(c.values.get(factor)), c.values.get(factor))
    return list(seen.values())


def exercised(sw: Sweep, v: V) -> V:
    """A slots or drafting verdict, or, where the run could not exercise its factor, the same
    verdict without a value: provisional, its numbers kept, the reason in `not_exercised`."""
    if v is None:
        return v
    n = v.numbers
    if isinstance(n, SlotsNumbers):
        idle = not_exercised(sw, "slots")
    elif isinstance(n, DraftingNumbers):
        idle = not_exercised(sw, n.factor, n.on_value)
    else:
        return v
    if idle is None:
        return v
    v.numbers = replace(n, not_exercised=idle)
    v.verdict, v.point, v.status = None, None, PROVISIONAL
    v.reasons = ["not_exercised"]
    return v


def not_exercised(sw: Sweep, factor: str, on: FactorValue = None) -> NotExercised | None:
    """Why the sweep could not show `factor`'s effect, or None when it could (or when there is
    nothing to tell: fewer than two measured values)."""
    if factor not in sw.varying or len({c.get(factor) for c in sw.cells}) < 2:
        return None
    if factor == "slots":
        return _slots(sw)
    if factor in BATCH_FACTORS:
        return _batch(sw, factor)
    if factor in ("mtp", "spec"):
        return _drafting(sw, factor, on)
    return None


def _blank(sw: Sweep, factor: str, why: str) -> NotExercised:
    return {
        "factor": factor,
        "why": why,
        "values": _values(sw, factor),
        "units": None,
        "seqs_per_step": None,
        "prompt_tokens": None,
    }


def _slots(sw: Sweep) -> NotExercised | None:
    cells = [c for c in sw.cells if _num(c.values.get("slots")) is not None]
    units = [_row_num(sw, c, "units_completed") for c in cells]
    if cells and all(u is not None for u in units):
        in_flight = {
            min(float(c.values["slots"] or 0), float(u or 0))
            for c, u in zip(cells, units, strict=True)
        }
        if len(in_flight) < 2:
            out = _blank(sw, "slots", "units")
            out["units"] = int(min(u or 0 for u in units))
            return out
    seqs = [c.mean(SEQS_PER_STEP) for c in cells]
    if cells and all(s is not None for s in seqs):
        most = max(float(s or 0) for s in seqs)
        if most <= ONE_SEQUENCE:
            out = _blank(sw, "slots", "seqs_per_step")
            out["seqs_per_step"] = most
            return out
    return None


def _batch(sw: Sweep, factor: str) -> NotExercised | None:
    """Every value at least the longest prompt times the units in flight: the same setting."""
    longest: list[float] = []
    for ctx in _contexts(sw, factor):
        bounds: set[float] = set()
        for c in ctx:
            prompt = _row_num(sw, c, "max_prompt_tokens")
            v = _num(c.values.get(factor))
            if prompt is None or v is None:
                return None
            slots = _setting(sw, c, "slots") or 1.0
            units = _row_num(sw, c, "units_completed") or 1.0
            tokens = prompt * max(1.0, min(slots, units))
            if factor == "ubatch" and (b := _setting(sw, c, "batch")) is not None:
                tokens = min(tokens, b)
            bounds.add(min(v, tokens))
            longest.append(prompt)
        if len(bounds) > 1:
            return None
    out = _blank(sw, factor, "prompt")
    out["prompt_tokens"] = int(max(longest)) if longest else None
    return out


def _drafting(sw: Sweep, factor: str, value: FactorValue) -> NotExercised | None:
    """The drafter (`value`; any but none where None) on at every measured point, and not one
    token drafted."""
    off = {"false", "none", "0"}
    want = norm(value) if value is not None else None
    on = [
        c
        for c in sw.cells
        if (c.get(factor) == want if want is not None else c.get(factor) not in off)
    ]
    drafted = [_row_num(sw, c, "draft_tokens") for c in on]
    if on and all(d is not None and d == 0 for d in drafted):
        return _blank(sw, factor, "no_drafts")
    return None


def _contexts(sw: Sweep, factor: str) -> Sequence[list[Cell]]:
    rest = [k for k in sw.varying if k != factor]
    groups: dict[tuple[str, ...], list[Cell]] = {}
    for c in sw.cells:
        groups.setdefault(tuple(c.get(k) for k in rest), []).append(c)
    return list(groups.values())


def fills(slots: int, units: int) -> bool:
    """Whether `units` units fill `slots` slots in whole rounds: no more slots than units (the
    rule above: min(slots, units) are in flight, so a larger count runs as `units`), and no
    last round with slots left idle (the slots verdict's partial rounds)."""
    return 1 <= slots <= units and units % slots == 0

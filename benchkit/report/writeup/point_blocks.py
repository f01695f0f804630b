"""The points a Next run names, as Hydra sweeps that run those points and no other.

Hydra's basic sweeper runs the cross product of its overrides' values: a Next command that
cut each factor to the values its points hold (`backend=cuda,vulkan slots=1,2,4,8
mtp=false,true`) swept every combination of them, 20 points where it named 13 (a hostile
user's review). Here the named points are split into blocks, each a cross product of its own
values, so that the sweeps of all blocks together run exactly the named points; the open
comparisons they settle are kept within one block wherever a split allows it, since a
comparison is made inside one report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import permutations

# One point as `factor -> value as a command names it` (benchkit.report.verdicts.analyse.norm).
Named = dict[str, str]
# A cross product: each factor with the values it takes, in the order first met.
Block = dict[str, list[str]]

# Factors beyond this many are split in the order given (permutations of more cost too much),
# and so are points whose orders times their count exceed _WORK.
_ORDERED_UP_TO = 6
_WORK = 5_000


def blocks(points: Sequence[Named], pairs: Sequence[tuple[Named, Named]] = ()) -> list[Block]:
    """Cross products whose union is exactly `points`: each point once where that keeps
    every one of `pairs` (two points a comparison reads) inside one block; else one set of
    blocks per factor the pairs compare (a point compared on two factors runs in two), and
    the points of no pair once."""
    unique = _unique(points)
    once = _partition(unique, pairs)
    if all(_together(a, b, once) for a, b in pairs):
        return once
    by_factor: dict[tuple[str, ...], list[tuple[Named, Named]]] = {}
    for a, b in pairs:
        differ = tuple(sorted(k for k in {*a, *b} if a.get(k, "") != b.get(k, "")))
        by_factor.setdefault(differ, []).append((a, b))
    out: list[Block] = []
    for compared in by_factor.values():
        for block in _partition(_unique([p for pair in compared for p in pair]), compared):
            if block not in out:
                out.append(block)
    rest = [p for p in unique if not any(holds(b, p) for b in out)]
    return out + (_partition(rest, ()) if rest else [])


def _unique(points: Sequence[Named]) -> list[Named]:
    return list({tuple(sorted(p.items())): p for p in points}.values())


def _partition(unique: Sequence[Named], pairs: Sequence[tuple[Named, Named]]) -> list[Block]:
    """Cross products holding each of `unique` once, as few as the factor orders tried give,
    preferring those that split fewer of `pairs` across two blocks."""
    if not unique:
        return []
    factors = list(dict.fromkeys(k for p in unique for k in p))
    # Every order of the factors where that stays cheap: a 1,000-job report's 500 open points
    # over 5 factors took 120 orders of 500 points (3.5 s of its 6 s budget).
    tried = math.factorial(len(factors)) * len(unique)
    orders: Iterable[tuple[str, ...]] = (
        permutations(factors)
        if len(factors) <= _ORDERED_UP_TO and tried <= _WORK
        else iter([tuple(factors)])
    )
    best: tuple[int, int] | None = None
    chosen: list[Block] = []
    for order in orders:
        found = _split(unique, list(order))
        score = (sum(not _together(a, b, found) for a, b in pairs), len(found))
        if best is None or score < best:
            best, chosen = score, found
    return chosen


def _split(points: Sequence[Named], order: Sequence[str]) -> list[Block]:
    """The points as blocks: by the first factor's values, those values whose remaining
    points split alike share one block."""
    if not order:
        return [{}]
    head, rest = order[0], order[1:]
    by_value: dict[str, list[Named]] = {}
    for p in points:
        by_value.setdefault(p.get(head, ""), []).append(p)
    merged: dict[str, tuple[list[str], list[Block]]] = {}
    for value, mine in by_value.items():
        sub = _split(mine, rest)
        key = repr(sorted(repr(sorted(b.items())) for b in sub))
        merged.setdefault(key, ([], sub))[0].append(value)
    out: list[Block] = []
    for values, sub in merged.values():
        for b in sub:
            out.append({head: values, **b} if values != [""] else dict(b))
    return out


def _together(a: Named, b: Named, found: Sequence[Block]) -> bool:
    return any(holds(blk, a) and holds(blk, b) for blk in found)


def holds(block: Block, point: Named) -> bool:
    """Whether `point` is one of the points `block` sweeps."""
    return all(point.get(k, "") in v for k, v in block.items())

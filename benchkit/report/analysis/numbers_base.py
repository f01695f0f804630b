"""The parts the numbers of every verdict kind share (benchkit.report.analysis.numbers): a point,
the dataclass base whose `to_json` writes verdicts.json's `numbers`, and the TypedDicts of
contamination, stalls, cold starts, caps and SLO breaks that several kinds hold."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, NotRequired, TypedDict

# A factor's value as results and the planned space hold it (backend name, slot count, MTP
# on/off, a drafter's name, ...).
FactorValue = str | int | float | bool | None
Point = dict[str, FactorValue]


def _null_with(other: str) -> Any:
    """A field whose key is written (null included) whenever field `other` is set."""
    return field(default=None, metadata={"with": other})


def _always() -> Any:
    """A field whose key is always written, null included."""
    return field(default=None, metadata={"always": True})


def _internal() -> Any:
    """A field that steers `to_json` and is never written."""
    return field(default=False, metadata={"internal": True})


class _Numbers:
    """`to_json` for the dataclasses below."""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata.get("internal"):
                continue
            value = getattr(self, f.name)
            other = f.metadata.get("with")
            if f.metadata.get("always"):
                present = True
            elif other:
                present = getattr(self, other) not in (None, False)
            else:
                present = value is not None
            if present:
                out[f.name] = value
        return out


# ------------------------------------------------------------------------------ shared parts


class ObjectiveJson(TypedDict):
    name: str
    metric: str
    slo: dict[str, float]


class NoiseEntry(TypedDict):
    """A margin held against a single run's noise: the two points, the margin, the noise."""

    base: Point
    other: Point
    margin: float
    noise: float | None
    basis: str


class Capped(TypedDict):
    """The job of a point whose outputs ran to the generation cap more than the study allows."""

    job: str
    point: Point
    share: float
    share_calls: float | None
    share_time: float | None
    calls: object
    limit: float
    objective: float | None
    objective_uncapped: float | None
    # The capped calls (unit/seq) the compared points did not have; None: not compared
    # call by call (results without calls), the job's capped calls counted as they are.
    differing: NotRequired[list[str] | None]


class MissingPoint(TypedDict):
    """A planned point without a complete result (analyse.Missing), as written out."""

    point: Point
    label: str
    status: str
    reason: str | None


class Contamination(TypedDict):
    """Jobs whose setup differs from the sweep's usual one in an attribute no swept factor
    explains (evidence.contamination)."""

    attribute: str
    value: str
    usual: str
    jobs: list[str]


Contaminated = list[Contamination]


class StallPair(TypedDict):
    """A comparison the verdict makes with a stalled point, with the stall and without it."""

    other: Point
    ratio: float | None
    ratio_without: float | None


class StallNote(TypedDict):
    """A point whose job had stalls (benchkit.report.analysis.stalls): how much they added and what
    the verdict's comparisons are with and without them."""

    job: str
    point: Point
    stalls: int
    excess_s: float
    wall_share: float
    objective: float | None
    objective_without: float | None
    pairs: list[StallPair]


Stalled = list[StallNote]


class CallRef(TypedDict):
    unit: str
    call: int | None


class ColdNote(TypedDict):
    """A point whose figure leaves out cold starts (benchkit.report.analysis.stalls, rules v6):
    stalls in the first work of a server that had no warm-up. `objective` is the figure the verdict
    compares, `objective_measured` the one measured with them."""

    job: str
    point: Point
    calls: list[CallRef]
    excess_s: float
    objective_measured: float | None
    objective: float | None


Cold = list[ColdNote]


class SloBreak(TypedDict):
    """An SLO limit a point breaks (an unknown value breaks it too)."""

    metric: str
    value: float | None
    limit: float


# An effect over a run of slot counts: {"from": 1, "to": 1, "effect": "helps"}; `to: None`
# is up to the largest count tested, `from: None` when slots did not vary.
Run = TypedDict("Run", {"from": int | None, "to": int | None, "effect": str})

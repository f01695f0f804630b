"""The few numbers the ledger keeps of a verdict: enough to show its value again, and the size
of a comparison (a ratio range, each side's seconds per unit) so that a later publication can
say how much it changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from benchkit.report.analysis.numbers import VerdictNumbers

# The ranges a verdict that compares settings keeps: `ratio_range` and `value_range` (the
# backend verdict: each loser's ratio to the winner, each backend's objective, least and
# most), `on_off_range` (drafting: on over off). A list is [least, most].
RANGES = ("ratio_range", "value_range", "on_off_range")


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _int(x: object) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _span(x: object) -> list[float] | None:
    """[least, most] as recorded, or None (not recorded, or not two numbers)."""
    if not isinstance(x, list) or len(x) != 2:
        return None
    lo, hi = _num(x[0]), _num(x[1])
    return None if lo is None or hi is None else [lo, hi]


def spans(x: object) -> dict[str, list[float]] | None:
    """A recorded range as {name: [least, most]}: a dict of ranges as it is, a bare range
    under the name ''; None when nothing usable was recorded."""
    if isinstance(x, Mapping):
        out = {str(k): s for k, v in x.items() if (s := _span(v)) is not None}
        return out or None
    s = _span(x)
    return {"": s} if s is not None else None


@dataclass(frozen=True)
class Light:
    """The few numbers the ledger keeps of a verdict, enough to show its value again."""

    largest: int | None = None
    seconds: float | None = None
    units: int | None = None
    knee_reached: bool | None = None
    median_change: float | None = None
    ratio_range: dict[str, list[float]] | None = None
    value_range: dict[str, list[float]] | None = None
    on_off_range: list[float] | None = None
    # The cold starts left out of the figures compared (rules v6), seconds per job: what a
    # correction of those figures names as its cause.
    cold_s: dict[str, float] | None = None
    # Where a provisional knee may lie (SlotsNumbers.knee_low, knee_high; rules v11).
    knee_low: int | None = None
    knee_high: int | None = None
    # Whether the counts below the knee were put beyond the margin only across machines
    # (SlotsNumbers.across; rules v12): the knee's place is then not one machine's.
    knee_across: bool | None = None

    KEYS = (
        "largest", "seconds", "units", "knee_reached", "median_change", *RANGES,
        "knee_low", "knee_high",
    )  # fmt: skip

    @staticmethod
    def keep(numbers: VerdictNumbers) -> dict[str, object]:
        """The ledger's `numbers` of a verdict: those of KEYS the verdict has, in that order,
        and `cold_s` where it left cold starts out."""
        j = numbers.to_json()
        out = {k: j[k] for k in Light.KEYS if k in j}
        cold = j.get("cold")
        if isinstance(cold, list) and cold:
            out["cold_s"] = {str(c["job"]): round(float(c["excess_s"]), 1) for c in cold}
        if j.get("across"):
            out["knee_across"] = True
        # A verdict given per series (MTP on each backend): each series' runs, so that a
        # series whose effect moved is a correction too (rules v14: the H100 study's Vulkan
        # series moved while the headline's first series did not, and no row said so).
        series = j.get("by_series")
        listed = series if isinstance(series, list) else []
        runs = [x for x in listed if isinstance(x, dict) and "runs" in x]
        # Drafting's series carry their runs; a factor verdict's series are values, not runs.
        if isinstance(series, list) and len(runs) > 1:
            out["series"] = [{"series": x["series"], "runs": x["runs"]} for x in runs]
        return out

    @staticmethod
    def of(numbers: Mapping[str, object]) -> Light:
        """From a ledger entry's `numbers` (or `keep`'s), old entries included: a key an
        entry did not record is None."""
        largest, units = numbers.get("largest"), numbers.get("units")
        knee = numbers.get("knee_reached")
        return Light(
            largest=largest if isinstance(largest, int) else None,
            seconds=_num(numbers.get("seconds")),
            units=units if isinstance(units, int) else None,
            knee_reached=knee if isinstance(knee, bool) else None,
            median_change=_num(numbers.get("median_change")),
            ratio_range=spans(numbers.get("ratio_range")),
            value_range=spans(numbers.get("value_range")),
            on_off_range=_span(numbers.get("on_off_range")),
            cold_s=cold_of(numbers),
            knee_low=_int(numbers.get("knee_low")),
            knee_high=_int(numbers.get("knee_high")),
            knee_across=numbers.get("knee_across") is True or None,
        )


def cold_of(numbers: Mapping[str, object]) -> dict[str, float] | None:
    """A ledger verdict's `cold_s` ({job: seconds left out}), None where it recorded none."""
    raw = numbers.get("cold_s")
    if not isinstance(raw, Mapping):
        return None
    out = {str(k): v for k, x in raw.items() if (v := _num(x)) is not None}
    return out or None


class NumberChange(TypedDict):
    """A comparison's size that moved between two publications: `key` one of RANGES, `of` the
    name it is kept under (a backend; '' for a bare range), each [least, most]."""

    key: str
    of: str
    earlier: list[float]
    now: list[float]


def number_changes(
    earlier: Mapping[str, object], now: Mapping[str, object], tol: float
) -> list[NumberChange]:
    """Each range (RANGES) both entries recorded whose least or most moved by `tol` or more
    (relative). A range an entry did not record (an entry from before rules v6) is not
    compared: what was not recorded cannot be shown to have changed."""
    out: list[NumberChange] = []
    for key in RANGES:
        a, b = spans(earlier.get(key)), spans(now.get(key))
        if a is None or b is None:
            continue
        for name in [*b, *(n for n in a if n not in b)]:
            x, y = a.get(name), b.get(name)
            if x is None or y is None:
                continue
            if any(_moved(p, q, tol) for p, q in zip(x, y, strict=True)):
                out.append({"key": key, "of": name, "earlier": x, "now": y})
    return out


def _moved(a: float, b: float, tol: float) -> bool:
    if a == b:
        return False
    return a == 0 or abs(b / a - 1) >= tol

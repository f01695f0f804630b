"""A comparison of the engine (benchkit.compare) as verdict numbers carry it: JSON-ready, its
points as factor values. Re-exported from report/analysis/numbers."""

from __future__ import annotations

from typing import NotRequired, TypedDict

# A factor's value and a point, as report/analysis/numbers defines them (kept here too: numbers
# imports this module).
FactorValue = str | int | float | bool | None
Point = dict[str, FactorValue]


class ComparisonJson(TypedDict):
    """One comparison of the engine (benchkit.compare): `other`'s time over `base`'s on their
    shared units, its replication interval, and how it was decided (benchkit.compare.engine)."""

    base: Point
    other: Point
    ratio: float | None
    low: float | None
    high: float | None
    units: int
    basis: str
    machine: str
    via: Point | None
    outcome: str
    needed: int | None
    jobs: list[str]
    # What the interval holds of run-to-run noise (benchkit.compare.engine.Comparison):
    # "repeats", "twins", "declared" or "unmeasured" (absent in ledgers before rules v8).
    run_noise: NotRequired[str]
    # Across machines where one of the two jobs' machine was not recorded (rules v10).
    unrecorded: NotRequired[bool]
    # Open with its figure on the margin itself (engine.Comparison.near_margin; rules v10).
    near_margin: NotRequired[bool]
    # Bridged: the card-by-point term its interval holds (log sd), None where not measured
    # (engine.Comparison.interaction; rules v11).
    interaction: NotRequired[float | None]
    # One of its jobs ran on a CPU host busy with other work (evidence.host_busy; rules v11).
    host_busy: NotRequired[bool]
    # Across two states of one card: how much more of its memory one job found in use
    # (engine_of._shared_card; rules v14).
    shared_card: NotRequired[str]
    # Across machines where one job ran on several, which of its units where not recorded
    # (a race of that time kept no unit's machine; rules v14).
    several: NotRequired[bool]
    # Across two sweeps of one hardware profile on a shared host name, no card or boot told
    # (engine_of.machine_of; rules v15): one machine not established.
    sweeps: NotRequired[bool]
    # Paired on fewer units than either point's figure holds: base's and other's seconds per
    # unit on the paired units, which the ratio is of (engine.Comparison.sides; rules v13).
    sides: NotRequired[list[float]]
    # Paired on an anchor folder's runs on all their units: the two means the ratio is of,
    # which a table's row of the sweep's own jobs does not show (rules v15).
    means: NotRequired[list[float]]
    # Bridged over more than two machines: every anchor point in order, one a step from one
    # machine to the next (engine.Comparison.chain; rules v14).
    chain: NotRequired[list[Point]]

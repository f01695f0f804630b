"""racing.json's shape: what a race writes beside its jobs (its settings, each point's outcome,
the launches and machines) and what a race resumed on the same folder reads back from it.

benchkit.racing.run writes the file and, resumed, reads it back; the report reads it too
(benchkit.report.analysis.racing).
"""

from __future__ import annotations

from typing import TypedDict

from benchkit.racing.anchors import AnchorEntry, OpenPair


class RacingPoint(TypedDict):
    """One point of racing.json's `points`: its overrides and factors, its units, the status
    the race left it in, and its comparison with the best (None where it had none)."""

    overrides: list[str]
    factors: dict[str, str]
    units: int
    status: str | None
    best: str | None
    ratio: float | None
    units_compared: int | None
    p_adjusted: float | None
    # The engine's decision behind the status (benchkit.compare.engine).
    outcome: str | None
    machine: str | None
    via: str | None
    machines: list[str]


class RacingJson(TypedDict):
    """racing.json: the race's settings and thresholds, its rounds, each point's outcome, the
    machine time it spent against the full grid's, its launches (and the one in flight), each
    point's units' machines, and the anchors and open pairs of a race that moved machines."""

    settings: dict[str, object]
    metric: str
    thresholds: list[float]
    total_units: int
    rounds: int
    finished: bool
    best: str | None
    points: dict[str, RacingPoint]
    spent_s: float
    full_grid_s: float
    launch_s: dict[str, float]
    launches: dict[str, int]
    in_flight: dict[str, float]
    machine_s: float
    full_grid_machine_s: float
    unit_machines: dict[str, dict[str, str]]
    here: str
    anchors: list[AnchorEntry]
    open_across: list[OpenPair]


class Earlier(TypedDict):
    """What a resumed race takes back from an earlier run's racing.json: its launches and
    their seconds, the launch in flight when it stopped, each point's units' machines, and
    the anchors it named itself."""

    launch_s: dict[str, float]
    launches: dict[str, int]
    in_flight: dict[str, float]
    machines: dict[str, dict[str, str]]
    anchors: list[AnchorEntry]

"""One job of an anchor folder (study.anchors) as the sweep holds it: the comparison engine's
bridge between machines (report/analysis/anchors.py reads them, report/verdicts/engine_of.py uses
them)."""

from __future__ import annotations

from dataclasses import dataclass

from benchkit.report.analysis.numbers import Point


@dataclass(frozen=True)
class AnchorJob:
    """A job of an anchor folder: the point it re-ran (the sweep's varying factors), its
    per-unit spans, its figure on the objective and the card it ran on ('' where unknown)."""

    job: str
    values: Point
    spans: dict[str, float]
    value: float
    machine: str
    # (the machine as named without a card, the sweep it ran in, its start and end) where
    # only a hardware profile on a host name tells its machine (machine_profile.profile).
    profile: tuple[str, str, str, str] | None = None

"""One race's state between rounds: which points run next with how many units, and what
was decided, written to racing.json for the report.

The sweeper plugin (hydra_plugins/benchkit_racing) launches the jobs; this module only
reads their folders (benchkit.racing.observe) and asks the policy. A race started again on
the same sweep folder (after Ctrl-C) replays its rounds: the jobs already complete are
reused by the resume mechanism, so the decisions come out the same and only what is left
is measured.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchkit.errors import UserError
from benchkit.racing.observe import RACEABLE, unit_values
from benchkit.racing.policy import (
    RUNNING,
    STOPPED,
    Comparison,
    RaceSettings,
    RoundDecision,
    best_of,
    decide,
    next_round,
    verdict_pairs,
)
from benchkit.report.evidence import objective_of
from benchkit.results import RESULT_FILE, atomic_write_text
from benchkit.workload import load_workload

# Final status of a point the race left undecided at max_units or the budget.
UNDECIDED = "undecided"


class Race:
    """The rounds of one racing sweep over `grid` (each point's overrides, in grid order)."""

    def __init__(
        self,
        *,
        grid: Sequence[Sequence[str]],
        swept: Sequence[str],
        sweep_dir: Path,
        settings: RaceSettings,
        study: Mapping[str, Any],
        fixture: str,
        units_override: int | None = None,
    ) -> None:
        self.grid = {str(i): list(o) for i, o in enumerate(grid)}
        self.factors = {
            p: {k: v for k, _, v in (o.partition("=") for o in ov) if k in swept}
            for p, ov in self.grid.items()
        }
        self.sweep_dir = sweep_dir
        self.settings = settings
        self.metric = objective_of(str(study.get("objective") or "throughput")).metric
        if self.metric not in RACEABLE:
            raise UserError(
                f"study.objective={study.get('objective')!r} is not a per-unit time, and "
                "hydra/sweeper=racing compares points unit by unit: race on throughput or "
                "latency, or use the basic sweeper."
            )
        noise = study.get("noise")
        self.thresholds = [settings.margin, *([float(noise)] if noise else [])]
        n = len(load_workload(fixture).units)
        self.total_units = min(n, units_override) if units_override else n
        self.round = 0
        self.stopped: list[str] = []
        # Each stopped point's comparison in the round that stopped it: what the report says.
        self.stopped_by: dict[str, Comparison] = {}
        self.failed: list[str] = []
        self.decision: RoundDecision | None = None
        self.launch_s: dict[str, float] = {}

    def _result(self, point: str) -> dict[str, Any]:
        try:
            data = json.loads((self.sweep_dir / point / RESULT_FILE).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def values(self) -> dict[str, dict[str, float]]:
        """Each raced point's per-unit values; a point whose job did not complete leaves the
        race (the report shows it failed or incomplete, as in any sweep)."""
        out: dict[str, dict[str, float]] = {}
        for p in self.grid:
            if p in self.failed:
                continue
            if self._result(p).get("status") != "complete":
                self.failed.append(p)
                continue
            vals = unit_values(self.sweep_dir / p, self.metric)
            if len(vals) < 2:
                self.failed.append(p)
                continue
            out[p] = vals
        return out

    def spent_s(self) -> float:
        return sum(float(self._wall(p) or 0.0) for p in self.grid)

    def _wall(self, point: str) -> float | None:
        wall = (self._result(point).get("metrics") or {}).get("wall_s")
        return float(wall) if isinstance(wall, int | float) else None

    def next_batch(self) -> list[tuple[int, list[str]]]:
        """The jobs of the next round, as (job number, overrides); [] when the race is over.
        A point whose folder already holds the units asked (a race run again after Ctrl-C)
        is not launched: the round is decided on what it has."""
        while True:
            want = self._round()
            if not want:
                return []
            todo = {p: n for p, n in want.items() if not self._has(p, n)}
            if todo:
                return [(int(p), [*self.grid[p], f"workload.units={n}"]) for p, n in todo.items()]

    def _has(self, point: str, units: int) -> bool:
        """The point's job is complete with at least `units` units, run with its overrides."""
        r = self._result(point)
        done = (r.get("metrics") or {}).get("units_completed")
        ran = [
            o
            for o in (r.get("provenance") or {}).get("overrides") or []
            if not str(o).startswith("workload.units=")
        ]
        return (
            r.get("status") == "complete"
            and isinstance(done, int)
            and done >= units
            and ran == self.grid[point]
        )

    def _round(self) -> dict[str, int]:
        """Decide on what the points have, and how many units each should have next."""
        if self.round == 0:
            self.round += 1
            return dict.fromkeys(self.grid, min(self.settings.min_units, self.total_units))
        values = self.values()
        alive = [p for p in values if p not in self.stopped]
        if not alive:
            return {}
        pairs = verdict_pairs({p: self.factors[p] for p in values}, best_of(values, alive))
        self.decision = decide(values, self.settings, self.stopped, pairs, self.thresholds)
        self.stopped = [p for p, s in self.decision.status.items() if s == STOPPED]
        for p in self.stopped:
            if p not in self.stopped_by and p in self.decision.comparisons:
                self.stopped_by[p] = self.decision.comparisons[p]
        done = {p: len(v) for p, v in values.items()}
        cost = {p: (self._wall(p) or 0.0) / max(done[p], 1) for p in values}
        self.round += 1
        return next_round(
            self.decision, done, self.settings, self.total_units, cost, self.spent_s()
        )

    def record_launch(self, idx: int, seconds: float) -> None:
        self.launch_s[str(idx)] = self.launch_s.get(str(idx), 0.0) + seconds

    def to_json(self) -> dict[str, Any]:
        """racing.json: the settings, each point's units, status and comparison with the
        best, the machine time spent and the full grid's estimated time."""
        d = self.decision
        values = {p: unit_values(self.sweep_dir / p, self.metric) for p in self.grid}
        points: dict[str, Any] = {}
        full_s = 0.0
        for p in self.grid:
            units = len(values[p])
            wall = self._wall(p)
            if wall and units:
                full_s += wall / units * min(self.total_units, self.settings.max_units or 10**9)
            status = d.status.get(p) if d else None
            if p in self.failed:
                status = "failed"
            elif status == RUNNING:
                status = UNDECIDED  # max_units or the budget ended the race first
            c = self.stopped_by.get(p) or (d.comparisons.get(p) if d else None)
            points[p] = {
                "overrides": self.grid[p],
                "factors": self.factors[p],
                "units": units,
                "status": status,
                "best": c.best if c else None,
                "ratio": c.ratio if c else None,
                "units_compared": c.units if c else None,
                "p_adjusted": c.p_adjusted if c else None,
            }
        return {
            "settings": {**self.settings.__dict__},
            "metric": self.metric,
            "thresholds": self.thresholds,
            "total_units": self.total_units,
            "rounds": self.round,
            "best": d.best if d else None,
            "points": points,
            "spent_s": self.spent_s(),
            "full_grid_s": full_s,
        }

    def write(self, path: Path) -> None:
        atomic_write_text(path, json.dumps(self.to_json(), indent=1, default=str) + "\n")

    def summary(self) -> str:
        data = self.to_json()
        stopped = [p for p, v in data["points"].items() if v["status"] == STOPPED]
        share = data["spent_s"] / data["full_grid_s"] if data["full_grid_s"] else 0.0
        units = statistics.fmean(v["units"] for v in data["points"].values()) if self.grid else 0
        return (
            f"[benchkit] race over after {data['rounds']} rounds: {len(stopped)} of "
            f"{len(self.grid)} points stopped, {units:.1f} units a point on average, "
            f"{share:.0%} of the full grid's estimated machine time"
        )

"""One race's state between rounds: which points run next with how many units, and what
was decided, written to racing.json for the report.

The sweeper plugin (hydra_plugins/benchkit_racing) launches the jobs; this module only
reads their folders (benchkit.racing.observe) and asks the policy. A race started again on
the same sweep folder (after Ctrl-C) replays its rounds: the jobs already complete are
reused by the resume mechanism, so the decisions come out the same and only what is left
is measured. A race resumed on another machine measures its anchor points there first
(benchkit.racing.anchors), and racing.json lists them with why each was measured.
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchkit import log
from benchkit.errors import UserError
from benchkit.racing.anchors import (
    AnchorEntry,
    OpenPair,
    moved,
    offset_of,
    open_across,
    plan_anchors,
)
from benchkit.racing.observe import RACEABLE, RACING_FILE, unit_machines, unit_values
from benchkit.racing.policy import (
    RUNNING,
    STOPPED,
    Comparison,
    RaceSettings,
    RoundDecision,
    best_of,
    decide,
    first_round,
    next_round,
    verdict_pairs,
)
from benchkit.racing.record import Earlier, RacingJson, RacingPoint
from benchkit.report.analysis.evidence import objective_of
from benchkit.results import bounded
from benchkit.results.schema import Json
from benchkit.results.store import RESULT_FILE, atomic_write_text
from benchkit.results.trust import Trust, read_result
from benchkit.workload import load_workload

_log = log.get(__name__)
# Final status of a point the race left undecided at max_units or the budget.
UNDECIDED = "undecided"
# Where a resumed race's anchor jobs are measured: below the sweep folder, so the sweep's
# jobs stay one a point, and the report reads them as study.anchors=[anchors].
ANCHORS_DIR = "anchors"
_ANCHOR_JOB = re.compile(rf"{ANCHORS_DIR}/[0-9]{{1,6}}")


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
        slots: Sequence[int] = (),
        here: str = "",
    ) -> None:
        self.grid = {str(i): list(o) for i, o in enumerate(grid)}
        # Each point's parallel slots: a round gives it at least one unit a slot.
        self.slots = {str(i): int(n) for i, n in enumerate(slots)}
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
        open_loop = sorted(
            {o for ov in grid for o in ov if o.startswith("load=") and o != "load=closed"}
        )
        if open_loop:
            # An open-loop pass's time per unit follows its arrival schedule, not the setting.
            raise UserError(
                f"hydra/sweeper=racing races seconds per unit, which under {open_loop[0]} "
                "follow the arrival schedule: sweep an open-loop load with the basic sweeper "
                "(drop hydra/sweeper=racing), or race closed-loop units (load=closed)."
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
        # Whether the race ended by its own rule (every point decided, or its unit limit or
        # budget reached), not stopped from outside (Ctrl-C, a lease's end) between rounds.
        self.finished = False
        # Each point's launches and their seconds (server start and teardown included): the
        # machine time the race really took. Kept in racing.json, so a race resumed after
        # Ctrl-C still counts the launches of its first run.
        self.launch_s: dict[str, float] = {}
        self.launches: dict[str, int] = {}
        self.distrusted: set[str] = set()
        # The launch running now and when it started (Unix time), in racing.json while it
        # runs: a race killed outright (kill -9) never times that launch itself.
        self.in_flight: dict[str, float] = {}
        # Each point's units -> the machine that measured them, kept in racing.json: a race
        # resumed on another lent card compares its later units there, and a pair across
        # machines is decided only through an anchor measured on both (benchkit.racing.judge).
        self.machines: dict[str, dict[str, str]] = {}
        # The machine this run of the race measures on ('' unknown: no anchors), the anchors
        # measured on a machine the race moved to, and the pairs left open across machines.
        self.here = here
        self.anchors: list[AnchorEntry] = []
        self._launched: set[str] = set()
        self.open: list[OpenPair] = []
        earlier = _earlier(sweep_dir / RACING_FILE)
        if earlier is not None:
            self.machines = earlier["machines"]
            self.anchors = earlier["anchors"]
            self.launch_s = {str(k): float(v) for k, v in earlier["launch_s"].items()}
            self.launches = {str(k): int(v) for k, v in earlier["launches"].items()}
            for p, started in earlier["in_flight"].items():
                self.record_launch(int(p), _ran_until(self._job_dir(int(p)), float(started)))

    def _job_dir(self, idx: int) -> Path:
        """A launch's folder: a point's job, or (past the grid) an anchor's."""
        n = idx - len(self.grid)
        return self.sweep_dir / (str(idx) if n < 0 else f"{ANCHORS_DIR}/{n}")

    def _result(self, point: str) -> Json:
        """The point's result as the race may use it: read bounded and signed with this
        user's key and unchanged (benchkit.results.trust), else {} (the point is measured again: a
        race resumed after its result.json was edited takes nothing from it)."""
        path = self.sweep_dir / point / RESULT_FILE
        try:
            read = read_result(path, self.sweep_dir)
        except (OSError, ValueError):
            return {}
        if read.checked.trust is not Trust.VERIFIED:
            if point not in self.distrusted:  # said once, though read every round
                self.distrusted.add(point)
                _log.warning(f"race: {path} is not used: {read.checked.why}; measured again.")
            return {}
        return read.data

    def values(self, settle: bool = True) -> dict[str, dict[str, float]]:
        """Each raced point's per-unit values; a point whose job did not complete leaves the
        race (the report shows it failed or incomplete, as in any sweep). `settle=False`:
        read only, before a round (what a resumed race has measured so far)."""
        out: dict[str, dict[str, float]] = {}
        for p in self.grid:
            if p in self.failed:
                continue
            if self._result(p).get("status") != "complete":
                if settle:
                    self.failed.append(p)
                continue
            vals = unit_values(self.sweep_dir / p, self.metric)
            if len(vals) < 2:
                if settle:
                    self.failed.append(p)
                continue
            out[p] = vals
            self.machines[p] = unit_machines(self._result(p), vals, self.machines.get(p, {}))
        return out

    def spent_s(self) -> float:
        """The measured jobs' wall clock, the anchors' included."""
        anchors = sum(float(_wall_of(self._result(a["job"])) or 0.0) for a in self.anchors)
        return sum(float(self._wall(p) or 0.0) for p in self.grid) + anchors

    def _wall(self, point: str) -> float | None:
        return _wall_of(self._result(point))

    def next_batch(self) -> list[tuple[int, list[str]]]:
        """The jobs of the next round, as (job number, overrides); [] when the race is over.
        A point whose folder already holds the units asked (a race run again after Ctrl-C)
        is not launched: the round is decided on what it has."""
        while True:
            due = self._anchors_due()
            if due:
                return due
            want = self._round()
            if not want:
                self.finished = True
                return []
            todo = {p: self._whole_run(p, n) for p, n in want.items() if not self._has(p, n)}
            if todo:
                return [(int(p), [*self.grid[p], f"workload.units={n}"]) for p, n in todo.items()]

    def _whole_run(self, point: str, units: int) -> int:
        """`units` raised so that the run that extends the point's complete job adds whole
        rounds of its slots (within the workload): a job of 3 units on 2 slots asked for 4 would
        run its fourth unit alone on a fresh server (the H100 race's jobs 5, 14 and 15: 22-23%
        of their slot-time idle), so it is asked for 5."""
        have = self._units_done(point)
        k = max(self.slots.get(point, 1), 1)
        if not have or units <= have:
            return units
        cap = min(self.total_units, self.settings.max_units or self.total_units)
        return min(cap, have + -(-(units - have) // k) * k)

    def _units_done(self, point: str) -> int:
        """The units of the point's complete job run with its overrides (0: none)."""
        r = self._result(point)
        done = (r.get("metrics") or {}).get("units_completed")
        return done if self._ran_as_planned(point) and isinstance(done, int) else 0

    def _ran_as_planned(self, point: str) -> bool:
        r = self._result(point)
        ran = [
            o
            for o in (r.get("provenance") or {}).get("overrides") or []
            if not str(o).startswith("workload.units=")
        ]
        return r.get("status") == "complete" and ran == self.grid[point]

    def _has(self, point: str, units: int) -> bool:
        """The point's job is complete with at least `units` units, run with its overrides."""
        return self._ran_as_planned(point) and self._units_done(point) >= units

    def _anchored(self, tried: bool = False) -> dict[str, dict[str, dict[str, float]]]:
        """Each measured anchor's units, by point and the machine its result names (the
        engine's series); `tried`: every anchor planned on a machine, measured or not (what
        is not planned again)."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for a in self.anchors:
            vals: dict[str, float] = {}
            machine = a["machine"]
            if a["status"] == "measured":
                vals = unit_values(self.sweep_dir / a["job"], self.metric)
                ran = list(unit_machines(self._result(a["job"]), vals, {}).values())
                machine = max(set(ran), key=ran.count) if ran else machine
            if vals or tried:
                out.setdefault(a["point"], {}).setdefault(machine, {}).update(vals)
        return out

    def _settle_anchors(self, values: Mapping[str, Mapping[str, float]]) -> None:
        """Each planned anchor measured (its offset with it), failed (launched in this run and
        not complete), or skipped (planned on a machine the race has since left)."""
        for a in self.anchors:
            if a["status"] != "planned":
                continue
            if self._result(a["job"]).get("status") == "complete":
                a["status"] = "measured"
                got = unit_values(self.sweep_dir / a["job"], self.metric)
                a["offset"] = offset_of(a["point"], values, self.machines, got)
            elif a["job"] in self._launched:
                a["status"] = "failed"
            elif a["machine"] != self.here:
                a["status"] = "skipped"

    def _anchors_due(self) -> list[tuple[int, list[str]]]:
        """The anchor jobs to launch before any unit of the next round: on a machine the race
        has not measured its earlier units on (benchkit.racing.anchors); [] otherwise."""
        if not self.here:
            return []
        values = self.values(settle=False)
        self._settle_anchors(values)
        alive = [p for p in values if p not in self.stopped]
        if not alive or not moved({p: self.machines.get(p, {}) for p in values}, self.here):
            return []
        due = [
            a
            for a in self.anchors
            if a["status"] == "planned" and a["machine"] == self.here and a["point"] in self.grid
        ]
        if not due:
            factors = {p: self.factors[p] for p in values}
            d = decide(
                values,
                self.settings,
                self.stopped,
                verdict_pairs(factors, best_of(values, alive)),
                self.thresholds,
                factors,
                self.total_units,
                self.machines,
                self._anchored(),
            )
            tried = self._anchored(tried=True)
            for a in plan_anchors(
                d, values, self.machines, tried, self.here, self.settings, self.slots
            ):
                job = f"{ANCHORS_DIR}/{len(self.anchors)}"
                entry = AnchorEntry(point=a.point, machine=a.machine, units=a.units, why=a.why,
                                    job=job, status="planned", offset=None)  # fmt: skip
                self.anchors.append(entry)
                due.append(entry)
                _log.info(
                    f"[benchkit] race on {self.here}, where its earlier units were not measured: "
                    f"anchor first: point {a.point} on its first {a.units} units, into {job} "
                    f"({a.why})"
                )
        todo = [a for a in due if a["job"] not in self._launched]
        self._launched.update(a["job"] for a in todo)
        return [
            (
                len(self.grid) + int(a["job"].rsplit("/", 1)[1]),
                [
                    *self.grid[a["point"]],
                    f"workload.units={a['units']}",
                    # Measured afresh: the point's own job with as many units has the same
                    # resume key, and would be taken instead.
                    "resume=false",
                    f"hydra.sweep.subdir={a['job']}",
                ],
            )
            for a in todo
        ]

    def _round(self) -> dict[str, int]:
        """Decide on what the points have, and how many units each should have next."""
        if self.round == 0:
            self.round += 1
            return first_round(list(self.grid), self.settings, self.total_units, self.slots)
        values = self.values()
        alive = [p for p in values if p not in self.stopped]
        if not alive:
            return {}
        pairs = verdict_pairs({p: self.factors[p] for p in values}, best_of(values, alive))
        self.decision = decide(
            values,
            self.settings,
            self.stopped,
            pairs,
            self.thresholds,
            {p: self.factors[p] for p in values},
            self.total_units,
            self.machines,
            self._anchored(),
        )
        noise = max(self.thresholds[1:]) if len(self.thresholds) > 1 else None
        self.open = open_across(
            self.decision, values, self.machines, self._anchored(), self.settings, noise
        )
        self.stopped = [p for p, s in self.decision.status.items() if s == STOPPED]
        # Every point is judged again each round (a stopped one too): its comparison now.
        self.stopped_by = {
            p: self.decision.comparisons[p] for p in self.stopped if p in self.decision.comparisons
        }
        done = {p: len(v) for p, v in values.items()}
        cost = {p: (self._wall(p) or 0.0) / max(done[p], 1) for p in values}
        self.round += 1
        return next_round(
            self.decision, done, self.settings, self.total_units, cost, self.spent_s(), self.slots
        )

    def begin_launch(self, idx: int) -> None:
        """A launch of point `idx` starts; racing.json says so until it ends."""
        self.in_flight = {str(idx): time.time()}
        self.write(self.sweep_dir / RACING_FILE)

    def record_launch(self, idx: int, seconds: float) -> None:
        self.in_flight.pop(str(idx), None)
        self.launch_s[str(idx)] = self.launch_s.get(str(idx), 0.0) + seconds
        self.launches[str(idx)] = self.launches.get(str(idx), 0) + 1

    def machine_s(
        self, walls: Mapping[str, float], units: Mapping[str, int]
    ) -> tuple[float, float]:
        """(what the race's launches took, the full grid's estimate on the same basis): each
        point's replay time for every unit plus one launch's overhead (server start, warm-up,
        teardown: its launches' time beyond its replay, per launch). (0, 0) for a race with
        no launch timed."""
        if not self.launch_s:
            return 0.0, 0.0
        cap = min(self.total_units, self.settings.max_units or 10**9)
        full = 0.0
        for p, wall in walls.items():
            n = self.launches.get(p, 0)
            over = max(self.launch_s.get(p, 0.0) - wall, 0.0) / n if n else 0.0
            full += wall / units[p] * cap + over
        return sum(self.launch_s.values()), full

    def to_json(self) -> RacingJson:
        """racing.json: the settings, each point's units, status and comparison with the
        best, the machine time spent and the full grid's estimated time."""
        d = self.decision
        values = {p: unit_values(self.sweep_dir / p, self.metric) for p in self.grid}
        points: dict[str, RacingPoint] = {}
        full_s = 0.0
        walls: dict[str, float] = {}
        for p in self.grid:
            units = len(values[p])
            wall = self._wall(p)
            if wall and units:
                full_s += wall / units * min(self.total_units, self.settings.max_units or 10**9)
                walls[p] = wall
            status = d.status.get(p) if d else None
            if p in self.failed:
                status = "failed"
            elif status == RUNNING and self.finished:
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
                # The engine's decision behind the status (benchkit.compare.engine).
                "outcome": c.outcome if c else None,
                "machine": c.machine if c else None,
                "via": c.via if c else None,
                "machines": sorted(set(self.machines.get(p, {}).values())),
            }
        machine, full_machine = self.machine_s(walls, {p: len(values[p]) for p in walls})
        return {
            "settings": {**self.settings.__dict__},
            "metric": self.metric,
            "thresholds": self.thresholds,
            "total_units": self.total_units,
            "rounds": self.round,
            "finished": self.finished,
            "best": d.best if d else None,
            "points": points,
            "spent_s": self.spent_s(),
            "full_grid_s": full_s,
            "launch_s": self.launch_s,
            "launches": self.launches,
            "in_flight": self.in_flight,
            "machine_s": machine,
            "full_grid_machine_s": full_machine,
            "unit_machines": self.machines,
            # Where this run measured, the anchors measured on a machine the race moved to
            # (and why), and the pairs left open because they span machines (and why).
            "here": self.here,
            "anchors": self.anchors,
            "open_across": self.open,
        }

    def write(self, path: Path) -> None:
        atomic_write_text(path, json.dumps(self.to_json(), indent=1, default=str) + "\n")

    def summary(self) -> str:
        data = self.to_json()
        stopped = [p for p, v in data["points"].items() if v["status"] == STOPPED]
        share = data["spent_s"] / data["full_grid_s"] if data["full_grid_s"] else 0.0
        units = statistics.fmean(v["units"] for v in data["points"].values()) if self.grid else 0
        line = (
            f"[benchkit] race over after {data['rounds']} rounds: {len(stopped)} of "
            f"{len(self.grid)} points stopped, {units:.1f} units a point on average, "
            f"{share:.0%} of the full grid's estimated replay time"
        )
        if data["full_grid_machine_s"]:
            machine = data["machine_s"] / data["full_grid_machine_s"]
            line += f", {machine:.0%} of its machine time with server starts"
        return line


def _earlier(path: Path) -> Earlier | None:
    """The launches an earlier run of this race recorded in its racing.json, if any."""
    try:
        data = json.loads(bounded.read_text(path))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    secs, counts = data.get("launch_s"), data.get("launches")
    if not isinstance(secs, dict) or not isinstance(counts, dict):
        return None
    machines = data.get("unit_machines")
    kept = {
        str(p): {str(u): str(m) for u, m in units.items()}
        for p, units in (machines.items() if isinstance(machines, dict) else ())
        if isinstance(units, dict)
    }
    flight = data.get("in_flight")
    flight = {
        str(k): v
        for k, v in (flight.items() if isinstance(flight, dict) else ())
        if str(k).isdigit() and isinstance(v, int | float)
    }
    anchors = data.get("anchors")  # absent in races recorded before anchors were measured
    return {
        "launch_s": secs,
        "launches": counts,
        "in_flight": flight,
        "machines": kept,
        # Only anchor folders this race names itself: a job path from the file is where the
        # next launch writes.
        "anchors": [
            _entry(a)
            for a in (anchors if isinstance(anchors, list) else [])
            if isinstance(a, dict) and _ANCHOR_JOB.fullmatch(str(a.get("job") or ""))
        ],
    }


def _entry(a: Mapping[str, Any]) -> AnchorEntry:
    """An anchor as an earlier run recorded it in racing.json."""
    offset = a.get("offset")
    return AnchorEntry(
        point=str(a.get("point")),
        machine=str(a.get("machine") or ""),
        units=int(a.get("units") or 0),
        why=str(a.get("why") or ""),
        job=str(a.get("job") or ""),
        status=str(a.get("status") or "planned"),
        offset=float(offset) if isinstance(offset, int | float) else None,
    )


def _wall_of(result: Mapping[str, Any]) -> float | None:
    wall = (result.get("metrics") or {}).get("wall_s")
    return float(wall) if isinstance(wall, int | float) else None


def _ran_until(job_dir: Path, started: float) -> float:
    """Seconds a launch killed outright is known to have run: from its start to the last
    write into its job folder (its calls, its server's log), at least 0."""
    last = started
    with contextlib.suppress(OSError):
        for f in job_dir.iterdir():
            with contextlib.suppress(OSError):
                if f.is_file():
                    last = max(last, f.stat().st_mtime)
    return last - started

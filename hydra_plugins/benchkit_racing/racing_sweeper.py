"""The racing sweeper (`hydra/sweeper=racing`): a grid sweep that stops measuring what is
decided.

`python -m benchkit -m hydra/sweeper=racing backend=vulkan,hip slots=1,2,4` keeps the basic
sweeper's meaning of the overrides (every combination is a point), but each point first runs
`min_units` units (`workload.units`), and after each round the racing policy
(benchkit.racing.policy) stops the points that are worse than the best with the study's
confidence; the best, the undecided points and the points a verdict still needs get
`units_per_round` more, by extending their jobs (benchkit.racing.extend: the units a job has
are not measured again). Each point keeps one job folder, numbered as in a grid sweep.
What the race decided is written to `racing.json` in the sweep folder, for the report.
"""

# No `from __future__ import annotations`: Hydra's plugin scan loads this module outside
# sys.modules, where dataclasses cannot resolve string annotations.
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

log = logging.getLogger(__name__)


@dataclass
class RacingSweeperConf:
    _target_: str = "hydra_plugins.benchkit_racing.racing_sweeper.RacingSweeper"
    # The study's confidence for stopping a point (one minus the familywise error per round).
    confidence: float = 0.95
    # Units every point runs before the first decision.
    min_units: int = 3
    # Units added to each surviving point per round.
    units_per_round: int = 2
    # At most this many units per point (null: the workload's units).
    max_units: Optional[int] = None  # noqa: UP045
    # A point is stopped only when worse than the best by more than this share.
    margin: float = 0.05
    # Points within the margin of the best with the study's confidence get no more units;
    # false: they run on to max_units (a ranking among near-equal points).
    settle: bool = True
    # Machine hours the race may spend, measured jobs' wall clock (null: no budget).
    budget_h: Optional[float] = None  # noqa: UP045
    params: Optional[dict[str, str]] = None  # noqa: UP045


ConfigStore.instance().store(
    group="hydra/sweeper", name="racing", node=RacingSweeperConf, provider="benchkit"
)


class RacingSweeper(BasicSweeper):
    """A BasicSweeper whose points are launched round by round, one job folder per point."""

    def __init__(
        self,
        confidence: float,
        min_units: int,
        units_per_round: int,
        max_units: int | None,
        margin: float,
        budget_h: float | None,
        settle: bool = True,
        params: dict[str, str] | None = None,
    ) -> None:
        super().__init__(max_batch_size=None, params=params)
        from benchkit.racing.policy import RaceSettings

        self.settings = RaceSettings(
            confidence=confidence,
            margin=margin,
            min_units=min_units,
            units_per_round=units_per_round,
            max_units=max_units,
            budget_s=None if budget_h is None else budget_h * 3600,
            settle=settle,
        )

    def _race(
        self, grid: Sequence[Sequence[str]], swept: list[str], sweep_dir: Path, composed: list[Any]
    ) -> Any:
        """The race over `grid`; a setting that cannot race is a UserError sentence."""
        from benchkit.racing.observe import machine_here
        from benchkit.racing.run import Race

        first = composed[0]
        # Where this run measures: a race resumed on another machine anchors there first.
        backend = first.backend.name
        here = machine_here(
            str(getattr(backend, "value", backend)),
            bool(first.telemetry.get("enabled", True)),
            first.hardware.get("device"),
            str(first.hardware.name),
        )
        return Race(
            grid=[list(g) for g in grid],
            swept=swept,
            sweep_dir=sweep_dir,
            settings=self.settings,
            study=OmegaConf.to_container(first.study, resolve=True),  # type: ignore[arg-type]
            fixture=str(first.workload.fixture),
            units_override=first.workload.get("units"),
            slots=[int(c.get("slots") or 1) for c in composed],
            here=here,
        )

    def sweep(self, arguments: list[str]) -> Any:
        from benchkit.errors import UserError
        from benchkit.job.sweep_progress import write_plan
        from benchkit.racing.observe import RACING_FILE

        assert self.config is not None and self.launcher is not None
        assert self.hydra_context is not None
        try:
            self.settings.check()
        except ValueError as exc:
            raise HydraException(str(exc)) from exc
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        args = [*self._parse_config(), *arguments]
        overrides = parser.parse_overrides(args)
        if any(o.get_key_element() == "workload.units" for o in overrides):
            raise HydraException(
                "hydra/sweeper=racing sets workload.units itself, round by round: leave "
                "workload.units out (hydra.sweeper.max_units caps the units per point)."
            )
        grid = self.split_arguments(overrides, None)[0]
        swept = [o.get_key_element() for o in overrides if o.is_sweep_override()]
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        self.validate_batch_is_legal(grid)
        loader = self.hydra_context.config_loader
        composed = [
            loader.load_sweep_config(master_config=self.config, sweep_overrides=list(g))
            for g in grid
        ]
        try:
            race = self._race(grid, swept, sweep_dir, composed)
        except UserError as e:
            raise HydraException(str(e)) from None
        returns = []
        try:
            while True:
                batch = race.next_batch()
                if not batch:
                    break
                # The round's jobs, for each job's progress line (benchkit.job.sweep_progress).
                write_plan(
                    sweep_dir,
                    {
                        "round": race.round,
                        "jobs": [idx for idx, _ in batch],
                        "running": len(batch),
                        "points": len(race.grid),
                        "started": time.time(),
                    },
                )
                for idx, overrides_i in batch:
                    # racing.json as the race goes, the launch running included: a race
                    # killed outright still counts its machine time when run again.
                    race.begin_launch(idx)
                    t0 = time.perf_counter()
                    try:
                        returns.append(self.launcher.launch([overrides_i], initial_job_idx=idx))
                    finally:  # an interrupted launch took machine time too
                        race.record_launch(idx, time.perf_counter() - t0)
                    race.write(sweep_dir / RACING_FILE)
        except SystemExit:
            # Ctrl-C inside a job: it wrote itself and exits 130. The launches so far are
            # kept for the resumed race's machine time.
            race.write(sweep_dir / RACING_FILE)
            raise
        except KeyboardInterrupt:
            # Ctrl-C between two jobs.
            race.write(sweep_dir / RACING_FILE)
            log.info(
                "[benchkit] race stopped by Ctrl-C between jobs: run the same command again "
                f"with hydra.sweep.dir={sweep_dir} to resume (the jobs it has are not measured "
                "again)."
            )
            sys.exit(130)
        race.write(sweep_dir / RACING_FILE)
        log.info(race.summary())
        return returns

    def validate_batch_is_legal(self, batch: Any) -> None:
        super().validate_batch_is_legal(batch)

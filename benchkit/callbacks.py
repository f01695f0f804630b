"""The Hydra callback that renders a sweep's report when the sweep ends, failures included.

Hydra calls on_multirun_end in the launching process once the launcher has handed every job
back: the basic launcher, joblib's worker processes, or submitit's SLURM jobs alike. A job
never raises out of the task (benchkit.app.run_placed writes a failed result instead), so
one failed job does not stop the others or the report.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from benchkit.errors import UserError
from benchkit.results.scrub import Secrets, override_secrets

_ACTIVE: list[Path] = []


def active_sweep() -> Path | None:
    """The sweep this process launches, once it has started (for a report after Ctrl-C)."""
    return _ACTIVE[-1] if _ACTIVE else None


# Why the sweep this process ran ends with a non-zero exit code, with that code: its report
# could not be rendered (a hostile user's `study.anchors=[/tmp/nope]` sweep measured every job,
# wrote no report and exited 0), or no job of it completed, so nothing was measured (a hostile
# user's `-m slots=1,2 workload.units=0` failed every job and exited 0: a script took it for a
# measurement). Its report is written all the same, saying why each job did not complete.
_FAILED: list[tuple[int, str]] = []


def sweep_failure() -> tuple[int, str]:
    """(exit code, why) of the sweep that just ran; (0, '') where it did not fail as a whole."""
    return _FAILED[-1] if _FAILED else (0, "")


def measured_nothing(sweep: Path) -> bool:
    """Whether no job of the sweep completed (failed, unavailable, incomplete or not run):
    nothing in it measures a setting whole, whatever its report says about each job."""
    for path in sweep.glob("*/result.json"):
        try:
            if json.loads(path.read_text(encoding="utf-8")).get("status") == "complete":
                return False
        except (OSError, ValueError, AttributeError):
            continue
    return True


# The folder locks this process holds, here and not on the callback: launchers pickle the
# callback into every job's process (joblib, submitit), and a held lock cannot be pickled.
_HELD: list[contextlib.ExitStack] = []


class ReportCallback(Callback):
    def _hold(self, folder: Path, what: str, key: str) -> None:
        """One process per run or sweep folder, from before Hydra writes into it to the end:
        a second run into it would mix its data with this one's (benchkit.job.folder)."""
        from benchkit.job.folder import hold

        stack = contextlib.ExitStack()
        try:
            stack.enter_context(hold(folder, what=what))
        except UserError as exc:
            print(f"benchkit: {exc}", file=sys.stderr)
            sys.exit(2)
        except OSError as exc:
            print(
                f"benchkit: cannot write the {what} folder {folder} ({exc.strerror}): choose a "
                f"folder you can write ({key}=DIR).",
                file=sys.stderr,
            )
            sys.exit(2)
        _HELD.append(stack)

    def _release(self) -> None:
        while _HELD:
            _HELD.pop().close()

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._hold(Path(str(config.hydra.run.dir)), "run", "hydra.run.dir")

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._release()

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        target = str(config.hydra.launcher.get("_target_", ""))
        sweep_dir = Path(str(config.hydra.sweep.dir))
        self._hold(sweep_dir, "sweep", "hydra.sweep.dir")
        _ACTIVE.append(sweep_dir)
        if "submitit" in target and not sweep_dir.is_absolute():
            # Each SLURM job writes relative to the folder sbatch ran from, on its own node.
            print(
                f"[benchkit] the SLURM jobs write into {Path.cwd() / sweep_dir}: every node "
                "must see that folder; set hydra.sweep.dir=/a/shared/path where it is not "
                "shared.",
                file=sys.stderr,
            )

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        # The entry point's own rendering, which this process has already imported.
        from benchkit.app import report_of

        sweep = Path(str(config.hydra.sweep.dir))
        target = str(config.hydra.launcher.get("_target_", ""))
        compare_model_files(sweep, elsewhere="submitit" in target)
        # submitit's job files hold each job's config as typed, secrets included; every job
        # has ended, so none of them is read again.
        found = Secrets.of(
            OmegaConf.select(config, "backend.api_key"),
            OmegaConf.select(config, "backend.url"),
            [
                *(OmegaConf.select(config, "server.extra_args") or []),
                *(OmegaConf.select(config, "backend.extra_args") or []),
            ],
        )
        typed = override_secrets(OmegaConf.select(config, "hydra.overrides.task") or [])
        secrets = Secrets(tuple(dict.fromkeys([*found.values, *typed])))
        secrets.tree([sweep / ".submitit", sweep / "multirun.yaml"])
        try:
            rendered = report_of(
                sweep, "sweep report", ledger=OmegaConf.select(config, "study.ledger"), sweep=True
            )
        except Exception as exc:  # Hydra turns a callback's exception into a warning, exit 0
            print(
                f"benchkit: the sweep's report failed ({type(exc).__name__}: {exc}); its jobs "
                f"are written: python -m benchkit.report {sweep} renders it again.",
                file=sys.stderr,
            )
            rendered = False
        # A sweep exits 0 where a job of it completed, its report saying why any other did
        # not; one that measured nothing exits 1, its report (rendered all the same) saying why.
        if not rendered:
            _FAILED.append((1, "the sweep's report could not be rendered (see the lines above)"))
        elif measured_nothing(sweep):
            md = sweep / "report" / "report.md"
            nothing = "no job of the sweep completed, so nothing was measured"
            _FAILED.append((1, f"{nothing}: {md} says why each did not"))
        self._release()


def compare_model_files(sweep: Path, elsewhere: bool) -> None:
    """Compare the sweep's model files (benchkit.quality.models) before the report renders,
    so it shows them; a failure here is logged and never keeps the report from rendering.
    `elsewhere` (SLURM jobs): this node may lack their device and time, so nothing runs."""
    from benchkit import log
    from benchkit.quality.models import compare_sweep

    try:
        compare_sweep(sweep, elsewhere=elsewhere)
    except Exception as exc:  # the report matters more than this comparison
        log.get(__name__).warning(f"model files were not compared: {type(exc).__name__}: {exc}")

"""The Hydra callback that renders a sweep's report when the sweep ends, failures included.

Hydra calls on_multirun_end in the launching process once the launcher has handed every job
back: the basic launcher, joblib's worker processes, or submitit's SLURM jobs alike. A job
never raises out of the task (benchkit.app.run_placed writes a failed result instead), so
one failed job does not stop the others or the report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig


class ReportCallback(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        target = str(config.hydra.launcher.get("_target_", ""))
        sweep_dir = Path(str(config.hydra.sweep.dir))
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
        report_of(sweep, "sweep report", sweep=True)


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

"""The Hydra callback that renders a sweep's report when the sweep ends, failures included."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from benchkit.errors import UserError


class ReportCallback(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from benchkit.report.render import render_report

        sweep_dir = Path(str(config.hydra.sweep.dir))
        try:
            out = render_report(sweep_dir, sweep_dir / "report")
        except UserError as exc:
            print(f"benchkit: {exc}", file=sys.stderr)
            return
        print(f"[benchkit] sweep report: {out / 'report.html'}", file=sys.stderr)
        print(str(out / "report.html"))

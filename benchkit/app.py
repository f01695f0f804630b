"""The Hydra entry point: compose the config, run one job, render a single run's report.

This is the only module (with callbacks.py) that touches Hydra: it resolves the job folder
once and hands a typed BenchConfig down. `-m` sweeps run one job per point; the sweep's
report is rendered by benchkit.callbacks.ReportCallback when the sweep ends.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from benchkit.config import BenchConfig, register_configs
from benchkit.errors import UserError
from benchkit.job import JobContext, run_job
from benchkit.paths import repo_root

register_configs()


def to_typed(cfg: DictConfig) -> BenchConfig:
    """The composed config as the BenchConfig dataclass (interpolations resolved)."""
    obj = OmegaConf.to_object(cfg)
    if not isinstance(obj, BenchConfig):
        raise TypeError(f"composed config is {type(obj).__name__}, not BenchConfig")
    return obj


@hydra.main(version_base="1.3", config_path=str(repo_root() / "conf"), config_name="config")
def _hydra_main(cfg: DictConfig) -> None:
    hc = HydraConfig.get()
    # Hydra sets every logger to INFO; one line per HTTP request would drown the progress.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    job_dir = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    sweep_dir = Path(str(hc.sweep.dir)) if sweep else None
    ctx = JobContext(
        job_dir=job_dir,
        label=str(hc.job.num) if sweep else job_dir.name,
        alias_tag=f"{sweep_dir.name}-{hc.job.num}" if sweep_dir else job_dir.name,
        choices={str(k): str(v) for k, v in hc.runtime.choices.items()},
        overrides=[str(o) for o in hc.overrides.task],
        sweep=sweep,
        resume_roots=_resume_roots(hc),
        extra_scrub=[sweep_dir / "multirun.yaml"] if sweep_dir else [],
    )
    try:
        result = run_job(to_typed(cfg), ctx)
    except KeyboardInterrupt:
        print(
            f"[benchkit] interrupted: {job_dir} was written as incomplete. Run the same "
            "command again to resume: complete jobs are reused (resume=false re-measures).",
            file=sys.stderr,
        )
        sys.exit(130)
    if not sweep:
        from benchkit.report.render import render_report

        try:
            out = render_report(job_dir, job_dir / "report")
        except UserError as exc:
            print(f"benchkit: {exc}", file=sys.stderr)
            return
        print(f"[benchkit] report: {out / 'report.html'}", file=sys.stderr)
        print(str(out / "report.html"))
        # A single run's exit code says whether it measured: scripts can rely on it.
        code = {"complete": 0, "unavailable": 3}.get(str(result["status"]), 1)
        if code:
            sys.exit(code)


def _resume_roots(hc: Any) -> list[Path]:
    """outputs/sweeps and outputs/runs (wherever hydra.sweep.dir / hydra.run.dir point)."""
    roots = []
    for d in (hc.sweep.dir, hc.run.dir):
        if d:
            roots.append(Path(str(d)).parent)
    return roots


def main() -> None:
    """Console-script entry point (`benchkit ...` is `python -m benchkit ...`)."""
    _hydra_main()


if __name__ == "__main__":
    main()

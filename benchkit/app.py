"""The Hydra entry point: compose the config, run one job, render a single run's report.

This is the only module (with callbacks.py) that touches Hydra: it resolves the job folder
once and hands a typed BenchConfig down. `-m` sweeps run one job per point; the sweep's
report is rendered by benchkit.callbacks.ReportCallback when the sweep ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import hydra
from hydra.conf import HydraConf
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from benchkit import callbacks, log
from benchkit.config import override_check
from benchkit.config.schema import BenchConfig, register_configs
from benchkit.config.space import sweep_keys
from benchkit.errors import Terminated, UserError, interrupt_reason
from benchkit.host.devices import placement, slurm_time_limit_watch
from benchkit.host.lifeline import stop_leftover
from benchkit.job.folder import FolderBusy, failure_reason, free_room, hold, keep_room
from benchkit.job.record import JobContext, new_result
from benchkit.job.run import run_job
from benchkit.job.sweep_progress import MULTIRUN_FILE, sweep_progress
from benchkit.paths import conf_dir
from benchkit.results.owned import is_write_problem, write_problem
from benchkit.results.schema import Status, load
from benchkit.results.scrub import secrets_of
from benchkit.results.store import RESULT_FILE, write_result

register_configs()

_log = log.get(__name__)


def to_typed(cfg: DictConfig) -> BenchConfig:
    """The composed config as the BenchConfig dataclass (interpolations resolved)."""
    obj = OmegaConf.to_object(cfg)
    if not isinstance(obj, BenchConfig):
        raise TypeError(f"composed config is {type(obj).__name__}, not BenchConfig")
    return obj


# benchkit's own configs, from the checkout or from inside the installed wheel; a user's own
# groups and entries come in beside them with `--config-dir DIR` or `hydra.searchpath`.
@hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")
def _hydra_main(cfg: DictConfig) -> float | None:
    hc = HydraConfig.get()
    # Hydra sets every logger to INFO; one line per HTTP request would drown the progress.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    job_dir = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    sweep_dir = Path(str(hc.sweep.dir)) if sweep else None
    progress = None
    if sweep_dir is not None:
        # Where the sweep stands: a plain line in the log now, and in front of the replay's
        # own progress line on a terminal.
        progress = sweep_progress(sweep_dir, hc.job.num, sweep_size(sweep_dir)).text
        _log.info(progress())
    ctx = JobContext(
        job_dir=job_dir,
        label=str(hc.job.num) if sweep else job_dir.name,
        alias_tag=f"{sweep_dir.name}-{hc.job.num}" if sweep_dir else job_dir.name,
        choices={str(k): str(v) for k, v in hc.runtime.choices.items()},
        overrides=[str(o) for o in hc.overrides.task],
        sweep=sweep,
        # A sweep may reuse its own jobs; anything else only where the user says.
        resume_roots=[sweep_dir] if sweep_dir else [],
        resume_from=[Path(str(cfg.resume_from))] if cfg.get("resume_from") else [],
        extra_scrub=[sweep_dir / MULTIRUN_FILE] if sweep_dir else [],
        progress=progress,
        planned=sweep_keys(sweep_dir) if sweep_dir else (),
    )
    typed = to_typed(cfg)
    # A sweep's job holds its own folder (a point's jobs may run in other processes); a single
    # run's folder is held by benchkit.callbacks from before Hydra writes into it.
    runner = _held if sweep else run_placed
    try:
        # Parallel jobs on one host lease their devices in the sweep folder (a single run's
        # in outputs/runs); a SLURM job's devices are the scheduler's.
        result = runner(
            typed,
            ctx,
            lease_root=sweep_dir or job_dir.parent,
            job_num=hc.job.num if sweep else 0,
        )
    except KeyboardInterrupt as exc:
        status = getattr(exc, "job_status", "incomplete")
        _log.info(f"{interrupt_reason(exc)}: {job_dir} was written as {status}. {resume_hint(hc)}")
        sys.exit(143 if isinstance(exc, Terminated) else 130)
    # In a sweep the task returns normally whatever the job's status: a launcher (basic,
    # joblib, submitit) hands every job back and the sweep report renders once they all
    # ended (benchkit.callbacks). Exit codes are for single runs only.
    if not sweep:
        # A single run's exit code says whether it measured: scripts can rely on it. A report
        # that could not be rendered (its reason printed) makes it non-zero too.
        code = {"complete": 0, "unavailable": 3}.get(str(result["status"]), 1)
        if not report_of(job_dir, "report", ledger=typed.study.ledger):
            code = code or 1
        if code:
            sys.exit(code)
        return None
    # A sweeper that searches (hydra-optuna-sweeper) minimises what the task returns: the
    # study's objective of a complete job; None for any other, which such a sweeper counts
    # as a failed trial.
    return objective_of_result(result, str(cfg.study.objective))


def objective_of_result(result: Mapping[str, object], objective: str) -> float | None:
    """The job's value of the study's objective (lower is better), None unless complete."""
    from benchkit.report.analysis.evidence import OBJECTIVES

    metrics = result.get("metrics")
    if result.get("status") != "complete" or not isinstance(metrics, Mapping):
        return None
    name = OBJECTIVES.get(objective, objective)
    base, _, pct = name.rpartition("_")
    value = metrics.get(name)
    if value is None and pct.startswith("p"):  # ttft_ms_p95 is metrics["ttft_ms"]["p95"]
        block = metrics.get(base)
        value = block.get(pct) if isinstance(block, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def report_of(folder: Path, what: str, ledger: str | None = None, sweep: bool = False) -> bool:
    """Render the report of a run or sweep folder into its report/, show its closing summary
    (the verdicts, the recommendation, what to run, the report's path) and print where it
    is (stdout: the path alone, for scripts); False, with the reason on stderr, when it
    cannot be rendered. `ledger` is the study config's (the results' own is never used). A
    sweep's summary also goes into the sweep's own benchkit.log (each job's log is its own; a
    single run's log is the run folder's, where logging writes)."""
    from benchkit.report.writeup.closing import SUMMARY_FILE
    from benchkit.report.writeup.render import render_report

    overrides = [f"study.ledger={json.dumps(ledger)}"] if ledger else []
    try:
        out = render_report(folder, folder / "report", overrides=overrides)
    except UserError as exc:
        print(f"benchkit: {exc}", file=sys.stderr)
        return False
    except ModuleNotFoundError as exc:
        # A machine with benchkit's jobs but not its report's packages (the lent GPU machine
        # had no Babel): the measurements stand; say what to install, not a traceback.
        print(
            f"benchkit: the report of {folder} was not written: the Python package "
            f"{exc.name} is not installed here; install benchkit's dependencies "
            f"(pip install -e .) and run python -m benchkit.report {folder}",
            file=sys.stderr,
        )
        return False
    try:
        lines = (out / SUMMARY_FILE).read_text(encoding="utf-8").splitlines()[:-1]
    except OSError:
        lines = []
    # The summary's last line, the report's path, as scripts and the cluster tests read it.
    lines.append(f"{what}: {out / 'report.html'}")
    for line in lines:
        _log.info(line)
    if sweep:
        with (folder / "benchkit.log").open("a", encoding="utf-8") as f:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            f.writelines(f"[{stamp}] {line}\n" for line in lines)
    print(str(out / "report.html"))
    return True


def run_placed(
    cfg: BenchConfig, ctx: JobContext, *, lease_root: Path, job_num: int
) -> Mapping[str, object]:
    """run_job on the devices this job was given (benchkit.host.devices.placement), with what was
    used in result.json as provenance.allocation, scrubbed of secrets however the job ends
    (benchkit.results.scrub).

    Never raises but KeyboardInterrupt: a job that cannot even be placed (a GPU backend in a
    SLURM job without a GPU) or that breaks outside run_job is written
    as a failed result, so the launcher gets every job back and the sweep's report still
    renders.
    """
    try:
        # A server an earlier, killed run of this job left behind holds memory and a port.
        stop_leftover(ctx.job_dir)
        keep_room(ctx.job_dir)
        return _placed(cfg, ctx, lease_root=lease_root, job_num=job_num)
    finally:
        secrets_of(cfg).tree([ctx.job_dir, *ctx.extra_scrub])
        free_room(ctx.job_dir)


def _held(
    cfg: BenchConfig, ctx: JobContext, *, lease_root: Path, job_num: int
) -> Mapping[str, object]:
    """run_placed in a job folder this process holds (benchkit.job.folder). A folder another
    run holds, or one that cannot be written, is left alone: the reason is logged and
    returned, never written."""
    try:
        with hold(ctx.job_dir):
            return run_placed(cfg, ctx, lease_root=lease_root, job_num=job_num)
    except (FolderBusy, OSError) as exc:
        if isinstance(exc, OSError) and not is_write_problem(exc):
            raise
        why = str(exc if isinstance(exc, FolderBusy) else write_problem(exc, ctx.job_dir, "job"))
        _log.error(f"job {ctx.label} not run: {why}")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return secrets_of(cfg).json_object(new_result(cfg, ctx, now, why))


def _placed(
    cfg: BenchConfig, ctx: JobContext, *, lease_root: Path, job_num: int
) -> Mapping[str, object]:
    try:
        with (
            placement(cfg, lease_root=lease_root, job_num=job_num, label=ctx.label) as alloc,
            slurm_time_limit_watch() as limit,
        ):
            result = run_job(cfg, ctx)
            if alloc is None and not limit.signalled:
                return result
            # Adds what job/run.py cannot know (the allocation, why a stop) to the result it has
            # just written.
            typed = load(result)
            extra = dict(typed.provenance.extra)
            reason = typed.reason
            if limit.signalled and typed.status is not Status.complete:
                # submitit stopped the job by raising in it; say why in the user's terms.
                extra["stopped"] = typed.reason
                reason = limit.reason
            if alloc is not None:
                extra["allocation"] = alloc.record()
            typed = replace(typed, reason=reason, provenance=replace(typed.provenance, extra=extra))
            return write_result(ctx.job_dir / RESULT_FILE, typed)
    except UserError as exc:
        return write_failed(cfg, ctx, str(exc))
    except Exception as exc:
        return write_failed(cfg, ctx, failure_reason(exc, ctx.job_dir))


def write_failed(cfg: BenchConfig, ctx: JobContext, reason: str) -> Mapping[str, object]:
    """A failed result.json for a job that never reached run_job, with the reason."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = secrets_of(cfg).json_object(new_result(cfg, ctx, now, reason))
    result["provenance"]["finished_utc"] = now
    _log.info(f"job {ctx.label} failed ({result['reason']})")
    free_room(ctx.job_dir)
    try:
        ctx.job_dir.mkdir(parents=True, exist_ok=True)
        # As JSON (its values as they will be written), through the schema writer.
        return write_result(ctx.job_dir / RESULT_FILE, result)
    except OSError as exc:
        if not is_write_problem(exc):
            raise
        _log.error(f"job {ctx.label}: {write_problem(exc, ctx.job_dir, 'result')}")
        return result


def sweep_size(sweep_dir: Path) -> int | None:
    """How many jobs Hydra's basic sweeper launches into `sweep_dir`: the product of its sweep
    overrides' lengths (command line and hydra.sweeper.params, from multirun.yaml). None for
    another sweeper (racing decides round by round; a search as it goes) or an override that
    cannot be counted without composing (a glob)."""
    try:
        saved = OmegaConf.load(sweep_dir / MULTIRUN_FILE)
        sweeper = saved.hydra.sweeper
        if not str(sweeper.get("_target_", "")).endswith(".BasicSweeper"):
            return None
        params = sweeper.get("params") or {}
        args = [*(f"{k}={v}" for k, v in params.items()), *map(str, saved.hydra.overrides.task)]
        by_key = {o.get_key_element(): o for o in OverridesParser.create().parse_overrides(args)}
        size = 1
        for o in by_key.values():
            if o.is_sweep_override():
                size *= sum(1 for _ in o.sweep_string_iterator())
        return size
    except Exception:  # a progress line is never worth a failed job
        return None


def resume_hint(hc: HydraConf) -> str:
    """How to resume this run: the same command into the same folder."""
    if hc.mode == RunMode.MULTIRUN:
        where = f"hydra.sweep.dir={hc.sweep.dir}"
    else:
        where = f"hydra.run.dir={hc.run.dir}"
    return (
        f"Run the same command again with {where} to resume: its complete jobs are reused "
        "(resume=false re-measures)."
    )


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def main() -> None:
    """Console-script entry point (`benchkit ...` is `python -m benchkit ...`)."""
    # SIGTERM stops a run as Ctrl-C does (errors.Terminated); a handler someone else set
    # (a scheduler's) is left alone.
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _terminated)
    mistake = override_check.problem(sys.argv[1:])
    if mistake is not None:
        print(f"benchkit: {mistake}", file=sys.stderr)
        sys.exit(2)
    # A mapping's new key is added as the report's overrides add it (Hydra reads sys.argv).
    sys.argv[1:] = override_check.adding(sys.argv[1:])
    try:
        _hydra_main()
        # A sweep's jobs return normally whatever their status (a launcher hands each back);
        # the sweep as a whole exits non-zero where nothing completed or no report was written.
        code, failed = callbacks.sweep_failure()
        if code:
            print(f"benchkit: {failed}.", file=sys.stderr)
            sys.exit(code)
    except KeyboardInterrupt as exc:
        # Between two jobs (in the launcher, an import, the report): no job was measuring.
        sweep = callbacks.active_sweep()
        where = f" with hydra.sweep.dir={sweep}" if sweep else ""
        print(
            f"benchkit: {interrupt_reason(exc)} outside a job (between two jobs, or before or "
            "after one); every job that ended is written. "
            f"Run the same command again{where} to resume: its complete jobs are reused.",
            file=sys.stderr,
        )
        _report_so_far(sweep)
        sys.exit(143 if isinstance(exc, Terminated) else 130)
    except SystemExit as exc:
        if exc.code in (130, 143):  # a job stopped by Ctrl-C or SIGTERM, written incomplete
            _report_so_far(callbacks.active_sweep())
        raise


def _report_so_far(sweep: Path | None) -> None:
    """A stopped sweep's report, from the jobs that ended (a second Ctrl-C skips it)."""
    if sweep is None:
        return
    with contextlib.suppress(KeyboardInterrupt):
        report_of(sweep, "sweep report (so far)")


if __name__ == "__main__":
    main()

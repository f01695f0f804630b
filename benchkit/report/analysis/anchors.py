"""Anchor jobs (study.anchors): the jobs of other sweep folders that re-ran some of a sweep's
points on another machine, read as the comparison engine's bridges between machines."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from benchkit.errors import UserError
from benchkit.racing.run import ANCHORS_DIR
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.machine_profile import profile
from benchkit.report.analysis.racing import load_race
from benchkit.report.analysis.sweep import AnchorJob, _is_num, records
from benchkit.report.analysis.table import tidy
from benchkit.results.store import CALLS_FILE, JobResult, find_results
from benchkit.results.store import unit_spans as calls_unit_spans


def race_anchors(source: Path, configured: Sequence[str]) -> list[str]:
    """`configured` (study.anchors), and the folder of anchor jobs a race measured when it was
    resumed on another machine (benchkit.racing.anchors: `anchors/N` beside its jobs), which
    its racing.json lists: the report bridges the machines as the race did, without being told."""
    folders = list(configured)
    race = load_race(source)
    measured = [
        a
        for a in (race or {}).get("anchors") or []
        if isinstance(a, dict) and a.get("status") == "measured"
    ]
    if measured and (source / ANCHORS_DIR).is_dir() and ANCHORS_DIR not in folders:
        folders.append(ANCHORS_DIR)
    return folders


# Factors an anchor job may hold apart from the sweep's: where it ran, and the labels of a run.
_MAY_DIFFER = frozenset({"hardware", "study", "repeats", "server"})


def load_anchors(
    source: Path,
    folders: Sequence[str],
    columns: Sequence[str],
    metric: str,
    sweep: Sequence[JobResult] = (),
) -> list[AnchorJob]:
    """The complete single-pass jobs of each anchor folder (relative to `source`, the results
    folder, unless absolute), with their values of `columns` (the sweep's factors). A folder
    listed twice, or a job that ran another model, workload, sampling or setting than the
    sweep's (`sweep`, its results) is refused: a hostile user's SmolLM2 sweep was paired with
    the CPU study's Qwen jobs, and a folder listed eight times counted as eight runs."""
    out: list[AnchorJob] = []
    held = _held(sweep)
    seen: dict[Path, str] = {}
    for folder in folders:
        root = Path(folder) if Path(folder).is_absolute() else source / folder
        if root.is_dir() and root.resolve() in seen:
            raise UserError(
                f"study.anchors names {folder} and {seen[root.resolve()]}, one folder: each "
                "folder's jobs are one run of their points; list it once."
            )
        if root.is_dir():
            seen[root.resolve()] = folder
        if root.is_dir() and root.resolve() == source.resolve():
            raise UserError(
                f"study.anchors names {folder}, the results folder itself: an anchor folder "
                "holds jobs that ran some of its points again (a twin sweep, a same-machine "
                "check); give that folder, relative to the results folder."
            )
        # Inside the results folder only the race's own anchors (`anchors/`) are not its jobs.
        inside = root.resolve().is_relative_to(source.resolve())
        raced = root.resolve().is_relative_to((source / ANCHORS_DIR).resolve())
        if root.is_dir() and inside and not raced:
            raise UserError(
                f"study.anchors names {folder}, inside the results folder: its jobs are the "
                "sweep's own, not a second run of its points; give a folder beside it."
            )
        if not root.is_dir():
            # "[a b]" is one name with a space in it: two folders are separated by a comma.
            names = ",".join(folder.split())
            split = (
                f" (two folders are separated by a comma: study.anchors=[{names}])"
                if len(folder.split()) > 1
                else ""
            )
            raise UserError(
                f"study.anchors names {folder}, and {root} is not a folder: an anchor folder "
                f"is read relative to the results folder ({source}) unless absolute; "
                f"{_from_here(folder, source) or _ANCHOR_IS}{split}."
            )
        try:
            found = find_results(root)
        except UserError as exc:
            raise UserError(f"study.anchors names {folder}: {exc}") from exc
        results = [r for r in found if r.status == "complete"]
        for r in results:
            _check_held(folder, r, held)
        rows = {str(r["job"]): r for r in records(tidy(results))} if results else {}
        before = len(out)
        for r in results:
            row = rows.get(r.job_dir.name, {})
            value = row.get(metric)
            if isinstance(r.data.get("passes"), list) or not _is_num(value):
                continue
            out.append(
                AnchorJob(
                    job=f"{folder.rstrip('/')}/{r.job_dir.name}",
                    values={c: row.get(c) for c in columns},
                    spans=calls_unit_spans(r.job_dir / CALLS_FILE),
                    value=float(value),
                    machine=ev.machine_name(r.result),
                    profile=profile(r.data),
                )
            )
        if len(out) == before:
            # Said, not passed over: a folder used for nothing left the report as if no anchor
            # had been given (a hostile user's repeats folder, whose jobs ran several passes).
            raise UserError(
                f"study.anchors names {folder}, which holds no complete single-pass job with "
                "a figure to pair: an anchor folder re-runs points once each (a sweep with "
                "repeats is compared by its own repeats); drop it from study.anchors."
            )
    return out


_ANCHOR_IS = "give a run or sweep folder of jobs that re-ran some of its points"


def _from_here(folder: str, source: Path) -> str:
    """The anchor spelt relative to the results folder where `folder` names one from the
    working folder (`study.anchors=[outputs/runs/B]` for a twin beside outputs/runs/A was
    refused, the user not told how to name it); '' where it names none."""
    here = Path(folder)
    if here.is_absolute() or not here.is_dir() or here.resolve() == source.resolve():
        return ""
    spelt = os.path.relpath(here.resolve(), source.resolve())
    return f"{here} is one from the working folder, so write study.anchors=[{spelt}]"


def _held(sweep: Sequence[JobResult]) -> dict[str, dict[str, str]]:
    """Each factor's values the sweep's jobs ran it at ({lowercase text: as written}), where
    it ran and a run's labels aside."""
    held: dict[str, dict[str, str]] = {}
    for r in sweep:
        for k, x in r.result.factors.items():
            if k not in _MAY_DIFFER:
                held.setdefault(k, {})[str(x).lower()] = str(x)
    return held


def _check_held(folder: str, r: JobResult, held: dict[str, dict[str, str]]) -> None:
    """Refuse an anchor job that ran a held factor at a value no sweep job ran."""
    for k, values in held.items():
        x = r.result.factors.get(k)
        if x is not None and str(x).lower() not in values:
            ran = ", ".join(sorted(values.values()))
            raise UserError(
                f"study.anchors names {folder}, whose job {r.job_dir.name} ran {k}={x} where "
                f"this sweep's jobs ran {k}={ran}: anchor jobs re-run this sweep's points; give "
                "a folder of the same model, workload, sampling and settings."
            )

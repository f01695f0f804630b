"""Anchor jobs (study.anchors): the jobs of other sweep folders that re-ran some of a sweep's
points on another machine, read as the comparison engine's bridges between machines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchkit.errors import UserError
from benchkit.racing.run import ANCHORS_DIR
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.racing import load_race
from benchkit.report.analysis.sweep import AnchorJob, _is_num, records
from benchkit.report.analysis.table import tidy
from benchkit.results.store import CALLS_FILE, find_results
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


def load_anchors(
    source: Path, folders: Sequence[str], columns: Sequence[str], metric: str
) -> list[AnchorJob]:
    """The complete single-pass jobs of each anchor folder (relative to `source`, the results
    folder, unless absolute), with their values of `columns` (the sweep's factors)."""
    out: list[AnchorJob] = []
    for folder in folders:
        root = Path(folder) if Path(folder).is_absolute() else source / folder
        if root.is_dir() and root.resolve() == source.resolve():
            raise UserError(
                f"study.anchors names {folder}, the results folder itself: an anchor folder "
                "holds jobs that ran some of its points again (a twin sweep, a same-machine "
                "check); give that folder, relative to the results folder."
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
                f"is read relative to the results folder ({source}) unless absolute; give a "
                f"sweep folder of jobs that re-ran some of its points{split}."
            )
        try:
            found = find_results(root)
        except UserError as exc:
            raise UserError(f"study.anchors names {folder}: {exc}") from exc
        results = [r for r in found if r.status == "complete"]
        rows = {str(r["job"]): r for r in records(tidy(results))} if results else {}
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
                )
            )
    return out

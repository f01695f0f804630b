"""The scored task in the Quality section: each job's accuracy on the study's task file
(quality.task) with its Wilson 95% interval and item count, set against the reference job's,
and what the score can and cannot say. The figures come from result.json's `task` block; this
module chooses the reference, compares and words it (templates/quality_task.md.j2 prints it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchkit.report.analysis.quality import DriftSet, choose_reference
from benchkit.report.lang import fmt, tr, trn
from benchkit.report.lang.i18n import span
from benchkit.results.store import JobResult


@dataclass
class TaskView:
    """What the template prints; `show` False: no job ran a task, nothing is printed."""

    show: bool = False
    reference_text: str = ""
    rows: list[dict[str, object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scored:
    """One job's task figures, as result.json keeps them."""

    correct: int
    items: int
    low: float
    high: float
    task: str
    sha256: str

    @property
    def accuracy(self) -> float:
        return self.correct / self.items


def _scored(block: Mapping[str, Any]) -> Scored | None:
    try:
        items = int(block["items"])
        if items <= 0:
            return None
        return Scored(
            correct=int(block["correct"]),
            items=items,
            low=float(block["ci_low"]),
            high=float(block["ci_high"]),
            task=str(block.get("task") or ""),
            sha256=str(block.get("task_sha256") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _reference(
    scored: Mapping[str, Scored],
    points: Mapping[str, Mapping[str, Any]],
    drift: DriftSet,
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
) -> str | None:
    """The drift's reference when it ran the task, else the same rule over the scored jobs."""
    if drift.reference in scored:
        return drift.reference
    job, _ = choose_reference({j: points[j] for j in scored}, varying, planned, drift.declared)
    return job


def _versus(s: Scored, ref: Scored, lang: str) -> str:
    """The difference from the reference in percentage points, and whether the two 95%
    intervals overlap."""
    diff = 100 * (s.accuracy - ref.accuracy)
    sign = "+" if diff > 0 else "−" if diff < 0 else "±"
    # TRANSLATORS: a difference of two percentages, in percentage points ("+12.5 pp").
    x = f"{sign}{abs(diff):.1f}"
    points = tr(lang, "{x} pp", x=x)
    if s.high >= ref.low and ref.high >= s.low:
        return tr(lang, "{diff} (the intervals overlap)", diff=points)
    return tr(lang, "{diff} (the intervals do not overlap)", diff=points)


def _row(job: str, point: str, s: Scored | None, lang: str) -> dict[str, object]:
    return {
        "job": job,
        "point": point,
        "accuracy": fmt.DASH if s is None else fmt.pct(s.accuracy, 1),
        "interval": fmt.DASH if s is None else span(s.low, s.high, lambda x: fmt.pct(x, 1), lang),
        "n": fmt.DASH if s is None else f"{s.correct}/{s.items}",
        "versus": "",
        "note": "",
    }


def task_view(
    results: Sequence[JobResult],
    drift: DriftSet,
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    lang: str,
    point_text: Callable[[Mapping[str, Any] | None, str], str],
) -> TaskView:
    """The scored task's part of the Quality section, in `lang` (see the module docstring)."""
    view = TaskView()
    complete = [r for r in results if r.status == "complete"]
    # job -> its task block; None: measured without a task.
    blocks: dict[str, Mapping[str, Any] | None] = {
        r.job_dir.name: t if isinstance(t := r.data.get("task"), Mapping) else None
        for r in complete
    }
    if all(b is None for b in blocks.values()):
        return view
    view.show = True
    points = {r.job_dir.name: {f: r.factors.get(f) for f in varying} for r in complete}
    scored = {j: s for j, b in blocks.items() if b is not None and (s := _scored(b))}
    ref = _reference(scored, points, drift, varying, planned) if scored else None
    ref_s = scored.get(ref) if ref else None
    if ref is not None:
        view.reference_text = tr(
            lang,
            "Reference: {point} (job {job}).",
            point=point_text(points[ref], lang) if varying else ref,
            job=ref,
        )
    for job, block in blocks.items():
        s = scored.get(job)
        row = _row(job, point_text(points[job], lang) if varying else job, s, lang)
        if block is None:
            row["note"] = tr(lang, "no task (measured without it)")
        elif s is not None:
            if job == ref:
                row["versus"] = tr(lang, "the reference")
            elif ref_s is not None:
                same = (s.sha256, s.task) == (ref_s.sha256, ref_s.task)
                row["versus"] = _versus(s, ref_s, lang) if same else tr(lang, "another task file")
            errors = int(block.get("errors") or 0)
            if errors:
                row["note"] = trn(
                    lang,
                    "{n} item failed (scored wrong): {first}",
                    "{n} items failed (scored wrong): {first}",
                    errors,
                    first=str(block.get("first_error") or ""),
                )
        else:
            row["note"] = str(block.get("skipped") or "")
        view.rows.append(row)
    view.notes = _notes(complete, scored, lang)
    return view


def _notes(complete: Sequence[JobResult], scored: Mapping[str, Scored], lang: str) -> list[str]:
    tasks = sorted({s.task for s in scored.values()})
    notes = [
        tr(
            lang,
            "How it was scored: after the timed replay and the drift probe, the same server "
            "answered each item of the task file ({tasks}) greedily; the answers are in each "
            "job's task.jsonl and in no timed figure. The interval is the Wilson 95% interval "
            "of the share answered right, from the number of items: when two jobs' intervals "
            "overlap, these items do not show that their accuracies differ.",
            tasks=", ".join(tasks) or fmt.DASH,
        )
    ]
    if len({(s.task, s.sha256) for s in scored.values()}) > 1:
        notes.append(
            tr(
                lang,
                "Not every job answered the same task file: only jobs with the reference's file "
                "are compared with it.",
            )
        )
    synthetic = any(
        (r.data.get("provenance", {}).get("model") or {}).get("synthetic") for r in complete
    )
    if synthetic:
        notes.append(
            tr(
                lang,
                "The model has random weights: its task score says nothing about a real "
                "model's answers; it only shows the task ran.",
            )
        )
    return notes

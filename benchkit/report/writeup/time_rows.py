"""The results tables' companions: what the "All results" table restates (a raced point's
objective on its machine's units in the race, figures without cold starts), and the "Where the
time went" rows (each job's busy shares, slots idle, GPU and server thread)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from benchkit.report.analysis import slot_use
from benchkit.report.analysis.before_prompt import BeforePrompt
from benchkit.report.lang import fmt, i18n, span, tr
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts.folder import Analysed
from benchkit.results.store import CALLS_FILE, JobResult

_TIME_KEYS = (
    "prefill_busy_share", "decode_busy_share", "idle_share", "seqs_per_step",
    "gpu_busy_share", "server_busiest_thread_share",
)  # fmt: skip


class TimeRow(TypedDict):
    """Where one job's wall clock went (the template's "Where the time went" table)."""

    job: str
    point: str
    prefill_busy_share: object
    decode_busy_share: object
    idle_share: object
    seqs_per_step: object
    gpu_busy_share: object
    server_busiest_thread_share: object
    # The share of slot-time idle while the server had work (report.analysis.slot_use).
    slots_idle_share: object
    # The time before the server's prompt timer (report.analysis.before_prompt): its median
    # and range in words, its median share of time to first token, and the part of it the
    # server's log times (slot chosen to task started); None where not known.
    before_prompt_text: str
    before_prompt_ms: float | None
    before_prompt_share: float | None
    slot_to_task_ms: float | None
    slot_to_task_share: float | None
    # Of those matched, the median of a slot's first task and of its later ones.
    slot_first_use_ms: float | None
    slot_reuse_ms: float | None
    # The calls with the figure, and those of them the server's log matched.
    before_prompt_calls: int
    slot_to_task_matched: int
    # A job of one slot: the intervals summed, as a share of its wall clock (one call runs at
    # a time, so none overlaps another's work); None at more slots.
    before_prompt_wall_share: float | None


def rows_note(a: Analysed, lang: str) -> str:
    """What the results table restates: a raced point's objective on its machine's units in
    the race, and figures without cold starts; the other columns (and results.csv) are as each
    job measured them (empty: nothing restated)."""
    bits = []
    if a.sweep.race_stopped or a.sweep.race_best:
        bits.append(
            tr(
                lang,
                "In this raced sweep each point's {objective} is stated on the units its "
                "machine's points ran, from its ratio to those points on the units it ran "
                "(Racing).",
                objective=i18n.objective_words(a.sweep.metric, lang),
            )
        )
    bits += _imputed(a, lang)
    cold = sorted((j for j, st in a.sweep.stalls.items() if st.cold), key=lambda j: (len(j), j))
    if cold:
        bits.append(
            tr(
                lang,
                "Seconds per unit leave the cold starts of {jobs} out (Measurement caveats), and "
                "so do the energy table's seconds and J per unit.",
                jobs=i18n.jobs_text(cold, lang),
            )
        )
    if not bits:
        return ""
    bits.append(
        tr(
            lang,
            "The other columns, results.csv and the energy table's other columns are as each "
            "job measured.",
        )
    )
    return " ".join(bits)


def imputed_jobs(a: Analysed) -> list[str]:
    """The jobs whose table figure is partly imputed: a race stopped them before they ran
    every unit their figure is stated on (marked ‡ in the table)."""
    partly = [j for j, r in a.sweep.restated.items() if r.measured < r.stated]
    return sorted(partly, key=lambda j: (len(j), j))


def _imputed(a: Analysed, lang: str) -> list[str]:
    """What the ‡ marks, with each such job's own figure on the units it ran: a review read
    job 9's 6.1 s (8 of its 16 units imputed) as measured, where it ran 5.85 s a unit."""
    items = []
    for job in imputed_jobs(a):
        r = a.sweep.restated[job]
        items.append(
            tr(
                lang,
                "job {job} {own} ({measured} of {stated} units)",
                job=job,
                own=fmt.seconds(r.own, lang),
                measured=r.measured,
                stated=r.stated,
            )
        )
    if not items:
        return []
    return [
        tr(
            lang,
            "‡ Partly imputed: the race stopped these jobs before they ran every unit their"
            " figure is stated on, and the units they did not run are imputed from the points"
            " measured on their machine. As measured, on their own units: {items}.",
            items=", ".join(items),
        )
    ]


def time_rows(a: Analysed, rows: Sequence[Mapping[str, Any]], lang: str) -> list[TimeRow]:
    """Where each complete job's wall clock went (measure.DEFINITIONS), the point named by
    the factors the sweep varies; none when no job has these figures."""
    out = []
    # Each job's result by name (the first of a name, as a search of the list finds it): a
    # search per row was a million comparisons in a 1,000-job sweep.
    by_name: dict[str, JobResult] = {}
    for j in a.results:
        by_name.setdefault(j.job_dir.name, j)
    for r in rows:
        if r.get("status") != an.COMPLETE or all(r.get(k) is None for k in _TIME_KEYS[:3]):
            continue
        point = {k: r.get(k) for k in a.sweep.varying}
        job = by_name.get(str(r["job"]))
        idle = None
        before = None
        wall_share = None
        if job is not None:
            jc = a.calls.get(job.path)
            before = jc.before_prompt if jc is not None else None
            wall_share = _wall_share(job, before, a.sweep.constants.get("slots"))
            slots = job.result.factors.get("slots") or a.sweep.constants.get("slots") or 1
            # The windows the report took when it read the calls, else from the file.
            read = a.calls.get(job.path)
            if job.result.factors.get("load") not in (None, "closed"):
                # Open-loop load: the calls in flight fill the slots, not the units.
                windows = slot_use.call_windows(job.job_dir / CALLS_FILE)
            elif read is not None and job.status == an.COMPLETE:
                windows = read.windows
            else:
                windows = slot_use.unit_windows(job.job_dir / CALLS_FILE)
            idle = slot_use.idle_slot_share(windows, int(str(slots)))
        out.append(
            TimeRow(
                job=str(r["job"]),
                point=i18n.point_text(point, lang),
                prefill_busy_share=r.get("prefill_busy_share"),
                decode_busy_share=r.get("decode_busy_share"),
                idle_share=r.get("idle_share"),
                seqs_per_step=r.get("seqs_per_step"),
                gpu_busy_share=r.get("gpu_busy_share"),
                server_busiest_thread_share=r.get("server_busiest_thread_share"),
                slots_idle_share=idle,
                before_prompt_text=_before_text(before, lang),
                before_prompt_ms=before.median_ms if before else None,
                before_prompt_share=before.share if before else None,
                slot_to_task_ms=before.slot_to_task_ms if before else None,
                slot_to_task_share=before.slot_to_task_share if before else None,
                slot_first_use_ms=before.first_use_ms if before else None,
                slot_reuse_ms=before.reuse_ms if before else None,
                before_prompt_calls=before.calls if before else 0,
                slot_to_task_matched=before.matched if before else 0,
                before_prompt_wall_share=wall_share,
            )
        )
    return out


def _wall_share(job: JobResult, b: BeforePrompt | None, constant: object) -> float | None:
    """A one-slot job's intervals before the prompt timer summed, over its wall clock; None
    at more slots or under open-loop load (calls then wait in a queue, in flight together)."""
    slots = job.result.factors.get("slots", constant)
    wall = job.result.metrics.wall_s
    closed = job.result.factors.get("load") in (None, "closed")
    if b is None or str(slots) != "1" or not wall or not closed:
        return None
    return b.total_ms / 1000 / float(wall)


def _before_text(b: BeforePrompt | None, lang: str) -> str:
    """'92 (44–196)': the median and the range, in ms ('–' where not known)."""
    if b is None:
        return fmt.num(None)
    return tr(
        lang,
        "{median} ({range})",
        median=fmt.num(b.median_ms, 0),
        range=span(lang, fmt.num(b.low_ms, 0), fmt.num(b.high_ms, 0)),
    )

"""What the report takes from each job's calls.jsonl, from one read of the file.

The report takes five things from a job's calls: the client-side figures that results written
before them lack (`table.figures_from_calls`), the calls as far as the generation cap goes
(`caps`), the stalls (`stalls`), the seconds each unit took, which the noise rule pairs
(`results.spans_of`), and each unit's window, over which the idle-slot share is taken
(`slot_use.windows_of`). Each of them used to read and parse the file itself: four parses of
every call, most of a 1,000-job report's time. Here each file is parsed once and each of them
is given the calls under the conditions it read them under before; the calls are then let go
and only what was taken from them is kept (a large sweep's calls, as Python objects, would take
many times the memory the rest of the report needs). The fields the readers take are read from
the calls once, as columns (benchkit.report.analysis.call_columns), where the file is as benchkit
writes it.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.measure.telemetry import TELEMETRY_FILE
from benchkit.report.analysis import before_prompt as bp
from benchkit.report.analysis import call_columns, kv_read, warmup
from benchkit.report.analysis.call_columns import Columns, columns_of
from benchkit.report.analysis.caps import JobCaps, job_caps
from benchkit.report.analysis.slot_use import windows_of
from benchkit.report.analysis.stalls import JobStalls, find_stalls
from benchkit.report.analysis.table import figures_from_calls, needs_calls
from benchkit.results import bounded
from benchkit.results.store import CALLS_FILE, JobResult, jsonl_of, read_jsonl, spans_of


@dataclass(frozen=True)
class JobCalls:
    """What the report takes from one job's calls.jsonl; empty where it takes nothing."""

    # The row's figures from the calls (`table.figures_from_calls`), where the row asks.
    figures: dict[str, object] = field(default_factory=dict)
    caps: JobCaps | None = None
    # The job's stalls, where it has any.
    stalls: JobStalls | None = None
    # The numbers (from 1) of the lines that are not a JSON object.
    unreadable: list[int] = field(default_factory=list)
    # Seconds each unit took (a single-pass job's), and each unit's window (every pass's).
    spans: dict[str, float] = field(default_factory=dict)
    windows: list[tuple[float, float]] = field(default_factory=list)
    # The mean context of a decode step, in positions (the roofline's KV term), and the time
    # before the server's prompt timer (analysis.before_prompt), of a complete job's calls.
    decode_context: float | None = None
    before_prompt: bp.BeforePrompt | None = None


def read_calls(results: Sequence[JobResult]) -> dict[Path, JobCalls]:
    """Each job's `JobCalls`, by its result.json's path: the calls of every complete job, and
    of any other whose row takes figures from them."""
    # Without the cyclic collector meanwhile: parsing allocates millions of objects, and each
    # full collection it set off went through every result the report holds (a fifth of the
    # reading's time in a 1,000-job sweep). Parsed JSON holds no cycles for it to find, and
    # what is let go is freed by reference counting all the same.
    paused = gc.isenabled()
    gc.disable()
    shared: dict[frozenset[str], frozenset[str]] = {}
    try:
        return {r.path: job_calls(r, shared) for r in results}
    finally:
        if paused:
            gc.enable()


def job_calls(r: JobResult, shared: dict[frozenset[str], frozenset[str]] | None = None) -> JobCalls:
    """One job's `JobCalls` (see the module docstring); `shared` as `caps.job_caps` takes it."""
    complete = r.status == "complete"
    single = not isinstance(r.data.get("passes"), list)
    if not complete and not needs_calls(r):
        return JobCalls()
    path = r.job_dir / CALLS_FILE
    calls, bad, cols, count, read = _parse(path)
    # The row's figures were read with `read_records`, which refuses a file that cannot be
    # read or has a line that is not a JSON object: such a file is read as it read it.
    figures = (
        figures_from_calls(r, calls if read and not bad else None, cols) if needs_calls(r) else {}
    )
    if not complete:
        return JobCalls(figures=figures)
    windows = call_columns.windows(cols) if cols is not None else None
    if windows is None:
        windows = windows_of(calls)
    context, before = _timing(r, calls, cols)
    if not single:
        # A job of several passes has its figures per pass in result.json.
        return JobCalls(
            figures=figures, windows=windows, decode_context=context, before_prompt=before
        )
    caps, stalls, m = None, None, r.result.metrics
    # A file that is not there is no file cut short (reference data has none): its figures
    # are simply not drawn from calls, as before.
    short = _short(count, bad, m.calls_completed, m.calls_failed) if read else None
    if short is not None:
        # A file cut short or edited: its units' spans would pair a unit's first calls as if
        # they were all of it (a cut file turned a study's knee), so nothing is drawn from the
        # calls; the missing lines are named as unreadable (caveats.unreadable_calls).
        return JobCalls(figures, unreadable=short, windows=windows)
    if count:
        caps = job_caps(r.job_dir.name, calls, shared, cols)
    if count and m.wall_s and m.units_completed:
        tel = _telemetry(r.job_dir / TELEMETRY_FILE)
        job, wall, units = r.job_dir.name, float(m.wall_s), int(m.units_completed)
        found = find_stalls(job, calls, wall, units, tel, warmup.warmed(r), cols)
        stalls = found if found.stalls else None
    spans = spans_of(calls) if cols is None else call_columns.spans(cols)
    return JobCalls(figures, caps, stalls, bad, spans, windows, context, before)


def _timing(
    r: JobResult, calls: list[dict[str, object]], cols: Columns | None
) -> tuple[float | None, bp.BeforePrompt | None]:
    """A complete job's mean decode context and its time before the server's prompt timer,
    from the columns where the file gave them, else from its successful calls."""
    log = bp.log_of(r.job_dir)
    if cols is not None:
        context = kv_read.decode_context(cols.prompt_tokens, cols.completion)
        return context, bp.before_prompt(cols.sent, cols.first, cols.prompt_ms, cols.prompt_n, log)
    ok = [c for c in calls if c.get("ok") is True]
    pairs = [
        (int(str(p)), int(str(n)))
        for p, n in ((c.get("prompt_tokens"), c.get("completion_tokens")) for c in ok)
        if _count(p) and _count(n)
    ]
    context = kv_read.decode_context([p for p, _ in pairs], [n for _, n in pairs])
    return context, bp.of_calls(ok, log)


def _count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _parse(path: Path) -> tuple[list[dict[str, object]], list[int], Columns | None, int, bool]:
    """A calls.jsonl's calls as dicts, its unreadable lines, the readers' columns, the number
    of calls and whether the file could be read. Each field every reader takes is read once:
    straight from the bytes where every call is as benchkit writes it and of one pass (no
    dicts are made then: the readers take the columns); else from the file's dicts, with
    their columns where they have them (None where a call is not as benchkit writes it: the
    readers then read the dicts, to the same figures)."""
    try:
        data = bounded.read_bytes(path)
    except OSError:
        return [], [], None, 0, False
    fast = call_columns.from_bytes(data) if len(data) <= bounded.LINE_LIMIT else None
    if fast is not None and call_columns.windows(fast[1]) is not None:
        return [], [], fast[1], len(fast[0]), True
    calls, bad = jsonl_of(path, data)
    return calls, bad, columns_of(calls), len(calls), True


def _telemetry(path: Path) -> list[dict[str, object]]:
    """The timed pass's telemetry samples; none where the job has no telemetry.jsonl."""
    # Looked for first: the bounded reader resolves the path before it finds nothing there,
    # a tenth of a millisecond a job (reference data and synthetic sweeps have no file).
    if not os.path.lexists(path):
        return []
    return [s for s in read_jsonl(path) if s.get("pass", 0) == 0]


def _short(
    count: int, bad: list[int], completed: int | None, failed: int | None
) -> list[int] | None:
    """The unreadable lines of a calls.jsonl that is not whole: lines that are not a call, and
    the first line missing where result.json counts more calls than the file holds; None for
    a whole file."""
    counted = (completed or 0) + (failed or 0)
    if not bad and (not counted or count >= counted):
        return None
    missing = list(range(count + len(bad) + 1, counted + 1))
    return sorted({*bad, *missing[:1]})


def stalls_caps(
    calls: Mapping[Path, JobCalls], results: Sequence[JobResult]
) -> tuple[dict[str, JobStalls], dict[str, JobCaps], dict[str, list[int]]]:
    """The stalls, the calls as far as the cap goes and the unreadable lines of calls.jsonl,
    by job, as the sweep holds them."""
    stalls: dict[str, JobStalls] = {}
    capped: dict[str, JobCaps] = {}
    unreadable: dict[str, list[int]] = {}
    for r in results:
        jc = calls[r.path]
        job = r.job_dir.name
        if jc.unreadable:
            unreadable[job] = jc.unreadable
        if jc.caps is not None:
            capped[job] = jc.caps
        if jc.stalls is not None:
            stalls[job] = jc.stalls
    return stalls, capped, unreadable

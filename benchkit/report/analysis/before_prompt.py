"""The time before the server's prompt timer: a call's time to first token as the client
measured it, less the prompt time the server reported for it (timings.prompt_ms). Pure but
for reading server.log.

What that time holds, the data show only in part. The client's side: the request going out,
the first token coming back. The server's: reading the request and tokenising it, waiting for
its loop to take the task, and what it does between choosing a slot and starting the task. The
last is the one part the server's log times: its "selected slot" and "processing task" lines
for the same slot. A task is matched to its call by the prompt time and prompt tokens its
log line prints, which are the call's own timings (to the hundredth of a millisecond). The rest
is not isolated.

A review found about 100 ms of it per call on the GPU studies, near half of each call's time to
first token, and in no table.
"""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchkit.results import bounded

SERVER_LOG = "server.log"

# llama.cpp's log time (minutes.seconds.milliseconds.microseconds since the server started),
# and the lines around the interval the server times: a slot chosen for a task, the task
# started on it, and the task's prompt time and tokens.
_STAMP = r"^(\d+)\.(\d{2})\.(\d{3})\.(\d{3}) "
_CHOSEN = re.compile(_STAMP + r".*get_availabl: id +(\d+) \| task -1 \| selected slot")
_STARTED = re.compile(_STAMP + r".*launch_slot_: id +(\d+) \| task (\d+) \| processing task")
_PROMPT = re.compile(
    r"print_timing: id +\d+ \| task (\d+) \| prompt eval time = +([\d.]+) ms / +(\d+) tok"
)

# A call's key in the log: its prompt time as the log prints it (hundredths of a ms) and its
# prompt tokens.
Key = tuple[int, int]
# A task's logged interval in ms, and whether it was its slot's first task of the log: on the
# GPU studies a slot's first task waited about 0.03 ms, every later one 50-90 ms (review 12
# found the two folded into one median).
Logged = tuple[float, bool]


@dataclass(frozen=True)
class BeforePrompt:
    """One job's calls: the time before the server's prompt timer, in milliseconds (median,
    least, most), its median share of the call's time to first token, and, over the calls
    its server log matches, the median interval between choosing a slot and starting the
    task and how many calls were matched (0: no log, or none matched)."""

    calls: int
    median_ms: float
    low_ms: float
    high_ms: float
    share: float
    # Over the matched calls that were not their slot's first task (all matched calls where
    # none was): the median logged interval, and the median of each one's interval over its
    # own gap.
    slot_to_task_ms: float | None = None
    slot_to_task_share: float | None = None
    matched: int = 0
    # The calls' intervals summed (a job of one slot runs one call at a time, so this is
    # the part of its wall clock they took).
    total_ms: float = 0.0
    # The median logged interval of the log's tasks that were their slot's first, and of
    # those that were not, over every task the log timed (None where none was of that kind).
    first_use_ms: float | None = None
    reuse_ms: float | None = None


def before_prompt(
    sent: Iterable[float],
    first: Iterable[float],
    prompt_ms: Iterable[float],
    prompt_n: Iterable[int],
    log: Mapping[Key, Logged] | None = None,
) -> BeforePrompt | None:
    """From each call's send and first-token times (seconds) and the server's prompt time
    (ms) and tokens, with the slot-to-task interval of each task of the server's log by its
    key (`slot_to_task`). None without a call with a first token."""
    # As arrays: a 1,000-job report reads 200,000 calls here (0.34 s as a Python loop).
    s, f = np.asarray(list(sent), dtype=float), np.asarray(list(first), dtype=float)
    p, n = np.asarray(list(prompt_ms), dtype=float), np.asarray(list(prompt_n), dtype=np.int64)
    ttft = (f - s) * 1000
    timed = ttft > 0
    if not timed.any():
        return None
    gaps, p, n = ttft[timed] - p[timed], p[timed], n[timed]
    shares = gaps / ttft[timed]
    # Each matched call's logged interval, and its share of that call's own gap. The key is
    # the prompt time as the log's printf("%.2f") rounds it (522.255 is 522.25 there, and
    # 52226 as a rounded product: review 13 found 3 of job 0's 32 decode calls unmatched).
    keys = zip([_hundredths(x) for x in p.tolist()], n.tolist(), gaps.tolist(), strict=True)
    found = [(x, g) for pp, nn, g in keys if (x := (log or {}).get((pp, nn))) is not None]
    found = [(x, g) for x, g in found if g > 0]
    # A slot's later tasks, where the interval is (on the GPU studies a first task waited
    # 0.03 ms, a later one 50-90 ms): one median over both fell on either side by the count
    # of each (review 13: job 0's "0.1 ms" was the 15th of 29, 15 of them first tasks).
    later = [(x[0], x[0] / g) for x, g in found if not x[1]] or [(x[0], x[0] / g) for x, g in found]
    # Over every task the log timed, the warm-up's too: a slot's first task is most often a
    # warm-up call, which no timed call matches.
    firsts = [x for x, new in (log or {}).values() if new]
    reuse = [x for x, new in (log or {}).values() if not new]
    return BeforePrompt(
        calls=int(gaps.size),
        median_ms=float(np.median(gaps)),
        low_ms=float(gaps.min()),
        high_ms=float(gaps.max()),
        share=float(np.median(shares)),
        slot_to_task_ms=statistics.median(x for x, _ in later) if later else None,
        matched=len(found),
        slot_to_task_share=statistics.median(r for _, r in later) if later else None,
        total_ms=float(gaps.sum()),
        first_use_ms=statistics.median(firsts) if firsts else None,
        reuse_ms=statistics.median(reuse) if reuse else None,
    )


def of_calls(
    calls: Iterable[Mapping[str, object]], log: Mapping[Key, Logged] | None = None
) -> BeforePrompt | None:
    """`before_prompt` of a job's calls as dicts: the successful ones with their times and
    the server's prompt figures."""
    rows: list[tuple[float, float, float, int]] = []
    for c in calls:
        timings = c.get("timings")
        t = timings if isinstance(timings, dict) else {}
        s, f, p, n = c.get("t_sent"), c.get("t_first"), t.get("prompt_ms"), t.get("prompt_n")
        if c.get("ok") is True and _num(s) and _num(f) and _num(p) and _num(n):
            rows.append((float(s), float(f), float(p), int(n)))  # type: ignore[arg-type]
    if not rows:
        return None
    sent, first, prompt, tokens = zip(*rows, strict=True)
    return before_prompt(sent, first, prompt, tokens, log)


def slot_to_task(lines: Iterable[str]) -> dict[Key, Logged]:
    """Each task's interval, in ms, from the server choosing its slot to starting it, and
    whether it was the slot's first task, by the task's prompt time and tokens (a key two
    tasks share is left out: it names no one call)."""
    chosen: dict[str, float] = {}
    started: dict[str, Logged] = {}
    used: set[str] = set()
    out: dict[Key, Logged] = {}
    shared: set[Key] = set()
    for line in lines:
        if m := _CHOSEN.match(line):
            chosen[m.group(5)] = _ms(m)
        elif (m := _STARTED.match(line)) and m.group(5) in chosen:
            slot = m.group(5)
            started[m.group(6)] = (_ms(m) - chosen.pop(slot), slot not in used)
            used.add(slot)
        elif (m := _PROMPT.search(line)) and m.group(1) in started:
            key = (round(float(m.group(2)) * 100), int(m.group(3)))
            if key in out:
                shared.add(key)
            out[key] = started.pop(m.group(1))
    return {k: v for k, v in out.items() if k not in shared}


def log_of(job_dir: Path) -> dict[Key, Logged]:
    """`slot_to_task` of a job's server log; empty without one."""
    path = job_dir / SERVER_LOG
    # Looked for first, as job_calls looks for telemetry: a large sweep's reference or
    # synthetic results have no log, and the bounded reader resolves a path before it finds
    # nothing there.
    if not os.path.lexists(path):
        return {}
    try:
        return slot_to_task(bounded.lines(path))
    except OSError:
        return {}


def _hundredths(ms: float) -> int:
    """A prompt time in hundredths of a ms as printf("%.2f") rounds it."""
    return int(f"{ms:.2f}".replace(".", ""))


def _ms(m: re.Match[str]) -> float:
    minutes, seconds, ms, us = (int(m.group(i)) for i in range(1, 5))
    return (minutes * 60 + seconds) * 1000 + ms + us / 1000


def _num(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)

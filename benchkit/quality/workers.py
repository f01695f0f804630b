"""The probe's and the task's parallel calls, stoppable: worker w runs its group of items in
order, each group on its own slot.

`with ThreadPoolExecutor(...)` waits, on leaving, for every item already queued: Ctrl-C or
SIGTERM in a drift probe of 64 prompts x 48 tokens (3,000 requests) went on for minutes, and the
sweep looked as if it ignored the signal (issue #42: "SIGTERM to a plain sweep took over 8 s and
did not stop it"). Here an interrupt stops every worker before its next item; the request in
flight ends when the job stops its server, right after.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

R = TypeVar("R")


def each_group(one: Callable[[int], R], groups: Sequence[Sequence[int]]) -> list[R]:
    """`one(i)` for every item of every group, a thread per group; the results in group order.
    An exception in the calling thread (KeyboardInterrupt) stops every group at its next item
    and is raised at once, without waiting for the items in flight."""
    stop = threading.Event()

    def run(group: Sequence[int]) -> list[R]:
        out = []
        for i in group:
            if stop.is_set():
                break
            out.append(one(i))
        return out

    pool = ThreadPoolExecutor(max_workers=max(1, len(groups)))
    try:
        futures = [pool.submit(run, g) for g in groups]
        results = [r for f in futures for r in f.result()]
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results

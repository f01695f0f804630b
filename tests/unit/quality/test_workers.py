"""The probe's and the task's workers stop at their next item when the calling thread is
interrupted (benchkit/quality/workers.py): leaving `with ThreadPoolExecutor` used to wait for
every queued request, and SIGTERM during a 3,000-request drift probe ran on for minutes."""

from __future__ import annotations

import threading
import time

import pytest

from benchkit.quality.workers import each_group


def test_results_come_in_group_order() -> None:
    assert each_group(lambda i: i * 10, [[0, 2, 4], [1, 3]]) == [0, 20, 40, 10, 30]


def test_an_interrupt_stops_every_group_before_its_next_item() -> None:
    done: list[int] = []
    second_group_started = threading.Event()

    def one(i: int) -> int:
        if i == 0:
            second_group_started.wait(10)
            # As Ctrl-C or SIGTERM (errors.Terminated) reaches the waiting thread.
            raise KeyboardInterrupt
        second_group_started.set()
        time.sleep(0.01)
        done.append(i)
        return i

    long_group = list(range(1, 501))
    with pytest.raises(KeyboardInterrupt):
        each_group(one, [[0], long_group])
    time.sleep(0.1)  # the item in flight ends; no next one starts
    stopped_at = len(done)
    time.sleep(0.1)
    assert len(done) == stopped_at < len(long_group)

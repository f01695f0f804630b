"""Open-loop load: send each call when its schedule (benchkit.load.arrivals) says, whatever
the server is doing, and record it as the closed-loop replay records its calls.

An arrival never waits for an earlier call: when the server falls behind, its queue grows
and the wait shows as time to first token, as a user arriving then would see it. Each call
has its own connection, as an independent user has (`Connection: close`), opened just before
the call is due: a kept-alive idle connection would hold one of llama-server's HTTP threads
and delay the next user's request for a reason no user causes. Two bounds end an overloaded
pass by itself: an arrival that finds `load.max_in_flight` calls in flight, and
`load.max_pass_s` after the first arrival.
The pass then stops sending, stops the calls in flight (recorded with `cut`: not failures)
and says which bound ended it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence
from typing import Any

import httpx

from benchkit import timeouts
from benchkit.client.fallback import fast_path_refusal
from benchkit.client.replay import CallRecord, OpenLoopPass, Replayer, ReplayOutcome
from benchkit.client.transport import CLIENT_RAW, RawPool
from benchkit.load.arrivals import Schedule
from benchkit.workload import Call, Unit

# The first arrival is this far after the schedule is laid, so it is not late from the start.
LEAD_S = 0.02
# A coarse sleep wakes up to about a millisecond late (the selector's timeout is rounded up
# to whole milliseconds) and later still after the machine idled: it ends this early and the
# rest is waited for by yielding to the loop. 1.2 ms left a third of the calls at 2 calls/s
# 0.3 to 0.8 ms late; 2 ms sends them within 0.05 ms (docs/perf/README.md, section 8).
SPIN_S = 0.002

# Each call starts this long before it is due: its request is built and its connection
# opened, then it waits (_wait_to_send) and goes at its time.
PREPARE_S = 0.01

ENDED_IN_FLIGHT = "max_in_flight"
ENDED_PASS_LENGTH = "max_pass_s"


class OpenLoopReplayer(Replayer):
    """A Replayer whose calls arrive on a schedule. `spec.workers` is the bound on calls in
    flight (`load.max_in_flight`): the connections the pass may have open at once."""

    def __init__(self, *, schedule: Schedule, max_pass_s: float, **kw: Any) -> None:
        super().__init__(**kw)
        self.schedule = schedule
        self.max_pass_s = max_pass_s
        self.ended: str | None = None  # which bound ended the pass (ENDED_*), if one did
        self.cut_at_bound = False  # arrivals left unsent past load.max_pass_s
        self.ended_at: float | None = None
        self.sent = 0
        self.peak_in_flight = 0
        self._due: dict[int, float] = {}  # connection index -> its call's scheduled time
        self._in_flight = 0

    def units(self) -> list[Unit]:
        ids = dict.fromkeys(c.unit for c in self.schedule.calls)
        return [u for u in self.workload.units if u.id in ids]

    def _keep(self, rec: CallRecord) -> bool:
        rec.t_scheduled = self._due.get(rec.worker)
        if self.ended is not None and rec.error is not None and rec.error.startswith("cancelled"):
            rec.cut = True
            rec.error = f"unfinished when the pass ended at its bound (load.{self.ended})"
        return super()._keep(rec)

    async def _arrival(
        self, client: httpx.AsyncClient, call: Call, worker: int, free: list[int]
    ) -> None:
        try:
            rec = await self._call(client, call, self.repeat, worker)
            self._tokens += rec.completion_tokens or 0
            if not self._keep(rec):
                return
            if not rec.ok and self.interrupted is None:
                self.interrupted = await self._server_down(client)
        finally:
            self._in_flight -= 1
            free.append(worker)
            self._show()

    async def _wait_to_send(self, worker: int) -> bool:
        await self._sleep_until(self._due[worker])
        return True

    async def _sleep_until(self, due: float) -> None:
        wait = due - self.now() - SPIN_S
        if wait > 0:
            await asyncio.sleep(wait)
        while self.now() < due:
            await asyncio.sleep(0)

    async def _send_all(self, client: httpx.AsyncClient, tasks: set[asyncio.Task[None]]) -> float:
        """Send every arrival on time, until a bound or a dead server stops the pass; returns
        the pass's deadline."""
        start = self.now() + LEAD_S
        deadline = start + self.max_pass_s
        free = list(range(self.spec.workers))[::-1]
        for offset, call in zip(self.schedule.offsets, self.schedule.calls, strict=True):
            due = start + offset
            if due > deadline:
                # The rest of the schedule lies past the bound: not sent. The calls already
                # sent (one may still wait for its time) run on until the deadline.
                self.cut_at_bound = True
                break
            # The call starts early: its request is built and its connection opened before it
            # is due, and it waits in _wait_to_send, so neither is in its lag.
            await self._sleep_until(due - PREPARE_S)
            if self.interrupted is not None:
                break
            if not free:
                await self._sleep_until(due)  # a call may still finish before this one is due
                if not free:
                    self.ended, self.ended_at = ENDED_IN_FLIGHT, self.now()
                    break
            worker = free.pop()
            self._due[worker] = due
            self._in_flight += 1
            self.sent += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            task = asyncio.create_task(self._arrival(client, call, worker, free))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return deadline

    async def _run(self) -> None:
        timeout = httpx.Timeout(
            connect=timeouts.REPLAY_CONNECT_S,
            read=self.spec.stall_timeout_s,
            write=timeouts.REPLAY_WRITE_S,
            pool=None,
        )
        limits = httpx.Limits(max_connections=self.spec.workers, max_keepalive_connections=0)
        # The caller's headers decide the path (benchkit.client.fallback); ours closes each call.
        closing = {**self.headers, "Connection": "close"}
        async with httpx.AsyncClient(timeout=timeout, limits=limits, headers=closing) as client:
            self.client_fallback = fast_path_refusal(
                self.base_url, self.headers, client, self.client_choice
            )
            if self.client_fallback is None:
                self.client_path = CLIENT_RAW
                # Connections open at each arrival; the address is resolved before the clock.
                self._pool = RawPool(self.base_url, closing, self.spec.workers)
                with contextlib.suppress(httpx.ConnectError):  # the first call records it
                    await self._pool.endpoint.addresses()
            tasks: set[asyncio.Task[None]] = set()
            try:
                deadline = await self._send_all(client, tasks)
                if tasks and self.ended is None and self.interrupted is None:
                    # The calls sent finish, within the pass's bound.
                    _, pending = await asyncio.wait(
                        set(tasks), timeout=max(deadline - self.now(), 0.0)
                    )
                    if pending:
                        self.ended, self.ended_at = ENDED_PASS_LENGTH, self.now()
                if self.cut_at_bound and self.ended is None and self.interrupted is None:
                    self.ended, self.ended_at = ENDED_PASS_LENGTH, self.now()
            finally:
                if tasks and self.ended is None:
                    self.ended_at = self.now()  # a dead server or an interrupt: stopped here
                for t in list(tasks):
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if self._pool is not None:
                    self._pool.close()

    def run(self) -> ReplayOutcome:
        outcome = super().run()
        outcome.open_loop = OpenLoopPass(
            process=self.schedule.process.value,
            offered_rps=self.schedule.offered_rps,
            arrivals_planned=len(self.schedule),
            arrivals_sent=self.sent,
            peak_in_flight=self.peak_in_flight,
            max_in_flight=self.spec.workers,
            ended=self.ended,
            ended_at=self.ended_at,
        )
        return outcome

    def _show(self) -> None:
        if not self.progress:
            return
        sweep = f"{self.status()}; " if self.status is not None else ""
        print(
            f"\r[benchkit] {sweep}arrivals {self.sent}/{len(self.schedule)}  in flight "
            f"{self._in_flight}  calls {calls_text(self.records)}  {self.now():,.0f} s\x1b[K",
            end="",
            file=sys.stderr,
            flush=True,
        )


def calls_text(records: Sequence[CallRecord]) -> str:
    """The progress line's calls: `12 done, 1 failed, 3 cut`. A call the pass stopped at its
    bound (`cut`) did not finish and is no failure, so it counts apart from both (the line had
    counted every record as a finished call)."""
    cut = sum(1 for r in records if r.cut)
    done = sum(1 for r in records if r.ok and not r.cut)
    failed = len(records) - cut - done
    text = f"{done} done"
    if failed:
        text += f", {failed} failed"
    if cut:
        text += f", {cut} cut"
    return text

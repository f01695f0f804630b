"""Replay a workload against a server and record every call as it happened.

`slots` workers each take the next unit and run its calls in order, as a pipeline with that
many parallel lanes would. Each call is streamed; the client records when it sent the
request, when the first and last tokens arrived, and keeps the server's own `timings`,
`usage` and `finish_reason` beside them, never instead of them. Records are appended to
calls.jsonl as calls finish, so a job that dies keeps what it measured.

How a call is timed: against an ``http://`` server each worker has its own kept-alive
connection (benchkit/client/transport.py), `t_sent` is taken right before the request is written and
a token's time is when the kernel received it, so neither the client's own work nor a busy
machine lands in TTFT or ITL. Where that path cannot be used (https, a proxy, no
SO_TIMESTAMPNS here) the calls go through httpx as they always did, timed when the event
loop reads each line. `client` in each record, and in the outcome with the reason for a
fallback, says which path measured.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import httpx

from benchkit import timeouts
from benchkit.client.fallback import check_client, fast_path_refusal
from benchkit.client.http1 import ResponseHead
from benchkit.client.stream import EventStream, StreamFacts, error_message
from benchkit.client.transport import (
    CLIENT_HTTPX,
    CLIENT_RAW,
    CLIENT_RAW_READ_TIME,
    Http1Connection,
    RawPool,
)
from benchkit.config.schema import OutputPolicy
from benchkit.errors import interrupt_reason
from benchkit.results import bounded
from benchkit.results.owned import is_write_problem, write_problem
from benchkit.server.plan import ReplaySpec
from benchkit.workload import Call, Unit, Workload, token_ids


@dataclass(kw_only=True)
class CallRecord(StreamFacts):
    """One call as measured: the stream's facts (first/last token times, counts, timings,
    error; benchkit.client.stream) and the call's own. Times are seconds since the replay
    started (monotonic clock)."""

    repeat: int
    unit: str
    seq: int
    role: str
    worker: int
    t_sent: float
    t_done: float | None = None
    ok: bool = False
    http_status: int | None = None
    max_tokens: int = 0
    # The workload's generation cap (max_tokens may be lower when replaying recorded lengths).
    cap: int = 0
    fixture_prompt_tokens: int | None = None
    fixture_completion_tokens: int | None = None
    # What measured this call: transport.CLIENT_RAW (kernel receive times), CLIENT_RAW_READ_TIME
    # (the raw path, but some read was timed when read) or CLIENT_HTTPX.
    client: str = CLIENT_HTTPX
    # Open-loop load (benchkit.load.openloop) only: when the schedule said to send it, and
    # whether the pass ended (overloaded) before it finished: such a call is not a failure.
    t_scheduled: float | None = None
    cut: bool = False

    @property
    def hit_cap(self) -> bool:
        """Stopped by length at the workload's cap: a runaway output, not a forced replay length."""
        if self.finish_reason != "length":
            return False
        return self.cap <= 0 or (self.completion_tokens or 0) >= self.cap


OPEN_LOOP_FIELDS = ("t_scheduled", "cut")


@dataclass(frozen=True)
class OpenLoopPass:
    """What an open-loop pass (benchkit.load.openloop) did with its schedule."""

    process: str
    offered_rps: float
    arrivals_planned: int
    arrivals_sent: int
    peak_in_flight: int
    max_in_flight: int
    # Which bound ended the pass (`max_in_flight`, `max_pass_s`), or None: every arrival was
    # sent and every call finished.
    ended: str | None
    ended_at: float | None


@dataclass
class ReplayOutcome:
    records: list[CallRecord]
    wall_s: float
    started_utc: str
    interrupted: str | None  # why the replay stopped early, or None
    units_planned: int
    user_interrupt: bool = False  # Ctrl-C: the sweep must stop after this job is written
    client: str = CLIENT_HTTPX  # the path this pass's calls took (see CallRecord.client)
    client_fallback: str | None = None  # why httpx rather than the raw path, if it was
    open_loop: OpenLoopPass | None = None  # an open-loop pass's schedule and bounds


class RecordSink:
    """Appends records to calls.jsonl, one whole line per write, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, rec: CallRecord) -> None:
        obj = asdict(rec)
        # The open-loop fields stay out of a closed-loop pass's lines, which read as before.
        for key in OPEN_LOOP_FIELDS:
            if obj[key] is None or obj[key] is False:
                del obj[key]
        data = (json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n").encode()
        before = os.fstat(self._fd).st_size
        written = os.write(self._fd, data)
        if written < len(data):
            # A disk that fills takes part of a line without an error: the part is taken back,
            # so the file holds whole records only, and the caller hears the disk is full.
            os.ftruncate(self._fd, before)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))

    def close(self) -> None:
        os.close(self._fd)


def max_tokens(call: Call, spec: ReplaySpec) -> int:
    """The call's max_tokens: its recorded length when replayed (the same work at every
    setting, whatever the weights), else the cap."""
    if spec.output_policy is OutputPolicy.replay:
        return max(1, min(call.completion_tokens, spec.cap))
    return spec.cap


def build_request(
    call: Call, spec: ReplaySpec, alias: str, n_vocab: int
) -> tuple[str, dict[str, object]]:
    """(endpoint path, JSON body) for one call."""
    body: dict[str, object] = {
        "model": alias,
        "stream": True,
        "stream_options": {"include_usage": True},
        "cache_prompt": True,
        **spec.sampling,
    }
    body["max_tokens"] = max_tokens(call, spec)
    if spec.output_policy is OutputPolicy.replay:
        body["ignore_eos"] = True
    if call.messages is not None:
        body["messages"] = [dict(m) for m in call.messages]
        return "/v1/chat/completions", body
    if call.segments is not None:
        body["prompt"] = token_ids(call, n_vocab)
    else:
        body["prompt"] = call.text or ""
    return "/v1/completions", body


class Replayer:
    def __init__(
        self,
        *,
        base_url: str,
        alias: str,
        spec: ReplaySpec,
        workload: Workload,
        n_vocab: int,
        sink: RecordSink,
        headers: dict[str, str] | None = None,
        alive: Callable[[], bool] | None = None,
        progress: bool | None = None,
        repeat: int = 0,
        t0: float | None = None,
        client: str | None = None,
        status: Callable[[], str] | None = None,
    ) -> None:
        # `client` is the config's replay_client: "auto", "httpx", or None (then the
        # environment's BENCHKIT_REPLAY_CLIENT decides, else auto).
        check_client(client)
        self.base_url = base_url
        self.alias = alias
        self.spec = spec
        self.workload = workload
        self.n_vocab = n_vocab
        self.sink = sink
        self.headers = headers or {}
        self.alive = alive or (lambda: True)
        self.progress = sys.stderr.isatty() if progress is None else progress
        # What goes before the units on the progress line (the sweep's job i of N).
        self.status = status
        self.repeat = repeat
        self.records: list[CallRecord] = []
        # Passes of one job share a clock origin so their records never overlap in time.
        self.t0 = t0 if t0 is not None else 0.0
        self.interrupted: str | None = None
        self._units_done = 0
        self._tokens = 0
        # replay_client as asked; the path itself is decided in _run (fast_path_refusal).
        self.client_choice = client
        self.client_path = CLIENT_HTTPX
        self.client_fallback: str | None = None
        self._pool: RawPool | None = None

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def units(self) -> list[Unit]:
        units = list(self.workload.units)
        if self.spec.units is not None:
            units = units[: self.spec.units]
        return units

    async def _call(
        self, client: httpx.AsyncClient, call: Call, repeat: int, worker: int
    ) -> CallRecord:
        path, body = build_request(call, self.spec, self.alias, self.n_vocab)
        rec = CallRecord(
            repeat=repeat,
            unit=call.unit,
            seq=call.seq,
            role=call.role,
            worker=worker,
            t_sent=self.now(),
            max_tokens=max_tokens(call, self.spec),
            cap=self.spec.cap,
            fixture_prompt_tokens=call.prompt_tokens,
            fixture_completion_tokens=call.completion_tokens,
        )
        stall = self.spec.stall_timeout_s
        try:
            if self._pool is None:
                await self._stream(client, path, body, rec, stall)
            else:
                await self._stream_raw(self._pool.conns[worker], path, body, rec, stall)
        except asyncio.CancelledError:
            # Deadline or Ctrl-C: the call is lost, but its record is not.
            rec.error = "cancelled before it finished (job deadline or interrupt)"
            rec.t_done = self.now()
            self._keep(rec)
            raise
        rec.t_done = self.now()
        if rec.error is None:
            if rec.model is not None and rec.model != self.alias:
                rec.error = f"response names model {rec.model!r}, not this job's {self.alias!r}"
            elif rec.finish_reason is None:
                rec.error = "stream ended without a finish_reason"
        rec.ok = rec.error is None
        return rec

    async def _wait_to_send(self, worker: int) -> bool:
        """Where a call ready to go (its request built, its connection open) waits until it is
        due: open-loop load (benchkit.load.openloop) holds it here; a closed-loop call goes at
        once. True when it waited."""
        return False

    async def _stream(
        self,
        client: httpx.AsyncClient,
        path: str,
        body: dict[str, object],
        rec: CallRecord,
        stall: float,
    ) -> None:
        try:
            if await self._wait_to_send(rec.worker):
                rec.t_sent = self.now()
            async with client.stream("POST", self.base_url + path, json=body) as resp:
                rec.http_status = resp.status_code
                if resp.status_code != 200:
                    text = (await resp.aread()).decode(errors="replace")
                    rec.error = f"HTTP {resp.status_code}: {error_message(text)}"
                else:
                    events = EventStream(rec, stall_s=stall)
                    async for data in resp.aiter_bytes():
                        if events.feed(data, self.now()):
                            break
                    else:
                        events.end(self.now())
        except httpx.TimeoutException:
            rec.error = f"stalled: no bytes for {stall:.0f} s (server.stall_timeout_s)"
        except httpx.TransportError as exc:
            rec.error = f"connection error: {type(exc).__name__}: {exc}"
        except ValueError as exc:
            rec.error = f"malformed stream: {exc}"

    async def _stream_raw(
        self,
        conn: Http1Connection,
        path: str,
        body: dict[str, object],
        rec: CallRecord,
        stall: float,
    ) -> None:
        """`_stream` on the worker's own connection: the same record, the same errors in the
        same words (the transport raises httpx's exceptions), better times."""
        clean = False
        try:
            # Encoded as httpx encodes a json= body.
            payload = json.dumps(
                body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
            head = await self._send_raw(conn, path, payload, rec, stall)
            rec.http_status = head.status
            rest = False
            with conn.stall_guard(stall):
                if head.status != 200:
                    text = (await conn.read_rest()).decode(errors="replace")
                    rec.error = f"HTTP {head.status}: {error_message(text)}"
                else:
                    rest = await self._read_sse(conn, rec, stall)
            if rest:
                # Outside the stall guard: the call is complete at [DONE] whatever follows.
                await conn.discard_rest(timeouts.AFTER_DONE_S)
            clean = True
        except (httpx.TimeoutException, TimeoutError):
            rec.error = f"stalled: no bytes for {stall:.0f} s (server.stall_timeout_s)"
        except httpx.TransportError as exc:
            rec.error = f"connection error: {type(exc).__name__}: {exc}"
        except ValueError as exc:
            rec.error = f"malformed stream: {exc}"
        finally:
            rec.client = CLIENT_RAW if conn.kernel_timed else CLIENT_RAW_READ_TIME
            if not clean:
                conn.close()  # a response read part-way (an error, a cancellation) ends it

    async def _send_raw(
        self, conn: Http1Connection, path: str, payload: bytes, rec: CallRecord, stall: float
    ) -> ResponseHead:
        """Send the request (stamping rec.t_sent) and read the response head."""
        for attempt in (0, 1):
            await conn.open(timeouts.REPLAY_CONNECT_S)
            if attempt == 0:
                await self._wait_to_send(rec.worker)
            reused = conn.requests > 0
            try:
                with conn.stall_guard(stall):
                    rec.t_sent = await conn.send(path, payload) - self.t0
                    return await conn.head()
            except (httpx.RemoteProtocolError, httpx.ReadError):
                # A kept-alive connection the server closed just as the request went out
                # (cpp-httplib drops idle ones after 5 s): no byte of a response came back
                # and the server is still up, so the request is sent once more, on a new
                # connection. A server that died is recorded as it died, as httpx records it.
                conn.close()
                if attempt == 0 and reused and conn.rx_bytes == 0 and self.alive():
                    continue
                raise
        raise AssertionError("unreachable")

    async def _read_sse(self, conn: Http1Connection, rec: CallRecord, stall: float) -> bool:
        """The events of a 200 response, each timed by the kernel's receive time of the bytes
        that completed it. True when [DONE] came before the end of the response (the rest is
        to be read)."""
        events = EventStream(rec, stall_s=stall)
        t_rx = self.now()
        while True:
            piece = await conn.body()
            if piece is None:
                # The last line may have no newline (timed by the piece that brought it).
                events.end(t_rx)
                over = False
            else:
                data, t = piece
                t_rx = t - self.t0
                over = events.feed(data, t_rx) and events.done
            if events.stalled:
                conn.close()
                return False
            if over or piece is None:
                return over

    async def _worker(
        self, client: httpx.AsyncClient, queue: asyncio.Queue[Unit], repeat: int, worker: int
    ) -> None:
        while True:
            try:
                unit = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            for call in unit.calls:
                rec = await self._call(client, call, repeat, worker)
                if not self._keep(rec):
                    raise _Stop(self.interrupted)
                self._tokens += rec.completion_tokens or 0
                if not rec.ok:
                    dead = await self._server_down(client)
                    if dead:
                        self.interrupted = dead
                        raise _Stop(dead)
            self._units_done += 1
            self._show()

    async def _server_down(self, client: httpx.AsyncClient) -> str | None:
        """After a failed call: why the server can no longer serve, or None if it still can."""
        if not self.alive():
            return "the server died during the run"
        try:
            r = await client.get(self.base_url + "/health", timeout=timeouts.PROBE_S)
        except httpx.HTTPError:
            # A killed process may not have been reaped yet when its connections broke: on a
            # loaded machine its exit can take a while (CI saw 'stopped responding' for a
            # server killed with SIGKILL), so it is given a moment before being called hung.
            for _ in range(20):
                if not self.alive():
                    return "the server died during the run"
                await asyncio.sleep(0.1)
            return (
                "the server stopped responding (its /health did not answer within "
                f"{timeouts.PROBE_S:.0f} s)"
            )
        if r.status_code != 200:
            return f"the server's /health answered {r.status_code} during the run"
        return None

    def _show(self) -> None:
        if not self.progress:
            return
        planned = len(self.units())
        rate = self._tokens / max(self.now(), 1e-9)
        sweep = f"{self.status()}; " if self.status is not None else ""
        # Cleared to the end: the sweep's part may get shorter as its estimate does.
        print(
            f"\r[benchkit] {sweep}units {self._units_done}/{planned}  calls {len(self.records)}  "
            f"decode {rate:,.0f} tok/s  {self.now():,.0f} s\x1b[K",
            end="",
            file=sys.stderr,
            flush=True,
        )

    async def _run(self) -> None:
        timeout = httpx.Timeout(
            connect=timeouts.REPLAY_CONNECT_S,
            read=self.spec.stall_timeout_s,
            write=timeouts.REPLAY_WRITE_S,
            pool=None,
        )
        limits = httpx.Limits(
            max_connections=self.spec.workers, max_keepalive_connections=self.spec.workers
        )
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, headers=self.headers
        ) as client:
            # The httpx client stays for the /health probe after a failed call, and carries
            # the calls themselves where the raw path cannot.
            self.client_fallback = fast_path_refusal(
                self.base_url, self.headers, client, self.client_choice
            )
            if self.client_fallback is None:
                self.client_path = CLIENT_RAW
                self._pool = RawPool(self.base_url, self.headers, self.spec.workers)
            try:
                if self._pool is not None:
                    # Connections are opened before the first call is timed.
                    await self._pool.warm()
                queue: asyncio.Queue[Unit] = asyncio.Queue()
                for unit in self.units():
                    queue.put_nowait(unit)
                async with asyncio.TaskGroup() as tg:
                    for w in range(self.spec.workers):
                        tg.create_task(self._worker(client, queue, self.repeat, w))
            finally:
                if self._pool is not None:
                    self._pool.close()

    def _keep(self, rec: CallRecord) -> bool:
        """Record a call (in memory, then calls.jsonl); False when calls.jsonl cannot be
        written (a full disk): the replay stops there as incomplete with that reason, and
        what was measured so far is the job's result."""
        self.records.append(rec)
        try:
            self.sink.write(rec)
        except OSError as exc:
            if not is_write_problem(exc):
                raise
            problem = str(write_problem(exc, self.sink.path, "calls")).removesuffix(".")
            self.interrupted = self.interrupted or (
                f"{problem}; the replay stopped there, and the calls before are kept"
            )
            return False
        return True

    def run(self) -> ReplayOutcome:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if not self.t0:
            self.t0 = time.perf_counter()
        pass_start = self.now()

        async def guarded() -> None:
            try:
                await self._run()
            except* _Stop:
                pass  # the reason is already in self.interrupted

        async def main() -> None:
            try:
                if self.spec.job_deadline_s:
                    await asyncio.wait_for(guarded(), timeout=self.spec.job_deadline_s)
                else:
                    await guarded()
            except TimeoutError:
                self.interrupted = (
                    f"job deadline of {self.spec.job_deadline_s:.0f} s (server.job_deadline_s) "
                    "passed"
                )

        user_interrupt = False
        try:
            asyncio.run(main())
        except KeyboardInterrupt as exc:
            # asyncio.run cancelled the calls in flight (their records are written); the
            # job still measures what it has and writes it as incomplete.
            user_interrupt = True
            self.interrupted = interrupt_reason(exc)
        wall = pass_wall(self.records, self.now() - pass_start)
        if self.progress:
            print(file=sys.stderr)
        return ReplayOutcome(
            records=self.records,
            wall_s=wall,
            started_utc=started,
            interrupted=self.interrupted,
            units_planned=len(self.units()),
            user_interrupt=user_interrupt,
            client=self.client_path,
            client_fallback=self.client_fallback,
        )


class _Stop(Exception):
    pass


def read_records(path: Path, root: Path | None = None) -> list[CallRecord]:
    """calls.jsonl back as records (the sink writes each record's fields as JSON), read
    bounded and inside `root` (benchkit.results.bounded)."""
    out = []
    for line in bounded.lines(path, root):
        if line.strip():
            out.append(record_of(json.loads(line)))
    return out


def record_of(data: Mapping[str, Any]) -> CallRecord:
    """One calls.jsonl line's object as a record (keys a record does not have are left out)."""
    return CallRecord(**{k: v for k, v in data.items() if k in _RECORD_FIELDS})


_RECORD_FIELDS = frozenset(f.name for f in fields(CallRecord))


def pass_wall(records: list[CallRecord], fallback: float) -> float:
    """A pass's wall clock as documented: from its first request sent to its last response
    received (connections opened and the event loop's start and teardown left out); the
    `fallback` span when no call was sent."""
    if not records:
        return fallback
    first = min(r.t_sent for r in records)
    last = max(r.t_done if r.t_done is not None else r.t_sent for r in records)
    return max(last - first, 0.0)

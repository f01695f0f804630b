"""The replay client's raw HTTP/1.1 path (benchkit/client/transport.py) against small real
servers.

Each test starts an asyncio server of its own in a thread (the replay runs its own event
loop) that answers the way a case needs: chunked or sized or close-delimited SSE, error
bodies, resets and EOFs mid-stream, silence. Where both paths can meet the same server, the
records of the raw path and of httpx (`client="httpx"`, the path as it always was) are
compared field by field: the raw path must record faults in the same words.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchkit.client import transport
from benchkit.client.fallback import fast_path_refusal
from benchkit.client.http1 import FramingError, ResponseHead, ResponseParser
from benchkit.client.replay import RecordSink, Replayer, ReplayOutcome
from benchkit.client.transport import (
    CLIENT_HTTPX,
    CLIENT_RAW,
    CLIENT_RAW_READ_TIME,
    RawPool,
)
from benchkit.config.schema import BenchConfig, OutputPolicy
from benchkit.server.plan import ReplaySpec
from benchkit.workload import Call, Unit, Workload

pytestmark = pytest.mark.skipif(
    transport.kernel_timestamps_refusal() is not None,
    reason=f"no raw path here: {transport.kernel_timestamps_refusal()}",
)

ALIAS = "m"


# --------------------------------------------------------------------------- a test server


@dataclass
class Request:
    conn: int  # which connection (1, 2, ...) it came on
    nth: int  # its place on that connection (1, 2, ...)
    head: bytes
    body: bytes
    reader: asyncio.StreamReader

    async def until_closed(self, limit: float = 30.0) -> bool:
        """Wait, answering nothing more, until the client closes the connection."""
        try:
            async with asyncio.timeout(limit):
                while await self.reader.read(65536):
                    pass
        except (TimeoutError, ConnectionError):
            pass
        return False

    def header(self, name: str) -> list[bytes]:
        """The raw header lines named `name` (any case), exactly as sent."""
        return [
            line
            for line in self.head.split(b"\r\n")[1:]
            if line.split(b":", 1)[0].lower() == name.lower().encode()
        ]


Scenario = Callable[["Server", Request, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class Server:
    """A threaded asyncio HTTP/1.1 server; `scenario` answers each request and says whether
    the connection stays open."""

    scenario: Scenario
    requests: list[Request] = field(default_factory=list)
    conns: int = 0
    open_conns: int = 0
    marks: list[float] = field(default_factory=list)  # perf_counter times a scenario noted
    health_hangs: bool = False  # a hung server: /health is never answered
    url: str = ""

    def start(self) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            srv = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
            ready.set()
            self.loop.run_forever()
            srv.close()
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.run_until_complete(asyncio.sleep(0))
            self.loop.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    async def _handle(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self.conns += 1
        self.open_conns += 1
        conn, nth = self.conns, 0
        try:
            while True:
                try:
                    head = await r.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                if head.startswith(b"GET /health "):  # the replay's probe after a failed call
                    if self.health_hangs:
                        await asyncio.sleep(30)
                    w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{"status":"ok"}')
                    continue
                nth += 1
                req = Request(conn, nth, head, await r.readexactly(n), r)
                self.requests.append(req)
                if not await self.scenario(self, req, w):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open_conns -= 1
            if not w.transport.is_closing():
                w.close()

    def wait_closed(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.open_conns == 0:
                return True
            time.sleep(0.02)
        return False


@pytest.fixture
def serve() -> Iterator[Callable[[Scenario], Server]]:
    started: list[Server] = []

    def _serve(scenario: Scenario) -> Server:
        s = Server(scenario)
        s.start()
        started.append(s)
        return s

    yield _serve
    for s in started:
        s.stop()


# --------------------------------------------------------------------------- answers


def token(text: str = " t", model: str = ALIAS) -> bytes:
    ev = {"choices": [{"text": text, "index": 0, "finish_reason": None}], "model": model}
    return b"data: " + json.dumps(ev).encode() + b"\n\n"


def final(n: int, model: str = ALIAS) -> bytes:
    ev = {
        "choices": [{"text": "", "index": 0, "finish_reason": "length"}],
        "model": model,
        "usage": {"prompt_tokens": 3, "completion_tokens": n},
        "timings": {"prompt_n": 3, "predicted_n": n, "predicted_ms": 1.5},
    }
    return b"data: " + json.dumps(ev).encode() + b"\n\ndata: [DONE]\n\n"


def stream(n: int = 4) -> list[bytes]:
    """A llama-server-shaped stream: n single-token events, then the final one and [DONE]."""
    return [token() for _ in range(n)] + [final(n)]


CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def send_chunked(
    w: asyncio.StreamWriter, events: list[bytes], gap: float = 0.0, close: bool = False
) -> None:
    w.write(CHUNKED_HEAD + (b"Connection: close\r\n" if close else b"") + b"\r\n")
    for ev in events:
        if gap:
            await asyncio.sleep(gap)
        w.write(chunk(ev))
        await w.drain()
    w.write(b"0\r\n\r\n")
    await w.drain()


def chunked(events: list[bytes] | None = None, gap: float = 0.0) -> Scenario:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        await send_chunked(w, events or stream(), gap)
        return True

    return answer


def reset(w: asyncio.StreamWriter) -> None:
    sock = w.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    w.transport.abort()


# --------------------------------------------------------------------------- a replay


def workload(units: int, calls: int = 1) -> Workload:
    us = []
    for i in range(units):
        uid = f"u{i}"
        cs = tuple(
            Call(
                unit=uid,
                seq=k,
                role="r",
                segments=None,
                text="hello there",
                messages=None,
                max_tokens=8,
                completion_tokens=4,
                recorded_prompt_tokens=3,
                line=i * calls + k + 1,
            )
            for k in range(calls)
        )
        us.append(Unit(id=uid, calls=cs))
    return Workload(
        name="t",
        kind="text",
        cap=8,
        output_policy="replay",
        description="",
        path=Path("."),
        units=tuple(us),
        recipe=None,
    )


def replay(
    url: str,
    tmp_path: Path,
    *,
    units: int = 1,
    calls: int = 1,
    workers: int = 1,
    stall: float = 5.0,
    deadline: float | None = None,
    headers: dict[str, str] | None = None,
    client: str | None = "auto",
    alive: Callable[[], bool] | None = None,
) -> ReplayOutcome:
    spec = ReplaySpec(
        workers=workers,
        output_policy=OutputPolicy.replay,
        cap=8,
        sampling={"temperature": 0.0},
        stall_timeout_s=stall,
        job_deadline_s=deadline,
        units=None,
        repeats=1,
    )
    sink = RecordSink(tmp_path / f"calls-{client}-{time.monotonic_ns()}.jsonl")
    try:
        return Replayer(
            base_url=url,
            alias=ALIAS,
            spec=spec,
            workload=workload(units, calls),
            n_vocab=100,
            sink=sink,
            headers=headers,
            alive=alive,
            progress=False,
            client=client,
        ).run()
    finally:
        sink.close()


FIELDS = (
    "ok",
    "error",
    "http_status",
    "finish_reason",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "chunks",
    "timings",
)


def same_records(a: ReplayOutcome, b: ReplayOutcome) -> None:
    assert len(a.records) == len(b.records)
    for x, y in zip(a.records, b.records, strict=True):
        assert {f: getattr(x, f) for f in FIELDS} == {f: getattr(y, f) for f in FIELDS}


def both(serve: Callable[[Scenario], Server], scenario: Scenario, tmp_path: Path, **kw: Any) -> (
    tuple[ReplayOutcome, ReplayOutcome]
):  # fmt: skip
    """The same scenario replayed through the raw path and through httpx."""
    raw = replay(serve(scenario).url, tmp_path, **kw)
    via_httpx = replay(serve(scenario).url, tmp_path, client="httpx", **kw)
    assert raw.client == CLIENT_RAW and raw.client_fallback is None
    assert via_httpx.client == CLIENT_HTTPX
    assert {r.client for r in raw.records} <= {CLIENT_RAW, CLIENT_RAW_READ_TIME}
    assert {r.client for r in via_httpx.records} == {CLIENT_HTTPX}
    return raw, via_httpx


# --------------------------------------------------------------------------- streams


def test_chunked_stream_on_kept_alive_connections(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    srv = serve(chunked(gap=0.005))
    out = replay(srv.url, tmp_path, units=6, calls=2, workers=3)
    assert out.client == CLIENT_RAW and out.interrupted is None
    assert len(out.records) == 12 and all(r.ok for r in out.records)
    for r in out.records:
        assert r.client in {CLIENT_RAW, CLIENT_RAW_READ_TIME}  # read time on a busy machine
        assert (r.chunks, r.completion_tokens, r.finish_reason) == (4, 4, "length")
        assert r.t_first is not None and r.t_last is not None and r.t_done is not None
        assert r.t_sent < r.t_first < r.t_last <= r.t_done
        assert r.timings == {"prompt_n": 3, "predicted_n": 4, "predicted_ms": 1.5}
    # One connection per worker, opened before the first call, reused by every call.
    assert srv.conns == 3
    assert srv.wait_closed(), "the pass left connections open"


def test_multi_token_chunks_and_several_events_in_one_chunk(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    # Speculative decoding: one event carrying three tokens; and two events in one chunk.
    events = [token(" a b c"), token(" d") + token(" e"), final(5)]
    raw, via_httpx = both(serve, chunked(events), tmp_path)
    same_records(raw, via_httpx)
    (r,) = raw.records
    assert r.ok and r.chunks == 3 and r.completion_tokens == 5


def test_content_length_body_is_read_progressively_and_keeps_the_connection(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    events = stream(3)
    body = b"".join(events)

    async def sized(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
        for ev in events:  # written as it is made, each event on its own
            await asyncio.sleep(0.03)
            s.marks.append(time.perf_counter())
            w.write(ev)
            await w.drain()
        return True

    srv = serve(sized)
    out = replay(srv.url, tmp_path, units=2)
    assert all(r.ok for r in out.records) and srv.conns == 1
    r = out.records[-1]
    assert r.t_first is not None and r.t_last is not None
    # First and last token stamped when each arrived, not both at the end of the body.
    assert r.t_last - r.t_first > 0.04
    same_records(out, replay(serve(sized).url, tmp_path, units=2, client="httpx"))


@pytest.mark.parametrize("style", ["http10", "no-length", "connection-close"])
def test_responses_that_end_the_connection(
    serve: Callable[[Scenario], Server], tmp_path: Path, style: str
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        if style == "connection-close":
            await send_chunked(w, stream(), close=True)
            return False
        version = b"HTTP/1.0" if style == "http10" else b"HTTP/1.1"
        w.write(version + b" 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
        for ev in stream():
            w.write(ev)
            await w.drain()
        return False  # the end of the connection is the end of the body

    raw, via_httpx = both(serve, answer, tmp_path, units=3)
    same_records(raw, via_httpx)
    assert all(r.ok for r in raw.records)


def spaced(gap: float, n: int) -> Scenario:
    """A stream of n tokens, one chunk every `gap` s, each write noted in `marks`."""

    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        w.write(CHUNKED_HEAD + b"\r\n")
        for ev in stream(n):
            await asyncio.sleep(gap)
            s.marks.append(time.perf_counter())
            w.write(chunk(ev))
            await w.drain()
        w.write(b"0\r\n\r\n")
        return True

    return answer


def read_stream(url: str, busy: Callable[[int], Awaitable[None]]) -> list[tuple[float, float]]:
    """(receive time, read time) of each body piece of one call; `busy(k)` runs after the
    k-th piece is read (it may block the loop)."""

    async def main() -> list[tuple[float, float]]:
        pool = RawPool(url, {}, 1)
        await pool.warm()
        conn = pool.conns[0]
        await conn.send("/v1/completions", b"{}")
        head = await conn.head()
        assert head == ResponseHead(200, head.headers, True)
        got = []
        while (piece := await conn.body()) is not None:
            got.append((piece[1], time.perf_counter()))
            await busy(len(got))
        assert conn.kernel_timed
        pool.close()
        return got

    return asyncio.run(main())


def test_kernel_time_while_the_loop_is_busy_within_a_token_gap(
    serve: Callable[[Scenario], Server],
) -> None:
    """A client whose loop is busy when a token arrives, but free again before the next,
    records when the token arrived, not when it got round to reading it."""
    srv = serve(spaced(0.1, 6))

    async def busy(k: int) -> None:
        if k % 2:  # after every other token, the loop is blocked over the next one's arrival
            await asyncio.sleep(0.05)
            time.sleep(0.1)

    got = read_stream(srv.url, busy)
    assert len(got) == len(srv.marks) == 7
    late = [read - sent for (_, read), sent in zip(got, srv.marks, strict=True)]
    assert max(late) > 0.03  # some were read late...
    for (rx, _), sent in zip(got, srv.marks, strict=True):
        assert abs(rx - sent) < 0.01, (rx, sent)  # ...but each is timed on arrival


def test_chunks_queued_behind_an_unread_one(serve: Callable[[Scenario], Server]) -> None:
    """The limit of kernel times: segments that queue up behind an unread one are merged
    by the kernel, which keeps the latest receive time. A client more than one token gap
    behind therefore times the queued tokens no earlier than they came and no later than
    the last of them: never later than it read them, as the httpx path would."""
    srv = serve(spaced(0.03, 3))

    async def busy(k: int) -> None:
        if k == 1:
            time.sleep(0.3)  # the head is read; every chunk then arrives before one is read

    got = read_stream(srv.url, busy)
    assert len(got) == len(srv.marks) == 4
    for (rx, read), sent in zip(got[1:], srv.marks[1:], strict=True):
        assert sent - 0.002 <= rx <= srv.marks[-1] + 0.005 and rx < read - 0.1


def test_events_larger_than_the_peek_window(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    big = token(" " + "x" * 200_000)
    raw, via_httpx = both(serve, chunked([big, *stream(2)]), tmp_path)
    same_records(raw, via_httpx)
    assert raw.records[0].ok and raw.records[0].chunks == 3


# --------------------------------------------------------------------------- errors


LLAMA_400 = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5000,
            "n_ctx": 2048,
        }
    }
).encode()


@pytest.mark.parametrize(
    ("style", "expect"),
    [
        ("400-sized-close", "HTTP 400: exceed_context_size_error: the request exceeds"),
        ("500-chunked", "HTTP 500: server_error: boom"),
        ("404-text-to-close", "HTTP 404: not here"),
        ("503-http10", "HTTP 503: unavailable_error: loading model"),
        ("401-keep-alive", "HTTP 401: authentication_error: Invalid API Key"),
    ],
)
def test_error_responses_are_recorded_as_httpx_records_them(
    serve: Callable[[Scenario], Server], tmp_path: Path, style: str, expect: str
) -> None:
    status = int(style[:3])

    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        if style == "400-sized-close":  # what llama-server does (cpp-httplib closes on >= 400)
            w.write(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(LLAMA_400), LLAMA_400)
            )
            return False
        if style == "500-chunked":
            body = b'{"error":{"code":500,"message":"boom","type":"server_error"}}'
            w.write(b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n")
            w.write(chunk(body[:10]) + chunk(body[10:]) + b"0\r\n\r\n")
            return True
        if style == "404-text-to-close":
            w.write(b"HTTP/1.1 404 Not Found\r\n\r\nnot here\n")
            return False
        if style == "503-http10":
            body = b'{"error":{"code":503,"message":"loading model","type":"unavailable_error"}}'
            w.write(b"HTTP/1.0 503 Unavailable\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            return False
        body = b'{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}'
        w.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        return True

    raw, via_httpx = both(serve, answer, tmp_path, units=2)
    same_records(raw, via_httpx)
    for r in raw.records:
        assert not r.ok and r.http_status == status
        assert r.error is not None and r.error.startswith(expect)
    # Each failed call probed /health (through httpx) and went on: the server is up.
    assert raw.interrupted is None


def eof_mid_chunked(s: Server, req: Request, w: asyncio.StreamWriter) -> Awaitable[bool]:
    async def go() -> bool:
        w.write(CHUNKED_HEAD + b"\r\n" + chunk(token()))
        await w.drain()
        return False

    return go()


def eof_mid_sized(s: Server, req: Request, w: asyncio.StreamWriter) -> Awaitable[bool]:
    async def go() -> bool:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + token())
        await w.drain()
        return False

    return go()


def no_response(s: Server, req: Request, w: asyncio.StreamWriter) -> Awaitable[bool]:
    async def go() -> bool:
        return False

    return go()


def bad_chunk_size(s: Server, req: Request, w: asyncio.StreamWriter) -> Awaitable[bool]:
    async def go() -> bool:
        w.write(CHUNKED_HEAD + b"\r\nzz\r\n" + token() + b"\r\n")
        await w.drain()
        await asyncio.sleep(0.2)
        return False

    return go()


def bad_status_line(s: Server, req: Request, w: asyncio.StreamWriter) -> Awaitable[bool]:
    async def go() -> bool:
        w.write(b"HELLO\r\n\r\n")
        await w.drain()
        await asyncio.sleep(0.2)
        return False

    return go()


@pytest.mark.parametrize(
    ("scenario", "expect"),
    [
        (
            eof_mid_chunked,
            "connection error: RemoteProtocolError: peer closed connection without sending "
            "complete message body (incomplete chunked read)",
        ),
        (
            eof_mid_sized,
            "connection error: RemoteProtocolError: peer closed connection without sending "
            "complete message body (received ",
        ),
        (
            no_response,
            "connection error: RemoteProtocolError: Server disconnected without sending a "
            "response.",
        ),
        (bad_chunk_size, "connection error: RemoteProtocolError: illegal chunk header: "),
        (bad_status_line, "connection error: RemoteProtocolError: illegal status line: "),
    ],
)
def test_broken_responses_are_recorded_in_httpx_words(
    serve: Callable[[Scenario], Server], tmp_path: Path, scenario: Scenario, expect: str
) -> None:
    raw, via_httpx = both(serve, scenario, tmp_path, alive=lambda: True)
    (r,), (h,) = raw.records, via_httpx.records
    assert r.error is not None and h.error is not None
    assert r.error.startswith(expect) and h.error.startswith(expect)
    assert (r.ok, r.http_status, r.chunks) == (h.ok, h.http_status, h.chunks)
    # What arrived before the break is kept, as through httpx.
    assert (r.t_first is None) == (h.t_first is None)


def test_reset_mid_stream_is_a_read_error(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        w.write(CHUNKED_HEAD + b"\r\n" + chunk(token()))
        await w.drain()
        await asyncio.sleep(0.1)
        reset(w)
        return False

    raw, via_httpx = both(serve, answer, tmp_path)
    (r,), (h,) = raw.records, via_httpx.records
    # httpx says nothing more than the type here; the raw path adds the errno.
    assert h.error == "connection error: ReadError: "
    assert r.error is not None and r.error.startswith("connection error: ReadError: ")
    assert "reset" in r.error.lower()
    assert r.http_status == h.http_status == 200 and r.chunks == h.chunks == 1
    assert r.t_first is not None


def test_refused_connection(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = replay(f"http://127.0.0.1:{port}", tmp_path)
    (r,) = out.records
    assert out.client == CLIENT_RAW
    assert r.error is not None
    assert r.error.startswith("connection error: ConnectError: All connection attempts failed")
    assert r.http_status is None and not r.ok


def test_stale_kept_alive_connection_is_retried_once(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    """The server drops a kept-alive connection just as the second request arrives (as
    cpp-httplib drops idle ones): that request is sent again on a new connection."""

    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        if req.nth == 2:
            return False  # read it, answer nothing, close
        await send_chunked(w, stream())
        return True

    srv = serve(answer)
    out = replay(srv.url, tmp_path, calls=3)
    assert [r.ok for r in out.records] == [True, True, True]
    assert [(q.conn, q.nth) for q in srv.requests] == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]


def test_no_retry_when_the_server_is_gone(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        if req.nth == 2:
            return False
        await send_chunked(w, stream())
        return True

    srv = serve(answer)
    out = replay(srv.url, tmp_path, calls=2, alive=lambda: len(srv.requests) < 2)
    first, second = out.records
    assert first.ok
    assert second.error == (
        "connection error: RemoteProtocolError: Server disconnected without sending a response."
    )
    assert out.interrupted == "the server died during the run"
    assert len(srv.requests) == 2


def test_connection_closed_while_idle_is_replaced(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        await send_chunked(w, stream())
        return False  # no Connection: close; just closes afterwards (an idle timeout)

    srv = serve(answer)
    out = replay(srv.url, tmp_path, calls=3)
    assert all(r.ok for r in out.records)
    assert srv.conns >= 3 and len(srv.requests) >= 3


def test_bytes_after_the_response_spoil_only_the_connection(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        body = b"".join(chunk(ev) for ev in stream()) + b"0\r\n\r\n"
        # In the same write as the end of the first response, so it is there before the
        # client can send its next request (after that it would pass for the answer to it,
        # through httpx too).
        extra = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" if req.nth == 1 else b""
        w.write(CHUNKED_HEAD + b"\r\n" + body + extra)
        return True

    srv = serve(answer)
    out = replay(srv.url, tmp_path, calls=2)
    assert all(r.ok for r in out.records)
    assert srv.conns == 2


# --------------------------------------------------------------------------- stalls, deadline


def test_stall_counts_silence_from_the_last_bytes(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        w.write(CHUNKED_HEAD + b"\r\n" + chunk(token()))
        await w.drain()
        await asyncio.sleep(0.7)
        w.write(chunk(b": keep-alive\n\n"))
        await w.drain()
        s.marks.append(time.perf_counter())
        await req.until_closed()
        s.marks.append(time.perf_counter())  # the client gave up and closed
        return False

    srv = serve(answer)
    srv.health_hangs = True
    t = time.perf_counter()
    out = replay(srv.url, tmp_path, stall=1.0)
    (r,) = out.records
    assert r.error == "stalled: no bytes for 1 s (server.stall_timeout_s)"
    assert r.t_first is not None and r.chunks == 1
    # Abandoned a whole stall after the last bytes (the comment at 0.7 s), not before.
    quiet, gave_up = srv.marks
    assert 0.95 <= gave_up - quiet < 2.0
    assert time.perf_counter() - t < 10
    # The failed call made the replay probe /health, which this server answers by silence.
    assert out.interrupted is not None and "stopped responding" in out.interrupted


def test_stall_when_bytes_come_but_tokens_do_not(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    async def answer(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
        w.write(CHUNKED_HEAD + b"\r\n" + chunk(token()))
        for _ in range(40):
            await asyncio.sleep(0.2)
            w.write(chunk(b": keep-alive\n\n"))
            await w.drain()
        return False

    raw, via_httpx = both(serve, answer, tmp_path, stall=1.0)
    assert raw.records[0].error == via_httpx.records[0].error == "stalled: no token for 1 s"


async def one_token_then_silence(s: Server, req: Request, w: asyncio.StreamWriter) -> bool:
    """A call in flight: one token, then nothing until the client hangs up."""
    w.write(CHUNKED_HEAD + b"\r\n" + chunk(token()))
    await w.drain()
    return await req.until_closed()


def test_deadline_records_the_call_in_flight_as_cancelled(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    srv = serve(one_token_then_silence)
    out = replay(srv.url, tmp_path, workers=2, units=2, deadline=0.6)
    assert out.interrupted is not None and out.interrupted.startswith("job deadline of 1 s")
    assert len(out.records) == 2
    for r in out.records:
        assert r.error == "cancelled before it finished (job deadline or interrupt)"
        assert r.t_first is not None and r.t_done is not None
    assert srv.wait_closed(), "a cancelled call left its connection open"


def test_ctrl_c_records_the_call_in_flight(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    srv = serve(one_token_then_silence)
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_transport import replay
        out = replay({srv.url!r}, Path({str(tmp_path)!r}))
        print(json.dumps({{"interrupted": out.interrupted, "user": out.user_interrupt,
                           "client": out.client}}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    # SIGINT as a terminal delivers it, even when the suite runs as a background job (which a
    # shell starts with SIGINT ignored).
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not srv.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    got = json.loads(out.strip().splitlines()[-1])
    assert got == {
        "interrupted": "interrupted by the user (Ctrl-C)",
        "user": True,
        "client": CLIENT_RAW,
    }
    (rec,) = [
        json.loads(x) for f in tmp_path.glob("calls-*.jsonl") for x in f.read_text().splitlines()
    ]
    assert rec["error"] == "cancelled before it finished (job deadline or interrupt)"
    # A busy machine can leave a read without a kernel time in bounds (see _stamp): the call is
    # then timed at its read, and labelled so; either way it is the raw client's record.
    assert rec["client"] in {CLIENT_RAW, CLIENT_RAW_READ_TIME} and rec["t_first"] is not None
    assert srv.wait_closed()


# --------------------------------------------------------------------------- what is sent


def test_request_is_what_httpx_sends_where_it_matters(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    key = "sk-benchkit-test-7f3a9c1e5b"
    srv = serve(chunked())
    replay(srv.url, tmp_path, headers={"Authorization": f"Bearer {key}"})
    replay(srv.url, tmp_path, headers={"Authorization": f"Bearer {key}"}, client="httpx")
    raw, via_httpx = srv.requests
    for req in (raw, via_httpx):
        assert req.head.startswith(b"POST /v1/completions HTTP/1.1\r\n")
        assert req.header("authorization") == [f"Authorization: Bearer {key}".encode()]
        assert req.header("content-type") == [b"content-type: application/json"] or req.header(
            "content-type"
        ) == [b"Content-Type: application/json"]
        assert [h.lower() for h in req.header("host")] == [
            b"host: " + srv.url.removeprefix("http://").encode()
        ]
    assert json.loads(raw.body) == json.loads(via_httpx.body)
    assert raw.body == via_httpx.body  # encoded as httpx encodes json=
    assert raw.header("accept-encoding") == [b"Accept-Encoding: identity"]


def test_base_url_path_prefix_and_localhost(
    serve: Callable[[Scenario], Server], tmp_path: Path
) -> None:
    """A base URL with a path (and a trailing slash) makes the request line httpx makes of
    it; "localhost" reaches a server that listens on 127.0.0.1 only, wherever ::1 sorts."""
    srv = serve(chunked())
    for url in (srv.url + "/prefix/", srv.url + "/prefix", srv.url + "/"):
        raw = replay(url.replace("127.0.0.1", "localhost"), tmp_path)
        assert raw.client == CLIENT_RAW and raw.records[0].ok
        replay(url, tmp_path, client="httpx")
        a, b = srv.requests[-2:]
        assert a.head.split(b"\r\n", 1)[0] == b.head.split(b"\r\n", 1)[0]
    assert srv.requests[0].head.startswith(b"POST /prefix//v1/completions HTTP/1.1\r\n")


# --------------------------------------------------------------------------- fallbacks


def test_fallback_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refusal(url: str, headers: dict[str, str] | None = None) -> str | None:
        async with httpx.AsyncClient() as client:
            return fast_path_refusal(url, headers or {}, client)

    def why(url: str, headers: dict[str, str] | None = None) -> str | None:
        return asyncio.run(refusal(url, headers))

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    assert why("http://127.0.0.1:8080") is None
    assert why("https://example.org") == "a https URL"
    assert why("http://user:pw@127.0.0.1:8080") == "credentials in the URL"
    assert why("http://127.0.0.1:8080/?x=1") == "a query or fragment in the base URL"
    assert why("http://127.0.0.1:8080", {"Authorization": "Bearer a\r\nX: y"}) is not None
    assert why("http://127.0.0.1:8080", {"Connection": "close"}) is not None
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert why("http://127.0.0.1:8080") == "httpx would go through a proxy (from the environment)"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert why("http://127.0.0.1:8080") is None
    monkeypatch.setenv("BENCHKIT_REPLAY_CLIENT", "httpx")
    assert why("http://127.0.0.1:8080") == "BENCHKIT_REPLAY_CLIENT=httpx"


def test_replay_client_key_before_the_environment(
    serve: Callable[[Scenario], Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    compose_cfg: Callable[..., BenchConfig],
) -> None:
    """`replay_client` in the config decides; left unset, BENCHKIT_REPLAY_CLIENT does."""
    assert compose_cfg().replay_client is None
    assert compose_cfg("replay_client=httpx").replay_client == "httpx"
    monkeypatch.delenv("BENCHKIT_REPLAY_CLIENT", raising=False)
    srv = serve(chunked())
    out = replay(srv.url, tmp_path, client=None)
    assert (out.client, out.client_fallback) == (CLIENT_RAW, None)
    out = replay(srv.url, tmp_path, client="httpx")
    assert (out.client, out.client_fallback) == (CLIENT_HTTPX, "replay_client=httpx")
    monkeypatch.setenv("BENCHKIT_REPLAY_CLIENT", "httpx")
    out = replay(srv.url, tmp_path, client=None)
    assert (out.client, out.client_fallback) == (CLIENT_HTTPX, "BENCHKIT_REPLAY_CLIENT=httpx")
    out = replay(srv.url, tmp_path, client="auto")  # the key set: the environment is not asked
    assert (out.client, out.client_fallback) == (CLIENT_RAW, None)
    assert all(r.ok for r in out.records)
    with pytest.raises(ValueError, match="replay_client='raw': use 'auto' or 'httpx'"):
        replay(srv.url, tmp_path, client="raw")


def test_without_kernel_timestamps_the_httpx_path_measures(
    serve: Callable[[Scenario], Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "kernel_timestamps_refusal", lambda: "no SO_TIMESTAMPNS on os9")
    srv = serve(chunked())
    out = replay(srv.url, tmp_path, units=2)
    assert (out.client, out.client_fallback) == (CLIENT_HTTPX, "no SO_TIMESTAMPNS on os9")
    assert all(r.ok and r.client == CLIENT_HTTPX for r in out.records)


def test_https_url_goes_through_httpx(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = replay(f"https://127.0.0.1:{port}", tmp_path)
    assert (out.client, out.client_fallback) == (CLIENT_HTTPX, "a https URL")
    (r,) = out.records
    assert r.client == CLIENT_HTTPX
    assert r.error is not None and r.error.startswith("connection error: ConnectError")


# --------------------------------------------------------------------------- the clock


@pytest.mark.parametrize("step_s", [+1000.0, -1000.0])
def test_a_wall_clock_step_falls_back_to_read_times(
    serve: Callable[[Scenario], Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    step_s: float,
) -> None:
    """CLOCK_REALTIME stepped between the kernel's stamp and the read: the stamp would land
    outside [request sent, read], so the read time is used and the call says so."""
    srv = serve(chunked(gap=0.01))
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + int(step_s * 1e9))
    out = replay(srv.url, tmp_path, units=2)
    assert all(r.ok for r in out.records)
    for r in out.records:
        assert r.client == CLIENT_RAW_READ_TIME
        assert r.t_first is not None and r.t_last is not None and r.t_done is not None
        assert r.t_sent < r.t_first <= r.t_last <= r.t_done


# --------------------------------------------------------------------------- the parser


RESPONSE = (
    b"HTTP/1.1 100 Continue\r\n\r\n"
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
    + b"X-A: 1\r\n\r\n"
    + b"5;ext=1\r\nhello\r\n"
    + b"1\r\n \r\n"
    + b"5\r\nworld\r\n"
    + b"0\r\nTrailer-Field: x\r\n\r\n"
)


def parse(pieces: list[bytes]) -> list[Any]:
    p = ResponseParser()
    p.begin()
    out: Any = collections.deque()
    for i, piece in enumerate(pieces):
        p.feed(piece, float(i), out)
    return list(out)


def test_parser_gives_the_same_response_for_any_split() -> None:
    whole = parse([RESPONSE])
    head = whole[0]
    assert isinstance(head, ResponseHead) and head.status == 200 and head.keep_alive
    assert b"".join(x[0] for x in whole[1:-1]) == b"hello world"
    assert whole[-1] is None
    for i in range(1, len(RESPONSE)):
        got = parse([RESPONSE[:i], RESPONSE[i:]])
        assert got[0] == head and got[-1] is None
        assert b"".join(x[0] for x in got[1:-1]) == b"hello world"
    byte_by_byte = parse([RESPONSE[i : i + 1] for i in range(len(RESPONSE))])
    assert b"".join(x[0] for x in byte_by_byte[1:-1]) == b"hello world"


def test_want_ends_each_read_at_a_chunk_end() -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = [chunk(token()), chunk(token(" two")), chunk(final(2))]
    wire = head + b"".join(chunks) + b"0\r\n\r\n"
    buf = bytearray(wire)
    p = ResponseParser()
    p.begin()
    out: Any = collections.deque()
    reads, off = [], 0
    while off < len(buf):
        n = p.want(buf, off, len(buf))
        reads.append(bytes(buf[off : off + n]))
        p.feed(bytes(buf[off : off + n]), 0.0, out)
        off += n
    assert reads == [head, *chunks, b"0\r\n", b"\r\n"]
    assert p.idle


@pytest.mark.parametrize(
    ("wire", "words"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX", "CRLF"),
        (b"HTTP/1.1 200 OK\r\n folded\r\n\r\n", "illegal header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", "Content-Encoding gzip"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
        (b"HTTP/2 200\r\n\r\n", "illegal status line"),
    ],
)
def test_parser_refuses_broken_framing(wire: bytes, words: str) -> None:
    with pytest.raises(FramingError, match=words):
        parse([wire])


def test_parser_bodyless_and_sized_responses() -> None:
    (h, end) = parse([b"HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n"])
    assert isinstance(h, ResponseHead) and h.status == 204 and end is None
    (h, end) = parse([b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
    assert end is None
    got = parse([b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"])
    assert got[0].keep_alive and got[1] == (b"ok", 0.0) and got[2] is None
    got = parse([b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok"])
    assert not got[0].keep_alive
    p = ResponseParser()
    out: Any = collections.deque()
    with pytest.raises(FramingError, match="no request was outstanding"):
        p.feed(b"HTTP/1.1 200 OK\r\n\r\n", 0.0, out)

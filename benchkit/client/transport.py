"""The replay client's fast path: raw HTTP/1.1 with the kernel's receive time of every chunk.

One job: carry one streamed POST at a time over a worker's own kept-alive connection to an
``http://`` server and hand the response back piece by piece, each piece stamped with the
moment the kernel received its last byte (``SO_TIMESTAMPNS``) on the ``perf_counter`` clock
that the replay's records use.

Why not httpx for this: a client that is slow or busy measures itself. Through httpx, the
request is timed before the pool has a connection for it, and a token is timed when the
event loop gets round to it, after httpx, httpcore and anyio's layers for every read (a
cancel scope and an epoll re-registration per chunk). At 512 streams against a scripted
server that put the TTFT error at +995 %; this path measured +0.01 % at a fifth of the CPU
(docs/perf/README.md, section 4). A closed-loop worker has at most one call in flight, so it
needs no pool: it writes its request on its own socket, stamped right before the write, and
a reader callback on that socket reads the response one HTTP chunk at a time.

Where this path is not used, `fast_path_refusal` (benchkit/client/fallback.py) says why and
the replay goes through httpx exactly as before. Which path measured is written in every
call's record. The response's HTTP/1.1 framing is benchkit/client/http1.py.

Why the framing is ours and not h11's (h11 is a dependency already): measured on 2026-12-03
(docs/perf/README.md, section 6; docs/perf/harness/transport-h11.patch is the h11 variant, with the
same read-to-chunk-end lookahead), h11 cost more CPU per 1,000 tokens at every concurrency
(medians of four rounds, ours / h11: 242 / 287 ms at 1 stream, 50 / 59 at 64, 25 / 37 at
512), and on that loaded machine its slower reads let the loop fall more than a token gap
behind when 512 first tokens arrived together: TTFT error up to +5.8 % at 512 streams (+6.9 %
at 256) against at most +0.02 % for this parser. h11 takes about 10 µs to take in one chunk;
this parser 3 to 5.

Faults are raised as the httpx exceptions httpx raises for the same fault, with httpx's
messages where it has one (``Server disconnected without sending a response.``, ``peer closed
connection without sending complete message body (incomplete chunked read)``), so a call's
record reads the same whichever path measured it.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import platform
import socket
import struct
import sys
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Final

import httpx

from benchkit import __version__, timeouts
from benchkit.client.http1 import Event, FramingError, ResponseHead, ResponseParser

# What measured a call (CallRecord.client) and a pass (ReplayOutcome.client).
CLIENT_HTTPX: Final = "httpx"
CLIENT_RAW: Final = "raw-http/1.1+SO_TIMESTAMPNS"
# The raw path, but some read of the call carried no usable kernel time (missing, or outside
# the bounds `_stamp` checks), so it was timed when it was read, as httpx would time it.
CLIENT_RAW_READ_TIME: Final = "raw-http/1.1"


# SO_TIMESTAMPNS (SO_TIMESTAMPNS_OLD since Linux 5.1) is 35 in asm-generic; alpha, mips,
# parisc and sparc number it differently, and Python does not export it. Its control message
# is a struct __kernel_old_timespec, two C longs, on CLOCK_REALTIME.
_SO_TIMESTAMPNS: Final = 35
_OTHER_NUMBERING: Final = ("alpha", "mips", "parisc", "sparc")
_TIMESPEC: Final = struct.Struct("@ll")
_ANCBUF: Final = socket.CMSG_SPACE(_TIMESPEC.size)
_PEEK_BYTES: Final = 65536


# --------------------------------------------------------------------------- when to use it


@functools.cache
def kernel_timestamps_refusal() -> str | None:
    """Why this machine cannot give kernel receive times on the perf_counter clock, or None."""
    if not sys.platform.startswith("linux"):
        return f"no SO_TIMESTAMPNS on {sys.platform}"
    machine = platform.machine().lower()
    if machine.startswith(_OTHER_NUMBERING):
        return f"SO_TIMESTAMPNS is numbered differently on {machine}"
    # The stamps are moved onto perf_counter by subtracting CLOCK_REALTIME - CLOCK_MONOTONIC;
    # that needs perf_counter to be CLOCK_MONOTONIC (it is on Linux, and loop.time()'s too).
    impl = time.get_clock_info("perf_counter").implementation
    if impl != "clock_gettime(CLOCK_MONOTONIC)":
        return f"perf_counter is {impl}, not CLOCK_MONOTONIC"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            if s.getsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS) != 1:
                return "SO_TIMESTAMPNS did not stay set"
    except OSError as exc:
        return f"SO_TIMESTAMPNS refused ({exc})"
    return None


# --------------------------------------------------------------------------- the server


class Endpoint:
    """Where the requests go: the address is resolved once per replay, not once per
    connection (each resolution is a thread of the loop's executor)."""

    def __init__(self, base_url: str) -> None:
        url = httpx.URL(base_url)
        self.base_url = base_url
        self.host = url.host
        self.port = url.port or 80
        self.netloc = url.netloc  # the Host header as httpx writes it ([::1]:8080, no :80)
        self._targets: dict[str, bytes] = {}
        self._addrs: list[tuple[int, int, int, tuple[object, ...]]] | None = None
        self._lock = asyncio.Lock()

    async def addresses(self) -> list[tuple[int, int, int, tuple[object, ...]]]:
        async with self._lock:
            if self._addrs is None:
                loop = asyncio.get_running_loop()
                try:
                    infos = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
                except OSError as exc:
                    raise httpx.ConnectError(str(exc)) from exc
                self._addrs = [(f, t, p, tuple(a)) for f, t, p, _, a in infos]
            return self._addrs

    def target(self, path: str) -> bytes:
        """The request target for `path`, as httpx makes it of `base_url + path`."""
        t = self._targets.get(path)
        if t is None:
            t = self._targets[path] = httpx.URL(self.base_url + path).raw_path
        return t

    def prefer(self, addr: tuple[int, int, int, tuple[object, ...]]) -> None:
        """The address that answered is tried first from now on (localhost may resolve to
        ::1 first while the server listens on 127.0.0.1 only)."""
        if self._addrs and self._addrs[0] != addr and addr in self._addrs:
            self._addrs.remove(addr)
            self._addrs.insert(0, addr)


def request_head(endpoint: Endpoint, headers: Mapping[str, str]) -> bytes:
    """The header lines of every request, in the order httpx would write them (its defaults,
    the caller's headers replacing a default of the same name), without Content-Length."""
    fields = {
        "host": ("Host", endpoint.netloc.decode("ascii")),
        "accept": ("Accept", "*/*"),
        # Nothing this client could not decode: a server may compress when the request does
        # not say (RFC 9110, 12.5.3).
        "accept-encoding": ("Accept-Encoding", "identity"),
        "connection": ("Connection", "keep-alive"),
        "user-agent": ("User-Agent", f"benchkit/{__version__}"),
    }
    for name, value in headers.items():
        fields[name.lower()] = (name, value)
    fields.setdefault("content-type", ("Content-Type", "application/json"))
    return "".join(f"{n}: {v}\r\n" for n, v in fields.values()).encode("ascii")


# --------------------------------------------------------------------------- a connection


class RawPool:
    """The connections of one replay pass, one per worker, opened before the clock starts."""

    def __init__(self, base_url: str, headers: Mapping[str, str], workers: int) -> None:
        self.endpoint = Endpoint(base_url)
        self.head = request_head(self.endpoint, headers)
        # One peek buffer for all: the reader callbacks run one at a time on the loop thread.
        self.peek = bytearray(_PEEK_BYTES)
        self.conns = [Http1Connection(self) for _ in range(workers)]

    async def warm(self) -> None:
        """Resolve the server once, then open every connection. One that fails is opened
        again by its first call, which records the error."""
        try:
            await self.endpoint.addresses()
        except httpx.ConnectError:
            return
        await asyncio.gather(
            *(c.open(timeouts.REPLAY_CONNECT_S) for c in self.conns), return_exceptions=True
        )

    def close(self) -> None:
        for c in self.conns:
            c.close()


class Http1Connection:
    """One worker's keep-alive HTTP/1.1 connection: `send` a request, then `head`, then
    `body` until None. A reader callback stays registered while the socket is open, so the
    end of a connection the server closed while idle is seen before the next request."""

    def __init__(self, pool: RawPool) -> None:
        self._pool = pool
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sock: socket.socket | None = None
        self._parser = ResponseParser()
        self._events: collections.deque[Event] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._exc: httpx.TransportError | None = None
        self._eof = False
        self._keep_alive = True
        self._floor_ns = 0
        self.requests = 0  # requests sent on this socket
        self.rx_bytes = 0  # bytes of the current response received so far
        self.last_rx = 0.0  # loop.time() of the last bytes received
        self.kernel_timed = True  # every read of the current response had a kernel time

    # -- opening and closing

    def usable(self) -> bool:
        """Open, idle, and not closed by the server: the next request can go on it."""
        return (
            self._sock is not None
            and not self._eof
            and self._exc is None
            and self._parser.idle
            and not self._events
        )

    async def open(self, timeout: float) -> None:
        """Use the open connection if it still can be used, else connect a new one."""
        if self.usable():
            return
        self.close()
        loop = asyncio.get_running_loop()
        endpoint = self._pool.endpoint
        addrs = await endpoint.addresses()
        last: OSError | None = None
        try:
            async with asyncio.timeout(timeout):
                for addr in addrs:
                    family, type_, proto, sockaddr = addr
                    sock = socket.socket(family, type_, proto)
                    try:
                        sock.setblocking(False)
                        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                        await loop.sock_connect(sock, sockaddr)
                    except OSError as exc:
                        sock.close()
                        last = exc
                        continue
                    except BaseException:
                        sock.close()
                        raise
                    endpoint.prefer(addr)
                    self._attach(loop, sock)
                    return
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection within {timeout:.0f} s") from None
        # httpx's words for the same failure, with the cause beside them.
        raise httpx.ConnectError(f"All connection attempts failed ({last})") from last

    def _attach(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        self._loop = loop
        self._sock = sock
        self._parser = ResponseParser()
        self._events.clear()
        self._exc = None
        self._eof = False
        self._keep_alive = True
        self.requests = 0
        self.kernel_timed = True
        loop.add_reader(sock.fileno(), self._readable)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            if self._loop is not None and not self._loop.is_closed() and not self._eof:
                self._loop.remove_reader(sock.fileno())
            sock.close()
        self._eof = True
        w = self._waiter
        if w is not None and not w.done():
            w.set_exception(httpx.ReadError("the connection was closed"))

    # -- one request

    async def send(self, path: str, payload: bytes) -> float:
        """Write a POST of `payload` (JSON) to `path`; returns the perf_counter time taken
        right before the first byte was handed to the kernel (the call's t_sent)."""
        sock = self._sock
        if sock is None or self._loop is None:
            raise httpx.ConnectError("not connected")
        data = b"".join(
            (
                b"POST ",
                self._pool.endpoint.target(path),
                b" HTTP/1.1\r\n",
                self._pool.head,
                b"Content-Length: %d\r\n\r\n" % len(payload),
                payload,
            )
        )
        self._parser.begin()
        self._events.clear()
        self.rx_bytes = 0
        self.kernel_timed = True
        self.requests += 1
        t_ns = time.perf_counter_ns()
        self._floor_ns = t_ns
        try:
            try:
                n = sock.send(data)
            except (BlockingIOError, InterruptedError):
                n = 0
            if n < len(data):
                await self._loop.sock_sendall(sock, memoryview(data)[n:])
        except OSError:
            # As httpcore does: a server may answer (an error) and close before it has read
            # the whole request. Read on: a dead connection says so there, as it would to
            # httpx ("Server disconnected without sending a response.", ReadError).
            pass
        return t_ns / 1e9

    async def head(self) -> ResponseHead:
        item = await self._next()
        if not isinstance(item, ResponseHead):  # the parser always gives the head first
            raise httpx.RemoteProtocolError("response body before its head")
        self._keep_alive = item.keep_alive
        return item

    async def body(self) -> tuple[bytes, float] | None:
        """The next piece of the body with the receive time of its last byte (perf_counter
        seconds), or None at the end of the response (the connection is then ready for the
        next request, or closed when the server said so)."""
        item = await self._next()
        if item is None:
            if not self._keep_alive:
                self.close()
            return None
        if isinstance(item, ResponseHead):
            raise httpx.RemoteProtocolError("a second response head within one response")
        return item

    async def read_rest(self) -> bytes:
        parts = []
        while (piece := await self.body()) is not None:
            parts.append(piece[0])
        return b"".join(parts)

    async def discard_rest(self, grace: float) -> None:
        """Read to the end of the response so the connection can be used again; a server
        that does not end it within `grace` s (or breaks it) loses the connection, not the
        call."""
        try:
            async with asyncio.timeout(grace):
                while await self.body() is not None:
                    pass
        except (TimeoutError, httpx.TransportError):
            self.close()

    def stall_guard(self, limit: float) -> StallGuard:
        return StallGuard(self, limit)

    async def _next(self) -> Event:
        while not self._events:
            if self._exc is not None:
                raise self._exc
            if self._eof or self._loop is None:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._events.popleft()

    # -- the reader callback

    def _readable(self) -> None:
        # The kernel stamps each segment it receives and a TCP read reports the stamp of the
        # last segment it took. So peek at what is waiting and take it one piece of body at
        # a time (the head, then each chunk: llama-server writes one per token event), so
        # that a piece is not given the time of a later one read with it.
        #
        # The limit (tests/unit/client/test_transport.py shows it): segments that queue up
        # behind one not yet read are merged by the kernel, which keeps the latest stamp, so
        # reading them one at a time cannot tell them apart any more. Kernel times are exact for
        # a client that reads each chunk before the next one reaches the same connection
        # (a loop busy for less than a token gap); one that falls further behind times the
        # queued tokens at the last arrival among them (at most about 17 chunks, the
        # kernel's fragments per segment): late, but never later than it read them.
        sock = self._sock
        loop = self._loop
        if sock is None or loop is None:
            return
        peek = self._pool.peek
        offset_ns, slack_ns = _clock_offset_ns()  # once per wakeup (see _stamp)
        self.last_rx = loop.time()
        try:
            while True:
                n = sock.recv_into(peek, len(peek), socket.MSG_PEEK)
                if n == 0:
                    self._at_eof()
                    break
                off = 0
                while off < n:
                    want = self._parser.want(peek, off, n)
                    data, anc, _, _ = sock.recvmsg(want, _ANCBUF)
                    if not data:  # cannot follow a peek that saw bytes; stop all the same
                        n = 0
                        break
                    off += len(data)
                    self.rx_bytes += len(data)
                    t, exact = self._stamp(anc, offset_ns, slack_ns, time.perf_counter_ns())
                    before = len(self._events)
                    self._parser.feed(data, t, self._events)
                    if not exact and self.kernel_timed:
                        # Only pieces of body carry tokens: a head read at its read time
                        # (the kernel starts stamping a moment after the first socket asks,
                        # so a fresh connection's first head may have no stamp) is harmless.
                        new = itertools.islice(self._events, before, None)
                        self.kernel_timed = not any(type(e) is tuple for e in new)  # not a head
                if n < len(peek):
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except FramingError as exc:
            self._fail(httpx.RemoteProtocolError(str(exc)))
        except OSError as exc:
            self._fail(httpx.ReadError(str(exc)))
        except Exception as exc:
            # A bug here must end the call, not escape: the loop would log it and call back
            # at once on the same unread bytes, spinning until the stall timeout.
            self._fail(httpx.ReadError(f"benchkit's reader failed: {type(exc).__name__}: {exc}"))
        w = self._waiter
        if w is not None and not w.done() and (self._events or self._exc or self._eof):
            w.set_result(None)

    def _stamp(
        self, anc: list[tuple[int, int, bytes]], offset_ns: int, slack_ns: int, read_ns: int
    ) -> tuple[float, bool]:
        """The receive time of a read in perf_counter seconds, and whether it is the
        kernel's (else it is the read time).

        The kernel stamps on CLOCK_REALTIME; the records are on perf_counter
        (CLOCK_MONOTONIC). The two run at the same rate (NTP slews both alike) but
        CLOCK_REALTIME can be stepped (an NTP step, settimeofday, a resumed VM). The offset
        between them is therefore taken afresh at every wakeup, not once per run: a step
        during a run would otherwise shift every later stamp by the step. With a fresh
        offset only bytes received before a step and read after it are off, and the bounds
        below catch a step larger than the slack they leave: a receive time must fall after
        the request was sent and after this connection's previous receive time, and before
        the read. Outside them the read time is used, as the httpx path would, and a call
        whose tokens were timed so is labelled CLIENT_RAW_READ_TIME.

        The offset is uncertain by `slack_ns` (see _clock_offset_ns), so a stamp that far
        outside the bounds is still the kernel's and is moved onto the nearer bound: a
        segment received just before the read, or just after the previous one, must not
        cost the call its label."""
        for level, kind, raw in anc:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(raw) >= 16:
                sec, nsec = _TIMESPEC.unpack_from(raw)
                t_ns: int = sec * 1_000_000_000 + nsec - offset_ns
                if self._floor_ns - slack_ns <= t_ns <= read_ns + slack_ns:
                    t_ns = min(max(t_ns, self._floor_ns), read_ns)
                    self._floor_ns = t_ns
                    return t_ns / 1e9, True
                break
        return read_ns / 1e9, False

    def _at_eof(self) -> None:
        assert self._loop is not None and self._sock is not None
        self._loop.remove_reader(self._sock.fileno())
        self._eof = True
        try:
            self._parser.eof(self._events)
        except FramingError as exc:
            self._exc = httpx.RemoteProtocolError(str(exc))

    def _fail(self, exc: httpx.TransportError) -> None:
        assert self._loop is not None and self._sock is not None
        self._loop.remove_reader(self._sock.fileno())
        self._eof = True
        self._parser.reset()
        self._exc = exc


def _clock_offset_ns() -> tuple[int, int]:
    """CLOCK_REALTIME - CLOCK_MONOTONIC now, and how far off it can be (ns).

    The realtime read is bracketed by two monotonic reads and set against their middle, so
    the error is at most half the bracket: well under a microsecond, unless the thread was
    preempted between the reads (a loaded machine), which a wide bracket shows; then it is
    read again, keeping the narrowest of three."""
    best_off, best_width = 0, -1
    for _ in range(3):
        m1 = time.perf_counter_ns()
        r = time.time_ns()
        m2 = time.perf_counter_ns()
        if best_width < 0 or m2 - m1 < best_width:
            best_off, best_width = r - (m1 + m2) // 2, m2 - m1
        if best_width < 20_000:
            break
    return best_off, best_width // 2 + 1_000


class StallGuard:
    """`with conn.stall_guard(s):` raises TimeoutError when the connection has received
    nothing for `s` seconds (counted from entry, then from the last bytes received).

    One timer per call, moved on only when it fires early, instead of a timeout per read:
    the reads cost nothing extra. It works as asyncio.timeout does (cancel the task, turn
    the cancellation into TimeoutError on exit), so a cancellation from outside (the job
    deadline, Ctrl-C) still propagates as a cancellation."""

    def __init__(self, conn: Http1Connection, limit: float) -> None:
        self._conn = conn
        self._limit = limit
        self._fired = False
        self._handle: asyncio.TimerHandle | None = None

    def __enter__(self) -> StallGuard:
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._loop = asyncio.get_running_loop()
        self._start = self._loop.time()
        self._handle = self._loop.call_at(self._start + self._limit, self._check)
        return self

    def _check(self) -> None:
        due = max(self._start, self._conn.last_rx) + self._limit
        if self._loop.time() >= due:
            self._fired = True
            self._handle = None
            self._task.cancel()
        else:
            self._handle = self._loop.call_at(due, self._check)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            self._handle.cancel()
        # As asyncio.timeout: the cancellation was ours unless another came on top of it.
        if (
            self._fired
            and self._task.uncancel() <= self._cancelling
            and exc_type is asyncio.CancelledError
        ):
            raise TimeoutError from exc

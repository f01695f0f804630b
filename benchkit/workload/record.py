"""Record an OpenAI-compatible client's calls through a proxy and freeze them as a fixture.

``python -m benchkit.workload record --upstream URL --listen PORT --out DIR`` listens on
127.0.0.1:PORT and forwards every request to the upstream server unchanged, streaming
responses back chunk by chunk as they arrive. Calls to ``/v1/chat/completions`` and
``/v1/completions`` are also recorded: one journal line per finished call, appended as
calls finish so that a crash loses nothing, then converted into a fixture directory
(``fixture.json`` + ``calls.jsonl``, docs/fixture-format.md) atomically on SIGINT/SIGTERM
(the journal and the fixture writer: benchkit/workload/journal.py). Responses are read as
they pass by the replay's own stream reader (benchkit/client/stream.py).

Units: the ``X-Benchkit-Unit`` header, else a ``"benchkit_unit"`` body field (removed
before forwarding), else the single unit ``default``. Roles likewise from
``X-Benchkit-Role`` / ``"benchkit_role"``, else the endpoint (``chat`` or ``completion``).
``seq`` is the order of arrival within a unit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import h11
import httpx

from benchkit import timeouts
from benchkit.client.stream import EventStream, StreamFacts, apply_event
from benchkit.errors import UserError
from benchkit.workload.journal import (
    Journal,
    JournalEntry,
    Prompt,
    check_target,
    convert,
    journal_header,
    journal_path,
    read_journal,
    say_written,
)

RECORDED_PATHS = {"/v1/chat/completions": "chat", "/v1/completions": "completion"}
UNIT_HEADER = "x-benchkit-unit"
ROLE_HEADER = "x-benchkit-role"
UNIT_FIELD = "benchkit_unit"
ROLE_FIELD = "benchkit_role"
DEFAULT_UNIT = "default"
SSE = "text/event-stream"
# Request fields that are the prompt, the length limit or transport, not generation
# parameters; everything else a client sends is kept as the call's `sampling`.
_NOT_SAMPLING = frozenset(
    {"messages", "prompt", "model", "stream", "stream_options", "max_tokens",
     "max_completion_tokens", "n_predict", UNIT_FIELD, ROLE_FIELD}
)  # fmt: skip
# Hop-by-hop headers (RFC 9110 7.6.1) and framing: each side of the proxy has its own.
_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
     "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host",
     "content-length", "expect"}
)  # fmt: skip


# --------------------------------------------------------------------------- response tap


class Tap:
    """Reads a copy of a response as it passes: lengths, finish reason, first-token time.

    Streams are read event by event as they pass (benchkit.client.stream, as the replay reads
    them); other bodies are read as one JSON document at the end. What the tap cannot read it
    leaves as None; it never changes or delays what the client receives.
    """

    def __init__(self, *, stream: bool) -> None:
        self.stream = stream
        self.facts = StreamFacts()
        self._events = EventStream(self.facts, strict=False)
        self._body = bytearray()

    def feed(self, data: bytes, now: float) -> None:
        if self.stream:
            self._events.feed(data, now)
        else:
            self._body += data

    def close(self, now: float) -> None:
        if self.stream:
            self._events.end(now)
            return
        try:
            obj = json.loads(bytes(self._body))
            if isinstance(obj, dict):
                apply_event(self.facts, obj, now)
        except ValueError:
            return

    def completion_tokens(self) -> tuple[int | None, str | None]:
        """(count, where it came from): the server's usage, llama-server's timings, or the
        streamed chunks counted (one token a chunk, as llama-server streams)."""
        f = self.facts
        if f.completion_tokens is not None:
            return f.completion_tokens, "usage"
        n = _count(f.timings, "predicted_n")
        if n is not None:
            return n, "timings"
        if self.stream and f.finish_reason is not None:
            return f.chunks, "counted"
        return None, None

    def prompt_tokens(self) -> int | None:
        """usage.prompt_tokens, else llama-server's timings (evaluated + reused from cache)."""
        if self.facts.prompt_tokens is not None:
            return self.facts.prompt_tokens
        evaluated = _count(self.facts.timings, "prompt_n")
        cached = _count(self.facts.timings, "cache_n")
        if evaluated is not None:
            return evaluated + (cached or 0)
        return None


def _count(d: dict[str, float], key: str) -> int | None:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        return None
    return v


# --------------------------------------------------------------------------- request side


@dataclass
class Parsed:
    """What the recorder takes from one request body, and the bytes to forward."""

    unit: str | None
    role: str | None
    prompt: Prompt | None
    prompt_ids: int | None
    sampling: dict[str, object]
    max_tokens: int | None
    stream: bool
    body: bytes
    problem: str | None = None


def parse_request(body: bytes, endpoint: str, *, lengths_only: bool) -> Parsed:
    """Read a chat or completion request. The body is forwarded byte for byte unless it
    carried the ``benchkit_unit``/``benchkit_role`` fields, which are removed first."""
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        # The upstream will refuse it; the recorder notes it and passes it on untouched.
        return Parsed(None, None, None, None, {}, None, False, body, "body is not a JSON object")
    unit = obj.pop(UNIT_FIELD, None)
    role = obj.pop(ROLE_FIELD, None)
    if unit is not None or role is not None:
        body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    problem = None
    prompt: Prompt | None = None
    ids: int | None = None
    if endpoint == "chat":
        msgs = obj.get("messages")
        if isinstance(msgs, list) and msgs:
            prompt = {"messages": msgs}
        else:
            problem = "no messages"
    else:
        p = obj.get("prompt")
        if isinstance(p, list) and len(p) == 1 and isinstance(p[0], str | list):
            p = p[0]  # a batch of one is one prompt
        if isinstance(p, str) and p:
            prompt = {"text": p}
        elif isinstance(p, list) and p and all(_is_id(x) for x in p):
            prompt = {"ids": p}
            ids = len(p)
        else:
            problem = "prompt is not one string or one list of token ids (batches are not recorded)"
    max_tokens = None
    for k in ("max_completion_tokens", "max_tokens", "n_predict"):
        v = obj.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            max_tokens = v
            break
    sampling = {k: v for k, v in obj.items() if k not in _NOT_SAMPLING}
    if lengths_only:
        # Only numbers and switches: strings (stop words, grammars, tool schemas) can be
        # private content too.
        sampling = {
            k: v for k, v in sampling.items() if isinstance(v, int | float | bool) or v is None
        }
        prompt = None
    return Parsed(
        unit=None if unit is None else str(unit),
        role=None if role is None else str(role),
        prompt=prompt,
        prompt_ids=ids,
        sampling=sampling,
        max_tokens=max_tokens,
        stream=obj.get("stream") is True,
        body=body,
        problem=problem,
    )


def _is_id(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


# --------------------------------------------------------------------------- the proxy


class Recorder:
    """The proxy: one asyncio task per client connection, one shared upstream client."""

    def __init__(self, upstream: str, journal: Journal, *, lengths_only: bool) -> None:
        self.upstream = upstream.rstrip("/")
        self.journal = journal
        self.lengths_only = lengths_only
        self.arrivals = 0
        # Arrival times are kept from here, so load=trace can replay the traffic's timing.
        self._t_start = time.perf_counter()
        self._seq: dict[str, int] = {}
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._conns: set[asyncio.Task[None]] = set()
        # No pool limit: concurrent client calls must never queue inside the proxy.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=timeouts.UPSTREAM_CONNECT_S,
                read=None,
                write=timeouts.UPSTREAM_WRITE_S,
                pool=None,
            ),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        )

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                event = await _next_event(conn, reader, writer)
                if not isinstance(event, h11.Request):
                    break
                body = bytearray()
                while True:
                    ev = await _next_event(conn, reader, writer)
                    if isinstance(ev, h11.Data):
                        body += ev.data
                    elif isinstance(ev, h11.EndOfMessage):
                        break
                    else:
                        return
                await self.serve(conn, writer, event, bytes(body))
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except h11.RemoteProtocolError as e:
            with contextlib.suppress(h11.LocalProtocolError, ConnectionError):
                await _send_error(conn, writer, e.error_status_hint, f"bad request: {e}")
        except (OSError, h11.LocalProtocolError):
            pass  # the client went away or broke the protocol: its connection ends
        finally:
            if task is not None:
                self._conns.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def serve(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, req: h11.Request, body: bytes
    ) -> None:
        """Forward one request upstream and its response back; journal it if it is a call."""
        t0 = time.perf_counter()
        target = req.target.decode("latin-1")
        if not target.startswith("/") or target.startswith("//"):
            # Only a path goes upstream: `@host:port/...` or `//host/...` appended to the
            # upstream's URL would name another server (userinfo, authority).
            await _send_error(
                conn, writer, 400, f"request target {target[:80]!r} is not a path; send /PATH"
            )
            return
        raw_headers = [(k.lower(), v) for k, v in req.headers]
        endpoint = RECORDED_PATHS.get(urlsplit(target).path) if req.method == b"POST" else None
        entry: JournalEntry | None = None
        if endpoint is not None:
            entry, body = self._arrive(raw_headers, endpoint, body)
        out = _Outcome()
        try:
            request = self.client.build_request(
                req.method.decode("latin-1"),
                self.upstream + target,
                headers=_forwarded(raw_headers),
                content=body,
            )
            try:
                resp = await self._send(request)
            except httpx.HTTPError as e:
                out.error = f"upstream unreachable: {type(e).__name__}: {e}"
                out.status = 502
                await _send_error(conn, writer, 502, out.error)
                return
            await self._relay(conn, writer, resp, out, tapped=entry is not None)
        except asyncio.CancelledError:
            out.error = "cancelled at shutdown before the response ended"
            raise
        finally:
            if entry is not None:
                self._finish(entry, out, t0)

    def _arrive(
        self, raw_headers: list[tuple[bytes, bytes]], endpoint: str, body: bytes
    ) -> tuple[JournalEntry, bytes]:
        """A call arrived: its journal entry so far, and the body to forward."""
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers]
        parsed = parse_request(body, endpoint, lengths_only=self.lengths_only)
        unit = _header(headers, UNIT_HEADER) or parsed.unit or DEFAULT_UNIT
        role = _header(headers, ROLE_HEADER) or parsed.role or endpoint
        seq = self._seq.get(unit, 0)
        self._seq[unit] = seq + 1
        entry: JournalEntry = {
            "n": self.arrivals,
            "arrival_s": round(time.perf_counter() - self._t_start, 6),
            "unit": unit,
            "seq": seq,
            "role": role,
            "endpoint": endpoint,
            "stream": parsed.stream,
            "prompt": parsed.prompt,
            "prompt_ids": parsed.prompt_ids,
            "sampling": parsed.sampling,
            "max_tokens": parsed.max_tokens,
            "problem": parsed.problem,
        }
        self.arrivals += 1
        self._in_flight += 1
        self._idle.clear()
        return entry, parsed.body

    async def _relay(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        resp: httpx.Response,
        out: _Outcome,
        *,
        tapped: bool,
    ) -> None:
        """Send the upstream's response on to the client as it arrives; a copy passes the
        tap when the call is recorded."""
        try:
            out.status = resp.status_code
            # Framing is h11's: the upstream's length is kept, its chunking redone.
            out_headers = [
                (k, v)
                for k, v in resp.headers.raw
                if k.lower() == b"content-length" or k.lower().decode("latin-1") not in _HOP
            ]
            tap = out.tap = Tap(stream=resp.headers.get("content-type", "").startswith(SSE))
            head = h11.Response(
                status_code=out.status, headers=out_headers, reason=resp.reason_phrase
            )
            writer.write(conn.send(head))
            async for chunk in resp.aiter_raw():
                # Forward first, read after: the tap never delays the client.
                writer.write(conn.send(h11.Data(data=chunk)))
                await writer.drain()
                if tapped:
                    tap.feed(chunk, time.perf_counter())
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
        except httpx.HTTPError as e:
            out.error = f"upstream broke off: {type(e).__name__}: {e}"
            raise ConnectionError(out.error) from None
        except (ConnectionError, OSError):
            out.error = out.error or "the client went away before the response ended"
            raise
        finally:
            await resp.aclose()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self.client.send(request, stream=True)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            # A kept-alive connection the upstream closed as we reused it (llama-server
            # closes idle ones after 5 s): nothing was answered, so send once more on a
            # new connection, as HTTP clients do.
            return await self.client.send(request, stream=True)

    def _finish(self, entry: JournalEntry, out: _Outcome, t0: float) -> None:
        now = time.perf_counter()
        completion, source = (None, None)
        prompt_tokens = None
        facts = StreamFacts()
        if out.tap is not None:
            out.tap.close(now)
            facts = out.tap.facts
            completion, source = out.tap.completion_tokens()
            prompt_tokens = out.tap.prompt_tokens()
        entry.update(
            {
                "status": out.status,
                "error": out.error or facts.error,
                "finish_reason": facts.finish_reason,
                "completion_tokens": completion,
                "completion_source": source,
                "prompt_tokens": prompt_tokens,
                "ttft_ms": None if facts.t_first is None else 1000 * (facts.t_first - t0),
                "total_ms": 1000 * (now - t0),
            }
        )
        try:
            self.journal.write(entry)
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def shutdown(self) -> int:
        """Cancel calls still in flight and close every connection; how many calls were cut."""
        cut = self._in_flight
        for t in list(self._conns):
            t.cancel()
        if self._conns:
            await asyncio.wait(list(self._conns), timeout=timeouts.RECORD_CANCEL_S)
        await self.client.aclose()
        return cut


@dataclass
class _Outcome:
    """What became of one forwarded call, for its journal line."""

    status: int | None = None
    error: str | None = None
    tap: Tap | None = None


def _forwarded(raw_headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The request's headers as they go upstream: each side of the proxy has its own
    hop-by-hop headers; ours (x-benchkit-*) stay here; no compression, so that the tap
    can read what passes."""
    forward = [
        (k, v)
        for k, v in raw_headers
        if k.decode("latin-1") not in _HOP
        and k != b"accept-encoding"
        and not k.startswith(b"x-benchkit-")
    ]
    forward.append((b"accept-encoding", b"identity"))
    return forward


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    for k, v in headers:
        if k == name and v.strip():
            return v.strip()
    return None


async def _next_event(
    conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Any:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        if conn.they_are_waiting_for_100_continue:
            writer.write(conn.send(h11.InformationalResponse(status_code=100, headers=[])))
        conn.receive_data(await reader.read(65536))


async def _send_error(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, msg: str
) -> None:
    if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
        return
    body = json.dumps({"error": {"code": status, "message": msg, "type": "proxy_error"}}).encode()
    head = [("content-type", "application/json"), ("content-length", str(len(body)))]
    writer.write(conn.send(h11.Response(status_code=status, headers=head)))
    writer.write(conn.send(h11.Data(data=body)))
    writer.write(conn.send(h11.EndOfMessage()))
    await writer.drain()


# --------------------------------------------------------------------------- entry point


def record(
    *,
    upstream: str,
    port: int,
    out: Path,
    lengths_only: bool = False,
    grace_s: float = timeouts.RECORD_GRACE_S,
    keep_journal: bool = False,
) -> int:
    """Run the recorder until SIGINT/SIGTERM, then write the fixture. Returns an exit code."""
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--upstream {upstream!r} is not a URL; expected http://HOST:PORT")
    check_target(out)
    journal = journal_path(out)
    if journal.exists():
        raise UserError(
            f"{journal}: a journal of an earlier recording is there; write its fixture with "
            f"`record --convert {journal} --out DIR` (or remove it)"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    header = journal_header(upstream, lengths_only=lengths_only)
    jr = Journal(journal, header)
    try:
        cut = asyncio.run(_serve(upstream, port, jr, lengths_only=lengths_only, grace_s=grace_s))
    finally:
        jr.close()
    if cut:
        print(f"benchkit record: {cut} calls still running at shutdown left out", file=sys.stderr)
    try:
        done = convert(journal, out)
    except UserError:
        _, entries = read_journal(journal)
        if not entries:
            journal.unlink()
        raise
    if not keep_journal:
        journal.unlink()
    say_written(done, out)
    return 0


async def _serve(
    upstream: str, port: int, journal: Journal, *, lengths_only: bool, grace_s: float
) -> int:
    rec = Recorder(upstream, journal, lengths_only=lengths_only)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for s in signals:
        loop.add_signal_handler(s, stop.set)
    try:
        try:
            server = await asyncio.start_server(rec.handle, host="127.0.0.1", port=port)
        except OSError as e:
            raise UserError(f"cannot listen on 127.0.0.1:{port} ({e.strerror})") from None
        bound = server.sockets[0].getsockname()[1]
        print(
            f"benchkit record: listening on http://127.0.0.1:{bound} -> {upstream}; "
            f"journal {journal.path}; Ctrl-C writes the fixture",
            file=sys.stderr,
            flush=True,
        )
        async with server:
            await stop.wait()
            server.close()  # no new connections; calls in flight may finish
            stop.clear()
            # Calls in flight get grace_s to finish; a second signal stops waiting.
            idle = asyncio.ensure_future(rec.wait_idle())
            again = asyncio.ensure_future(stop.wait())
            await asyncio.wait({idle, again}, timeout=grace_s, return_when="FIRST_COMPLETED")
            idle.cancel()
            again.cancel()
            return await rec.shutdown()
    finally:
        for s in signals:
            loop.remove_signal_handler(s)

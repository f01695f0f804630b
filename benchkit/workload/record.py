"""Record an OpenAI-compatible client's calls through a proxy and freeze them as a fixture.

``python -m benchkit.workload record --upstream URL --listen PORT --out DIR`` listens on
127.0.0.1:PORT and forwards every request to the upstream server unchanged, streaming
responses back chunk by chunk as they arrive. Calls to ``/v1/chat/completions`` and
``/v1/completions`` are also recorded: one journal line per finished call, appended as
calls finish so that a crash loses nothing, then converted into a fixture directory
(``fixture.json`` + ``calls.jsonl``, docs/fixture-format.md) atomically on SIGINT/SIGTERM.

Units: the ``X-Benchkit-Unit`` header, else a ``"benchkit_unit"`` body field (removed
before forwarding), else the single unit ``default``. Roles likewise from
``X-Benchkit-Role`` / ``"benchkit_role"``, else the endpoint (``chat`` or ``completion``).
``seq`` is the order of arrival within a unit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import h11
import httpx

from benchkit.client.stream import EventStream, StreamFacts, apply_event
from benchkit.errors import UserError
from benchkit.workload.model import (
    FIXTURE_CALLS_FILE,
    FIXTURE_FILE,
    FORMAT_VERSION,
    Workload,
    load_workload,
)

JOURNAL_VERSION = 1
RECORDED_PATHS = {"/v1/chat/completions": "chat", "/v1/completions": "completion"}
UNIT_HEADER = "x-benchkit-unit"
ROLE_HEADER = "x-benchkit-role"
UNIT_FIELD = "benchkit_unit"
ROLE_FIELD = "benchkit_role"
DEFAULT_UNIT = "default"
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


def journal_path(out: Path) -> Path:
    """Where the journal of a recording into ``out`` is appended: beside it, so that the
    fixture directory itself only ever appears whole."""
    return out.parent / f"{out.name}.journal.jsonl"


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
    prompt: dict[str, Any] | None
    prompt_ids: int | None
    sampling: dict[str, Any]
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
    prompt: dict[str, Any] | None = None
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


class Journal:
    """Appends one JSON line per finished call with a single write, so a line is whole."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        self.write(header)

    def write(self, obj: dict[str, Any]) -> None:
        # ASCII escapes: a client's lone surrogate (valid JSON, not UTF-8) cannot break a line.
        line = json.dumps(obj, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode("ascii"))

    def close(self) -> None:
        os.fsync(self._fd)
        os.close(self._fd)


class Recorder:
    """The proxy: one asyncio task per client connection, one shared upstream client."""

    def __init__(self, upstream: str, journal: Journal, *, lengths_only: bool) -> None:
        self.upstream = upstream.rstrip("/")
        self.journal = journal
        self.lengths_only = lengths_only
        self.arrivals = 0
        self._seq: dict[str, int] = {}
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._conns: set[asyncio.Task[None]] = set()
        # No pool limit: concurrent client calls must never queue inside the proxy.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(connect=10.0, read=None, write=60.0, pool=None),
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
        t0 = time.perf_counter()
        target = req.target.decode("latin-1")
        path = urlsplit(target).path
        raw_headers = [(k.lower(), v) for k, v in req.headers]
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers]
        endpoint = RECORDED_PATHS.get(path) if req.method == b"POST" else None
        parsed: Parsed | None = None
        entry: dict[str, Any] | None = None
        if endpoint is not None:
            parsed = parse_request(body, endpoint, lengths_only=self.lengths_only)
            body = parsed.body
            unit = _header(headers, UNIT_HEADER) or parsed.unit or DEFAULT_UNIT
            role = _header(headers, ROLE_HEADER) or parsed.role or endpoint
            seq = self._seq.get(unit, 0)
            self._seq[unit] = seq + 1
            entry = {
                "n": self.arrivals,
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
        forward = [
            (k, v)
            for k, v in raw_headers
            # The tap must read what passes, so no compression; our own headers stay here.
            if k.decode("latin-1") not in _HOP
            and k != b"accept-encoding"
            and not k.startswith(b"x-benchkit-")
        ]
        forward.append((b"accept-encoding", b"identity"))
        tap: Tap | None = None
        status: int | None = None
        error: str | None = None
        try:
            request = self.client.build_request(
                req.method.decode("latin-1"), self.upstream + target, headers=forward, content=body
            )
            try:
                resp = await self._send(request)
            except httpx.HTTPError as e:
                error = f"upstream unreachable: {type(e).__name__}: {e}"
                status = 502
                await _send_error(conn, writer, 502, error)
                return
            try:
                status = resp.status_code
                # Framing is h11's: the upstream's length is kept, its chunking redone.
                out_headers = [
                    (k, v)
                    for k, v in resp.headers.raw
                    if k.lower() == b"content-length" or k.lower().decode("latin-1") not in _HOP
                ]
                ctype = resp.headers.get("content-type", "")
                tap = Tap(stream=ctype.startswith("text/event-stream"))
                writer.write(
                    conn.send(
                        h11.Response(
                            status_code=status, headers=out_headers, reason=resp.reason_phrase
                        )
                    )
                )
                async for chunk in resp.aiter_raw():
                    # Forward first, read after: the tap never delays the client.
                    writer.write(conn.send(h11.Data(data=chunk)))
                    await writer.drain()
                    if entry is not None:
                        tap.feed(chunk, time.perf_counter())
                writer.write(conn.send(h11.EndOfMessage()))
                await writer.drain()
            except httpx.HTTPError as e:
                error = f"upstream broke off: {type(e).__name__}: {e}"
                raise ConnectionError(error) from None
            except (ConnectionError, OSError):
                error = error or "the client went away before the response ended"
                raise
            finally:
                await resp.aclose()
        except asyncio.CancelledError:
            error = "cancelled at shutdown before the response ended"
            raise
        finally:
            if entry is not None:
                self._finish(entry, tap, status, error, t0)

    async def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self.client.send(request, stream=True)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            # A kept-alive connection the upstream closed as we reused it (llama-server
            # closes idle ones after 5 s): nothing was answered, so send once more on a
            # new connection, as HTTP clients do.
            return await self.client.send(request, stream=True)

    def _finish(
        self,
        entry: dict[str, Any],
        tap: Tap | None,
        status: int | None,
        error: str | None,
        t0: float,
    ) -> None:
        now = time.perf_counter()
        completion, source = (None, None)
        prompt_tokens = None
        facts = None
        if tap is not None:
            tap.close(now)
            facts = tap.facts
            completion, source = tap.completion_tokens()
            prompt_tokens = tap.prompt_tokens()
            error = error or facts.error
        t_first = None if facts is None else facts.t_first
        entry.update(
            status=status,
            error=error,
            finish_reason=None if facts is None else facts.finish_reason,
            completion_tokens=completion,
            completion_source=source,
            prompt_tokens=prompt_tokens,
            ttft_ms=None if t_first is None else 1000 * (t_first - t0),
            total_ms=1000 * (now - t0),
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
            await asyncio.wait(list(self._conns), timeout=5)
        await self.client.aclose()
        return cut


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


# --------------------------------------------------------------------------- journal -> fixture


@dataclass
class Converted:
    """A fixture written from a journal, and what was left out of it."""

    workload: Workload
    dropped: int
    notes: list[str]


def read_journal(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, entries) of a journal; a torn last line (a crash mid-write) is skipped."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror}); expected a journal") from None
    lines = data.split(b"\n")
    header: dict[str, Any] | None = None
    entries: list[dict[str, Any]] = []
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            if i == len(lines):
                continue  # the last line, cut short by a crash: that call is lost
            raise UserError(f"{path}:{i}: not a JSON line; expected a recorder journal") from None
        if not isinstance(obj, dict):
            raise UserError(f"{path}:{i}: not a JSON object; expected a recorder journal")
        if header is None:
            if obj.get("benchkit_journal") != JOURNAL_VERSION:
                raise UserError(
                    f"{path}:{i}: not a benchkit recorder journal (version {JOURNAL_VERSION})"
                )
            header = obj
        else:
            entries.append(obj)
    if header is None:
        raise UserError(f"{path}: empty; expected a recorder journal")
    return header, entries


def convert(journal: Path, out: Path, *, name: str | None = None) -> Converted:
    """Write the fixture directory ``out`` from a journal, atomically: the whole fixture,
    checked by the loader, or nothing. ``out`` must not exist (an empty directory is fine)."""
    header, entries = read_journal(journal)
    calls, dropped, notes = fixture_calls(entries, lengths_only=bool(header.get("lengths_only")))
    if not calls:
        raise UserError(
            f"{journal}: no finished call to write ({dropped} failed or cut short); "
            "no fixture written"
        )
    kind = calls[0][0]
    cap = max(c["max_tokens"] for _, c in calls)
    meta = {
        "format": FORMAT_VERSION,
        "name": name or out.name,
        "kind": kind,
        "cap": cap,
        # Recorded content is what the pipeline's users wait for: let the model decide.
        # Token prompts (lengths only) are made-up ids: force the recorded lengths.
        "output_policy": "replay" if kind == "tokens" else "natural",
        "description": _description(header, calls, dropped, notes),
        "recipe": None,
    }
    _check_target(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        _write(tmp / FIXTURE_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        lines = "".join(
            json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n" for _, c in calls
        )
        _write(tmp / FIXTURE_CALLS_FILE, lines)
        load_workload(tmp)  # never leave a fixture the loader would refuse
        if out.exists():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Converted(workload=load_workload(out), dropped=dropped, notes=notes)


def _check_target(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: already exists; expected a new (or empty) fixture directory")


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def fixture_calls(
    entries: list[dict[str, Any]], *, lengths_only: bool
) -> tuple[list[tuple[str, dict[str, Any]]], int, list[str]]:
    """(kind, calls.jsonl object) per kept call, in arrival order with seq renumbered per
    unit; how many entries were left out; notes on what could not be kept as recorded."""
    notes: list[str] = []
    kept: list[dict[str, Any]] = []
    for e in sorted(entries, key=lambda e: int(e.get("n", 0))):
        ok = e.get("status") == 200 and not e.get("error")
        if ok and isinstance(e.get("completion_tokens"), int):
            kept.append(e)
    if not lengths_only:
        # A prompt the recorder could not read (a batch of prompts) cannot be replayed.
        unread = [e for e in kept if _prompt_kind(e) == "none"]
        if unread:
            notes.append(f"{len(unread)} calls with unreadable prompts left out")
            kept = [e for e in kept if _prompt_kind(e) != "none"]
    dropped = len(entries) - len(kept)
    kinds = {_prompt_kind(e) for e in kept}
    if lengths_only:
        kind = "tokens"
    elif kinds == {"ids"}:
        kind = "tokens"
        notes.append("token-id prompts kept as lengths (format 1 holds no ids)")
    elif len(kinds) == 1:
        kind = kinds.pop()
    else:
        # One fixture has one kind; lengths are what chat, text and ids have in common.
        kind = "tokens"
        if kinds:
            notes.append(f"mixed prompt kinds ({', '.join(sorted(kinds))}) kept as lengths only")
    if kind == "tokens":
        before = len(kept)
        kept = [e for e in kept if _prompt_len(e) is not None]
        if len(kept) < before:
            notes.append(f"{before - len(kept)} calls with no prompt length left out")
            dropped += before - len(kept)
    prompts: list[dict[str, Any]] = []
    usable: list[dict[str, Any]] = []
    for e in kept:
        prompt = _prompt(e, kind, notes)
        if prompt is None:
            continue
        prompts.append(prompt)
        usable.append(e)
    if len(usable) < len(kept):
        notes.append(f"{len(kept) - len(usable)} calls whose prompt format 1 cannot hold left out")
        dropped += len(kept) - len(usable)
    cap = _cap(usable)
    seq: dict[str, int] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    for e, prompt in zip(usable, prompts, strict=True):
        unit = str(e["unit"])
        n = seq.get(unit, 0)
        seq[unit] = n + 1
        completion = max(1, int(e["completion_tokens"]))
        role = str(e.get("role") or "call")
        call: dict[str, Any] = {"unit": unit, "seq": n, "role": role, "prompt": prompt}
        call["max_tokens"] = _max_tokens(e, completion, cap)
        call["completion_tokens"] = completion
        pt = e.get("prompt_tokens")
        if kind != "tokens" and isinstance(pt, int) and pt >= 1:
            call["prompt_tokens"] = pt
        if e.get("sampling"):
            call["sampling"] = e["sampling"]
        out.append((kind, call))
    return out, dropped, notes


def _prompt(e: dict[str, Any], kind: str, notes: list[str]) -> dict[str, Any] | None:
    """The call's prompt as format 1 holds it, or None when it cannot (no message left,
    text that is not valid Unicode)."""
    if kind == "tokens":
        return {"segments": [{"key": None, "len": _prompt_len(e)}]}
    if kind == "chat":
        msgs = _messages(e["prompt"]["messages"], notes)
        prompt: dict[str, Any] = {"messages": msgs}
        if not msgs:
            return None
    else:
        prompt = {"text": e["prompt"]["text"]}
    try:
        json.dumps(prompt, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return prompt


def _prompt_kind(e: dict[str, Any]) -> str:
    p = e.get("prompt") or {}
    if "messages" in p:
        return "chat"
    if "text" in p:
        return "text"
    if "ids" in p:
        return "ids"
    return "none"


def _prompt_len(e: dict[str, Any]) -> int | None:
    for v in (e.get("prompt_tokens"), e.get("prompt_ids")):
        if isinstance(v, int) and v >= 1:
            return v
    return None


def _cap(entries: list[dict[str, Any]]) -> int:
    """The fixture's cap: the largest limit a call asked for. A call that set none and
    stopped on its own must stay below the cap, or it would read as a runaway output."""
    cap = 1
    for e in entries:
        completion = max(1, int(e["completion_tokens"]))
        limit = e.get("max_tokens")
        if isinstance(limit, int) and limit >= 1:
            cap = max(cap, limit, completion)
        elif e.get("finish_reason") == "length":
            cap = max(cap, completion)
        else:
            cap = max(cap, completion + 1)
    return cap


def _max_tokens(e: dict[str, Any], completion: int, cap: int) -> int:
    limit = e.get("max_tokens")
    if isinstance(limit, int) and limit >= 1:
        return max(limit, completion)
    # No limit asked: the call ran under the cap; one stopped by length hit some limit
    # (the server's context), which the fixture shows as running to its max_tokens.
    return completion if e.get("finish_reason") == "length" else cap


def _messages(msgs: list[Any], notes: list[str]) -> list[dict[str, str]]:
    """Messages as format 1 holds them: string fields only. Text parts of multi-part
    content are joined; other parts (images) and non-string fields (tool calls) are left out."""
    out: list[dict[str, str]] = []
    lost = False
    for m in msgs:
        if not isinstance(m, dict):
            lost = True
            continue
        msg: dict[str, str] = {}
        for k, v in m.items():
            if k == "content" and isinstance(v, list):
                texts = [
                    p.get("text") for p in v if isinstance(p, dict) and p.get("type") == "text"
                ]
                lost = lost or len(texts) != len(v)
                msg[k] = "".join(t for t in texts if isinstance(t, str))
            elif k == "content" and v is None:
                msg[k] = ""
            elif isinstance(v, str):
                msg[k] = v
            else:
                lost = True
        msg.setdefault("content", "")
        if msg.get("role"):
            out.append(msg)
        else:
            lost = True
    note = "non-text message parts or fields left out"
    if lost and note not in notes:
        notes.append(note)
    return out


def _description(
    header: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], dropped: int, notes: list[str]
) -> str:
    units = len({c["unit"] for _, c in calls})
    what = "lengths only, " if header.get("lengths_only") else ""
    text = (
        f"Recorded by benchkit.workload record from {header.get('upstream', '?')} "
        f"({what}started {header.get('started_utc', '?')}): {len(calls)} calls in {units} units"
    )
    if dropped:
        text += f"; {dropped} failed or unfinished calls left out"
    if notes:
        text += "; " + "; ".join(notes)
    return text + "."


# --------------------------------------------------------------------------- entry point


def record(
    *,
    upstream: str,
    port: int,
    out: Path,
    lengths_only: bool = False,
    grace_s: float = 30.0,
    keep_journal: bool = False,
) -> int:
    """Run the recorder until SIGINT/SIGTERM, then write the fixture. Returns an exit code."""
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--upstream {upstream!r} is not a URL; expected http://HOST:PORT")
    _check_target(out)
    journal = journal_path(out)
    if journal.exists():
        raise UserError(
            f"{journal}: a journal of an earlier recording is there; write its fixture with "
            f"`record --convert {journal} --out DIR` (or remove it)"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "benchkit_journal": JOURNAL_VERSION,
        "upstream": upstream,
        "lengths_only": lengths_only,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
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
    _say_written(done, out)
    return 0


def _say_written(done: Converted, out: Path) -> None:
    w = done.workload
    extra = f", {done.dropped} left out" if done.dropped else ""
    notes = f" ({'; '.join(done.notes)})" if done.notes else ""
    print(
        f"wrote {out}: {w.kind} fixture, {w.n_calls} calls in {len(w.units)} units{extra}, "
        f"cap {w.cap}, fingerprint {w.fingerprint()}{notes}",
        file=sys.stderr,
    )


def convert_cli(journal: Path, out: Path) -> int:
    """``record --convert JOURNAL --out DIR``: the fixture of a recording that was killed."""
    _say_written(convert(journal, out), out)
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

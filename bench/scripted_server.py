"""A scripted OpenAI-style streaming server on loopback: known TTFT, known gap per token.

Benchmarks of benchmark clients need a server whose timing is known exactly, so that what a
client reports can be checked against what really happened. This one answers
`/v1/completions` and `/v1/chat/completions` with SSE streams shaped like llama-server's
(`usage` and `timings` in the final chunk, `data: [DONE]`), `/props`, `/health` and
`/v1/models`, on a minimal HTTP/1.1 (keep-alive, chunked transfer encoding) over plain
asyncio protocols, so that the server itself costs little CPU at 512 streams.

The script: the first token leaves `ttft_ms` after the request was read; later chunks carry
`chunk_tokens` tokens in turn (e.g. 1,3,2,4: speculative decoding that accepts several draft
tokens at once) and a chunk whose last token is the j-th after the first leaves at
`t_first + j * itl_ms`, so (t_last - t_first) / (tokens - 1) = itl_ms exactly. Sends are
scheduled on absolute deadlines (no drift); what the server actually did is recorded per
request on the shared monotonic clock (`/_bench/records`), and that is the truth a client's
numbers are compared with. `POST /_bench/script` changes the script, `POST /_bench/reset`
clears the records.

    python bench/scripted_server.py --port 8399 --alias scripted --slots 512
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import signal
import socket
import struct
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

WORDS = [f"t{i}" for i in range(64)]


@dataclass
class Script:
    ttft_ms: float = 200.0
    itl_ms: float = 10.0
    tokens: int = 64  # emitted unless the request's max_tokens is smaller
    chunk_tokens: list[int] = field(default_factory=lambda: [1, 3, 2, 4])


@dataclass
class Served:
    """One request as the server really served it (monotonic seconds, shared clock)."""

    path: str
    conn: int
    t_arrive: float  # the request's first bytes reached the machine (kernel receive time)
    t_recv: float  # the script's clock starts here (= t_arrive)
    t_read: float  # when this server's loop read those bytes (t_read - t_arrive: its lag)
    t_first: float = 0.0  # first content chunk written
    t_last: float = 0.0  # last content chunk written
    t_end: float = 0.0  # final chunk and [DONE] written
    tokens: int = 0
    chunks: int = 0
    prompt_tokens: int = 0
    max_tokens: int | None = None
    completed: bool = False


class State:
    def __init__(self, alias: str, slots: int) -> None:
        self.alias = alias
        self.slots = slots
        self.script = Script()
        self.records: list[Served] = []
        self.conns = 0
        self.open_conns = 0
        self.fingerprint = "b11434-scripted"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _response(status: int, body: bytes, ctype: bytes = b"application/json") -> bytes:
    reason = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}.get(status, b"Error")
    return (
        b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
        b"Keep-Alive: timeout=5, max=100000\r\n\r\n%s" % (status, reason, ctype, len(body), body)
    )


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\nKeep-Alive: timeout=5, max=100000\r\n\r\n"
)


# Linux SO_TIMESTAMPNS: recvmsg reports when the kernel received the bytes. The server's
# "request arrived" is that time, not when its own loop got round to reading them, so a
# server delayed by a loaded machine does not pass its delay off as the client's.
SO_TIMESTAMPNS = 35


def _kernel_time(anc: list[tuple[int, int, bytes]], fallback: float) -> float:
    for level, kind, raw in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(raw) >= 16:
            sec, nsec = struct.unpack("qq", raw[:16])
            # CLOCK_REALTIME -> the perf_counter (CLOCK_MONOTONIC) clock of the records.
            return float(min(fallback, sec + nsec * 1e-9 - (time.time() - time.perf_counter())))
    return fallback


class Conn:
    """One client connection on a raw non-blocking socket: parses requests in order and
    streams answers one at a time; writes go out at once (buffered only when the socket
    is full)."""

    def __init__(self, state: State, sock: socket.socket) -> None:
        self.state = state
        self.sock = sock
        self.fd = sock.fileno()
        self.loop = asyncio.get_running_loop()
        self.buf = bytearray()
        self.out = bytearray()
        self.busy = False
        self.t_arrive: float | None = None
        self.t_read: float | None = None
        self.closed = False
        state.conns += 1
        state.open_conns += 1
        self.id = state.conns
        self.loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            data, anc, _, _ = self.sock.recvmsg(262144, 64)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._lost()
            return
        if not data:
            self._lost()
            return
        now = time.perf_counter()
        if self.t_arrive is None:
            self.t_arrive = _kernel_time(anc, now)
            self.t_read = now
        self.buf += data
        if not self.busy:
            self._next()

    def _lost(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.state.open_conns -= 1
        self.loop.remove_reader(self.fd)
        if self.out:
            self.loop.remove_writer(self.fd)
        self.sock.close()

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self.out:
            self.out += data
            return
        try:
            n = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError:
            self._lost()
            return
        if n < len(data):
            self.out += data[n:]
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            n = self.sock.send(self.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._lost()
            return
        del self.out[:n]
        if not self.out:
            self.loop.remove_writer(self.fd)

    def _next(self) -> None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        method, path, _ = head[0].split(" ", 2)
        length = 0
        for h in head[1:]:
            k, _, v = h.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        if len(self.buf) < end + 4 + length:
            return
        body = bytes(self.buf[end + 4 : end + 4 + length])
        del self.buf[: end + 4 + length]
        t_arrive = self.t_arrive or time.perf_counter()
        t_read = self.t_read or t_arrive
        # A pipelined next request (never sent by these clients) counts from now.
        self.t_arrive = self.t_read = time.perf_counter() if self.buf else None
        self.busy = True
        self.loop.create_task(self._serve(method, path, body, t_arrive, t_read))

    def _done(self) -> None:
        self.busy = False
        if self.buf:
            self._next()

    async def _serve(
        self, method: str, path: str, body: bytes, t_arrive: float, t_read: float
    ) -> None:
        try:
            if path in ("/v1/completions", "/v1/chat/completions") and method == "POST":
                await self._stream(path, body, t_arrive, t_read)
            else:
                self.write(self._plain(method, path, body))
        finally:
            self._done()

    def _plain(self, method: str, path: str, body: bytes) -> bytes:
        st = self.state
        path = path.split("?", 1)[0]
        if path == "/health":
            return _response(200, b'{"status":"ok"}')
        if path == "/props":
            props = {
                "total_slots": st.slots,
                "model_alias": st.alias,
                "model_path": f"/scripted/{st.alias}.gguf",
                "build_info": st.fingerprint,
                "default_generation_settings": {"n_ctx": 1 << 20, "params": {}},
            }
            return _response(200, json.dumps(props).encode())
        if path == "/v1/models":
            models = {
                "object": "list",
                "data": [{"id": st.alias, "object": "model", "owned_by": "scripted"}],
            }
            return _response(200, json.dumps(models).encode())
        if path == "/_bench/script" and method == "POST":
            fields = json.loads(body or b"{}")
            st.script = Script(**{**asdict(st.script), **fields})
            return _response(200, json.dumps(asdict(st.script)).encode())
        if path == "/_bench/reset" and method == "POST":
            st.records = []
            return _response(200, b"{}")
        if path == "/_bench/records":
            usage = resource.getrusage(resource.RUSAGE_SELF)
            out = {
                "records": [asdict(r) for r in st.records],
                "server_cpu_s": usage.ru_utime + usage.ru_stime,
                "open_conns": st.open_conns,
                "now": time.perf_counter(),
            }
            return _response(200, json.dumps(out).encode())
        return _response(404, b'{"error":{"code":404,"message":"not found"}}')

    async def _stream(self, path: str, body: bytes, t_arrive: float, t_read: float) -> None:
        # The script's clock starts when the request reached the machine (kernel time).
        t_recv = t_arrive
        st = self.state
        script = st.script
        try:
            req = json.loads(body)
        except ValueError:
            self.write(_response(400, b'{"error":{"code":400,"message":"bad json"}}'))
            return
        chat = path.endswith("chat/completions")
        prompt = req.get("prompt") if not chat else req.get("messages")
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], int):
            n_prompt = len(prompt)
        elif chat:
            n_prompt = sum(len(str(m.get("content", "")).split()) for m in prompt or [])
        else:
            n_prompt = len(str(prompt or "").split())
        max_tokens = req.get("max_tokens") or req.get("max_completion_tokens")
        n = script.tokens if not max_tokens else max(1, min(int(max_tokens), script.tokens))
        rec = Served(path, self.id, t_arrive, t_recv, t_read, prompt_tokens=n_prompt)
        rec.max_tokens = max_tokens
        st.records.append(rec)
        model = st.alias
        created = int(time.time())
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{self.id}-{len(st.records)}"
        base: dict[str, Any] = {
            "created": created,
            "id": rid,
            "model": model,
            "system_fingerprint": st.fingerprint,
            "object": "chat.completion.chunk" if chat else "text_completion",
        }

        def content(text: str, first: bool) -> dict[str, Any]:
            if chat:
                delta: dict[str, Any] = {"content": text}
                if first:
                    delta["role"] = "assistant"
                choice: dict[str, Any] = {"finish_reason": None, "index": 0, "delta": delta}
            else:
                choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": None}
            return {"choices": [choice], **base}

        self.write(STREAM_HEAD)
        loop = asyncio.get_running_loop()
        # Deadlines are on the loop's clock (monotonic, as perf_counter on Linux).
        start = loop.time() + (t_recv - time.perf_counter())
        itl = script.itl_ms / 1000
        pattern = script.chunk_tokens or [1]
        sent = 0  # tokens sent
        j = 0  # chunk index after the first
        while sent < n and not self.closed:
            if sent == 0:
                take = 1
                due = start + script.ttft_ms / 1000
            else:
                take = min(pattern[j % len(pattern)], n - sent)
                j += 1
                due = start + script.ttft_ms / 1000 + (sent + take - 1) * itl
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            text = "".join(" " + WORDS[(sent + i) % len(WORDS)] for i in range(take))
            payload = _sse(content(text, sent == 0))
            sent += take
            if sent >= n:
                payload += self._final(chat, base, n_prompt, n, rec, t_recv)
            now = time.perf_counter()
            self.write(_chunked(payload) + (b"0\r\n\r\n" if sent >= n else b""))
            if rec.chunks == 0:
                rec.t_first = now
            rec.t_last = now
            rec.chunks += 1
            rec.tokens = sent
        rec.t_end = time.perf_counter()
        rec.completed = sent >= n and not self.closed

    def _final(
        self, chat: bool, base: dict[str, Any], n_prompt: int, n: int, rec: Served, t_recv: float
    ) -> bytes:
        finish = "length"
        first_ms = (rec.t_first - t_recv) * 1000 if rec.t_first else 0.0
        gen_ms = (time.perf_counter() - (rec.t_first or t_recv)) * 1000
        usage = {
            "completion_tokens": n,
            "prompt_tokens": n_prompt,
            "total_tokens": n + n_prompt,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        timings = {
            "cache_n": 0,
            "prompt_n": n_prompt,
            "prompt_ms": first_ms,
            "prompt_per_second": n_prompt / first_ms * 1000 if first_ms > 0 else 0.0,
            "predicted_n": n,
            "predicted_ms": gen_ms,
            "predicted_per_second": (n - 1) / gen_ms * 1000 if gen_ms > 0 else 0.0,
        }
        if chat:
            stop = {"choices": [{"finish_reason": finish, "index": 0, "delta": {}}], **base}
            tail: dict[str, Any] = {"choices": [], **base, "usage": usage, "timings": timings}
            return _sse(stop) + _sse(tail) + b"data: [DONE]\n\n"
        last = {
            "choices": [{"text": "", "index": 0, "logprobs": None, "finish_reason": finish}],
            **base,
            "usage": usage,
            "timings": timings,
        }
        return _sse(last) + b"data: [DONE]\n\n"


async def serve(host: str, port: int, alias: str, slots: int) -> None:
    state = State(alias, slots)
    loop = asyncio.get_running_loop()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((host, port))
    lsock.listen(4096)
    lsock.setblocking(False)

    def accept() -> None:
        while True:
            try:
                sock, _ = lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            Conn(state, sock)

    loop.add_reader(lsock.fileno(), accept)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"scripted server on http://{host}:{port} alias={alias}", file=sys.stderr, flush=True)
    await stop.wait()
    loop.remove_reader(lsock.fileno())
    lsock.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8399)
    ap.add_argument("--alias", default="scripted")
    ap.add_argument("--slots", type=int, default=512)
    args = ap.parse_args(argv)
    asyncio.run(serve(args.host, args.port, args.alias, args.slots))
    return 0


if __name__ == "__main__":
    sys.exit(main())

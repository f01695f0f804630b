"""HTTP/1.1 response framing for the raw transport (benchkit/client/transport.py).

An incremental parser of one response at a time, fed whatever the socket gave, and the other
half of reading with kernel receive times: `want` says how many of the bytes waiting in the
socket to read next so that a read ends where a piece of body (a chunk) ends, and each
piece gets the receive time of its own last byte. Its errors are worded as httpx (h11)
words them, so a call's record reads the same on either path. Why not h11 itself: it cost
more CPU and, under load, timing (benchkit/client/transport.py; docs/perf/README.md, section 6).
"""

from __future__ import annotations

import collections
import re
from typing import Final, NamedTuple


class ResponseHead(NamedTuple):
    status: int
    headers: list[tuple[bytes, bytes]]  # names lower-cased, in order
    keep_alive: bool


class FramingError(Exception):
    """The response breaks HTTP/1.1 framing (raised as httpx.RemoteProtocolError)."""


_IDLE, _HEAD, _SIZE, _DATA, _DATA_END, _TRAILER, _SIZED, _TO_CLOSE = range(8)
_STATUS_LINE: Final = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?:[ \t][^\r\n]*)?")
_HEX: Final = re.compile(rb"[0-9A-Fa-f]{1,16}")
_MAX_HEAD: Final = 65536
_MAX_LINE: Final = 8192

# What the parser hands the reader of a connection: the head, body pieces with the receive
# time (perf_counter seconds) of their last byte, and None at the end of the message.
Event = ResponseHead | tuple[bytes, float] | None


class ResponseParser:
    """An incremental HTTP/1.1 response parser (chunked, sized and close-delimited bodies,
    interim 1xx heads, trailers), fed whatever the socket gave, in order.

    `want` is the other half: how many of the bytes waiting in the socket to read next so
    that the read ends where a piece of body ends. The parser is right for any split of the
    bytes; `want` only decides which receive time each piece carries."""

    __slots__ = (
        "buf",
        "expected",
        "head_bytes",
        "keep_alive",
        "left",
        "lines",
        "received",
        "state",
    )

    def __init__(self) -> None:
        self.state = _IDLE
        self.buf = bytearray()  # a line not yet complete
        self.lines: list[bytes] = []  # the head so far
        self.head_bytes = 0
        self.left = 0  # bytes left of the current chunk, CRLF or sized body
        self.received = 0  # bytes of a sized body so far
        self.expected = 0  # its Content-Length
        self.keep_alive = True

    def begin(self) -> None:
        """A request was sent: a response head comes next."""
        self.state = _HEAD
        self.buf.clear()
        self.lines = []
        self.head_bytes = 0

    def reset(self) -> None:
        """The connection failed: no response is outstanding any more."""
        self.state = _IDLE

    @property
    def idle(self) -> bool:
        return self.state == _IDLE

    def want(self, b: bytearray, off: int, end: int) -> int:
        """How many bytes of b[off:end] (what the socket holds, peeked) to read next."""
        st = self.state
        avail = end - off
        if st == _DATA:
            return min(self.left + 2, avail)  # the rest of the chunk and its CRLF
        if st == _DATA_END:
            return min(self.left, avail)
        if st == _SIZE:
            j = b.find(b"\n", off, end)
            if j < 0:
                return avail
            m = None if self.buf else _HEX.match(b, off, j)
            if m is None or not int(m.group(), 16):
                return j + 1 - off  # the line alone (a split line, the last chunk, or junk)
            return min(j + 1 + int(m.group(), 16) + 2 - off, avail)
        if st == _HEAD and not self.buf and not self.lines:
            j = b.find(b"\r\n\r\n", off, end)
            return j + 4 - off if j >= 0 else avail
        if st in (_SIZED, _TO_CLOSE):
            # No chunks to go by: end a read at the end of an SSE event instead.
            lim = min(off + self.left, end) if st == _SIZED else end
            ends = [j for j in (b.find(b"\n\n", off, lim), b.find(b"\n\r\n", off, lim)) if j >= 0]
            if ends:
                j = min(ends)
                return j + (2 if b[j + 1] == 0x0A else 3) - off
            return lim - off
        return avail

    def feed(self, data: bytes, t: float, out: collections.deque[Event]) -> None:
        """Parse `data`, received at `t`, appending what it completes to `out`."""
        pos, n = 0, len(data)
        while pos < n:
            st = self.state
            if st in (_DATA, _SIZED):
                take = min(self.left, n - pos)
                out.append((data if take == n else data[pos : pos + take], t))
                self.left -= take
                pos += take
                if st == _SIZED:
                    self.received += take
                    if not self.left:
                        self._end(out)
                elif not self.left:
                    self.state, self.left = _DATA_END, 2
            elif st == _DATA_END:
                if self.left == 2 and data.startswith(b"\r\n", pos):
                    pos += 2
                elif data[pos] == b"\r\n"[2 - self.left]:
                    pos += 1
                    self.left -= 1
                    if self.left:
                        continue
                else:
                    raise FramingError("chunk data not followed by CRLF")
                self.state = _SIZE
            elif st == _TO_CLOSE:
                out.append((data[pos:] if pos else data, t))
                pos = n
            elif st == _IDLE:
                raise FramingError("bytes from the server while no request was outstanding")
            else:  # _HEAD, _SIZE, _TRAILER: line by line
                j = data.find(b"\n", pos)
                if j < 0:
                    self.buf += data[pos:]
                    if len(self.buf) > _MAX_LINE:
                        raise FramingError("a line of the response head or chunking is too long")
                    return
                line = data[pos:j]
                if self.buf:
                    line = bytes(self.buf) + line
                    self.buf.clear()
                pos = j + 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if st == _SIZE:
                    self._size(line)
                elif st == _TRAILER:
                    if not line:
                        self._end(out)
                else:
                    self._head_line(line, out)

    def _size(self, line: bytes) -> None:
        size = line.split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size):
            raise FramingError(f"illegal chunk header: {line[:80]!r}")
        self.left = int(size, 16)
        self.state = _DATA if self.left else _TRAILER

    def _head_line(self, line: bytes, out: collections.deque[Event]) -> None:
        self.head_bytes += len(line) + 2
        if self.head_bytes > _MAX_HEAD:
            raise FramingError("response head over 64 KiB")
        if line:
            self.lines.append(line)
        elif self.lines:  # the blank line that ends a head (blank lines before it are skipped)
            lines, self.lines, self.head_bytes = self.lines, [], 0
            self._head(lines, out)

    def _head(self, lines: list[bytes], out: collections.deque[Event]) -> None:
        m = _STATUS_LINE.fullmatch(lines[0])
        if m is None:
            raise FramingError(f"illegal status line: {lines[0][:80]!r}")
        http10, status = m.group(1) == b"0", int(m.group(2))
        headers: list[tuple[bytes, bytes]] = []
        for raw in lines[1:]:
            name, sep, value = raw.partition(b":")
            if not sep or not name or name != name.strip() or raw[:1] in (b" ", b"\t"):
                raise FramingError(f"illegal header line: {raw[:80]!r}")
            headers.append((name.lower(), value.strip()))
        if 100 <= status < 200:
            if status == 101:
                raise FramingError("unexpected 101 Switching Protocols")
            return  # an interim response: the real head follows
        tokens = {
            tok.strip().lower() for k, v in headers if k == b"connection" for tok in v.split(b",")
        }
        keep = b"keep-alive" in tokens if http10 else b"close" not in tokens
        te = [v.lower() for k, v in headers if k == b"transfer-encoding"]
        cl = {x.strip() for k, v in headers if k == b"content-length" for x in v.split(b",")}
        coding = [v.lower() for k, v in headers if k == b"content-encoding"]
        if any(c not in (b"", b"identity") for c in coding):
            named = coding[0].decode(errors="replace")
            raise FramingError(f"Content-Encoding {named} although identity was asked for")
        if status in (204, 304):  # never a body (RFC 9112 6.3)
            self.keep_alive = keep
            out.append(ResponseHead(status, headers, keep))
            self._end(out)
            return
        if te:
            # RFC 9112 6.3: chunked must be the last coding; anything else runs to the close.
            chunked = b",".join(te).split(b",")[-1].strip() == b"chunked"
            self.state = _SIZE if chunked else _TO_CLOSE
            keep = keep and chunked
        elif cl:
            value = next(iter(cl))
            if len(cl) > 1 or not value.isdigit():
                raise FramingError(f"bad Content-Length {b', '.join(sorted(cl))[:80]!r}")
            self.state, self.left = _SIZED, int(value)
            self.expected, self.received = self.left, 0
        else:
            self.state, keep = _TO_CLOSE, False
        self.keep_alive = keep
        out.append(ResponseHead(status, headers, keep))
        if self.state == _SIZED and not self.left:
            self._end(out)

    def _end(self, out: collections.deque[Event]) -> None:
        out.append(None)
        self.state = _IDLE

    def eof(self, out: collections.deque[Event]) -> None:
        """The server closed its side: the end of a close-delimited body, or an error."""
        st = self.state
        if st == _IDLE:
            return
        if st == _TO_CLOSE:
            self._end(out)
            return
        self.state = _IDLE
        if st == _HEAD:
            raise FramingError("Server disconnected without sending a response.")
        if st == _SIZED:
            raise FramingError(
                "peer closed connection without sending complete message body "
                f"(received {self.received} bytes, expected {self.expected})"
            )
        raise FramingError(
            "peer closed connection without sending complete message body (incomplete chunked read)"
        )

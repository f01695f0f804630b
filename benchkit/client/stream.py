"""One reader of OpenAI-compatible response streams, for the replay and the recorder alike.

llama-server, vLLM and SGLang stream a completion as server-sent events: one ``data: {json}``
line per event, blank lines between them, ``: comment`` keep-alives, and ``data: [DONE]`` at
the end; the last event carries ``usage`` (and llama-server's ``timings``). This module cuts
the bytes into lines (`EventStream`, for any split of the bytes), reads each line
(`parse_sse_line`) and folds each event into the facts of one call (`apply_event` into
`StreamFacts`): when the first and last output arrived, how many events carried output, the
finish reason, the token counts, the server's timings and an error the stream reported.

The replay's raw HTTP/1.1 path, its httpx fallback and the recording proxy
(benchkit.workload.record) all read streams through it, so a stream means the same to each.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

DONE: Final = "DONE"


@dataclass(kw_only=True)
class StreamFacts:
    """What one response said, folded from its events. Times are the caller's clock: when
    the bytes that carried the event were received."""

    t_first: float | None = None  # the first event that carried output
    t_last: float | None = None  # the last one
    chunks: int = 0  # events that carried output (text, reasoning or tool calls)
    model: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    # The server's own timings (llama-server), numbers only: the metrics do arithmetic on them.
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None


# --------------------------------------------------------------------------- one line


def parse_sse_line(line: str) -> Mapping[str, object] | Literal["DONE"] | None:
    """One SSE line: a JSON event (dict), "DONE", or None for comments and blank lines.
    ValueError for a data line that is not a JSON object."""
    if not line.startswith("data:"):
        return None
    payload = line[5:].strip()
    if payload == "[DONE]":
        return DONE
    if not payload:
        return None
    obj = json.loads(payload)
    if not isinstance(obj, dict):
        raise ValueError("SSE data is not a JSON object")
    return obj


# --------------------------------------------------------------------------- one event


def apply_event(facts: StreamFacts, event: Mapping[str, object], now: float) -> None:
    """Fold one event, received at `now`, into `facts`.

    An event of an unexpected shape raises ValueError (the replay ends such a call as a
    malformed stream; the recorder skips the event)."""
    try:
        _apply_event(facts, event, now)
    except (TypeError, AttributeError, KeyError) as exc:
        raise ValueError(f"unexpected event shape ({type(exc).__name__}: {exc})") from exc


def _apply_event(facts: StreamFacts, event: Mapping[str, object], now: float) -> None:
    # The event is the server's JSON: each part is narrowed where it is read, and a part of
    # the wrong kind raises TypeError (apply_event's "unexpected event shape").
    if "error" in event:
        err = event["error"]
        msg = err.get("message") if isinstance(err, Mapping) else str(err)
        facts.error = f"server error in stream: {msg}"
        return
    model = event.get("model")
    if model:
        facts.model = str(model)
    for item in _list(event.get("choices") or [], "choices"):
        choice = _object(item, "a choice")
        if _carries_output(choice):
            if facts.t_first is None:
                facts.t_first = now
            facts.t_last = now
            facts.chunks += 1
        reason = choice.get("finish_reason")
        if reason:
            facts.finish_reason = str(reason)
    usage = event.get("usage")
    if isinstance(usage, Mapping):
        facts.prompt_tokens = _count(usage.get("prompt_tokens"))
        facts.completion_tokens = _count(usage.get("completion_tokens"))
        details = _object(usage.get("prompt_tokens_details") or {}, "prompt_tokens_details")
        facts.cached_tokens = _count(details.get("cached_tokens"))
    timings = event.get("timings")
    if isinstance(timings, Mapping):
        facts.timings = {
            str(k): v
            for k, v in timings.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }


def _carries_output(choice: Mapping[str, object]) -> bool:
    """Whether a choice carries generated output: completion text, or a chat delta's content,
    reasoning or tool calls (a whole, non-streamed answer has a `message` instead)."""
    if "text" in choice:
        return bool(choice["text"])
    part = choice.get("delta")
    if part is None:
        part = choice.get("message")
    part = _object(part or {}, "a delta")
    return bool(part.get("content") or part.get("reasoning_content") or part.get("tool_calls"))


def _object(v: object, what: str) -> Mapping[str, object]:
    if not isinstance(v, Mapping):
        raise TypeError(f"{what} is {type(v).__name__}, not an object")
    return v


def _list(v: object, what: str) -> list[object]:
    if not isinstance(v, list):
        raise TypeError(f"{what} is {type(v).__name__}, not a list")
    return v


def _count(v: object) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"token count {v!r} is not a non-negative integer")
    return v


# --------------------------------------------------------------------------- a stream


class EventStream:
    """The body of an SSE response, fed as it arrives, folded into `facts`.

    Lines are cut as httpx's line decoder cuts them (at LF, CR LF and a lone CR; invalid
    UTF-8 replaced), whatever the split of the bytes. Each event is timed by the piece of
    bytes that completed it. With `stall_s`, a stream that goes on sending bytes (keep-alive
    comments) but no token for that long ends with ``stalled: no token for N s``. Strict (the
    replay): a line or event that cannot be read raises ValueError; not strict (the
    recorder): it is skipped."""

    __slots__ = ("_last_progress", "_pending", "done", "facts", "stall_s", "stalled", "strict")

    def __init__(
        self, facts: StreamFacts, *, stall_s: float | None = None, strict: bool = True
    ) -> None:
        self.facts = facts
        self.stall_s = stall_s
        self.strict = strict
        self.done = False  # data: [DONE] came
        self.stalled = False  # no token for stall_s (facts.error says so)
        self._pending = b""
        self._last_progress = time.monotonic()

    def feed(self, data: bytes, now: float) -> bool:
        """Fold what `data` completes, received at `now`. True when the reader should stop:
        [DONE] came, or the stream stalled."""
        lines = (self._pending + data if self._pending else data).split(b"\n")
        self._pending = lines.pop()
        return self._lines(lines, now)

    def end(self, now: float) -> bool:
        """The body ended: its last line counts even without a newline (as httpx yields it)."""
        lines, self._pending = ([self._pending] if self._pending else []), b""
        return self._lines(lines, now)

    def _lines(self, lines: list[bytes], now: float) -> bool:
        facts, stall = self.facts, self.stall_s
        for raw in lines:
            for line in _text_lines(raw):
                try:
                    event = parse_sse_line(line)
                    if event == DONE:
                        self.done = True
                        return True
                    if event is not None:
                        before = facts.chunks
                        apply_event(facts, event, now)
                        if facts.chunks != before or facts.finish_reason:
                            self._last_progress = time.monotonic()
                except ValueError:
                    if self.strict:
                        raise
                # Keep-alive comments are bytes but not progress.
                if stall is not None and time.monotonic() - self._last_progress > stall:
                    facts.error = f"stalled: no token for {stall:.0f} s"
                    self.stalled = True
                    return True
        return False


def _text_lines(raw: bytes) -> list[str]:
    """A line cut at LF, as text, the way httpx's line decoder cuts lines (at LF, CR LF and
    a lone CR); invalid UTF-8 is replaced as httpx replaces it."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    text = raw.decode(errors="replace")
    return text.split("\r") if "\r" in text else [text]


# --------------------------------------------------------------------------- error bodies


def error_message(text: str) -> str:
    """The message of an error response's body: OpenAI's ``{"error": {"type", "message"}}``
    as ``type: message``, else the text itself (cut to 300 characters)."""
    try:
        obj = json.loads(text)
        err = obj.get("error", obj)
        if isinstance(err, dict):
            kind = err.get("type")
            msg = err.get("message", "")
            return f"{kind}: {msg}" if kind else str(msg)
        return str(err)[:300]
    except (ValueError, AttributeError):
        return text.strip()[:300]

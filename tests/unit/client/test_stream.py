"""The one reader of OpenAI-compatible streams (benchkit/client/stream.py): framing for any
split of the bytes, what each kind of line and event does to the call's facts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchkit.client import stream as stream_mod
from benchkit.client.stream import (
    EventStream,
    StreamFacts,
    apply_event,
    error_message,
    parse_sse_line,
)


def data(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"


def tok(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


FINAL = {
    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    "model": "m",
    "usage": {
        "prompt_tokens": 7,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 2},
    },
    "timings": {"prompt_n": 5, "predicted_n": 3, "predicted_ms": 1.5, "flag": True, "s": "x"},
}

# llama-server's shape: a role-only delta, tokens (one split mid-character), a keep-alive
# comment, the final event with usage and timings, then [DONE].
WIRE = (
    data({"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]})
    + data(tok("h\u00e9"))
    + b": keep-alive\n\n"
    + data(tok("llo"))
    + data(tok(" there"))
    + data(FINAL)
    + b"data: [DONE]\n\n"
)


def fold(pieces: list[bytes], **kw: Any) -> tuple[StreamFacts, EventStream, list[bool]]:
    facts = StreamFacts()
    events = EventStream(facts, **kw)
    over = [events.feed(p, float(i)) for i, p in enumerate(pieces)]
    return facts, events, over


def summary(f: StreamFacts) -> tuple[Any, ...]:
    return (
        f.chunks,
        f.finish_reason,
        f.model,
        f.prompt_tokens,
        f.cached_tokens,
        f.completion_tokens,
        f.timings,
        f.error,
    )


def test_a_llama_server_stream_is_folded_into_the_facts() -> None:
    f, events, over = fold([WIRE])
    assert over == [True] and events.done and not events.stalled
    timings = {"prompt_n": 5, "predicted_n": 3, "predicted_ms": 1.5}  # numbers only
    assert summary(f) == (3, "stop", "m", 7, 2, 3, timings, None)
    assert (f.t_first, f.t_last) == (0.0, 0.0)


def test_framing_gives_the_same_facts_for_any_split() -> None:
    whole, _, _ = fold([WIRE])
    for i in range(1, len(WIRE)):
        f, events, over = fold([WIRE[:i], WIRE[i:]])
        assert summary(f) == summary(whole), i
        assert events.done and True in over
    f, events, _ = fold([WIRE[i : i + 1] for i in range(len(WIRE))])
    assert summary(f) == summary(whole) and events.done


def test_each_event_is_timed_by_the_piece_that_completed_it() -> None:
    first, second = data(tok("a")), data(tok("b"))
    # The first event's line ends in the second piece, the second event in the third.
    f, _, over = fold([first[:5], first[5:] + second[:3], second[3:]])
    assert (f.t_first, f.t_last, f.chunks) == (1.0, 2.0, 2)
    assert over == [False, False, False]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings_as_httpx_cuts_them(eol: bytes) -> None:
    wire = (data(tok("a")) + data(tok("b")) + b"data: [DONE]\n\n").replace(b"\n", eol)
    f, events, _ = fold([wire])
    if eol == b"\r":
        # Lines are cut at LF; a lone CR inside one still separates lines (as in httpx),
        # but a stream of CR only is one line until the body ends.
        assert not events.done
        events.end(9.0)
    assert f.chunks == 2 and events.done


def test_comments_blank_lines_and_other_fields_are_not_events() -> None:
    f, events, over = fold([b": ping\n\n\nevent: message\nid: 3\nretry: 10\n: keep-alive\n"])
    assert summary(f) == summary(StreamFacts()) and over == [False] and not events.done


def test_done_ends_the_stream_and_nothing_after_it_is_folded() -> None:
    f, events, over = fold([data(tok("a")) + b"data: [DONE]\n\n" + data(tok("b"))])
    assert over == [True] and events.done and f.chunks == 1


def test_last_line_without_newline_counts_at_the_end() -> None:
    f, events, over = fold([data(tok("a")) + b"data: " + json.dumps(FINAL).encode()])
    assert over == [False] and f.finish_reason is None
    assert events.end(5.0) is False and f.finish_reason == "stop" and f.completion_tokens == 3


@pytest.mark.parametrize(
    ("error", "expect"),
    [
        ({"code": 500, "message": "out of memory", "type": "server_error"}, "out of memory"),
        ("boom", "boom"),
    ],
)
def test_error_events(error: Any, expect: str) -> None:
    f, _, _ = fold([data(tok("a")) + data({"error": error})])
    assert f.error == f"server error in stream: {expect}" and f.chunks == 1


def test_output_of_every_kind_counts_and_empty_deltas_do_not() -> None:
    events = [
        {"choices": [{"text": "completion text"}]},
        {"choices": [{"delta": {"reasoning_content": "thinking"}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "f"}}]}}]},
        {"choices": [{"delta": {"content": ""}}, {"text": ""}]},
        {"choices": []},
    ]
    f = StreamFacts()
    for i, ev in enumerate(events):
        apply_event(f, ev, float(i))
    assert (f.chunks, f.t_first, f.t_last) == (3, 0.0, 2.0)


def test_a_whole_answer_counts_by_its_message() -> None:
    f = StreamFacts()
    body = {**FINAL, "choices": [{"message": {"content": "hi"}, "finish_reason": "length"}]}
    apply_event(f, body, 4.0)
    assert (f.chunks, f.t_first, f.finish_reason, f.completion_tokens) == (1, 4.0, "length", 3)


def test_usage_and_timings_of_a_later_event_replace_earlier_ones() -> None:
    f = StreamFacts()
    apply_event(f, {"usage": {"prompt_tokens": 1, "completion_tokens": 1}}, 0.0)
    apply_event(f, {"usage": {"completion_tokens": 4}, "timings": {"predicted_n": 4}}, 1.0)
    assert (f.prompt_tokens, f.completion_tokens, f.cached_tokens) == (None, 4, None)
    assert f.timings == {"predicted_n": 4}


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ({"usage": {"completion_tokens": -1}}, "is not a non-negative integer"),
        ({"usage": {"prompt_tokens": "7"}}, "is not a non-negative integer"),
        ({"choices": {"text": "a"}}, "unexpected event shape"),
        ({"choices": ["a"]}, "unexpected event shape"),
        ({"choices": [{"delta": ["a"]}]}, "unexpected event shape"),
    ],
)
def test_odd_events_raise_value_error(event: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        apply_event(StreamFacts(), event, 0.0)


def test_strict_raises_on_a_bad_line_and_lenient_skips_it() -> None:
    wire = data(tok("a")) + b"data: {not json\n\n" + b"data: [1, 2]\n\n" + data(FINAL)
    with pytest.raises(ValueError):
        fold([wire])
    f, events, _ = fold([wire + b"data: [DONE]\n\n"], strict=False)
    assert f.chunks == 1 and f.finish_reason == "stop" and events.done


def test_keep_alives_without_tokens_stall_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(stream_mod.time, "monotonic", lambda: clock[0])
    facts = StreamFacts()
    events = EventStream(facts, stall_s=10.0)
    assert not events.feed(data(tok("a")), 0.0)
    clock[0] += 8
    assert not events.feed(b": keep-alive\n\n", 1.0)  # 8 s without a token: not yet
    clock[0] += 3
    assert events.feed(b": keep-alive\n\n", 2.0)  # 11 s
    assert events.stalled and not events.done
    assert facts.error == "stalled: no token for 10 s"
    # A token (or the finish reason) is progress: the clock starts again.
    facts2 = StreamFacts()
    events2 = EventStream(facts2, stall_s=10.0)
    clock[0] += 9
    assert not events2.feed(data(tok("b")), 3.0)
    clock[0] += 9
    assert not events2.feed(b": keep-alive\n\n", 4.0)


def test_parse_sse_line() -> None:
    assert parse_sse_line('data: {"a":1}') == {"a": 1}
    assert parse_sse_line('data:{"a":1}') == {"a": 1}
    assert parse_sse_line("data: [DONE]") == "DONE"
    assert parse_sse_line("data:") is None
    assert parse_sse_line(": comment") is None
    assert parse_sse_line("") is None
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_sse_line("data: [1]")


def test_error_message_of_an_error_body() -> None:
    body = {"error": {"code": 400, "message": "too long", "type": "exceed_context_size_error"}}
    assert error_message(json.dumps(body)) == "exceed_context_size_error: too long"
    assert error_message('{"error": {"message": "no type"}}') == "no type"
    assert error_message('{"error": "plain"}') == "plain"
    assert error_message(" not here\n") == "not here"
    assert error_message("x" * 400) == "x" * 300

"""The recording proxy: journal -> fixture, pass-through byte for byte, and (slow) a real
client -> recorder -> llama-server recording that replays through benchkit."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchkit.errors import UserError
from benchkit.workload import load_workload
from benchkit.workload.journal import (
    JOURNAL_VERSION,
    Journal,
    convert,
    journal_path,
    read_journal,
)
from benchkit.workload.record import Recorder, parse_request

HEADER = {
    "benchkit_journal": JOURNAL_VERSION,
    "upstream": "http://127.0.0.1:1",
    "lengths_only": False,
    "started_utc": "2026-01-01T00:00:00Z",
}


def entry(n: int, unit: str, **kw: Any) -> dict[str, Any]:
    e: dict[str, Any] = {
        "n": n,
        "unit": unit,
        "seq": kw.pop("seq", 0),
        "role": kw.pop("role", "chat"),
        "endpoint": "chat",
        "stream": False,
        "prompt": {"messages": [{"role": "user", "content": f"hello {n}"}]},
        "prompt_ids": None,
        "sampling": {"temperature": 0},
        "max_tokens": 16,
        "status": 200,
        "error": None,
        "finish_reason": "stop",
        "completion_tokens": 5,
        "prompt_tokens": 12,
    }
    e.update(kw)
    return e


def write_journal(path: Path, entries: list[dict[str, Any]], **header: Any) -> Path:
    lines = [json.dumps({**HEADER, **header})] + [json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + "\n")
    return path


def calls_of(d: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (d / "calls.jsonl").read_text().splitlines() if x.strip()]


# --------------------------------------------------------------------------- journal -> fixture


def test_chat_journal_becomes_a_natural_chat_fixture(tmp_path: Path) -> None:
    # Arrival order (n) decides, not journal order (calls finish out of order); failed
    # calls are left out and the unit's seq closes up.
    j = write_journal(
        tmp_path / "j.jsonl",
        [
            entry(2, "b"),
            entry(0, "a", role="planner"),
            entry(1, "a", seq=1, status=500, error=None),
            entry(3, "a", seq=2, completion_tokens=16, finish_reason="length"),
        ],
    )
    done = convert(j, tmp_path / "fx")
    w = done.workload
    assert (w.kind, w.output_policy, w.cap, w.name) == ("chat", "natural", 16, "fx")
    assert done.dropped == 1
    assert [(u.id, [c.seq for c in u.calls]) for u in w.units] == [("a", [0, 1]), ("b", [0])]
    a0, a1 = w.units[0].calls
    assert a0.role == "planner" and a0.messages == ({"role": "user", "content": "hello 0"},)
    assert a0.recorded_prompt_tokens == 12 and a0.sampling == {"temperature": 0}
    assert a1.hit_cap and w.capped_calls == 1
    assert "1 failed or unfinished" in w.description
    assert [c["unit"] for c in calls_of(tmp_path / "fx")] == ["a", "b", "a"]


def test_text_and_lengths_only_and_mixed_kinds(tmp_path: Path) -> None:
    text = [entry(i, "u", seq=i, prompt={"text": f"t{i}"}) for i in range(2)]
    w = convert(write_journal(tmp_path / "t.jsonl", text), tmp_path / "t").workload
    assert w.kind == "text" and w.calls[1].text == "t1"

    private = [entry(i, "u", seq=i, prompt=None, prompt_tokens=100 + i) for i in range(2)]
    j = write_journal(tmp_path / "p.jsonl", private, lengths_only=True)
    w = convert(j, tmp_path / "p").workload
    assert (w.kind, w.output_policy) == ("tokens", "replay")
    assert [c.prompt_tokens for c in w.calls] == [100, 101]
    assert all(c.segments is not None and c.segments[0].key is None for c in w.calls)

    mixed = [entry(0, "u"), entry(1, "u", seq=1, prompt={"ids": [5, 6, 7]}, prompt_ids=3)]
    done = convert(write_journal(tmp_path / "m.jsonl", mixed), tmp_path / "m")
    assert done.workload.kind == "tokens" and done.workload.prompt_tokens == 24
    assert any("mixed prompt kinds" in n for n in done.notes)


def test_cap_keeps_calls_without_a_limit_below_it(tmp_path: Path) -> None:
    # No max_tokens asked: a call that stopped on its own must not read as a runaway.
    es = [
        entry(0, "u", max_tokens=None, completion_tokens=40),
        entry(1, "u", seq=1, max_tokens=None, completion_tokens=10),
        entry(2, "u", seq=2, max_tokens=8, completion_tokens=8, finish_reason="length"),
    ]
    w = convert(write_journal(tmp_path / "j.jsonl", es), tmp_path / "fx").workload
    assert w.cap == 41
    assert [c.max_tokens for c in w.calls] == [41, 41, 8]
    assert [c.hit_cap for c in w.calls] == [False, False, True]


def test_messages_keep_text_parts_and_drop_non_strings(tmp_path: Path) -> None:
    msgs = [
        {
            "role": "system",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]},
        {"role": "user", "content": "q", "name": "me"},
    ]
    done = convert(
        write_journal(tmp_path / "j.jsonl", [entry(0, "u", prompt={"messages": msgs})]),
        tmp_path / "fx",
    )
    assert done.workload.calls[0].messages == (
        {"role": "system", "content": "ab"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "q", "name": "me"},
    )
    assert any("left out" in n for n in done.notes)


def test_prompts_format_1_cannot_hold_are_left_out_not_fatal(tmp_path: Path) -> None:
    es = [
        entry(0, "u", prompt={"text": "fine"}),
        entry(1, "u", seq=1, prompt={"text": "lone \ud800 surrogate"}),
    ]
    done = convert(write_journal(tmp_path / "t.jsonl", es), tmp_path / "t")
    assert done.workload.n_calls == 1 and done.dropped == 1
    es = [entry(0, "u"), entry(1, "u", seq=1, prompt={"messages": [{"role": "", "content": "x"}]})]
    done = convert(write_journal(tmp_path / "c.jsonl", es), tmp_path / "c")
    assert done.workload.n_calls == 1 and done.dropped == 1


def test_torn_last_line_is_skipped_but_a_bad_middle_line_is_not(tmp_path: Path) -> None:
    j = write_journal(tmp_path / "j.jsonl", [entry(0, "u")])
    with j.open("a") as f:
        f.write('{"n": 1, "unit": "u", "se')  # the recorder was killed mid-write
    assert len(read_journal(j)[1]) == 1
    assert convert(j, tmp_path / "fx").workload.n_calls == 1

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(HEADER) + "\nnot json\n" + json.dumps(entry(0, "u")) + "\n")
    with pytest.raises(UserError, match=r"bad\.jsonl:2: not a JSON line"):
        read_journal(bad)


def test_nothing_to_write_and_existing_target_are_refused_whole(tmp_path: Path) -> None:
    j = write_journal(tmp_path / "j.jsonl", [entry(0, "u", status=400)])
    with pytest.raises(UserError, match="no finished call"):
        convert(j, tmp_path / "fx")
    assert not (tmp_path / "fx").exists()

    ok = write_journal(tmp_path / "ok.jsonl", [entry(0, "u")])
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("mine")
    with pytest.raises(UserError, match="already exists"):
        convert(ok, tmp_path / "taken")
    assert (tmp_path / "taken" / "x").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_parse_request_units_roles_and_private_mode() -> None:
    body = json.dumps(
        {
            "messages": [{"role": "user", "content": "secret"}],
            "max_tokens": 9,
            "temperature": 0.5,
            "stop": ["secret stop"],
            "benchkit_unit": "u7",
            "benchkit_role": "critic",
            "stream": True,
        }
    ).encode()
    p = parse_request(body, "chat", lengths_only=False)
    assert (p.unit, p.role, p.max_tokens, p.stream) == ("u7", "critic", 9, True)
    assert b"benchkit_" not in p.body and json.loads(p.body)["max_tokens"] == 9
    assert p.sampling == {"temperature": 0.5, "stop": ["secret stop"]}

    q = parse_request(body, "chat", lengths_only=True)
    assert q.prompt is None and q.sampling == {"temperature": 0.5}

    plain = json.dumps({"prompt": [[1, 2, 3]], "n_predict": 4}).encode()
    r = parse_request(plain, "completion", lengths_only=False)
    assert r.body == plain  # untouched when no benchkit field was there
    assert (r.prompt, r.prompt_ids, r.max_tokens) == ({"ids": [1, 2, 3]}, 3, 4)
    assert parse_request(b"[1]", "chat", lengths_only=False).problem is not None


def test_cli_refuses_a_leftover_journal_and_converts_it(tmp_path: Path) -> None:
    out = tmp_path / "fx"
    write_journal(journal_path(out), [entry(0, "u")])
    cmd = [sys.executable, "-m", "benchkit.workload", "record"]
    p = subprocess.run(
        [*cmd, "--upstream", "http://127.0.0.1:9", "--listen", "0", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "--convert" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(
        [*cmd, "--convert", str(journal_path(out)), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert load_workload(out).n_calls == 1


# --------------------------------------------------------------------------- the proxy itself

SSE_PIECES = [
    b'data: {"choices":[{"delta":{"role":"assistant","content":null}}]}\n\n',
    b'data: {"choices":[{"delta":{"content":"h\xc3',  # a token split mid-character
    b'\xa9"}}]}\n\n: keep-alive\n\ndata: {"choices":[{"delta":{"content":"i"}}]}\n\n',
    b'data: {"choices":[{"delta":{},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":7,"completion_tokens":2}}\n\ndata: [DONE]\n\n',
]


class FakeUpstream:
    """An SSE server that sends fixed bytes in fixed pieces and waits, after the first,
    until the client has seen it: a proxy that buffered would hang."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, bytes]] = []  # (head, body) of each request
        self.first_seen = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        body = await reader.readexactly(length)
        self.seen.append((head, body))
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        for i, piece in enumerate(SSE_PIECES):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            if i == 0:
                await asyncio.wait_for(self.first_seen.wait(), timeout=10)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()


@asynccontextmanager
async def proxy(
    upstream: FakeUpstream, journal: Path, *, lengths_only: bool = False
) -> AsyncIterator[tuple[str, Recorder]]:
    up = await asyncio.start_server(upstream.handle, "127.0.0.1", 0)
    up_url = f"http://127.0.0.1:{up.sockets[0].getsockname()[1]}"
    jr = Journal(journal, {**HEADER, "upstream": up_url, "lengths_only": lengths_only})
    rec = Recorder(up_url, jr, lengths_only=lengths_only)
    srv = await asyncio.start_server(rec.handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}", rec
    finally:
        await rec.shutdown()
        srv.close()
        up.close()
        jr.close()


def test_stream_passes_through_byte_for_byte_as_it_arrives(tmp_path: Path) -> None:
    fake = FakeUpstream()
    journal = tmp_path / "j.jsonl"

    async def main() -> bytes:
        async with proxy(fake, journal) as (url, _), httpx.AsyncClient(timeout=20) as client:
            got = b""
            body = {"messages": [{"role": "user", "content": "x"}], "stream": True}
            headers = {"X-Benchkit-Unit": "u1", "X-Benchkit-Role": "writer"}
            async with client.stream(
                "POST", url + "/v1/chat/completions", json=body, headers=headers
            ) as r:
                assert r.status_code == 200
                assert r.headers["content-type"] == "text/event-stream"
                async for chunk in r.aiter_raw():
                    got += chunk
                    fake.first_seen.set()
            return got

    assert asyncio.run(main()) == b"".join(SSE_PIECES)
    head, _ = fake.seen[0]
    assert b"x-benchkit" not in head.lower() and b"accept-encoding: identity" in head.lower()
    _, entries = read_journal(journal)
    assert len(entries) == 1
    e = entries[0]
    assert (e["unit"], e["role"], e["seq"], e["status"], e["error"]) == (
        "u1",
        "writer",
        0,
        200,
        None,
    )
    assert (e["completion_tokens"], e["completion_source"], e["prompt_tokens"]) == (2, "usage", 7)
    assert e["finish_reason"] == "stop" and e["ttft_ms"] is not None
    # When it arrived, from the proxy's start: what load=trace replays.
    assert isinstance(e["arrival_s"], float) and e["arrival_s"] >= 0


def test_arrival_times_go_into_the_fixture_and_back(tmp_path: Path) -> None:
    j = write_journal(
        tmp_path / "j.jsonl",
        [entry(0, "a", arrival_s=0.5), entry(1, "a", seq=1, arrival_s=2.25), entry(2, "b")],
    )
    w = convert(j, tmp_path / "fx").workload
    assert [c.arrival_s for c in w.calls] == [0.5, 2.25, None]
    assert [c.get("arrival_s") for c in calls_of(tmp_path / "fx")] == [0.5, 2.25, None]


def test_body_field_unit_is_stripped_and_lengths_only_keeps_no_text(tmp_path: Path) -> None:
    fake = FakeUpstream()
    fake.first_seen.set()
    journal = tmp_path / "j.jsonl"

    async def main() -> None:
        async with (
            proxy(fake, journal, lengths_only=True) as (url, _),
            httpx.AsyncClient(timeout=20) as client,
        ):
            for i in range(2):
                body = {
                    "messages": [{"role": "user", "content": "my secret"}],
                    "stream": True,
                    "benchkit_unit": "u9",
                }
                r = await client.post(url + "/v1/chat/completions", json=body)
                assert r.status_code == 200 and r.content == b"".join(SSE_PIECES), i

    asyncio.run(main())
    for _, body in fake.seen:
        assert json.loads(body) == {
            "messages": [{"role": "user", "content": "my secret"}],
            "stream": True,
        }
    assert b"secret" not in journal.read_bytes()
    w = convert(journal, tmp_path / "fx").workload
    assert [(c.unit, c.seq, c.prompt_tokens, c.completion_tokens) for c in w.calls] == [
        ("u9", 0, 7, 2),
        ("u9", 1, 7, 2),
    ]
    assert b"secret" not in (tmp_path / "fx" / "calls.jsonl").read_bytes()


def test_unreachable_upstream_answers_502_and_is_left_out(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"

    async def main() -> httpx.Response:
        jr = Journal(journal, HEADER)
        rec = Recorder("http://127.0.0.1:9", jr, lengths_only=False)  # discard port: refused
        srv = await asyncio.start_server(rec.handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
        try:
            async with httpx.AsyncClient(timeout=20) as client:
                body = {"messages": [{"role": "user", "content": "x"}]}
                return await client.post(url + "/v1/chat/completions", json=body)
        finally:
            await rec.shutdown()
            srv.close()
            jr.close()

    r = asyncio.run(main())
    assert r.status_code == 502 and "upstream unreachable" in r.json()["error"]["message"]
    [e] = read_journal(journal)[1]
    assert e["status"] == 502
    with pytest.raises(UserError, match="no finished call"):
        convert(journal, tmp_path / "fx")


# --------------------------------------------------------------------------- real llama-server


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-server of the default study's build and model, 2 slots."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from benchkit.app import to_typed
    from benchkit.paths import repo_root
    from benchkit.server.build import build_server
    from benchkit.server.plan import ServerSpec
    from benchkit.server.provide import provide_model
    from benchkit.server.serve import RunningServer, free_port

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):
        cfg = to_typed(compose(config_name="config"))
    GlobalHydra.instance().clear()
    binary, _ = build_server(cfg.backend)
    model = provide_model(cfg)
    port = free_port()
    argv = (str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port))
    spec = ServerSpec(
        argv=(*argv, "--alias", "tiny-moe", "-np", "2", "-c", "8192"),
        env={},
        port=port,
        alias="tiny-moe",
        slots=2,
    )
    with RunningServer(spec, tmp_path_factory.mktemp("llama") / "server.log") as srv:
        srv.start(180)
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def recorder(upstream: str, out: Path, *extra: str) -> AsyncIterator[str]:
    """The recorder as a user runs it: a subprocess, stopped with SIGINT (Ctrl-C)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchkit.workload",
        "record",
        "--upstream",
        upstream,
        "--listen",
        "0",
        "--out",
        str(out),
        *extra,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stderr.readline(), timeout=60)).decode()
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        assert m, line
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    try:
        yield m.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        rest = (await asyncio.wait_for(proc.stderr.read(), timeout=60)).decode()
        assert await proc.wait() == 0, rest
        assert "wrote" in rest, rest


async def chat(
    client: httpx.AsyncClient, url: str, unit: str, text: str, *, stream: bool
) -> dict[str, Any]:
    """One call; returns the usage the client saw (from the last event when streaming)."""
    body: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "You are one agent of a pipeline."},
            {"role": "user", "content": text},
        ],
        "max_tokens": 8,
        "temperature": 0,
        "seed": 3,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    path = "/v1/chat/completions"
    headers = {"X-Benchkit-Unit": unit}
    if not stream:
        r = await client.post(url + path, json=body, headers=headers)
        r.raise_for_status()
        return dict(r.json()["usage"])
    usage: dict[str, Any] = {}
    async with client.stream("POST", url + path, json=body, headers=headers) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if line.startswith("data: {"):
                usage = json.loads(line[6:]).get("usage") or usage
    return usage


def replay(fixture: Path, run_dir: Path) -> dict[str, Any]:
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchkit",
            f"workload.fixture={fixture}",
            "workload.output_policy=natural",
            "slots=1",
            f"hydra.run.dir={run_dir}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (run_dir / "result.json").exists(), p.stderr[-2000:]
    return dict(json.loads((run_dir / "result.json").read_text()))


@pytest.mark.slow
def test_recorded_chat_replays_through_benchkit(llama: str, tmp_path: Path) -> None:
    out = tmp_path / "recorded"

    async def drive() -> list[dict[str, Any]]:
        async with recorder(llama, out) as url, httpx.AsyncClient(timeout=120) as client:
            # Two units interleaved, streaming and not, as two pipeline lanes would.
            return [
                await chat(client, url, "stock-a", "Screen stock A.", stream=True),
                await chat(client, url, "stock-b", "Screen stock B.", stream=False),
                await chat(client, url, "stock-a", "Now write the report on A.", stream=False),
                await chat(client, url, "stock-b", "Now write the report on B.", stream=True),
            ]

    usages = asyncio.run(drive())
    w = load_workload(out)
    assert (w.kind, w.output_policy, w.cap) == ("chat", "natural", 8)
    assert [(u.id, len(u.calls)) for u in w.units] == [("stock-a", 2), ("stock-b", 2)]
    recorded = [w.units[0].calls[0], w.units[1].calls[0], w.units[0].calls[1], w.units[1].calls[1]]
    for c, usage in zip(recorded, usages, strict=True):
        assert c.recorded_prompt_tokens == usage["prompt_tokens"]
        assert c.completion_tokens == usage["completion_tokens"]
        assert c.sampling == {"temperature": 0, "seed": 3}
    assert w.units[0].calls[1].messages is not None
    assert w.units[0].calls[1].messages[1]["content"] == "Now write the report on A."
    assert not journal_path(out).exists()

    r = replay(out, tmp_path / "run")
    m = r["metrics"]
    assert r["status"] == "complete", r["reason"]
    assert r["provenance"]["workload"]["kind"] == "chat"
    assert m["calls_completed"] == 4 and m["units_completed"] == 2
    # The same server build and model: the same tokenizer and chat template.
    assert m["prompt_tokens"] == m["fixture_prompt_tokens"] == w.prompt_tokens
    assert m["prompt_token_mismatches"] == 0
    assert 4 <= m["completion_tokens"] <= 4 * 8

    # A fixture recorded with another tokenizer: its counts differ from the server's.
    other = tmp_path / "other-tokenizer"
    other.mkdir()
    (other / "fixture.json").write_text((out / "fixture.json").read_text())
    calls = calls_of(out)
    for c in calls[:3]:
        c["prompt_tokens"] += 5
    (other / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    r2 = replay(other, tmp_path / "run2")
    m2 = r2["metrics"]
    assert r2["status"] == "complete", r2["reason"]
    assert m2["prompt_token_mismatches"] == 3
    assert m2["fixture_prompt_tokens"] == m2["prompt_tokens"] + 15


@pytest.mark.slow
def test_lengths_only_recording_of_mixed_calls(llama: str, tmp_path: Path) -> None:
    out = tmp_path / "private"
    secret = "Quarterly numbers of client ACME-4417, confidential."

    async def drive() -> list[int]:
        seen = []
        async with (
            recorder(llama, out, "--lengths-only") as url,
            httpx.AsyncClient(timeout=120) as client,
        ):
            seen.append((await chat(client, url, "u1", secret, stream=True))["prompt_tokens"])
            for prompt, stream in ((secret, False), ([11, 12, 13, 14, 15], True)):
                body = {"prompt": prompt, "max_tokens": 4, "stream": stream}
                r = await client.post(
                    url + "/v1/completions", json=body, headers={"X-Benchkit-Unit": "u2"}
                )
                if stream:
                    events = [
                        json.loads(x[6:]) for x in r.text.splitlines() if x.startswith("data: {")
                    ]
                    seen.append(events[-1]["usage"]["prompt_tokens"])
                else:
                    seen.append(r.json()["usage"]["prompt_tokens"])
        return seen

    seen = asyncio.run(drive())
    for f in out.iterdir():
        assert b"ACME" not in f.read_bytes() and b"confidential" not in f.read_bytes(), f
    w = load_workload(out)
    assert (w.kind, w.output_policy) == ("tokens", "replay")
    assert [(c.unit, c.seq) for c in w.calls] == [("u1", 0), ("u2", 0), ("u2", 1)]
    assert [c.prompt_tokens for c in w.calls] == seen
    assert seen[2] == 5
    assert all(c.segments is not None and c.segments[0].key is None for c in w.calls)


def _events(sse: bytes) -> list[dict[str, Any]]:
    """The events of an SSE body without what differs per request (id, time, timings)."""
    out = []
    for line in sse.decode().splitlines():
        if line.startswith("data: {"):
            ev = json.loads(line[6:])
            for k in ("id", "created", "timings"):
                ev.pop(k, None)
            out.append(ev)
        elif line.startswith("data: "):
            out.append({"raw": line})
    return out


@pytest.mark.slow
def test_stream_through_recorder_matches_direct(llama: str, tmp_path: Path) -> None:
    body = {
        "messages": [{"role": "user", "content": "Count to five."}],
        "max_tokens": 12,
        "temperature": 0,
        "seed": 1,
        "stream": True,
    }

    async def get(client: httpx.AsyncClient, url: str) -> bytes:
        async with client.stream("POST", url + "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200
            return b"".join([c async for c in r.aiter_raw()])

    async def drive() -> tuple[bytes, bytes]:
        async with httpx.AsyncClient(timeout=120) as client:
            direct = await get(client, llama)
            async with recorder(llama, tmp_path / "fx") as url:
                proxied = await get(client, url)
        return direct, proxied

    direct, proxied = asyncio.run(drive())
    assert _events(proxied) == _events(direct)
    assert len(_events(direct)) >= 3 and _events(direct)[-1] == {"raw": "data: [DONE]"}
    # The bytes around the per-request fields are the same too: only id/created/timings differ.
    strip = re.compile(rb'"(id|created)":("[^"]*"|\d+)|,"timings":\{[^}]*\}')
    assert strip.sub(b"", proxied) == strip.sub(b"", direct)


def test_a_target_that_is_not_a_path_never_leaves_for_another_server(tmp_path: Path) -> None:
    """`POST @127.0.0.1:PORT/...` appended to the upstream's URL made `HOST:PORT@` a user
    name and sent the call to PORT (issue #31): only a path goes upstream."""
    fake = FakeUpstream()
    fake.first_seen.set()
    victim_hits: list[bytes] = []

    async def victim(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        victim_hits.append(await reader.read(100))
        writer.close()

    async def main() -> bytes:
        side = await asyncio.start_server(victim, "127.0.0.1", 0)
        port = side.sockets[0].getsockname()[1]
        try:
            async with proxy(fake, tmp_path / "j.jsonl") as (url, _):
                host, proxy_port = url.removeprefix("http://").split(":")
                reader, writer = await asyncio.open_connection(host, int(proxy_port))
                body = b'{"messages":[{"role":"user","content":"x"}]}'
                writer.write(
                    f"POST @127.0.0.1:{port}/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                    "Connection: close\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(), timeout=20)
                writer.close()
                return answer
        finally:
            side.close()

    answer = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 400") and b"is not a path" in answer
    assert victim_hits == [] and fake.seen == []

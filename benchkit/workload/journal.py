"""The recorder's journal and the fixture written from it.

The recording proxy (benchkit.workload.record) appends one JSON line per finished call to a
journal beside the fixture directory, so that a crash loses nothing; at shutdown (or with
``record --convert JOURNAL --out DIR`` after a crash) the journal becomes a fixture
directory (``fixture.json`` + ``calls.jsonl``, docs/fixture-format.md), written atomically
and checked by the loader.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from benchkit.errors import UserError
from benchkit.workload.model import (
    FIXTURE_CALLS_FILE,
    FIXTURE_FILE,
    FORMAT_VERSION,
    FixtureMeta,
    Workload,
    load_workload,
)

JOURNAL_VERSION = 1


class JournalHeader(TypedDict):
    """The journal's first line."""

    benchkit_journal: int  # JOURNAL_VERSION
    upstream: str
    lengths_only: bool
    started_utc: str


class Prompt(TypedDict, total=False):
    """A request's prompt as the proxy read it: one of these (none when it could not)."""

    messages: list[Any]  # a chat request's messages, as the client sent them
    text: str
    ids: list[int]


class JournalEntry(TypedDict, total=False):
    """One finished call, as the proxy appends it. Read back from disk, every field is
    checked before it is used: a journal is a file anyone could have edited."""

    n: int  # order of arrival over all units
    arrival_s: float  # seconds from the recorder's start to the call's arrival
    unit: str
    seq: int  # order of arrival within the unit
    role: str
    endpoint: str  # chat or completion
    stream: bool
    prompt: Prompt | None  # None: lengths only, or unreadable (`problem` says why)
    prompt_ids: int | None  # how many token ids a completion prompt had
    sampling: dict[str, object]  # every other request field, as sent
    max_tokens: int | None
    problem: str | None
    status: int | None
    error: str | None
    finish_reason: str | None
    completion_tokens: int | None
    completion_source: str | None  # usage, timings or counted (chunks)
    prompt_tokens: int | None
    ttft_ms: float | None
    total_ms: float


class Segment(TypedDict):
    key: str | None
    len: int


class FixturePrompt(TypedDict, total=False):
    """A call's prompt in fixture format 1: token segments, chat messages or text."""

    segments: list[Segment]
    messages: list[dict[str, str]]
    text: str


class FixtureCall(TypedDict):
    """One line of the fixture's calls.jsonl (docs/fixture-format.md)."""

    unit: str
    seq: int
    role: str
    prompt: FixturePrompt
    max_tokens: int
    completion_tokens: int
    prompt_tokens: NotRequired[int]
    sampling: NotRequired[dict[str, object]]
    arrival_s: NotRequired[float]


def journal_header(upstream: str, *, lengths_only: bool) -> JournalHeader:
    return {
        "benchkit_journal": JOURNAL_VERSION,
        "upstream": upstream,
        "lengths_only": lengths_only,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def journal_path(out: Path) -> Path:
    """Where the journal of a recording into ``out`` is appended: beside it, so that the
    fixture directory itself only ever appears whole."""
    return out.parent / f"{out.name}.journal.jsonl"


class Journal:
    """Appends one JSON line per finished call with a single write, so a line is whole."""

    def __init__(self, path: Path, header: JournalHeader) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        self.write(header)

    def write(self, obj: JournalHeader | JournalEntry) -> None:
        # ASCII escapes: a client's lone surrogate (valid JSON, not UTF-8) cannot break a line.
        line = json.dumps(obj, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode("ascii"))

    def close(self) -> None:
        os.fsync(self._fd)
        os.close(self._fd)


# --------------------------------------------------------------------------- journal -> fixture


@dataclass
class Converted:
    """A fixture written from a journal, and what was left out of it."""

    workload: Workload
    dropped: int
    notes: list[str]


def read_journal(path: Path) -> tuple[JournalHeader, list[JournalEntry]]:
    """(header, entries) of a journal; a torn last line (a crash mid-write) is skipped."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror}); expected a journal") from None
    lines = data.split(b"\n")
    header: JournalHeader | None = None
    entries: list[JournalEntry] = []
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
            header = cast(JournalHeader, obj)
        else:
            entries.append(cast(JournalEntry, obj))
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
    meta: FixtureMeta = {
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
    check_target(out)
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


def check_target(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: already exists; expected a new (or empty) fixture directory")


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def fixture_calls(
    entries: list[JournalEntry], *, lengths_only: bool
) -> tuple[list[tuple[str, FixtureCall]], int, list[str]]:
    """(kind, calls.jsonl object) per kept call, in arrival order with seq renumbered per
    unit; how many entries were left out; notes on what could not be kept as recorded."""
    notes: list[str] = []
    kept = _finished(entries, lengths_only, notes)
    dropped = len(entries) - len(kept)
    kind = _kind(kept, lengths_only, notes)
    if kind == "tokens":
        before = len(kept)
        kept = [e for e in kept if _prompt_len(e) is not None]
        if len(kept) < before:
            notes.append(f"{before - len(kept)} calls with no prompt length left out")
            dropped += before - len(kept)
    usable = [(e, p) for e in kept if (p := _prompt(e, kind, notes)) is not None]
    if len(usable) < len(kept):
        notes.append(f"{len(kept) - len(usable)} calls whose prompt format 1 cannot hold left out")
        dropped += len(kept) - len(usable)
    cap = _cap([e for e, _ in usable])
    seq: dict[str, int] = {}
    out: list[tuple[str, FixtureCall]] = []
    for e, prompt in usable:
        unit = str(e["unit"])
        n = seq.get(unit, 0)
        seq[unit] = n + 1
        completion = max(1, int(e["completion_tokens"] or 0))
        call: FixtureCall = {
            "unit": unit,
            "seq": n,
            "role": str(e.get("role") or "call"),
            "prompt": prompt,
            "max_tokens": _max_tokens(e, completion, cap),
            "completion_tokens": completion,
        }
        pt = e.get("prompt_tokens")
        if kind != "tokens" and isinstance(pt, int) and pt >= 1:
            call["prompt_tokens"] = pt
        if e.get("sampling"):
            call["sampling"] = e["sampling"]
        at = e.get("arrival_s")
        if isinstance(at, int | float) and not isinstance(at, bool) and at >= 0:
            call["arrival_s"] = float(at)
        out.append((kind, call))
    return out, dropped, notes


def _finished(
    entries: list[JournalEntry], lengths_only: bool, notes: list[str]
) -> list[JournalEntry]:
    """The calls that finished with a length, in arrival order; with content, only those
    whose prompt the recorder could read (a batch of prompts cannot be replayed)."""
    kept = [
        e
        for e in sorted(entries, key=lambda e: int(e.get("n", 0)))
        if e.get("status") == 200
        and not e.get("error")
        and isinstance(e.get("completion_tokens"), int)
    ]
    if not lengths_only:
        unread = [e for e in kept if _prompt_kind(e) == "none"]
        if unread:
            notes.append(f"{len(unread)} calls with unreadable prompts left out")
            kept = [e for e in kept if _prompt_kind(e) != "none"]
    return kept


def _kind(kept: list[JournalEntry], lengths_only: bool, notes: list[str]) -> str:
    """The fixture's kind: the calls' own where they share one, else lengths (tokens)."""
    kinds = {_prompt_kind(e) for e in kept}
    if lengths_only:
        return "tokens"
    if kinds == {"ids"}:
        notes.append("token-id prompts kept as lengths (format 1 holds no ids)")
        return "tokens"
    if len(kinds) == 1:
        return kinds.pop()
    # One fixture has one kind; lengths are what chat, text and ids have in common.
    if kinds:
        notes.append(f"mixed prompt kinds ({', '.join(sorted(kinds))}) kept as lengths only")
    return "tokens"


def _prompt(e: JournalEntry, kind: str, notes: list[str]) -> FixturePrompt | None:
    """The call's prompt as format 1 holds it, or None when it cannot (no message left,
    text that is not valid Unicode)."""
    if kind == "tokens":
        return {"segments": [{"key": None, "len": _prompt_len(e) or 0}]}
    recorded = e.get("prompt") or {}
    prompt: FixturePrompt
    if kind == "chat":
        msgs = _messages(recorded["messages"], notes)
        prompt = {"messages": msgs}
        if not msgs:
            return None
    else:
        prompt = {"text": recorded["text"]}
    try:
        json.dumps(prompt, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return prompt


def _prompt_kind(e: JournalEntry) -> str:
    p = e.get("prompt") or {}
    if "messages" in p:
        return "chat"
    if "text" in p:
        return "text"
    if "ids" in p:
        return "ids"
    return "none"


def _prompt_len(e: JournalEntry) -> int | None:
    for v in (e.get("prompt_tokens"), e.get("prompt_ids")):
        if isinstance(v, int) and v >= 1:
            return v
    return None


def _cap(entries: list[JournalEntry]) -> int:
    """The fixture's cap: the largest limit a call asked for. A call that set none and
    stopped on its own must stay below the cap, or it would read as a runaway output."""
    cap = 1
    for e in entries:
        completion = max(1, int(e["completion_tokens"] or 0))
        limit = e.get("max_tokens")
        if isinstance(limit, int) and limit >= 1:
            cap = max(cap, limit, completion)
        elif e.get("finish_reason") == "length":
            cap = max(cap, completion)
        else:
            cap = max(cap, completion + 1)
    return cap


def _max_tokens(e: JournalEntry, completion: int, cap: int) -> int:
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
    header: JournalHeader, calls: list[tuple[str, FixtureCall]], dropped: int, notes: list[str]
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


def say_written(done: Converted, out: Path) -> None:
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
    say_written(convert(journal, out), out)
    return 0

"""Load a workload fixture directory into typed, validated objects (and materialise token ids).

A fixture is a directory holding ``fixture.json`` (what the workload is) and
``calls.jsonl`` (one LLM call a line, in pipeline order within each unit). The
loader parses and checks everything first and only then builds the objects, so a
fixture is either loaded whole or refused with a :class:`FixtureError` naming the
file, the line and what is wrong. The format is described in docs/fixture-format.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from benchkit.errors import FixtureError
from benchkit.paths import data_root, workloads_dir

FORMAT_VERSION = 1
KINDS = ("tokens", "text", "chat")
OUTPUT_POLICIES = ("replay", "natural")
FIXTURE_FILE = "fixture.json"
FIXTURE_CALLS_FILE = "calls.jsonl"

_FIXTURE_FIELDS = ("format", "name", "kind", "cap", "output_policy", "description", "recipe")
_CALL_REQUIRED = ("unit", "seq", "role", "prompt", "max_tokens", "completion_tokens")
_CALL_OPTIONAL = ("prompt_tokens", "sampling", "arrival_s")
_PROMPT_FIELD = {"tokens": "segments", "text": "text", "chat": "messages"}


@dataclass(frozen=True)
class Segment:
    """A run of prompt tokens: ``key`` names content shared wherever it appears; None = unique."""

    key: str | None
    length: int


@dataclass(frozen=True)
class Call:
    """One LLM call of a unit's pipeline, as recorded (or generated)."""

    unit: str
    seq: int
    role: str
    segments: tuple[Segment, ...] | None
    text: str | None
    messages: tuple[dict[str, str], ...] | None
    max_tokens: int
    completion_tokens: int
    recorded_prompt_tokens: int | None
    line: int
    # The call's other request fields as recorded, sent as they are.
    sampling: Mapping[str, object] | None = field(default=None, compare=False)
    # When the call arrived, in seconds from the recording's start (load=trace replays it).
    arrival_s: float | None = None

    @property
    def prompt_tokens(self) -> int | None:
        """Sum of segment lengths (token fixtures), else the recorded count, else None."""
        if self.segments is not None:
            return sum(s.length for s in self.segments)
        return self.recorded_prompt_tokens

    @property
    def hit_cap(self) -> bool:
        """The recorded completion ran to max_tokens (a runaway output, cut by the cap)."""
        return self.completion_tokens >= self.max_tokens


@dataclass(frozen=True)
class Unit:
    """One unit of work (e.g. one stock): its calls in pipeline (seq) order."""

    id: str
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Workload:
    """A loaded fixture: its metadata and its units, calls in pipeline order within a unit."""

    name: str
    kind: str
    cap: int
    output_policy: str
    description: str
    path: Path
    units: tuple[Unit, ...]
    recipe: Mapping[str, object] | None  # the synth recipe it was made from, as written
    content_sha256: str = field(default="", repr=False, compare=False)

    @cached_property
    def calls(self) -> tuple[Call, ...]:
        """Every call, in calls.jsonl line order."""
        return tuple(sorted((c for u in self.units for c in u.calls), key=lambda c: c.line))

    @property
    def n_calls(self) -> int:
        return sum(len(u.calls) for u in self.units)

    @property
    def prompt_tokens(self) -> int | None:
        """Total prompt tokens; None when any call's prompt length is unknown."""
        total = 0
        for c in self.calls:
            n = c.prompt_tokens
            if n is None:
                return None
            total += n
        return total

    @property
    def max_prompt_tokens(self) -> int | None:
        """The longest prompt; None when any call's prompt length is unknown."""
        lengths = [c.prompt_tokens for c in self.calls]
        if any(n is None for n in lengths):
            return None
        return max(n for n in lengths if n is not None)

    @property
    def completion_tokens(self) -> int:
        """Total recorded completion tokens."""
        return sum(c.completion_tokens for c in self.calls)

    @property
    def capped_calls(self) -> int:
        """Number of calls whose recorded completion ran to max_tokens."""
        return sum(1 for c in self.calls if c.hit_cap)

    def fingerprint(self) -> str:
        """Short sha256 of the fixture.json and calls.jsonl bytes that were loaded."""
        return self.content_sha256[:16]


# --------------------------------------------------------------------------- loading


def load_workload(path: str | Path) -> Workload:
    """Load and validate a fixture directory, or a bare name under <repo>/fixtures/workloads/."""
    d = _resolve(path)
    fixture_path = d / FIXTURE_FILE
    calls_path = d / FIXTURE_CALLS_FILE
    if not fixture_path.is_file():
        raise FixtureError(str(d), None, f"no {FIXTURE_FILE}; expected a fixture directory")
    if not calls_path.is_file():
        raise FixtureError(
            str(d), None, f"no {FIXTURE_CALLS_FILE}; expected one call a line beside it"
        )
    fixture_bytes = _read(fixture_path)
    calls_bytes = _read(calls_path)
    meta = _parse_fixture(str(fixture_path), fixture_bytes)
    calls = _parse_calls(str(calls_path), calls_bytes, meta["kind"], meta["cap"])
    digest = hashlib.sha256()
    for blob in (fixture_bytes, calls_bytes):
        digest.update(len(blob).to_bytes(8, "big"))
        digest.update(blob)
    by_unit: dict[str, list[Call]] = {}
    for c in calls:
        by_unit.setdefault(c.unit, []).append(c)
    units = tuple(Unit(id=u, calls=tuple(cs)) for u, cs in by_unit.items())
    return Workload(
        name=meta["name"],
        kind=meta["kind"],
        cap=meta["cap"],
        output_policy=meta["output_policy"],
        description=meta["description"],
        path=d,
        units=units,
        recipe=meta["recipe"],
        content_sha256=digest.hexdigest(),
    )


def _resolve(path: str | Path) -> Path:
    p = Path(path)
    if p.is_file() and p.name in (FIXTURE_FILE, FIXTURE_CALLS_FILE):
        return p.parent
    if p.exists():
        if not p.is_dir():
            raise FixtureError(str(p), None, "not a directory; expected a fixture directory")
        return p
    if isinstance(path, str) and path and "/" not in path and "\\" not in path:
        named = workloads_dir() / path
        if named.is_dir():
            return named
    if not p.is_absolute() and (data_root() / p).is_dir():
        return data_root() / p  # e.g. fixtures/workloads/seed-6 from another directory
    root = workloads_dir()
    have = sorted(x.name for x in root.iterdir() if x.is_dir()) if root.is_dir() else []
    names = ", ".join(have) if have else "none"
    raise FixtureError(
        str(p), None, f"no such fixture; expected a directory or a fixture name ({names})"
    )


def _read(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError as e:
        raise FixtureError(str(p), None, f"cannot be read ({e.strerror})") from None


class _Bad(Exception):
    """A problem found in one JSON value; the caller adds file and line."""


def _reject_constant(name: str) -> Any:
    raise _Bad(f"{name} is not a number; expected finite numbers only")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in pairs:
        if k in out:
            raise _Bad(f"field {k!r} appears twice; expected each field once")
        out[k] = v
    return out


def _json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise _Bad(f"not valid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise _Bad("JSON nested too deeply") from None


def _str(v: Any, what: str, *, empty: bool = False) -> str:
    if not isinstance(v, str):
        raise _Bad(f"{what} is {_typename(v)}; expected a string")
    if not empty and not v:
        raise _Bad(f"{what} is empty; expected a non-empty string")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise _Bad(f"{what} holds an unpaired surrogate; expected valid Unicode") from None
    return v


def _check_int(v: Any, what: str, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad(f"{what} is {_typename(v)}; expected an integer >= {minimum}")
    if v < minimum:
        raise _Bad(f"{what} is {v}; expected an integer >= {minimum}")
    return v


def _typename(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return f"the integer {v}"
    if isinstance(v, float):
        return f"the number {v!r}"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _field_line(text: str, name: str) -> int | None:
    """The line of fixture.json where a field is written, for error messages."""
    needle = f'"{name}"'
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    return None


class FixtureMeta(TypedDict):
    """fixture.json as written (docs/fixture-format.md)."""

    format: int
    name: str
    kind: str
    cap: int
    output_policy: str
    description: str
    recipe: Mapping[str, object] | None


def _parse_fixture(path: str, data: bytes) -> FixtureMeta:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise FixtureError(path, line, "not UTF-8 text; expected a UTF-8 JSON object") from None
    if not text.strip():
        raise FixtureError(path, 1, "is empty; expected a JSON object with the fixture's fields")
    try:
        obj = _json(text)
    except _Bad as e:
        raise FixtureError(path, _json_error_line(text), str(e)) from None
    if not isinstance(obj, dict):
        raise FixtureError(path, 1, f"is {_typename(obj)}; expected a JSON object")
    current = ""
    try:
        for k in obj:
            if k not in _FIXTURE_FIELDS:
                current = k
                raise _Bad(f"unknown field {k!r}; expected only {', '.join(_FIXTURE_FIELDS)}")
        for k in _FIXTURE_FIELDS:
            if k not in obj:
                raise _Bad(f"missing field {k!r}")
        current = "format"
        if type(obj["format"]) is not int or obj["format"] != FORMAT_VERSION:
            raise _Bad(f"format is {obj['format']!r}; expected {FORMAT_VERSION}")
        current = "name"
        name = _str(obj["name"], "name")
        current = "kind"
        kind = obj["kind"]
        if kind not in KINDS:
            raise _Bad(f"kind is {kind!r}; expected one of {', '.join(KINDS)}")
        current = "cap"
        cap = _check_int(obj["cap"], "cap", 1)
        current = "output_policy"
        policy = obj["output_policy"]
        if policy not in OUTPUT_POLICIES:
            raise _Bad(f"output_policy is {policy!r}; expected one of {', '.join(OUTPUT_POLICIES)}")
        current = "description"
        description = _str(obj["description"], "description", empty=True)
        current = "recipe"
        recipe = obj["recipe"]
        if recipe is not None and not isinstance(recipe, dict):
            raise _Bad(f"recipe is {_typename(recipe)}; expected an object or null")
    except _Bad as e:
        where = _field_line(text, current) if current else None
        raise FixtureError(path, where if where is not None else 1, str(e)) from None
    return {
        "format": FORMAT_VERSION,
        "name": name,
        "kind": kind,
        "cap": cap,
        "output_policy": policy,
        "description": description,
        "recipe": recipe,
    }


def _json_error_line(text: str) -> int:
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return e.lineno
    except (ValueError, RecursionError):
        pass
    return 1


@dataclass
class _Raw:
    """One parsed, type-checked calls.jsonl line, before cross-line checks."""

    unit: str
    seq: int
    role: str
    segments: list[tuple[str | None, int]] | None
    text: str | None
    messages: list[dict[str, str]] | None
    max_tokens: int
    completion_tokens: int
    prompt_tokens: int | None
    sampling: Mapping[str, object] | None
    line: int
    arrival_s: float | None = None


def _parse_calls(path: str, data: bytes, kind: str, cap: int) -> list[Call]:
    raws: list[_Raw] = []
    for lineno, raw_line in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            raise FixtureError(path, lineno, "not UTF-8 text; expected a UTF-8 JSON line") from None
        if not line.strip():
            continue
        try:
            raws.append(_parse_call(line, kind, cap, lineno))
        except _Bad as e:
            raise FixtureError(path, lineno, str(e)) from None
    if not raws:
        raise FixtureError(path, None, "holds no calls; expected one JSON call a line")

    next_seq: dict[str, int] = {}
    key_len: dict[str, tuple[int, int]] = {}
    for r in raws:
        want = next_seq.get(r.unit, 0)
        if r.seq != want:
            if r.seq < want:
                why = f"seq {r.seq} of unit {r.unit!r} repeats or goes back"
            else:
                why = f"seq {r.seq} of unit {r.unit!r} skips ahead"
            raise FixtureError(path, r.line, f"{why}; expected seq {want} (0, 1, 2, ... in order)")
        next_seq[r.unit] = want + 1
        for key, length in r.segments or ():
            if key is None:
                continue
            seen = key_len.get(key)
            if seen is None:
                key_len[key] = (length, r.line)
            elif seen[0] != length:
                raise FixtureError(
                    path,
                    r.line,
                    f"segment {key!r} has len {length}; expected {seen[0]} as at line {seen[1]}",
                )
    return [
        Call(
            unit=r.unit,
            seq=r.seq,
            role=r.role,
            segments=None
            if r.segments is None
            else tuple(Segment(key=k, length=n) for k, n in r.segments),
            text=r.text,
            messages=None if r.messages is None else tuple(r.messages),
            max_tokens=r.max_tokens,
            completion_tokens=r.completion_tokens,
            recorded_prompt_tokens=r.prompt_tokens,
            line=r.line,
            sampling=r.sampling,
            arrival_s=r.arrival_s,
        )
        for r in raws
    ]


def _parse_call(line: str, kind: str, cap: int, lineno: int) -> _Raw:
    obj = _json(line)
    if not isinstance(obj, dict):
        raise _Bad(f"line is {_typename(obj)}; expected a JSON object (one call)")
    for k in obj:
        if k not in _CALL_REQUIRED and k not in _CALL_OPTIONAL:
            raise _Bad(
                f"unknown field {k!r}; expected {', '.join(_CALL_REQUIRED + _CALL_OPTIONAL)}"
            )
    for k in _CALL_REQUIRED:
        if k not in obj:
            raise _Bad(f"missing field {k!r}")
    unit = _str(obj["unit"], "unit")
    seq = _check_int(obj["seq"], "seq", 0)
    role = _str(obj["role"], "role")
    max_tokens = _check_int(obj["max_tokens"], "max_tokens", 1)
    if max_tokens > cap:
        raise _Bad(f"max_tokens is {max_tokens}; expected at most the fixture cap {cap}")
    completion = _check_int(obj["completion_tokens"], "completion_tokens", 1)
    if completion > max_tokens:
        raise _Bad(
            f"completion_tokens {completion} exceeds max_tokens {max_tokens}; "
            "expected completion_tokens <= max_tokens"
        )
    sampling = obj.get("sampling")
    if "sampling" in obj and not isinstance(sampling, dict):
        raise _Bad(f"sampling is {_typename(sampling)}; expected an object")
    arrival = obj.get("arrival_s")
    if arrival is not None and (type(arrival) not in (int, float) or arrival < 0):
        raise _Bad(f"arrival_s is {_typename(arrival)}; expected seconds >= 0 (or no field)")

    prompt = obj["prompt"]
    want = _PROMPT_FIELD[kind]
    if not isinstance(prompt, dict):
        raise _Bad(f"prompt is {_typename(prompt)}; expected an object with {want!r}")
    if set(prompt) != {want}:
        got = ", ".join(repr(k) for k in prompt) or "no fields"
        raise _Bad(f"prompt has {got}; a {kind} fixture expects exactly {want!r}")

    segments: list[tuple[str | None, int]] | None = None
    text: str | None = None
    messages: list[dict[str, str]] | None = None
    recorded: int | None = None
    if kind == "tokens":
        if "prompt_tokens" in obj:
            raise _Bad("prompt_tokens given; a tokens fixture takes the length from its segments")
        segments = _segments(prompt["segments"])
    else:
        if kind == "text":
            text = _str(prompt["text"], "prompt.text")
        else:
            messages = _messages(prompt["messages"])
        if "prompt_tokens" in obj:
            recorded = _check_int(obj["prompt_tokens"], "prompt_tokens", 1)
    return _Raw(
        unit=unit,
        seq=seq,
        role=role,
        segments=segments,
        text=text,
        messages=messages,
        max_tokens=max_tokens,
        completion_tokens=completion,
        prompt_tokens=recorded,
        sampling=sampling,
        line=lineno,
        arrival_s=None if arrival is None else float(arrival),
    )


def _segments(v: Any) -> list[tuple[str | None, int]]:
    if not isinstance(v, list) or not v:
        what = "an empty list" if isinstance(v, list) else _typename(v)
        raise _Bad(f"prompt.segments is {what}; expected a non-empty list of {{key, len}}")
    out: list[tuple[str | None, int]] = []
    for i, s in enumerate(v):
        where = f"prompt.segments[{i}]"
        if not isinstance(s, dict):
            raise _Bad(f"{where} is {_typename(s)}; expected an object {{key, len}}")
        if set(s) != {"key", "len"}:
            got = ", ".join(repr(k) for k in s) or "no fields"
            raise _Bad(f"{where} has {got}; expected exactly 'key' and 'len'")
        if s["key"] is not None and not isinstance(s["key"], str):
            raise _Bad(f"{where}.key is {_typename(s['key'])}; expected a string or null")
        key = None if s["key"] is None else _str(s["key"], f"{where}.key")
        out.append((key, _check_int(s["len"], f"{where}.len", 1)))
    return out


def _messages(v: Any) -> list[dict[str, str]]:
    if not isinstance(v, list) or not v:
        what = "an empty list" if isinstance(v, list) else _typename(v)
        raise _Bad(f"prompt.messages is {what}; expected a non-empty list of messages")
    out: list[dict[str, str]] = []
    for i, m in enumerate(v):
        where = f"prompt.messages[{i}]"
        if not isinstance(m, dict):
            raise _Bad(f"{where} is {_typename(m)}; expected an object {{role, content}}")
        for k in ("role", "content"):
            if k not in m:
                raise _Bad(f"{where} has no {k!r}; expected 'role' and 'content'")
        msg: dict[str, str] = {}
        for k, val in m.items():
            msg[k] = _str(val, f"{where}.{k}", empty=(k != "role"))
        out.append(msg)
    return out


# --------------------------------------------------------------------------- token ids

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _seed(material: str) -> int:
    return int.from_bytes(hashlib.blake2b(material.encode("utf-8"), digest_size=8).digest(), "big")


def _splitmix(seed: int, n: int) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """n outputs of splitmix64 from seed: a counter-based hash, identical on every numpy."""
    x = np.arange(1, n + 1, dtype=np.uint64) * _GOLDEN + np.uint64(seed)
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def token_ids(call: Call, n_vocab: int, reserved_low: int = 4) -> list[int]:
    """The prompt's token ids, deterministically: the same segment key gives the same ids.

    Each segment's ids are a hash stream seeded by its key (or by unit, seq and segment
    index when the key is null), mapped into ``[reserved_low, n_vocab)`` so that special
    tokens (BOS, EOS, ...) at the bottom of the vocabulary are never sent.
    """
    if call.segments is None:
        raise ValueError(f"token_ids needs a tokens-fixture call (line {call.line} has text)")
    if not 0 <= reserved_low < n_vocab:
        raise ValueError(f"need 0 <= reserved_low < n_vocab, got {reserved_low}, {n_vocab}")
    span = np.uint64(n_vocab - reserved_low)
    parts = []
    for i, seg in enumerate(call.segments):
        material = (
            f"key\x00{seg.key}"
            if seg.key is not None
            else (f"unique\x00{call.unit}\x00{call.seq}\x00{i}")
        )
        parts.append(_splitmix(_seed(material), seg.length) % span)
    ids = np.concatenate(parts) + np.uint64(reserved_low)
    out: list[int] = ids.tolist()
    return out

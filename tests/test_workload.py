"""Workload fixtures: loader, validation messages, token ids, generator, stats, committed files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchkit.errors import FixtureError, UserError
from benchkit.paths import repo_root
from benchkit.workload import Call, Segment, Workload, load_workload, token_ids
from benchkit.workload.stats import compute
from benchkit.workload.synth import Recipe, load_recipe, recipe_from_dict, render, synth

FIXTURES = repo_root() / "fixtures" / "workloads"

META: dict[str, Any] = {
    "format": 1,
    "name": "t",
    "kind": "tokens",
    "cap": 64,
    "output_policy": "replay",
    "description": "test",
    "recipe": None,
}


def tok_call(unit: str, seq: int, segs: list[tuple[str | None, int]], **kw: Any) -> dict[str, Any]:
    call: dict[str, Any] = {
        "unit": unit,
        "seq": seq,
        "role": kw.pop("role", "r"),
        "prompt": {"segments": [{"key": k, "len": n} for k, n in segs]},
        "max_tokens": kw.pop("max_tokens", 64),
        "completion_tokens": kw.pop("completion_tokens", 10),
    }
    call.update(kw)
    return call


def write(
    d: Path, calls: list[Any] | str | bytes, meta: dict[str, Any] | str | None = None
) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    m = META if meta is None else meta
    (d / "fixture.json").write_text(m if isinstance(m, str) else json.dumps(m, indent=2))
    if isinstance(calls, bytes):
        (d / "calls.jsonl").write_bytes(calls)
    elif isinstance(calls, str):
        (d / "calls.jsonl").write_text(calls)
    else:
        (d / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    return d


GOOD = [
    tok_call("u0", 0, [("sys:a", 5), ("unit:u0:data", 7), (None, 3)], completion_tokens=64),
    tok_call("u1", 0, [("sys:a", 5), ("unit:u1:data", 4), (None, 2)]),
    tok_call("u0", 1, [("sys:b", 6), ("unit:u0:data", 7), (None, 1)], sampling={"top_k": 20}),
]


# --------------------------------------------------------------------------- loader


def test_round_trip(tmp_path: Path) -> None:
    w = load_workload(write(tmp_path / "fx", GOOD))
    assert isinstance(w, Workload)
    assert (w.name, w.kind, w.cap, w.output_policy, w.recipe) == ("t", "tokens", 64, "replay", None)
    assert [u.id for u in w.units] == ["u0", "u1"]  # first-appearance order
    assert [(c.unit, c.seq) for c in w.units[0].calls] == [("u0", 0), ("u0", 1)]
    assert [c.line for c in w.calls] == [1, 2, 3]  # flat tuple in file order
    first = w.calls[0]
    assert first.segments == (Segment("sys:a", 5), Segment("unit:u0:data", 7), Segment(None, 3))
    assert first.prompt_tokens == 15 and first.hit_cap and first.text is None
    assert w.calls[2].sampling == {"top_k": 20} and not w.calls[2].hit_cap
    assert (w.n_calls, w.prompt_tokens, w.max_prompt_tokens) == (3, 15 + 11 + 14, 15)
    assert (w.completion_tokens, w.capped_calls) == (84, 1)
    assert len(w.fingerprint()) == 16 and w.path == tmp_path / "fx"


def test_fingerprint_follows_bytes(tmp_path: Path) -> None:
    a = load_workload(write(tmp_path / "a", GOOD)).fingerprint()
    assert load_workload(write(tmp_path / "b", GOOD)).fingerprint() == a
    changed = [dict(GOOD[0], completion_tokens=11), *GOOD[1:]]
    assert load_workload(write(tmp_path / "c", changed)).fingerprint() != a


def test_text_and_chat_kinds(tmp_path: Path) -> None:
    text = [
        {
            "unit": "x",
            "seq": 0,
            "role": "r",
            "prompt": {"text": "hello"},
            "max_tokens": 8,
            "completion_tokens": 3,
            "prompt_tokens": 2,
        },
        {
            "unit": "x",
            "seq": 1,
            "role": "r",
            "prompt": {"text": "again"},
            "max_tokens": 8,
            "completion_tokens": 8,
        },
    ]
    w = load_workload(write(tmp_path / "t", text, dict(META, kind="text", output_policy="natural")))
    assert w.calls[0].text == "hello" and w.calls[0].prompt_tokens == 2
    assert w.calls[1].prompt_tokens is None and w.prompt_tokens is None
    assert w.max_prompt_tokens is None and w.capped_calls == 1
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": ""}]
    chat = [
        {
            "unit": "x",
            "seq": 0,
            "role": "r",
            "prompt": {"messages": msgs},
            "max_tokens": 8,
            "completion_tokens": 3,
            "prompt_tokens": 40,
        }
    ]
    w = load_workload(write(tmp_path / "c", chat, dict(META, kind="chat")))
    assert w.calls[0].messages == tuple(msgs) and w.prompt_tokens == 40
    with pytest.raises(ValueError, match="tokens-fixture"):
        token_ids(w.calls[0], 100)


def test_bare_name_and_file_path_resolve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_workload("mini").path == FIXTURES / "mini"
    assert load_workload("fixtures/workloads/seed-6").path == FIXTURES / "seed-6"
    assert load_workload(FIXTURES / "mini" / "fixture.json").path == FIXTURES / "mini"


def test_blank_lines_are_skipped_and_lines_counted(tmp_path: Path) -> None:
    body = "\n" + json.dumps(GOOD[0]) + "\n\n" + json.dumps(GOOD[1]) + "\n"
    w = load_workload(write(tmp_path / "fx", body))
    assert [c.line for c in w.calls] == [2, 4]


# --------------------------------------------------------------------------- validation


def _line(**over: Any) -> dict[str, Any]:
    base = tok_call("u9", 0, [("k", 4), (None, 2)])
    base.update(over)
    return {k: v for k, v in base.items() if v is not _DROP}


_DROP = object()
_SEG_OK = {"segments": [{"key": "k", "len": 4}]}

# (line 2 of calls.jsonl, fragment of the message). Line 1 is always a valid call.
BAD_LINES: list[tuple[str, str]] = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('"a string"', "expected a JSON object"),
    ('{"unit": "u9", "unit": "u8"}', "appears twice"),
    (json.dumps(_line()).replace('"seq": 0', '"seq": NaN'), "NaN is not a number"),
    (json.dumps(_line(unit=_DROP)), "missing field 'unit'"),
    (json.dumps(_line(prompt=_DROP)), "missing field 'prompt'"),
    (json.dumps(_line(completion_tokens=_DROP)), "missing field 'completion_tokens'"),
    (json.dumps(_line(extra=1)), "unknown field 'extra'"),
    (json.dumps(_line(unit=7)), "unit is the integer 7; expected a string"),
    (json.dumps(_line(unit="")), "unit is empty"),
    (json.dumps(_line(role=None)), "role is null; expected a string"),
    (json.dumps(_line(seq=-1)), "seq is -1; expected an integer >= 0"),
    (json.dumps(_line(seq=0.0)), "seq is the number 0.0"),
    (json.dumps(_line(seq=True)), "seq is a boolean"),
    (json.dumps(_line(seq="0")), "seq is a string"),
    (json.dumps(_line(max_tokens=0)), "max_tokens is 0; expected an integer >= 1"),
    (json.dumps(_line(max_tokens=65)), "at most the fixture cap 64"),
    (json.dumps(_line(completion_tokens=-3)), "completion_tokens is -3"),
    (json.dumps(_line(completion_tokens=0)), "completion_tokens is 0; expected an integer >= 1"),
    (json.dumps(_line(max_tokens=8, completion_tokens=9)), "exceeds max_tokens 8"),
    (json.dumps(_line(sampling=[1])), "sampling is a list; expected an object"),
    (json.dumps(_line(prompt_tokens=6)), "takes the length from its segments"),
    (json.dumps(_line(prompt="hi")), "prompt is a string; expected an object"),
    (json.dumps(_line(prompt={"text": "hi"})), "a tokens fixture expects exactly 'segments'"),
    (json.dumps(_line(prompt={**_SEG_OK, "x": 1})), "expects exactly 'segments'"),
    (json.dumps(_line(prompt={"segments": []})), "prompt.segments is an empty list"),
    (json.dumps(_line(prompt={"segments": {"k": 1}})), "prompt.segments is an object"),
    (json.dumps(_line(prompt={"segments": [5]})), "prompt.segments[0] is the integer 5"),
    (json.dumps(_line(prompt={"segments": [{"key": "k"}]})), "expected exactly 'key' and 'len'"),
    (json.dumps(_line(prompt={"segments": [{"key": 3, "len": 4}]})), "key is the integer 3"),
    (json.dumps(_line(prompt={"segments": [{"key": "", "len": 4}]})), "key is empty"),
    (json.dumps(_line(prompt={"segments": [{"key": None, "len": -4}]})), "len is -4"),
    (json.dumps(_line(prompt={"segments": [{"key": None, "len": 0}]})), "len is 0"),
    (json.dumps(_line(prompt={"segments": [{"key": "k", "len": 2.5}]})), "len is the number"),
    (
        json.dumps(_line(prompt={"segments": [{"key": "k", "len": 5}]})),
        "segment 'k' has len 5; expected 4 as at line 1",
    ),
    (json.dumps(_line(unit="u0")), "seq 0 of unit 'u0' repeats or goes back; expected seq 1"),
    (json.dumps(_line(unit="u0", seq=2)), "seq 2 of unit 'u0' skips ahead; expected seq 1"),
    (json.dumps(_line(seq=1)), "seq 1 of unit 'u9' skips ahead; expected seq 0"),
    (json.dumps(_line(unit="\ud800")), "unpaired surrogate"),
    ("[" * 100000, "nested too deeply"),
]


@pytest.mark.parametrize(("bad", "fragment"), BAD_LINES)
def test_bad_call_line_names_file_line_and_what(tmp_path: Path, bad: str, fragment: str) -> None:
    first = json.dumps(tok_call("u0", 0, [("k", 4), (None, 1)]))
    d = write(tmp_path / "fx", first + "\n" + bad + "\n")
    with pytest.raises(FixtureError) as ei:
        load_workload(d)
    e = ei.value
    assert e.path == str(d / "calls.jsonl")
    assert e.line == 2
    assert fragment in e.what
    assert str(e).startswith(f"{d / 'calls.jsonl'}:2: ")


def test_bad_utf8_line(tmp_path: Path) -> None:
    first = json.dumps(GOOD[0]).encode()
    d = write(tmp_path / "fx", first + b"\n\xff\xfe\n")
    with pytest.raises(FixtureError) as ei:
        load_workload(d)
    assert (ei.value.line, ei.value.what) == (2, "not UTF-8 text; expected a UTF-8 JSON line")


CHAT_BAD: list[tuple[dict[str, Any], str]] = [
    ({"messages": []}, "prompt.messages is an empty list"),
    ({"messages": ["hi"]}, "prompt.messages[0] is a string"),
    ({"messages": [{"role": "user"}]}, "has no 'content'"),
    ({"messages": [{"role": "", "content": "x"}]}, "prompt.messages[0].role is empty"),
    ({"messages": [{"role": "user", "content": 1}]}, "content is the integer 1"),
    ({"text": "x"}, "a chat fixture expects exactly 'messages'"),
]


@pytest.mark.parametrize(("prompt", "fragment"), CHAT_BAD)
def test_bad_chat_prompt(tmp_path: Path, prompt: dict[str, Any], fragment: str) -> None:
    call = {
        "unit": "u",
        "seq": 0,
        "role": "r",
        "prompt": prompt,
        "max_tokens": 4,
        "completion_tokens": 1,
    }
    d = write(tmp_path / "fx", [call], dict(META, kind="chat"))
    with pytest.raises(FixtureError) as ei:
        load_workload(d)
    assert (ei.value.line, ei.value.path) == (1, str(d / "calls.jsonl"))
    assert fragment in ei.value.what


def test_text_prompt_tokens_must_be_positive(tmp_path: Path) -> None:
    call = {
        "unit": "u",
        "seq": 0,
        "role": "r",
        "prompt": {"text": "x"},
        "max_tokens": 4,
        "completion_tokens": 1,
        "prompt_tokens": 0,
    }
    with pytest.raises(FixtureError, match=r"calls.jsonl:1: prompt_tokens is 0"):
        load_workload(write(tmp_path / "fx", [call], dict(META, kind="text")))


BAD_META: list[tuple[Any, int, str]] = [
    ("", 1, "is empty"),
    ('{\n  "name": 1,\n', 3, "not valid JSON"),
    ("[]", 1, "expected a JSON object"),
    ({**META, "kind": "audio"}, 4, "kind is 'audio'; expected one of tokens, text, chat"),
    ({**META, "format": 2}, 2, "format is 2; expected 1"),
    ({**META, "format": 1.0}, 2, "format is 1.0; expected 1"),
    ({**META, "cap": 0}, 5, "cap is 0; expected an integer >= 1"),
    ({**META, "output_policy": "eos"}, 6, "output_policy is 'eos'"),
    ({**META, "recipe": []}, 8, "recipe is a list; expected an object or null"),
    ({**META, "color": "red"}, 9, "unknown field 'color'"),
    ({k: v for k, v in META.items() if k != "name"}, 1, "missing field 'name'"),
    ({**META, "name": ""}, 3, "name is empty"),
]


@pytest.mark.parametrize(("meta", "line", "fragment"), BAD_META)
def test_bad_fixture_json(tmp_path: Path, meta: Any, line: int, fragment: str) -> None:
    text = meta if isinstance(meta, str) else json.dumps(meta, indent=2)
    d = write(tmp_path / "fx", GOOD, text)
    with pytest.raises(FixtureError) as ei:
        load_workload(d)
    assert ei.value.path == str(d / "fixture.json")
    assert ei.value.line == line
    assert fragment in ei.value.what


def test_missing_files_and_empty_fixture(tmp_path: Path) -> None:
    (tmp_path / "nofix").mkdir()
    with pytest.raises(FixtureError, match=r"no fixture\.json; expected a fixture directory"):
        load_workload(tmp_path / "nofix")
    (tmp_path / "nocalls").mkdir()
    (tmp_path / "nocalls" / "fixture.json").write_text(json.dumps(META))
    with pytest.raises(FixtureError, match=r"no calls\.jsonl"):
        load_workload(tmp_path / "nocalls")
    with pytest.raises(FixtureError) as ei:
        load_workload(write(tmp_path / "empty", "\n\n"))
    assert ei.value.what.startswith("holds no calls") and ei.value.line is None
    with pytest.raises(FixtureError, match="no such fixture; expected a directory or a fixture"):
        load_workload(tmp_path / "missing")
    with pytest.raises(FixtureError, match=r"mini.*seed-12.*seed-6"):
        load_workload("no-such-fixture-name")


def test_nothing_half_loaded(tmp_path: Path) -> None:
    """A bad last line refuses the whole fixture (no partial Workload escapes)."""
    lines = [json.dumps(c) for c in GOOD] + ["{"]
    with pytest.raises(FixtureError) as ei:
        load_workload(write(tmp_path / "fx", "\n".join(lines)))
    assert ei.value.line == 4


# --------------------------------------------------------------------------- fuzzing


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.lists(st.binary(max_size=120), min_size=0, max_size=6))
def test_fuzz_random_bytes(tmp_path: Path, data: list[bytes]) -> None:
    d = write(tmp_path / "fz", b"\n".join(data))
    try:
        w = load_workload(d)
    except FixtureError as e:
        assert e.path.endswith("calls.jsonl") and e.what
    else:
        assert w.n_calls >= 1


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 70)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    mutations=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from(
                [
                    "unit",
                    "seq",
                    "role",
                    "prompt",
                    "max_tokens",
                    "completion_tokens",
                    "prompt_tokens",
                    "sampling",
                    "zzz",
                ]
            ),
            _json_values | st.just("<drop>"),
        ),
        max_size=4,
    ),
    kind=st.sampled_from(["tokens", "text", "chat"]),
)
def test_fuzz_mutated_calls(
    tmp_path: Path, mutations: list[tuple[int, str, Any]], kind: str
) -> None:
    calls = [dict(c) for c in GOOD]
    for i, field, value in mutations:
        if value == "<drop>":
            calls[i].pop(field, None)
        else:
            calls[i][field] = value
    d = write(tmp_path / "fm", calls, dict(META, kind=kind))
    try:
        w = load_workload(d)
    except FixtureError as e:
        assert e.path.endswith("calls.jsonl") and e.line in (1, 2, 3)
    else:
        assert w.kind == kind and w.n_calls == 3


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(meta=st.dictionaries(st.sampled_from([*META, "x"]), _json_values, max_size=8))
def test_fuzz_fixture_json(tmp_path: Path, meta: dict[str, Any]) -> None:
    d = write(tmp_path / "fj", GOOD, {**META, **meta})
    try:
        w = load_workload(d)
    except FixtureError as e:
        assert e.path.endswith(("fixture.json", "calls.jsonl")) and e.what
    else:
        assert w.n_calls == 3


# --------------------------------------------------------------------------- token ids


def test_token_ids_deterministic_shared_and_in_range() -> None:
    w = load_workload("seed-6")
    a, b = w.units[0].calls[0], w.units[1].calls[0]  # same role, different units
    assert a.segments is not None and b.segments is not None
    assert a.segments[0].key == b.segments[0].key and a.segments[1].key != b.segments[1].key
    ia, ib = token_ids(a, 151936), token_ids(b, 151936)
    n0 = a.segments[0].length
    assert ia[:n0] == ib[:n0]  # shared system prompt: identical ids
    assert ia[n0 : n0 + 50] != ib[n0 : n0 + 50]  # different unit data
    assert len(ia) == a.prompt_tokens and ia == token_ids(a, 151936)
    # the unit's data block is the same ids in every call of the unit
    c = w.units[0].calls[3]
    assert c.segments is not None and c.segments[1].key == a.segments[1].key
    ic = token_ids(c, 151936)
    na1 = a.segments[1].length
    assert ic[c.segments[0].length : c.segments[0].length + na1] == ia[n0 : n0 + na1]
    # unique tails differ between calls
    assert ia[-a.segments[-1].length :][:20] != ic[-c.segments[-1].length :][:20]
    small = token_ids(a, 10, reserved_low=4)
    assert min(small) >= 4 and max(small) <= 9 and len(set(small)) == 6
    assert set(token_ids(a, 5, reserved_low=4)) == {4}


def test_token_ids_same_key_same_ids_everywhere(tmp_path: Path) -> None:
    w = load_workload(write(tmp_path / "fx", GOOD))
    x, y = w.calls[0], w.calls[1]
    assert token_ids(x, 1000)[:5] == token_ids(y, 1000)[:5]
    with pytest.raises(ValueError, match="reserved_low"):
        token_ids(x, 4, reserved_low=4)


def test_token_ids_fast() -> None:
    w = load_workload("seed-12")
    longest = max(w.calls, key=lambda c: c.prompt_tokens or 0)
    assert longest.prompt_tokens is not None and longest.prompt_tokens >= 20000
    best = min(_timed(lambda: token_ids(longest, 151936)) for _ in range(10))
    assert best < 0.010, f"{best * 1e3:.2f} ms for {longest.prompt_tokens} ids"


def _timed(f: Any) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


# --------------------------------------------------------------------------- committed fixtures


def test_seed6_exact() -> None:
    w = load_workload("seed-6")
    s = compute(w)
    assert (s["units"], s["calls"]) == (6, 105)
    assert (s["calls_per_unit_min"], s["calls_per_unit_max"]) == (17, 18)
    assert s["prompt_tokens"] == 664_557
    assert s["prompt_tokens_max"] <= 22_000
    assert 1_200 <= s["completion_tokens_mean"] <= 1_700
    assert s["capped_calls"] >= 1 and w.cap == 4096 and w.output_policy == "replay"
    assert all(c.max_tokens == 4096 for c in w.calls)
    assert all(c.completion_tokens == 4096 for c in w.calls if c.hit_cap)


def test_seed12_shape() -> None:
    w = load_workload("seed-12")
    s = compute(w)
    assert s["units"] == 12 and (s["calls_per_unit_min"], s["calls_per_unit_max"]) == (17, 18)
    assert 8_000 <= s["prompt_tokens_mean"] <= 8_600
    assert 20_000 <= s["prompt_tokens_max"] <= 22_000
    assert 6.3 <= s["io_ratio"] <= 6.9
    assert w.cap == 4096 and s["capped_calls"] >= 1 and w.output_policy == "replay"


def test_mini_shape() -> None:
    w = load_workload("mini")
    s = compute(w)
    assert w.kind == "tokens" and w.output_policy == "replay" and w.cap == 128
    assert s["units"] == 8 and (s["calls_per_unit_min"], s["calls_per_unit_max"]) == (17, 18)
    assert 2_000 <= s["prompt_tokens_mean"] <= 2_800 and s["prompt_tokens_max"] <= 6_000
    assert 40 <= s["completion_tokens_mean"] <= 56 and s["io_ratio"] >= 10
    assert s["capped_calls"] >= 1 and s["shared_prefix_share"] > 0.1
    assert (w.path / "calls.jsonl").stat().st_size < 64_000


@pytest.mark.parametrize("name", ["mini", "seed-6", "seed-12"])
def test_committed_fixture_regenerates_byte_for_byte(tmp_path: Path, name: str) -> None:
    d = FIXTURES / name
    recipe = load_recipe(d / "recipe.json")
    out = synth(recipe, tmp_path / name)
    for f in ("fixture.json", "calls.jsonl", "recipe.json"):
        assert (out / f).read_bytes() == (d / f).read_bytes(), f
    assert load_workload(d).recipe == json.loads((d / "recipe.json").read_text())


# --------------------------------------------------------------------------- generator


def _recipe(**over: Any) -> Recipe:
    raw = json.loads((FIXTURES / "mini" / "recipe.json").read_text())
    raw.update(over)
    return recipe_from_dict(raw)


def test_synth_exact_target_and_structure() -> None:
    w_files = render(_recipe(target_prompt_tokens=300_001, seed=3))
    calls = [json.loads(x) for x in w_files["calls.jsonl"].decode().splitlines()]
    assert sum(sum(s["len"] for s in c["prompt"]["segments"]) for c in calls) == 300_001
    assert render(_recipe(target_prompt_tokens=300_001, seed=3)) == w_files
    assert render(_recipe(target_prompt_tokens=300_001, seed=4)) != w_files
    c = next(c for c in calls if c["seq"] == 7)
    keys = [s["key"] for s in c["prompt"]["segments"]]
    assert keys[0].startswith("sys:") and keys[1] == f"unit:{c['unit']}:data" and keys[-1] is None
    assert keys[2:4] == [f"unit:{c['unit']}:out:5", f"unit:{c['unit']}:out:6"]  # carried outputs


def test_synth_total_calls_exact() -> None:
    files = render(_recipe(total_calls=139))
    assert len(files["calls.jsonl"].decode().splitlines()) == 139


@pytest.mark.parametrize(
    ("over", "fragment"),
    [
        ({"units": 0}, "units must be >= 1"),
        ({"capped_share": 1.5}, "capped_share"),
        ({"cap": "64"}, "cap: expected an integer"),
        ({"colour": 1}, "unknown field 'colour'"),
        ({"prompt_max": 100}, "leave no room under prompt_max 100"),
        ({"target_prompt_tokens": 10}, "cannot be reached"),
        ({"total_calls": 3}, "total_calls cannot be reached"),
    ],
)
def test_bad_recipe_is_user_error(over: dict[str, Any], fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        render(_recipe(**over))


def test_synth_refuses_unrelated_directory(tmp_path: Path) -> None:
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="holds files benchkit did not write"):
        synth(_recipe(), tmp_path / "precious")
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"
    out = synth(_recipe(), tmp_path / "fx")
    synth(_recipe(seed=9), out)  # replacing a fixture directory is fine
    assert load_workload(out).recipe == _recipe(seed=9).to_json()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fx", "precious"]  # no temp left


# --------------------------------------------------------------------------- stats


def test_shared_prefix_share_counts_only_prefixes(tmp_path: Path) -> None:
    calls = [
        tok_call("u0", 0, [("sys:a", 10), ("d0", 20), (None, 5)]),
        tok_call("u0", 1, [("sys:b", 10), ("d0", 20), (None, 5)]),  # d0 seen, not as prefix
        tok_call("u1", 0, [("sys:a", 10), ("d1", 20), (None, 5)]),  # sys:a prefix reused
        tok_call("u1", 1, [("sys:a", 10), ("d1", 20), (None, 5)]),  # sys:a + d1 reused
    ]
    s = compute(load_workload(write(tmp_path / "fx", calls)))
    assert s["shared_prefix_share"] == round((10 + 30) / 140, 4)
    assert s["prompt_tokens"] == 140 and s["io_ratio"] == 3.5


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit.workload", *args],
        capture_output=True,
        text=True,
        cwd=repo_root(),
        check=False,
    )


def test_stats_cli_json() -> None:
    r = _cli("stats", "fixtures/workloads/seed-6", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert list(s) == [
        "units",
        "calls",
        "calls_per_unit_min",
        "calls_per_unit_max",
        "prompt_tokens",
        "prompt_tokens_mean",
        "prompt_tokens_max",
        "completion_tokens",
        "completion_tokens_mean",
        "io_ratio",
        "capped_calls",
        "shared_prefix_share",
    ]
    assert (s["units"], s["calls"], s["prompt_tokens"]) == (6, 105, 664_557)
    assert s["prompt_tokens_mean"] == round(664_557 / 105, 1)
    assert 0 < s["shared_prefix_share"] < 1


def test_stats_cli_text_and_errors(tmp_path: Path) -> None:
    r = _cli("stats", "mini")
    assert r.returncode == 0 and "units          8" in r.stdout and "shared prefix" in r.stdout
    r = _cli("stats", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no such fixture" in r.stderr
    assert "Traceback" not in r.stderr
    d = write(tmp_path / "bad", "{}\n")
    r = _cli("stats", str(d), "--json")
    assert r.returncode == 2 and r.stderr.strip().endswith("calls.jsonl:1: missing field 'unit'")


def test_synth_cli(tmp_path: Path) -> None:
    r = _cli(
        "synth", "--recipe", str(FIXTURES / "mini" / "recipe.json"), "--out", str(tmp_path / "m")
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m" / "calls.jsonl").read_bytes() == (
        FIXTURES / "mini" / "calls.jsonl"
    ).read_bytes()
    bad = tmp_path / "r.json"
    bad.write_text("{")
    r = _cli("synth", "--recipe", str(bad), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr


def test_call_is_frozen() -> None:
    c = load_workload("mini").calls[0]
    assert isinstance(c, Call)
    with pytest.raises(AttributeError):
        c.seq = 5  # type: ignore[misc]

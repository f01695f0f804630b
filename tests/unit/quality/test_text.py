"""The text model files are compared on (benchkit.quality.text): drawn from a token workload
and written out with a synthetic model's vocabulary, it is the same every time, valid UTF-8
llama.cpp's tokenizer accepts (no invalid code point, no NUL), and long enough."""

from __future__ import annotations

from pathlib import Path

from benchkit.models.synthetic import SynthRecipe, write_model
from benchkit.paths import repo_root
from benchkit.quality.text import detokenizer, n_vocab, workload_text

DECODE_16 = repo_root() / "fixtures" / "workloads" / "decode-16"


def test_a_token_workload_is_written_out_as_valid_text_the_same_every_time(
    tmp_path: Path,
) -> None:
    model = write_model(SynthRecipe(seed=0), tmp_path / "m.gguf")
    text, what = workload_text(DECODE_16, model, 4096)
    again, _ = workload_text(DECODE_16, model, 4096)
    assert text == again
    text.decode("utf-8")  # raises on an invalid code point
    assert b"\x00" not in text
    assert (what["workload"], what["kind"]) == ("decode-16", "tokens") and what["calls"] > 0
    # A text tokenizes into no more tokens than it has bytes: fewer than 4096 bytes could
    # never fill the 4096 tokens asked (the real run is checked in the slow test).
    assert len(text) >= 4096


def test_the_byte_tokens_write_out_their_bytes(tmp_path: Path) -> None:
    model = write_model(SynthRecipe(seed=0), tmp_path / "m.gguf")
    detok = detokenizer(model)
    # The vocabulary starts with the 256 byte tokens, in byte order (GPT-2's table).
    assert detok([ord("a"), ord("b"), ord(" ")]) == b"ab "
    assert n_vocab(model) == SynthRecipe(seed=0).n_vocab


def test_a_text_workload_gives_its_prompts_each_once(tmp_path: Path) -> None:
    import json

    wl = tmp_path / "wl"
    wl.mkdir()
    fixture = {"format": 1, "name": "t", "kind": "text", "cap": 8, "output_policy": "replay",
               "description": "", "recipe": None}  # fmt: skip
    (wl / "fixture.json").write_text(json.dumps(fixture))
    calls = [
        {"unit": "u0", "seq": i, "role": "r", "prompt": {"text": p}, "max_tokens": 8,
         "completion_tokens": 8}
        for i, p in enumerate(["Ünïcode first.", "second", "second"])
    ]  # fmt: skip
    (wl / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    model = write_model(SynthRecipe(seed=0), tmp_path / "m.gguf")
    text, what = workload_text(wl, model, 4096)
    # Too short for 4096 tokens: every distinct prompt, in file order; the run says if short.
    assert text == "Ünïcode first.\nsecond".encode()
    assert (what["kind"], what["calls"]) == ("text", 2)

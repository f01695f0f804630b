"""A draft model's vocabulary checked against the target's as llama-server checks it
(benchkit.models.vocab): small GGUF files written here, one sentence naming both models and
the fix for a pair llama-server would refuse; the real Qwen pair where it is cached."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gguf
import pytest

from benchkit.config.schema import ModelConfig
from benchkit.errors import UserError
from benchkit.models.fetch import model_from_conf, packaged_path
from benchkit.models.package import PackagedGGUF
from benchkit.models.vocab import check_pair, mismatch, read_vocab
from benchkit.paths import cache_dir

TOKENS = [f"t{i}" for i in range(300)]


def gguf_file(
    path: Path,
    tokens: list[str],
    *,
    model: str = "gpt2",
    bos: int = 1,
    add_bos: bool = False,
) -> Path:
    """A GGUF holding only metadata: the tokenizer keys read, and others around them that the
    reader must step over (a string, a number, an array of numbers and one of strings)."""
    w = gguf.GGUFWriter(path, "qwen3moe")
    w.add_name("test")
    w.add_context_length(4096)
    w.add_tokenizer_model(model)
    w.add_token_list(tokens)
    w.add_token_types([1] * len(tokens))
    w.add_token_merges(["t 1", "t 2"])
    w.add_bos_token_id(bos)
    w.add_eos_token_id(2)
    w.add_add_bos_token(add_bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


Write = Callable[..., Path]


@pytest.fixture
def write(tmp_path: Path) -> Write:
    def _write(name: str, tokens: list[str], **kw: object) -> Path:
        return gguf_file(tmp_path / f"{name}.gguf", tokens, **kw)  # type: ignore[arg-type]

    return _write


def test_the_metadata_is_read_as_written(write: Write) -> None:
    v = read_vocab(write("a", TOKENS, bos=7, add_bos=True))
    assert v is not None
    assert (v.model, len(v.tokens), v.tokens[5], v.bos, v.eos, v.add_bos, v.add_eos) == (
        "gpt2", 300, b"t5", 7, 2, True, None,
    )  # fmt: skip


def test_the_pairs_llama_server_accepts_and_refuses(write: Write) -> None:
    target = read_vocab(write("t", TOKENS))
    assert target is not None

    def against(tokens: list[str], **kw: object) -> str | None:
        draft = read_vocab(write(f"d{len(tokens)}-{sorted(kw.items())}", tokens, **kw))
        assert draft is not None
        return mismatch(target, draft)

    assert against(TOKENS) is None
    # Up to 128 tokens more or fewer (Qwen's padded vocabularies), and the first 5 tokens
    # (special tokens) are not compared.
    assert against(TOKENS[:172]) is None
    assert against(["x"] * 5 + TOKENS[5:]) is None
    assert against(TOKENS[:171]) == "171 tokens against 300"
    assert against([*TOKENS[:10], "other", *TOKENS[11:]]) == "token 10 differs"
    assert against(TOKENS, model="llama") == "tokenizer llama against gpt2"
    assert against(TOKENS, add_bos=True) == "one adds a BOS token and the other does not"


def test_a_mismatched_pair_is_one_sentence_naming_both_and_the_fix(write: Write) -> None:
    target, draft = ModelConfig(name="big"), ModelConfig(name="small")
    t, d = write("t", TOKENS), write("d", TOKENS[:100])
    with pytest.raises(UserError) as err:
        check_pair(target, t, draft, d)
    said = str(err.value)
    assert said.startswith("spec=draft: the draft model small does not share the vocabulary")
    assert "target big (100 tokens against 300)" in said
    assert "model@spec.draft_model=" in said and said.count(". ") == 0
    check_pair(target, t, draft, write("same", TOKENS))  # accepted: nothing raised


def test_a_file_without_a_token_list_is_left_to_llama_server(write: Write, tmp_path: Path) -> None:
    not_gguf = tmp_path / "x.gguf"
    not_gguf.write_bytes(b"GGUF")
    assert read_vocab(not_gguf) is None
    check_pair(ModelConfig(name="a"), write("t", TOKENS), ModelConfig(name="b"), not_gguf)


def test_packaged_models_with_one_token_list_hash_are_not_read(tmp_path: Path) -> None:
    pkg = PackagedGGUF(vocab_sha256="ab" * 32)
    # Neither file exists: the recorded hashes decide (each file's bytes are hashed on use).
    check_pair(
        ModelConfig(name="a", package=pkg), tmp_path / "no-a.gguf",
        ModelConfig(name="b", package=pkg), tmp_path / "no-b.gguf",
    )  # fmt: skip


def _cached(name: str) -> Path | None:
    model = model_from_conf(name)
    assert model.package is not None
    path = packaged_path(model.package, cache_dir())
    return path if path.exists() else None


@pytest.mark.skipif(
    _cached("qwen2.5-coder-1.5b") is None or _cached("smollm2-135m") is None,
    reason="the real models are not cached",
)
def test_the_real_qwen_pair_is_accepted_and_smollm2_refused() -> None:
    files = {n: _cached(n) for n in ("qwen2.5-coder-1.5b", "smollm2-135m")}
    target = model_from_conf("qwen2.5-coder-1.5b")
    small = model_from_conf("smollm2-135m")
    qwen, smol = files["qwen2.5-coder-1.5b"], files["smollm2-135m"]
    assert qwen is not None and smol is not None
    with pytest.raises(UserError, match=r"49,152 tokens against 151,936"):
        check_pair(target, qwen, small, smol)
    # The 0.5B's file read, not its recorded hash: the same token list as the 1.5B's.
    draft = _cached("qwen2.5-coder-0.5b")
    if draft is not None:
        t, d = read_vocab(qwen), read_vocab(draft)
        assert t is not None and d is not None and mismatch(t, d) is None

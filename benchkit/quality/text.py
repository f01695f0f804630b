"""The text a sweep's model files are compared on (benchkit.quality.models), drawn from the
workload deterministically: the prompts of its calls in file order, each distinct prompt once,
until there are enough tokens. A token fixture's prompts are token ids, so they are written out
as text with the reference file's vocabulary (read from its GGUF), valid UTF-8 only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypedDict


def _gguf_vocab(path: Path) -> tuple[str, list[str], list[int]]:
    """(tokenizer model, token texts, token types) of a GGUF file."""
    import gguf

    reader = gguf.GGUFReader(str(path))

    def strings(key: str) -> list[str]:
        f = reader.fields[key]
        return [bytes(f.parts[i]).decode("utf-8", errors="replace") for i in f.data]

    kind = reader.fields["tokenizer.ggml.model"]
    tokens = strings("tokenizer.ggml.tokens")
    types_field = reader.fields.get("tokenizer.ggml.token_type")
    types = (
        [int(types_field.parts[i][0]) for i in types_field.data]
        if types_field is not None
        else [1] * len(tokens)
    )
    return bytes(kind.parts[kind.data[0]]).decode(), tokens, types


def n_vocab(path: Path) -> int:
    return len(_gguf_vocab(path)[1])


def detokenizer(path: Path) -> Callable[[Sequence[int]], bytes]:
    """Token ids to the bytes they stand for, with the file's vocabulary; control and unused
    tokens are left out. Raises ValueError for a tokenizer that is neither byte-level BPE
    (gpt2: Qwen, Llama 3, GLM) nor SentencePiece (llama)."""
    from benchkit.models.tokenizer import _byte_tokens

    kind, tokens, types = _gguf_vocab(path)
    # Token types: 1 normal, 6 byte; 2 unknown, 3 control, 4 user-defined, 5 unused.
    keep = [t in (1, 4, 6) for t in types]
    if kind == "gpt2":
        back = {c: b for b, c in enumerate(_byte_tokens())}

        def one(t: str) -> bytes:
            return bytes(back[c] for c in t if c in back)

    elif kind == "llama":

        def one(t: str) -> bytes:
            m = re.fullmatch(r"<0x([0-9A-Fa-f]{2})>", t)
            return bytes([int(m.group(1), 16)]) if m else t.replace("▁", " ").encode()

    else:
        raise ValueError(f"its tokenizer is {kind!r}, which benchkit cannot write out as text")
    pieces = [one(t) if k else b"" for t, k in zip(tokens, keep, strict=True)]
    return lambda ids: b"".join(pieces[i] for i in ids if 0 <= i < len(pieces))


class TextSource(TypedDict):
    """What a reference text is, as models.json's `text` records it: the workload, its file,
    its kind, how many distinct calls gave text, and a sentence saying which."""

    workload: str
    path: str
    kind: str
    calls: int
    source: str


def workload_text(workload_path: Path, model: Path, tokens: int) -> tuple[bytes, TextSource]:
    """Text drawn from the workload for about `tokens` tokens, and what it is (models.json's
    `text`: workload, path, kind, calls, and `source`, a sentence saying which)."""
    from benchkit.quality.probe import _text_of
    from benchkit.workload.model import load_workload, token_ids

    wl = load_workload(workload_path)
    seen: set[bytes] = set()
    parts: list[bytes] = []
    size = 0
    if wl.kind == "tokens":
        detok = detokenizer(model)
        vocab = n_vocab(model)
        # Written-out ids tokenize back into fewer tokens (merges, and the bytes dropped
        # below): take four times as many.
        need = tokens * 4
        for call in wl.calls:
            ids = token_ids(call, vocab)
            # Random byte tokens are not UTF-8, and llama.cpp's tokenizer throws on an invalid
            # code point ("invalid codepoint"): only the valid text is kept, and no NUL.
            text = detok(ids).decode("utf-8", "ignore").replace("\x00", "").encode()
            if text and text not in seen:
                seen.add(text)
                parts.append(text)
                size += len(ids)
            if size >= need:
                break
        how = "token ids written out with the reference file's vocabulary"
    else:
        # About four bytes a token in real text; a few more is harmless (--chunks cuts it).
        need = tokens * 6
        for call in wl.calls:
            text = _text_of(call).encode()
            if text and text not in seen:
                seen.add(text)
                parts.append(text)
                size += len(text)
            if size >= need:
                break
        how = "prompt texts"
    source = (
        f"workload {wl.name} ({wl.path}): the prompts of its first {len(parts)} distinct calls "
        f"in file order, {how}"
    )
    what = TextSource(
        workload=wl.name, path=str(wl.path), kind=wl.kind, calls=len(parts), source=source
    )
    return b"\n".join(parts), what

"""Whether a draft model can draft for a target: their GGUF vocabularies compared as
llama-server compares them before it drafts (llama.cpp common/speculative.cpp,
`common_speculative_are_compatible`), so a mismatched pair is refused in one sentence before a
server starts, not by a server log a job points at.

llama.cpp accepts a pair whose tokenizer models match, whose BOS/EOS agree where the
vocabularies add them, whose sizes differ by at most 128 tokens, and whose token texts agree
from token 5 on. Only the metadata is read (a streaming parse of the key-value section; the
`gguf` package's reader takes seconds over a 150,000-token list), once per file per process.
Two packaged models whose configs record the same token-list hash (`package.vocab_sha256`,
checked against the file when it was fetched, its bytes on every use) are not read at all.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from benchkit.config.schema import ModelConfig
from benchkit.errors import UserError

# llama.cpp's SPEC_VOCAB_MAX_SIZE_DIFFERENCE and SPEC_VOCAB_CHECK_START_TOKEN_ID.
MAX_SIZE_DIFFERENCE = 128
CHECK_FROM = 5

# GGUF value types (gguf.GGUFValueType) and the byte size of the fixed-size ones.
_STRING, _ARRAY = 8, 9
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_INT = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 7: "<?", 10: "<Q", 11: "<q"}
# The keys read; every other one is skipped by its size.
_KEYS = {
    b"tokenizer.ggml.model",
    b"tokenizer.ggml.tokens",
    b"tokenizer.ggml.bos_token_id",
    b"tokenizer.ggml.eos_token_id",
    b"tokenizer.ggml.add_bos_token",
    b"tokenizer.ggml.add_eos_token",
}


@dataclass(frozen=True)
class Vocab:
    """What a GGUF file records of its vocabulary (None: not recorded)."""

    model: str | None
    tokens: tuple[bytes, ...]
    bos: int | None
    eos: int | None
    add_bos: bool | None
    add_eos: bool | None


_read: dict[tuple[str, int, int], Vocab | None] = {}


def read_vocab(path: Path) -> Vocab | None:
    """The file's vocabulary metadata; None where it is no GGUF benchkit can read (version 1,
    cut short, or no token list): llama-server then judges the pair itself."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _read:
        try:
            _read[key] = _parse(path)
        except (OSError, ValueError, struct.error, UnicodeDecodeError):
            _read[key] = None
    return _read[key]


def _parse(path: Path) -> Vocab | None:
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF" or struct.unpack_from("<I", buf, 4)[0] < 2:
            return None
        n_kv = struct.unpack_from("<Q", buf, 16)[0]
        pos, found = 24, {}
        for _ in range(n_kv):
            klen = struct.unpack_from("<Q", buf, pos)[0]
            name = bytes(buf[pos + 8 : pos + 8 + klen])
            vtype = struct.unpack_from("<I", buf, pos + 8 + klen)[0]
            pos += 12 + klen
            value, pos = _value(buf, pos, vtype, keep=name in _KEYS)
            if name in _KEYS:
                found[name.decode()] = value
            if len(found) == len(_KEYS):
                break
    tokens = found.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        return None

    def num(k: str) -> int | None:
        v = found.get(f"tokenizer.ggml.{k}")
        return int(v) if isinstance(v, int) else None

    def flag(k: str) -> bool | None:
        v = found.get(f"tokenizer.ggml.{k}")
        return bool(v) if isinstance(v, bool) else None

    model = found.get("tokenizer.ggml.model")
    return Vocab(
        model=model.decode() if isinstance(model, bytes) else None,
        tokens=tuple(tokens),
        bos=num("bos_token_id"),
        eos=num("eos_token_id"),
        add_bos=flag("add_bos_token"),
        add_eos=flag("add_eos_token"),
    )


def _value(buf: mmap.mmap, pos: int, vtype: int, *, keep: bool) -> tuple[object, int]:
    """The value of type `vtype` at `pos` (None unless `keep`) and the position after it."""
    if vtype in _FIXED:
        size = _FIXED[vtype]
        fmt = _INT.get(vtype)
        return (struct.unpack_from(fmt, buf, pos)[0] if keep and fmt else None), pos + size
    if vtype == _STRING:
        n = struct.unpack_from("<Q", buf, pos)[0]
        return (bytes(buf[pos + 8 : pos + 8 + n]) if keep else None), pos + 8 + n
    if vtype != _ARRAY:
        raise ValueError(f"unknown GGUF value type {vtype}")
    etype, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if etype in _FIXED:
        return None, pos + count * _FIXED[etype]
    if etype != _STRING:  # arrays of arrays: walked element by element
        for _ in range(count):
            _, pos = _value(buf, pos, etype, keep=False)
        return None, pos
    out: list[bytes] = []
    unpack = struct.Struct("<Q").unpack_from
    for _ in range(count):
        n = unpack(buf, pos)[0]
        if keep:
            out.append(bytes(buf[pos + 8 : pos + 8 + n]))
        pos += 8 + n
    return (out if keep else None), pos


def mismatch(target: Vocab, draft: Vocab) -> str | None:
    """Why llama-server would refuse `draft` for `target`, in a few words; None where it
    would not."""
    if target.model and draft.model and target.model != draft.model:
        return f"tokenizer {draft.model} against {target.model}"
    for what, add_t, add_d, id_t, id_d in (
        ("BOS", target.add_bos, draft.add_bos, target.bos, draft.bos),
        ("EOS", target.add_eos, draft.add_eos, target.eos, draft.eos),
    ):
        if add_t is not None and add_d is not None and add_t != add_d:
            return f"one adds a {what} token and the other does not"
        if add_t and add_d and id_t is not None and id_d is not None and id_t != id_d:
            return f"{what} token {id_d} against {id_t}"
    n_t, n_d = len(target.tokens), len(draft.tokens)
    if abs(n_t - n_d) > MAX_SIZE_DIFFERENCE:
        return f"{n_d:,} tokens against {n_t:,}"
    for i in range(CHECK_FROM, min(n_t, n_d)):
        if target.tokens[i] != draft.tokens[i]:
            return f"token {i} differs"
    return None


def check_pair(
    target: ModelConfig, target_file: Path, draft: ModelConfig, draft_file: Path
) -> None:
    """Refuse a draft model whose vocabulary llama-server would refuse for the target, in one
    sentence naming both and the fix; nothing where both files are the same, both packaged
    models record the same token list, or a file records none."""
    if target_file.resolve() == draft_file.resolve():
        return
    # A packaged file's token list was hashed when it was fetched (and its bytes are hashed on
    # every use); a file the user named may be any other.
    t_pkg = target.package if target.path is None else None
    d_pkg = draft.package if draft.path is None else None
    if t_pkg and d_pkg and t_pkg.vocab_sha256 and t_pkg.vocab_sha256 == d_pkg.vocab_sha256:
        return
    t_vocab, d_vocab = read_vocab(target_file), read_vocab(draft_file)
    if t_vocab is None or d_vocab is None:
        return
    why = mismatch(t_vocab, d_vocab)
    if why is not None:
        raise UserError(
            f"spec=draft: the draft model {draft.name} does not share the vocabulary of the "
            f"target {target.name} ({why}), so llama-server cannot draft with it: name a draft "
            "of the target's tokenizer with model@spec.draft_model=GROUP (qwen2.5-coder-0.5b "
            "for model=qwen2.5-coder-1.5b) or spec.draft_model.path=FILE.gguf."
        )

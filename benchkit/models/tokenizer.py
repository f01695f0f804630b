"""The synthetic model's tokenizer: Qwen's byte-level BPE shape, written into the GGUF.

256 byte tokens, as many merges as the recipe's vocabulary leaves room for, and Qwen's
special tokens last. Prompts arrive as token ids, so which merges they are does not matter;
that every merge result is in the vocabulary, which llama.cpp checks, does.
"""

from __future__ import annotations

from collections.abc import Iterator

import gguf

from benchkit.models.recipe import SynthRecipe

# Qwen's special tokens, placed after the byte tokens and merges.
SPECIALS: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
N_BYTES = 256


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode table: byte b is the token text at index b."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars: dict[int, int] = {b: b for b in printable}
    extra = 0
    for b in range(N_BYTES):
        if b not in chars:
            chars[b] = N_BYTES + extra
            extra += 1
    return [chr(chars[b]) for b in range(N_BYTES)]


def _merges(byte_tokens: list[str], count: int) -> Iterator[tuple[str, str]]:
    """`count` BPE merges whose results are all distinct and not byte tokens.

    Each merge appends one byte to an earlier token (bytes first, then merged ones), so any
    vocab size can be filled and every merge result is a token in the vocab, which is all
    llama.cpp checks. Which merges they are does not matter: prompts arrive as token ids.
    """
    seen = set(byte_tokens)
    lefts = list(byte_tokens)
    made = i = 0
    while made < count:
        left = lefts[i]
        i += 1
        for right in byte_tokens:
            merged = left + right
            if merged in seen:
                continue
            seen.add(merged)
            lefts.append(merged)
            yield left, right
            made += 1
            if made == count:
                return


def add_tokenizer(writer: gguf.GGUFWriter, recipe: SynthRecipe) -> None:
    byte_tokens = _byte_tokens()
    n_merges = recipe.n_vocab - N_BYTES - len(SPECIALS)
    merges = list(_merges(byte_tokens, n_merges))
    tokens = byte_tokens + [a + b for a, b in merges] + list(SPECIALS)
    types = [gguf.TokenType.NORMAL] * (len(tokens) - len(SPECIALS)) + [
        gguf.TokenType.CONTROL
    ] * len(SPECIALS)
    special_id = {text: len(tokens) - len(SPECIALS) + k for k, text in enumerate(SPECIALS)}

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in merges])
    writer.add_bos_token_id(special_id["<|endoftext|>"])
    writer.add_eos_token_id(special_id["<|im_end|>"])
    writer.add_eot_token_id(special_id["<|im_end|>"])
    writer.add_pad_token_id(special_id["<|endoftext|>"])
    # Qwen adds no BOS; the bench sends token ids and the prompt must stay exactly those.
    writer.add_add_bos_token(False)

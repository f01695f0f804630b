"""English's grammar for the report: none is needed. English is the catalogs' source
language (every message is written in it), so a field is the word as it is."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

# Latin script: matplotlib's default font draws it.
FONTS: tuple[str, ...] = ()


def inflect(word: str, spec: str) -> str:
    """English messages never put a grammar spec on a field; the word as it is."""
    return word


def finish(text: str) -> str:
    """The message as written."""
    return text


def span(lo: str, hi: str) -> str:
    """'48%–52%': both ends whole, an en dash between."""
    return f"{lo}–{hi}"


def study_unit(word: str) -> AbstractContextManager[None]:
    """English messages name the study's unit through their fields: nothing to set."""
    return nullcontext()

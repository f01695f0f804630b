"""English's grammar for the report: next to none. English is the catalogs' source language
(every message is written in it), so a field is the word as it is, save one that opens a
sentence (`{jobs:capital}`), whose first letter is a capital."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

# Latin script: matplotlib's default font draws it.
FONTS: tuple[str, ...] = ()


def inflect(word: str, spec: str) -> str:
    """The word as it is; with the spec `capital` (a field that opens a sentence), its first
    letter a capital. A translation leaves the spec out: Korean has no capitals."""
    return word[:1].upper() + word[1:] if spec == "capital" else word


def finish(text: str) -> str:
    """The message as written."""
    return text


def span(lo: str, hi: str) -> str:
    """'48%–52%': both ends whole, an en dash between."""
    return f"{lo}–{hi}"


def study_unit(word: str) -> AbstractContextManager[None]:
    """English messages name the study's unit through their fields: nothing to set."""
    return nullcontext()

"""The report's languages: a gettext catalog and a small grammar module for each.

Every message the report prints is English source text (the msgid) marked where it is written:
`tr(lang, "...", **fields)` in Python, `_("...", **fields)` in the templates (jinja2.ext.i18n),
`N_("...")` for a word kept in a table and translated where it is printed. `tr` looks the
message up in the language's catalog, `benchkit/locale/<lang>/LC_MESSAGES/benchkit.po` (Babel
compiles it; `python -m benchkit.report.lang` extracts, updates, compiles and checks them), and
fills its `{name}` fields with `str.format`.

Where languages differ in grammar, the translation says so and the language's module does it:
a field may carry a spec the module reads (Korean writes `{point:이}` and `lang/ko.py` picks 이
or 가 from how the point is read), and the module's `finish` may adjust a translated message
before it is filled (Korean names the study's unit by its own word), and its `span` writes a
range of numbers. English, the source, needs
neither (`lang/en.py`). So no report code asks which language it is writing.

Adding a language is its catalog (`python -m benchkit.report.lang init xx`, then translate the
.po) and `benchkit/report/lang/xx.py` with `FONTS`, `inflect`, `finish`, `span` and `study_unit`.
"""

from __future__ import annotations

import gettext
import importlib
from contextlib import AbstractContextManager
from functools import cache
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

SOURCE = "en"  # the language the messages are written in
DOMAIN = "benchkit"
LOCALE = Path(__file__).resolve().parents[2] / "locale"


class Grammar(Protocol):
    """What a language module provides (lang/en.py, lang/ko.py)."""

    # Font families a figure needs to draw the language's script, in order of preference;
    # empty when matplotlib's default font draws it.
    FONTS: tuple[str, ...]

    def inflect(self, word: str, spec: str) -> str: ...

    def finish(self, text: str) -> str: ...

    def span(self, lo: str, hi: str) -> str: ...

    def study_unit(self, word: str) -> AbstractContextManager[None]: ...


def N_(message: str) -> str:
    """Marks a message for extraction where it is stored; `tr` translates it where printed."""
    return message


def NC_(context: str, message: str) -> str:
    """N_ for a word translated in a context (`trc_marked` translates it where printed)."""
    return message


def languages() -> tuple[str, ...]:
    """The languages a report can be written in: the source and each one with a catalog and a
    module."""
    found = sorted(
        p.parent.parent.name
        for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po")
        if (Path(__file__).parent / f"{p.parent.parent.name}.py").is_file()
    )
    return (SOURCE, *[code for code in found if code != SOURCE])


def check_language(lang: str) -> str:
    """`lang` when a report can be written in it; otherwise one sentence naming the fix."""
    if lang not in languages():
        raise ValueError(
            f"study.lang={lang}: no such report language; choose one of "
            f"{', '.join(languages())} (a new one needs benchkit/locale/{lang}/LC_MESSAGES/"
            f"{DOMAIN}.po and benchkit/report/lang/{lang}.py: README, 'Languages and adding one')"
        )
    return lang


@cache
def grammar(lang: str) -> Grammar:
    module: ModuleType = importlib.import_module(f"{__name__}.{check_language(lang)}")
    return cast(Grammar, module)


@cache
def catalog(lang: str) -> gettext.NullTranslations:
    """The language's compiled catalog: its .mo when it is newer than the .po (`make
    translations` writes it; the wheel carries it), else the .po compiled here by Babel."""
    if check_language(lang) == SOURCE:
        return gettext.NullTranslations()
    po = LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        messages = read_po(f, locale=lang)
    buf = BytesIO()
    write_mo(buf, messages, use_fuzzy=False)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


class _Field:
    """A text field of a message: formatted with a spec, it asks the language's grammar."""

    __slots__ = ("grammar", "text")

    def __init__(self, text: str, grammar: Grammar) -> None:
        self.text = text
        self.grammar = grammar

    def __format__(self, spec: str) -> str:
        return self.grammar.inflect(self.text, spec) if spec else self.text

    def __str__(self) -> str:
        return self.text


def _fill(lang: str, text: str, fields: dict[str, object]) -> str:
    g = grammar(lang)
    text = g.finish(text)
    if not fields:
        return text
    return text.format_map(
        {k: _Field(v, g) if isinstance(v, str) else v for k, v in fields.items()}
    )


def tr(lang: str, message: str, /, **fields: object) -> str:
    """`message` in `lang`, its `{name}` fields filled from `fields`."""
    return _fill(lang, catalog(lang).gettext(message), fields)


def marked(lang: str, message: str, /, **fields: object) -> str:
    """`message` in `lang` where the message is not written here but kept in a table and
    marked there with `N_` (extraction finds it there; `tr` wants the literal)."""
    return _fill(lang, catalog(lang).gettext(message), fields)


def trc_marked(lang: str, context: str, message: str, /, **fields: object) -> str:
    """`marked` in a context (a table of words that `trc` translates elsewhere)."""
    return _fill(lang, catalog(lang).pgettext(context, message), fields)


def trn(lang: str, singular: str, plural: str, n: int, /, **fields: object) -> str:
    """The singular or plural message as `n` and the language's plural rule choose; `{n}`
    is filled with `n` unless `fields` says otherwise."""
    return _fill(lang, catalog(lang).ngettext(singular, plural, n), {"n": n, **fields})


def clauses(lang: str, parts: list[str]) -> str:
    """Clauses that could each be a sentence, joined as the language joins them: English with
    semicolons, Korean as sentences of their own."""
    # TRANSLATORS: the join between clauses that could each be a sentence (English "; ").
    return tr(lang, "; ").join(parts)


def span(lang: str, lo: str, hi: str) -> str:
    """A range of two formatted numbers as the language writes one ('48%–52%', '48~52%')."""
    return lo if lo == hi else grammar(lang).span(lo, hi)


def trc(lang: str, context: str, message: str, /, **fields: object) -> str:
    """`message` in `context` (a word that is translated differently in different places,
    such as a status beside a verdict)."""
    return _fill(lang, catalog(lang).pgettext(context, message), fields)

"""The translation catalogs' upkeep, with Babel: extract every message the report can print,
bring each language's .po up to date with them, compile the .mo files, and check that every
message has a translation whose fields match the English.

    python -m benchkit.report.lang check        # exit 1, naming each problem, when one is left
    python -m benchkit.report.lang update       # new messages into every .po, old ones out
    python -m benchkit.report.lang compile      # .po -> .mo beside it
    python -m benchkit.report.lang init xx      # a new language's empty catalog

Messages are found in benchkit's Python files (`tr`, `trn`, `trc`, `N_`) and in the templates
(`_`, `ngettext`, through jinja2.ext.i18n's extractor). A message must be a string literal where
it is marked, or no tool can find it: `check` fails on any other.
"""

from __future__ import annotations

import ast
import string
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from benchkit.report.lang import DOMAIN, LOCALE, SOURCE, languages

PACKAGE = Path(__file__).resolve().parents[2]  # benchkit/
# Babel keyword specs: the message's argument positions (1-based); "c" marks a context.
KEYWORDS: dict[str, object] = {
    "tr": (2,),
    "trn": (2, 3),
    "trc": ((2, "c"), 3),
    "N_": None,
    "NC_": ((1, "c"), 2),
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
}
# Python: the 0-based index of the message in each marker call.
MARKERS = {"tr": 1, "trn": 1, "trc": 2, "N_": 0, "NC_": 1}
TEMPLATE_OPTIONS = {
    "**.j2": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true", "lstrip_blocks": "true"}
}


def _templates() -> Path:
    from benchkit.paths import repo_root

    return repo_root() / "templates"


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def extract() -> Catalog:
    """Every message marked in benchkit's Python files and templates, with where it is."""
    found = Catalog(project="benchkit", domain=DOMAIN, fuzzy=False)
    sources: list[tuple[Path, list[tuple[str, str]], dict[str, dict[str, str]]]] = [
        (PACKAGE, [("**.py", "python")], {}),
        (_templates(), [("**.j2", "jinja2.ext:babel_extract")], TEMPLATE_OPTIONS),
    ]
    for root, methods, options in sources:
        for name, line, message, comments, context in extract_from_dir(
            str(root),
            methods,
            options,
            keywords=KEYWORDS,  # type: ignore[arg-type]  # Babel's spec type is loose
            comment_tags=("TRANSLATORS:",),
            strip_comment_tags=True,
        ):
            where = f"{root.name}/{name}"
            found.add(message, None, [(where, line)], auto_comments=comments, context=context)
    return found


def _read(lang: str) -> Catalog:
    with po_path(lang).open("rb") as f:
        return read_po(f, locale=lang)


def _write(lang: str, po: Catalog) -> None:
    path = po_path(lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".po.tmp")
    with tmp.open("wb") as f:
        write_po(
            f, po, width=100, ignore_obsolete=True, include_previous=False, include_lineno=False
        )
    tmp.replace(path)


def update(langs: Iterable[str]) -> None:
    template = extract()
    for lang in langs:
        po = _read(lang)
        po.update(template, no_fuzzy_matching=True, update_header_comment=False)
        _write(lang, po)
        print(f"{po_path(lang)}: {sum(1 for m in po if m.id)} messages")


def compile_mo(langs: Iterable[str]) -> None:
    for lang in langs:
        mo = po_path(lang).with_suffix(".mo")
        with mo.open("wb") as f:
            write_mo(f, _read(lang), use_fuzzy=False)
        print(f"{mo}")


def init(lang: str) -> None:
    if po_path(lang).exists():
        raise SystemExit(f"{po_path(lang)} exists already; `update` brings it up to date")
    po = Catalog(locale=lang, project="benchkit", domain=DOMAIN)
    for m in extract():
        if m.id:
            po.add(m.id, "", m.locations, auto_comments=m.auto_comments, context=m.context)
    _write(lang, po)
    print(f"{po_path(lang)}: translate it, then write benchkit/report/lang/{lang}.py (README)")


# ------------------------------------------------------------------------------ check


@dataclass(frozen=True)
class Problem:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def _fields(text: str) -> set[str]:
    """The `{name}` fields of a message (a spec such as `:이` is the language's own)."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return {"<unbalanced braces>"}


def _texts(value: object) -> list[str]:
    """A message's id or translation as a list (a plural message has several)."""
    items = value if isinstance(value, (tuple, list)) else [value]
    return [str(x) if x else "" for x in items]


def _forms(m: Message) -> list[str]:
    return _texts(m.string)


def _ids(m: Message) -> list[str]:
    return _texts(m.id)


def non_literal_markers(root: Path = PACKAGE) -> Iterator[Problem]:
    """Calls of tr/trn/trc/N_ whose message is not a string literal: extraction misses them."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            index = MARKERS.get(node.func.id)
            if index is None or len(node.args) <= index:
                continue
            arg = node.args[index]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                rel = path.relative_to(root.parent)
                yield Problem(f"{rel}:{node.lineno}", f"{node.func.id}() needs a literal message")


def check(langs: Sequence[str]) -> list[Problem]:
    """What stands between the catalogs and a complete translation: a message without a
    translation (or only a fuzzy one), a translation whose fields differ from the English, a
    translation of a message the code no longer has, a message that is not a literal."""
    problems = list(non_literal_markers())
    template = extract()
    for lang in langs:
        po = _read(lang)
        for m in template:
            if not m.id:
                continue
            where = f"{lang}: {_ids(m)[0][:70]!r}"
            have = po.get(m.id, context=m.context)
            if have is None or not all(_forms(have)) or have.fuzzy:
                problems.append(Problem(where, "no translation"))
                continue
            want = set().union(*(_fields(i) for i in _ids(m)))
            for form in _forms(have):
                if _fields(form) - want - {"n"}:
                    problems.append(Problem(where, f"fields {_fields(form)} not in {want}"))
                elif len(_ids(m)) == 1 and _fields(form) != want:
                    problems.append(Problem(where, f"fields {_fields(form)}, English {want}"))
        for m in po:
            if m.id and template.get(m.id, context=m.context) is None:
                problems.append(Problem(f"{lang}: {_ids(m)[0][:70]!r}", "not in the code (update)"))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else "check"
    langs = [code for code in languages() if code != SOURCE]
    if command == "check":
        problems = check(langs)
        for p in problems:
            print(p)
        n = sum(1 for m in extract() if m.id)
        print(f"{n} messages, {', '.join(langs)}: {len(problems)} problems")
        return 1 if problems else 0
    if command == "update":
        update(langs)
    elif command == "compile":
        compile_mo(langs)
    elif command == "init" and len(args) == 2:
        init(args[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0

"""The methods page: how every post measures and compares, said once (templates/methods.md.j2),
so that a post links it instead of repeating a thousand words of method (review 9's editor
counted about 1,200 in every English post).

The page is the repository's docs/methods.md (docs/methods.ko.md in Korean); a post links the
nearest such page in a folder above it, and a post published where none is writes its own
copy beside itself, so its link always opens. `python -m benchkit.report.writeup.methods DIR`
writes the pages into DIR again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchkit.report.lang import fmt, grammar, tr
from benchkit.report.writeup.page import template_env
from benchkit.results.store import atomic_write_text

LANGS = ("en", "ko")
# The margin the page names: the default of study.knee_gain (a post names its own).
_MARGIN = 0.05


def file_name(lang: str) -> str:
    """'methods.md' in English, 'methods.ko.md' in another language."""
    return "methods.md" if lang == "en" else f"methods.{lang}.md"


def render(lang: str) -> str:
    """The page's Markdown in `lang`."""
    md = (
        template_env(html=False, lang=lang)
        .get_template("methods.md.j2")
        .render(unit=tr(lang, "unit"), margin=fmt.pct(_MARGIN))
    )
    tidy = getattr(grammar(lang), "tidy", None)
    return tidy(md) if tidy is not None else md


def link(publish: Path, into: Path, lang: str) -> str:
    """The post's link to the methods page: relative to the post's folder `publish`, to the
    page in the nearest folder above it; where none is, the page is written into `into`
    (the post's folder as it is being built) and linked beside the post."""
    name = file_name(lang)
    for folder in publish.resolve().parents:
        if (folder / name).is_file():
            return Path(os.path.relpath(folder / name, publish.resolve())).as_posix()
    atomic_write_text(into / name, render(lang))
    return name


def write(folder: Path) -> list[Path]:
    """Every language's page into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for lang in LANGS:
        atomic_write_text(folder / file_name(lang), render(lang))
        out.append(folder / file_name(lang))
    return out


if __name__ == "__main__":  # pragma: no cover - a command line around write()
    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")):
        print(path)

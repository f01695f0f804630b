"""Rendered reports, read as Markdown: every table row has as many cells as its header, the
"All results" table has a column for each metric benchkit/measure/metrics.py gives one (but those
empty in every row, which the page drops), and the
definitions the declarations hold are printed in the report's language. Rendered from the
committed seed fixture and a published study with GPU telemetry, in English and Korean."""

from __future__ import annotations

import re

import pytest

from benchkit.measure import metrics
from benchkit.paths import repo_root
from benchkit.report.__main__ import main as report_main
from benchkit.report.lang import grammar, ko, marked
from benchkit.report.lang.fmt import md_cell
from benchkit.report.verdicts.folder import resolve_study
from benchkit.report.writeup.result_columns import result_columns
from benchkit.report.writeup.view import unit_word
from benchkit.results.store import find_results

SOURCES = {
    "seed": repo_root() / "fixtures" / "results" / "seed-r9700",
    # Has GPU telemetry: the energy section prints telemetry's definitions.
    "study": repo_root() / "docs" / "studies" / "h200-vulkan-vs-cuda" / "results",
}
CASES = [(name, lang) for name in SOURCES for lang in ("en", "ko")]
_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
_PIPE = re.compile(r"(?<!\\)\|")  # a cell's own pipes are escaped (fmt.md_cell)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for name, lang in CASES:
        folder = tmp_path_factory.mktemp(f"{name}-{lang}")
        assert report_main([str(SOURCES[name]), "--out", str(folder), f"study.lang={lang}"]) == 0
        out[(name, lang)] = (folder / "report.md").read_text()
    return out


def tables(md: str) -> list[list[str]]:
    """Each Markdown table of `md`: its lines, header first (a run of lines starting with a
    pipe whose second line is a separator row; fenced code left out)."""
    found: list[list[str]] = []
    run: list[str] = []
    fenced = False
    for line in [*md.splitlines(), ""]:
        fenced = fenced != line.startswith("```")
        if line.startswith("|") and not fenced:
            run.append(line.rstrip())
            continue
        if len(run) >= 2 and _SEPARATOR.match(run[1]):
            found.append(run)
        run = []
    return found


def cells(line: str) -> list[str]:
    """A row's cells, the outer pipes left off."""
    return [c.strip() for c in _PIPE.split(line.strip())[1:-1]]


@pytest.mark.parametrize(("name", "lang"), CASES)
def test_every_row_has_its_headers_column_count(
    rendered: dict[tuple[str, str], str], name: str, lang: str
) -> None:
    found = tables(rendered[(name, lang)])
    assert len(found) >= 3
    for table in found:
        width = len(cells(table[0]))
        for line in table[1:]:
            assert len(cells(line)) == width, f"{table[0]}\n{line}"


@pytest.mark.parametrize(("name", "lang"), CASES)
def test_declared_columns_and_definitions_reach_the_report(
    rendered: dict[tuple[str, str], str], name: str, lang: str
) -> None:
    md = rendered[(name, lang)]
    # Korean names the study's unit by the study's own word (lang/ko.py), as the render did.
    study = resolve_study(find_results(SOURCES[name]), [f"study.lang={lang}"])
    sources: tuple[metrics.Source, ...] = ("calls", "server")
    if name == "study":
        sources = (*sources, "telemetry")
    with grammar(lang).study_unit(unit_word(study, lang)):
        fixed = [marked(lang, w) for w in ("job", "backend", "slots", "MTP", "status")]
        headers = [c.header for c in result_columns(lang)]
        defined = {k: marked(lang, v) for k, v in metrics.definitions(*sources).items()}
    assert len(headers) == len(metrics.table_columns())
    (table,) = [t for t in tables(md) if cells(t[0])[:5] == fixed]
    shown = cells(table[0])[5:]
    # A column empty in every row is dropped from the page (writeup/tables.py): the seed
    # fixture's builds read no server counters. Each metric some job wrote has its column.
    assert shown == [h for h in headers if h in shown]
    written = {k for r in find_results(SOURCES[name]) for k, v in r.metrics.items() if v}
    for m, header in zip(metrics.table_columns(), headers, strict=True):
        assert header in shown or m.key not in written, m.key
    assert defined
    for key, text in defined.items():
        line = f"- **{md_cell(key)}**: {md_cell(text)}"
        # A Korean page writes "단위마다(그" where the catalog has a space (lang.ko.tidy).
        assert (ko.tidy(line) if lang == "ko" else line) in md, key

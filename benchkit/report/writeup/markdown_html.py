"""The report's Markdown as the HTML markdown-it renders for it (CommonMark, GFM tables, raw HTML
off), in a fraction of its time for a page of long tables.

A 1,000-job report is 1 MB of Markdown, most of it tables of a thousand rows, and markdown-it took a
sixth of the report's time over them: a character at a time through each row to find its cells, a
token object for every tag and cell, an inline parse of every cell. Here the page is cut into
sections at its headings (CommonMark ends every block at one), and a table that stands alone between
blank lines in a section is written out directly: its rows cut into cells as markdown-it's table
rule cuts them, each cell's text through markdown-it's own inline renderer (once for each distinct
text: a sweep's tables repeat their values), the tags as its renderer writes them. Everything else,
and any table that is not plainly one (a row with fewer cells than the header, a table inside a list
or a quote, one a paragraph runs into), goes to markdown-it as before.
tests/unit/report/writeup/test_markdown_html.py renders generated pages both ways and compares them.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, mdTrim

# A heading at the start of a line (CommonMark's ATX heading, not indented).
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
# A fence at the start of a line, and the line that closes it.
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*")
# A fence indented or inside a container (a list item, a quote), or a link reference
# definition anywhere: where either occurs, the page is rendered whole (see `_whole`).
# Either, at the start of any line of the page.
_NESTED_OR_REFERENCE = re.compile(
    r"^(?:[ \t>*+\-0-9.)]+(?:`{3}|~{3})|[ \t>*+\-0-9.)]*\[[^\]\n]*\]:)", re.MULTILINE
)
# A table's delimiter row as markdown-it's table rule reads one that starts with a pipe (only
# pipes, dashes, colons, spaces and tabs), and one of its columns.
_DELIMITER_ROW = re.compile(r"\|[|\-: \t]+")
_DELIMITER = re.compile(r":?-+:?")
# A pipe that splits cells: one not escaped by the backslash before it.
_CELL_PIPE = re.compile(r"(?<!\\)\|")


def markdown_to_html(md: str) -> str:
    """`md` as markdown-it renders it: CommonMark with tables, raw HTML shown as text."""
    return "".join(html_parts(md))


def html_parts(md: str) -> list[str]:
    """`markdown_to_html(md)` in parts that join to it, one a section, for a writer to write in
    turn: joined, the page's HTML was held twice at once (2.6 MB each at 1,000 jobs)."""
    parser = _parser()
    # With what is alive now frozen: the renderer makes millions of objects for a large page,
    # and each full collection they set off went through all the report holds (its results,
    # the figures from the calls, the verdicts), a tenth of a 1,000-job report's time; frozen,
    # the collector goes through the renderer's own objects only. Collected first, so that no
    # garbage is held frozen meanwhile; not where something else froze objects: unfreezing
    # would undo that.
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.collect()
        gc.freeze()
    try:
        return _parts(parser, md)
    finally:
        if freeze:
            gc.unfreeze()


def _html(parser: MarkdownIt, md: str) -> str:
    """`markdown_to_html` without its care for the collector."""
    return "".join(_parts(parser, md))


def _parts(parser: MarkdownIt, md: str) -> list[str]:
    """`html_parts` without its care for the collector."""
    if _whole(md):
        return [str(parser.render(md))]
    inline = _Inline(parser)
    # Section by section: the renderer holds every token of what it is given, about 100 MiB
    # for a 1,000-job report (half the report's memory); a section's are a few MiB.
    return [_section_html(parser, inline, part) for part in _sections(md)]


def _parser() -> MarkdownIt:
    # html=False: any markup that came from results is shown as text, never run.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


class _Inline:
    """A table cell's text as markdown-it renders it inline, rendered once for each text."""

    def __init__(self, parser: MarkdownIt) -> None:
        self.parser = parser
        self.done: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        html = self.done.get(text)
        if html is None:
            html = self.done[text] = str(self.parser.renderInline(text))
        return html


def _whole(md: str) -> bool:
    """Must the page be rendered whole? Where something could cross a heading: a link
    reference definition (they hold for the whole page), a fence that is indented or in a
    container (it may run past a heading the cut would see), a carriage return (another line
    break) or a NUL (which markdown-it replaces before it reads any line)."""
    if "\r" in md or "\0" in md:
        return True
    return _NESTED_OR_REFERENCE.search(md) is not None


def _fence_after(fence: str | None, line: str) -> str | None:
    """The open fence's marker after `line` (None outside a fence), `fence` before it."""
    if fence is not None:
        close = _CLOSE.fullmatch(line)
        if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
            return None
        return fence
    m = _FENCE.match(line)
    if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
        return m.group(1)
    return None


def _sections(md: str) -> Iterator[str]:
    """`md` (not `_whole`) cut before every heading that starts a line outside a fenced
    block. CommonMark ends every open block at such a heading (a paragraph, a list, a quote,
    a table), so the pieces render to the same HTML one by one as together. One at a time:
    each is let go once rendered."""
    start = 0  # the offset in `md` where the current part begins
    offset = 0
    fence: str | None = None  # the open fence's marker
    for line in md.split("\n"):
        if fence is None and _HEADING.match(line) and offset > start:
            yield md[start:offset]
            start = offset
        fence = _fence_after(fence, line)
        offset += len(line) + 1
    yield md[start:]


def _blank(line: str) -> bool:
    # markdown-it's empty line: nothing but spaces and tabs.
    return not line.strip(" \t")


def _section_html(parser: MarkdownIt, inline: Callable[[str], str], part: str) -> str:
    """One section's HTML: each table that stands alone written out (`_table_html`), the
    text between them rendered by markdown-it. A table stands alone where its lines all
    start with a pipe and it has a blank line (or a heading, or the section's edge) on each
    side, outside a fence: whatever came before it has ended (nothing continues past a
    blank line into a line that starts with a pipe) and it ends where markdown-it's table
    would (a table runs on until a blank line)."""
    lines = part.split("\n")
    out: list[str] = []
    done = 0  # lines before this one are rendered
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        after = i == 0 or _blank(lines[i - 1]) or bool(_HEADING.match(lines[i - 1]))
        if fence is None and line.startswith("|") and after:
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            table = (
                _table_html(lines[i:end], inline)
                if end == len(lines) or _blank(lines[end])
                else None
            )
            if table is not None:
                if i > done:
                    out.append(str(parser.render("\n".join(lines[done:i]) + "\n")))
                out.append(table)
                done = i = end
                continue
        fence = _fence_after(fence, line)
        i += 1
    if done < len(lines):
        out.append(str(parser.render("\n".join(lines[done:]))))
    return "".join(out)


def _cells(row: str) -> list[str]:
    """A row's cells as markdown-it's table rule cuts them (`escapedSplit`): at each pipe
    not escaped, an escaped pipe kept without its backslash, an empty first and last left
    out. `row` is trimmed."""
    cells = _CELL_PIPE.split(row) if "\\" in row else row.split("|")
    if "\\" in row:
        cells = [c.replace("\\|", "|") for c in cells]
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return cells


def _aligns(row: str) -> list[str] | None:
    """The columns' alignments of a delimiter row, as markdown-it's table rule reads them;
    None for a row that is not one."""
    if not _DELIMITER_ROW.fullmatch(row):
        return None
    columns = row.split("|")
    aligns: list[str] = []
    for i, column in enumerate(columns):
        t = mdTrim(column)
        if not t:
            # An empty column only before the first pipe or after the last.
            if i == 0 or i == len(columns) - 1:
                continue
            return None
        if not _DELIMITER.fullmatch(t):
            return None
        if t[-1] == ":":
            aligns.append("center" if t[0] == ":" else "right")
        else:
            aligns.append("left" if t[0] == ":" else "")
    return aligns


def _table_html(lines: list[str], inline: Callable[[str], str]) -> str | None:
    """The HTML markdown-it renders for `lines`, a table's lines that each start with a pipe,
    with nothing after them in their block; None where markdown-it would not read them as one
    table of whole rows (not a table, or a row short of cells)."""
    if len(lines) < 2:
        return None
    aligns = _aligns(lines[1])
    head = mdTrim(lines[0])
    header = _cells(head)
    if aligns is None or not header or len(header) != len(aligns):
        return None
    rows = [_cells(mdTrim(line)) for line in lines[2:]]
    if any(len(row) < len(header) for row in rows):
        # markdown-it fills a short row with empty cells up to a limit: left to it.
        return None
    opens = [f' style="text-align:{escapeHtml(a)}"' if a else "" for a in aligns]
    out = ["<table>\n<thead>\n<tr>\n"]
    out += [f"<th{o}>{inline(mdTrim(c))}</th>\n" for o, c in zip(opens, header, strict=True)]
    out.append("</tr>\n</thead>\n")
    if rows:
        out.append("<tbody>\n")
        for row in rows:
            out.append("<tr>\n")
            out += [f"<td{o}>{inline(mdTrim(c))}</td>\n" for o, c in zip(opens, row, strict=False)]
            out.append("</tr>\n")
        out.append("</tbody>\n")
    out.append("</table>\n")
    return "".join(out)

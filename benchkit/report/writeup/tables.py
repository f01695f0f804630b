"""A Markdown table's columns where no row has a value: dropped from the page. An editor
found tables whose columns were all dashes (a server counter not read by the build that ran,
telemetry not read): a column that says nothing in every row is noise the reader must scan.

A post goes further (drop_constant_columns): a column that holds the same value in every row
(the backend all cuda, bits per weight all 4.51) is said once, under its table.

The templates write each table whole; this pass reads the rendered Markdown, so every table
of every page follows the one rule, whichever template or section wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# What a cell holds where it has no value (fmt.DASH, and an empty cell).
_EMPTY = frozenset({"", "–", "—", "-"})
# A cell boundary: a pipe not escaped by a backslash (fmt.md_cell escapes a value's pipes).
_PIPE = re.compile(r"(?<!\\)\|")
_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def _cells(line: str) -> list[str]:
    """A table row's cells, the outer pipes left off."""
    return _PIPE.split(line.strip())[1:-1]


def _table(lines: list[str]) -> list[str]:
    """One table (header, rule, rows) without the columns that are empty in every row; the
    first column (what each row is) always stays, and a table it cannot read stays as it is."""
    rows = [_cells(x) for x in lines]
    width = len(rows[0])
    if len(rows) < 3 or any(len(r) != width for r in rows):
        return lines
    body = rows[2:]
    keep = [0] + [j for j in range(1, width) if any(r[j].strip() not in _EMPTY for r in body)]
    if len(keep) == width:
        return lines
    return ["|" + "|".join(r[j] for j in keep) + "|" for r in rows]


def _constant(lines: list[str], caption: Callable[[Sequence[tuple[str, str]]], str]) -> list[str]:
    """One table without the columns whose every row holds one value, then `caption` of
    those (header, value) pairs under it; a table of fewer than two rows, or one that would
    keep no column beside the first, stays as it is."""
    rows = [_cells(x) for x in lines]
    width = len(rows[0])
    if len(rows) < 4 or any(len(r) != width for r in rows):
        return lines
    body = rows[2:]
    same = [j for j in range(1, width) if len({r[j].strip() for r in body}) == 1]
    if not same or len(same) >= width - 1:
        return lines
    keep = [j for j in range(width) if j not in same]
    table = ["|" + "|".join(r[j] for j in keep) + "|" for r in rows]
    pairs = [(rows[0][j].strip(), body[0][j].strip()) for j in same]
    return [*table, "", caption(pairs)]


def _each_table(md: str, fix: Callable[[list[str]], list[str]]) -> str:
    """`md` with `fix` applied to each table (fenced code left alone)."""
    out: list[str] = []
    block: list[str] = []
    fenced = False
    for line in md.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            block.append(line)
            continue
        if block:
            out += fix(block) if len(block) > 1 and _RULE.match(block[1]) else block
            block = []
        out.append(line)
    if block:
        out += fix(block) if len(block) > 1 and _RULE.match(block[1]) else block
    return "\n".join(out)


def drop_empty_columns(md: str) -> str:
    """`md` with each table's empty columns dropped (fenced code left alone)."""
    return _each_table(md, _table)


def drop_constant_columns(md: str, caption: Callable[[Sequence[tuple[str, str]]], str]) -> str:
    """`md` with each table's columns that hold one value in every row dropped, and that
    value said under the table by `caption` (a post: an editor found the backend, MTP, a
    status and bits per weight repeated down whole columns)."""
    return _each_table(md, lambda block: _constant(block, caption))

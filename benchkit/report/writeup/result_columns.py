"""The "All results" table's metric columns, from benchkit.metrics' declarations: each
header in the study's language and each job's cell, formatted as its declaration says."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from benchkit.measure import metrics
from benchkit.report.lang import fmt, marked


@dataclass(frozen=True)
class ResultColumn:
    """One metric column: its header (translated) and how a row's value is written."""

    key: str
    header: str
    write: Callable[[object], str]
    beside: str | None = None  # a second metric in the same cell, after " / "

    def cell(self, row: Mapping[str, object]) -> str:
        text = self.write(row.get(self.key))
        return text if self.beside is None else f"{text} / {self.write(row.get(self.beside))}"


def result_columns(lang: str) -> list[ResultColumn]:
    """The table's metric columns, left to right, in `lang`."""
    filters = fmt.filters(lang)
    out = []
    for m in metrics.table_columns():
        col = m.column
        if col is None:  # table_columns gives only metrics with a column
            continue
        write = filters[col.format]
        if col.digits is not None:
            write = partial(write, digits=col.digits)
        out.append(ResultColumn(m.key, marked(lang, col.header), write, col.beside))
    return out

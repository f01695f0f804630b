"""verdicts.json written an item at a time: the same bytes as orjson gives for the whole list."""

from __future__ import annotations

import datetime
from pathlib import Path

import orjson
import pytest

from benchkit.report.writeup import page


def _whole(items: list[object]) -> bytes:
    opts = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    return orjson.dumps(items, default=str, option=opts)


@pytest.mark.parametrize(
    "items",
    [
        [],
        [{}],
        [[]],
        [None, 1, 2.5, -0.0, 1e-7, True, "text"],
        [{"a": [], "b": {}, "c": [{"d": [1, [2, []]]}]}],
        # A line break, a tab and a line separator inside text are escapes, never line breaks.
        [{"note": "two\nlines\tand \u2028 é 한국어", "keys": {1: "a", 2.5: "b"}}],
        # A value JSON cannot hold is written as its str().
        [{"when": datetime.date(2026, 12, 7), "where": Path("a/b")}, ["x", {"y": None}]],
    ],
)
def test_the_same_bytes_as_the_whole_list(tmp_path: Path, items: list[object]) -> None:
    page._write_json(tmp_path / "v.json", items)
    assert (tmp_path / "v.json").read_bytes() == _whole(items)

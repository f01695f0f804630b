"""Number formatters for reports: pure functions, so templates do no arithmetic."""

from __future__ import annotations

import math
from typing import Any

DASH = "–"


def _bad(x: Any) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def num(x: Any, digits: int = 1) -> str:
    """1234.5 -> '1,234.5'; None -> '–'."""
    if _bad(x):
        return DASH
    return f"{float(x):,.{digits}f}"


def integer(x: Any) -> str:
    if _bad(x):
        return DASH
    return f"{round(float(x)):,d}"


def seconds(x: Any) -> str:
    """Seconds with precision that suits their size: 0.123 s, 12.3 s, 1,234 s."""
    if _bad(x):
        return DASH
    v = float(x)
    if abs(v) < 1:
        return f"{v:.3f} s"
    if abs(v) < 100:
        return f"{v:.1f} s"
    return f"{v:,.0f} s"


def hours(x: Any) -> str:
    if _bad(x):
        return DASH
    return f"{float(x) / 3600:.1f} h"


def pct(x: Any, digits: int = 0) -> str:
    """0.153 -> '15%'."""
    if _bad(x):
        return DASH
    return f"{100 * float(x):.{digits}f}%"


def ratio(x: Any) -> str:
    """1.362 -> '1.36x'."""
    if _bad(x):
        return DASH
    return f"{float(x):.2f}x"


def md_cell(x: Any) -> str:
    """Text safe inside a Markdown table cell: no pipes or newlines break the table, and
    markdown/HTML punctuation from results is escaped so it renders as text."""
    s = str(x).replace("\n", " ")
    for ch in ("\\", "|", "`", "*", "_", "[", "]", "<", ">", "#"):
        s = s.replace(ch, "\\" + ch)
    return s


FILTERS = {
    "num": num,
    "int": integer,
    "secs": seconds,
    "hours": hours,
    "pct": pct,
    "ratio": ratio,
    "cell": md_cell,
}

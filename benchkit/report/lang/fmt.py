"""Number and text formatters for reports: pure functions, so templates do no arithmetic.

Each formatter takes an optional language; a number with its unit or multiplier ("4.8 h",
"1.36x") is a message in the "unit" context, so each language writes it its own way (its
catalog, benchkit.report.lang). `filters(lang)` gives the set a Jinja environment registers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

from benchkit.report.lang import NC_, trc, trc_marked

DASH = "–"


def norm(v: Any) -> str:
    """One spelling per value, so `true`, True and 'True', or 4, 4.0 and '4' match."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip().lower()


def _bad(x: Any) -> bool:
    if x is None or isinstance(x, bool):
        return x is None
    try:
        return not math.isfinite(float(x))
    except (TypeError, ValueError):
        return True


def num(x: Any, digits: int = 1) -> str:
    """1234.5 -> '1,234.5'; None -> '–'."""
    if _bad(x):
        return DASH
    return f"{float(x):,.{digits}f}"


def integer(x: Any) -> str:
    """1234.6 -> '1,235'."""
    if _bad(x):
        return DASH
    return f"{round(float(x)):,d}"


def seconds(x: Any, lang: str = "en") -> str:
    """Seconds with precision that suits their size: 0.123 s, 12.3 s, 188.5 s, 1,234 s."""
    if _bad(x):
        return DASH
    v = float(x)
    if abs(v) < 1:
        text = f"{v:.3f}"
    elif abs(v) < 1000:
        text = f"{v:.1f}"
    else:
        text = f"{v:,.0f}"
    return trc(lang, "unit", "{value} s", value=text)


def millis(x: Any, lang: str = "en") -> str:
    """Milliseconds: 12.3 ms, 1,234 ms."""
    if _bad(x):
        return DASH
    v = float(x)
    text = f"{v:,.1f}" if abs(v) < 100 else f"{v:,.0f}"
    return trc(lang, "unit", "{value} ms", value=text)


def hours(x: Any, lang: str = "en") -> str:
    """Seconds shown as hours: 17240 -> '4.8 h'; what would show as '0.x h' (or '0.0 h') as
    minutes: 150 -> '2.5 min'."""
    if _bad(x):
        return DASH
    v = float(x)
    h = f"{v / 3600:.1f}"
    if h.lstrip("-").startswith("0."):
        minutes = f"{v / 60:.1f}"
        return trc(lang, "unit", "{value} min", value=minutes)
    return trc(lang, "unit", "{value} h", value=h)


def kld(x: float | None) -> str:
    """A KL divergence to three significant digits ('0', '0.00412', '3.1e-06'): the small
    ones a quantized cache gives must not print as 0.0000."""
    return DASH if x is None else "0" if x == 0 else f"{x:.3g}"


def pct(x: Any, digits: int = 0) -> str:
    """0.153 -> '15%'; a share under 1% keeps a decimal (0.0012 -> '0.1%'), so a small
    nonzero figure (a draft acceptance near chance) does not read as none."""
    if _bad(x):
        return DASH
    v = 100 * float(x)
    if digits == 0 and 0 < abs(v) < 1:
        digits = 1
    return f"{v:.{digits}f}%"


def signed_pct(x: Any, digits: int = 0) -> str:
    """A change: 0.18 -> '+18%', -0.022 -> '−2%' (a true minus sign)."""
    if _bad(x):
        return DASH
    v = 100 * float(x)
    s = f"{abs(v):.{digits}f}%"
    if round(v, digits) == 0:
        return f"±{s}"
    return ("+" if v > 0 else "−") + s


def ratio(x: Any, lang: str = "en") -> str:
    """1.362 -> '1.36x' (as `lang` writes a multiplier)."""
    if _bad(x):
        return DASH
    v = float(x)
    # Large multiples read as whole numbers (133x, not 132.58x).
    text = f"{v:,.0f}" if abs(v) >= 20 else f"{v:.1f}" if abs(v) >= 5 else f"{v:.2f}"
    return trc(lang, "unit", "{value}x", value=text)


def md_cell(x: Any) -> str:
    """Text safe inside a Markdown table cell or line: no pipes or newlines break the table,
    and markdown/HTML punctuation from results is escaped so it renders as text."""
    s = str(x).replace("\r", " ").replace("\n", " ")
    for ch in ("\\", "|", "`", "*", "_", "[", "]", "<", ">", "#", "!", "{", "}"):
        s = s.replace(ch, "\\" + ch)
    return s


def code(x: Any) -> str:
    """Text inside a Markdown code span: backticks in it cannot close the span early."""
    s = str(x).replace("\r", " ").replace("\n", " ")
    fence = "`"
    while fence in s:
        fence += "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def value(x: Any) -> str:
    """A factor value as written in configs: True -> 'true', 4.0 -> '4', None/NaN -> '–'."""
    if hasattr(x, "item") and not isinstance(x, str | bytes):
        x = x.item()  # a numpy scalar from a table
    if isinstance(x, bool):
        return "true" if x else "false"
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return DASH
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return md_cell(x)


# A job's status as a results table shows it (its own context: the verdicts' status words,
# words.STATUS_WORDS, are translated differently).
JOB_STATUS = {
    "complete": NC_("job status", "complete"),
    "incomplete": NC_("job status", "incomplete"),
    "failed": NC_("job status", "failed"),
    "unavailable": NC_("job status", "unavailable"),
}


def job_status(x: Any, lang: str = "en") -> str:
    """complete/incomplete/failed/unavailable in the report's language (another value as
    written, escaped for a table cell)."""
    word = JOB_STATUS.get(str(x))
    return md_cell(x) if word is None else trc_marked(lang, "job status", word)


def on_off(x: Any, lang: str = "en") -> str:
    """A boolean setting (MTP) as on/off in the report's language; other values as `value`."""
    if hasattr(x, "item") and not isinstance(x, str | bytes):
        x = x.item()
    on, off = trc(lang, "setting", "on"), trc(lang, "setting", "off")
    if isinstance(x, bool):
        return on if x else off
    if str(x).lower() in ("true", "false"):
        return on if str(x).lower() == "true" else off
    return value(x)


def filters(lang: str = "en") -> dict[str, Callable[..., str]]:
    """The Jinja filters for one language."""
    return {
        "status": partial(job_status, lang=lang),
        "onoff": partial(on_off, lang=lang),
        "num": num,
        "int": integer,
        "secs": partial(seconds, lang=lang),
        "ms": partial(millis, lang=lang),
        "hours": partial(hours, lang=lang),
        "pct": pct,
        "spct": signed_pct,
        "ratio": partial(ratio, lang=lang),
        "cell": md_cell,
        "val": value,
        "code": code,
    }


FILTERS = filters("en")

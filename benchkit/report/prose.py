"""Holes in the prose a report writes: a name, number or clause that reached a sentence empty.

Every sentence of a report is assembled from results, and a missing value must never leave
"by –", "()", "None" or an unfilled "{placeholder}" behind, nor a "Complete" status beside a
provisional verdict. `holes` finds them in rendered Markdown (tables and code are skipped: a
dash there means "not measured"); the renderer warns about any, and the tests require none.
"""

from __future__ import annotations

import re

_PATTERNS = (
    (re.compile(r"\b(?:at|by|on|from|for|of|with|in|than) –(?!\w)"), "a dangling '–'"),
    (re.compile(r"–(?:에서|의|와|과|이|가|은|는|을|를|로|으로)"), "a dangling '–' (ko)"),
    (re.compile(r"\(\s*\)"), "empty parentheses"),
    (re.compile(r"``"), "an empty code span"),
    (re.compile(r"\b(?:None|nan|NaN)\b"), "a missing value printed as a word"),
    (re.compile(r"\{[A-Za-z_][A-Za-z_0-9]*\}"), "an unfilled placeholder"),
    (re.compile(r"(?<![.\d])\s,|,,|:\s*[.;]"), "punctuation around nothing"),
    (re.compile(r"\b(?:job|jobs|작업) (?:[,.;:)]|$)"), "a job named without its number"),
)
_STATUS_COMPLETE = re.compile(r"^\**(?:Complete:|완료:)")
_PROVISIONAL = re.compile(r"(?:Provisional|잠정)")


def holes(markdown: str) -> list[str]:
    """Each hole as 'line N: problem: text'; an empty list when the prose is whole."""
    out: list[str] = []
    in_code = False
    lines = markdown.splitlines()
    for i, line in enumerate(lines, 1):
        text = line.strip()
        if text.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not text or text.startswith(("|", "    ", "<", "!")):
            continue
        for pattern, what in _PATTERNS:
            if pattern.search(text):
                out.append(f"line {i}: {what}: {text[:160]}")
    top = [x.strip() for x in lines[:12] if x.strip() and not x.strip().startswith("|")]
    headline = next((x for x in top if x.startswith("**")), "")
    if any(_STATUS_COMPLETE.match(x) for x in top) and _PROVISIONAL.match(headline.strip("*")):
        out.append("a 'Complete' status line beside a provisional headline")
    return out

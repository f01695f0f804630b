"""Holes in the prose a report writes: a name, number or clause that reached a sentence empty.

Every sentence of a report is assembled from results, and a missing value must never leave
"by –", "()", "None" or an unfilled "{placeholder}" behind, nor a "Complete" status beside a
provisional verdict. `holes` finds them in rendered Markdown (tables and code are skipped: a
dash there means "not measured"); the renderer warns about any, and the tests require none.
"""

from __future__ import annotations

import re
from functools import cache

from benchkit.report.lang import languages, tr
from benchkit.report.lang.i18n import status_word

_PATTERNS = (
    (re.compile(r"\b(?:at|by|on|from|for|of|with|in|than) –(?!\w)"), "a dangling '–'"),
    # A word glued to the dash: a language that writes particles on the word before them
    # (Korean) left one on a missing value.
    (re.compile(r"–[^\W\d_A-Za-z]"), "a dangling '–' (a particle on it)"),
    (re.compile(r"\(\s*\)"), "empty parentheses"),
    (re.compile(r"``"), "an empty code span"),
    (re.compile(r"\b(?:None|nan|NaN)\b"), "a missing value printed as a word"),
    (re.compile(r"\{[A-Za-z_][A-Za-z_0-9]*\}"), "an unfilled placeholder"),
    (re.compile(r"(?<![.\d])\s,|,,|:\s*[.;]"), "punctuation around nothing"),
)


def _any_of(words: set[str]) -> str:
    return "|".join(sorted(map(re.escape, words)))


@cache
def _in_every_language() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The checks that look for words, with the words of every report language: a job named
    without its number, a status line that says complete, a headline that says provisional."""
    langs = languages()
    job = _any_of({"job", "jobs", *(tr(lang, "job") for lang in langs)})
    complete = _any_of({status_word("complete", lang) for lang in langs})
    provisional = _any_of({status_word("provisional", lang) for lang in langs})
    return (
        re.compile(rf"\b(?:{job}) (?:[,.;:)]|$)"),
        re.compile(rf"^\**(?:{complete}):", re.IGNORECASE),
        re.compile(rf"(?:{provisional})", re.IGNORECASE),
    )


def holes(markdown: str) -> list[str]:
    """Each hole as 'line N: problem: text'; an empty list when the prose is whole."""
    job_alone, status_complete, provisional = _in_every_language()
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
        for pattern, what in (*_PATTERNS, (job_alone, "a job named without its number")):
            if pattern.search(text):
                out.append(f"line {i}: {what}: {text[:160]}")
    top = [x.strip() for x in lines[:12] if x.strip() and not x.strip().startswith("|")]
    headline = next((x for x in top if x.startswith("**")), "")
    if any(status_complete.match(x) for x in top) and provisional.match(headline.strip("*")):
        out.append("a 'Complete' status line beside a provisional headline")
    return out

"""The corrections in words: what changed in a verdict between two publications (value,
status, reasons added and removed, missing points, rules version) and why, from the ledger's
comparison (`ledger.Diff`, `ledger.Why`). The ledger keeps reason codes, not the numbers
behind them, so each code has a short noun phrase of its own (`i18n.reason_words`; a code its
table does not know, a newer benchkit's, is shown as written, its underscores as spaces)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.numbers import MissingPoint
from benchkit.report.lang import clauses, fmt, marked, tr, trc_marked, trn
from benchkit.report.lang.i18n import (
    backend_name,
    job_seconds_text,
    point_text,
    reason_words,
    span,
    status_word,
)
from benchkit.report.lang.words import CONTEXT_WORDS
from benchkit.report.ledger.rules import RULES
from benchkit.report.ledger.types import Change
from benchkit.report.verdicts.light import NumberChange

# At most this many missing points are named per change; the rest are counted.
NAMED_POINTS = 3


def _points(missing: Sequence[MissingPoint], lang: str) -> str:
    # Slashes between points: a point's own words are joined with commas.
    named = " / ".join(point_text(m.get("point"), lang) for m in missing[:NAMED_POINTS])
    rest = len(missing) - NAMED_POINTS
    if rest > 0:
        return trn(lang, "{points} and {n} more", "{points} and {n} more", rest, points=named)
    return named


def what_changed(c: Change, lang: str) -> str:
    """Everything that changed in one verdict, as clauses: 'status provisional → complete;
    reasons: jobs on another setup removed, stalls added; rules v2 → v3'."""
    d = c["diff"]
    parts: list[str] = []
    if d["presence"] == "new":
        parts.append(tr(lang, "a verdict the earlier publication did not give"))
    elif d["presence"] == "gone":
        parts.append(tr(lang, "no longer given"))
    elif d["value"]:
        parts.append(tr(lang, "value changed"))
    if d["presence"] == "both" and c["earlier_status"] != c["now_status"]:
        parts.append(
            tr(
                lang,
                "status {earlier} → {now}",
                earlier=status_word(c["earlier_status"], lang),
                now=status_word(c["now_status"], lang),
            )
        )
    reasons = [
        tr(lang, "{reason} removed", reason=reason_words(r, lang)) for r in d["reasons_removed"]
    ]
    for r in d["reasons_added"]:
        reasons.append(
            tr(lang, "{reason} added", reason=reason_words(r, lang))
            if d["reasons_known"]
            else tr(lang, "{reason} (the earlier entry recorded no reasons)", reason=r)
        )
    if reasons:
        parts.append(tr(lang, "reasons: {changes}", changes=", ".join(reasons)))
    moved = [_number_change(n, lang) for n in d.get("numbers") or []]
    if moved:
        parts.append(tr(lang, "figures compared: {changes}", changes=", ".join(moved)))
    if d["missing_removed"]:
        parts.append(
            tr(lang, "no longer missing: {points}", points=_points(d["missing_removed"], lang))
        )
    if d["missing_added"]:
        parts.append(tr(lang, "now missing: {points}", points=_points(d["missing_added"], lang)))
    rules = c["why"].get("rules")
    if rules:
        parts.append(tr(lang, "rules v{old} → v{new}", old=rules[0], new=rules[1]))
    return clauses(lang, parts)


def _number_change(n: NumberChange, lang: str) -> str:
    """'Vulkan 1.30x–1.61x → 1.20x–1.31x' (a ratio range), 'CUDA 6.0 s–7.6 s → ...' (seconds
    per unit), 'on/off 1.26x → 1.59x' (drafting)."""

    def ratios(r: list[float]) -> str:
        return span(r[0], r[1], lambda x: fmt.ratio(x, lang), lang)

    def seconds(r: list[float]) -> str:
        return span(r[0], r[1], lambda x: fmt.seconds(x, lang), lang)

    if n["key"] == "value_range":
        name, earlier, now = backend_name(n["of"]), seconds(n["earlier"]), seconds(n["now"])
    elif n["key"] == "on_off_range":
        name, earlier, now = tr(lang, "on/off"), ratios(n["earlier"]), ratios(n["now"])
    else:
        name, earlier, now = backend_name(n["of"]), ratios(n["earlier"]), ratios(n["now"])
    return tr(lang, "{name} {earlier} → {now}", name=name, earlier=earlier, now=now)


def rules_notes(changes: Sequence[Change], lang: str) -> list[str]:
    """What each rules version the corrections cross changed, once each, oldest first:
    'v3: a call far outside its job's own rate ...'."""
    versions: set[int] = set()
    for c in changes:
        rules = c["why"].get("rules")
        if rules:
            versions.update(range(int(rules[0]) + 1, int(rules[1]) + 1))
    return [
        tr(lang, "v{version}: {rules}", version=v, rules=marked(lang, RULES[v]))
        for v in sorted(versions)
        if v in RULES
    ]


def correction_why(why: Mapping[str, Any], lang: str) -> str:
    """The reason a verdict changed, from the ledger's comparison of two publications."""
    bits = []
    for m in why.get("unfinished", []):
        bits.append(
            tr(
                lang,
                "the {point} point had not finished ({status})",
                point=point_text(m["point"], lang),
                status=status_word(m["status"], lang),
            )
        )
    cold = why.get("cold") or {}
    if cold:
        jobs = job_seconds_text(cold, lang)
        bits.append(tr(lang, "cold starts now left out of the figures: {jobs}", jobs=jobs))
    changed = why.get("changed") or {}
    if changed:
        # The ledger's context keys ("builds hip", "sampling") read as words of the language.
        diffs = ", ".join(
            f"{' '.join(_context_word(w, lang) for w in key.split(' '))} {a} → {b}"
            for key, (a, b) in changed.items()
        )
        bits.append(tr(lang, "measured again with {changes}", changes=diffs))
    if why.get("rules"):
        a, b = why["rules"]
        # What each version changed is listed once under the table (rules_notes).
        bits.append(tr(lang, "the verdict rules changed (v{old} → v{new})", old=a, new=b))
    if why.get("data_changed") and not why.get("unfinished"):
        bits.append(tr(lang, "the results differ from those the earlier publication read"))
    if why.get("new_points"):
        n = int(why["new_points"])
        bits.append(trn(lang, "{n} more point completed", "{n} more points completed", n))
    if not bits:
        # Same rules version, same context, no point finished since: the ledger cannot say
        # more (the results folder or benchkit's code changed between the two renders).
        bits.append(
            tr(
                lang,
                "the ledger records no cause: same rules version, same model, hardware, "
                "workload, sampling and builds",
            )
        )
    return "; ".join(bits)  # noun phrases, a list in every language


def _context_word(word: str, lang: str) -> str:
    if word in CONTEXT_WORDS:
        return trc_marked(lang, "changed condition", CONTEXT_WORDS[word])
    return word


def no_change_intro(date: str, rules: Sequence[int], lang: str, post: bool = False) -> str:
    """The corrections' opening when no verdict changed since the last publication: value,
    status, reasons and missing points all equal (the rules version may still differ; a post
    says so in words, without the generator's version numbers)."""
    if post and len(rules) == 2 and rules[0] != rules[1]:
        return tr(
            lang,
            "No verdict has changed since the earlier publication ({date}): value, status and "
            "reasons are the same, though benchkit has changed how it decides verdicts since.",
            date=date,
        )
    if len(rules) == 2 and rules[0] != rules[1]:
        return tr(
            lang,
            "No verdict has changed since the earlier publication ({date}): value, status and "
            "reasons are the same, though the verdict rules changed since (v{old} → v{new}).",
            date=date,
            old=rules[0],
            new=rules[1],
        )
    return tr(
        lang,
        "No verdict has changed since the earlier publication ({date}): value, status and "
        "reasons are the same.",
        date=date,
    )


def post_why(why: Mapping[str, Any], lang: str) -> str:
    """correction_why as a post says it: a changed condition named, not its values (an editor
    found a card list of 400 characters in four cells of a post's corrections)."""
    short = dict(why)
    changed = why.get("changed") or {}
    bits = []
    if changed:
        short.pop("changed")
        names = [" ".join(_context_word(w, lang) for w in key.split(" ")) for key in changed]
        bits.append(
            tr(lang, "it was measured again with other {conditions}", conditions=", ".join(names))
        )
    if short.pop("rules", None):
        # A post's reader needs what changed, not the generator's version numbers (review
        # 11: "rules v12 → v13" in a post's Corrections); the report lists each version.
        bits.append(tr(lang, "benchkit has changed how it decides verdicts since"))
    causes = ("unfinished", "cold", "data_changed", "new_points")
    if not bits or any(short.get(k) for k in causes):
        bits.append(correction_why(short, lang))
    return "; ".join(bits)


def post_line(c: Change, date: str, factor: str, value: Any, lang: str) -> str:
    """One correction as a post gives it, a sentence: what the post of `date` said of
    `factor`, what it says now and why. `value(which)` is the verdict's value in words
    ('earlier', 'now')."""
    presence = c["diff"]["presence"]
    fields = {
        "date": date,
        "factor": factor,
        "why": post_why(c["why"], lang),
    }
    if presence == "new":
        return tr(
            lang,
            "The post of {date} gave no {factor} verdict; it now gives {now} ({status}), "
            "because {why}.",
            now=value("now"),
            status=status_word(c["now_status"], lang),
            **fields,
        )
    if presence == "gone":
        return tr(
            lang,
            "The post of {date} gave {factor} as {earlier}; it no longer gives that verdict, "
            "because {why}.",
            earlier=value("earlier"),
            **fields,
        )
    return tr(
        lang,
        "The post of {date} gave {factor} as {earlier} ({old}); it is now {now} ({new}), "
        "because {why}.",
        earlier=value("earlier"),
        old=status_word(c["earlier_status"], lang),
        now=value("now"),
        new=status_word(c["now_status"], lang),
        **fields,
    )

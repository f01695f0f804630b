"""The figure beside a post's claim: every verdict the answer states ("CUDA looks faster", "A
draft model hurt", "The knee lies between 3 and 16 slots") carries the ratio it stands on, from
the verdict's own numbers (review 11: claims without their figure), and a title states one
finding with its figure (`title_figure`), never a configuration and its time.

The figures are the decided comparisons' (the engine's outcome beyond the margin): what the
claim rests on. A verdict with no decided comparison has no figure here; its open comparisons
are in the list of what is not settled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchkit.report.analysis.numbers import (
    BackendNumbers,
    ComparisonJson,
    DraftingNumbers,
    SlotsNumbers,
)
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, span, tr
from benchkit.report.lang.i18n import backend_name, list_text, point_text, slots_phrase
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.cold_words import cold_decides_all
from benchkit.report.verdicts.common import Verdict

# The engine's outcomes that decide a comparison beyond the margin (benchkit.compare).
_DECIDED = ("worse", "better")


def _range(lo: float, hi: float, lang: str) -> str:
    return span(lang, fmt.ratio(lo, lang), fmt.ratio(hi, lang))


def _took(other: str, base: str, ratio: str, lang: str) -> str:
    # The message the comparisons' sentences use, so both languages word it alike.
    return tr(lang, "{other} took {ratio} the time of {base}", other=other, base=base, ratio=ratio)


def figure(v: Verdict, lang: str) -> str:
    """The figure a verdict's claim stands on, as a clause ('Vulkan took 1.21x–1.31x the time
    of CUDA'); '' where the verdict has none decided, or words its figure itself (a factor's
    sentence names the ratio already)."""
    n = v.numbers
    if isinstance(n, BackendNumbers) and n.ratio_range and v.verdict:
        winner = backend_name(v.verdict)
        took = list_text(
            [
                _took(backend_name(loser), winner, _range(lo, hi, lang), lang)
                for loser, (lo, hi) in sorted(n.ratio_range.items())
            ],
            lang,
        )
        # Figures with cold starts left out say so (review 13: the H200 Vulkan title's
        # 1.21x-1.31x, 1.30x-1.61x as measured).
        return tr(lang, "with cold starts left out, {figure}", figure=took) if n.cold else took
    if isinstance(n, DraftingNumbers) and n.on_off_range:
        lo, hi = n.on_off_range
        took = _took(
            point_text({n.factor: n.on_value}, lang),
            point_text({n.factor: n.off_value}, lang),
            _range(lo, hi, lang),
            lang,
        )
        if "decided_without_cold" in v.reasons:
            # The figure decided is the one without the cold start; the claim's clause gives
            # the one as measured beside it.
            return tr(lang, "with the cold start left out, {figure}", figure=took)
        return took
    if isinstance(n, SlotsNumbers):
        c = _widest(n.comparisons or [])
        if c is not None and c["ratio"] is not None:
            return _took(
                slots_phrase(c["other"]["slots"], lang),
                slots_phrase(c["base"]["slots"], lang),
                fmt.ratio(c["ratio"], lang),
                lang,
            )
    return ""


def figures(v: Verdict, lang: str) -> list[str]:
    """One figure a clause of the verdict's (kind.clauses): a drafter's effect said per
    series ('On CUDA MTP hurt ...', 'On Vulkan MTP hurt ...') has each series' own figure;
    any other verdict its one figure (`figure`) for its first clause."""
    n = v.numbers
    if isinstance(n, DraftingNumbers) and (n.scope_differs or "other_series" in v.reasons):
        return [
            _cold(_series_figure(n, ser["series"], lang), cold_decides_all(v, ser["series"]), lang)
            for ser in n.by_series or []
        ]
    return [figure(v, lang)]


def _cold(figure: str, cold: bool, lang: str) -> str:
    """A series' figure decided only with a cold start left out, said so ('' stays '')."""
    if not figure or not cold:
        return figure
    return tr(lang, "with the cold start left out, {figure}", figure=figure)


def _series_figure(n: DraftingNumbers, series: Mapping[str, object], lang: str) -> str:
    """A drafter's decided on/off ratios on one series, least to most ('' where none)."""
    # The engine's paired ratio, the verdict's (a context's own `ratio` is its table's).
    ratios = [
        r
        for e in n.contexts
        if e["comparison"]["outcome"] in _DECIDED
        and (r := e["comparison"]["ratio"]) is not None
        and all(str(e["context"].get(k)) == str(x) for k, x in series.items())
    ]
    if not ratios:
        return ""
    return _took(
        point_text({n.factor: n.on_value}, lang),
        point_text({n.factor: n.off_value}, lang),
        _range(min(ratios), max(ratios), lang),
        lang,
    )


def _widest(comparisons: Sequence[ComparisonJson]) -> ComparisonJson | None:
    """The decided slot comparison farthest from even: the knee's case in one figure."""
    decided = [
        c
        for c in comparisons
        if c["outcome"] in _DECIDED and c["ratio"] is not None and "slots" in c["other"]
    ]
    return max(decided, key=lambda c: abs((c["ratio"] or 1.0) - 1.0), default=None)


# Which verdict's figure a title states: a comparison of two setups first (the backends,
# then drafting), a knee last; a factor's own sentence carries its figure already.
_TITLE_ORDER = ("backend", "mtp", "spec=", "slots")


def title_figure(by: Mapping[str, Verdict], lang: str) -> str:
    """A title's finding with its figure ('Vulkan took 1.21x–1.31x the time of CUDA'), hedged
    where its verdict is provisional; '' where no verdict has one."""
    found: list[tuple[int, Verdict, str]] = []
    for v in by.values():
        text = figure(v, lang)
        name = registry.kind_of(v.factor).name
        if text and name in _TITLE_ORDER:
            found.append((_TITLE_ORDER.index(name), v, text))
    if not found:
        return ""
    _, v, text = min(found, key=lambda f: f[0])
    n = v.numbers
    if isinstance(n, DraftingNumbers) and "drafts_rejected" in v.reasons and n.acceptance_range:
        # Drafting's cost, not its gain: a title says so (review 13 read "MTP on took
        # 1.45x-1.53x the time of MTP off" with the 3% accepted only in the body).
        text = tr(
            lang,
            "{finding}, with {share} of drafts accepted",
            finding=text,
            share=fmt.pct(n.acceptance_range[1]),
        )
    if v.status != COMPLETE:
        return tr(lang, "{finding} (provisional)", finding=text)
    return text

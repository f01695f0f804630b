"""The drafting verdict's sentence, its section's opening: what turning the drafter on did at
each setting, with the comparisons behind it, through the catalogs."""

from __future__ import annotations

from benchkit.report.analysis.numbers import ComparisonJson, DraftingNumbers, of
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, tr
from benchkit.report.lang.i18n import drafter, effect_word, objective_words, point_text, span
from benchkit.report.verdicts.cold_words import cold_decides_all, cold_open
from benchkit.report.verdicts.common import Verdict, _objective_of
from benchkit.report.verdicts.compare_words import how_text
from benchkit.report.verdicts.factor_words import not_exercised_text
from benchkit.report.verdicts.kinds.drafting.words import (
    measured_cost,
    mtp_runs_text,
    open_value,
    undecided,
)
from benchkit.report.verdicts.reasons import _prov


def mtp_sentence(v: Verdict, lang: str) -> str:
    prov = _prov(v, lang)
    idle = of(DraftingNumbers, v.numbers).not_exercised
    if idle is not None:
        return not_exercised_text(idle, lang)
    if v.verdict is None:
        return tr(
            lang,
            "No complete points compare {drafter} on and off{prov}.",
            drafter=drafter(v.factor, lang),
            prov=prov,
        )
    n = of(DraftingNumbers, v.numbers)
    acc = n.acceptance_range
    acceptance = ""
    if acc and "drafts_rejected" in v.reasons:
        # The section's figures are drafting's cost; said here as in the headline (a review
        # found the section naming the effect with no word of it).
        acceptance = tr(
            lang,
            " Draft acceptance was {acceptance} across all settings measured: these figures are "
            "drafting's measured cost, and what accepted drafts would gain was not tested.",
            acceptance=span(acc[0], acc[1], fmt.pct, lang),
        )
    elif acc:
        acceptance = tr(
            lang,
            " Draft acceptance was {acceptance} across all settings measured.",
            acceptance=span(acc[0], acc[1], fmt.pct, lang),
        )
    # Every figure stated is a comparison's (on against off, paired on one machine or
    # bridged), at the setting it holds for: never the table's means of two machines.
    comps = n.comparisons or []
    # The range is the verdict's (its comparisons on one machine or bridged); each setting's
    # figure follows with its own words, one across machines said so.
    ratios = list(n.on_off_range or []) or [c["ratio"] for c in comps if c["ratio"] is not None]
    runs = open_value(v, lang) if undecided(v) else mtp_runs_text(v.verdict, n.largest, lang)
    series = [ser["series"] for ser in n.by_series or []] or [{}]
    if all(cold_decides_all(v, x) for x in series):
        # Decided only with a cold start left out: the section says so as the headline does
        # (review 13: the H200 Vulkan section opened "MTP appears to have hurt at 1 slot").
        runs = cold_open(v, lang)
    elif v.status != COMPLETE and not undecided(v) and not measured_cost(v):
        # Hedged as the headline hedges it: a review found "N-gram drafting hurt" opening the
        # section of a verdict the headline said "appears to have hurt".
        runs = tr(lang, "appears to have {runs}", runs=runs)
    fields: dict[str, object] = {
        "who": drafter(v.factor, lang, start=True),
        "runs": runs,
        "prov": prov,
        "objective": objective_words(_objective_of(v), lang),
        "acceptance": acceptance,
        "scope": scope_text(n, lang),
    }
    if not ratios:
        return tr(lang, "{who} {runs}{prov}.{acceptance}{scope}", **fields)
    if len(comps) == 1:
        fields["ratio"] = fmt.ratio(ratios[0], lang)
        fields["how"] = how_text(comps[0], lang)
        if v.point:
            return tr(
                lang,
                "{who} {runs}{prov}. On {point}, turning it on took {ratio} the time on "
                "{objective} ({how}).{acceptance}{scope}",
                point=point_text(v.point, lang),
                **fields,
            )
        return tr(
            lang,
            "{who} {runs}{prov}. Turning it on took {ratio} the time on {objective} "
            "({how}).{acceptance}{scope}",
            **fields,
        )
    ratio = span(min(ratios), max(ratios), lambda x: fmt.ratio(x, lang), lang)
    if any(c["machine"] == "across" for c in comps) and not all(
        c["machine"] == "across" for c in comps
    ):
        # The range leaves out the settings compared across machines, listed after it.
        ratio += tr(lang, " (where one machine or a bridge compares them)")
    fields["ratio"] = ratio
    fields["settings"] = "; ".join(_setting_comparison(c, n, lang) for c in comps)
    if v.point:
        return tr(
            lang,
            "{who} {runs}{prov}. On {point}, turning it on took {ratio} the time on "
            "{objective}: {settings}.{acceptance}{scope}",
            point=point_text(v.point, lang),
            **fields,
        )
    return tr(
        lang,
        "{who} {runs}{prov}. Turning it on took {ratio} the time on {objective}: "
        "{settings}.{acceptance}{scope}",
        **fields,
    )


def _setting_comparison(c: ComparisonJson, n: DraftingNumbers, lang: str) -> str:
    """'1 slot 1.45x (1.40x-1.50x on a repeat, 8 units paired)': one setting's comparison of
    on against off, the setting named by what the primary series does not already name."""
    where = {k: x for k, x in c["other"].items() if k != n.factor and k not in (n.primary or {})}
    return tr(
        lang,
        "{setting} {ratio} ({how})",
        setting=point_text(where or c["other"], lang),
        ratio=fmt.ratio(c["ratio"], lang),
        how=how_text(c, lang),
    )


def scope_text(n: DraftingNumbers, lang: str) -> str:
    """When the effect differs between series (backends, say): each series' own runs."""
    if not n.scope_differs:
        return ""
    parts = []
    for s in n.by_series or []:
        runs = s["runs"]
        if all(r["effect"] == "open" for r in runs):
            said = effect_word("open", lang)  # 'not decided', as the table's column says it
        else:
            said = mtp_runs_text(runs, n.largest, lang)
        parts.append(f"{point_text(s['series'], lang)}: {said}")
    return tr(lang, " The effect differed between series: {series}.", series="; ".join(parts))

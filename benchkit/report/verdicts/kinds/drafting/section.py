"""One drafting section (MTP, a draft model, n-gram): the effect per setting."""

from __future__ import annotations

from benchkit.compare.engine import ACROSS, BRIDGED
from benchkit.report.analysis.numbers import ComparisonJson, DraftingNumbers, Point, of
from benchkit.report.analysis.sweep import norm
from benchkit.report.lang import fmt, i18n, tr
from benchkit.report.verdicts.cold_words import with_cold
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.compare_words import sides_cell
from benchkit.report.verdicts.engine_of import figures_apart
from benchkit.report.verdicts.kind import Page, Section
from benchkit.report.verdicts.kinds.drafting.figure import MTP
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence


def section(m: Verdict, page: Page) -> Section:
    lang = page.lang
    dn = of(DraftingNumbers, m.numbers)
    on = norm(dn.on_value)
    mtp = m.factor == MTP
    return {
        "kind": "mtp",
        "title": tr(lang, "MTP (speculative decoding)")
        if mtp
        else tr(lang, "Speculative decoding ({value}) against none", value=on),
        "col_off": tr(lang, "MTP off s/unit") if mtp else "spec=none",
        "col_on": tr(lang, "MTP on s/unit") if mtp else f"spec={on}",
        "text": with_cold(mtp_sentence(m, lang), m, lang),
        "table": [
            dict(
                e,
                setting=i18n.point_text(e["context"], lang)
                + (" †" if _apart(page, m.factor, dn, e["context"]) else ""),
                effect_text=_effect_text(e["effect"], e["comparison"], dn, lang),
                # The table's own ratio only where the verdict compared those very jobs on one
                # machine (rules v12, as the backend table): the H100 MTP table divided figures
                # of two cards (1.67x-1.93x) beside pairs "on two machines".
                ratio=e["ratio"] if _own_pair(e["comparison"]) else None,
                paired=e["comparison"]["ratio"],
                paired_where=sides_cell(e["comparison"], _where(e["comparison"], lang), lang),
                answers=f"{e['drift_changed'] or 0}/{e['drift_probes']}"
                if e["drift_probes"]
                else fmt.DASH,
                first_diff=fmt.num(e["drift_first"], 1)
                if e["drift_changed"] and e["drift_first"] is not None
                else fmt.DASH,
                kld=fmt.kld(e["drift_kld"]),
            )
            for e in dn.contexts
        ],
        "apart_note": any(_apart(page, m.factor, dn, e["context"]) for e in dn.contexts),
        "figure": page.figs.get(m.factor),
        "figure_title": _figure_title(mtp, "slots" in page.sweep.varying, lang),
    }


def _figure_title(mtp: bool, slots: bool, lang: str) -> str:
    """The figure's caption: per slot count where slots were swept, else per setting (review
    13: "per slot count" under a study that ran every point at 1 slot)."""
    if mtp and slots:
        return tr(lang, "MTP on / off: seconds per unit (throughput basis), per slot count")
    if mtp:
        return tr(lang, "MTP on / off: seconds per unit (throughput basis), per setting")
    if slots:
        return tr(lang, "Drafter on / off: seconds per unit (throughput basis), per slot count")
    return tr(lang, "Drafter on / off: seconds per unit (throughput basis), per setting")


def _effect_text(effect: str, c: ComparisonJson, dn: DraftingNumbers, lang: str) -> str:
    """A row's effect, with 'only with a cold start left out' where the comparison as measured
    did not decide it (review 13: the H200 Vulkan table's "hurts" at 1.26x as measured, open)."""
    word = i18n.effect_word(effect, lang)
    cold = {_norm_point(x["base"]) for x in dn.as_measured or []}
    if effect in ("hurts", "helps") and _norm_point(c["base"]) in cold:
        return tr(lang, "{effect}, only with a cold start left out", effect=word)
    return word


def _norm_point(point: Point) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, norm(x)) for k, x in point.items()))


def _apart(page: Page, factor: str, dn: DraftingNumbers, context: Point) -> bool:
    """Whether a row's off and on figures ran on different machines (engine_of)."""
    points = [{**context, factor: dn.off_value}, {**context, factor: dn.on_value}]
    return figures_apart(page.sweep, points)


def _own_pair(c: ComparisonJson) -> bool:
    """Whether the verdict compared the table's own two jobs, on one machine."""
    if c.get("sides"):
        return False  # paired on fewer units than the table's figures hold
    return c["machine"] not in (ACROSS, BRIDGED) and not any("/" in j for j in c["jobs"])


def _where(c: ComparisonJson, lang: str) -> str:
    """How the verdict's pair was compared, where not on the table's own jobs of one machine:
    the table's ratio divides two points' seconds, which may come from two cards or other
    units."""
    if c["machine"] == BRIDGED:
        return tr(lang, "bridged")
    if c["machine"] == ACROSS and c.get("unrecorded"):
        return tr(lang, "machine not recorded")
    if c["machine"] == ACROSS and c.get("sweeps"):
        return tr(lang, "two sweeps")
    if c["machine"] == ACROSS:
        return tr(lang, "two machines")
    if any("/" in j for j in c["jobs"]):
        return tr(lang, "anchor runs")  # jobs of a study.anchors folder
    return ""

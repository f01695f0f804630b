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
                effect_text=i18n.effect_word(e["effect"], lang),
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
        "figure_title": tr(
            lang, "MTP on / off: seconds per unit (throughput basis), per slot count"
        )
        if mtp
        else tr(lang, "Drafter on / off: seconds per unit (throughput basis), per slot count"),
    }


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
    if c["machine"] == ACROSS:
        return tr(lang, "two machines")
    if any("/" in j for j in c["jobs"]):
        return tr(lang, "anchor runs")  # jobs of a study.anchors folder
    return ""

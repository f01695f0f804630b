"""The headline: the verdicts in one sentence of clauses, the recommendation first, through
the catalogs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from benchkit.report.analysis.numbers import (
    FactorNumbers,
    ProjectionNumbers,
    of,
)
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, tr
from benchkit.report.lang.i18n import (
    list_text,
    point_text,
)
from benchkit.report.lang.words import BACKENDS as BACKENDS
from benchkit.report.verdicts import factor_words as fw
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.common import Verdict, is_setting
from benchkit.report.verdicts.kind import Clause
from benchkit.report.verdicts.kind import said as _said
from benchkit.report.verdicts.projection_words import busy_text


class _Opening:
    """A message field that opens a sentence. English writes `{headline:capital}`: its first
    letter a capital; a translation that leaves the spec out keeps the text as it is (Korean
    has no capitals, and a name such as vLLM stays as written there)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __format__(self, spec: str) -> str:
        return self.text[:1].upper() + self.text[1:] if spec == "capital" else self.text


def headline(
    verdicts: Mapping[str, Verdict],
    lang: str,
    unit_name: str,
    varying: Sequence[str] | None = None,
) -> str:
    """The one-line answer, from the verdicts: 'Vulkan won, 4 slots was the knee, MTP helped
    only at 1 slot; about 4.8 h per 100 units'. Provisional parts say so. With `varying` (a
    post's answer), the point names only the settings the sweep varied: those it held fixed
    are said under the answer (review 11: 'at CPU, 1 slot, MTP off, ...')."""
    clauses: list[Clause] = []
    p = verdicts.get("projection")
    for kind, mine in registry.by_kind(verdicts.values()):
        # A prefix kind's verdicts ("spec=draft", "spec=ngram") in the order of their names.
        for v in sorted(mine, key=lambda v: v.factor) if kind.prefix else mine:
            if kind.clauses is not None:
                clauses += kind.clauses(v, lang)
            own = kind.clause(v, lang) if kind.clause is not None else None
            if own:  # a kind that words its clause as one text
                clauses.append(partial(_said, own, lang))
    factors = [v for v in verdicts.values() if isinstance(v.numbers, FactorNumbers)]
    projection = ""
    if p is not None and p.verdict is not None:
        pn = of(ProjectionNumbers, p.numbers)
        projection = tr(
            lang,
            "about {hours} per {units} {unit}s (throughput basis)",
            hours=fmt.hours(pn.seconds, lang),
            units=fmt.integer(pn.units),
            unit=unit_name,
        )
        if factors or pn.application:
            projection = _combination(p, pn, lang, unit_name, varying)
        if pn.units_stated and pn.units_measured is not None:
            # A figure the race stopped early is partly restated: said where it is stated
            # (review 6 found the headline's 10.1 min above both runs that measured the point).
            projection += (
                tr(
                    lang,
                    ", {measured} of its {stated} units measured ({own} a unit on them), the rest"
                    " imputed",
                    measured=fmt.integer(pn.units_measured),
                    stated=fmt.integer(pn.units_stated),
                    own=fmt.seconds(pn.own_s_per_unit, lang),
                )
                if pn.own_s_per_unit is not None
                else tr(
                    lang,
                    ", {measured} of its {stated} units measured, the rest estimated from its "
                    "machine's other points",
                    measured=fmt.integer(pn.units_measured),
                    stated=fmt.integer(pn.units_stated),
                )
            )
    if clauses:
        # TRANSLATORS: what follows the headline's verdicts: the time for the study's units.
        rest = tr(lang, "; {projection}", projection=projection) if projection else ""
        said = ", ".join([c(None) for c in clauses[:-1]] + [clauses[-1](rest)])
    elif projection:
        said = projection
    else:
        return tr(lang, "No verdict: no planned point has a complete result yet") + "."
    provisional = [v for v in verdicts.values() if is_setting(v) and v.status != COMPLETE]
    if provisional:
        # TRANSLATORS: ':capital' writes the first letter as a capital; leave it out where the
        # language does not (it would change a name such as vLLM).
        return tr(lang, "Provisional: {headline:capital}.", headline=_Opening(said))
    # TRANSLATORS: ':capital' as in "Provisional: {headline:capital}.".
    return tr(lang, "{headline:capital}.", headline=_Opening(said))


def _combination(
    p: Verdict,
    pn: ProjectionNumbers,
    lang: str,
    unit_name: str,
    varying: Sequence[str] | None = None,
) -> str:
    """The projection with the recommended combination of every swept setting; with
    application choices, the time at each value measured, none of them recommended."""
    apps = sorted({a["factor"] for a in pn.application or []})
    point = p.point or {}
    if varying is not None:
        point = {k: x for k, x in point.items() if k in varying and k not in apps} or point
    if apps:
        measured = [a for a in pn.application or [] if a["seconds"] is not None]
        named = [point_text({a["factor"]: a["value"]}, lang) for a in measured]
        # A list in words, never a slash (Korean prose has none; issue #45's reader).
        values = list_text(
            [
                tr(lang, "{hours} with {value}", hours=fmt.hours(a["seconds"], lang), value=v)
                + busy_text(a.get("host_busy"), lang)
                for a, v in zip(measured, named, strict=True)
            ],
            lang,
        )
        return tr(
            lang,
            "about {values} per {units} {unit}s at {point}, by the {factors} you choose "
            "(throughput basis)",
            values=values,
            units=fmt.integer(pn.units),
            unit=unit_name,
            point=point_text(point, lang) + busy_text(pn.host_busy, lang),
            factors=fw.names(apps, lang),
        )
    return tr(
        lang,
        "about {hours} per {units} {unit}s at {point} (throughput basis)",
        hours=fmt.hours(pn.seconds, lang),
        units=fmt.integer(pn.units),
        unit=unit_name,
        point=point_text(point, lang) + busy_text(pn.host_busy, lang),
    )

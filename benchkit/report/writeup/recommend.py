"""The report's recommendation state, in one place: the summary, the energy section and the
drift line all say "recommended" only when this says a recommendation is settled, and name
the same point otherwise as the best measured one, in the same words (`point_words`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from benchkit.report.analysis.numbers import Point, ProjectionNumbers, of
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import i18n, tr, trn
from benchkit.report.verdicts import factor_words, registry
from benchkit.report.verdicts.common import Verdict, is_setting
from benchkit.report.verdicts.folder import Analysed

# What the recommendation is, from the projection's point and how settled the verdicts are:
# "settled" (every deciding verdict complete), "provisional" (every planned point finished but
# a deciding verdict is not settled), "best_so_far" (planned points it depends on are
# missing), "none" (no point to name).
SETTLED, PROVISIONAL, BEST_SO_FAR, NONE = "settled", "provisional", "best_so_far", "none"


def deciding(v: Verdict) -> bool:
    """Whether a verdict decides the recommended setting (its status settles it): backend,
    slots, drafting and every factor verdict of a setting, not an application's choice."""
    return is_setting(v)


@dataclass(frozen=True)
class Recommendation:
    """The projection's point and the state of the recommendation it is."""

    point: Point | None
    state: str

    @property
    def settled(self) -> bool:
        """A recommendation the report states without qualification."""
        return self.state == SETTLED


def recommendation(by: Mapping[str, Verdict]) -> Recommendation:
    """The recommendation the verdicts support (`by`: verdicts by factor)."""
    # The projection's point; under open-loop load, the capacity verdict's (no projection).
    proj = registry.recommending(list(by.values()))
    point = proj.point if proj is not None and proj.verdict is not None else None
    if not point:
        return Recommendation(None, NONE)
    if all(v.status == COMPLETE for v in by.values() if deciding(v)):
        return Recommendation(point, SETTLED)
    validity = registry.completeness(by.values())
    if validity is not None and validity.status == COMPLETE:
        return Recommendation(point, PROVISIONAL)
    return Recommendation(point, BEST_SO_FAR)


def point_words(
    rec: Recommendation,
    by: Mapping[str, Verdict],
    lang: str,
    varying: Sequence[str] | None = None,
) -> str:
    """The recommendation's point in words ('' for none), with the application's choices
    (sampling) left to the reader: 'CUDA, 16 slots, MTP off, at the sampling you chose'.
    With `varying` (the factors the sweep varied), only the settings the sweep chose: the
    ones it held fixed are not a choice (`held_fixed`)."""
    if not rec.point:
        return ""
    chosen, _ = split(rec.point, varying)
    point = i18n.point_text(chosen, lang)
    proj = by.get("projection")
    pn = of(ProjectionNumbers, proj.numbers) if proj is not None else None
    apps = sorted({x["factor"] for x in (pn.application or [] if pn else [])})
    if apps and pn is not None and pn.application_at:
        # The sweep measured several of the application's values: the one the point was
        # measured at, named, never "the workload you chose" (a review: both were swept).
        return tr(
            lang,
            "{point}, as measured with {at} ({factors}: your choice, not recommended)",
            point=point,
            at=i18n.point_text(pn.application_at, lang),
            factors=factor_words.names(apps, lang),
        )
    if apps:
        return tr(
            lang,
            "{point}, at the {factors} you chose",
            point=point,
            factors=factor_words.names(apps, lang),
        )
    return point


def split(point: Point, varying: Sequence[str] | None) -> tuple[Point, Point]:
    """The point's settings the sweep varied (chose) and those it held fixed; all chosen
    where `varying` is not given or names none of the point's settings."""
    if varying is None:
        return dict(point), {}
    chosen = {k: x for k, x in point.items() if k in varying}
    if not chosen:
        return dict(point), {}
    return chosen, {k: x for k, x in point.items() if k not in varying}


# A model's name that says it carries MTP layers (benchkit's synthetic models and published
# files name them so: synth-GLM4MoE-30B-A3B-MTP-Q4_K).
_MTP_NAME = re.compile(r"(?<![A-Za-z])MTP(?![A-Za-z])")


def cannot_vary(models: Iterable[str], drafted: bool) -> frozenset[str]:
    """The factors the study's models could not have set another way: MTP where no model
    names MTP layers and no job ran with it on. Its 'off' is then no setting held fixed
    (review 11: "MTP off were held fixed" for a model without MTP layers)."""
    if drafted or any(_MTP_NAME.search(m) for m in models):
        return frozenset()
    return frozenset({"mtp"})


def cannot_vary_in(a: Analysed) -> frozenset[str]:
    """`cannot_vary` for a study's own models and jobs."""
    models = [m.name for r in a.results if (m := r.result.provenance.model) and m.name]
    drafted = any(str(r.factors.get("mtp")).lower() == "true" for r in a.results)
    return cannot_vary(models, drafted)


def held_fixed(
    point: Point | None, varying: Sequence[str], lang: str, cannot: Collection[str] = ()
) -> str:
    """' This sweep varied parallel slots; CUDA and MTP off were held fixed, not compared.'
    ('' where the sweep varied every setting of the point): a setting the sweep never varied
    is not one it chose; one the model cannot vary (`cannot`, cannot_vary) is not said."""
    if not point:
        return ""
    _chosen, fixed = split(point, varying)
    fixed = {k: x for k, x in fixed.items() if k not in cannot}
    if not fixed:
        return ""
    names = [i18n.factor_name(k, lang) for k in varying]
    held = [i18n.point_text({k: x}, lang) for k, x in fixed.items()]
    return trn(
        lang,
        " This sweep varied {factors}; {fixed} was held fixed, not compared.",
        " This sweep varied {factors}; {fixed} were held fixed, not compared.",
        len(held),
        factors=i18n.list_text(names, lang),
        fixed=i18n.list_text(held, lang),
    )

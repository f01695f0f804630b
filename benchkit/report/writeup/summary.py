"""The report's status line and summary paragraph: whether the planned points finished, the
recommendation (or why there is none yet), the projection or capacity, how settled the verdicts
are, and the output drift at the recommended point. The report (view.py) and the terminal's
closing lines (closing.py) both say them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchkit.quality.drift import Drift
from benchkit.report.analysis.numbers import ValidityNumbers, of
from benchkit.report.analysis.quality import kld_text
from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import registry, sentences
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kinds.capacity.words import capacity_value
from benchkit.report.writeup import recommend


def status_and_summary(
    a: Analysed, by: Mapping[str, an.Verdict], lang: str, unit: str
) -> tuple[str, list[str], list[str]]:
    """The status line and the summary paragraph: the recommendation (or why none yet), the
    projection, and how settled the verdicts are. Also the factors whose verdicts are still
    provisional. A sweep whose points all finished can still hold provisional verdicts
    (noise, contamination, runaway outputs): never "complete" beside them."""
    study = a.study
    validity = registry.study_status(by.values())
    # Open-loop load has no projection: its capacity verdict names the point instead.
    proj = by.get("projection")
    unsettled = [
        i18n.factor_name(f, lang)
        for f, v in by.items()
        if recommend.deciding(v) and v.status != an.COMPLETE
    ]
    status_line = _status_line(validity, unsettled, lang)
    # The best completed point is never the answer while a point it depends on is missing.
    rec = recommend.recommendation(by)
    point = recommend.point_words(rec, by, lang, a.sweep.varying)
    # Only what the sweep chose is named; the settings it held fixed are said as such.
    fixed = recommend.held_fixed(rec.point, a.sweep.varying, lang, recommend.cannot_vary_in(a))
    summary = [_recommendation_line(rec, point, fixed, proj, unsettled, lang)]
    if proj is not None:
        summary.append(
            tr(lang, "Projection: {text}", text=sentences.projection_sentence(proj, lang, unit))
        )
    elif (cap := by.get("capacity")) is not None:
        summary.append(tr(lang, "Capacity: {text}", text=capacity_value(cap, lang)))
    summary.append(_settled_line(validity, unsettled, lang))
    drift_line = recommended_drift(a, rec, lang)
    if drift_line:
        summary.append(drift_line)
    elif not study.quality_measured and not a.drift.measured:
        summary.append(tr(lang, "Speed only: output quality was not measured."))
    return status_line, summary, unsettled


def _status_line(validity: an.Verdict, unsettled: Sequence[str], lang: str) -> str:
    """The status line: whether every planned point finished, and if so whether the data
    settle the verdicts that decide the recommendation."""
    planned = of(ValidityNumbers, validity.numbers).planned
    if validity.status == an.COMPLETE and unsettled:
        return tr(
            lang,
            "Every planned point finished ({n}), but the data do not settle {factors} yet; "
            "each section says why.",
            n=planned,
            factors=", ".join(unsettled),
        )
    if validity.status == an.COMPLETE and planned == 1:
        return tr(lang, "Complete: the one planned point finished.")
    if validity.status == an.COMPLETE:
        return tr(lang, "Complete: all {n} planned points finished.", n=planned)
    return tr(
        lang,
        "Provisional: {k} of {n} planned points did not complete ({points}). Verdicts that "
        "depend on them are marked provisional and are not conclusions.",
        k=len(validity.missing),
        n=planned,
        points=i18n.missing_text(validity.missing, lang),
    )


def _recommendation_line(
    rec: recommend.Recommendation,
    point: str,
    fixed: str,
    proj: an.Verdict | None,
    unsettled: Sequence[str],
    lang: str,
) -> str:
    """The summary's first sentence: the recommended setting (settled or provisional, with
    the projection's better point), the best point so far, or that none stands out."""
    if rec.state == recommend.SETTLED:
        return tr(lang, "Recommended setting: {point}.", point=point) + fixed + _better(proj, lang)
    if rec.state == recommend.PROVISIONAL:
        return (
            tr(
                lang,
                "Provisional recommendation: {point}; the data do not settle {factors} yet (see "
                "their sections).",
                point=point,
                factors=", ".join(unsettled),
            )
            + fixed
            + _better(proj, lang)
        )
    if rec.state == recommend.BEST_SO_FAR:
        return tr(
            lang,
            "No recommendation yet: the best completed point so far is {point}, but planned "
            "points it is compared with did not complete.",
            point=point,
        )
    return tr(lang, "No recommendation: the data do not single out a setting.")


def _better(proj: an.Verdict | None, lang: str) -> str:
    """The projection's better point, said after a recommendation ('' without a projection)."""
    return sentences.better_point_text(proj, lang) if proj is not None else ""


def _settled_line(validity: an.Verdict, unsettled: Sequence[str], lang: str) -> str:
    """The summary's sentence on how settled the write-up is: provisional for missing
    points, complete but unsettled, or complete."""
    if validity.status != an.COMPLETE:
        return tr(
            lang,
            "This write-up is provisional: {why}.",
            why=i18n.missing_text(validity.missing, lang),
        )
    if unsettled:
        return tr(
            lang,
            "Every planned point completed, but the data do not settle {factors} yet (see "
            "their sections).",
            factors=", ".join(unsettled),
        )
    return tr(lang, "Every planned point completed.")


def recommended_drift(a: Analysed, rec: recommend.Recommendation, lang: str) -> str | None:
    """The recommended point's output drift beside its speed (benchkit.report.analysis.quality); the
    drift of the point the provisional verdicts name where no recommendation is settled."""
    ds = a.drift
    if not ds.measured:
        return None
    rec_point = rec.point
    if not rec_point:
        # No setting to recommend: the worst drift any job showed, so the summary still says
        # whether anything measured changes the answers.
        worst = max(ds.drift.values(), key=lambda d: (d.changed, d.kld_mean or 0.0))
        return tr(
            lang,
            "Output drift from the reference: at most {k} of {n} probes changed their answer, "
            "mean KL divergence at most {kld} (see Quality).",
            k=worst.changed,
            n=worst.probes,
            kld=kld_text(max((d.kld_mean or 0.0) for d in ds.drift.values())),
        )
    job = next(
        (
            j
            for j, p in ds.points.items()
            if all(str(p.get(k)).lower() == str(v).lower() for k, v in rec_point.items() if k in p)
        ),
        None,
    )
    d = ds.drift.get(job) if job else None
    if not rec.settled:
        return _best_point_drift(job, d, ds.reference, lang)
    if job is None or d is None:
        return tr(lang, "Output drift at the recommended point was not measured (see Quality).")
    if job == ds.reference:
        # Settings, not a point: where a workload was swept, the reference ran one of them.
        return tr(lang, "The recommended settings are the drift reference's own (see Quality).")
    return tr(
        lang,
        "Output drift at the recommended point: {k} of {n} probes changed their answer, mean KL "
        "divergence {kld} from the reference (see Quality).",
        k=d.changed,
        n=d.probes,
        kld=kld_text(d.kld_mean),
    )


def _best_point_drift(job: str | None, d: Drift | None, reference: str | None, lang: str) -> str:
    """The drift line while no recommendation is settled: of the point the provisional
    verdicts name."""
    if job is None or d is None:
        return tr(
            lang,
            "Output drift at the point the provisional verdicts name was not measured "
            "(see Quality).",
        )
    if job == reference:
        return tr(
            lang,
            "The settings the provisional verdicts name are the drift reference's own (see "
            "Quality).",
        )
    return tr(
        lang,
        "Output drift at the point the provisional verdicts name: {k} of {n} probes changed their "
        "answer, mean KL divergence {kld} from the reference (see Quality).",
        k=d.changed,
        n=d.probes,
        kld=kld_text(d.kld_mean),
    )

"""Why a verdict is provisional, in words: each reason code a verdict carries, worded from
its numbers, and the "(Provisional: ...)" a verdict's sentence ends with. It sits above the
words it draws on (stalls, comparisons, the reason codes' noun phrases), so none of them reads
it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchkit.report.analysis.job_builds import BuildTraits
from benchkit.report.analysis.numbers import (
    BackendNumbers,
    CapacityNumbers,
    Capped,
    ComparisonJson,
    DraftContext,
    DraftingNumbers,
    FactorNumbers,
    MachineSpread,
    NoiseEntry,
    ProjectionNumbers,
    SlotsNumbers,
)
from benchkit.report.analysis.stall_words import stalled_text
from benchkit.report.analysis.sweep import COMPLETE, norm
from benchkit.report.lang import clauses, fmt, span, tr, trn
from benchkit.report.lang.i18n import (
    backend_name,
    contamination_text,
    factor_name,
    list_text,
    missing_text,
    point_text,
    reason_words,
    setting_text,
)
from benchkit.report.verdicts.common import PAIRED_UNITS, Verdict
from benchkit.report.verdicts.compare_words import comparison_text, open_text, outcome_words
from benchkit.report.verdicts.slots_words import across_text, partial_rounds_text
from benchkit.report.verdicts.voice import in_post


def _prov(v: Verdict, lang: str) -> str:
    """' (Provisional: why)' after a verdict's sentence; '' for a complete verdict, and in a
    post, whose reasons are listed once under its answer (verdicts.voice)."""
    reasons = "" if in_post() else _prov_reasons(v, lang)
    return tr(lang, " (Provisional: {reasons})", reasons=reasons) if reasons else ""


def _prov_sentence(v: Verdict, lang: str) -> str:
    """'Provisional: why.' as a sentence of its own; '' for a complete verdict, and in a post
    (as `_prov`)."""
    reasons = "" if in_post() else _prov_reasons(v, lang)
    return tr(lang, "Provisional: {reasons}.", reasons=reasons) if reasons else ""


def _prov_reasons(v: Verdict, lang: str) -> str:
    if v.status == COMPLETE:
        return ""
    bits = []
    if len(v.missing) > 2:
        bits.append(
            tr(
                lang,
                "{n} planned points it depends on did not complete (listed under Not run)",
                n=len(v.missing),
            )
        )
    elif v.missing:
        bits.append(tr(lang, "missing: {points}", points=missing_text(v.missing, lang)))
    for r in v.reasons:
        bits.append(reason_text(r, v, lang))
    return clauses(lang, [b for b in bits if b])


def _single_run(v: Verdict, lang: str) -> str:
    """A projection's one run: its units, and the twins' measured noise where the sweep has
    twins ("no confidence interval" beside comparisons "on a repeat" read as a contradiction:
    the CPU study's twin run)."""
    n = v.numbers
    measured = n.units_measured if isinstance(n, ProjectionNumbers) else None
    units = fmt.integer(measured) if measured is not None else "?"
    count = int(measured) if measured is not None else 0
    if isinstance(n, ProjectionNumbers) and n.twin_noise is not None:
        return trn(
            lang,
            "one run of {units} unit, whose run-to-run noise twin runs measured at about "
            "{noise} (one standard deviation)",
            "one run of {units} units, whose run-to-run noise twin runs measured at about "
            "{noise} (one standard deviation)",
            count,
            units=units,
            noise=fmt.pct(n.twin_noise, 1),
        )
    return trn(
        lang,
        "one run of {units} unit, so no confidence interval",
        "one run of {units} units, so no confidence interval",
        count,
        units=units,
    )


def _other_machines(spread: MachineSpread, lang: str) -> str:
    """Which machine a projection's figure is of, how far the sweep's machines differed on
    one point, and the projected point's own figure on another machine where it ran there."""

    def short(m: str) -> str:
        # A card by its UUID, as the cards line names it ('GPU-a482737e'), not its model name
        # again: every card of the sweep is the same model.
        return m.rsplit(" ", 1)[1] if " GPU-" in m else m

    fields = {
        "machine": short(spread["machine"]),
        "ratio": fmt.ratio(spread["ratio"], lang),
        "other": short(spread.get("other", "")),
        "own": fmt.ratio(spread.get("own", 1.0), lang),
    }
    if "own" in spread and "other" in spread:
        return trn(
            lang,
            "measured on {machine} ({own} its time on {other}); the {n} point run on two "
            "machines took up to {ratio} the time on one as on the other, so another such "
            "machine may differ by as much",
            "measured on {machine} ({own} its time on {other}); the {n} points run on two "
            "machines took up to {ratio} the time on one as on the other, so another such "
            "machine may differ by as much",
            spread["points"],
            **fields,
        )
    return trn(
        lang,
        "measured on {machine}; the {n} point run on two machines took up to {ratio} the time "
        "on one as on the other, so another such machine may differ by as much",
        "measured on {machine}; the {n} points run on two machines took up to {ratio} the time "
        "on one as on the other, so another such machine may differ by as much",
        spread["points"],
        **fields,
    )


def reason_text(reason: str, v: Verdict, lang: str) -> str:
    n = v.numbers
    if reason == "single_run":
        return _single_run(v, lang)
    if reason == "other_machines" and isinstance(n, ProjectionNumbers) and n.machines:
        return _other_machines(n.machines, lang)
    engine = _engine_reason(reason, v, lang)
    if engine is not None:
        return engine
    if reason.startswith("depends_on:"):
        factor = factor_name(reason.split(":", 1)[1], lang)
        return tr(lang, "the {factor} verdict is provisional", factor=factor)
    if reason == "no_result":
        return tr(lang, "the recommended point has no complete result")
    if reason == "no_comparison":
        return tr(lang, "no complete points to compare")
    if reason == "other_series" and isinstance(n, DraftingNumbers):
        return tr(
            lang,
            "compared only on {series}, not on {wanted}",
            series=point_text(n.primary, lang),
            wanted=point_text(n.wanted, lang),
        )
    if reason == "one_slot_count":
        return tr(lang, "only one slot count completed")
    if reason == "inside_noise":
        # Rules v6 and before: no verdict on the engine gives this reason.
        noisy = BackendNumbers | SlotsNumbers
        return noise_text((n.noise if isinstance(n, noisy) else None) or [], lang)
    if reason == "contaminated":
        judged = (
            BackendNumbers
            | SlotsNumbers
            | DraftingNumbers
            | ProjectionNumbers
            | FactorNumbers
            | CapacityNumbers
        )
        return contamination_text((n.contaminated if isinstance(n, judged) else None) or [], lang)
    capping = SlotsNumbers | ProjectionNumbers | FactorNumbers | CapacityNumbers
    if reason == "capped" and isinstance(n, capping) and n.capped:
        return capped_text(n.capped, lang)
    if reason == "stalled":
        stalled = (
            BackendNumbers
            | SlotsNumbers
            | DraftingNumbers
            | ProjectionNumbers
            | FactorNumbers
            | CapacityNumbers
        )
        return stalled_text((n.stalled if isinstance(n, stalled) else None) or [], lang)
    if reason == "not_exercised":
        return tr(lang, "the run did not exercise {factor}", factor=factor_name(v.factor, lang))
    if reason == "no_noise_estimate":
        return no_noise_text(n.units if isinstance(n, FactorNumbers) else None, lang)
    if reason == "slo_none":
        return tr(lang, "no point met the study's SLO")
    if reason == "race_undecided":
        return tr(
            lang,
            "it compares a point the race left undecided against its best (Racing): a "
            "difference its paired test did not settle",
        )
    drafting = _drafting_reason(reason, v, lang)
    if drafting is not None:
        return drafting
    if reason == "run_noise_unmeasured":
        return tr(
            lang,
            "each point ran once, and neither a twin run nor a declared noise says how far a "
            "second run would move it (a whole run can shift every unit alike): run the sweep "
            "again into another folder and render with study.anchors=[that folder]",
        )
    if reason == "partial_rounds" and isinstance(n, SlotsNumbers) and n.partial_rounds:
        return partial_rounds_text(n.partial_rounds, lang)
    checked = SlotsNumbers | BackendNumbers | DraftingNumbers | FactorNumbers
    if reason == "decided_without_cold" and isinstance(n, checked) and n.as_measured:
        return _as_measured_text(n.as_measured, isinstance(n, DraftingNumbers), lang)
    if reason == "knee_not_reached":
        return tr(lang, "the knee was not reached within the slot counts measured")
    if reason == "open_pairs" and isinstance(
        n, SlotsNumbers | BackendNumbers | DraftingNumbers | FactorNumbers
    ):
        # A drafter is compared on against off at each setting: each pair names its setting.
        return open_text(n.open or [], lang, at=isinstance(n, DraftingNumbers))
    if isinstance(n, CapacityNumbers):
        return _capacity_reason(reason, n, lang)
    # Never a bare code in the prose: the ledger's noun phrase for it.
    return reason_words(reason, lang)


def builds_text(builds: Mapping[str, BuildTraits], lang: str) -> str:
    """Why a backend verdict whose backends' builds differ in more than the backend does not
    say the backend alone made the difference: each backend's differing traits."""
    items = []
    for backend, t in builds.items():
        bits = []
        if "portable" in t:
            bits.append(
                tr(lang, "a portable build (GGML_NATIVE=OFF)")
                if t["portable"]
                else tr(lang, "a native build")
            )
        if "built_on" in t:
            bits.append(tr(lang, "built on {system}", system=t["built_on"]))
        items.append(
            tr(lang, "{backend}: {traits}", backend=backend_name(backend), traits=", ".join(bits))
        )
    return tr(
        lang,
        "the backends' builds differ in more than the backend ({items}), so each ratio is of "
        "these two builds and the backend's own share is not isolated: build both the same way "
        "to isolate it",
        items="; ".join(items),
    )


def _drafting_reason(reason: str, v: Verdict, lang: str) -> str | None:
    """A drafting verdict's own reasons (drafts almost never accepted, settings where nothing
    was drafted); None for any other reason."""
    n = v.numbers
    if reason == "drafts_rejected" and isinstance(n, DraftingNumbers) and n.acceptance_range:
        return tr(
            lang,
            "at most {share} of drafts were accepted, so this measures what drafting costs, not "
            "what it gains where its drafts are accepted",
            share=fmt.pct(n.acceptance_range[1]),
        )
    if reason == "no_drafts_at" and isinstance(n, DraftingNumbers):
        return _no_drafts_text([e for e in n.contexts if e["drafted"] == 0], lang)
    return None


def _no_drafts_text(idle: Sequence[DraftContext], lang: str) -> str:
    """Settings where the drafter drafted no token: no draft was verified, but its lookup ran,
    so the time measured there is neither drafting's effect nor the same work as off (a review
    read "the server did the same work" beside one run 11% slower, the other 4%)."""
    where = list_text([point_text(e["context"], lang) for e in idle], lang)
    ratios = [e["comparison"]["ratio"] for e in idle if e["comparison"]["ratio"] is not None]
    decided = [e for e in idle if e["comparison"]["outcome"] != "open"]
    head = tr(
        lang, "the drafter drafted no token at {where}, so no draft was verified there", where=where
    )
    if not ratios:
        return tr(lang, "{head}: the verdict leaves those settings out", head=head)
    took = tr(
        lang,
        "with it on they took {range} the time with it off",
        range=span(lang, fmt.ratio(min(ratios), lang), fmt.ratio(max(ratios), lang)),
    )
    if decided:
        apart = tr(
            lang,
            "decided apart at {where}: its lookup that found nothing, or noise beyond what the "
            "intervals hold (not isolated)",
            where=list_text([point_text(e["context"], lang) for e in decided], lang),
        )
    else:
        apart = tr(
            lang,
            "none decided apart, so what its lookup cost there is not told from the noise",
        )
    return tr(
        lang,
        "{head}; {took}, {apart}: the verdict leaves those settings out",
        head=head,
        took=took,
        apart=apart,
    )


def _engine_reason(reason: str, v: Verdict, lang: str) -> str | None:
    """The reasons rules v11 added (a restated figure, a bridge whose point-to-point term is
    not measured, builds that differ besides the backend, a knee placed only across
    machines); None for any other reason."""
    n = v.numbers
    if reason == "restated" and isinstance(n, ProjectionNumbers) and n.units_stated:
        measured = int(n.units_measured or 0)
        if n.own_s_per_unit is not None:
            return tr(
                lang,
                "{measured} of the {stated} units its figure is stated on ran at this point"
                " ({own} a unit on them, as measured; the race stopped it there); the others are"
                " estimated from the points measured on its machine",
                measured=fmt.integer(measured),
                stated=fmt.integer(n.units_stated),
                own=fmt.seconds(n.own_s_per_unit, lang),
            )
        return tr(
            lang,
            "{measured} of the {stated} units its figure is stated on ran at this point (the race "
            "stopped it there); the others are estimated from the points measured on its machine",
            measured=fmt.integer(measured),
            stated=fmt.integer(n.units_stated),
        )
    if reason == "bridge_term_unmeasured":
        return tr(
            lang,
            "a comparison bridged between machines rests, at one step from one machine to the "
            "next at least, on one point run on both, so how far those two machines' ratio "
            "moves from one point to another is not measured (its interval holds the largest "
            "such term measured between two other machines of the study, where one was): run "
            "a second point on both",
        )
    if reason == "builds_differ" and isinstance(n, BackendNumbers) and n.builds_differ:
        return builds_text(n.builds_differ, lang)
    if reason == "knee_across" and isinstance(n, SlotsNumbers) and n.across:
        return across_text(n.across, lang)
    return None


def _as_measured_text(pairs: Sequence[ComparisonJson], at: bool, lang: str) -> str:
    """Why a decision a cold start's leaving out made is not settled: each comparison as
    measured, the cold start kept (verdicts.cold_check)."""
    items = []
    for c in pairs:
        items.append(
            tr(
                lang,
                "{comparison}: {outcome}",
                comparison=comparison_text(c, lang, at=at),
                outcome=outcome_words(c["outcome"], lang),
            )
        )
    return tr(
        lang,
        "a comparison it rests on is decided only with a cold start left out, by benchkit's "
        "rule and not by a figure; as measured: {pairs}",
        pairs="; ".join(items),
    )


def _capacity_reason(reason: str, n: CapacityNumbers, lang: str) -> str:
    """Why a capacity verdict is provisional (report/verdicts/kinds/capacity/verdict.py)."""
    settings = n.settings or []
    if reason == "not_bracketed":
        open_ = [setting_text(s["setting"], lang) for s in settings if not s["bracketed"]]
        return tr(
            lang,
            "the loads tried did not bracket the capacity of {settings}: measure higher (or "
            "lower) loads",
            settings=" / ".join(open_),
        )
    if reason == "capacity_marginal":
        return tr(lang, "a capacity within the noise of the SLO's limit")
    if reason == "capacity_tie":
        return tr(lang, "settings held the same load: loads between those tried would tell")
    if reason == "no_slo":
        return tr(lang, "no SLO declared (study.slo): capacity is the most load kept up with")
    return reason_words(reason, lang)


def no_noise_text(units: int | None, lang: str) -> str:
    """A comparison of single runs too small to estimate its own noise."""
    return trn(
        lang,
        "each point ran {units} unit once and the study declares no noise (study.noise), so "
        "a difference cannot be told from run-to-run variation; {need} units a point (or "
        "repeats) would tell",
        "each point ran {units} units once and the study declares no noise (study.noise), so "
        "a difference cannot be told from run-to-run variation; {need} units a point (or "
        "repeats) would tell",
        units or 0,
        units=units or 0,
        need=PAIRED_UNITS,
    )


def noise_text(entries: Sequence[NoiseEntry], lang: str) -> str:
    """'3 slots is only 9% slower, inside the 11% run-to-run noise the study declares'."""
    out = []
    for e in entries:
        # Name only what differs between the two points: "4 slots and 3 slots".
        keys = [k for k in e["other"] if norm(e["other"].get(k)) != norm(e["base"].get(k))]
        keys = keys or list(e["other"])
        other = point_text({k: e["other"][k] for k in keys if k in e["other"]}, lang)
        base = point_text({k: e["base"][k] for k in keys if k in e["base"]}, lang)
        margin = fmt.pct(abs(e["margin"]))
        noise = fmt.pct(e["noise"]) if e.get("noise") is not None else "?"
        points = {"base": base, "other": other, "margin": margin}
        if e.get("basis") == "ci":
            text = tr(
                lang,
                "{base} and {other} differ by {margin}, but their 95% intervals overlap: "
                "more repeats would tell them apart",
                **points,
            )
        elif e.get("basis") == "series":
            text = tr(
                lang,
                "{base} and {other} differ by only {margin}, inside the {noise} noise of the "
                "series' per-unit time ratios (the largest of its pairs with the best count, "
                "one run each)",
                noise=noise,
                **points,
            )
        elif e.get("basis") == "declared":
            text = tr(
                lang,
                "{base} and {other} differ by only {margin}, inside the {noise} run-to-run "
                "noise the study declares",
                noise=noise,
                **points,
            )
        else:
            text = tr(
                lang,
                "{base} and {other} differ by only {margin}, inside the {noise} noise of their "
                "per-unit time ratios (one run each)",
                noise=noise,
                **points,
            )
        out.append(text)
    return "; ".join(out)


def capped_text(c: Capped, lang: str) -> str:
    """'in job 6, 14% of calls and 28% of call time ran to the generation cap (limit 5%)'."""
    shares = []
    if c.get("share_calls") is not None:
        shares.append(tr(lang, "{share} of calls", share=fmt.pct(c["share_calls"])))
    if c.get("share_time") is not None:
        shares.append(tr(lang, "{share} of call time", share=fmt.pct(c["share_time"])))
    return tr(
        lang,
        "in job {job}, {shares} ran to the generation cap (limit {limit})",
        job=c["job"],
        shares=list_text(shares, lang),
        limit=fmt.pct(c["limit"]),
    )

"""The verdicts' sentences: each verdict kind's numbers as the sentence its section opens
with (backend, slots, drafting, repeats, projection, build), through the catalogs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from benchkit.report.analysis.numbers import (
    BackendNumbers,
    ComparisonJson,
    ProjectionNumbers,
    RepeatsNumbers,
    SlotsNumbers,
    of,
)
from benchkit.report.analysis.sweep import COMPLETE, norm
from benchkit.report.lang import clauses, fmt, tr, trc, trn
from benchkit.report.lang.i18n import (
    backend_name,
    list_text,
    missing_text,
    objective_value,
    objective_words,
    point_text,
    slots_phrase,
    span,
)
from benchkit.report.lang.words import BACKENDS as BACKENDS
from benchkit.report.verdicts.common import Verdict, _objective_of
from benchkit.report.verdicts.compare_words import how_text
from benchkit.report.verdicts.factor_words import not_exercised_text
from benchkit.report.verdicts.projection_words import application_text, busy_text
from benchkit.report.verdicts.reasons import _prov, _prov_sentence, capped_text
from benchkit.report.verdicts.slots_words import beyond_text, elsewhere_text, with_series
from benchkit.report.verdicts.voice import in_post


def backend_sentence(v: Verdict, lang: str) -> str:
    n = of(BackendNumbers, v.numbers)
    prov = _prov(v, lang)
    if v.verdict is None:
        return tr(lang, "No complete points compare the backends{prov}.", prov=prov)
    if v.verdict == "no difference":
        return tr(lang, "No difference between the backends beyond the noise{prov}.", prov=prov)
    if v.verdict == "mixed":
        wins = ", ".join(f"{backend_name(b)} {k}" for b, k in (n.winners or {}).items())
        return tr(lang, "No single winner (settings won: {wins}){prov}.", wins=wins, prov=prov)
    winner = backend_name(v.verdict)
    losers = ", ".join(
        tr(
            lang,
            "{name} took {ratio} the time of {winner}",
            name=backend_name(b),
            winner=winner,
            ratio=span(lo, hi, lambda x: fmt.ratio(x, lang), lang),
        )
        for b, (lo, hi) in (n.ratio_range or {}).items()
    )
    ties = n.ties or 0
    tie = (
        trn(
            lang,
            " In {n} other setting the difference was inside the noise.",
            " In {n} other settings the difference was inside the noise.",
            ties,
        )
        if ties
        else ""
    )
    fields: dict[str, object] = {
        "winner": winner,
        "prov": prov,
        "objective": objective_words(_objective_of(v), lang),
        "losers": losers,
        "k": n.compared,
        "tie": tie,
    }
    # A provisional winner reads as one, as the headline says it (an editor found "CUDA won"
    # under "CUDA looks faster").
    settled = v.status == COMPLETE
    if n.range_over is not None and settled:
        text = tr(
            lang,
            "{winner} won{prov}: on {objective}, {losers} on the {m} of {k} settings compared "
            "on one machine.{tie}",
            m=n.range_over,
            **fields,
        )
    elif n.range_over is not None:
        text = tr(
            lang,
            "{winner} looks faster{prov}: on {objective}, {losers} on the {m} of {k} settings "
            "compared on one machine.{tie}",
            m=n.range_over,
            **fields,
        )
    elif settled:
        text = tr(
            lang,
            "{winner} won{prov}: on {objective}, {losers} across the {k} settings compared.{tie}",
            **fields,
        )
    else:
        text = tr(
            lang,
            "{winner} looks faster{prov}: on {objective}, {losers} across the {k} settings "
            "compared.{tie}",
            **fields,
        )
    return text + _answers_text(n, lang)


def _answers_text(n: BackendNumbers, lang: str) -> str:
    """Where the drift probe shows the backends compute differently, beside the ratio: one
    sentence naming each such setting with its answers changed against the reference."""
    where, ties = [], []
    gap = 0.0
    for e in n.contexts:
        answers = e.get("answers")
        if not answers:
            continue
        parts = ", ".join(
            tr(lang, "{name} {k} of {n}", name=backend_name(b), k=k, n=p)
            for b, (k, p) in answers.items()
        )
        text = tr(lang, "{setting} ({parts})", setting=point_text(e["context"], lang), parts=parts)
        tie = e.get("near_tie")
        if tie is None:
            where.append(text)
        else:
            ties.append(text)
            gap = max(gap, tie)
    out = ""
    if where:
        out += tr(
            lang,
            " The backends do not compute the same at {settings}: answers changed against the "
            "reference there, so those ratios compare two computations as well as two speeds.",
            settings="; ".join(where),
        )
    if ties:
        # A flip of a near-tie shows rounding differs, not that another result is computed.
        out += tr(
            lang,
            " Answers changed against the reference at {settings}, but only where the "
            "reference held its two likeliest tokens within {gap} of each other (at the "
            "positions whose likeliest token flipped; where only a greedy answer changed, the "
            "reference's own median margin): a near-tie tipped, which rounding alone does, so "
            "this does not show two computations.",
            settings="; ".join(ties),
            gap=fmt.pct(gap, 1),
        )
    return out


def slots_sentence(v: Verdict, lang: str) -> str:
    n = of(SlotsNumbers, v.numbers)
    prov = _prov(v, lang)
    if n.not_exercised is not None:
        return not_exercised_text(n.not_exercised, lang)
    if v.verdict is None:
        return tr(lang, "No complete points compare slot counts{prov}.", prov=prov)
    k = int(v.verdict)
    gain = fmt.pct(n.knee_gain if n.knee_gain is not None else 0.05)
    obj = with_series(objective_words(_objective_of(v), lang), n, lang)
    if not n.knee_reached:
        return _no_knee(v, n, k, obj, gain, lang) + elsewhere_text(n, k, lang)
    costs = [beyond_text(b, lang) for b in n.beyond or []]
    # One bracket deep at most: the counts below and above the knee each get a sentence of
    # their own (a review found this paragraph's brackets three deep).
    fields: dict[str, object] = {
        "objective": obj,
        # The reasons a report gives follow the paragraph as a sentence of their own: inside
        # it, their comparisons and ranges nested brackets three deep.
        "prov": "",
        "gain": gain,
        # TRANSLATORS: before the counts above the knee, each "{slots} took {ratio} ...".
        "costs": trc(lang, "larger slot counts", ": {items}", items=clauses(lang, costs))
        if costs
        else "",
        "below": _below(n, k, lang),
    }
    if n.knee_low is not None or n.knee_high is not None:
        fields["below"] = _below_range(n, k, lang)
        fields["low"] = n.knee_low if n.knee_low is not None else k
        fields["high"] = n.knee_high if n.knee_high is not None else k
        # Placed only by comparisons across machines (rules v12), said so: not "by the
        # figures", which a table of two machines' means may contradict.
        text = (
            tr(
                lang,
                "On {objective} the knee lies between {low} and {high} slots, at {n} only by "
                "comparisons across machines.{below}",
                n=k,
                **fields,
            )
            if n.across
            else tr(
                lang,
                "On {objective} the knee lies between {low} and {high} slots, at {n} by the "
                "figures.{below}",
                n=k,
                **fields,
            )
        )
    elif v.status == COMPLETE:
        text = trn(
            lang,
            "{n} slot was the knee on {objective}{prov}.{below}",
            "{n} slots was the knee on {objective}{prov}.{below}",
            k,
            **fields,
        )
    else:
        text = trn(
            lang,
            "{n} slot looks like the knee on {objective}{prov}, by the figures.{below}",
            "{n} slots looks like the knee on {objective}{prov}, by the figures.{below}",
            k,
            **fields,
        )
    text += " " + _larger(n, fields, lang)
    text += elsewhere_text(n, k, lang) + tradeoff_text(v, lang)
    return f"{text} {why}" if (why := _prov_sentence(v, lang)) else text


def _larger(n: SlotsNumbers, fields: Mapping[str, object], lang: str) -> str:
    """What the counts above the knee show: none faster beyond the margin, where each is
    settled against the best; where one is open or compared only across machines, that
    whether it is faster was not decided (rules v13: the qwen3 study said "no larger count
    was more than 5% faster" of two counts measured only on another machine state)."""
    if n.above_open:
        counts = list_text([slots_phrase(c, lang) for c in n.above_open], lang)
        return tr(
            lang,
            "Whether {counts} would be more than {gain} faster was not decided{costs}.",
            counts=counts,
            gain=fields["gain"],
            costs=fields["costs"],
        )
    return tr(
        lang,
        "No larger count was more than {gain} faster{costs}.",
        gain=fields["gain"],
        costs=fields["costs"],
    )


def _below(n: SlotsNumbers, k: int, lang: str) -> str:
    """' Each smaller count took more than 5% longer than the best count, 4 slots: 1 slot
    took 1.32x its time, 2 slots 1.10x.' from the knee's comparisons; '' where the knee is
    the fewest count measured."""
    below = [c for c in n.comparisons or [] if int(float(str(c["other"].get("slots", k)))) < k]
    if not below:
        return ""
    pairs = [(slots_phrase(c["other"]["slots"], lang), fmt.ratio(c["ratio"], lang)) for c in below]
    # TRANSLATORS: the first of the counts below the knee; the others follow as
    # "{slots} {ratio}".
    listed = [tr(lang, "{slots} took {ratio} its time", slots=pairs[0][0], ratio=pairs[0][1])]
    listed += [tr(lang, "{slots} {ratio}", slots=a, ratio=r) for a, r in pairs[1:]]
    return tr(
        lang,
        " Each smaller count took more than {gain} longer than the best count, {best}: {listed}.",
        gain=fmt.pct(n.knee_gain if n.knee_gain is not None else 0.05),
        best=slots_phrase(n.best_slots, lang),
        listed=", ".join(listed),
    )


def _below_range(n: SlotsNumbers, k: int, lang: str) -> str:
    """The counts below the knee where comparisons are open: those decided slower than the
    best beyond the margin, then those not decided (the knee may be any of them), then, where
    the knee itself is not decided within the margin of the best, that it may lie above."""
    best = slots_phrase(n.best_slots, lang)
    gain = fmt.pct(n.knee_gain if n.knee_gain is not None else 0.05)
    below = [c for c in n.comparisons or [] if int(float(str(c["other"].get("slots", k)))) < k]
    worse = [c for c in below if c["outcome"] == "worse"]
    open_ = [c for c in below if c["outcome"] != "worse"]
    out = ""
    if worse:
        out += tr(
            lang,
            " Decided slower than the best count, {best}, by more than {gain}: {listed}.",
            best=best,
            gain=gain,
            listed=_ratios_text(worse, lang),
        )
    if open_:
        out += tr(
            lang,
            " Not decided apart from {best} at the {gain} margin: {listed}.",
            best=best,
            gain=gain,
            listed=_ratios_text(open_, lang),
        )
    own = next((c for c in n.comparisons or [] if norm(c["other"].get("slots")) == norm(k)), None)
    if n.knee_high is not None and own is not None and own["ratio"] is not None:
        out += tr(
            lang,
            " {knee} took {ratio} the time of {best}, not decided within the margin either.",
            knee=slots_phrase(k, lang),
            ratio=fmt.ratio(own["ratio"], lang),
            best=best,
        )
    return out


def _ratios_text(pairs: Sequence[ComparisonJson], lang: str) -> str:
    """'1 slot took 1.27x its time, 2 slots 1.14x': each count's ratio to the best."""
    items = [(slots_phrase(c["other"]["slots"], lang), fmt.ratio(c["ratio"], lang)) for c in pairs]
    listed = [tr(lang, "{slots} took {ratio} its time", slots=items[0][0], ratio=items[0][1])]
    listed += [tr(lang, "{slots} {ratio}", slots=a, ratio=r) for a, r in items[1:]]
    return ", ".join(listed)


def _no_knee(v: Verdict, n: SlotsNumbers, k: int, obj: str, gain: str, lang: str) -> str:
    """The slots sentence where no knee was reached: still missing points, or none left."""
    if v.missing:
        rows = n.rows or []
        last = rows[-1]["change_vs_previous"] if len(rows) > 1 else None
        if last is None:
            # One count completed: no step to say anything of (a dangling "by –" before).
            return trn(
                lang,
                "Provisional: {n} slot is the only count that completed, not a conclusion: "
                "{missing} did not complete.",
                "Provisional: {n} slots is the only count that completed, not a conclusion: "
                "{missing} did not complete.",
                k,
                missing=missing_text(v.missing, lang),
            )
        return trn(
            lang,
            "Provisional: {n} slot is only the best completed point, not a conclusion. The "
            "knee was not reached (the last step still changed {objective} by {change}), and "
            "{missing} did not complete.",
            "Provisional: {n} slots is only the best completed point, not a conclusion. The "
            "knee was not reached (the last step still changed {objective} by {change}), and "
            "{missing} did not complete.",
            k,
            objective=obj,
            change=fmt.signed_pct(last),
            missing=missing_text(v.missing, lang),
        )
    if n.knee_low is not None:
        return tr(
            lang,
            "On {objective} the knee may lie anywhere from {low} up: by the figures {slots} was "
            "the best count and the largest tested, and the smaller counts down to {low} are "
            "not decided apart from it{prov}.",
            objective=obj,
            low=slots_phrase(n.knee_low, lang),
            slots=slots_phrase(k, lang),
            prov=_prov(v, lang),
        )
    counts = [r["slots"] for r in n.rows or []]
    prev = max((c for c in counts if c < k), default=None)
    below = [c for c in n.comparisons or [] if norm(c["other"].get("slots")) == norm(prev)]
    if prev is None or not below or prev >= k - 1:
        return tr(
            lang,
            "No knee up to {slots}{prov}: the largest count tested still cut {objective} by "
            "more than {gain}; larger counts need measuring.",
            slots=slots_phrase(k, lang),
            prov=_prov(v, lang),
            objective=obj,
            gain=gain,
        )
    # What lies unmeasured between the last two counts comes before any larger count: the
    # knee may be anywhere between them.
    return tr(
        lang,
        "No knee up to {slots}{prov}: {previous} took {ratio} the time of {slots}, and no count "
        "between them was measured, so the knee may lie between them or above {slots}.",
        slots=slots_phrase(k, lang),
        prov=_prov(v, lang),
        previous=slots_phrase(prev, lang),
        ratio=fmt.ratio(below[0]["ratio"], lang),
    )


def tradeoff_text(v: Verdict, lang: str) -> str:
    """What the knee gives up: ' 8 slots measured 3% faster but needs 2.00x the context.'
    and what runaway outputs did at the knee."""
    n = of(SlotsNumbers, v.numbers)
    out = ""
    f = n.faster
    # A count the sentence listed above the knee has its time and context said already.
    if f and all(norm(b["slots"]) != norm(f["slots"]) for b in n.beyond or []):
        # One convention for differences: the time taken as a multiple, never "x% faster"
        # (a rounded 4.96% read as "5.0% faster, less than the 5% margin").
        out += tr(
            lang,
            " {slots} took {ratio} the knee's time but needs {context} the context.",
            slots=slots_phrase(f["slots"], lang),
            ratio=fmt.ratio(1 - f["faster_by"], lang),
            context=fmt.ratio(f["ctx_ratio"], lang) if f["ctx_ratio"] else fmt.DASH,
        )
    cap = n.capped
    if cap:
        uncapped = cap["objective_uncapped"]
        capped = capped_text(cap, lang)
        if uncapped is not None:
            out += tr(
                lang,
                " At the knee, {capped}; without their time it would be about {without}.",
                capped=capped,
                without=objective_value(_objective_of(v), uncapped, lang),
            )
        else:
            out += tr(lang, " At the knee, {capped}.", capped=capped)
        if n.knee_uncapped is not None:
            out += tr(
                lang,
                " Without the capped calls the knee would be {slots}.",
                slots=slots_phrase(n.knee_uncapped, lang),
            )
    return out


def repeats_sentence(v: Verdict, lang: str, gain: float) -> str:
    if v.verdict is None:
        n = of(RepeatsNumbers, v.numbers)
        declared = n.declared_noise
        if n.open_loop:
            # Open-loop load compares no units: a load held or not on its one pass.
            return tr(
                lang,
                "Each point ran once: whether a load held rests on its one pass, and a load "
                "whose SLO figures came within {noise} of a limit leaves the capacity verdict "
                "provisional.",
                noise=fmt.pct(declared if declared is not None else gain),
            )
        if n.twin_sd is not None:
            # Twins (a sweep run again as anchors) measured the run-to-run noise: saying
            # "each point ran once" beside intervals "on a repeat" read as a contradiction.
            return tr(
                lang,
                "Each point ran once in this sweep and again in the anchor runs: from these "
                "twins, one run's figure varies by about {noise} from run "
                "to run (one standard deviation of its log, {dof} degrees of freedom), and "
                "each comparison's interval holds that noise for both of its runs. A "
                "difference smaller than {gain} (study.knee_gain) is no difference.",
                noise=fmt.pct(math.expm1(n.twin_sd), 1),
                dof=fmt.integer(n.twin_dof) if n.twin_dof is not None else "?",
                gain=fmt.pct(gain),
            )
        if declared is not None:
            return tr(
                lang,
                "Each point ran once. The study declares a run-to-run noise of {noise}: a "
                "margin inside it keeps its direction but leaves the verdict provisional; a "
                "difference smaller than {gain} (study.knee_gain) is no difference.",
                noise=fmt.pct(declared),
                gain=fmt.pct(gain),
            )
        if in_post():
            # A post's answer has said that each point ran once (verdicts.voice).
            return tr(
                lang,
                "Two points are compared on the units both replayed, and a comparison is "
                "decided only where its interval straddles no bound of the margin; a "
                "difference smaller than {gain} (study.knee_gain) is no difference.",
                gain=fmt.pct(gain),
            )
        return tr(
            lang,
            "Each point ran once. Two points are compared on the units both replayed, and a "
            "comparison is decided only where its interval straddles no bound of the margin "
            "(Definitions); a difference smaller than {gain} (study.knee_gain) is no "
            "difference.",
            gain=fmt.pct(gain),
        )
    return trn(
        lang,
        "{n} setting ran more than once; its coefficient of variation was at most {cv}.",
        "{n} settings ran more than once; their coefficient of variation was at most {cv}.",
        int(v.verdict["configs_repeated"]),
        cv=fmt.pct(v.verdict["max_cv"], 1),
    )


def projection_sentence(v: Verdict, lang: str, unit_name: str) -> str:
    n = of(ProjectionNumbers, v.numbers)
    if v.verdict is None:
        return tr(lang, "No projection is possible{prov}.", prov=_prov(v, lang))
    ci = f" ± {fmt.hours(n.ci_seconds, lang)}" if n.ci_seconds else ""
    text = tr(
        lang,
        "About {hours}{ci} per {units} {unit}s at {point}{busy}: {per_unit} per {unit} on the "
        "throughput basis.{better}",
        busy=busy_text(n.host_busy, lang),
        hours=fmt.hours(n.seconds, lang),
        ci=ci,
        units=fmt.integer(n.units),
        unit=unit_name,
        point=point_text(v.point, lang),
        per_unit=fmt.seconds(n.s_per_unit, lang),
        better=_better_here(v, lang),
    )
    if n.application:
        text += " " + application_text(v, lang)
    prov = _prov_sentence(v, lang)
    return f"{text} {prov}" if prov else text


def _better_here(v: Verdict, lang: str) -> str:
    """The faster point beside the projection; in a post, not a count the knee passed over:
    the headline and the slots section already say what it takes and gives (verdicts.voice)."""
    b = of(ProjectionNumbers, v.numbers).better_point
    if in_post() and b and b["why"] == "knee":
        return ""
    return better_point_text(v, lang)


def better_point_text(v: Verdict, lang: str) -> str:
    """Where a complete point beat the recommendation on the objective: which, by how much
    (the engine's comparison: its ratio, its range on a repeat, whether it is decided), and
    why it is not the recommendation, in one sentence."""
    b = of(ProjectionNumbers, v.numbers).better_point
    if not b:
        return ""
    c = b["comparison"]
    outcome = c["outcome"] if c is not None else "open"
    ctx = fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else None
    if b["why"] == "knee" and outcome == "within" and ctx:
        why = tr(
            lang, "it needs {context} the context for a gain inside the knee margin", context=ctx
        )
    elif b["why"] == "knee" and outcome == "within":
        why = tr(lang, "its gain is inside the knee margin")
    elif b["why"] == "knee" and outcome == "open" and ctx:
        why = tr(
            lang,
            "it needs {context} the context for a gain not decided at the knee margin",
            context=ctx,
        )
    elif b["why"] == "knee" and outcome == "open":
        why = tr(lang, "its gain is not decided at the knee margin")
    elif b["why"] == "knee" and ctx:
        why = tr(lang, "it needs {context} the context", context=ctx)
    elif b["why"] == "knee":
        why = tr(lang, "the knee is the fewest count within the margin of the best")
    elif b["why"] == "contaminated":
        why = tr(lang, "its job ran on a different setup than the rest")
    elif b["why"] == "capped":
        why = tr(lang, "too many of its calls ran to the generation cap")
    else:
        # Not a list of factors: a study of drafting and K cache types has no backend or MTP
        # verdict (the CPU study read "the other verdicts (backend, MTP)").
        why = tr(lang, "the verdicts on the factors it differs in do not pick it")
    notes = [how_text(c, lang)] if c is not None else []
    if outcome == "within":
        notes.append(tr(lang, "within the {margin} margin", margin=fmt.pct(b["margin"])))
    elif outcome == "open":
        notes.append(tr(lang, "not decided at the {margin} margin", margin=fmt.pct(b["margin"])))
    text = tr(
        lang,
        " {point} took {ratio} the time on {objective}{noise}, but is not recommended: {why}.",
        point=point_text(b["point"], lang),
        ratio=fmt.ratio(c["ratio"] if c is not None else 1 - b["faster_by"], lang),
        objective=objective_words(_objective_of(v), lang),
        noise=tr(lang, " ({notes})", notes=", ".join(notes)) if notes else "",
        why=why,
    )
    # A point named in words may start lower case ("the prose-10 workload, ..."): a sentence
    # does not (review 10).
    lead = len(text) - len(text.lstrip())
    return text[:lead] + text[lead : lead + 1].upper() + text[lead + 1 :]

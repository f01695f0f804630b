"""The report's sentences: a verdict's numbers turned into the one sentence a reader needs,
in the study's language, with every number formatted by `fmt`.

Every sentence is English source text translated through the catalogs (`benchkit.report.lang`:
`tr`, `trn`, `marked`); where a language's grammar differs (a Korean particle after a name,
another word order), its translation says so, so no code here asks which language it writes.
Nothing here computes a verdict: `analyse` does; this module only says it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from benchkit.report import fmt
from benchkit.report.analyse import COMPLETE, Verdict, norm
from benchkit.report.lang import grammar, marked, tr, trc, trc_marked, trn
from benchkit.report.lang import span as lang_span
from benchkit.report.numbers import (
    BackendNumbers,
    BuildNumbers,
    BuildPair,
    Capped,
    DraftingNumbers,
    Light,
    NoiseEntry,
    ProjectionNumbers,
    RepeatsNumbers,
    Run,
    SlotsNumbers,
    of,
)
from benchkit.report.words import (
    ATTRIBUTES,
    CLAIM_STATUS,
    CONTEXT_WORDS,
    DRAFTERS,
    DRAFTERS_OPENING,
    EFFECT_WORDS,
    FACTORS,
    OBJECTIVE_WORDS,
    STATUS_WORDS,
)
from benchkit.report.words import BACKENDS as BACKENDS


def definitions(base: Mapping[str, str], lang: str) -> dict[str, str]:
    """The metric definitions (benchkit.measure.DEFINITIONS, marked there) in `lang`; one the
    catalog does not translate stays English."""
    return {k: marked(lang, v) for k, v in base.items()}


class _Opening:
    """A message field that opens a sentence. English writes `{headline:capital}`: its first
    letter a capital; a translation that leaves the spec out keeps the text as it is (Korean
    has no capitals, and a name such as vLLM stays as written there)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __format__(self, spec: str) -> str:
        return self.text[:1].upper() + self.text[1:] if spec == "capital" else self.text


# ------------------------------------------------------------------------- small phrases


def backend_name(b: Any) -> str:
    return BACKENDS.get(norm(b), str(b))


def span(lo: float, hi: float, fn: Callable[[float], str], lang: str) -> str:
    """A range of two formatted numbers: '48%–52%' ('48~52%' in Korean); one when equal."""
    return lang_span(lang, fn(lo), fn(hi))


def slots_phrase(n: Any, lang: str) -> str:
    k = int(float(n))
    return trn(lang, "{n} slot", "{n} slots", k)


def mtp_phrase(v: Any, lang: str) -> str:
    return tr(lang, "MTP on") if norm(v) == "true" else tr(lang, "MTP off")


def drafter(factor: str, lang: str, start: bool = False) -> str:
    """What a drafting verdict is about, as the subject of a sentence: 'MTP', 'a draft
    model' ('A draft model' at the start). A drafter without a word is its factor's name."""
    if start and factor in DRAFTERS_OPENING:
        return trc_marked(lang, "drafter opening a sentence", DRAFTERS_OPENING[factor])
    if factor in DRAFTERS:
        return trc_marked(lang, "drafter", DRAFTERS[factor])
    return factor


def point_text(point: Mapping[str, Any] | None, lang: str) -> str:
    """{'backend': 'vulkan', 'slots': 4, 'mtp': False} -> 'Vulkan, 4 slots, MTP off'."""
    if not point:
        return "–"
    parts = []
    order = {"backend": 0, "slots": 1, "mtp": 2}
    for k, v in sorted(point.items(), key=lambda kv: order.get(kv[0], 3)):
        if k == "backend":
            parts.append(backend_name(v))
        elif k == "slots":
            parts.append(slots_phrase(v, lang))
        elif k == "mtp":
            parts.append(mtp_phrase(v, lang))
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def missing_text(missing: Sequence[Any], lang: str, limit: int = 6) -> str:
    """'Vulkan, 4 slots, MTP off (incomplete: ...); HIP, 4 slots, MTP on (not run)'."""
    items = []
    for m in missing[:limit]:
        status = status_word(m.status, lang)
        reason = f": {m.reason}" if m.reason else ""
        items.append(f"{point_text(m.point, lang)} ({status}{reason})")
    more = len(missing) - limit
    if more > 0:
        items.append(tr(lang, "and {n} more", n=more))
    return "; ".join(items)


def _list(items: Sequence[str], lang: str) -> str:
    """'a, b and c' as the language lists things."""
    if len(items) < 2:
        return "".join(items)
    # TRANSLATORS: the end of a list; {items} is the ones before the last, comma-separated.
    return tr(lang, "{items} and {last}", items=", ".join(items[:-1]), last=items[-1])


def factor_name(factor: str, lang: str) -> str:
    return trc_marked(lang, "factor", FACTORS[factor]) if factor in FACTORS else factor


def status_word(status: str, lang: str) -> str:
    if status in STATUS_WORDS:
        return trc_marked(lang, "status", STATUS_WORDS[status])
    return status


def effect_word(effect: Any, lang: str) -> str:
    if effect is None:
        return fmt.DASH
    key = str(effect)
    return trc_marked(lang, "effect", EFFECT_WORDS[key]) if key in EFFECT_WORDS else key


def slot_range(lo: int | None, hi: int | None, largest: int | None, lang: str) -> str:
    """Slot counts of one MTP run: '1 slot', '2+ slots', '2-3 slots' (largest tested closes)."""
    if lo is None:
        return trc(lang, "slot counts", "all")
    if hi is None and largest is not None and largest == lo:
        hi = lo
    if hi is None:
        return tr(lang, "{lo}+ slots", lo=lo)
    if hi == lo:
        return slots_phrase(lo, lang)
    return tr(lang, "{lo}–{hi} slots", lo=lo, hi=hi)


def objective_words(metric: str, lang: str) -> str:
    """'seconds per unit (throughput basis)', 'p95 time to first token'."""
    if metric in OBJECTIVE_WORDS:
        return trc_marked(lang, "objective", OBJECTIVE_WORDS[metric])
    base, _, q = metric.rpartition("_")
    if base not in OBJECTIVE_WORDS:
        return metric
    words = trc_marked(lang, "objective", OBJECTIVE_WORDS[base])
    return tr(lang, "{quantile} {objective}", quantile=q, objective=words)


def objective_value(metric: str, x: Any, lang: str) -> str:
    """A value of the objective in its unit: seconds for s/unit, milliseconds for TTFT/ITL."""
    if metric.startswith(("ttft_ms", "itl_ms")):
        return fmt.millis(x, lang)
    return fmt.seconds(x, lang)


def _objective_of(v: Verdict) -> str:
    n = v.numbers
    judged = BackendNumbers | SlotsNumbers | DraftingNumbers | ProjectionNumbers
    objective = n.objective if isinstance(n, judged) else None
    return str((objective["metric"] if objective else None) or v.basis or "")


def jobs_text(jobs: Sequence[Any], lang: str) -> str:
    """'job 6', 'jobs 12, 13 and 14', as the language counts and lists them."""
    js = [str(j) for j in jobs]
    return trn(lang, "job {jobs}", "jobs {jobs}", len(js), jobs=_list(js, lang))


def contamination_text(entries: Sequence[Mapping[str, Any]], lang: str) -> str:
    """'job 6 ran model file X where the other jobs ran Y' for each entry."""
    out = []
    for e in entries:
        attr = e["attribute"]
        word = trc_marked(lang, "run attribute", ATTRIBUTES[attr]) if attr in ATTRIBUTES else attr
        out.append(
            tr(
                lang,
                "{jobs} ran {attribute} {value} where the other jobs ran {usual}",
                jobs=jobs_text(e["jobs"], lang),
                attribute=word,
                value=e["value"],
                usual=e["usual"],
            )
        )
    return "; ".join(out)


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
        shares=_list(shares, lang),
        limit=fmt.pct(c["limit"]),
    )


# ---------------------------------------------------------------------------- sentences


def _prov(v: Verdict, lang: str) -> str:
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
    return tr(lang, " (Provisional: {reasons})", reasons="; ".join(b for b in bits if b))


def reason_text(reason: str, v: Verdict, lang: str) -> str:
    n = v.numbers
    if reason == "single_run":
        measured = n.units_measured if isinstance(n, ProjectionNumbers) else None
        return trn(
            lang,
            "one run of {units} unit, so no confidence interval",
            "one run of {units} units, so no confidence interval",
            int(measured) if measured is not None else 0,
            units=fmt.integer(measured) if measured is not None else "?",
        )
    if reason.startswith("depends_on:"):
        factor = factor_name(reason.split(":", 1)[1], lang)
        return tr(lang, "the {factor} verdict is provisional", factor=factor)
    if reason == "no_result":
        return tr(lang, "the recommended point has no complete result")
    if reason == "no_comparison":
        return tr(lang, "no complete points to compare")
    if reason == "one_slot_count":
        return tr(lang, "only one slot count completed")
    if reason == "inside_noise":
        noisy = BackendNumbers | SlotsNumbers | DraftingNumbers
        return noise_text((n.noise if isinstance(n, noisy) else None) or [], lang)
    if reason == "contaminated":
        judged = BackendNumbers | SlotsNumbers | DraftingNumbers | ProjectionNumbers
        return contamination_text((n.contaminated if isinstance(n, judged) else None) or [], lang)
    if reason == "capped" and isinstance(n, SlotsNumbers | ProjectionNumbers) and n.capped:
        return capped_text(n.capped, lang)
    if reason == "slo_none":
        return tr(lang, "no point met the study's SLO")
    return reason


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
            "{name} took {ratio} as long",
            name=backend_name(b),
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
    return tr(
        lang,
        "{winner} won{prov}: on {objective}, {losers} across the {k} settings compared.{tie}",
        winner=winner,
        prov=prov,
        objective=objective_words(_objective_of(v), lang),
        losers=losers,
        k=n.compared,
        tie=tie,
    )


def slots_sentence(v: Verdict, lang: str) -> str:
    n = of(SlotsNumbers, v.numbers)
    prov = _prov(v, lang)
    if v.verdict is None:
        return tr(lang, "No complete points compare slot counts{prov}.", prov=prov)
    k = int(v.verdict)
    gain = fmt.pct(n.knee_gain if n.knee_gain is not None else 0.05)
    obj = objective_words(_objective_of(v), lang)
    if not n.knee_reached:
        return _no_knee(v, n, k, obj, gain, lang)
    costs = []
    for b in n.beyond or []:
        costs.append(
            tr(
                lang,
                "{slots}: {change}, slot latency {latency}, context {context}",
                slots=slots_phrase(b["slots"], lang),
                change=fmt.signed_pct(b["change_vs_knee"]),
                latency=fmt.ratio(b["latency_ratio"], lang) if b["latency_ratio"] else fmt.DASH,
                context=fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else fmt.DASH,
            )
        )
    fields: dict[str, Any] = {
        "objective": obj,
        "prov": prov,
        "gain": gain,
        "costs": f" ({'; '.join(costs)})" if costs else "",
    }
    if v.status == COMPLETE:
        text = trn(
            lang,
            "{n} slot was the knee on {objective}{prov}: fewer slots were more than {gain} "
            "worse than the best count, and more slots improved it by less than {gain}{costs}.",
            "{n} slots was the knee on {objective}{prov}: fewer slots were more than {gain} "
            "worse than the best count, and more slots improved it by less than {gain}{costs}.",
            k,
            **fields,
        )
    else:
        text = trn(
            lang,
            "{n} slot looks like the knee on {objective}{prov}: fewer slots were more than "
            "{gain} worse than the best count, and more slots improved it by less than "
            "{gain}{costs}.",
            "{n} slots looks like the knee on {objective}{prov}: fewer slots were more than "
            "{gain} worse than the best count, and more slots improved it by less than "
            "{gain}{costs}.",
            k,
            **fields,
        )
    return text + tradeoff_text(v, lang)


def _no_knee(v: Verdict, n: SlotsNumbers, k: int, obj: str, gain: str, lang: str) -> str:
    """The slots sentence where no knee was reached: still missing points, or none left."""
    if v.missing:
        rows = n.rows or []
        last = rows[-1]["change_vs_previous"] if len(rows) > 1 else None
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
    return tr(
        lang,
        "No knee up to {slots}{prov}: the largest count tested still cut {objective} by more "
        "than {gain}; larger counts need measuring.",
        slots=slots_phrase(k, lang),
        prov=_prov(v, lang),
        objective=obj,
        gain=gain,
    )


def tradeoff_text(v: Verdict, lang: str) -> str:
    """What the knee gives up: ' 8 slots measured 3% faster but needs 2.00x the context.'
    and what runaway outputs did at the knee."""
    n = of(SlotsNumbers, v.numbers)
    out = ""
    f = n.faster
    if f:
        out += tr(
            lang,
            " {slots} measured {pct} faster but needs {context} the context.",
            slots=slots_phrase(f["slots"], lang),
            pct=fmt.pct(f["faster_by"], 1),
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


def mtp_runs_text(runs: Sequence[Run], largest: int | None, lang: str) -> str:
    """'helped only at 1 slot and hurt at 2+ slots' from the effect runs (a drafting verdict's
    value); `largest` is the largest slot count tested."""
    effects = {r["effect"] for r in runs}
    if len(runs) == 1 and runs[0]["from"] is None:
        return {
            "helps": trc(lang, "drafting", "helped"),
            "hurts": trc(lang, "drafting", "hurt"),
            "no difference": trc(lang, "drafting", "made no difference"),
        }[runs[0]["effect"]]
    if len(effects) == 1:
        return {
            "helps": tr(lang, "helped at every slot count"),
            "hurts": tr(lang, "hurt at every slot count"),
            "no difference": tr(lang, "made no difference at any slot count"),
        }[runs[0]["effect"]]
    helps_once = sum(1 for r in runs if r["effect"] == "helps") == 1
    parts = [
        _run_text(r["effect"], helps_once, slot_range(r["from"], r["to"], largest, lang), lang)
        for r in runs[:-1]
    ]
    last = runs[-1]
    where = slot_range(last["from"], last["to"], largest, lang)
    parts.append(_run_text(last["effect"], helps_once, where, lang, last=True))
    return _list(parts, lang)


def _run_text(effect: str, helps_once: bool, where: str, lang: str, last: bool = False) -> str:
    """One run of a drafting verdict: 'helped only at 1 slot'. The last of the list has a
    message of its own, for a language that ends the sentence there in another form."""
    if effect == "helps" and helps_once:
        if last:
            return trc(lang, "last drafting run", "helped only at {where}", where=where)
        return trc(lang, "drafting run", "helped only at {where}", where=where)
    if effect == "helps":
        if last:
            return trc(lang, "last drafting run", "helped at {where}", where=where)
        return trc(lang, "drafting run", "helped at {where}", where=where)
    if effect == "hurts":
        if last:
            return trc(lang, "last drafting run", "hurt at {where}", where=where)
        return trc(lang, "drafting run", "hurt at {where}", where=where)
    if last:
        return trc(lang, "last drafting run", "made no difference at {where}", where=where)
    return trc(lang, "drafting run", "made no difference at {where}", where=where)


def mtp_sentence(v: Verdict, lang: str) -> str:
    prov = _prov(v, lang)
    if v.verdict is None:
        return tr(
            lang,
            "No complete points compare {drafter} on and off{prov}.",
            drafter=drafter(v.factor, lang),
            prov=prov,
        )
    n = of(DraftingNumbers, v.numbers)
    primary = [
        e
        for e in n.contexts
        if all(norm(e["context"].get(k)) == norm(x) for k, x in (n.primary or {}).items())
    ]
    worst = max(primary, key=lambda e: e["ratio"])
    best = min(primary, key=lambda e: e["ratio"])
    acc = n.acceptance_range
    acceptance = ""
    if acc:
        acceptance = tr(
            lang,
            " Draft acceptance was {acceptance} across all settings measured.",
            acceptance=span(acc[0], acc[1], fmt.pct, lang),
        )
    fields: dict[str, Any] = {
        "who": drafter(v.factor, lang, start=True),
        "runs": mtp_runs_text(v.verdict, n.largest, lang),
        "prov": prov,
        "objective": objective_words(_objective_of(v), lang),
        "best": fmt.ratio(best["ratio"], lang),
        "worst": fmt.ratio(worst["ratio"], lang),
        "acceptance": acceptance,
        "scope": scope_text(n, lang),
    }
    if v.point:
        return tr(
            lang,
            "{who} {runs}{prov}. On {point}, turning it on changed {objective} by {best} to "
            "{worst}.{acceptance}{scope}",
            point=point_text(v.point, lang),
            **fields,
        )
    return tr(
        lang,
        "{who} {runs}{prov}. Turning it on changed {objective} by {best} to "
        "{worst}.{acceptance}{scope}",
        **fields,
    )


def scope_text(n: DraftingNumbers, lang: str) -> str:
    """When the effect differs between series (backends, say): each series' own runs."""
    if not n.scope_differs:
        return ""
    parts = []
    for s in n.by_series or []:
        parts.append(
            f"{point_text(s['series'], lang)}: {mtp_runs_text(s['runs'], n.largest, lang)}"
        )
    return tr(lang, " The effect differed between series: {series}.", series="; ".join(parts))


def repeats_sentence(v: Verdict, lang: str, gain: float) -> str:
    if v.verdict is None:
        declared = of(RepeatsNumbers, v.numbers).declared_noise
        if declared is not None:
            return tr(
                lang,
                "Each point ran once. The study declares a run-to-run noise of {noise}: a "
                "margin inside it keeps its direction but leaves the verdict provisional; a "
                "difference smaller than {gain} (study.knee_gain) is no difference.",
                noise=fmt.pct(declared),
                gain=fmt.pct(gain),
            )
        return tr(
            lang,
            "Each point ran once. Two points are compared on the units both replayed: where the "
            "per-unit ratios between them spread wider than the margin, the verdict is "
            "provisional; a difference smaller than {gain} (study.knee_gain) is no difference.",
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
        "About {hours}{ci} per {units} {unit}s at {point}: {per_unit} per {unit} on the "
        "throughput basis.{better}",
        hours=fmt.hours(n.seconds, lang),
        ci=ci,
        units=fmt.integer(n.units),
        unit=unit_name,
        point=point_text(v.point, lang),
        per_unit=fmt.seconds(n.s_per_unit, lang),
        better=better_point_text(v, lang),
    )
    prov = _prov(v, lang).strip().strip("()")
    return f"{text} {prov}." if prov else text


def better_point_text(v: Verdict, lang: str) -> str:
    """Where a complete point beat the recommendation on the objective: which, by how much,
    and why it is not the recommendation, in one sentence."""
    b = of(ProjectionNumbers, v.numbers).better_point
    if not b:
        return ""
    ctx = fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else None
    if b["why"] == "knee" and ctx:
        why = tr(
            lang, "it needs {context} the context for a gain inside the knee margin", context=ctx
        )
    elif b["why"] == "knee":
        why = tr(lang, "its gain is inside the knee margin")
    elif b["why"] == "contaminated":
        why = tr(lang, "its job ran on a different setup than the rest")
    elif b["why"] == "capped":
        why = tr(lang, "too many of its calls ran to the generation cap")
    else:
        why = tr(lang, "the other verdicts (backend, MTP) do not single it out")
    noise = ""
    if b["inside_noise"]:
        noise = tr(lang, " (inside the noise)")
    elif b["below_min_effect"]:
        noise = tr(
            lang,
            " (less than the {effect} the study counts as a difference)",
            effect=fmt.pct(b["min_effect"] or 0),
        )
    return tr(
        lang,
        " {point} measured {pct} faster on {objective}{noise}, but is not recommended: {why}.",
        point=point_text(b["point"], lang),
        pct=fmt.pct(b["faster_by"], 1),
        objective=objective_words(_objective_of(v), lang),
        noise=noise,
        why=why,
    )


def build_sentence(v: Verdict, lang: str) -> str:
    n = of(BuildNumbers, v.numbers)
    if v.verdict == "not comparable":
        why = ", ".join(f"{k}: {a} → {b}" for k, (a, b) in (n.blocked_by or {}).items())
        return tr(
            lang,
            "The two sweeps are not on the same basis, so they are not compared ({why}).",
            why=why,
        )
    if v.verdict is None:
        return tr(lang, "No configuration completed in both sweeps.")
    pairs = n.pairs
    # A verdict other than None means pairs, so a median change.
    pct = fmt.pct(abs(n.median_change or 0.0))
    if v.verdict == "faster":
        head = tr(lang, "The new build was {pct} faster", pct=pct)
    elif v.verdict == "slower":
        head = tr(lang, "The new build was {pct} slower", pct=pct)
    elif v.verdict == "mixed":
        head = tr(lang, "The change was mixed across settings")
    else:
        head = tr(lang, "No difference beyond the noise")
    detail = ""
    if len(pairs) == 1:
        detail = _pair_text(pairs[0], lang)
    elif n.change_range:
        lo, hi = n.change_range
        detail = trn(
            lang,
            " ({n} config, {lo} … {hi})",
            " ({n} configs, {lo} … {hi})",
            len(pairs),
            lo=fmt.signed_pct(lo),
            hi=fmt.signed_pct(hi),
        )
    return f"{head}{detail}{_prov(v, lang)}."


def _pair_text(p: BuildPair, lang: str) -> str:
    """The one configuration both builds ran: its time before and after, and its prefill and
    decode rates."""
    text = tr(
        lang,
        " ({config}: {base} → {new}, throughput basis)",
        config=point_text(p["config"], lang),
        base=fmt.seconds(p["base"], lang),
        new=fmt.seconds(p["new"], lang),
    )
    bits = []
    if p["base_prefill"] and p["new_prefill"]:
        bits.append(
            f"prefill {fmt.num(p['base_prefill'], 0)} → {fmt.num(p['new_prefill'], 0)} tok/s "
            f"({effect_word(p['prefill_effect'], lang)})"
        )
    if p["base_decode"] and p["new_decode"]:
        if p["decode_effect"] == "no difference":
            word = trc(lang, "decode rate", "unchanged")
        else:
            word = effect_word(p["decode_effect"], lang)
        bits.append(
            f"decode {fmt.num(p['base_decode'], 0)} → {fmt.num(p['new_decode'], 0)} tok/s ({word})"
        )
    if bits:
        text += "; " + ", ".join(bits)
    return text


# A clause of the headline. Given None it is one the sentence goes on from; given what
# follows the verdicts (the projection, or ""), it is the one that ends them: a language may
# word the last clause otherwise (Korean ends the sentence there; English only stops adding
# commas), so each clause has a message of each kind, the last with a {rest} field.
Clause = Callable[[str | None], str]


def headline(verdicts: Mapping[str, Verdict], lang: str, unit_name: str) -> str:
    """The one-line answer, from the verdicts: 'Vulkan won, 4 slots was the knee, MTP helped
    only at 1 slot; about 4.8 h per 100 units'. Provisional parts say so."""
    clauses: list[Clause] = []
    b, s, p = (verdicts.get(k) for k in ("backend", "slots", "projection"))
    if b is not None and b.verdict is not None:
        clauses.append(partial(_backend_clause, b, lang))
    if s is not None and s.verdict is not None:
        clauses.append(partial(_slots_clause, s, lang))
    for key in ["mtp", *sorted(k for k in verdicts if k.startswith("spec="))]:
        sv = verdicts.get(key)
        if sv is not None and sv.verdict is not None:
            clauses += _drafting_clauses(key, sv, lang)
    bv = verdicts.get("build")
    if bv is not None and bv.verdict in ("faster", "slower", "no difference"):
        clauses.append(partial(_build_clause, bv, lang))
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
    if clauses:
        # TRANSLATORS: what follows the headline's verdicts: the time for the study's units.
        rest = tr(lang, "; {projection}", projection=projection) if projection else ""
        said = ", ".join([c(None) for c in clauses[:-1]] + [clauses[-1](rest)])
    elif projection:
        said = projection
    else:
        return tr(lang, "No verdict: no planned point has a complete result yet") + "."
    provisional = [
        v
        for f, v in verdicts.items()
        if (f in ("backend", "slots", "mtp") or f.startswith("spec=")) and v.status != COMPLETE
    ]
    if provisional:
        # TRANSLATORS: ':capital' writes the first letter as a capital; leave it out where the
        # language does not (it would change a name such as vLLM).
        return tr(lang, "Provisional: {headline:capital}.", headline=_Opening(said))
    # TRANSLATORS: ':capital' as in "Provisional: {headline:capital}.".
    return tr(lang, "{headline:capital}.", headline=_Opening(said))


def _backend_clause(b: Verdict, lang: str, rest: str | None) -> str:
    if b.verdict == "no difference":
        if rest is None:
            # TRANSLATORS: a clause of the report's headline, which more clauses follow. The
            # same English with {rest} is the headline's last verdict clause; {rest} is what
            # follows it ("; {projection}", or nothing).
            return tr(lang, "the backends did not differ")
        return tr(lang, "the backends did not differ{rest}", rest=rest)
    if b.verdict == "mixed":
        if rest is None:
            return tr(lang, "no single backend won")
        return tr(lang, "no single backend won{rest}", rest=rest)
    name = backend_name(b.verdict)
    if rest is None:
        return tr(lang, "{name} won", name=name)
    return tr(lang, "{name} won{rest}", name=name, rest=rest)


def _slots_clause(s: Verdict, lang: str, rest: str | None) -> str:
    k = int(s.verdict)
    sn = of(SlotsNumbers, s.numbers)
    f = sn.faster if sn.knee_reached else None
    trade = ""
    if f:
        trade = tr(
            lang,
            " ({slots} measured {pct} faster but needs {context} the context)",
            slots=slots_phrase(f["slots"], lang),
            pct=fmt.pct(f["faster_by"], 1),
            context=fmt.ratio(f["ctx_ratio"], lang) if f["ctx_ratio"] else fmt.DASH,
        )
    if sn.knee_reached and s.status == COMPLETE:
        if rest is None:
            return trn(
                lang,
                "{n} slot was the knee{trade}",
                "{n} slots was the knee{trade}",
                k,
                trade=trade,
            )
        return trn(
            lang,
            "{n} slot was the knee{trade}{rest}",
            "{n} slots was the knee{trade}{rest}",
            k,
            trade=trade,
            rest=rest,
        )
    if sn.knee_reached:
        if rest is None:
            return trn(
                lang,
                "{n} slot looks like the knee{trade}",
                "{n} slots looks like the knee{trade}",
                k,
                trade=trade,
            )
        return trn(
            lang,
            "{n} slot looks like the knee{trade}{rest}",
            "{n} slots looks like the knee{trade}{rest}",
            k,
            trade=trade,
            rest=rest,
        )
    if not s.missing:
        if rest is None:
            return tr(lang, "no knee up to {slots}", slots=slots_phrase(k, lang))
        return tr(lang, "no knee up to {slots}{rest}", slots=slots_phrase(k, lang), rest=rest)
    if rest is None:
        return trn(
            lang,
            "{n} slot is only the best completed point",
            "{n} slots is only the best completed point",
            k,
        )
    return trn(
        lang,
        "{n} slot is only the best completed point{rest}",
        "{n} slots is only the best completed point{rest}",
        k,
        rest=rest,
    )


def _drafting_clauses(key: str, v: Verdict, lang: str) -> list[Clause]:
    """What a drafter did; where its effect differs between series, what it did on each (an
    effect that held on one series only is never generalised)."""
    n = of(DraftingNumbers, v.numbers)
    who = drafter(key, lang)
    if n.scope_differs:
        return [
            partial(
                _series_clause,
                who,
                point_text(ser["series"], lang),
                mtp_runs_text(ser["runs"], n.largest, lang),
                lang,
            )
            for ser in n.by_series or []
        ]
    return [partial(_drafting_clause, who, mtp_runs_text(v.verdict, n.largest, lang), lang)]


def _drafting_clause(who: str, runs: str, lang: str, rest: str | None) -> str:
    if rest is None:
        return tr(lang, "{drafter} {runs}", drafter=who, runs=runs)
    return tr(lang, "{drafter} {runs}{rest}", drafter=who, runs=runs, rest=rest)


def _series_clause(who: str, where: str, runs: str, lang: str, rest: str | None) -> str:
    if rest is None:
        return tr(lang, "on {point} {drafter} {runs}", point=where, drafter=who, runs=runs)
    return tr(
        lang, "on {point} {drafter} {runs}{rest}", point=where, drafter=who, runs=runs, rest=rest
    )


def _build_clause(v: Verdict, lang: str, rest: str | None) -> str:
    pct = fmt.pct(abs(of(BuildNumbers, v.numbers).median_change or 0))
    if v.verdict == "faster":
        if rest is None:
            return tr(lang, "the new build was {pct} faster", pct=pct)
        return tr(lang, "the new build was {pct} faster{rest}", pct=pct, rest=rest)
    if v.verdict == "slower":
        if rest is None:
            return tr(lang, "the new build was {pct} slower", pct=pct)
        return tr(lang, "the new build was {pct} slower{rest}", pct=pct, rest=rest)
    if rest is None:
        return tr(lang, "the new build made no difference")
    return tr(lang, "the new build made no difference{rest}", rest=rest)


def caveat_sentence(c: Mapping[str, Any], lang: str) -> str:
    """One caveat in `lang`, finished as the language finishes a message (Korean names the
    study's unit by its own word)."""
    # Imported here: caveats reads this module at import time.
    from benchkit.report import caveats

    return grammar(lang).finish(caveats.sentence(c, lang))


def claim_status(status: str, lang: str) -> str:
    return trc_marked(lang, "claim", CLAIM_STATUS[status]) if status in CLAIM_STATUS else status


def verdict_value_text(factor: str, value: Any, lang: str, numbers: Light) -> str:
    """A verdict's value as a reader sees it (also for earlier values from the ledger, whose
    numbers are the few the ledger keeps)."""
    if value is None:
        return fmt.DASH
    if factor == "backend":
        if value in ("mixed", "no difference"):
            return effect_word(value, lang)
        return backend_name(value)
    if factor == "slots":
        return slots_phrase(value, lang)
    if (factor == "mtp" or factor.startswith("spec=")) and isinstance(value, list):
        return mtp_runs_text(value, numbers.largest, lang)
    if factor == "projection":
        # The verdict's value is rounded hours; the seconds, where kept, give minutes exactly.
        seconds = numbers.seconds
        return fmt.hours(seconds if seconds else float(value) * 3600, lang)
    if factor == "build":
        return effect_word(value, lang)
    if factor == "repeats" and isinstance(value, dict):
        return f"CV ≤ {fmt.pct(value.get('max_cv'), 1)}"
    if factor == "validity":
        return status_word(str(value), lang)
    if factor.startswith("claim:"):
        return claim_status(str(value), lang)
    return str(value)


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
        bits.append(
            tr(
                lang,
                "the verdict rules changed (v{old} → v{new}: every verdict is judged on the "
                "study's objective, with the noise, contamination and runaway-output rules)",
                old=a,
                new=b,
            )
        )
    if why.get("new_points"):
        n = int(why["new_points"])
        bits.append(trn(lang, "{n} more point completed", "{n} more points completed", n))
    if not bits:
        bits.append(tr(lang, "new measurements"))
    return "; ".join(bits)


def _context_word(word: str, lang: str) -> str:
    if word in CONTEXT_WORDS:
        return trc_marked(lang, "changed condition", CONTEXT_WORDS[word])
    return word

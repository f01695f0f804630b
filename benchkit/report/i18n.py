"""The report's phrases: the words and short texts its sentences are made of (names, points,
slot counts, objectives, missing points, provisional reasons, caveats, claims, corrections),
in the study's language, with every number formatted by `fmt`. The verdicts' own sentences are
in `sentences`, the headline in `headline`.

Every sentence is English source text translated through the catalogs (`benchkit.report.lang`:
`tr`, `trn`, `marked`); where a language's grammar differs (a Korean particle after a name,
another word order), its translation says so, so no code here asks which language it writes.
Nothing here computes a verdict: `analyse` does; this module only says it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchkit.report import fmt
from benchkit.report.lang import marked, tr, trc, trc_marked, trn
from benchkit.report.lang import span as lang_span
from benchkit.report.numbers import (
    BackendNumbers,
    Capped,
    DraftingNumbers,
    FactorNumbers,
    NoiseEntry,
    ProjectionNumbers,
    Run,
    SlotsNumbers,
)
from benchkit.report.sweep import norm
from benchkit.report.verdicts.common import Verdict
from benchkit.report.words import (
    ATTRIBUTES,
    CLAIM_STATUS,
    DRAFTERS,
    DRAFTERS_OPENING,
    EFFECT_WORDS,
    FACTORS,
    OBJECTIVE_WORDS,
    STATUS_WORDS,
)
from benchkit.report.words import BACKENDS as BACKENDS
from benchkit.trust import LEFT_OUT


def definitions(base: Mapping[str, str], lang: str) -> dict[str, str]:
    """The metric definitions (benchkit.measure.DEFINITIONS, marked there) in `lang`; one the
    catalog does not translate stays English."""
    return {k: marked(lang, v) for k, v in base.items()}


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
        reason = f": {recorded_reason(m.reason, lang)}" if m.reason else ""
        items.append(f"{point_text(m.point, lang)} ({status}{reason})")
    more = len(missing) - limit
    if more > 0:
        items.append(tr(lang, "and {n} more", n=more))
    return "; ".join(items)


def recorded_reason(reason: str, lang: str) -> str:
    """A job's recorded reason in the report's language where benchkit's trust check wrote it
    (benchkit.trust.LEFT_OUT); any other reason as recorded."""
    if reason == LEFT_OUT:
        return tr(
            lang,
            "its result.json does not match its digest (edited after it was written): left out",
        )
    return reason


def list_text(items: Sequence[str], lang: str) -> str:
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
    judged = BackendNumbers | SlotsNumbers | DraftingNumbers | ProjectionNumbers | FactorNumbers
    objective = n.objective if isinstance(n, judged) else None
    return str((objective["metric"] if objective else None) or v.basis or "")


def job_seconds_text(seconds_by_job: Mapping[str, float], lang: str) -> str:
    """'job 0 (20.3 s), job 2 (1.7 s)': jobs in run order, each with its seconds (a cold
    start's, say)."""
    ordered = sorted(seconds_by_job.items(), key=lambda kv: (len(kv[0]), kv[0]))
    return ", ".join(
        tr(lang, "job {job} ({seconds} s)", job=j, seconds=format(x, ".1f")) for j, x in ordered
    )


def jobs_text(jobs: Sequence[Any], lang: str) -> str:
    """'job 6', 'jobs 12, 13 and 14', as the language counts and lists them."""
    js = [str(j) for j in jobs]
    return trn(lang, "job {jobs}", "jobs {jobs}", len(js), jobs=list_text(js, lang))


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
                value=_unknown(str(e["value"]), lang),
                usual=_unknown(str(e["usual"]), lang),
            )
        )
    return "; ".join(out)


def _unknown(value: str, lang: str) -> str:
    """evidence.gpu_of's '?' (a card the run did not record) in words."""
    parts = [tr(lang, "an unrecorded card") if p == "?" else p for p in value.split(" + ")]
    return " + ".join(parts)


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


# ---------------------------------------------------------------------------- sentences


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
    if len(runs) == 1 and runs[0]["from"] is not None and runs[0]["from"] == largest:
        # One slot count compared: that count, never "every slot count".
        where = slot_range(runs[0]["from"], runs[0]["to"], largest, lang)
        return _run_text(runs[0]["effect"], False, where, lang, last=True)
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
    return list_text(parts, lang)


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


def claim_status(status: str, lang: str) -> str:
    return trc_marked(lang, "claim", CLAIM_STATUS[status]) if status in CLAIM_STATUS else status

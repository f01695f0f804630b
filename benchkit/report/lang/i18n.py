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

from benchkit.errors import INTERRUPTED, TERMINATED
from benchkit.report.lang import fmt, marked, tr, trc_marked, trn
from benchkit.report.lang import span as lang_span
from benchkit.report.lang.fmt import norm
from benchkit.report.lang.words import (
    ATTRIBUTES,
    CLAIM_STATUS,
    DRAFTERS,
    DRAFTERS_OPENING,
    EFFECT_WORDS,
    FACTORS,
    OBJECTIVE_WORDS,
    REASON_WORDS,
    SAMPLING_WORDS,
    SETTINGS,
    SPEC_WORDS,
    STATUS_WORDS,
)
from benchkit.report.lang.words import BACKENDS as BACKENDS
from benchkit.results.trust import LEFT_OUT


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
    """{'backend': 'vulkan', 'slots': 4, 'mtp': False} -> 'Vulkan, 4 slots, MTP off'; 'the
    setting measured' for a point of no factor (a sweep of one point: its stalls read
    '– (job 0) had 4 stalls')."""
    if not point:
        return tr(lang, "the setting measured")
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
            parts.append(setting_phrase(k, v, lang))
    return ", ".join(parts)


def setting_phrase(key: str, value: Any, lang: str) -> str:
    """One setting in words: 'an f16 K cache' for cache_type_k=f16, 'the code-edit-10
    workload', 'greedy sampling', 'a draft model' for spec=draft; another key as its last
    part's words and the value ('ubatch 256' for server.ubatch=256), never `key=value`."""
    name = key.rsplit(".", 1)[-1]
    # As configs write it, unescaped: the page's own filter escapes the whole phrase once.
    text = fmt.value(value).replace("\\", "")
    if name == "spec" and text in SPEC_WORDS:
        return trc_marked(lang, "setting", SPEC_WORDS[text])
    if name == "sampling" and text in SAMPLING_WORDS:
        return trc_marked(lang, "setting", SAMPLING_WORDS[text])
    if name in SETTINGS:
        return trc_marked(lang, "setting", SETTINGS[name], value=text)
    return f"{name.replace('_', ' ')} {text}"


def setting_text(point: Mapping[str, Any] | None, lang: str) -> str:
    """A server setting as `point_text` names it; 'the setting measured' where the sweep
    varied no setting (open-loop load swept over one setting: its load alone varied)."""
    return point_text(point, lang)


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
    if reason == INTERRUPTED:
        # Said in the report's language: a Korean table cell read "interrupted by the user
        # (Ctrl-C)" (review 11).
        return tr(lang, "interrupted by the user (Ctrl-C)")
    if reason == TERMINATED:
        return tr(lang, "stopped by SIGTERM")
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
    """A value of the objective in its unit: seconds for s/unit, milliseconds for TTFT/ITL; a
    drift limit as what it is (a share of the probes, a KL divergence), never in seconds."""
    if metric.startswith(("ttft_ms", "itl_ms")):
        return fmt.millis(x, lang)
    if metric == "drift_changed":
        return fmt.pct(x)
    if metric == "drift_kld":
        return fmt.kld(x)
    return fmt.seconds(x, lang)


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
        if attr == "card_memory":
            out.append(_card_memory_text(e, lang))
            continue
        if attr == "host_busy":
            out.append(_host_busy_text(e, lang))
            continue
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


def _host_busy_text(e: Mapping[str, Any], lang: str) -> str:
    """Jobs whose CPU server was held back by other work (evidence.host_busy), or, where most
    were, the few that were not."""
    if e["value"] == "busy":
        return tr(
            lang,
            "{jobs} ran while other processes held the CPU their server needed (its threads had "
            "under 80% of their time, other processes kept at least half a core busy): the "
            "comparisons count each as a machine of its own",
            jobs=jobs_text(e["jobs"], lang),
        )
    return tr(
        lang,
        "only {jobs} had the CPU their server needed; the other jobs ran while other processes "
        "held it (their threads had under 80% of their time, other processes kept at least "
        "half a core busy): the comparisons count each of those as a machine of its own",
        jobs=jobs_text(e["jobs"], lang),
    )


def _card_memory_text(e: Mapping[str, Any], lang: str) -> str:
    """A shared card (evidence.shared_cards): the memory in use beyond the sweep's least."""
    return tr(
        lang,
        "{jobs} started with {value} more of the card's memory in use than the least any job "
        "of the sweep found on it (llama-server --list-devices, run before each server), where "
        "the other jobs started with {usual} more",
        jobs=jobs_text(e["jobs"], lang),
        value=str(e["value"]),
        usual=str(e["usual"]),
    )


def _unknown(value: str, lang: str) -> str:
    """evidence.gpu_of's '?' (a card the run did not record) in words."""
    parts = [tr(lang, "an unrecorded card") if p == "?" else p for p in value.split(" + ")]
    return " + ".join(parts)


def claim_status(status: str, lang: str, derived: bool = False) -> str:
    """A claim's status in words; `derived`: checked against derived values only, said so."""
    text = trc_marked(lang, "claim", CLAIM_STATUS[status]) if status in CLAIM_STATUS else status
    if derived:
        return tr(lang, "{status}, by derived values, not measured ones", status=text)
    return text


def reason_words(code: str, lang: str) -> str:
    """One recorded reason as a noun phrase: 'stalls', 'the parallel slots verdict
    provisional'."""
    if code.startswith("depends_on:"):
        factor = factor_name(code.split(":", 1)[1], lang)
        return tr(lang, "the {factor} verdict provisional", factor=factor)
    if code in REASON_WORDS:
        return trc_marked(lang, "verdict reason", REASON_WORDS[code])
    return code.replace("_", " ")

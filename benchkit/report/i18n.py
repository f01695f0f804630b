# ruff: noqa: E501 -- Korean glyphs count double width; its sentences read better unbroken.
"""The report's words in English and Korean: fixed strings, and sentences built from verdicts.

`strings(lang)` gives the fixed strings (section titles, table headers, notices) the
templates print; the functions below turn a verdict's numbers into the one sentence a
reader needs, in the study's language, with every number formatted by `fmt`. Nothing here
computes a verdict: `analyse` does; this module only says it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchkit.report import fmt
from benchkit.report.analyse import COMPLETE, Verdict, norm
from benchkit.report.lang import marked, tr, trn
from benchkit.report.lang import span as lang_span
from benchkit.report.lang.ko import particle, with_unit
from benchkit.report.numbers import (
    BackendNumbers,
    BuildNumbers,
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
from benchkit.report.strings_en import EN as _EN
from benchkit.report.strings_ko import KO as _KO
from benchkit.report.words import ATTRIBUTES as _ATTRIBUTES
from benchkit.report.words import BACKENDS as BACKENDS
from benchkit.report.words import CONTEXT_WORDS as _CONTEXT_WORDS
from benchkit.report.words import DRAFTERS as _DRAFTERS
from benchkit.report.words import EFFECT_WORDS as _EFFECT_WORDS
from benchkit.report.words import FACTORS as _FACTORS
from benchkit.report.words import OBJECTIVE_WORDS as _OBJECTIVE_WORDS
from benchkit.report.words import STATUS_WORDS as _STATUS_WORDS

LANGS = ("en", "ko")


STRINGS: dict[str, dict[str, str]] = {"en": _EN, "ko": _KO}


def definitions(base: Mapping[str, str], lang: str) -> dict[str, str]:
    """The metric definitions (benchkit.measure.DEFINITIONS, marked there) in `lang`; one the
    catalog does not translate stays English."""
    return {k: marked(lang, v) for k, v in base.items()}


def strings(lang: str) -> dict[str, str]:
    """The fixed strings of one language (English for an unknown one); Korean ones name the
    study's unit by its own word (ko.with_unit)."""
    if lang == "ko":
        return {k: with_unit(v) for k, v in _KO.items()}
    return STRINGS.get(lang, _EN)


def _s(lang: str, key: str, **kw: Any) -> str:
    return strings(lang)[key].format(**kw)


# ------------------------------------------------------------------------- small phrases


def backend_name(b: Any) -> str:
    return BACKENDS.get(norm(b), str(b))


def _particle(name: str, after_consonant: str, after_vowel: str) -> str:
    """`name` with the Korean particle its reading takes (benchkit/report/lang/ko.py)."""
    return particle(name, after_consonant)


def subject(name: str, lang: str) -> str:
    """'Vulkan' -> 'Vulkan이', 'CUDA' -> 'CUDA가' in Korean; the name itself in English."""
    return _particle(name, "이", "가") if lang == "ko" else name


def topic(name: str, lang: str) -> str:
    """'HIP' -> 'HIP은', 'CPU' -> 'CPU는' in Korean; the name itself in English."""
    return _particle(name, "은", "는") if lang == "ko" else name


def span(lo: float, hi: float, fn: Callable[[float], str], lang: str) -> str:
    """A range of two formatted numbers: '48%–52%' ('48~52%' in Korean); one when equal."""
    return lang_span(lang, fn(lo), fn(hi))


def slots_phrase(n: Any, lang: str) -> str:
    k = int(float(n))
    return trn(lang, "{n} slot", "{n} slots", k)


def mtp_phrase(v: Any, lang: str) -> str:
    on = norm(v) == "true"
    return f"MTP {strings(lang)['yes' if on else 'no']}"


def drafter(factor: str, lang: str, start: bool = False) -> str:
    """What a drafting verdict is about, as the subject of a sentence: 'MTP', 'a draft
    model' ('A draft model' at the start), 'MTP는' in Korean."""
    words = _DRAFTERS.get(lang, _DRAFTERS["en"])
    text = words.get(factor) or (f"{factor}은(는)" if lang == "ko" else factor)
    return text[:1].upper() + text[1:] if start and lang != "ko" else text


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
        items.append(f"+{more}" if lang == "ko" else f"and {more} more")
    return "; ".join(items)


def _look_up(table: Mapping[str, Mapping[str, str]], key: str, lang: str) -> str:
    """The word for `key` in `lang` (English where the language has no table; the key itself
    where the table has no word)."""
    return table.get(lang, table["en"]).get(key, key)


def factor_name(factor: str, lang: str) -> str:
    return _look_up(_FACTORS, factor, lang)


def status_word(status: str, lang: str) -> str:
    return _look_up(_STATUS_WORDS, status, lang)


def effect_word(effect: Any, lang: str) -> str:
    if effect is None:
        return fmt.DASH
    return _look_up(_EFFECT_WORDS, str(effect), lang)


def slot_range(lo: int | None, hi: int | None, largest: int | None, lang: str) -> str:
    """Slot counts of one MTP run: '1 slot', '2+ slots', '2-3 slots' (largest tested closes)."""
    if lo is None:
        return "all" if lang != "ko" else "전 구간"
    if hi is None and largest is not None and largest == lo:
        hi = lo
    if hi is None:
        return f"슬롯 {lo}개 이상" if lang == "ko" else f"{lo}+ slots"
    if hi == lo:
        return slots_phrase(lo, lang)
    return f"슬롯 {lo}~{hi}개" if lang == "ko" else f"{lo}–{hi} slots"


def objective_words(metric: str, lang: str) -> str:
    """'seconds per unit (throughput basis)', 'p95 time to first token'."""
    words = _OBJECTIVE_WORDS.get(lang, _OBJECTIVE_WORDS["en"])
    if metric in words:
        return with_unit(words[metric]) if lang == "ko" else words[metric]
    base, _, q = metric.rpartition("_")
    return f"{q} {words.get(base, base)}" if base in words else metric


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
    """'job 6', 'jobs 12, 13 and 14' ('작업 6', '작업 12, 13, 14')."""
    js = [str(j) for j in jobs]
    if lang == "ko":
        return "작업 " + ", ".join(js)
    if len(js) == 1:
        return f"job {js[0]}"
    return "jobs " + ", ".join(js[:-1]) + " and " + js[-1]


def contamination_text(entries: Sequence[Mapping[str, Any]], lang: str) -> str:
    """'job 6 ran model file X where the other jobs ran Y' for each entry."""
    words = _ATTRIBUTES.get(lang, _ATTRIBUTES["en"])
    out = []
    for e in entries:
        attr = words.get(e["attribute"], e["attribute"])
        if lang == "ko":
            out.append(
                f"{topic(jobs_text(e['jobs'], lang), lang)} 다른 작업({e['usual']})과 다른 "
                f"{attr}({e['value']})로 돌았습니다"
            )
        else:
            out.append(
                f"{jobs_text(e['jobs'], lang)} ran {attr} {e['value']} where the other jobs "
                f"ran {e['usual']}"
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
        declared = e.get("basis") == "declared"
        if e.get("basis") == "ci":
            out.append(
                f"{particle(base, '와')} {other}의 차이 {particle(margin, '는')} 95% 신뢰구간이 겹쳐 아직 가릴 수 없습니다"
                if lang == "ko"
                else f"{base} and {other} differ by {margin}, but their 95% intervals overlap: "
                "more repeats would tell them apart"
            )
            continue
        if lang == "ko":
            src = (
                "연구가 밝힌 실행 간 노이즈" if declared else with_unit("단위별 시간으로 잰 노이즈")
            )
            out.append(
                f"{particle(base, '와')} {other}의 차이 {particle(margin, '는')} {src} {noise} 안입니다"
            )
        else:
            src = (
                f"the {noise} run-to-run noise the study declares"
                if declared
                else f"the {noise} noise of their per-unit time ratios (one run each)"
            )
            out.append(f"{base} and {other} differ by only {margin}, inside {src}")
    return "; ".join(out)


def capped_text(c: Capped, lang: str) -> str:
    """'in job 6, 14% of calls and 28% of call time ran to the generation cap (limit 5%)'."""
    limit = fmt.pct(c["limit"])
    calls = fmt.pct(c["share_calls"]) if c.get("share_calls") is not None else None
    time_ = fmt.pct(c["share_time"]) if c.get("share_time") is not None else None
    if lang == "ko":
        what = ", ".join(
            x for x in (calls and f"호출의 {calls}", time_ and f"호출 시간의 {time_}") if x
        )
        return f"작업 {c['job']}에서 {particle(what, '가')} 생성 상한까지 갔습니다(한도 {limit})"
    what = " and ".join(
        x for x in (calls and f"{calls} of calls", time_ and f"{time_} of call time") if x
    )
    return f"in job {c['job']}, {what} ran to the generation cap (limit {limit})"


# ---------------------------------------------------------------------------- sentences


def _prov(v: Verdict, lang: str) -> str:
    if v.status == COMPLETE:
        return ""
    bits = []
    if len(v.missing) > 2:
        bits.append(_s(lang, "missing_many", n=len(v.missing)))
    elif v.missing:
        bits.append(_s(lang, "missing_points", points=missing_text(v.missing, lang)))
    for r in v.reasons:
        bits.append(reason_text(r, v, lang))
    head = "잠정" if lang == "ko" else "Provisional"
    return f" ({head}: " + "; ".join(b for b in bits if b) + ")"


def reason_text(reason: str, v: Verdict, lang: str) -> str:
    ko = lang == "ko"
    n = v.numbers
    if reason == "single_run":
        measured = n.units_measured if isinstance(n, ProjectionNumbers) else None
        units = fmt.integer(measured) if measured is not None else "?"
        return (
            with_unit(f"{units}개 단위를 한 번 돌린 값이라 신뢰구간이 없습니다")
            if ko
            else f"one run of {units} units, so no confidence interval"
        )
    if reason.startswith("depends_on:"):
        f = factor_name(reason.split(":", 1)[1], lang)
        return f"{f} 판정이 아직 확정되지 않았습니다" if ko else f"the {f} verdict is provisional"
    if reason == "no_result":
        return (
            "권장 조합에 완료된 결과가 없습니다"
            if ko
            else "the recommended point has no complete result"
        )
    if reason == "no_comparison":
        return "비교할 완료 조합이 없습니다" if ko else "no complete points to compare"
    if reason == "one_slot_count":
        return "완료된 슬롯 수가 하나뿐입니다" if ko else "only one slot count completed"
    if reason == "inside_noise":
        noisy = BackendNumbers | SlotsNumbers | DraftingNumbers
        return noise_text((n.noise if isinstance(n, noisy) else None) or [], lang)
    if reason == "contaminated":
        judged = BackendNumbers | SlotsNumbers | DraftingNumbers | ProjectionNumbers
        return contamination_text((n.contaminated if isinstance(n, judged) else None) or [], lang)
    if reason == "capped" and isinstance(n, SlotsNumbers | ProjectionNumbers) and n.capped:
        return capped_text(n.capped, lang)
    if reason == "slo_none":
        return "SLO를 지킨 조합이 없습니다" if ko else "no point met the study's SLO"
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
    ko = lang == "ko"
    n = of(SlotsNumbers, v.numbers)
    if v.verdict is None:
        return (
            (
                "슬롯 수를 비교할 완료 조합이 없습니다"
                if ko
                else "No complete points compare slot counts"
            )
            + _prov(v, lang)
            + "."
        )
    k = int(v.verdict)
    gain = fmt.pct(n.knee_gain if n.knee_gain is not None else 0.05)
    metric = _objective_of(v)
    obj = objective_words(metric, lang)
    if not n.knee_reached:
        rows = n.rows or []
        last = rows[-1]["change_vs_previous"] if len(rows) > 1 else None
        if v.missing:
            if ko:
                return (
                    f"잠정: {slots_phrase(k, lang)}는 완료된 조합 중 가장 나은 값일 뿐, 결론이 "
                    f"아닙니다. 무릎에 닿지 않았고(마지막 증가에서 {obj} "
                    f"{fmt.signed_pct(last)}), {missing_text(v.missing, lang)}."
                )
            return (
                f"Provisional: {slots_phrase(k, lang)} is only the best completed point, not "
                f"a conclusion. The knee was not reached (the last step still changed {obj} "
                f"by {fmt.signed_pct(last)}), and {missing_text(v.missing, lang)} did "
                "not complete."
            )
        if ko:
            return (
                f"{slots_phrase(k, lang)}까지 무릎이 없었습니다{_prov(v, lang)}: 가장 큰 슬롯 "
                f"수에서도 {particle(obj, '이')} {gain} 넘게 줄었습니다. 더 큰 슬롯 수를 재 봐야 합니다."
            )
        return (
            f"No knee up to {slots_phrase(k, lang)}{_prov(v, lang)}: the largest count tested "
            f"still cut {obj} by more than {gain}; larger counts need measuring."
        )
    costs = []
    for b in n.beyond or []:
        lat = fmt.ratio(b["latency_ratio"], lang) if b["latency_ratio"] else fmt.DASH
        ctx = fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else fmt.DASH
        change = fmt.signed_pct(b["change_vs_knee"])
        if ko:
            costs.append(
                f"{slots_phrase(b['slots'], lang)}: {change}, 슬롯 지연 {lat}, 컨텍스트 {ctx}"
            )
        else:
            costs.append(
                f"{slots_phrase(b['slots'], lang)}: {change}, slot latency {lat}, context {ctx}"
            )
    if ko:
        was = "무릎이었습니다" if v.status == COMPLETE else "무릎으로 보입니다"
        text = (
            f"{particle(obj, '으로')} 보면 동시 슬롯은 {k}개가 {was}{_prov(v, lang)}. 그보다 적은 슬롯은 "
            f"가장 좋은 값보다 {gain} 넘게 느렸고, 그보다 많은 슬롯은 {gain} 미만으로만 "
            "나아졌습니다" + (f" ({'; '.join(costs)})" if costs else "") + "."
        )
    else:
        was = "was" if v.status == COMPLETE else "looks like"
        text = (
            f"{slots_phrase(k, lang)} {was} the knee on {obj}{_prov(v, lang)}: fewer slots were "
            f"more than {gain} worse than the best count, and more slots improved it by less "
            f"than {gain}" + (f" ({'; '.join(costs)})" if costs else "") + "."
        )
    return text + tradeoff_text(v, lang)


def tradeoff_text(v: Verdict, lang: str) -> str:
    """What the knee gives up: ' 8 slots measured 3% faster but needs 2.00x the context.'
    and what runaway outputs did at the knee."""
    n = of(SlotsNumbers, v.numbers)
    out = ""
    f = n.faster
    if f:
        ctx = fmt.ratio(f["ctx_ratio"], lang) if f["ctx_ratio"] else fmt.DASH
        pct = fmt.pct(f["faster_by"], 1)
        if lang == "ko":
            out += (
                f" {topic(slots_phrase(f['slots'], lang), lang)} {pct} 더 빨랐지만 "
                f"컨텍스트가 {ctx} 필요합니다."
            )
        else:
            out += (
                f" {slots_phrase(f['slots'], lang)} measured {pct} faster but needs {ctx} "
                "the context."
            )
    cap = n.capped
    if cap:
        metric = _objective_of(v)
        uncapped = cap["objective_uncapped"]
        without = objective_value(metric, uncapped, lang) if uncapped is not None else None
        if lang == "ko":
            out += f" 무릎 조합에서 {capped_text(cap, lang)}"
            out += f"; 그 호출을 빼면 약 {without}입니다." if without else "."
        else:
            out += f" At the knee, {capped_text(cap, lang)}"
            out += f"; without their time it would be about {without}." if without else "."
        if n.knee_uncapped is not None:
            other = slots_phrase(n.knee_uncapped, lang)
            out += (
                f" 그 호출을 빼면 무릎은 {other}입니다."
                if lang == "ko"
                else f" Without the capped calls the knee would be {other}."
            )
    return out


def mtp_runs_text(runs: Sequence[Run], largest: int | None, lang: str) -> str:
    """'helped only at 1 slot and hurt at 2+ slots' from the effect runs (a drafting verdict's
    value); `largest` is the largest slot count tested."""
    ko = lang == "ko"
    effects = {r["effect"] for r in runs}
    if len(runs) == 1 and runs[0]["from"] is None:
        return {
            "helps": "도움이 됐습니다" if ko else "helped",
            "hurts": "손해였습니다" if ko else "hurt",
            "no difference": "차이가 없었습니다" if ko else "made no difference",
        }[runs[0]["effect"]]
    if len(effects) == 1:
        e = runs[0]["effect"]
        if ko:
            return {
                "helps": "모든 슬롯 수에서 도움이 됐습니다",
                "hurts": "모든 슬롯 수에서 손해였습니다",
                "no difference": "어느 슬롯 수에서도 차이가 없었습니다",
            }[e]
        return {
            "helps": "helped at every slot count",
            "hurts": "hurt at every slot count",
            "no difference": "made no difference at any slot count",
        }[e]
    parts = []
    helps_once = sum(1 for r in runs if r["effect"] == "helps") == 1
    for r in runs:
        where = slot_range(r["from"], r["to"], largest, lang)
        e = r["effect"]
        if ko:
            word = {"helps": "도움이 됐고", "hurts": "손해였고", "no difference": "차이가 없었고"}[
                e
            ]
            only = "에서만 " if e == "helps" and helps_once else "에서는 "
            parts.append(f"{where}{only}{word}")
        else:
            word = {"helps": "helped", "hurts": "hurt", "no difference": "made no difference"}[e]
            only = " only" if e == "helps" and helps_once else ""
            parts.append(f"{word}{only} at {where}")
    if ko:
        text = ", ".join(parts)
        return text[:-1] + "습니다" if text.endswith("고") else text
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def mtp_sentence(v: Verdict, lang: str) -> str:
    ko = lang == "ko"
    who = drafter(v.factor, lang, start=True)
    if v.verdict is None:
        return (
            (
                f"{who} 켠 것과 끈 것을 같은 설정에서 비교할 완료 조합이 없습니다"
                if ko
                else f"No complete points compare {drafter(v.factor, lang)} on and off"
            )
            + _prov(v, lang)
            + "."
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
    where = point_text(v.point, lang) if v.point else ""
    acc_text = ""
    if acc:
        a = span(acc[0], acc[1], fmt.pct, lang)
        acc_text = (
            f" 투기 토큰 수용률은 모든 설정에서 {a}였습니다."
            if ko
            else f" Draft acceptance was {a} across all settings measured."
        )
    obj = objective_words(_objective_of(v), lang)
    scope = scope_text(n, lang)
    runs = mtp_runs_text(v.verdict, n.largest, lang)
    if ko:
        return (
            f"{who} {runs}{_prov(v, lang)}. {where + ' 기준, ' if where else ''}켜면 {particle(obj, '이')} "
            f"{fmt.ratio(best['ratio'], lang)}에서 {fmt.ratio(worst['ratio'], lang)}까지 "
            f"달라졌습니다.{acc_text}{scope}"
        )
    return (
        f"{who} {runs}{_prov(v, lang)}. {'On ' + where + ', t' if where else 'T'}urning it on changed "
        f"{obj} by {fmt.ratio(best['ratio'], lang)} to "
        f"{fmt.ratio(worst['ratio'], lang)}.{acc_text}{scope}"
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
    if lang == "ko":
        return " 효과가 계열마다 달랐습니다: " + "; ".join(parts) + "."
    return " The effect differed between series: " + "; ".join(parts) + "."


def repeats_sentence(v: Verdict, lang: str, gain: float) -> str:
    if v.verdict is None:
        declared = of(RepeatsNumbers, v.numbers).declared_noise
        if declared is not None:
            return _s(lang, "noise_declared", noise=fmt.pct(declared), gain=fmt.pct(gain))
        return _s(lang, "noise_per_unit", gain=fmt.pct(gain))
    k = v.verdict["configs_repeated"]
    cv = fmt.pct(v.verdict["max_cv"], 1)
    if lang == "ko":
        return f"{k}개 설정을 반복해 돌렸고, 변동계수는 최대 {cv}였습니다."
    return f"{k} settings ran more than once; their coefficient of variation was at most {cv}."


def projection_sentence(v: Verdict, lang: str, unit_name: str) -> str:
    ko = lang == "ko"
    n = of(ProjectionNumbers, v.numbers)
    if v.verdict is None:
        return (
            f"환산할 수 없습니다{_prov(v, lang)}."
            if ko
            else f"No projection is possible{_prov(v, lang)}."
        )
    where = point_text(v.point, lang)
    units = fmt.integer(n.units)
    ci = ""
    if n.ci_seconds:
        ci = f" ± {fmt.hours(n.ci_seconds, lang)}"
    prov = _prov(v, lang).strip().strip("()")
    better = better_point_text(v, lang)
    if ko:
        text = (
            f"{where}에서 {unit_name} {units}개에 약 {fmt.hours(n.seconds, lang)}{ci}입니다"
            f"({unit_name}당 {fmt.seconds(n.s_per_unit, lang)}, 처리량 기준).{better}"
        )
        return f"{text} {prov}." if prov else text
    text = (
        f"About {fmt.hours(n.seconds, lang)}{ci} per {units} {unit_name}s at {where}: "
        f"{fmt.seconds(n.s_per_unit, lang)} per {unit_name} on the throughput basis.{better}"
    )
    return f"{text} {prov}." if prov else text


def better_point_text(v: Verdict, lang: str) -> str:
    """Where a complete point beat the recommendation on the objective: which, by how much,
    and why it is not the recommendation, in one sentence."""
    b = of(ProjectionNumbers, v.numbers).better_point
    if not b:
        return ""
    ko = lang == "ko"
    where = point_text(b["point"], lang)
    pct = fmt.pct(b["faster_by"], 1)
    obj = objective_words(_objective_of(v), lang)
    ctx = fmt.ratio(b["ctx_ratio"], lang) if b["ctx_ratio"] else None
    if b["why"] == "knee":
        if ctx:
            why = (
                f"컨텍스트가 {ctx} 필요한데 차이는 무릎 기준 안입니다"
                if ko
                else f"it needs {ctx} the context for a gain inside the knee margin"
            )
        else:
            why = "차이가 무릎 기준 안입니다" if ko else "its gain is inside the knee margin"
    elif b["why"] == "contaminated":
        why = (
            "그 작업은 나머지와 다른 조건에서 돌았습니다"
            if ko
            else "its job ran on a different setup than the rest"
        )
    elif b["why"] == "capped":
        why = (
            "그 작업은 생성 상한까지 간 호출이 한도를 넘었습니다"
            if ko
            else "too many of its calls ran to the generation cap"
        )
    else:
        why = (
            "다른 판정(백엔드, MTP)이 그 조합을 가리키지 않았습니다"
            if ko
            else "the other verdicts (backend, MTP) do not single it out"
        )
    noise = ""
    if b["inside_noise"]:
        noise = " (노이즈 안)" if ko else " (inside the noise)"
    elif b["below_min_effect"]:
        eff = fmt.pct(b["min_effect"] or 0)
        noise = (
            f" (연구가 차이로 치는 {eff}보다 작음)"
            if ko
            else f" (less than the {eff} the study counts as a difference)"
        )
    if ko:
        return f" {topic(where, lang)} {obj}에서 {pct} 더 빨랐지만{noise} 권장하지 않습니다: {why}."
    return f" {where} measured {pct} faster on {obj}{noise}, but is not recommended: {why}."


def build_sentence(v: Verdict, lang: str) -> str:
    ko = lang == "ko"
    n = of(BuildNumbers, v.numbers)
    if v.verdict == "not comparable":
        why = ", ".join(f"{k}: {a} → {b}" for k, (a, b) in (n.blocked_by or {}).items())
        return (
            f"두 스윕은 같은 기준이 아니라 비교하지 않았습니다({why})."
            if ko
            else f"The two sweeps are not on the same basis, so they are not compared ({why})."
        )
    if v.verdict is None:
        return (
            "두 스윕에 공통으로 완료된 설정이 없습니다."
            if ko
            else "No configuration completed in both sweeps."
        )
    pairs = n.pairs
    p = pairs[0] if len(pairs) == 1 else None
    # A verdict other than None means pairs, so a median change.
    pct = fmt.pct(abs(n.median_change or 0.0))
    if v.verdict == "faster":
        head = f"새 빌드가 {pct} 빨랐습니다" if ko else f"The new build was {pct} faster"
    elif v.verdict == "slower":
        head = f"새 빌드가 {pct} 느렸습니다" if ko else f"The new build was {pct} slower"
    elif v.verdict == "mixed":
        head = "설정에 따라 엇갈렸습니다" if ko else "The change was mixed across settings"
    else:
        head = "노이즈를 넘는 차이가 없었습니다" if ko else "No difference beyond the noise"
    detail = ""
    if p is not None:
        detail = (
            f" ({point_text(p['config'], lang)}: {fmt.seconds(p['base'], lang)} → "
            f"{fmt.seconds(p['new'], lang)}, {'처리량 기준' if ko else 'throughput basis'})"
        )
        bits = []
        if p["base_prefill"] and p["new_prefill"]:
            bits.append(
                f"prefill {fmt.num(p['base_prefill'], 0)} → {fmt.num(p['new_prefill'], 0)} tok/s "
                f"({effect_word(p['prefill_effect'], lang)})"
            )
        if p["base_decode"] and p["new_decode"]:
            same = p["decode_effect"] == "no difference"
            word = (
                ("그대로" if ko else "unchanged") if same else effect_word(p["decode_effect"], lang)
            )
            bits.append(
                f"decode {fmt.num(p['base_decode'], 0)} → {fmt.num(p['new_decode'], 0)} tok/s ({word})"
            )
        if bits:
            detail += "; " + ", ".join(bits)
    elif n.change_range:
        lo, hi = n.change_range
        detail = f" ({len(pairs)} configs, {fmt.signed_pct(lo)} … {fmt.signed_pct(hi)})"
    return f"{head}{detail}{_prov(v, lang)}."


def headline(verdicts: Mapping[str, Verdict], lang: str, unit_name: str) -> str:
    """The one-line answer, from the verdicts: 'Vulkan won, 4 slots was the knee, MTP helped
    only at 1 slot; about 4.8 h per 100 units'. Provisional parts say so."""
    ko = lang == "ko"
    parts: list[str] = []
    b, s, p = (verdicts.get(k) for k in ("backend", "slots", "projection"))
    if b is not None and b.verdict not in (None, "mixed", "no difference"):
        name = backend_name(b.verdict)
        parts.append(f"{name} 백엔드가 이겼고" if ko else f"{name} won")
    elif b is not None and b.verdict == "no difference":
        parts.append("백엔드 간 차이는 노이즈 안이었고" if ko else "the backends did not differ")
    elif b is not None and b.verdict == "mixed":
        parts.append("백엔드는 설정에 따라 엇갈렸고" if ko else "no single backend won")
    if s is not None and s.verdict is not None:
        k = int(s.verdict)
        sn = of(SlotsNumbers, s.numbers)
        f = sn.faster if sn.knee_reached else None
        trade = ""
        if f:
            pct = fmt.pct(f["faster_by"], 1)
            ctx = fmt.ratio(f["ctx_ratio"], lang) if f["ctx_ratio"] else fmt.DASH
            trade = (
                f"({topic(slots_phrase(f['slots'], lang), lang)} {pct} 더 빨랐지만 컨텍스트가 "
                f"{ctx} 필요)"
                if ko
                else f" ({slots_phrase(f['slots'], lang)} measured {pct} faster but needs {ctx} "
                "the context)"
            )
        if sn.knee_reached and s.status == COMPLETE:
            parts.append(
                f"동시 슬롯은 {k}개가 무릎이었고{trade}"
                if ko
                else f"{slots_phrase(k, lang)} was the knee{trade}"
            )
        elif sn.knee_reached:
            parts.append(
                f"동시 슬롯은 {k}개가 무릎으로 보이고{trade}"
                if ko
                else f"{slots_phrase(k, lang)} looks like the knee{trade}"
            )
        elif not s.missing:
            parts.append(
                f"슬롯 {k}개까지 무릎이 없었고" if ko else f"no knee up to {slots_phrase(k, lang)}"
            )
        else:
            parts.append(
                f"슬롯은 완료된 값 중 {k}개가 가장 나았을 뿐이고"
                if ko
                else f"{slots_phrase(k, lang)} is only the best completed point"
            )
    for key in ["mtp", *sorted(k for k in verdicts if k.startswith("spec="))]:
        sv = verdicts.get(key)
        if sv is None or sv.verdict is None:
            continue
        dn = of(DraftingNumbers, sv.numbers)
        if dn.scope_differs:
            # Never generalise an effect that held on one series only: say it per series.
            for ser in dn.by_series or []:
                runs = mtp_runs_text(ser["runs"], dn.largest, lang)
                where = point_text(ser["series"], lang)
                parts.append(
                    f"{where}에서 {drafter(key, lang)} {runs}"
                    if ko
                    else f"on {where} {drafter(key, lang)} {runs}"
                )
        else:
            parts.append(f"{drafter(key, lang)} {mtp_runs_text(sv.verdict, dn.largest, lang)}")
    bv = verdicts.get("build")
    if bv is not None and bv.verdict in ("faster", "slower"):
        pct = fmt.pct(abs(of(BuildNumbers, bv.numbers).median_change or 0))
        word = {"faster": ("빨랐고", "faster"), "slower": ("느렸고", "slower")}[bv.verdict]
        parts.append(f"새 빌드가 {pct} {word[0]}" if ko else f"the new build was {pct} {word[1]}")
    elif bv is not None and bv.verdict == "no difference":
        parts.append("새 빌드와 차이가 없었고" if ko else "the new build made no difference")
    if ko:
        text = ", ".join(parts)
        if text.endswith("고"):
            text = text[:-1] + "습니다"
    else:
        text = ", ".join(parts)
        text = text[:1].upper() + text[1:]
    if p is not None and p.verdict is not None:
        pn = of(ProjectionNumbers, p.numbers)
        units = fmt.integer(pn.units)
        hrs = fmt.hours(pn.seconds, lang)
        if ko:
            proj = f"{unit_name} {units}개에 약 {hrs}(처리량 기준)"
            text = f"{text}. {proj}" if text else proj
        else:
            proj = f"about {hrs} per {units} {unit_name}s (throughput basis)"
            text = f"{text}; {proj}" if text else proj[:1].upper() + proj[1:]
    if not text:
        return _s(lang, "headline_none") + "."
    provisional = [
        v
        for f, v in verdicts.items()
        if (f in ("backend", "slots", "mtp") or f.startswith("spec=")) and v.status != COMPLETE
    ]
    if provisional:
        text = ("잠정: " if ko else "Provisional: ") + text
    return text + "."


def caveat_sentence(c: Mapping[str, Any], lang: str) -> str:
    """One caveat in `lang` (Korean: naming the study's unit by its own word)."""
    # Imported here: caveats reads this module at import time.
    from benchkit.report import caveats

    text = caveats.sentence(c, lang)
    return with_unit(text) if lang == "ko" else text


def claim_status(status: str, lang: str) -> str:
    return strings(lang).get(f"claim_{status}", status)


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
    ko = lang == "ko"
    bits = []
    for m in why.get("unfinished", []):
        pt = point_text(m["point"], lang)
        st = status_word(m["status"], lang)
        bits.append(
            f"{pt} 조합이 끝나지 않았었습니다({st})"
            if ko
            else f"the {pt} point had not finished ({st})"
        )
    changed = why.get("changed") or {}
    if changed:
        # The ledger's context keys ("builds hip", "sampling") read as words of the language.
        words = _CONTEXT_WORDS.get(lang, {})
        diffs = ", ".join(
            f"{' '.join(words.get(w, w) for w in key.split(' '))} {a} → {b}"
            for key, (a, b) in changed.items()
        )
        bits.append(f"다시 잰 조건: {diffs}" if ko else f"measured again with {diffs}")
    if why.get("rules"):
        a, b = why["rules"]
        bits.append(
            f"판정 규칙이 바뀌었습니다(v{a} → v{b}: 모든 판정을 연구의 목표로 하고, 노이즈·다른 조건·폭주 "
            "출력 규칙을 적용)"
            if ko
            else f"the verdict rules changed (v{a} → v{b}: every verdict is judged on the study's "
            "objective, with the noise, contamination and runaway-output rules)"
        )
    if why.get("new_points"):
        n = why["new_points"]
        bits.append(f"새로 완료된 조합 {n}개" if ko else f"{n} more points completed")
    if not bits:
        bits.append("새 측정값" if ko else "new measurements")
    return "; ".join(bits)

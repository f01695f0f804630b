# ruff: noqa: E501 -- Korean glyphs count double width; its sentences read better unbroken.
"""Caveats: each kind of measurement problem a report warns about, as a detector (what the
data show) and a sentence (how the report says it), registered in one table, `KINDS`.

`analyse.detect_caveats` runs the detectors in the table's order; `i18n.caveat_sentence`
says a caveat by its kind. A new caveat kind is one detector, one sentence and one row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from benchkit.report import evidence as ev
from benchkit.report import fmt
from benchkit.report.i18n import (
    backend_name,
    contamination_text,
    jobs_text,
    point_text,
)
from benchkit.report.lang.ko import particle
from benchkit.report.sweep import BASIS_FACTORS, COMPLETE, THROUGHPUT, Sweep, _is_num
from benchkit.report.verdicts.builds import _days_between, build_identity, build_summary

Caveat = dict[str, Any]


@dataclass(frozen=True)
class Data:
    """What a detector reads: the results frame and its records (all, and the usable ones),
    each job's result.json data, the sweep, and the spread and rate-swing thresholds."""

    df: pd.DataFrame
    rows: list[dict[str, Any]]
    done: list[dict[str, Any]]
    by_job: Mapping[str, Mapping[str, Any]]
    sw: Sweep
    spread_cv: float
    swing: float


@dataclass(frozen=True)
class Kind:
    """One kind of caveat: the kinds it makes (`mixed` makes one per basis factor), its
    detector (the caveats the data show, none when all is well) and its sentence."""

    kinds: tuple[str, ...]
    detect: Callable[[Data], list[Caveat]]
    say: Callable[[Mapping[str, Any], str], str]


# ------------------------------------------------------------------------------ detectors


def _detect_derived(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    derived = [r for r in src.rows if r.get("derived")]
    if derived:
        notes = sorted(
            {str(src.by_job[r["job"]].get("derived_note") or "") for r in derived} - {""}
        )
        # A note may come in other languages too (`derived_note_ko`); the report picks its own.
        by_lang = {
            k.removeprefix("derived_note_"): sorted(
                {str(src.by_job[r["job"]].get(k) or "") for r in derived} - {""}
            )
            for k in {
                k for r in derived for k in src.by_job[r["job"]] if k.startswith("derived_note_")
            }
        }
        out.append({"kind": "derived", "jobs": len(derived), "notes": notes, "notes_by": by_lang})
    return out


def _detect_cap(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    capped = [r for r in src.done if _is_num(r.get("calls_hit_cap")) and r["calls_hit_cap"] > 0]
    if capped:
        shares = [float(r["cap_time_share"]) for r in capped if _is_num(r.get("cap_time_share"))]
        worst = max(capped, key=lambda r: r.get("cap_time_share") or 0)
        over = []
        for r in capped:
            if ev.over_cap(r, src.sw.cap_limit):
                calls_share, time_share = ev.cap_shares(r)
                over.append(
                    {
                        "job": r["job"],
                        "point": {k: r.get(k) for k in src.sw.varying},
                        "share_calls": calls_share,
                        "share_time": time_share,
                    }
                )
        out.append(
            {
                "kind": "cap",
                "jobs": len(capped),
                "calls": int(sum(r["calls_hit_cap"] for r in capped)),
                "max_share": max(shares) if shares else None,
                "worst_job": worst["job"],
                "limit": src.sw.cap_limit,
                "over": over,
            }
        )
    return out


def _detect_spread(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    spread = []
    for c in src.sw.cells:
        s = c.stats(THROUGHPUT)
        if s is not None and s.cv is not None and s.cv > src.spread_cv:
            spread.append({"config": dict(c.values), "cv": s.cv, "n": s.n})
    if spread:
        out.append({"kind": "spread", "threshold": src.spread_cv, "configs": spread})
    return out


def _detect_rate_swing(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    swings = []
    for r in src.done:
        if not (_is_num(r.get("itl_ms_p50")) and _is_num(r.get("itl_ms_p99"))):
            continue
        p50, p99 = float(r["itl_ms_p50"]), float(r["itl_ms_p99"])
        if p50 > 0 and p99 / p50 >= src.swing:
            swings.append(
                {
                    "job": r["job"],
                    "p50": p50,
                    "p99": p99,
                    "ratio": p99 / p50,
                    "point": {k: r.get(k) for k in src.sw.varying},
                }
            )
    if swings:
        out.append({"kind": "rate_swing", "threshold": src.swing, "jobs": swings})
    return out


def _detect_sampling_unspecified(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    unspecified: dict[str, dict[str, object]] = {}
    for job, data in src.by_job.items():
        prov = data.get("provenance") or {}
        samp = prov.get("sampling") or {}
        if data.get("status") == COMPLETE and not samp.get("sent"):
            props = (prov.get("server") or {}).get("props") or {}
            unspecified[job] = dict(props.get("default_sampling") or {})
    if unspecified:
        defaults = next((d for d in unspecified.values() if d), {})
        out.append({"kind": "sampling_unspecified", "jobs": len(unspecified), "defaults": defaults})
    return out


def _detect_identity(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    identity = [
        {"job": r["job"], "problem": r["identity_problem"]}
        for r in src.rows
        if r.get("identity_problem")
    ]
    identity += [
        {"job": r["job"], "problem": r["reason"]}
        for r in src.rows
        if r.get("status") == "failed" and re.search(r"identity|alias|port", str(r.get("reason")))
    ]
    if identity:
        out.append({"kind": "identity", "jobs": identity})
    return out


def _detect_failed_calls(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    failed_calls = [r for r in src.done if _is_num(r.get("calls_failed")) and r["calls_failed"] > 0]
    if failed_calls:
        out.append(
            {
                "kind": "failed_calls",
                "jobs": len(failed_calls),
                "calls": int(sum(r["calls_failed"] for r in failed_calls)),
            }
        )
    return out


def _detect_mixed(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    for key in BASIS_FACTORS[:2]:
        if key in src.df.columns:
            vals = sorted({str(v) for v in src.df[key].dropna()})
            if len(vals) > 1:
                out.append({"kind": f"mixed_{key}", "values": vals})
    return out


def _detect_builds_differ(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    builds = build_summary(src.by_job)
    if len({build_identity(b) for b in builds.values()}) > 1:
        dates = {k: d for k, b in builds.items() if (d := b["date"])}
        age = None
        if len(dates) > 1:
            ds = sorted(dates.items(), key=lambda kv: kv[1])
            age = {
                "older": ds[0][0],
                "newer": ds[-1][0],
                "days": _days_between(ds[0][1], ds[-1][1]),
            }
        out.append({"kind": "builds_differ", "builds": builds, "age": age})
    return out


def _detect_software_device(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    software = {
        str((d.get("factors") or {}).get("backend", "?")): str(sb["software_device"])
        for d in src.by_job.values()
        if (sb := (d.get("provenance") or {}).get("server_build") or {}).get("software_device")
    }
    if software:
        forced = sorted(
            {
                str((d.get("factors") or {}).get("backend", "?"))
                for d in src.by_job.values()
                if ((d.get("provenance") or {}).get("server_build") or {}).get(
                    "flash_attn_forced_off"
                )
            }
        )
        out.append({"kind": "software_device", "devices": software, "flash_attn_off": forced})
    return out


def _detect_contaminated(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    if src.sw.contaminated:
        out.append({"kind": "contaminated", "entries": list(src.sw.contaminated)})
    return out


def _detect_client_httpx(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    httpx_timed = {
        j: str(((d.get("provenance") or {}).get("client") or {}).get("fallback") or "")
        for j, d in src.by_job.items()
        if ((d.get("provenance") or {}).get("client") or {}).get("path") == "httpx"
    }
    if httpx_timed:
        reasons = sorted({r for r in httpx_timed.values() if r})
        out.append({"kind": "client_httpx", "jobs": len(httpx_timed), "reasons": reasons})
    return out


def _detect_synthetic_model(src: Data) -> list[Caveat]:
    out: list[Caveat] = []
    synthetic = [
        j
        for j, d in src.by_job.items()
        if ((d.get("provenance") or {}).get("model") or {}).get("synthetic")
    ]
    if synthetic:
        out.append({"kind": "synthetic_model", "jobs": len(synthetic)})
    return out


# ------------------------------------------------------------------------------ sentences


def _say_derived(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    return (
        f"{c['jobs']}개 작업의 값은 측정이 아니라 글에서 유도한 참고 데이터입니다."
        if ko
        else f"{c['jobs']} jobs hold reference values derived from a publication, not measurements."
    )


def _say_cap(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    share = (
        f", 호출 시간의 최대 {fmt.pct(c['max_share'])}"
        if ko and c.get("max_share") is not None
        else (
            f", up to {fmt.pct(c['max_share'])} of call time"
            if c.get("max_share") is not None
            else ""
        )
    )
    over = ""
    if c.get("over"):
        items = []
        for o in c["over"]:
            bits = [
                f"{fmt.pct(o['share_calls'])} {'호출' if ko else 'of calls'}"
                if o.get("share_calls") is not None
                else "",
                f"{fmt.pct(o['share_time'])} {'호출 시간' if ko else 'of call time'}"
                if o.get("share_time") is not None
                else "",
            ]
            where = point_text(o["point"], lang)
            items.append(
                f"{jobs_text([o['job']], lang)} ({where}: {', '.join(b for b in bits if b)})"
            )
        limit = fmt.pct(c.get("limit") or 0)
        over = (
            f" 연구의 한도 {particle(limit, '를')} 넘은 작업: {'; '.join(items)}. 그 조합을 권장할 때는 이 "
            "사실을 함께 적고, 상한 호출 시간을 뺀 값도 보입니다."
            if ko
            else f" Over the study's {limit} limit: {'; '.join(items)}; such a point is "
            "never recommended without saying so, and its figures are also shown without "
            "the capped calls' time."
        )
    return (
        f"생성 상한에 걸린 호출이 {c['jobs']}개 작업에서 {c['calls']}번 있었습니다{share}. 이런 "
        "폭주 출력은 단위 하나를 크게 느리게 만들 수 있어, 벽시계 옆에 합산 prefill과 decode "
        f"처리량을 같이 적었습니다.{over}"
        if ko
        else f"{c['calls']} calls in {c['jobs']} jobs ran to the generation cap{share}. "
        "Runaway outputs like these can make one unit much slower, so aggregate prefill "
        f"and decode throughput stand beside wall-clock figures.{over}"
    )


def _say_spread(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    worst = max(c["configs"], key=lambda x: x["cv"])
    return (
        f"반복 간 변동이 큽니다: {len(c['configs'])}개 설정의 변동계수가 "
        f"{particle(fmt.pct(c['threshold']), '를')} 넘었습니다(최대 {fmt.pct(worst['cv'], 1)}, "
        f"{point_text(worst['config'], lang)})."
        if ko
        else f"High spread between repeats: {len(c['configs'])} settings have a "
        f"coefficient of variation above {fmt.pct(c['threshold'])} (up to "
        f"{fmt.pct(worst['cv'], 1)}, {point_text(worst['config'], lang)})."
    )


def _say_rate_swing(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    worst = max(c["jobs"], key=lambda x: x["ratio"])
    return (
        f"호출별 토큰 간격이 크게 흔들렸습니다({len(c['jobs'])}개 작업, 최대 "
        f"{fmt.ratio(worst['ratio'], lang)}: ITL p50 {fmt.millis(worst['p50'], lang)}, p99 "
        f"{fmt.millis(worst['p99'], lang)}, {point_text(worst['point'], lang)}). 순간 속도는 "
        "판정에 쓰지 않았고, 단위당 초와 합산 처리량만 썼습니다."
        if ko
        else f"Per-call token pace swung widely ({len(c['jobs'])} jobs, up to "
        f"{fmt.ratio(worst['ratio'], lang)}: ITL p50 {fmt.millis(worst['p50'], lang)}, "
        f"p99 {fmt.millis(worst['p99'], lang)}, {point_text(worst['point'], lang)}). "
        "Instantaneous rates are not verdict material: verdicts use per-unit seconds "
        "and aggregates."
    )


def _say_sampling_unspecified(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    d = ", ".join(f"{k}={v}" for k, v in c["defaults"].items()) or (
        "기록 없음" if ko else "not recorded"
    )
    return (
        f"{c['jobs']}개 작업은 샘플링 값을 보내지 않아 서버 기본값({d})이 적용됐습니다."
        if ko
        else f"{c['jobs']} jobs sent no sampling settings, so the server's defaults applied ({d})."
    )


def _say_identity(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    jobs = "; ".join(f"{j['job']}: {j['problem']}" for j in c["jobs"])
    return (
        f"서버 신원 문제로 제외한 작업: {jobs}."
        if ko
        else f"Jobs excluded for a server identity problem: {jobs}."
    )


def _say_failed_calls(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    return (
        f"완료된 {c['jobs']}개 작업 안에 실패한 호출이 {c['calls']}번 있었습니다."
        if ko
        else f"{c['calls']} calls failed inside {c['jobs']} complete jobs."
    )


def _say_mixed(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    kind = c["kind"]
    what = kind.split("_")[1]
    vals = ", ".join(c["values"])
    return (
        f"결과에 서로 다른 {'모델' if what == 'model' else '하드웨어'}가 섞여 있습니다({vals}): "
        "그 사이의 숫자는 직접 비교할 수 없습니다."
        if ko
        else f"The results span more than one {what} ({vals}): numbers across them are "
        "not comparable."
    )


def _say_builds_differ(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    builds = "; ".join(
        f"{backend_name(k)} {b.get('version') or b.get('source')}" for k, b in c["builds"].items()
    )
    age = c.get("age")
    age_text = ""
    if age and age.get("days"):
        weeks = age["days"] / 7
        age_text = (
            f" {backend_name(age['older'])} 빌드의 소스가 {backend_name(age['newer'])}보다 "
            f"{age['days']}일(약 {weeks:.0f}주) 더 낡았습니다."
            if ko
            else f" The {backend_name(age['older'])} build's source is {age['days']} days "
            f"(about {weeks:.0f} weeks) older than {backend_name(age['newer'])}'s."
        )
    return (
        f"백엔드마다 다른 llama.cpp 빌드를 썼습니다({builds}).{age_text} 백엔드 차이에 빌드 차이가 "
        "섞여 있습니다."
        if ko
        else f"The backends ran different llama.cpp builds ({builds}).{age_text} Backend "
        "differences include build differences."
    )


def _say_software_device(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    devs = "; ".join(f"{backend_name(b)}: {d}" for b, d in c["devices"].items())
    fa = ", ".join(backend_name(b) for b in c.get("flash_attn_off") or [])
    if ko:
        fa_text = (
            f" 이 장치에서는 llama.cpp의 flash attention이 충돌하므로 {fa} 작업은 "
            "flash attention을 끄고 실행했습니다."
            if fa
            else ""
        )
        return (
            f"소프트웨어 래스터라이저에서 실행된 백엔드가 있습니다({devs}). 이 장치는 Vulkan "
            "API 뒤의 CPU이므로, 이 비교는 GPU에 대해 아무것도 말해 주지 않습니다." + fa_text
        )
    fa_text = (
        f" llama.cpp's flash attention crashes on this device, so the {fa} jobs ran "
        "with flash attention off."
        if fa
        else ""
    )
    return (
        f"A backend ran on a software rasteriser ({devs}): that device is the CPU behind "
        "a Vulkan API, so this comparison says nothing about any GPU." + fa_text
    )


def _say_contaminated(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    text = contamination_text(c["entries"], lang)
    return (
        f"스윕이 일부러 바꾸지 않은 조건이 작업마다 다릅니다: {text}. 이 작업에 기대는 판정은 "
        "잠정입니다."
        if ko
        else f"Jobs differ in something the sweep did not vary on purpose: {text}. Verdicts "
        "that rest on these jobs are provisional."
    )


def _say_client_httpx(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    why = "; ".join(c.get("reasons") or [])
    if ko:
        return (
            f"{c['jobs']}개 작업은 httpx 경로로 시간을 쟀습니다"
            + (f"({why})" if why else "")
            + ". 토큰 시각이 커널 수신 시각이 아니라 클라이언트가 읽은 시각이므로, 바쁜 "
            "클라이언트에서는 TTFT와 ITL에 클라이언트 자신의 지연이 섞입니다."
        )
    return (
        f"{c['jobs']} jobs were timed on the httpx path"
        + (f" ({why})" if why else "")
        + ": token times are when the client read them, not when the kernel received "
        "them, so a busy client adds its own delay to TTFT and ITL."
    )


def _say_synthetic_model(c: Mapping[str, Any], lang: str) -> str:
    ko = lang == "ko"
    return (
        f"{c['jobs']}개 작업은 합성 모델을 썼습니다: 그 속도는 실제 모델에 대해 아무것도 말해 주지 "
        "않습니다."
        if ko
        else f"{c['jobs']} jobs used a synthetic model: their speed says nothing about any "
        "real model."
    )


# The table: detection order is the order caveats appear in a report.
KINDS: tuple[Kind, ...] = (
    Kind(("derived",), _detect_derived, _say_derived),
    Kind(("cap",), _detect_cap, _say_cap),
    Kind(("spread",), _detect_spread, _say_spread),
    Kind(("rate_swing",), _detect_rate_swing, _say_rate_swing),
    Kind(("sampling_unspecified",), _detect_sampling_unspecified, _say_sampling_unspecified),
    Kind(("identity",), _detect_identity, _say_identity),
    Kind(("failed_calls",), _detect_failed_calls, _say_failed_calls),
    Kind(("mixed_model", "mixed_hardware"), _detect_mixed, _say_mixed),
    Kind(("builds_differ",), _detect_builds_differ, _say_builds_differ),
    Kind(("software_device",), _detect_software_device, _say_software_device),
    Kind(("contaminated",), _detect_contaminated, _say_contaminated),
    Kind(("client_httpx",), _detect_client_httpx, _say_client_httpx),
    Kind(("synthetic_model",), _detect_synthetic_model, _say_synthetic_model),
)

_SENTENCES = {k: kind.say for kind in KINDS for k in kind.kinds}


def detect(data: Data) -> list[Caveat]:
    """Every caveat the data show, kind by kind in the table's order."""
    return [c for kind in KINDS for c in kind.detect(data)]


def sentence(c: Mapping[str, Any], lang: str) -> str:
    """One caveat in `lang`, by its kind's sentence (an unknown kind: its name)."""
    say = _SENTENCES.get(c["kind"])
    return say(c, lang) if say else str(c["kind"])

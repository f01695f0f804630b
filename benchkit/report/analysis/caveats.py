"""Caveats: each kind of measurement problem a report warns about, as a detector (what the
data show) and a sentence (how the report says it), registered in one table, `KINDS`.

`analyse.detect_caveats` runs the detectors in the table's order; `caveat_sentence`
says a caveat by its kind. A new caveat kind is one detector, one sentence and one row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from benchkit.measure.telemetry import is_partial
from benchkit.report.analysis import caps, host_load, machine_profile, rate_swing, router
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis.job_builds import (
    _days_between,
    build_identity,
    build_summary,
)
from benchkit.report.analysis.stall_words import say_stalls, stall_jobs
from benchkit.report.analysis.sweep import (
    BASIS_FACTORS,
    COMPLETE,
    THROUGHPUT,
    Row,
    Sweep,
    _is_num,
)
from benchkit.report.lang import fmt, grammar, tr, trc, trn
from benchkit.report.lang.i18n import (
    backend_name,
    contamination_text,
    jobs_text,
    point_text,
)

Caveat = dict[str, Any]


@dataclass(frozen=True)
class Data:
    """What a detector reads: the results frame and its records (all, and the usable ones),
    each job's result.json data, the sweep, and the spread and rate-swing thresholds."""

    df: pd.DataFrame
    rows: list[Row]
    done: list[Row]
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
        known = [src.sw.caps[str(r["job"])] for r in src.done if str(r["job"]) in src.sw.caps]
        common = caps.capped_everywhere(known) if len(known) > 1 else []
        peers = caps.Peers(known)
        for r in capped:
            own = src.sw.caps.get(str(r["job"]))
            calls_share: float | None
            time_share: float | None
            if own is not None and len(known) > 1:
                d = caps.differing(own, peers)
                calls_share, time_share = d.share_calls, d.share_time
            else:
                calls_share, time_share = ev.cap_shares(r)
            if max(calls_share or 0.0, time_share or 0.0) > src.sw.cap_limit:
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
                "common": common,
                **({"open_loop": True} if _open_loop(src) else {}),
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


def _detect_stall(src: Data) -> list[Caveat]:
    jobs = stall_jobs(src.sw)
    if not jobs:
        return []
    # Open-loop load: the capacity verdict keeps every stall, cold starts included.
    return [{"kind": "stall", "jobs": jobs, **({"open_loop": True} if _open_loop(src) else {})}]


def _detect_rate_swing(src: Data) -> list[Caveat]:
    return rate_swing.detect(src.done, src.sw.varying, src.swing, _open_loop(src))


def _open_loop(src: Data) -> bool:
    """Whether the sweep's jobs ran open-loop load (their verdict judges loads held)."""
    return any(isinstance(r.get("load"), str) and r["load"] != "closed" for r in src.done)


def _detect_unreadable_calls(src: Data) -> list[Caveat]:
    jobs = [{"job": j, "lines": lines} for j, lines in sorted(src.sw.unreadable.items())]
    return [{"kind": "unreadable_calls", "jobs": jobs}] if jobs else []


def _say_unreadable_calls(c: Mapping[str, Any], lang: str) -> str:
    items = "; ".join(
        trn(
            lang,
            "{jobs}, line {lines}",
            "{jobs}, lines {lines}",
            len(j["lines"]),
            jobs=jobs_text([j["job"]], lang),
            lines=", ".join(str(n) for n in j["lines"][:8]) + (" …" if len(j["lines"]) > 8 else ""),
        )
        for j in c["jobs"]
    )
    return tr(
        lang,
        "Lines of calls.jsonl that could not be read ({items}): the file was cut short or "
        "edited, and those calls are in no figure drawn from the calls (stalls, caps, per-unit "
        "noise, output rates); restore the file or measure the job again.",
        items=items,
    )


def _detect_partial_telemetry(src: Data) -> list[Caveat]:
    jobs = sorted(
        (j for j, d in src.by_job.items() if is_partial(d.get("metrics"))),
        key=lambda j: (len(j), j),
    )
    return [{"kind": "partial_telemetry", "jobs": jobs}] if jobs else []


def _say_partial_telemetry(c: Mapping[str, Any], lang: str) -> str:
    return tr(
        lang,
        "The GPU and server-process telemetry of {jobs} covers only part of the wall clock (the "
        "last run of a job a race extended, written before benchkit joined the earlier run's "
        "telemetry and server counters to the extension's): energy, power, busy shares and the "
        "server's sequences per step are not stated there.",
        jobs=jobs_text(c["jobs"], lang),
    )


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
    return trn(
        lang,
        "{n} job holds reference values derived from a publication, not measurements.",
        "{n} jobs hold reference values derived from a publication, not measurements.",
        c["jobs"],
    )


def _say_cap(c: Mapping[str, Any], lang: str) -> str:
    share = (
        tr(lang, ", up to {share} of call time", share=fmt.pct(c["max_share"]))
        if c.get("max_share") is not None
        else ""
    )
    over = ""
    if c.get("over"):
        items = []
        for o in c["over"]:
            bits = [
                tr(lang, "{share} of calls", share=fmt.pct(o["share_calls"]))
                if o.get("share_calls") is not None
                else "",
                tr(lang, "{share} of call time", share=fmt.pct(o["share_time"]))
                if o.get("share_time") is not None
                else "",
            ]
            where = point_text(o["point"], lang)
            items.append(
                f"{jobs_text([o['job']], lang)} ({where}: {', '.join(b for b in bits if b)})"
            )
        over = tr(
            lang,
            " Over the study's {limit} limit: {items}; such a point is never recommended "
            "without saying so, and its figures are also shown without the capped calls' time.",
            limit=fmt.pct(c.get("limit") or 0),
            items="; ".join(items),
        )
    if c.get("common"):
        over = (
            trn(
                lang,
                " The same call ({calls}) ran to the cap in every job: a property of the "
                "workload, not of any setting, so it counts against no point.",
                " The same {n} calls ({calls}) ran to the cap in every job: a property of the "
                "workload, not of any setting, so they count against no point.",
                len(c["common"]),
                calls=", ".join(c["common"][:8]) + (" …" if len(c["common"]) > 8 else ""),
            )
            + over
        )
    if c.get("open_loop"):
        # No unit is a lane under open-loop load: a runaway call holds a slot others queue for.
        return trn(
            lang,
            "{n} call {in_jobs} ran to the generation cap{share}. A runaway output like this "
            "holds its slot far longer than other calls, so the calls queued behind it wait "
            "longer for their first token.{over}",
            "{n} calls {in_jobs} ran to the generation cap{share}. Runaway outputs like these "
            "hold their slots far longer than other calls, so the calls queued behind them "
            "wait longer for their first token.{over}",
            c["calls"],
            in_jobs=trn(lang, "in {n} job", "in {n} jobs", c["jobs"]),
            share=share,
            over=over,
        )
    return trn(
        lang,
        "{n} call {in_jobs} ran to the generation cap{share}. Runaway outputs like these can "
        "make one unit much slower, so aggregate prefill and decode throughput stand beside "
        "wall-clock figures.{over}",
        "{n} calls {in_jobs} ran to the generation cap{share}. Runaway outputs like these can "
        "make one unit much slower, so aggregate prefill and decode throughput stand beside "
        "wall-clock figures.{over}",
        c["calls"],
        in_jobs=trn(lang, "in {n} job", "in {n} jobs", c["jobs"]),
        share=share,
        over=over,
    )


def _say_spread(c: Mapping[str, Any], lang: str) -> str:
    worst = max(c["configs"], key=lambda x: x["cv"])
    return trn(
        lang,
        "High spread between repeats: {n} setting has a coefficient of variation above "
        "{threshold} (up to {worst}, {point}).",
        "High spread between repeats: {n} settings have a coefficient of variation above "
        "{threshold} (up to {worst}, {point}).",
        len(c["configs"]),
        threshold=fmt.pct(c["threshold"]),
        worst=fmt.pct(worst["cv"], 1),
        point=point_text(worst["config"], lang),
    )


def _say_sampling_unspecified(c: Mapping[str, Any], lang: str) -> str:
    defaults = ", ".join(f"{k}={v}" for k, v in c["defaults"].items())
    return trn(
        lang,
        "{n} job sent no sampling settings, so the server's defaults applied ({defaults}).",
        "{n} jobs sent no sampling settings, so the server's defaults applied ({defaults}).",
        c["jobs"],
        defaults=defaults or trc(lang, "server defaults", "not recorded"),
    )


def _say_identity(c: Mapping[str, Any], lang: str) -> str:
    jobs = "; ".join(f"{j['job']}: {j['problem']}" for j in c["jobs"])
    return tr(lang, "Jobs excluded for a server identity problem: {jobs}.", jobs=jobs)


def _say_failed_calls(c: Mapping[str, Any], lang: str) -> str:
    return trn(
        lang,
        "{n} call failed {inside}.",
        "{n} calls failed {inside}.",
        c["calls"],
        inside=trn(lang, "inside {n} complete job", "inside {n} complete jobs", c["jobs"]),
    )


def _say_mixed(c: Mapping[str, Any], lang: str) -> str:
    values = ", ".join(c["values"])
    if c["kind"] == "mixed_model":
        return tr(
            lang,
            "The results span more than one model ({values}): numbers across them are not "
            "comparable.",
            values=values,
        )
    return tr(
        lang,
        "The results span more than one hardware ({values}): numbers across them are not "
        "comparable.",
        values=values,
    )


def _say_builds_differ(c: Mapping[str, Any], lang: str) -> str:
    builds = "; ".join(
        f"{backend_name(k)} {b.get('version') or b.get('source')}" for k, b in c["builds"].items()
    )
    age = c.get("age")
    age_text = ""
    if age and age.get("days"):
        age_text = tr(
            lang,
            " The {older} build's source is {days} (about {weeks}) older than {newer}'s.",
            older=backend_name(age["older"]),
            newer=backend_name(age["newer"]),
            days=trn(lang, "{n} day", "{n} days", age["days"]),
            weeks=trn(lang, "{n} week", "{n} weeks", round(age["days"] / 7)),
        )
    return tr(
        lang,
        "The backends ran different llama.cpp builds ({builds}).{age} Backend differences "
        "include build differences.",
        builds=builds,
        age=age_text,
    )


def _say_software_device(c: Mapping[str, Any], lang: str) -> str:
    devices = "; ".join(f"{backend_name(b)}: {d}" for b, d in c["devices"].items())
    fa = ", ".join(backend_name(b) for b in c.get("flash_attn_off") or [])
    return tr(
        lang,
        "A backend ran on a software rasteriser ({devices}): that device is the CPU behind a "
        "Vulkan API, so this comparison says nothing about any GPU.{flash_attn_off}",
        devices=devices,
        flash_attn_off=tr(
            lang,
            " llama.cpp's flash attention crashes on this device, so the {backends} jobs ran "
            "with flash attention off.",
            backends=fa,
        )
        if fa
        else "",
    )


def _say_contaminated(c: Mapping[str, Any], lang: str) -> str:
    return tr(
        lang,
        "Jobs differ in something the sweep did not vary on purpose: {what}. Verdicts that "
        "rest on these jobs are provisional.",
        what=contamination_text(c["entries"], lang),
    )


def _say_client_httpx(c: Mapping[str, Any], lang: str) -> str:
    why = "; ".join(c.get("reasons") or [])
    return trn(
        lang,
        "{n} job was timed on the httpx path{why}: token times are when the client read them, "
        "not when the kernel received them, so a busy client adds its own delay to TTFT and "
        "ITL.",
        "{n} jobs were timed on the httpx path{why}: token times are when the client read "
        "them, not when the kernel received them, so a busy client adds its own delay to TTFT "
        "and ITL.",
        c["jobs"],
        why=trc(lang, "httpx fallback", " ({reasons})", reasons=why) if why else "",
    )


def _say_synthetic_model(c: Mapping[str, Any], lang: str) -> str:
    return trn(
        lang,
        "{n} job used a synthetic model: its speed says nothing about any real model.",
        "{n} jobs used a synthetic model: their speed says nothing about any real model.",
        c["jobs"],
    )


# The table: detection order is the order caveats appear in a report.
KINDS: tuple[Kind, ...] = (
    Kind(("derived",), _detect_derived, _say_derived),
    Kind(("cap",), _detect_cap, _say_cap),
    Kind(("spread",), _detect_spread, _say_spread),
    Kind(("rate_swing",), _detect_rate_swing, rate_swing.say),
    Kind(("sampling_unspecified",), _detect_sampling_unspecified, _say_sampling_unspecified),
    Kind(("identity",), _detect_identity, _say_identity),
    Kind(("failed_calls",), _detect_failed_calls, _say_failed_calls),
    Kind(("mixed_model", "mixed_hardware"), _detect_mixed, _say_mixed),
    Kind(("builds_differ",), _detect_builds_differ, _say_builds_differ),
    Kind(("software_device",), _detect_software_device, _say_software_device),
    Kind(("contaminated",), _detect_contaminated, _say_contaminated),
    Kind(("stall",), _detect_stall, say_stalls),
    Kind(("unreadable_calls",), _detect_unreadable_calls, _say_unreadable_calls),
    Kind(("partial_telemetry",), _detect_partial_telemetry, _say_partial_telemetry),
    Kind(("client_httpx",), _detect_client_httpx, _say_client_httpx),
    Kind(("synthetic_model",), _detect_synthetic_model, _say_synthetic_model),
    Kind(("random_router",), lambda src: router.detect(src.by_job, src.sw.varying), router.say),
    Kind(("host_busy",), lambda src: host_load.detect(src.by_job), host_load.say),
    Kind(
        ("machine_by_profile",),
        lambda src: machine_profile.detect(src.by_job, src.sw.anchors),
        machine_profile.say,
    ),
)

_SENTENCES = {k: kind.say for kind in KINDS for k in kind.kinds}


def detect(data: Data) -> list[Caveat]:
    """Every caveat the data show, kind by kind in the table's order."""
    return [c for kind in KINDS for c in kind.detect(data)]


def sentence(c: Mapping[str, Any], lang: str) -> str:
    """One caveat in `lang`, by its kind's sentence (an unknown kind: its name)."""
    say = _SENTENCES.get(c["kind"])
    return say(c, lang) if say else str(c["kind"])


def caveat_sentence(c: Mapping[str, Any], lang: str) -> str:
    """One caveat in `lang`, finished as the language finishes a message (Korean names the
    study's unit by its own word)."""
    return grammar(lang).finish(sentence(c, lang))

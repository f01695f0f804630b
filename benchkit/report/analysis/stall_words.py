"""Stalls in words: the provisional reason a stall gives a verdict (its comparisons with the
stall and without it) and the caveat that names every stall with what the telemetry showed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from benchkit.report.analysis.numbers import Point, StallNote
from benchkit.report.analysis.stalls import StallJson
from benchkit.report.analysis.sweep import Sweep
from benchkit.report.lang import clauses, fmt, tr, trn
from benchkit.report.lang.i18n import jobs_text, point_text


def _differing(a: Point, b: Point) -> Point:
    keys = [k for k in a if str(a.get(k)) != str(b.get(k))] or list(a)
    return {k: a[k] for k in keys}


def stalled_text(notes: Sequence[StallNote], lang: str) -> str:
    """The reason a verdict resting on stalled jobs is provisional, with each comparison it
    makes stated with the stalls and without them."""
    out = []
    for n in notes:
        head = trn(
            lang,
            "{point} ({jobs}) had {n} stall adding {excess}, {share} of its wall clock",
            "{point} ({jobs}) had {n} stalls adding {excess}, {share} of its wall clock",
            n["stalls"],
            point=point_text(n["point"], lang),
            jobs=jobs_text([n["job"]], lang),
            excess=fmt.seconds(n["excess_s"], lang),
            share=fmt.pct(n["wall_share"], 1),
        )
        pairs = [
            _pair(p["ratio"], p["ratio_without"], n["point"], p["other"], lang)
            for p in n["pairs"]
            if p["ratio"] is not None and p["ratio_without"] is not None
        ]
        if pairs:
            # One job's stalls, then their comparisons (clauses: Korean writes each as a
            # sentence of its own, English joins them with "; ").
            # TRANSLATORS: a job's stalls, then what each comparison is with them and without.
            head = tr(
                lang, "{stalls}: {comparisons}", stalls=head, comparisons=clauses(lang, pairs)
            )
        out.append(head)
    return clauses(lang, out)


def _pair(ratio: float, without: float, point: Point, other: Point, lang: str) -> str:
    """One comparison of a stalled point, the slower side first, as every difference is
    said ('MTP on took 1.59x the time of MTP off with them'), never a ratio below 1 (an
    editor found '0.63x against MTP on')."""
    mine, theirs = _differing(point, other), _differing(other, point)
    slow, fast = (mine, theirs) if ratio >= 1 else (theirs, mine)
    if ratio < 1:
        ratio, without = 1 / ratio, 1 / without
    return tr(
        lang,
        "{slow} took {ratio} the time of {fast} with them, {without} without",
        slow=point_text(slow, lang),
        fast=point_text(fast, lang),
        ratio=fmt.ratio(ratio, lang),
        without=fmt.ratio(without, lang),
    )


def stall_jobs(sw: Sweep) -> list[StallJob]:
    """Every stalled job of the sweep with its stalls, job by job (the stall caveat)."""
    return [
        {
            "job": job,
            # Every stall's time, cold starts included: the caveat names them all.
            "excess_s": js.all_excess_s,
            "wall_share": js.all_excess_s / js.wall_s if js.wall_s > 0 else 0.0,
            "stalls": [s.to_json() for s in js.stalls],
        }
        for job, js in sorted(sw.stalls.items(), key=lambda kv: kv[0])
    ]


class StallJob(TypedDict):
    job: str
    excess_s: float
    wall_share: float
    stalls: list[StallJson]


def say_stalls(c: Mapping[str, Any], lang: str) -> str:
    """'Job 0 stalled: unit u000, call 0: prefill of 1,203 tokens took 20.4 s, 133x ...'."""
    out = []
    for j in c["jobs"]:
        items = [_one(s, lang) for s in j["stalls"]]
        out.append(
            tr(
                lang,
                "{jobs}: {items} (together {excess}, {share} of the wall clock).",
                jobs=jobs_text([j["job"]], lang),
                items="; ".join(items),
                excess=fmt.seconds(j["excess_s"], lang),
                share=fmt.pct(j["wall_share"], 1),
            )
        )
    if c.get("open_loop"):
        # The capacity verdict keeps every stall (a user arriving then waited it too).
        head = tr(
            lang,
            "Stalls: calls far outside their own job's rate (at least 4x its median per-token "
            "time and 6 robust deviations above it, adding at least 1% of the wall clock), "
            "counted in the figures and named here; a capacity resting on a job whose stalls, "
            "cold starts included, added at least the smallest effect the study counts is "
            "provisional.",
        )
        return head + " " + " ".join(out)
    head = tr(
        lang,
        "Stalls: calls far outside their own job's rate (at least 4x its median per-token time "
        "and 6 robust deviations above it, adding at least 1% of the wall clock), counted in "
        "the figures and named here; a verdict resting on a job whose stalls added at least "
        "the smallest effect the study counts is provisional and states its comparison "
        "without them.",
    )
    head += " " + tr(
        lang,
        "A prompt's rate counts the tokens of the other prompts in its window beside its own "
        "(each spread over its own window); a call's decoding counts only the time its server "
        "did not spend on other calls' prompts; the job's median is of those rates.",
    )
    if any(st.get("cold") for j in c["jobs"] for st in j["stalls"]):
        head += " " + tr(
            lang,
            "A stall in the first work of a server that had no warm-up before its timed pass "
            "is a cold start: its time beyond the job's median rate is left out of the "
            "per-unit figures the verdicts compare, and it makes no verdict provisional.",
        )
    return head + " " + " ".join(out)


def _other_prompt_tokens(s: Mapping[str, Any]) -> float:
    """A prompt stall's share of the other prompts' tokens in its window (their tokens spread
    over each one's own window), which its rate per token counts beside its own: the window's
    seconds over its rate, less its own tokens. 0 for other phases."""
    per_token, tokens = s.get("per_token_ms"), s.get("tokens")
    if s["phase"] != "prefill" or not per_token or not tokens:
        return 0.0
    return max(1000 * float(s["seconds"]) / float(per_token) - float(tokens), 0.0)


def _one(s: Mapping[str, Any], lang: str) -> str:
    where = (
        tr(lang, "unit {unit}", unit=s["unit"])
        if s["call"] is None
        else tr(lang, "unit {unit}, call {call}", unit=s["unit"], call=s["call"])
    )
    others = _other_prompt_tokens(s)
    if s["phase"] == "prefill" and others >= 0.05 * (s["tokens"] or 0):
        what = tr(
            lang,
            "prefill of {tokens} tokens took {seconds}, with {others} tokens of other prompts "
            "in the same window, {times} the job's median rate",
            tokens=fmt.integer(s["tokens"]),
            seconds=fmt.seconds(s["seconds"], lang),
            others=fmt.integer(others),
            times=fmt.ratio(s["times_median"], lang),
        )
    elif s["phase"] == "prefill":
        what = tr(
            lang,
            "prefill of {tokens} tokens took {seconds}, {times} the job's median rate",
            tokens=fmt.integer(s["tokens"]),
            seconds=fmt.seconds(s["seconds"], lang),
            times=fmt.ratio(s["times_median"], lang),
        )
    elif s["phase"] == "decode" and s.get("other_prompts_s", 0.0) >= 0.05 * s["seconds"]:
        what = tr(
            lang,
            "decode of {tokens} tokens took {seconds} ({other} of it while the server worked "
            "on other calls' prompts, not counted), {times} the job's median rate",
            tokens=fmt.integer(s["tokens"]),
            seconds=fmt.seconds(s["seconds"], lang),
            other=fmt.seconds(s["other_prompts_s"], lang),
            times=fmt.ratio(s["times_median"], lang),
        )
    elif s["phase"] == "decode":
        what = tr(
            lang,
            "decode of {tokens} tokens took {seconds}, {times} the job's median rate",
            tokens=fmt.integer(s["tokens"]),
            seconds=fmt.seconds(s["seconds"], lang),
            times=fmt.ratio(s["times_median"], lang),
        )
    elif s["phase"] == "wait":
        what = tr(
            lang,
            "the call waited {seconds} before the server took up its prompt, {times} the "
            "job's median wait, while the other slots kept working",
            seconds=fmt.seconds(s["seconds"], lang),
            times=fmt.ratio(s["times_median"], lang),
        )
    else:
        what = tr(
            lang,
            "the unit took {seconds}, {times} the job's median unit",
            seconds=fmt.seconds(s["seconds"], lang),
            times=fmt.ratio(s["times_median"], lang),
        )
    t = s.get("telemetry")
    seen = ""
    if t:
        bits = []
        if t.get("gpu_busy") is not None:
            bits.append(tr(lang, "GPU busy {pct}", pct=fmt.pct(t["gpu_busy"])))
        if t.get("sm_clock_mhz") is not None:
            bits.append(tr(lang, "SM clock {mhz} MHz", mhz=fmt.integer(t["sm_clock_mhz"])))
        if t.get("server_cores") is not None:
            bits.append(
                tr(lang, "llama-server on {cores} cores", cores=fmt.num(t["server_cores"], 2))
            )
        if bits:
            seen = tr(lang, " (meanwhile {what})", what=", ".join(bits))
    cold = tr(lang, ", a cold start") if s.get("cold") else ""
    return f"{where}: {what}{seen}{cold}"

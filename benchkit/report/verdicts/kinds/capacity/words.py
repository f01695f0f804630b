"""The capacity verdict in words (open-loop load): its section (each setting's capacity and
every load tried), its headline clause and its value in the verdict table. Phrasing only: the
numbers come from report/verdicts/capacity.py."""

from __future__ import annotations

from collections.abc import Mapping

from benchkit.report.analysis.load_numbers import CapacityRow, SettingCapacity
from benchkit.report.analysis.numbers import CapacityNumbers, of
from benchkit.report.lang import fmt, i18n, tr
from benchkit.report.verdicts.common import Verdict


def load_text(value: float | None, axis: str, lang: str) -> str:
    """A load as offered: '2 calls/s' for a rate, '2x the recorded rate' for a trace."""
    if value is None:
        return fmt.DASH
    n = fmt.value(value)
    if axis == "speed":
        return tr(lang, "{n}x the recorded arrivals", n=n)
    return tr(lang, "{n} calls/s", n=n)


def capacity_text(s: SettingCapacity, axis: str, lang: str) -> str:
    """One setting's capacity: '2 calls/s', 'at least 4 calls/s' (nothing above it broke the
    SLO), 'below 0.5 calls/s' (the lowest load tried broke it)."""
    if s["capacity"] is None:
        lowest = s["rows"][0]["load"] if s["rows"] else None
        return tr(lang, "below {load}", load=load_text(lowest, axis, lang))
    # The rate the seeded schedule actually offered, not the nominal load.rate (a short
    # schedule of 6.4/s nominal offered 4.02/s), with what the server achieved beside it.
    row = next((r for r in s["rows"] if r["load"] == s["capacity"]), None)
    offered = row["offered_rps"] if row is not None else None
    achieved = row["achieved_rps"] if row is not None else None
    if axis == "rate" and offered is not None:
        text = tr(lang, "{n} calls/s offered", n=fmt.num(offered, 2))
    else:
        text = load_text(s["capacity"], axis, lang)
    if not s["bracketed"]:
        text = tr(lang, "at least {load}", load=text)
    if achieved is not None:
        knob = "load." + axis
        text = tr(
            lang,
            "{capacity} ({achieved} calls/s achieved; {axis}={load})",
            capacity=text,
            achieved=fmt.num(achieved, 2),
            axis=knob,
            load=fmt.value(s["capacity"]),
        )
    if s["marginal"]:
        text = tr(lang, "{capacity} (within the noise of the SLO)", capacity=text)
    return text


def slo_text(n: CapacityNumbers, lang: str) -> str:
    """'ttft_ms_p95 <= 1000', or that the study declared none."""
    slo = n.objective["slo"] if n.objective else {}
    if not slo:
        return tr(lang, "no SLO declared: the most load the server kept up with")
    return ", ".join(f"{k} <= {fmt.value(v)}" for k, v in slo.items())


def capacity_value(v: Verdict, lang: str) -> str:
    """The verdict table's value: the setting that holds the most, and how much (or that
    none held a load: every setting measured broke the lowest one tried)."""
    if not isinstance(v.verdict, Mapping):
        return none_held(v, lang) or fmt.DASH
    n = of(CapacityNumbers, v.numbers)
    best = next((s for s in n.settings or [] if s["setting"] == v.verdict), None)
    where = " / ".join(i18n.setting_text(s["setting"], lang) for s in _tied(v, n))
    if best is None:
        return where
    if len(n.settings or []) == 1:
        return capacity_text(best, n.axis, lang)  # one setting: its capacity says it all
    return tr(
        lang, "{setting}: {capacity}", setting=where, capacity=capacity_text(best, n.axis, lang)
    )


def capacity_clause(v: Verdict, lang: str) -> str | None:
    """The headline's clause: which setting holds the most load under the SLO, or that none
    held a load (None: no setting was measured)."""
    if v.verdict is None:
        return none_held(v, lang)
    return tr(lang, "the most load under the SLO: {value}", value=capacity_value(v, lang))


def none_held(v: Verdict, lang: str) -> str | None:
    """'no setting held any load tried' where settings were measured and none held one."""
    if v.verdict is not None or not of(CapacityNumbers, v.numbers).settings:
        return None
    return tr(lang, "no setting held any load tried")


def capacity_sentence(v: Verdict, lang: str) -> str:
    """The section's opening: the SLO, the winner, the runner-up, and what each held."""
    n = of(CapacityNumbers, v.numbers)
    settings = n.settings or []
    parts = [tr(lang, "SLO: {slo}.", slo=slo_text(n, lang))]
    if v.verdict is None:
        parts.append(tr(lang, "No setting held the SLO at any load tried."))
        return " ".join(parts)
    tied = _tied(v, n)
    capacity = capacity_text(_of(settings, v.verdict), n.axis, lang)
    if len(tied) > 1:
        parts.append(
            tr(
                lang,
                "{settings} hold the same load under it: {capacity}.",
                settings=" / ".join(i18n.setting_text(s["setting"], lang) for s in tied),
                capacity=capacity,
            )
        )
    elif len(settings) == 1:
        parts.append(tr(lang, "The setting measured holds {capacity} under it.", capacity=capacity))
    else:
        parts.append(
            tr(
                lang,
                "{setting} holds the most load under it: {capacity}.",
                setting=i18n.setting_text(v.verdict, lang),
                capacity=capacity,
            )
        )
    if n.runner_up is not None and len(tied) == 1:
        parts.append(
            tr(
                lang,
                "Next: {setting}, {capacity}.",
                setting=i18n.setting_text(n.runner_up, lang),
                capacity=capacity_text(_of(settings, n.runner_up), n.axis, lang),
            )
        )
    parts.append(
        tr(
            lang,
            "A load held when its pass ended by itself (no bound reached), no call failed and "
            "the SLO was met; a setting's capacity is the highest load held with every lower "
            "load held too, and only a higher load that broke the SLO brackets it.",
        )
    )
    return " ".join(parts)


def _tied(v: Verdict, n: CapacityNumbers) -> list[SettingCapacity]:
    """The winner and every setting that held the same load (the winner first)."""
    settings = n.settings or []
    best = next((s for s in settings if s["setting"] == v.verdict), None)
    if best is None:
        return []
    same = [s for s in settings if s is not best and s["capacity"] == best["capacity"]]
    return [best, *same] if "capacity_tie" in v.reasons else [best]


def _of(settings: list[SettingCapacity], point: Mapping[str, object]) -> SettingCapacity:
    return next(s for s in settings if s["setting"] == dict(point))


def _row_view(r: CapacityRow, axis: str, lang: str) -> dict[str, object]:
    if r["held"]:
        held = tr(lang, "held")
    elif r["ended"]:
        held = tr(lang, "overloaded (ended at load.{bound})", bound=r["ended"])
    elif r["calls_failed"]:
        held = tr(lang, "calls failed")
    else:
        held = tr(
            lang, "over the SLO ({metrics})", metrics=", ".join(b["metric"] for b in r["breaks"])
        )
    return dict(r, load_text=load_text(r["load"], axis, lang), held_text=held)


def capacity_section(v: Verdict, lang: str, figs: Mapping[str, str]) -> dict[str, object]:
    """The capacity section: each setting's capacity, then every load of every setting."""
    n = of(CapacityNumbers, v.numbers)
    settings = n.settings or []
    return {
        "kind": "capacity",
        "title": tr(lang, "Capacity under the SLO (open-loop load)"),
        "text": capacity_sentence(v, lang),
        "bases": tr(
            lang,
            "Two throughput bases, never compared with each other: per user, how fast one "
            "answer streams (its tokens after the first / the time from its first token to "
            "its last), and aggregate, every user's tokens per second of the pass. Time to "
            "first token counts from the request sent, queueing in the server included.",
        ),
        "summary": [
            {
                "setting": i18n.setting_text(s["setting"], lang),
                "capacity_text": capacity_text(s, n.axis, lang),
                "capacity_rps": s["capacity_rps"],
                "goodput_tok_s": s["goodput_tok_s"],
                "best": s["setting"] == v.verdict,
            }
            for s in settings
        ],
        "table": [
            dict(_row_view(r, n.axis, lang), setting=i18n.setting_text(s["setting"], lang))
            for s in settings
            for r in s["rows"]
        ],
        "figure": figs.get("capacity"),
        "figure_title": tr(lang, "Time to first token against offered load, per setting"),
        "pareto": figs.get("pareto"),
        "pareto_title": tr(
            lang, "Tokens/s per user against aggregate tokens/s, every setting and load"
        ),
    }

"""The words of the factor verdicts (report/verdicts/kinds/factor) and of a factor the run did not
exercise (report.verdicts.exercise): each section's sentence, its table rows, the headline's
clauses and the summary table's value, through the catalogs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.numbers import (
    FactorContext,
    FactorNumbers,
    FactorRow,
    FactorValue,
    NotExercised,
    of,
)
from benchkit.report.analysis.quality import kld_text
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, tr, trn
from benchkit.report.lang.i18n import (
    factor_name,
    list_text,
    objective_value,
    objective_words,
    point_text,
    slots_phrase,
)
from benchkit.report.verdicts.common import Verdict, _objective_of
from benchkit.report.verdicts.compare_words import how_text, sides_cell
from benchkit.report.verdicts.reasons import _prov


def value_text(factor: str, value: FactorValue, lang: str) -> str:
    """'ubatch=512', '4 slots', 'MTP on': one value of a factor as points name it."""
    return point_text({factor: value}, lang)


def not_exercised_text(n: NotExercised, lang: str) -> str:
    """Why the run could not show a factor's effect, and what to run instead."""
    factor = factor_name(n["factor"], lang)
    values = ", ".join(value_text(n["factor"], v, lang) for v in n["values"])
    if n["why"] == "units":
        units = n["units"] or 0
        largest = max(int(float(str(v))) for v in n["values"])
        return trn(
            lang,
            "The run did not exercise {factor} ({values}): each point ran {units} unit, and a "
            "unit's calls run one after another, so no more slots were ever busy than units were "
            "in flight, whatever the count. The differences between the counts are run-to-run "
            "variation, not a trend. To compare slot counts, replay at least {need} units a "
            "point (workload.units, or a workload with more units).",
            "The run did not exercise {factor} ({values}): each point ran {units} units, and a "
            "unit's calls run one after another, so no more slots were ever busy than units were "
            "in flight, whatever the count. The differences between the counts are run-to-run "
            "variation, not a trend. To compare slot counts, replay at least {need} units a "
            "point (workload.units, or a workload with more units).",
            units,
            factor=factor,
            values=values,
            units=units,
            need=2 * largest,
        )
    if n["why"] == "seqs_per_step":
        seqs = fmt.num(n["seqs_per_step"], 2)
        return tr(
            lang,
            "The run did not exercise {factor} ({values}): the server ran at most {seqs} "
            "sequences per decode step at any count, so the extra slots stayed idle and the "
            "differences between the counts are run-to-run variation, not a trend. To compare "
            "slot counts, "
            "use a workload that keeps several units in flight at once.",
            factor=factor,
            values=values,
            seqs=seqs,
        )
    if n["why"] == "prompt":
        return tr(
            lang,
            "The run did not exercise {factor} ({values}): every value covers the longest prompt "
            "in flight ({tokens} tokens), so each split the prompts alike and any difference is "
            "run-to-run variation. To measure it, test values below {tokens}, or a workload with "
            "longer prompts.",
            factor=factor,
            values=values,
            tokens=fmt.integer(n["prompt_tokens"]),
        )
    return tr(
        lang,
        "The run did not exercise {factor} ({values}): the drafter drafted no token at any point, "
        "so there is no drafting to judge. Check in server.log that the model (or draft model) "
        "drafts, then measure again.",
        factor=factor,
        values=values,
    )


def _extras(r: FactorRow, best: FactorRow | None, lang: str) -> list[str]:
    """What stands beside a value's speed: context, energy, answers, the task."""
    out: list[str] = []
    ctx, base = r["ctx_total"], best["ctx_total"] if best is not None else None
    if ctx and base and abs(ctx / base - 1) > 0.005:
        out.append(tr(lang, "context {ratio}", ratio=fmt.ratio(ctx / base, lang)))
    if r["j_per_unit"] is not None:
        out.append(tr(lang, "{j} J per unit", j=fmt.integer(r["j_per_unit"])))
    if r["drift_probes"]:
        out.append(
            tr(
                lang,
                "changed {k} of {n} answers, KL {kld}",
                k=r["drift_changed"] or 0,
                n=r["drift_probes"],
                kld=kld_text(r["drift_kld"]),
            )
        )
    if r["drift_changed"] and r["drift_first"] is not None:
        out.append(tr(lang, "first difference at token {pos}", pos=fmt.num(r["drift_first"], 1)))
    if r["task_accuracy"] is not None:
        out.append(tr(lang, "task {acc} right", acc=fmt.pct(r["task_accuracy"])))
    if r["capped"]:
        out.append(tr(lang, "over the generation-cap limit"))
    if r["slo_breaks"]:
        out.append(tr(lang, "over the SLO"))
    return out


def row_text(
    factor: str, r: FactorRow, best: FactorRow | None, lang: str, beaten: bool = False
) -> str:
    """'ubatch=128 took 1.12x the time of ubatch=512 (1.05x-1.20x on a repeat, 6 units paired,
    context 2.00x)': a value against the best by the engine's comparison, its figures the
    comparison's, with what stands beside it. `beaten`: a comparison puts another value
    below the best's time, so the best is named as the one compared against, not fastest
    (review 13 read "f16 K cache fastest" beside "q8_0 K cache took 0.99x the time of f16")."""
    name = value_text(factor, r["value"], lang)
    notes = []
    c = r["comparison"]
    if r["effect"] == "best" and beaten:
        head = tr(lang, "{value} compared against", value=name)
    elif r["effect"] == "best":
        head = tr(lang, "{value} fastest", value=name)
    elif c is None or c["ratio"] is None:
        head = tr(lang, "{value} not compared", value=name)
    else:
        head = tr(
            lang,
            "{value} took {ratio} the time of {best}",
            value=name,
            ratio=fmt.ratio(c["ratio"], lang),
            best=value_text(factor, best["value"], lang) if best is not None else fmt.DASH,
        )
        notes.append(how_text(c, lang))
        if r["effect"] == "same":
            notes.append(tr(lang, "no difference"))
        elif r["effect"] == "open":
            notes.append(tr(lang, "not decided at the margin"))
    notes += _extras(r, best, lang)
    return f"{head} ({', '.join(notes)})" if notes else head


def _ratio(r: FactorRow) -> float | None:
    """A value's time over the best's, the engine's comparison's figure (None: none)."""
    c = r["comparison"]
    return None if c is None else c["ratio"]


def _rows_text(factor: str, ctx: FactorContext, lang: str) -> str:
    best = next((r for r in ctx["rows"] if r["effect"] == "best"), None)
    beaten = any((x := _ratio(r)) is not None and x < 1 for r in ctx["rows"])
    return "; ".join(row_text(factor, r, best, lang, beaten) for r in ctx["rows"])


def _where(ctx: FactorContext, lang: str) -> str:
    return point_text(ctx["context"], lang) if ctx["context"] else tr(lang, "every point")


def factor_sentence(v: Verdict, lang: str) -> str:
    """The section's opening: what the factor did on the objective, where, with what beside."""
    n = of(FactorNumbers, v.numbers)
    name = factor_name(n.factor, lang)
    prov = _prov(v, lang)
    if n.not_exercised is not None:
        return not_exercised_text(n.not_exercised, lang)
    primary = next((e for e in n.contexts if e["context"] == n.primary), None)
    if primary is None:
        return tr(lang, "No complete points compare {factor}{prov}.", factor=name, prov=prov)
    obj = objective_words(_objective_of(v), lang)
    fields = {
        "factor": name,
        "prov": prov,
        "objective": obj,
        "where": _where(primary, lang),
        "rows": _rows_text(n.factor, primary, lang),
    }
    if n.kind == "application":
        text = tr(
            lang,
            "{factor} is the application's choice, not a speed setting, so it is never the "
            "recommendation{prov}. What it does to {objective} and to the answers at {where}: "
            "{rows}.",
            **fields,
        )
    elif primary["state"] == "no difference":
        text = tr(
            lang,
            "{factor} made no difference on {objective} at {where}{prov}: {rows}.",
            **fields,
        )
    elif primary["state"] == "open":
        text = tr(
            lang, "{factor} was not decided on {objective} at {where}{prov}: {rows}.", **fields
        )
    elif primary["state"] == "across":
        text = tr(
            lang,
            "{factor} was not compared on one machine state at {where}{prov}: {rows}.",
            **fields,
        )
    else:
        text = tr(
            lang,
            "{best} was best on {objective} at {where}{prov}: {rows}.",
            best=value_text(n.factor, primary["best"], lang),
            **fields,
        )
    if n.edge and n.kind == "setting":
        text += " " + _edge_text(n, lang)
    if n.scope_differs and _depends(v):
        text += " " + tr(
            lang,
            "The best value differs between the other settings: {series}.",
            series=series_text(n, lang),
        )
    elif n.scope_differs:
        text += " " + tr(
            lang, "At each setting of the others: {series}.", series=series_text(n, lang)
        )
    elif len(n.contexts) > 1:
        # Every setting of the others stands alike: said, so that the one setting named above
        # does not read as the verdict's whole scope (the CPU study's K cache, open at all 6).
        text += " " + trn(
            lang,
            "The verdict is the same at the {n} other setting of the other factors (see the "
            "table).",
            "The verdict is the same at the {n} other settings of the other factors (see the "
            "table).",
            len(n.contexts) - 1,
        )
    return text


def _depends(v: Verdict) -> bool:
    """Whether two settings of the others decide the best differently (the value `depends`),
    not merely stand differently (some left open, some across machine states: `mixed`)."""
    return isinstance(v.verdict, Mapping) and v.verdict.get("state") == "depends"


def _edge_text(n: FactorNumbers, lang: str) -> str:
    if n.edge == "largest":
        return tr(
            lang,
            "It is the largest value tested: larger values were not measured and may be "
            "better still.",
        )
    return tr(
        lang,
        "It is the smallest value tested: smaller values were not measured and may be better "
        "still.",
    )


def series_text(n: FactorNumbers, lang: str) -> str:
    """'ubatch=512 at 1 slot, no difference at 2 slots' per setting of the others; beyond
    three settings, those without a best value counted by state ('not decided at 2
    settings'): a review found six settings spelled out in a table cell and a headline."""
    series = n.by_series or []
    if len(series) > 3:
        return _series_counted(n, lang)
    parts = []
    for s in series:
        where = point_text(s["series"], lang)
        if s["state"] == "best":
            parts.append(
                tr(
                    lang,
                    "{value} at {where}",
                    value=value_text(n.factor, s["best"], lang),
                    where=where,
                )
            )
        elif s["state"] == "across":
            parts.append(tr(lang, "not compared on one machine state at {where}", where=where))
        elif s["state"] == "open":
            parts.append(tr(lang, "not decided at {where}", where=where))
        else:
            parts.append(tr(lang, "no difference at {where}", where=where))
    if any("," in p for p in parts):
        return "; ".join(parts)
    return list_text(parts, lang)


def _series_counted(n: FactorNumbers, lang: str) -> str:
    """`series_text` for many settings: each best value where it holds, the rest counted."""
    series = n.by_series or []
    parts = [
        tr(
            lang,
            "{value} at {where}",
            value=value_text(n.factor, s["best"], lang),
            where=point_text(s["series"], lang),
        )
        for s in series
        if s["state"] == "best"
    ]
    counts = {
        k: sum(1 for s in series if s["state"] == k) for k in ("no difference", "open", "across")
    }
    if counts["no difference"]:
        parts.append(
            trn(
                lang,
                "no difference at {n} setting",
                "no difference at {n} settings",
                counts["no difference"],
            )
        )
    if counts["open"]:
        parts.append(
            trn(lang, "not decided at {n} setting", "not decided at {n} settings", counts["open"])
        )
    if counts["across"]:
        parts.append(
            trn(
                lang,
                "not compared on one machine state at {n} setting",
                "not compared on one machine state at {n} settings",
                counts["across"],
            )
        )
    return list_text(parts, lang)


def factor_clause(v: Verdict, lang: str) -> str:
    """The headline's clause for a factor verdict (the last clause adds its own ending)."""
    n = of(FactorNumbers, v.numbers)
    name = factor_name(n.factor, lang)
    if n.not_exercised is not None:
        return tr(lang, "{factor} was not exercised (no verdict)", factor=name)
    if n.comparisons and all(c["machine"] == "across" for c in n.comparisons):
        # Every pair crosses machine states (rules v11): no value is named from them.
        return tr(
            lang,
            "{factor} was not compared on one machine state (each pair ran on two)",
            factor=name,
        )
    primary = next((e for e in n.contexts if e["context"] == n.primary), None)
    if primary is None:
        return tr(lang, "{factor} was not compared", factor=name)
    if n.kind == "application":
        fastest = next((r for r in primary["rows"] if r["effect"] == "best"), None)
        if primary["state"] in ("open", "across"):
            return tr(lang, "{factor} (your choice) was not decided on speed", factor=name)
        if fastest is None or primary["state"] != "best":
            return tr(lang, "{factor} (your choice) made no difference to speed", factor=name)
        drift = ""
        if fastest["drift_probes"]:
            drift = tr(
                lang,
                ", changed {k} of {n} answers",
                k=fastest["drift_changed"] or 0,
                n=fastest["drift_probes"],
            )
        others = [r for r in primary["rows"] if r["effect"] != "best" and _ratio(r) is not None]
        slowest = max(others, key=lambda r: _ratio(r) or 0.0) if others else None
        if slowest is None:
            return tr(lang, "{factor} (your choice) made no difference to speed", factor=name)
        # The comparison's figure as it is, where it was measured: "X took 1.42x the time of
        # the fastest at 16 slots", never "29.6% faster" for 29.6% less time.
        fields = {
            "value": value_text(n.factor, fastest["value"], lang),
            "ratio": fmt.ratio(_ratio(slowest), lang),
            "other": value_text(n.factor, slowest["value"], lang),
            "where": _where(primary, lang),
            "drift": drift,
        }
        if v.status != COMPLETE:
            # Provisional (one run a value, say): it reads as provisional.
            return tr(
                lang,
                "{value} (your choice, not a setting) looked fastest at {where}{drift}: "
                "{other} took {ratio} its time",
                **fields,
            )
        return tr(
            lang,
            "{value} (your choice, not a setting) was fastest at {where}{drift}: {other} took "
            "{ratio} its time",
            **fields,
        )
    if n.scope_differs and _depends(v):
        return tr(
            lang,
            "the best {factor} depends on the other settings ({series})",
            factor=name,
            series=series_text(n, lang),
        )
    if n.scope_differs:
        return tr(
            lang,
            "{factor} at each setting of the others: {series}",
            factor=name,
            series=series_text(n, lang),
        )
    if primary["state"] == "no difference":
        return tr(lang, "{factor} made no difference", factor=name)
    if primary["state"] in ("open", "across"):
        return tr(lang, "{factor} was not decided", factor=name)
    best = value_text(n.factor, primary["best"], lang)
    edge = ""
    if n.edge == "largest":
        edge = tr(lang, " (the largest tested)")
    elif n.edge == "smallest":
        edge = tr(lang, " (the smallest tested)")
    if v.status == COMPLETE:
        return tr(lang, "{value} was best{edge}", value=best, edge=edge)
    return tr(lang, "{value} looks best{edge}", value=best, edge=edge)


def verdict_value(v: Verdict, lang: str) -> str:
    """The summary table's value of a factor verdict."""
    n = of(FactorNumbers, v.numbers)
    if n.not_exercised is not None:
        return tr(lang, "not exercised")
    primary = next((e for e in n.contexts if e["context"] == n.primary), None)
    if primary is None:
        return fmt.DASH
    if n.kind == "application":
        best = primary["best"]
        if primary["state"] in ("open", "across"):
            return tr(lang, "your choice: not decided on speed")
        if best is None:
            return tr(lang, "your choice: no difference in speed")
        return tr(lang, "your choice ({value} fastest)", value=value_text(n.factor, best, lang))
    if n.scope_differs:
        return series_text(n, lang)
    if primary["state"] == "no difference":
        return tr(lang, "no difference")
    if primary["state"] == "across":
        return tr(lang, "not compared on one machine state")
    if primary["state"] == "open":
        return tr(lang, "not decided")
    return value_text(n.factor, primary["best"], lang)


def stored_value_text(factor: str, value: Mapping[str, Any], lang: str) -> str:
    """A factor verdict's value as the ledger keeps it ({state, best, kind}), in the summary
    table's words: the corrections show an earlier value without its numbers."""
    state, best = value.get("state"), value.get("best")
    if state == "not exercised":
        return tr(lang, "not exercised")
    if value.get("kind") == "application":
        if state == "no difference" or best is None:
            return tr(lang, "your choice: no difference in speed")
        return tr(lang, "your choice ({value} fastest)", value=value_text(factor, best, lang))
    if state == "no difference":
        return tr(lang, "no difference")
    if state == "across":
        return tr(lang, "not compared on one machine state")
    if state == "open":
        return tr(lang, "not decided")
    if state == "depends":
        return tr(lang, "depends on the other settings")
    if state == "mixed":
        # No best value across the settings, each as it stands (the section lists them).
        return tr(lang, "differs by setting")
    return value_text(factor, best, lang) if best is not None else fmt.DASH


def table(v: Verdict, metric: str, lang: str) -> list[dict[str, object]]:
    """The section's table: every value at every setting of the others."""
    n = of(FactorNumbers, v.numbers)
    out: list[dict[str, object]] = []
    for e in n.contexts:
        for r in e["rows"]:
            out.append(
                dict(
                    r,
                    setting=_where(e, lang),
                    value_text=value_text(n.factor, r["value"], lang),
                    best=r["effect"] == "best" and e["state"] == "best",
                    objective_text=objective_value(metric, r["objective"], lang),
                    answers=f"{r['drift_changed'] or 0}/{r['drift_probes']}"
                    if r["drift_probes"]
                    else fmt.DASH,
                    kld=kld_text(r["drift_kld"]),
                    # Its time as a multiple of the best value's, as every difference is said:
                    # the verdict's own where it paired other runs than the row's (review 13
                    # read 1.04x here beside the sentence's 0.99x from the anchor runs).
                    vs_best_text=_vs_best(r, lang),
                    first_diff=fmt.DASH
                    if not r["drift_changed"] or r["drift_first"] is None
                    else fmt.num(r["drift_first"], 1),
                )
            )
    return out


def _vs_best(r: FactorRow, lang: str) -> str:
    """A row's time over the best value's: the table's own figures' ratio where the verdict
    compared those very jobs on one machine, else the verdict's ratio with the two figures
    it is of and where it was compared ('0.99x (anchor runs: 3.7 s against 3.7 s)')."""
    c = r["comparison"]
    m = r.get("margin")
    own = c is None or (
        c["machine"] == "same" and not c.get("sides") and not any("/" in j for j in c["jobs"])
    )
    if own or c is None or c["ratio"] is None:
        return fmt.DASH if m is None else fmt.ratio(1 + float(m), lang)
    where = {"bridged": tr(lang, "bridged"), "across": tr(lang, "two machines")}.get(
        c["machine"], tr(lang, "anchor runs") if any("/" in j for j in c["jobs"]) else ""
    )
    note = sides_cell(c, where, lang)
    ratio = fmt.ratio(c["ratio"], lang)
    return tr(lang, "{ratio} ({note})", ratio=ratio, note=note) if note else ratio


def slots_not_exercised(n: NotExercised, lang: str) -> str:
    """The headline's clause where slots were not exercised."""
    return tr(
        lang,
        "{factor} were not exercised (at most {slots} busy)",
        factor=factor_name("slots", lang),
        slots=slots_phrase(n["units"] or 1, lang),
    )


def names(factors: Sequence[str], lang: str) -> str:
    return list_text([factor_name(f, lang) for f in factors], lang)

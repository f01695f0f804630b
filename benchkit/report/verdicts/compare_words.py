"""A comparison of the engine (benchkit.compare) in words: '1 slot took 1.32x the time of
4 slots (1.21x-1.44x, 16 units paired)', the open ones with the units that would decide them.
Every number written is a field of the comparison (its ratio, interval, units, needed)."""

from __future__ import annotations

from collections.abc import Sequence

from benchkit.compare.engine import BETTER, PRACTICAL, WITHIN, WORSE
from benchkit.report.analysis.numbers import ComparisonJson, Point
from benchkit.report.analysis.sweep import norm
from benchkit.report.lang import fmt, span, tr, trc, trn
from benchkit.report.lang.i18n import list_text, point_text
from benchkit.report.verdicts.voice import in_post


def _pick(point: Point, like: Point) -> Point:
    keys = [k for k in point if norm(point.get(k)) != norm(like.get(k))]
    return {k: point[k] for k in keys} if keys else dict(point)


def comparison_text(c: ComparisonJson, lang: str, at: bool = False) -> str:
    """'1 slot took 1.32x the time of 4 slots (1.21x-1.44x; 16 units paired, one machine)';
    with `at`, the setting both points share is named too ('... at 2 slots'): a verdict that
    compares the same two values at several settings (drafting on against off)."""
    other = point_text(_pick(c["other"], c["base"]), lang)
    base = point_text(_pick(c["base"], c["other"]), lang)
    text = tr(
        lang,
        "{other} took {ratio} the time of {base}",
        other=other,
        ratio=fmt.ratio(c["ratio"], lang),
        base=base,
    )
    shared = {k: x for k, x in c["other"].items() if norm(x) == norm(c["base"].get(k))}
    if at and shared:
        text = tr(lang, "{comparison} at {where}", comparison=text, where=point_text(shared, lang))
    return tr(lang, "{comparison} ({how})", comparison=text, how=how_text(c, lang))


def sides_cell(c: ComparisonJson, where: str, lang: str) -> str:
    """A table cell's note of where a verdict's pair was compared ('anchor runs'), with the
    two figures its ratio is of where they are not the row's ('anchor runs: 6.9 s against
    5.4 s'): a row of one card's figures beside another card's ratio read as a contradiction."""
    sides = c.get("sides") or c.get("means")
    if not sides:
        return where
    figures = tr(
        lang,
        "{other} against {base}",
        other=fmt.seconds(sides[1], lang),
        base=fmt.seconds(sides[0], lang),
    )
    return tr(lang, "{where}: {figures}", where=where, figures=figures) if where else figures


def how_text(c: ComparisonJson, lang: str) -> str:
    """How sure a comparison is and where it holds: '1.21x-1.44x on a repeat, 16 units
    paired' (bridged or across machines said so). A comparison across machines with no point
    run on both has no interval (rules v7): its units' spread is one machine's against
    another's, blind to how far the machines differ, so none is printed as if it were one
    machine's (a review found '0.97x-1.11x if only its units varied' on two machines)."""
    parts = []
    across = c["machine"] == "across"
    interval = not across and c["low"] is not None and c["high"] is not None
    if interval and c.get("run_noise") == "unmeasured":
        # Units alone: where these two runs' units put it, not where a second run would. A
        # post says once, in its list of what is not settled, that no second run was made.
        low, high = fmt.ratio(c["low"], lang), fmt.ratio(c["high"], lang)
        if in_post():
            # TRANSLATORS: {range} is the ratio's range, '1.01x–1.70x' ('1.01~1.70배').
            parts.append(tr(lang, "{range} on its units alone", range=span(lang, low, high)))
        else:
            parts.append(
                tr(
                    lang,
                    "{low}-{high} if only its units varied, run-to-run noise not measured",
                    low=low,
                    high=high,
                )
            )
    elif interval:
        parts.append(
            tr(
                lang,
                "{low}-{high} on a repeat",
                low=fmt.ratio(c["low"], lang),
                high=fmt.ratio(c["high"], lang),
            )
        )
    if c["basis"] == "paired":
        parts.append(trn(lang, "{n} unit paired", "{n} units paired", c["units"]))
        sides = c.get("sides")
        if sides:
            # Paired on fewer units than a figure holds: the ratio is of these two means, not
            # of the table's figures (a review found 1.04x beside 5.75 s and 5.75 s).
            parts.append(
                tr(
                    lang,
                    "on those units {other} against {base} a unit",
                    other=fmt.seconds(sides[1], lang),
                    base=fmt.seconds(sides[0], lang),
                )
            )
    elif c["basis"] == "repeats":
        parts.append(tr(lang, "from repeats"))
    elif c["basis"] == "declared":
        parts.append(tr(lang, "against the declared noise"))
    else:
        parts.append(tr(lang, "no interval: too few units paired"))
    anchors = [j for j in c["jobs"] if "/" in j]
    if anchors and in_post():
        # A post names the anchor runs in its opening; their folders are the report's detail.
        parts.append(tr(lang, "from the anchor runs"))
    elif anchors:
        # Jobs of an anchor folder (study.anchors), not the sweep's own: the table beside the
        # sentence shows the sweep's jobs, so the figure says whose it is.
        parts.append(tr(lang, "from the anchor runs ({jobs})", jobs=", ".join(anchors)))
    parts += _where_words(c, lang)
    if across:
        parts.append(tr(lang, "so no interval"))
    return ", ".join(parts)


def _where_words(c: ComparisonJson, lang: str) -> list[str]:
    """Where a comparison holds: bridged (through which anchors, over how many machines) or
    across machines (and why: a busy host, an unrecorded card, several cards, more of the
    card in use); nothing for one machine."""
    out: list[str] = []
    chain = c.get("chain") or []
    if c["machine"] == "bridged" and chain:
        out.append(
            tr(
                lang,
                "bridged over {n} machines through {anchors}, each run on the two machines of "
                "its step",
                n=len(chain) + 1,
                anchors=list_text([point_text(x, lang) for x in chain], lang),
            )
        )
    elif c["machine"] == "bridged":
        out.append(
            tr(
                lang,
                "bridged through {anchor}, run on both machines",
                anchor=point_text(c["via"], lang),
            )
        )
    elif c["machine"] == "across" and c.get("several"):
        out.append(
            tr(lang, "one of the two measured on several cards, which unit on which not recorded")
        )
    elif c["machine"] == "across" and c.get("shared_card") and c.get("sweeps"):
        out.append(
            tr(
                lang,
                "one of the two started, in another sweep, with {value} more of the card's "
                "memory in use",
                value=c.get("shared_card", ""),
            )
        )
    elif c["machine"] == "across" and c.get("shared_card"):
        out.append(
            tr(
                lang,
                "one of the two started with {value} more of the card's memory in use",
                value=c.get("shared_card", ""),
            )
        )
    elif c["machine"] == "across" and c.get("sweeps"):
        out.append(
            tr(
                lang,
                "the two ran in separate sweeps, one machine known only by their hardware "
                "profile and host name",
            )
        )
    elif c["machine"] == "across" and c.get("host_busy"):
        out.append(tr(lang, "one of the two while other work held its server's CPU"))
    elif c["machine"] == "across" and c.get("unrecorded"):
        out.append(tr(lang, "one of the two on a machine not recorded, among several"))
    elif c["machine"] == "across":
        out.append(tr(lang, "on two machines, no point run on both"))
    return out


def outcome_words(outcome: str, lang: str) -> str:
    """A comparison's outcome at the margin: 'slower beyond the margin', 'not decided'."""
    return {
        WORSE: tr(lang, "slower beyond the margin"),
        WITHIN: tr(lang, "within the margin"),
        BETTER: tr(lang, "faster beyond the margin"),
    }.get(outcome, tr(lang, "not decided"))


def open_text(open_: Sequence[ComparisonJson], lang: str, at: bool = False) -> str:
    """Why a verdict resting on `open_` is not decided, each pair with what would decide it
    (`at`: each named with the setting it was compared at, see `comparison_text`)."""
    items = []
    for c in open_:
        text = comparison_text(c, lang, at)
        needed = c["needed"]
        # On the margin: the figure itself sits there (a wide spread far from it needs units,
        # however many, and says how many).
        far = needed is None or needed > PRACTICAL * max(c["units"], 1)
        if c.get("near_margin") and far and needed is not None:
            # The count itself, not a judgement of it (review 12: "no practical number" of
            # 626 units, an hour a point, was benchkit's convention stated as a fact).
            text += tr(
                lang,
                ": it sits on the margin, where about {n} units paired ({k}x its units) would "
                "decide it",
                n=format(needed, ","),
                k=format(needed // max(c["units"], 1), ","),
            )
        elif c.get("near_margin") and far:
            text += tr(
                lang,
                ": it sits on the margin, so no practical number of units would decide it",
            )
        elif needed is not None:
            text += tr(
                lang,
                ": about {n} units paired would decide it at its spread",
                n=format(needed, ","),
            )
        items.append(text)
    return tr(lang, "comparisons not decided at the margin: {pairs}", pairs="; ".join(items))


def comparison_definitions(margin: float, lang: str) -> list[str]:
    """How every ratio in the verdicts is obtained and decided (benchkit.compare.engine), for
    the report's Definitions: a review rebuilt narrower intervals from the standard error
    alone, since the report did not say that an interval is a replication interval."""
    return [
        tr(
            lang,
            "**Ratio**: one point's seconds per unit over the other's, summed over the units"
            " both ran, paired unit by unit on one machine; where either point's figure holds"
            " other units too, the two means on the shared units stand beside the ratio.",
        ),
        tr(
            lang,
            "**Interval**: where the same comparison run again would put its ratio, at 95%"
            " confidence: exp(log ratio ± √2 × t × se). se is the spread of the per-unit"
            " residuals (other − ratio × base, over the other's mean) divided by √n for n paired"
            " units, with each side's run-to-run variance added where twin runs measured it or"
            " study.noise declares it (a side pooled from k twin jobs, named 'a + b', carries"
            " 1/k of it); t is at n − 1 degrees of freedom, or at the Welch–Satterthwaite"
            " degrees of freedom where a run-to-run term is added. The √2 is a second run's own"
            " noise. 'On a repeat' is this interval; 'if only its units varied' is it without"
            " any run-to-run term, none having been measured or declared.",
        ),
        tr(
            lang,
            "**Decided**: the interval lies wholly above {slower} (slower beyond the study's"
            " {margin} margin), wholly below {faster} (faster) or wholly between the two"
            " (within the margin); otherwise the comparison is not decided, and a verdict"
            " resting on it is provisional.",
            slower=fmt.ratio(1 + margin, lang),
            # Three places: 1 / 1.05 is 0.952, which "0.95x" misstated (review 10).
            faster=trc(lang, "unit", "{value}x", value=format(1 / (1 + margin), ".3f")),
            margin=fmt.pct(margin),
        ),
        tr(
            lang,
            "**Bridged**: points of two machines compared through a point run on both: the"
            " two one-machine log ratios added, and their variances, with the machines'"
            " point-to-point spread twice where two points ran on both. Points of two"
            " machines with no point run on both are compared without an interval and never"
            " decided.",
        ),
    ]

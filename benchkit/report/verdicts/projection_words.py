"""The projection's words at each value of an application factor (the workload, say): the
time at each value measured, the value the projection itself is at, and where a value's
job ran on a host busy with other work (a machine state of its own), that beside its time."""

from __future__ import annotations

from collections.abc import Sequence

from benchkit.report.analysis.numbers import ProjectionNumbers, of
from benchkit.report.lang import fmt, tr
from benchkit.report.lang.i18n import factor_name, jobs_text, point_text
from benchkit.report.verdicts.common import Verdict


def busy_text(jobs: Sequence[str] | None, lang: str) -> str:
    """' (job 0 ran on a host busy with other work, a machine state of its own)', '' where
    no job did: a time measured while other work held the server's CPU is that machine
    state's, never said as the setting's alone (a review found 13.5 min said bare)."""
    if not jobs:
        return ""
    return tr(
        lang,
        " ({jobs} ran on a host busy with other work, a machine state of its own)",
        jobs=jobs_text(jobs, lang),
    )


def application_text(v: Verdict, lang: str) -> str:
    """The projection at each value of an application factor: the user's choice, stated, never
    recommended; the value the projection is at named (never "the workload you chose" where
    the sweep measured several)."""
    n = of(ProjectionNumbers, v.numbers)
    parts = [
        tr(
            lang,
            "{value}: {hours}",
            value=point_text({a["factor"]: a["value"]}, lang),
            hours=fmt.hours(a["seconds"], lang) if a["seconds"] is not None else fmt.DASH,
        )
        + busy_text(a.get("host_busy"), lang)
        for a in n.application or []
    ]
    if n.application_at:
        return tr(
            lang,
            "That is with {value}, one of the values measured, none recommended; at each "
            "value measured: {values}.",
            value=point_text(n.application_at, lang),
            values="; ".join(parts),
        )
    factors = sorted({a["factor"] for a in n.application or []})
    return tr(
        lang,
        "That is at the {factors} you chose; at each value measured: {values}.",
        factors=", ".join(factor_name(f, lang) for f in factors),
        values="; ".join(parts),
    )

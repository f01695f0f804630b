"""The validity verdict: whether the sweep's results can be trusted at all."""

from __future__ import annotations

from benchkit.report.analysis.numbers import (
    ValidityNumbers,
)
from benchkit.report.analysis.sweep import COMPLETE, PROVISIONAL, Sweep
from benchkit.report.verdicts.common import Verdict, _status


def validity_verdict(sw: Sweep) -> Verdict:
    """The sweep as a whole: complete only when every planned point completed."""
    n_missing = len(sw.missing)
    return Verdict(
        "validity",
        COMPLETE if not n_missing else PROVISIONAL,
        _status(sw.missing),
        list(sw.missing),
        None,
        ValidityNumbers(planned=sw.n_planned, completed=sw.n_planned - n_missing),
    )

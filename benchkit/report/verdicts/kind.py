"""The shape of a verdict kind: what the registry (`verdicts.registry`) holds for each kind of
verdict, so that analysis and the write-up loop over kinds instead of naming them.

A kind says which verdicts are its own (a name, or a prefix such as "spec="), how analysis
computes them from a sweep and the verdicts found before (`Found`), and how they are said: the
short value a table shows, the one-sentence summary, and what the ledger does with them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchkit.report.light import Light
from benchkit.report.sweep import Sweep
from benchkit.report.verdicts.common import Verdict

CLOSED = "closed"  # calls sent as slots free up: per-unit time judges a setting
OPEN = "open"  # calls sent on a schedule (open-loop load): the load a setting held judges it
BOTH = frozenset({CLOSED, OPEN})


@dataclass
class Found:
    """What analysis has found so far: the sweep, the units the projection is for, and the
    verdicts of the kinds computed before, by kind name."""

    sweep: Sweep
    projection_units: int
    by_kind: dict[str, list[Verdict]] = field(default_factory=dict)

    def one(self, kind: str) -> Verdict | None:
        """The first verdict of `kind`, None if it gave none."""
        return next(iter(self.by_kind.get(kind) or []), None)

    def all(self, kind: str) -> list[Verdict]:
        return list(self.by_kind.get(kind) or [])


@dataclass(frozen=True)
class Say:
    """What a kind's summary sentence may need besides its verdict."""

    lang: str
    unit: str  # the study's unit, in `lang`
    knee_gain: float


@dataclass(frozen=True)
class VerdictKind:
    """One kind of verdict, registered once in `verdicts.registry.KINDS` (whose order is the
    report's).

    `compute` gives the kind's verdicts for a sweep under the loads in `loads` (None: the
    kind is not computed by `analyse`; a build comparison and a claim come from elsewhere).
    `value_text` is the short value a reader sees, also for an earlier value from the ledger
    (None from it: the generic kind's wording); `summary` the one sentence of verdicts.json;
    `table_value` the summary table's value where it is not `value_text`'s."""

    name: str
    compute: Callable[[Found], Sequence[Verdict]] | None = None
    prefix: bool = False  # `name` is a prefix of the kind's verdict names ("spec=")
    loads: frozenset[str] = frozenset({CLOSED})
    value_text: Callable[[Any, str, Light], str | None] | None = None
    summary: Callable[[Verdict, Say], str] | None = None
    table_value: Callable[[Verdict, str], str] | None = None
    in_summary_table: bool = True  # False: the study-wide verdicts with sections of their own
    tracked: bool = True  # the ledger follows its value from one publication to the next
    value_tolerance: bool = False  # the ledger takes a numeric value within its tolerance
    names_point: bool = False  # its point is the report's recommendation
    clause: Callable[[Verdict, str], str | None] | None = None  # its headline clause, if any

    def matches(self, factor: str) -> bool:
        return factor.startswith(self.name) if self.prefix else factor == self.name

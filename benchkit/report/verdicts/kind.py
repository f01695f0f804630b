"""The shape of a verdict kind: what the registry (`verdicts.registry`) holds for each kind of
verdict, so that analysis and the write-up loop over kinds instead of naming them.

A kind says which verdicts are its own (a name, or a prefix such as "spec="), how analysis
computes them from a sweep and the verdicts found before (`Found`), and how they are said: the
short value a table shows, the one-sentence summary, and what the ledger does with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from benchkit.report.analysis.numbers import Point
from benchkit.report.analysis.sweep import Sweep
from benchkit.report.lang import tr
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.light import Light

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


# A clause of the headline. Given None it is one the sentence goes on from; given what
# follows the verdicts (the projection, or ""), it is the one that ends them: a language may
# word the last clause otherwise (Korean ends the sentence there; English only stops adding
# commas), so each clause has a message of each kind, the last with a {rest} field.
Clause = Callable[[str | None], str]


def said(text: str, lang: str, rest: str | None) -> str:
    """A clause worded as one text: the last one carries what follows it."""
    if rest is None:
        return text
    # TRANSLATORS: a clause of the headline worded elsewhere, then what follows the verdicts.
    return tr(lang, "{clause}{rest}", clause=text, rest=rest)


@dataclass(frozen=True)
class Page:
    """What a kind's report section may need besides its verdict: the study's language and
    unit, the sweep, the study's knee gain, the figures drawn (by key, `VerdictKind.figures`)
    and, where two builds are compared, the baseline's folder."""

    lang: str
    unit: str
    sweep: Sweep
    knee_gain: float
    figs: Mapping[str, str]
    baseline: str = ""


@dataclass(frozen=True)
class Drawing:
    """Where and from what a kind draws its figures: the sweep's rows, the folder the files
    go to, the report's language."""

    df: pd.DataFrame
    folder: Path
    lang: str


@dataclass(frozen=True)
class Proposal:
    """The next run a kind's verdict asks for: the sweep override it sets (`key` to
    `values`, as the command line writes them), the points it measures that were not, and
    why (a `use_this.StepKind` value). `reuse`: into a new folder that reuses this one's jobs
    (new values would renumber the points here)."""

    why: str
    key: str
    values: str
    points: list[Point]
    reuse: bool = False
    # Other overrides the run needs (`workload.units=16`: more units, to fill a count's slots).
    also: tuple[tuple[str, str], ...] = ()
    # Values the kind would have proposed but the run could not exercise (a slot count the
    # workload's units do not fill in whole rounds), and the units it was judged on.
    left_out: tuple[int, ...] = ()
    units: int | None = None


@dataclass(frozen=True)
class RunUnits:
    """The units each job of a next run replays (its `workload.units`, else the whole
    workload) and the units the workload has: what a proposed slot count is judged on."""

    units: int | None = None
    available: int | None = None


# A kind's report section: the fields the template prints for it (kind, title, text, table,
# figure, ...); None where the verdict has none.
Section = dict[str, object]


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
    # Its headline clauses where they are more than one text (a last clause worded apart).
    clauses: Callable[[Verdict, str], Sequence[Clause]] | None = None
    # Its report section, from its verdict and the page.
    section: Callable[[Verdict, Page], Section | None] | None = None
    # Its figures, from its verdicts in the report (none: a figure drawn from the rows alone),
    # as {key: file} for the sections (`Page.figs`).
    figures: Callable[[Sequence[Verdict], Drawing], Mapping[str, str]] | None = None
    # Its verdict's status is the study's: whether every planned point completed.
    completeness: bool = False
    # The recommendation rests on it: "use this" is settled only when it is complete.
    acted_on: bool = False
    # The next run its verdict asks for, if any.
    proposes: Callable[[Verdict, RunUnits], Proposal | None] | None = None

    def matches(self, factor: str) -> bool:
        return factor.startswith(self.name) if self.prefix else factor == self.name

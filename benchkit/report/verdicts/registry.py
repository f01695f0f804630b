"""The verdict kinds, in report order: the one place a kind is registered. Analysis computes
them in this order (`analyse`), and the write-up asks a verdict's kind (`kind_of`) for its
words instead of naming it.

Adding a kind is a package under `verdicts/kinds/` holding its `KIND`, and one line here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchkit.report.analysis.sweep import Sweep
from benchkit.report.lang import fmt
from benchkit.report.verdicts.cold_check import cold_check
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.derived_check import derived_check
from benchkit.report.verdicts.kind import CLOSED, OPEN, Found, VerdictKind
from benchkit.report.verdicts.kinds import (
    backend,
    builds,
    capacity,
    claim,
    drafting,
    factor,
    projection,
    repeats,
    slots,
    validity,
)
from benchkit.report.verdicts.kinds.capacity.verdict import load_axis
from benchkit.report.verdicts.light import Light

KINDS: tuple[VerdictKind, ...] = (
    capacity.KIND,
    backend.KIND,
    slots.KIND,
    drafting.MTP,
    drafting.SPEC,
    factor.KIND,
    builds.KIND,
    repeats.KIND,
    projection.KIND,
    validity.KIND,
    claim.KIND,
)
# The kind a verdict name no registered kind claims falls to: a swept factor's own verdict.
GENERIC = factor.KIND


def kind_of(name: str) -> VerdictKind:
    """The kind of the verdict named `name` (a name, then a prefix, then the generic kind)."""
    exact = next((k for k in KINDS if not k.prefix and k.matches(name)), None)
    return exact or next((k for k in KINDS if k.prefix and k.matches(name)), GENERIC)


def load_of(sw: Sweep) -> str:
    """How the sweep's calls were sent: OPEN (open-loop load) or CLOSED (units as slots free)."""
    return OPEN if load_axis(sw) is not None else CLOSED


def verdicts_of(found: Found) -> list[Verdict]:
    """Every kind's verdicts for the sweep in `found`, in registry order: each kind computed
    under the sweep's load (open-loop or not) sees the verdicts of the kinds before it."""
    load = load_of(found.sweep)
    out: list[Verdict] = []
    for kind in KINDS:
        if kind.compute is None or load not in kind.loads:
            continue
        sw = found.sweep
        verdicts = [derived_check(sw, cold_check(sw, v)) for v in kind.compute(found)]
        found.by_kind[kind.name] = verdicts
        out += verdicts
    return out


def value_text(name: str, value: Any, lang: str, numbers: Light) -> str:
    """A verdict's value as a reader sees it (also an earlier value from the ledger, whose
    numbers are the few the ledger keeps)."""
    if value is None:
        return fmt.DASH
    kind = kind_of(name)
    said = kind.value_text(value, lang, numbers) if kind.value_text is not None else None
    return said if said is not None else factor.value_text(name, value, lang)


def of_kind(kind: VerdictKind, verdicts: Iterable[Verdict]) -> list[Verdict]:
    """The verdicts among `verdicts` that are `kind`'s, in their order."""
    return [v for v in verdicts if kind_of(v.factor) is kind]


def by_kind(verdicts: Iterable[Verdict]) -> list[tuple[VerdictKind, list[Verdict]]]:
    """Each registered kind with its verdicts among `verdicts` (none: an empty list), in
    report order."""
    listed = list(verdicts)
    return [(k, of_kind(k, listed)) for k in KINDS]


def completeness(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The verdict whose status is the study's (every planned point completed), if given."""
    return next((v for v in verdicts if kind_of(v.factor).completeness), None)


def study_status(verdicts: Iterable[Verdict]) -> Verdict:
    """`completeness`'s verdict, which analysis always gives (a ValueError where not)."""
    v = completeness(verdicts)
    if v is None:
        raise ValueError("no verdict says whether every planned point completed")
    return v


def tracked(name: str) -> bool:
    """Whether the ledger follows this verdict's value from one publication to the next."""
    return kind_of(name).tracked


def recommending(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The verdict whose point is the report's recommendation (the projection's; under
    open-loop load, the capacity verdict's)."""
    return next((v for v in verdicts if kind_of(v.factor).names_point), None)

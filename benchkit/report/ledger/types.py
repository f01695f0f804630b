"""The ledger's record types: one publication's entry (its verdicts, claims and context) and
what the comparison of two entries yields (why a verdict changed, the diff, the correction)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from benchkit.report.analysis.numbers import FactorValue, MissingPoint, Point
from benchkit.report.verdicts.light import NumberChange


class LedgerVerdict(TypedDict):
    factor: str
    verdict: Any  # a backend name, slot count, effect runs, hours, ... (analyse.Verdict)
    status: str
    missing: list[MissingPoint]
    reasons: NotRequired[list[str]]
    point: NotRequired[Point | None]
    numbers: NotRequired[dict[str, object]]


class LedgerClaim(TypedDict):
    premise: str
    status: str
    measured_min: float | None
    measured_max: float | None


class Context(TypedDict):
    """What was measured, so that a later correction can say what changed."""

    model: FactorValue
    hardware: FactorValue
    workload: FactorValue
    sampling: FactorValue
    builds: dict[str, str]
    # The physical cards the jobs ran on (their telemetry's UUIDs); absent in older entries.
    cards: NotRequired[str | None]
    # Whether an untimed warm-up preceded the timed passes: `on`, `off` or `mixed` (jobs that
    # recorded it; benchkit.report.analysis.warmup); absent in entries before rules v6.
    warmup: NotRequired[str]


class Entry(TypedDict):
    """One publication: a line of the ledger. Entries of older benchkits may lack keys."""

    ledger_version: int
    study: str
    published_utc: str
    source: str
    headline: NotRequired[str]
    verdicts: list[LedgerVerdict]
    claims: NotRequired[list[LedgerClaim]]
    context: NotRequired[dict[str, object]]
    rules: NotRequired[int]
    # sha256 over the results' result.json files: the same publication in another language
    # has the same (results_digest).
    data: NotRequired[str]


class Why(TypedDict):
    """Why a verdict changed: earlier points that had not finished, context that changed
    ({key: [earlier, now]}), and the rules of each entry when they differ."""

    unfinished: list[MissingPoint]
    changed: dict[str, list[object]]
    rules: NotRequired[list[int]]
    # Cold starts the later entry leaves out of its figures and the earlier did not (rules v6):
    # seconds per job.
    cold: NotRequired[dict[str, float]]
    # Both entries recorded a digest of their results and the two differ: the later read
    # other results (more units or jobs measured, a job measured again).
    data_changed: NotRequired[bool]


class Diff(TypedDict):
    """What changed in one verdict between two entries. `presence`: "both", "new" (the
    earlier entry had no such verdict) or "gone" (the later one has none). `reasons_known`:
    False when the earlier entry did not record its reasons (older ledger lines); the later
    reasons are then listed as `reasons_added`."""

    presence: str
    value: bool
    status: bool
    reasons_added: list[str]
    reasons_removed: list[str]
    reasons_known: bool
    missing_added: list[MissingPoint]
    missing_removed: list[MissingPoint]
    # The comparison's size (light.RANGES) where both entries recorded it and it moved
    # beyond the tolerance; absent in diffs made before rules v6.
    numbers: NotRequired[list[NumberChange]]
    # A verdict given per series whose runs moved in a series (both entries recorded them).
    series: NotRequired[list[SeriesChange]]


class SeriesChange(TypedDict):
    """One series of a per-series verdict whose value moved: its point and both values."""

    series: dict[str, object]
    earlier: object
    now: object


class Change(TypedDict):
    factor: str
    date: str | None
    current: bool
    earlier: Any  # verdict values, as in LedgerVerdict
    earlier_status: str
    earlier_numbers: dict[str, object]
    now: Any
    now_status: str
    now_numbers: dict[str, object]
    why: Why
    diff: Diff


class Confirmed(TypedDict):
    factor: str
    value: Any
    numbers: dict[str, object]


class Corrections(TypedDict):
    """`rules`: the last earlier entry's rules version and this one's (empty without
    history)."""

    changes: list[Change]
    confirmed: list[Confirmed]
    earlier: int
    last_date: str | None
    rules: list[int]

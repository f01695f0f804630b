"""The numbers behind each kind of verdict, as types: what analyse builds and the writers read.

One frozen dataclass per verdict kind (backend winner, slots knee, drafting effect, repeats,
projection, validity, build comparison); the parts they hold (a context's ratios, a row of
the slots table, an effect run, ...) are TypedDicts because they are written out as they
are. `to_json` gives the verdict's `numbers` object of verdicts.json and the ledger, with the
keys and key order analyse always wrote: a field left None is a key the verdict does not
have, unless the field is marked to be written whenever another field is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict, TypeVar

from benchkit.report.analysis.comparison_numbers import ComparisonJson as ComparisonJson
from benchkit.report.analysis.job_builds import BuildTraits as BuildTraits
from benchkit.report.analysis.load_numbers import SettingCapacity
from benchkit.report.analysis.numbers_base import CallRef as CallRef
from benchkit.report.analysis.numbers_base import Capped as Capped
from benchkit.report.analysis.numbers_base import Cold as Cold
from benchkit.report.analysis.numbers_base import ColdNote as ColdNote
from benchkit.report.analysis.numbers_base import Contaminated as Contaminated
from benchkit.report.analysis.numbers_base import Contamination as Contamination
from benchkit.report.analysis.numbers_base import FactorValue as FactorValue
from benchkit.report.analysis.numbers_base import MissingPoint as MissingPoint
from benchkit.report.analysis.numbers_base import NoiseEntry as NoiseEntry
from benchkit.report.analysis.numbers_base import ObjectiveJson as ObjectiveJson
from benchkit.report.analysis.numbers_base import Point as Point
from benchkit.report.analysis.numbers_base import Run as Run
from benchkit.report.analysis.numbers_base import SloBreak as SloBreak
from benchkit.report.analysis.numbers_base import Stalled as Stalled
from benchkit.report.analysis.numbers_base import StallNote as StallNote
from benchkit.report.analysis.numbers_base import StallPair as StallPair
from benchkit.report.analysis.numbers_base import _always as _always
from benchkit.report.analysis.numbers_base import _internal as _internal
from benchkit.report.analysis.numbers_base import _null_with as _null_with
from benchkit.report.analysis.numbers_base import _Numbers as _Numbers

# ------------------------------------------------------------------------------ backend


class BackendContext(TypedDict):
    """One setting of the other factors: each backend's value, its ratio to the best, the
    winner there (None: a tie)."""

    context: Point
    values: dict[str, float]
    ratios: dict[str, float | None]
    winner: NotRequired[str | None]
    inside_noise: NotRequired[bool]
    # Each backend's drift probes here, [changed, probes], where any answer changed against
    # the reference: the two backends do not compute the same at this setting.
    answers: NotRequired[dict[str, list[int]]]
    # Where every changed answer flipped a near-tie of the reference's: the widest such gap.
    near_tie: NotRequired[float]


@dataclass(frozen=True)
class BackendNumbers(_Numbers):
    contexts: list[BackendContext]
    winners: dict[str, int] | None = None
    ties: int | None = None
    ratio_range: dict[str, list[float]] | None = None
    # Each backend's objective, least and most, across the settings compared.
    value_range: dict[str, list[float]] | None = None
    compared: int | None = None
    objective: ObjectiveJson | None = None
    noise: list[NoiseEntry] | None = None
    contaminated: Contaminated | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    # Each other backend against the best at each setting (benchkit.compare), and those not
    # decided at the margin; `ratio_range` is over the comparisons of one machine or bridged.
    comparisons: list[ComparisonJson] | None = None
    open: list[ComparisonJson] | None = None
    # How many of the settings compared the ratio range is over (those compared on one
    # machine or bridged), where fewer than `compared`.
    range_over: int | None = None
    # The decided comparisons that a cold start's leaving out decided (rules v10): each as
    # measured with the cold start kept, where its outcome differs.
    as_measured: list[ComparisonJson] | None = None
    # Every comparison with a point whose figure leaves out a cold start, as measured with the
    # cold start kept (rules v12): stated beside the figures compared.
    cold_kept: list[ComparisonJson] | None = None
    # Each backend's build where the backends' builds differ in more than the backend (rules
    # v11): portable or native, and the system it was built on, only the traits that differ.
    builds_differ: dict[str, BuildTraits] | None = None


# ------------------------------------------------------------------------------ slots


class SlotsRow(TypedDict):
    slots: int
    objective: float | None
    objective_uncapped: float | None
    change_vs_previous: float | None
    s_per_unit_throughput: float | None
    s_per_unit_slot_latency: float | None
    output_tok_s: float | None
    seq_decode_tok_s: float | None
    seqs_per_step: float | None
    ctx_total: float | None
    slo_breaks: list[SloBreak]
    capped: bool
    # The machine(s) the row's job ran on, where the series spans several: rows of other
    # machines are not compared by the table (no change vs previous across them).
    machine: NotRequired[str]


class SloExcluded(TypedDict):
    slots: int
    breaks: list[SloBreak]


class Faster(TypedDict):
    """A slot count that measured faster than the knee, and what it costs."""

    slots: int
    faster_by: float
    ctx_ratio: float
    latency_ratio: float | None
    inside_noise: NotRequired[bool]


class Beyond(TypedDict):
    """A slot count above the knee against the knee."""

    slots: int
    change_vs_knee: float
    latency_ratio: float | None
    ctx_ratio: float
    ctx_total: float | None


class PartialRound(TypedDict):
    """A slot count whose units did not fill whole rounds of its slots: `idle_share` of its
    slot-time had no unit to run (1 - units / (rounds x slots)), which makes it look slower."""

    slots: int
    units: int
    idle_share: float
    # The share of slot-time idle while the server had work, as its calls measured it
    # (analysis.slot_use; rules v11): what the partial round cost, not only how units fell.
    measured_idle: NotRequired[float]


class ElsewhereKnee(TypedDict):
    """The knee of another series of the same slot counts (another ubatch, MTP setting, ...)
    where it differs from the verdict's, with the verdict's knee count against it there."""

    series: Point
    knee: int
    reached: bool
    comparison: ComparisonJson | None


@dataclass(frozen=True)
class SlotsNumbers(_Numbers):
    series: Point | None = None
    rows: list[SlotsRow] | None = None
    knee_gain: float | None = None
    objective: ObjectiveJson | None = None
    slo_excluded: list[SloExcluded] | None = None
    contaminated: Contaminated | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    knee_reached: bool | None = None
    # Rules v6 and before: the knee taken inside the series' noise (flat from it). Rules v7
    # decide the knee on comparisons alone (`comparisons`, `open`); kept for older ledgers.
    flat_from: int | None = None
    best_slots: int | None = None
    best_throughput_slots: int | None = None
    faster: Faster | None = None
    noise: list[NoiseEntry] | None = None
    # Each count up to the knee against the best count (benchkit.compare), and those not
    # decided the way the knee needs: the pairs a Next run would settle.
    comparisons: list[ComparisonJson] | None = None
    open: list[ComparisonJson] | None = None
    capped: Capped | None = None
    knee_uncapped: int | None = None
    beyond: list[Beyond] | None = None
    latency_grows: bool | None = _null_with("beyond")
    not_exercised: NotExercised | None = None
    partial_rounds: list[PartialRound] | None = None
    elsewhere: list[ElsewhereKnee] | None = None
    # The decided comparisons that a cold start's leaving out decided (rules v10): each as
    # measured with the cold start kept, where its outcome differs.
    as_measured: list[ComparisonJson] | None = None
    # Every comparison with a point whose figure leaves out a cold start, as measured with the
    # cold start kept (rules v12): stated beside the figures compared.
    cold_kept: list[ComparisonJson] | None = None
    # Counts before the knee that only comparisons across machines put beyond the margin
    # (rules v11): the knee may lie at any of them.
    across: list[ComparisonJson] | None = None
    # The slot counts the knee may lie between while its comparisons are open (rules v11):
    # None where that end is the knee itself.
    knee_low: int | None = None
    knee_high: int | None = None
    # Counts above the knee not settled against the best (rules v13): open, compared only
    # across machines, or missing; None where every larger count is settled.
    above_open: list[int] | None = None


# ------------------------------------------------------------------------------ drafting


class DraftAnswers(TypedDict):
    """The drafter on: tokens it drafted (0: it never drafted, so the difference measured is
    not drafting's), and its answers against the drift reference and its task accuracy."""

    drafted: int | None
    drift_changed: int | None
    drift_probes: int | None
    drift_first: float | None
    drift_kld: float | None
    task_accuracy: float | None


class DraftContext(DraftAnswers):
    """One setting of the other factors with the drafter off and on: the table's seconds and
    their ratio, the engine's comparison of on against off (benchkit.compare) and the effect
    it gives (`helps`, `hurts`, `no difference`; an open comparison read by its figure)."""

    context: Point
    off: float
    on: float
    ratio: float
    effect: str
    comparison: ComparisonJson
    acceptance: float | None
    decode_off: float | None
    decode_on: float | None


class SeriesRuns(TypedDict):
    series: Point
    runs: list[Run]


@dataclass(frozen=True)
class DraftingNumbers(_Numbers):
    """MTP on against off, or a drafter (`spec`) against none."""

    factor: str
    on_value: FactorValue
    off_value: FactorValue
    contexts: list[DraftContext]
    primary: Point
    acceptance_range: list[float] | None
    acceptance_by_backend: dict[str, list[float]]
    by_series: list[SeriesRuns]
    scope_differs: bool
    objective: ObjectiveJson
    # The primary series' comparisons of on against off, and those not decided at the margin.
    comparisons: list[ComparisonJson] | None = None
    open: list[ComparisonJson] | None = None
    contaminated: Contaminated | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    # The series the other verdicts single out, when it has no pair and `primary` is the
    # series that has (reason "other_series"); absent otherwise.
    wanted: Point | None = None
    # The largest slot count of the primary series; written once there was a comparison.
    largest: int | None = _null_with("compared")
    # The comparisons' on/off ratio, least and most, across the primary series' settings.
    on_off_range: list[float] | None = None
    not_exercised: NotExercised | None = None
    compared: bool = _internal()
    # The decided comparisons that a cold start's leaving out decided (rules v10): each as
    # measured with the cold start kept, where its outcome differs.
    as_measured: list[ComparisonJson] | None = None
    # Every comparison with a point whose figure leaves out a cold start, as measured with the
    # cold start kept (rules v12): stated beside the figures compared.
    cold_kept: list[ComparisonJson] | None = None


# ------------------------------------------------------------------------------ any factor


class NotExercised(TypedDict):
    """Why the run could not have shown a factor's effect (report.verdicts.exercise): `why`
    is `units` (no more units in flight than the smallest slot count), `seqs_per_step` (the
    server ran about one sequence per decode step at every count), `prompt` (every value
    splits the longest prompt alike) or `no_drafts` (the drafter drafted nothing)."""

    factor: str
    why: str
    values: list[FactorValue]
    units: int | None
    seqs_per_step: float | None
    prompt_tokens: int | None


class FactorRow(TypedDict):
    """One value of a factor at one setting of the others, against that setting's best."""

    value: FactorValue
    objective: float | None
    # value / best - 1 on the objective (0 for the best itself).
    margin: float | None
    # `best`, or by the engine's comparison with the best (`comparison`): `worse` (decided
    # slower beyond the margin), `same` (decided within it), `open` (not decided).
    effect: str
    comparison: ComparisonJson | None
    ctx_total: float | None
    j_per_unit: float | None
    seqs_per_step: float | None
    drift_changed: int | None
    drift_probes: int | None
    drift_kld: float | None
    # Where the changed answers first differed from the reference's (mean token position).
    drift_first: float | None
    task_accuracy: float | None
    task_items: int | None
    capped: bool
    slo_breaks: list[SloBreak]
    jobs: list[str]


class FactorContext(TypedDict):
    """The factor's values at one setting of the other swept factors."""

    context: Point
    # The value best on the objective; None when no value differed from it.
    best: FactorValue
    state: str  # `best` | `no difference` | `across` (every pair across machine states)
    # Values decided no different from the best (within the margin).
    ties: list[FactorValue]
    rows: list[FactorRow]


class FactorSeries(TypedDict):
    series: Point
    best: FactorValue
    state: str


class FactorVerdictValue(TypedDict):
    """A factor verdict's value: `state` is `best` (one value best wherever compared), `no
    difference`, `depends` (the best differs between settings of the other factors: see the
    numbers' `by_series`), `not exercised` or `no comparison`; `kind` is `setting` or
    `application` (the study's choice, e.g. sampling: never recommended)."""

    state: str
    best: FactorValue
    kind: str


class ApplicationPoint(TypedDict):
    """The projection at one value of an application factor (e.g. each sampling swept)."""

    factor: str
    value: FactorValue
    seconds: float | None
    # Its jobs that ran on a host busy with other work (evidence.host_busy), where any did.
    host_busy: NotRequired[list[str]]


@dataclass(frozen=True)
class FactorNumbers(_Numbers):
    """Any swept factor without a verdict of its own (batch, ubatch, KV cache types, flash
    attention, threads, the model file, sampling, ...): the best value on the objective per
    setting of the others, the margins and what stands beside them."""

    factor: str
    kind: str
    numeric: bool
    values: list[FactorValue]
    contexts: list[FactorContext]
    primary: Point
    objective: ObjectiveJson
    by_series: list[FactorSeries] | None = None
    scope_differs: bool = False
    # `largest` / `smallest`: the best value is at that end of the (numeric) range tested.
    edge: str | None = None
    # Units a point, where a comparison rests on single runs without a noise estimate.
    units: int | None = None
    not_exercised: NotExercised | None = None
    # The primary setting's values against its best (benchkit.compare), and those not decided.
    comparisons: list[ComparisonJson] | None = None
    open: list[ComparisonJson] | None = None
    contaminated: Contaminated | None = None
    capped: Capped | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    # The decided comparisons that a cold start's leaving out decided (rules v10): each as
    # measured with the cold start kept, where its outcome differs.
    as_measured: list[ComparisonJson] | None = None
    # Every comparison with a point whose figure leaves out a cold start, as measured with the
    # cold start kept (rules v12): stated beside the figures compared.
    cold_kept: list[ComparisonJson] | None = None


# ------------------------------------------------------------------------------ repeats


class RepeatedConfig(TypedDict):
    """A configuration that ran more than once: its noise on the objective's metric."""

    config: Point
    n: int
    mean: float
    sd: float | None
    cv: float | None
    ci95: float | None
    jobs: list[str]


@dataclass(frozen=True)
class RepeatsNumbers(_Numbers):
    configs: list[RepeatedConfig]
    declared_noise: float | None = _always()
    # True under open-loop load: a point's load held or not, no units compared (None: closed).
    open_loop: bool | None = None
    # The run-to-run spread of one run's log figure measured on twin jobs of one machine (the
    # engine's Settings.run_sd) and its degrees of freedom; None where no point ran twice.
    twin_sd: float | None = None
    twin_dof: float | None = None


# ------------------------------------------------------------------------------ projection


class BetterPoint(TypedDict):
    """A complete point better on the objective than the recommendation, and why it is not
    the recommendation."""

    point: Point
    # 1 - the comparison's ratio (the table's means' where there is no comparison).
    faster_by: float
    # The recommendation (base) against this point (other) by the engine, and its margin.
    comparison: ComparisonJson | None
    margin: float
    why: str
    ctx_ratio: float | None


@dataclass(frozen=True)
class ProjectionNumbers(_Numbers):
    units: int
    s_per_unit: float | None = None
    seconds: float | None = None
    ci_seconds: float | None = _null_with("measured")
    n: int | None = None
    units_measured: float | None = _null_with("measured")
    # A raced point stopped early: the units its figure is stated on (racing.restate), of
    # which `units_measured` its own; None where its figure is its own units' mean.
    units_stated: int | None = None
    # With `units_stated`: the point's own seconds per unit on the units it ran, as measured.
    own_s_per_unit: float | None = None
    # One run's run-to-run noise measured on twin jobs (exp(sd of the log figure) - 1), where
    # the sweep has twins: a single run's figure then has a measured spread beside it.
    twin_noise: float | None = None
    slot_latency: float | None = _null_with("measured")
    objective: ObjectiveJson | None = None
    objective_value: float | None = _null_with("measured")
    capped: Capped | None = None
    seconds_uncapped: float | None = _null_with("capped")
    contaminated: Contaminated | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    better_point: BetterPoint | None = None
    # Each value of an application factor (study.application_factors) at the same point.
    application: list[ApplicationPoint] | None = None
    # The application factors' values the projection is at (the workload it was measured on,
    # where several were swept); None where no application factor varied.
    application_at: Point | None = None
    # The projected point's jobs that ran on a host busy with other work (evidence.host_busy).
    host_busy: list[str] | None = None
    # A sweep measured on several machines: which one the figure is of, and how far the
    # points run on two of them differed (rules v14).
    machines: MachineSpread | None = None
    measured: bool = _internal()


class MachineSpread(TypedDict):
    """The machine a projection's figure was measured on, and the largest ratio between two
    machines' figures of one point on the units both ran, over the `points` points measured
    on two machines (the later machine over the earlier, or its inverse, whichever is above 1)."""

    machine: str
    points: int
    ratio: float
    # The projected point itself measured on another machine: that machine, and its time
    # over the projected figure's machine's on the units both ran.
    other: NotRequired[str]
    own: NotRequired[float]


# ------------------------------------------------------------------------------ validity


@dataclass(frozen=True)
class ValidityNumbers(_Numbers):
    planned: int
    completed: int


# ------------------------------------------------------------------------------ build


class BuildPair(TypedDict):
    """One configuration in both sweeps: seconds per unit, prefill and decode, before/after."""

    config: Point
    base: float
    new: float
    change: float
    effect: str
    base_slot_latency: float | None
    new_slot_latency: float | None
    base_prefill: float | None
    new_prefill: float | None
    prefill_change: float | None
    prefill_effect: str | None
    base_decode: float | None
    new_decode: float | None
    decode_change: float | None
    decode_effect: str | None
    base_tokens_per_call: float | None
    new_tokens_per_call: float | None


@dataclass(frozen=True)
class BuildNumbers(_Numbers):
    pairs: list[BuildPair]
    unmatched: list[Point] | None = None
    differs: dict[str, list[FactorValue]] = field(default_factory=dict)
    blocked_by: dict[str, list[FactorValue]] | None = None
    median_change: float | None = _null_with("unmatched")
    change_range: list[float] | None = field(default=None, metadata={"with": "unmatched"})

    def to_json(self) -> dict[str, object]:
        # Written in analyse's order: a refused comparison leads with what blocked it.
        out = super().to_json()
        first = ("blocked_by", "differs", "pairs") if self.blocked_by is not None else ("pairs",)
        return {**{k: out.pop(k) for k in first if k in out}, **out}


@dataclass(frozen=True)
class CapacityNumbers(_Numbers):
    """Open-loop load: each server setting's capacity under the SLO
    (report/analysis/load_numbers.py)."""

    axis: str = "rate"  # the load factor: `rate` (calls/s) or `speed` (a trace's)
    objective: ObjectiveJson | None = None
    settings: list[SettingCapacity] | None = None
    runner_up: Point | None = None
    contaminated: Contaminated | None = None
    stalled: Stalled | None = None
    cold: Cold | None = None
    capped: Capped | None = None


VerdictNumbers = (
    CapacityNumbers
    | BackendNumbers
    | SlotsNumbers
    | DraftingNumbers
    | RepeatsNumbers
    | ProjectionNumbers
    | ValidityNumbers
    | BuildNumbers
    | FactorNumbers
)

N = TypeVar("N", bound=_Numbers)


def of(kind: type[N], numbers: VerdictNumbers) -> N:
    """A verdict's numbers as the kind its factor gives (a backend verdict's are
    BackendNumbers, ...); a mismatch is a bug in the caller."""
    if not isinstance(numbers, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(numbers).__name__}")
    return numbers

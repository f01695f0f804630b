"""The workload as the jobs replayed it: its units, calls and tokens, from what the jobs ran
(result.json's metrics), not from the fixture's totals. A job may replay a subset of its
fixture (workload.units, or a race's per-point count); a review found a post describing the
8 units a study ran by the whole 16-unit fixture's averages (17.3 calls a unit where the units
run made 17.5; 48 completion tokens a call where they made 44.9). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchkit.results.store import JobResult


@dataclass(frozen=True)
class Replayed:
    """The units one job replayed (the most of any job's, where jobs differ) and their totals:
    `of_fixture` says these are the fixture's own totals (no job recorded what it ran, or the
    jobs replayed every unit), `fixture_units` the fixture's count."""

    units: int
    calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    fixture_units: int
    of_fixture: bool

    @property
    def subset(self) -> bool:
        """Whether the units replayed are fewer than the fixture's."""
        return self.units < self.fixture_units


def _count(x: object) -> int:
    return int(x) if isinstance(x, int | float) and x == x and x > 0 else 0


def replayed(results: Sequence[JobResult]) -> Replayed | None:
    """The units the jobs replayed with their calls and tokens: from the job that replayed the
    most units and attempted every call it planned (its calls' fixture counts sum to the units'
    own), else the fixture's totals marked as such; None without a workload."""
    fixture: Replayed | None = None
    best: Replayed | None = None
    for r in results:
        w = r.result.provenance.workload
        if w is None or not w.units or not w.calls:
            continue
        if fixture is None:
            fixture = Replayed(
                w.units, w.calls, w.prompt_tokens, w.completion_tokens, w.units, of_fixture=True
            )
        m = r.result.metrics
        planned, calls = _count(m.units_planned), _count(m.calls_planned)
        attempted = _count(m.calls_completed) + _count(m.calls_failed)
        prompt = _count(m.fixture_prompt_tokens) or _count(m.prompt_tokens)
        completion = _count(m.fixture_completion_tokens) or _count(m.completion_tokens)
        if not planned or not calls or attempted != calls or not prompt or not completion:
            continue
        # Repeats replay the same units again: the units are the planned over the repeats.
        reps = _count(r.result.factors.get("repeats")) or 1
        units = planned // reps if planned % reps == 0 else planned
        scale = units / planned
        got = Replayed(
            units,
            round(calls * scale),
            round(prompt * scale),
            round(completion * scale),
            w.units,
            of_fixture=units == w.units and calls * scale == w.calls,
        )
        if best is None or got.units > best.units:
            best = got
    return best or fixture

"""Runaway outputs compared, not counted: which of a job's capped calls differ from the points
it is compared with.

A call that runs to the generation cap in every job alike is a property of the workload (under
`output_policy=replay` every call's max_tokens is its recorded length, so a fixture's own long
calls hit the cap at every setting), not of the setting a verdict judges. What counts against a
point is the capped calls its peers did not have: calls that ran to the cap here and, in a peer,
stopped well short of it (under free generation, a setting that makes outputs run away). A call
capped here that some peer also capped, or ran to within ALIKE_SHARE of the cap, is alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

# A call that ran to at least this share of the cap in a peer job is "alike" there.
ALIKE_SHARE = 0.9


@dataclass(frozen=True)
class CallCap:
    tokens: int
    capped: bool
    seconds: float


@dataclass(frozen=True)
class JobCaps:
    """One job's calls as far as the cap is concerned: per call key (unit/seq), its
    completion tokens, whether it ran to the cap, and its time; and the job's totals."""

    job: str
    cap: int
    calls: dict[str, CallCap] = field(default_factory=dict)

    @property
    def capped(self) -> set[str]:
        return {k for k, c in self.calls.items() if c.capped}

    @property
    def call_time(self) -> float:
        return sum(c.seconds for c in self.calls.values())

    def alike_in(self, key: str) -> bool:
        """The call ran to the cap here, or nearly."""
        c = self.calls.get(key)
        return c is not None and (c.capped or (self.cap > 0 and c.tokens >= ALIKE_SHARE * self.cap))


@dataclass(frozen=True)
class Differing:
    """The capped calls of a job that its peers did not have, with their shares."""

    keys: list[str]
    common: list[str]
    share_calls: float
    share_time: float


def job_caps(job: str, calls: Iterable[Mapping[str, object]]) -> JobCaps:
    """A job's completed calls from its calls.jsonl records."""
    out: dict[str, CallCap] = {}
    cap = 0
    for c in calls:
        if not c.get("ok"):
            continue
        sent, done = c.get("t_sent"), c.get("t_done")
        tokens = c.get("completion_tokens")
        call_cap = c.get("cap")
        if isinstance(call_cap, int):
            cap = max(cap, call_cap)
        n = int(tokens) if isinstance(tokens, int | float) else 0
        capped = c.get("finish_reason") == "length" and (
            not isinstance(call_cap, int) or call_cap <= 0 or n >= call_cap
        )
        seconds = (
            float(done) - float(sent)
            if isinstance(done, int | float) and isinstance(sent, int | float)
            else 0.0
        )
        out[f"{c.get('unit')}/{c.get('seq')}"] = CallCap(n, capped, seconds)
    return JobCaps(job=job, cap=cap, calls=out)


def differing(own: JobCaps, peers: Sequence[JobCaps]) -> Differing:
    """`own`'s capped calls that are not capped alike in every peer that made the same call
    (with no peer, every capped call differs: there is nothing to compare with). A call no
    peer made (a raced sweep stops points after their first units, so a point with more
    units has calls the others never sent) is compared with nothing and counted neither way."""
    others = [p for p in peers if p.job != own.job]
    keys, common = [], []
    for k in sorted(own.capped):
        made = [p for p in others if k in p.calls]
        if others and not made:
            continue
        if made and all(p.alike_in(k) for p in made):
            common.append(k)
        else:
            keys.append(k)
    n = len(own.calls)
    total = own.call_time
    return Differing(
        keys=keys,
        common=common,
        share_calls=len(keys) / n if n else 0.0,
        share_time=sum(own.calls[k].seconds for k in keys) / total if total > 0 else 0.0,
    )


def capped_everywhere(jobs: Sequence[JobCaps]) -> list[str]:
    """The calls capped alike in every job (a property of the workload, stated once)."""
    if not jobs:
        return []
    first, rest = jobs[0], jobs[1:]
    return sorted(k for k in first.capped if all(j.alike_in(k) for j in rest))

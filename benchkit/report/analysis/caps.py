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

import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from benchkit.report.analysis.call_columns import Columns

# A call that ran to at least this share of the cap in a peer job is "alike" there.
ALIKE_SHARE = 0.9


@dataclass(frozen=True)
class JobCaps:
    """One job's calls as far as the cap is concerned: per call key (unit/seq), its
    completion tokens; the calls that ran to the cap, with their time; and the time of all
    its calls. Only what the comparisons read is kept: the report holds this for every job,
    and an object per call was a tenth of a 1,000-job report's memory."""

    job: str
    cap: int
    # The calls it made (by key), and those that ran to the cap or nearly (`alike_in`).
    made: frozenset[str] = frozenset()
    alike: frozenset[str] = frozenset()
    capped_s: dict[str, float] = field(default_factory=dict)
    call_time: float = 0.0

    @property
    def capped(self) -> set[str]:
        return set(self.capped_s)

    def alike_in(self, key: str) -> bool:
        """The call ran to the cap here, or nearly."""
        return key in self.alike


@dataclass(frozen=True)
class Differing:
    """The capped calls of a job that its peers did not have, with their shares."""

    keys: list[str]
    common: list[str]
    share_calls: float
    share_time: float


def job_caps(
    job: str,
    calls: Iterable[Mapping[str, object]],
    shared: dict[frozenset[str], frozenset[str]] | None = None,
    columns: Columns | None = None,
) -> JobCaps:
    """A job's completed calls from its calls.jsonl records. `shared`: the sets of calls made
    by the jobs read before (every job of a sweep usually replays the same calls: they keep
    one set between them). `columns`: the same calls as `call_columns.columns_of` gives them,
    where it does (read from them, the same figures)."""
    if columns is not None:
        return _job_caps(job, *_from_columns(columns), shared)
    # Per call key, its tokens, whether capped and its time: a call made twice counts once,
    # as it last ran.
    out: dict[str, tuple[int, bool, float]] = {}
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
        # Interned: every job of a sweep replays the same calls, so the keys repeat job after
        # job, and one string each is enough.
        out[sys.intern(f"{c.get('unit')}/{c.get('seq')}")] = (n, capped, seconds)
    return _job_caps(job, cap, out, shared)


def _from_columns(cols: Columns) -> tuple[int, dict[str, tuple[int, bool, float]]]:
    """The loop of `job_caps` over calls as `Columns` (every call ok, every field there)."""
    keys = map(sys.intern, [f"{u}/{q}" for u, q in zip(cols.unit, cols.seq, strict=True)])
    capped = [
        f == "length" and (k <= 0 or n >= k)
        for f, k, n in zip(cols.finish, cols.cap, cols.completion, strict=True)
    ]
    seconds = (cols.done - cols.sent).tolist()
    # dict(zip(...)) as the loop's assignments: a later call of a key replaces the earlier
    # one's value where the earlier one stands.
    out = dict(zip(keys, zip(cols.completion, capped, seconds, strict=True), strict=True))
    return max(0, *cols.cap), out


def _job_caps(
    job: str,
    cap: int,
    out: Mapping[str, tuple[int, bool, float]],
    shared: dict[frozenset[str], frozenset[str]] | None,
) -> JobCaps:
    made = frozenset(out)
    return JobCaps(
        job=job,
        cap=cap,
        made=made if shared is None else shared.setdefault(made, made),
        alike=frozenset(
            k for k, (n, capped, _) in out.items() if capped or (cap > 0 and n >= ALIKE_SHARE * cap)
        ),
        capped_s={k: s for k, (_, capped, s) in out.items() if capped},
        call_time=sum(s for _, _, s in out.values()),
    )


class Peers:
    """Jobs as `differing` compares a job with them: for each call asked about, how many of
    them (by job name) made it, and how many of those did not run it to the cap or nearly.
    Counted once a call, so that comparing every job of a sweep with all the others is not
    every job against every other for every capped call (100 million steps at 10,000 jobs)."""

    def __init__(self, jobs: Sequence[JobCaps]) -> None:
        self.jobs = list(jobs)
        self.names = Counter(p.job for p in self.jobs)
        self._calls: dict[str, tuple[int, Counter[str], int, Counter[str]]] = {}

    def call(self, key: str) -> tuple[int, Counter[str], int, Counter[str]]:
        """The jobs that made call `key` (in all, and by name), and those unlike it."""
        found = self._calls.get(key)
        if found is None:
            made = Counter(p.job for p in self.jobs if key in p.made)
            unlike = Counter(p.job for p in self.jobs if key in p.made and not p.alike_in(key))
            found = self._calls[key] = (made.total(), made, unlike.total(), unlike)
        return found


def differing(own: JobCaps, peers: Sequence[JobCaps] | Peers) -> Differing:
    """`own`'s capped calls that are not capped alike in every peer that made the same call
    (with no peer, every capped call differs: there is nothing to compare with). A call no
    peer made (a raced sweep stops points after their first units, so a point with more
    units has calls the others never sent) is compared with nothing and counted neither way.
    A peer of `own`'s job name is not its peer. `Peers`, for many jobs compared with the same."""
    index = peers if isinstance(peers, Peers) else Peers(peers)
    others = len(index.jobs) - index.names[own.job]
    keys, common = [], []
    for k in sorted(own.capped):
        n_made, made, n_unlike, unlike = index.call(k)
        made_n = n_made - made[own.job]
        if others and not made_n:
            continue
        if made_n and not n_unlike - unlike[own.job]:
            common.append(k)
        else:
            keys.append(k)
    n = len(own.made)
    total = own.call_time
    return Differing(
        keys=keys,
        common=common,
        share_calls=len(keys) / n if n else 0.0,
        share_time=sum(own.capped_s[k] for k in keys) / total if total > 0 else 0.0,
    )


def capped_everywhere(jobs: Sequence[JobCaps]) -> list[str]:
    """The calls capped alike in every job (a property of the workload, stated once)."""
    if not jobs:
        return []
    first, rest = jobs[0], jobs[1:]
    return sorted(k for k in first.capped if all(j.alike_in(k) for j in rest))

"""Whether an untimed warm-up preceded each job's timed pass, from its result's provenance.

benchkit warms every server before its timed pass since commit dc00aee (2026-12-06,
benchkit.client.warmup) and records it as `provenance.warmup` ({enabled, calls, seconds, ...});
before it, the replay's first call was the server's first work after its start (llama-server's
own start-up warm-up decodes one token and meets none of a workload's shapes). A result without
the record is one of two things: written by a benchkit older than the warm-up, or written later
by a path that lost the record (a job finished from its calls alone). The two are told apart by
`provenance.digest`, which every complete or incomplete result has carried since commit d91c71c,
two commits before the warm-up: a result without either was measured without a warm-up; one
with a digest and no warm-up record is "not recorded" (and the cold-start rule, which rests on
the server's first work being timed, is not applied to it). Reference data transcribed from
another study (`derived`) is "unknown": benchkit did not measure it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from benchkit.results.store import JobResult

WarmState = Literal["on", "off", "unknown"]


def job_warmup(r: JobResult) -> WarmState:
    """`on` (a warm-up ran before the timed pass), `off` (none ran: replay.warmup=false, or a
    benchkit before the warm-up) or `unknown` (the result does not say)."""
    if r.data.get("derived"):
        # Reference data transcribed from someone else's study: how they measured is theirs.
        return "unknown"
    prov = r.provenance
    block = prov.get("warmup")
    if isinstance(block, Mapping):
        enabled = block.get("enabled")
        return "on" if enabled is True else "off" if enabled is False else "unknown"
    return "unknown" if prov.get("digest") else "off"


def warmed(r: JobResult) -> bool | None:
    """The stall rule's `warmed` for a job (benchkit.report.analysis.stalls): None where its first
    timed call is not known to be its server's first work: the warm-up is not recorded, or the
    server was one someone else started (backend `external`), which may have served before."""
    state = job_warmup(r)
    if state == "unknown" or (state == "off" and r.factors.get("backend") == "external"):
        return None
    return state == "on"


def study_warmup(states: Mapping[str, WarmState]) -> str | None:
    """The ledger's context `warmup`: `on` or `off` when every job that recorded it agrees,
    `mixed` when they differ, None when none recorded it."""
    known = {s for s in states.values() if s != "unknown"}
    if not known:
        return None
    return next(iter(known)) if len(known) == 1 else "mixed"


def states(results: Sequence[JobResult]) -> dict[str, WarmState]:
    """Each complete job's warm-up state, by job."""
    return {r.job_dir.name: job_warmup(r) for r in results if r.status == "complete"}

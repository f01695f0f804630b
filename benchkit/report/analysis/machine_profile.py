"""Jobs taken for one machine by their hardware profile alone: where no card UUID and no boot
ID names the machine, the comparison engine tells machines apart by the declared profile on
the host's name ('h200@vm'), which lent machines share. Jobs of one such name that ran in
separate sweeps may have run on two machines; the report says so beside the comparisons that
join them (the MTP study's job 7, a one-job sweep copied in beside jobs 0-6, was compared with
them as one machine without a word)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from benchkit.report.analysis.anchor_job import AnchorJob
from benchkit.report.lang import fmt, span, tr, trn
from benchkit.report.lang.i18n import jobs_text, list_text

# A job's model alias, new_alias(f"{sweep folder}-{job number}"): 'benchkit-mtp8-0-a5f4ffc2'.
_ALIAS = re.compile(r"^benchkit-(?P<sweep>.+)-\d+-[0-9a-f]+$")


def _card_named(data: Mapping[str, Any]) -> bool:
    metrics = data.get("metrics")
    tel = metrics.get("telemetry") if isinstance(metrics, Mapping) else None
    devices = tel.get("devices") if isinstance(tel, Mapping) else None
    return isinstance(devices, list) and any(
        isinstance(d, Mapping) and d.get("uuid") for d in devices
    )


def profile(data: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    """(the machine as the engine names it without a card, the sweep the job ran in, its
    start and end as recorded), None where a card UUID or a boot ID names the machine, or
    where neither is known."""
    prov = data.get("provenance")
    if not isinstance(prov, Mapping) or _card_named(data):
        return None
    hw = prov.get("hardware")
    server = prov.get("server")
    if not isinstance(hw, Mapping) or hw.get("boot_id") or not hw.get("host"):
        return None
    alias = str(server.get("alias") or "") if isinstance(server, Mapping) else ""
    m = _ALIAS.match(alias)
    if m is None:
        return None
    started, finished = str(prov.get("started_utc") or ""), str(prov.get("finished_utc") or "")
    # A job whose record spans less than its own wall clock was written from an earlier run's
    # calls (a resumed sweep: the qwen3 study's jobs 0-4, 0-1 s for 80 s runs): its times are
    # not when it ran, and none is given.
    metrics = data.get("metrics")
    wall = metrics.get("wall_s") if isinstance(metrics, Mapping) else None
    t0, t1 = _time(started), _time(finished)
    if (
        t0 is None
        or t1 is None
        or not isinstance(wall, int | float)
        or (t1 - t0).total_seconds() < 0.5 * wall
    ):
        started = finished = ""
    return f"{hw.get('name') or ''}@{hw['host']}", m.group("sweep"), started, finished


def detect(
    by_job: Mapping[str, Mapping[str, Any]], anchors: Sequence[AnchorJob] = ()
) -> list[dict[str, Any]]:
    """One caveat per profile name whose jobs (the sweep's and its anchor folders') ran in
    more than one sweep, with each sweep's jobs and the time between one sweep's end and the
    next one's start (none where every job's machine is named by a card or a boot ID, or one
    sweep ran them all)."""
    groups: dict[str, dict[str, list[str]]] = {}
    spans: dict[tuple[str, str], list[str]] = {}
    found = [(job, profile(data)) for job, data in by_job.items()]
    found += [(a.job, a.profile) for a in anchors]
    for job, named in sorted(found, key=lambda kv: (len(kv[0]), kv[0])):
        if named is not None:
            groups.setdefault(named[0], {}).setdefault(named[1], []).append(job)
            spans.setdefault((named[0], named[1]), []).extend(x for x in named[2:] if x)
    return [
        {
            "kind": "machine_by_profile",
            "machine": machine,
            "sweeps": sweeps,
            "gaps": _gaps([(s, spans.get((machine, s), [])) for s in sweeps]),
        }
        for machine, sweeps in groups.items()
        if len(sweeps) > 1
    ]


def _gaps(sweeps: Sequence[tuple[str, list[str]]]) -> list[tuple[str, str, float]]:
    """(earlier sweep, later sweep, seconds from the one's last end to the other's first
    start), in order of start: how close two sweeps ran, which the caveat gives beside it
    (review 13: the CPU study's twin started 9 s after the first run ended)."""
    timed = []
    for name, stamps in sweeps:
        times = [t for x in stamps if (t := _time(x)) is not None]
        if times:
            timed.append((min(times), max(times), name))
    timed.sort()
    return [(a[2], b[2], (b[0] - a[1]).total_seconds()) for a, b in itertools.pairwise(timed)]


def _time(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def say(c: Mapping[str, Any], lang: str) -> str:
    sweeps: Mapping[str, list[str]] = c["sweeps"]
    parts = [
        tr(lang, "{jobs} (sweep {sweep})", jobs=_jobs(jobs, lang), sweep=sweep)
        for sweep, jobs in sweeps.items()
    ]
    gaps = " ".join(
        tr(
            lang,
            "Sweep {later} started {gap} after sweep {earlier} ended.",
            later=later,
            gap=fmt.seconds(gap, lang) if abs(gap) < 120 else fmt.hours(gap, lang),
            earlier=earlier,
        )
        for earlier, later, gap in c.get("gaps") or []
        if gap >= 0
    )
    return f"{_say(c, parts, lang)} {gaps}".strip()


def _say(c: Mapping[str, Any], parts: Sequence[str], lang: str) -> str:
    sweeps: Mapping[str, list[str]] = c["sweeps"]
    if not any("/" in j for jobs in sweeps.values() for j in jobs):
        # The sweep's own jobs: the engine takes each sweep for a machine state of its own
        # (engine_of.machine_of), so no pair between them is decided on one machine.
        return tr(
            lang,
            "{groups} ran in separate sweeps and recorded no card UUID or boot ID, so one "
            "machine is not established ({machine}, their hardware profile and host name, is "
            "all they share): the report compares them as two machine states, through a point "
            "both ran or not at all.",
            groups=list_text(parts, lang),
            machine=c["machine"],
        )
    return tr(
        lang,
        "{groups} ran in separate sweeps and recorded no card UUID or boot ID: they are "
        "compared as one machine by their hardware profile and host name ({machine}), which "
        "does not establish that one machine ran them, so a difference between them may be "
        "the machines'.",
        groups=list_text(parts, lang),
        machine=c["machine"],
    )


def _jobs(jobs: Sequence[str], lang: str) -> str:
    """'jobs 0-17', 'the 18 jobs of ../results-twin', 'jobs 2, 5 and 7': a sweep's jobs as
    few words name them (a twin sweep's 18 jobs were listed one by one)."""
    folders = {j.rpartition("/")[0] for j in jobs}
    if len(jobs) > 1 and len(folders) == 1 and "" not in folders:
        return trn(
            lang,
            "the {n} job of {folder}",
            "the {n} jobs of {folder}",
            len(jobs),
            folder=next(iter(folders)),
        )
    names = [j.rpartition("/")[2] for j in jobs]
    if len(folders) == 1 and len(jobs) > 2 and all(x.isdigit() for x in names):
        nums = sorted(int(x) for x in names)
        if nums == list(range(nums[0], nums[-1] + 1)):
            return tr(lang, "jobs {range}", range=span(lang, str(nums[0]), str(nums[-1])))
    return jobs_text(jobs, lang)

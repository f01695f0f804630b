"""Jobs taken for one machine by their hardware profile alone: where no card UUID and no boot
ID names the machine, the comparison engine tells machines apart by the declared profile on
the host's name ('h200@vm'), which lent machines share. Jobs of one such name that ran in
separate sweeps may have run on two machines; the report says so beside the comparisons that
join them (the MTP study's job 7, a one-job sweep copied in beside jobs 0-6, was compared with
them as one machine without a word)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.anchor_job import AnchorJob
from benchkit.report.lang import span, tr, trn
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


def profile(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the machine as the engine names it without a card, the sweep the job ran in), None
    where a card UUID or a boot ID names the machine, or where neither is known."""
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
    return f"{hw.get('name') or ''}@{hw['host']}", m.group("sweep")


def detect(
    by_job: Mapping[str, Mapping[str, Any]], anchors: Sequence[AnchorJob] = ()
) -> list[dict[str, Any]]:
    """One caveat per profile name whose jobs (the sweep's and its anchor folders') ran in
    more than one sweep, with each sweep's jobs (none where every job's machine is named by a
    card or a boot ID, or one sweep ran them all)."""
    groups: dict[str, dict[str, list[str]]] = {}
    found = [(job, profile(data)) for job, data in by_job.items()]
    found += [(a.job, a.profile) for a in anchors]
    for job, named in sorted(found, key=lambda kv: (len(kv[0]), kv[0])):
        if named is not None:
            groups.setdefault(named[0], {}).setdefault(named[1], []).append(job)
    return [
        {"kind": "machine_by_profile", "machine": machine, "sweeps": sweeps}
        for machine, sweeps in groups.items()
        if len(sweeps) > 1
    ]


def say(c: Mapping[str, Any], lang: str) -> str:
    sweeps: Mapping[str, list[str]] = c["sweeps"]
    parts = [
        tr(lang, "{jobs} (sweep {sweep})", jobs=_jobs(jobs, lang), sweep=sweep)
        for sweep, jobs in sweeps.items()
    ]
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

"""The racing write-up: what a racing sweep (hydra/sweeper=racing) stopped, after how many
units, against which point and with what confidence, and the machine time it saved.

A stopped point is neither missing nor provisional: its job completed the units the race
asked of it, and the race decided it with the study's confidence. Its objective is stated on
the units its machine's points ran in the race (benchkit.racing.estimate.imputed_by_machine),
not as the mean of its own first units: units differ in difficulty, and the verdicts compare
points that stopped after different rounds (`restate`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from benchkit.racing.estimate import Restated, by_home, imputed_by_machine
from benchkit.racing.observe import RACEABLE, RACING_FILE, unit_values
from benchkit.racing.observe import unit_machines as observe_machines
from benchkit.report.analysis.evidence import machine_name
from benchkit.report.lang import clauses, fmt, tr, trn
from benchkit.report.lang.i18n import jobs_text, point_text
from benchkit.results import bounded
from benchkit.results.store import JobResult


def load_race(source: Path) -> dict[str, Any] | None:
    """The sweep's racing.json, or None for a sweep that did not race."""
    path = source / RACING_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(bounded.read_text(path, source))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("points"), dict) else None


def decisions(source: Path, left_out: Collection[str] = ()) -> tuple[dict[str, str], str | None]:
    """A raced sweep's decisions for the verdicts: each stopped job -> the job it was
    stopped against, and the race's final best ({} and None for a sweep that did not race).
    A decision that involves a job `left_out` (its result does not match its digest) is
    dropped: it may have been made on the edited figures."""
    race = load_race(source)
    if race is None:
        return {}, None
    stopped = {
        str(job): str(p["best"])
        for job, p in race["points"].items()
        if isinstance(p, dict) and p.get("status") == "stopped" and p.get("best") is not None
    }
    stopped = {j: b for j, b in stopped.items() if j not in left_out and b not in left_out}
    best = race.get("best")
    return stopped, None if best is None or str(best) in left_out else str(best)


def unit_machines(source: Path, results: Sequence[JobResult] = ()) -> dict[str, dict[str, str]]:
    """job -> unit -> the machine that measured it, as a race recorded it (racing.json's
    `unit_machines`: a job it extended on another card measured its units on two); {} for a
    sweep that did not race. A race recorded before it kept them has them read from each
    extended job's result as the race would have recorded them (observe.unit_machines: the
    last run's units on the last card, each run's on its own where every run had a card of
    its own), so that a job extended across cards pairs with the points of each card."""
    race = load_race(source)
    if race is None:
        return {}
    kept = race.get("unit_machines")
    if isinstance(kept, dict):
        return {
            str(job): {str(u): str(m) for u, m in units.items()}
            for job, units in kept.items()
            if isinstance(units, dict)
        }
    out: dict[str, dict[str, str]] = {}
    for r in results:
        runs = r.data.get("provenance", {}).get("extended")
        if r.status != "complete" or not isinstance(runs, list) or len(runs) < 2:
            continue
        units = [str(u) for run in runs if isinstance(run, dict) for u in run.get("units", [])]
        out[r.job_dir.name] = observe_machines(r.data, units, {})
    return out


def undecided(source: Path) -> list[str]:
    """The points a finished race left undecided (its unit limit or budget came first): [] for
    a sweep that did not race, or a race stopped from outside (its open points were never
    given the units to decide)."""
    race = load_race(source)
    if race is None or race.get("finished") is False:
        return []
    return [
        str(job)
        for job, p in race["points"].items()
        if isinstance(p, dict) and p.get("status") == "undecided"
    ]


def restate(df: pd.DataFrame, results: Sequence[JobResult], metric: str) -> dict[str, Restated]:
    """In a raced sweep, each complete job's objective on the units its machine's points ran
    in the race, set in `df`; returns what was set, by job ({} when the sweep did not race)."""
    if not results or metric not in RACEABLE:
        return {}
    source = results[0].job_dir.parent
    if load_race(source) is None:
        return {}
    measured = {
        r.job_dir.name: vals
        for r in results
        if r.status == "complete" and (vals := unit_values(r.job_dir, metric))
    }
    if len(measured) < 2:
        return {}
    # Each unit's machine: the one the race recorded for it, else its job's.
    recorded = unit_machines(source)
    where = {
        r.job_dir.name: {
            u: recorded.get(r.job_dir.name, {}).get(u) or machine_name(r.result)
            for u in measured[r.job_dir.name]
        }
        for r in results
        if r.job_dir.name in measured
    }
    values = imputed_by_machine(measured, where)
    own = {str(j): float(x) for j, x in zip(df["job"], df[metric], strict=True) if pd.notna(x)}
    out: dict[str, Restated] = {}
    for group in by_home(measured, where).values():
        units = len({u for vals in group.values() for u in vals})
        for job, vals in group.items():
            out[job] = Restated(values[job], len(vals), units, own.get(job))
    for job, v in values.items():
        df.loc[df["job"] == job, metric] = v
    return out


def _point(race: Mapping[str, Any], job: str, lang: str) -> str:
    p = race["points"].get(job) or {}
    factors = p.get("factors") or {}
    return point_text({k: _value(v) for k, v in factors.items()}, lang) or job


def _value(v: Any) -> Any:
    text = str(v)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return int(text) if text.isdigit() else text


def point_line(race: Mapping[str, Any], job: str, lang: str) -> str | None:
    """One point's outcome, e.g. 'stopped after 3 units: 1.31x slower than Vulkan, 4 slots
    (more than 5% slower at 95% confidence)': the confidence is the test's, of the margin,
    not an interval of the ratio; None for a point without an outcome."""
    p = race["points"].get(job) or {}
    units = trn(lang, "{n} unit", "{n} units", int(p.get("units") or 0))
    conf = fmt.pct(race["settings"]["confidence"])
    best = _point(race, str(p.get("best") or race.get("best") or ""), lang)
    status = p.get("status")
    if status == "stopped" and p.get("ratio"):
        at = int(p.get("units_compared") or p.get("units") or 0)
        line = tr(
            lang,
            "stopped after {units}: took {ratio} the time of {best} (more than {margin} longer "
            "at {confidence} confidence)",
            units=trn(lang, "{n} unit", "{n} units", at),
            ratio=fmt.ratio(p["ratio"], lang),
            best=best,
            margin=fmt.pct(race["settings"]["margin"]),
            confidence=conf,
        )
        if int(p.get("units") or 0) > at:
            # Out of contention, but a factor's verdict compares it with a close neighbour.
            more = tr(lang, "measured on to {units} for a factor's verdict", units=units)
            line = clauses(lang, [line, more])
        return line
    if status == "settled":
        return tr(
            lang,
            "settled after {units}: within {margin} of {best} ({confidence} confidence)",
            units=units,
            margin=fmt.pct(race["settings"]["margin"]),
            best=best,
            confidence=conf,
        )
    if status == "best":
        return tr(lang, "best point, measured on {units}", units=units)
    if status == "undecided" and _stopped_early(race, list(race["points"].values())):
        status = "running"  # an older racing.json: its race was stopped, not ended
    if status == "undecided":
        return tr(
            lang,
            "undecided after {units}: the race reached its unit limit or its budget first",
            units=units,
        )
    if status in (None, "running") and int(p.get("units") or 0) > 0:
        return tr(lang, "measured on {units}; the race stopped before deciding it", units=units)
    if status is None:
        return tr(lang, "not measured yet: the race stopped before its turn")
    return None


def _stopped_early(race: Mapping[str, Any], points: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the race was stopped before its own rule ended it. racing.json says so
    (`finished`); one written before it did is read from its points: a point never decided, or
    one called undecided below the unit limit of a race with no budget (the only ends that
    leave a point undecided), was still running when the race was stopped."""
    finished = race.get("finished")
    if isinstance(finished, bool):
        return not finished
    if any(p.get("status") is None for p in points):
        return True
    settings = race.get("settings") or {}
    cap = min(int(race.get("total_units") or 0), int(settings.get("max_units") or 10**9))
    return settings.get("budget_s") is None and any(
        p.get("status") == "undecided" and int(p.get("units") or 0) < cap for p in points
    )


def _unfinished(race: Mapping[str, Any], lang: str) -> str | None:
    """The race's cost line when it was stopped (Ctrl-C, a lease's end) before it had decided
    every point: what it has spent so far, and no saving, since the points it has not yet
    measured are not in its estimate of the full grid."""
    points = [p for p in race["points"].values() if isinstance(p, dict)]
    if not _stopped_early(race, points):
        return None
    measured = sum(1 for p in points if int(p.get("units") or 0) > 0)
    return tr(
        lang,
        "The race did not finish: it was stopped in round {round} with {measured} of {points} "
        "points measured and not every point decided, after {spent} of machine time, server "
        "starts included. What it saves against the full grid is stated once it ends: run the "
        "same command again to go on.",
        round=int(race.get("rounds") or 1),
        measured=measured,
        points=len(points),
        spent=fmt.hours(float(race.get("machine_s") or race.get("spent_s") or 0.0), lang),
    )


class RaceCheck(TypedDict):
    """A point the race decided, compared again as the verdicts compare it: the engine's
    outcome at the margin and the comparison in words (benchkit.report.writeup.race_check)."""

    outcome: str
    text: str


def _disagree(race: Mapping[str, Any], checks: Mapping[str, RaceCheck]) -> list[str]:
    """The jobs the race stopped as slower that the engine does not decide slower, and those
    it settled within the margin that the engine does not decide within."""
    out = []
    for job, c in checks.items():
        status = (race["points"].get(job) or {}).get("status")
        want = "worse" if status == "stopped" else "within"
        if c["outcome"] != want:
            out.append(job)
    return sorted(out, key=lambda j: int(j) if j.isdigit() else 0)


def _check_line(
    race: Mapping[str, Any], checks: Mapping[str, RaceCheck], left_out: Collection[str], lang: str
) -> str:
    """What the last column is, and the jobs where it does not decide what the race did."""
    differ = _disagree(race, {j: c for j, c in checks.items() if j not in left_out})
    line = tr(
        lang,
        "The last column compares each decided point again with the point it was "
        "decided against, as this report's verdicts do (on the units both ran, on one "
        "machine or bridged through a point run on both; never across machines).",
    )
    if not differ:
        return line
    return (
        line
        + " "
        + tr(
            lang,
            "It does not decide {jobs} as the race did: the race's decision there "
            "rested on a comparison the verdicts do not make (units measured on "
            "different cards, or the race's rule of its day), and the verdicts follow "
            "the last column.",
            jobs=jobs_text(differ, lang),
        )
    )


def racing_view(
    source: Path,
    lang: str,
    left_out: Collection[str] = (),
    checks: Mapping[str, RaceCheck] | None = None,
) -> dict[str, object] | None:
    """The racing section's lines and table, or None for a sweep that did not race. A point
    whose outcome involves a job `left_out` (its result does not match its digest) says so
    instead: the race may have decided on the edited figures. `checks`: each decided point
    compared again as the verdicts compare it (writeup.race_check)."""
    race = load_race(source)
    if race is None:
        return None
    checks = checks or {}
    spent, full = float(race.get("spent_s") or 0.0), float(race.get("full_grid_s") or 0.0)
    machine = float(race.get("machine_s") or 0.0)
    full_machine = float(race.get("full_grid_machine_s") or 0.0)
    unfinished = _unfinished(race, lang)
    if unfinished is not None:
        cost = unfinished
    elif machine and full_machine:
        # A race launches a point once a round, the full grid once: starts are counted.
        cost = tr(
            lang,
            "The race took {spent} of machine time, server starts included, against an "
            "estimated {full} for the full grid (one start a point): {share} of it, {saved} "
            "saved. Counting the units' replay alone, it was {replay} of the full grid's "
            "{replay_full}.",
            spent=fmt.hours(machine, lang),
            full=fmt.hours(full_machine, lang),
            share=fmt.pct(machine / full_machine),
            saved=fmt.hours(max(full_machine - machine, 0.0), lang),
            replay=fmt.pct(spent / full if full else None),
            replay_full=fmt.hours(full, lang),
        )
    else:
        cost = tr(
            lang,
            "The race measured {spent} of machine time against an estimated {full} for the "
            "full grid: {share} of it, {saved} saved.",
            spent=fmt.hours(spent, lang),
            full=fmt.hours(full, lang),
            share=fmt.pct(spent / full if full else None),
            saved=fmt.hours(max(full - spent, 0.0), lang),
        )
    summary = [
        cost,
        clauses(
            lang,
            [
                tr(
                    lang,
                    "a point was stopped when it was slower than the best by more than "
                    "{margin} with {confidence} confidence (paired per-unit comparison, Holm's "
                    "correction over each round)",
                    margin=fmt.pct(race["settings"]["margin"]),
                    confidence=fmt.pct(race["settings"]["confidence"]),
                ),
                tr(
                    lang,
                    "each point's objective in the tables and the projection is stated on the "
                    "units its machine's points ran, from its ratio to those points on the units "
                    "it ran (its own first units differ in difficulty); the verdicts compare the "
                    "jobs' own units, paired; result.json and the energy table keep each job's "
                    "own wall clock over its own units",
                ),
            ],
        )
        + ".",  # the last clause's full stop, in both languages
    ]
    # The clauses open a paragraph of their own.
    summary[1] = summary[1][:1].upper() + summary[1][1:]
    if checks:
        summary.append(_check_line(race, checks, left_out, lang))
    rows = []
    for job in sorted(race["points"], key=lambda j: int(j) if j.isdigit() else 0):
        line = point_line(race, job, lang)
        best = str((race["points"].get(job) or {}).get("best") or race.get("best") or "")
        if line is not None and (job in left_out or best in left_out):
            line = tr(
                lang,
                "not stated: the outcome rests on a result left out of this report (its "
                "result.json does not match its digest)",
            )
        if line is not None:
            check = None if job in left_out or best in left_out else checks.get(job)
            rows.append(
                {
                    "job": job,
                    "point": _point(race, job, lang),
                    "outcome": line,
                    "engine": check["text"] if check is not None else fmt.DASH,
                }
            )
    return {"summary": summary, "rows": rows, "checked": bool(checks)}

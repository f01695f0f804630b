"""The corrections ledger: what each publication of a study said, and what changed since.

A ledger is a JSON-lines file; each line is one publication of one study (`study.name`):
its verdicts with their status and missing points, the claims' outcomes, and the context
(model, hardware, workload, sampling, builds). Publishing again compares the new verdicts
with every earlier entry in turn and lists each change as a correction: the earlier value,
why it changed (derived from the earlier entry: a point that had not finished, a changed
workload or build), and the new value.

Where the ledger lives: `study.ledger` when set (a relative path is taken from the current
directory); otherwise, when publishing to DIR, `DIR/../<study.name>.ledger.jsonl`, beside
the published folder so that publishing the folder does not publish the ledger.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from benchkit.errors import UserError
from benchkit.knobs import STUDY_NAME
from benchkit.report.analyse import COMPLETE, ClaimCheck, Verdict, norm
from benchkit.report.numbers import FactorValue, Light, MissingPoint, Point
from benchkit.results import atomic_write_text

LEDGER_VERSION = 1
# The rules behind the verdicts. An entry without `rules` was published under version 1
# (knee on aggregate decode tok/s, no noise, contamination or runaway rules); version 2
# judges every verdict on the study's objective with those rules (evidence.py). A verdict
# that changed between entries of different rules says so in its correction.
RULES_VERSION = 2
RULES = {
    1: "knee on aggregate decode throughput; no noise, contamination or runaway-output rules",
    2: (
        "every verdict on the study's objective (seconds per unit, throughput basis, by "
        "default); single-run margins held against noise; jobs on another setup and runaway "
        "outputs named"
    ),
}
# Verdicts worth correcting; `validity` and `repeats` are reported in their own sections.
TRACKED = ("backend", "slots", "mtp", "projection", "build")


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


class Why(TypedDict):
    """Why a verdict changed: earlier points that had not finished, context that changed
    ({key: [earlier, now]}), and the rules of each entry when they differ."""

    unfinished: list[MissingPoint]
    changed: dict[str, list[object]]
    rules: NotRequired[list[int]]


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


class Confirmed(TypedDict):
    factor: str
    value: Any
    numbers: dict[str, object]


class Corrections(TypedDict):
    changes: list[Change]
    confirmed: list[Confirmed]
    earlier: int
    last_date: str | None


def ledger_path(configured: str | None, publish_dir: Path | None, study_name: str) -> Path | None:
    """The ledger file for this study, or None when neither study.ledger nor --publish says.
    `configured` comes from the command line or the study config, never from results; the
    study's name (which may come from results) must be a plain name, so that the default
    ledger stays beside the published folder."""
    if configured:
        return Path(configured).expanduser()
    if publish_dir is not None:
        return publish_dir.resolve().parent / f"{check_study_name(study_name)}.ledger.jsonl"
    return None


def check_study_name(name: str) -> str:
    """`name` when it is a plain name (letters, digits, `.`, `_`, `-`; not starting with a
    dot); otherwise one sentence naming it and the fix."""
    if not STUDY_NAME.fullmatch(name):
        raise UserError(
            f"study.name {name!r} is not a plain name (letters, digits, '.', '_' or '-', not "
            "starting with '.'): the ledger file is named after it; pass study.name=NAME."
        )
    return name


def load(path: Path | None, study: str) -> list[Entry]:
    """This study's entries, oldest first; an absent file is an empty ledger."""
    if path is None or not path.exists():
        return []
    entries: list[Entry] = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise UserError(
                f"{path}:{i} is not a JSON line ({exc}): fix or remove that line of the ledger."
            ) from exc
        problem = _entry_problem(entry)
        if problem:
            raise UserError(
                f"{path}:{i} is not a ledger entry ({problem}): fix or remove that line of the "
                "ledger."
            )
        if entry.get("study") == study:
            # An entry this or an older benchkit wrote; readers .get() the keys old ones lack.
            entries.append(cast(Entry, entry))
    return entries


def _entry_problem(entry: object) -> str | None:
    """What makes a ledger line unreadable as an entry, or None: the keys the corrections
    read by name must be there with their types (a hand-edited or foreign line)."""
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    verdicts = entry.get("verdicts")
    if not isinstance(verdicts, list):
        return "no 'verdicts' list"
    for j, v in enumerate(verdicts):
        if not isinstance(v, dict):
            return f"verdict {j} is not an object"
        for key, kind in (("factor", str), ("status", str), ("verdict", object)):
            if key not in v or not isinstance(v[key], kind):
                return f"verdict {j} has no {key!r}"
        missing = v.get("missing", [])
        if not isinstance(missing, list) or not all(
            isinstance(m, dict) and isinstance(m.get("point"), dict) for m in missing
        ):
            return f"verdict {j}: 'missing' is not a list of points"
    claims = entry.get("claims") or []
    if not isinstance(claims, list) or not all(
        isinstance(c, dict) and isinstance(c.get("premise"), str) and "status" in c for c in claims
    ):
        return "'claims' is not a list of claims with a premise and a status"
    return None


HISTORY_DIR = "history"


def history(source: Path, path: Path | None, study: str) -> list[Entry]:
    """Every earlier publication of this study, oldest first: the ledgers a results folder
    carries in `history/*.ledger.jsonl` (read, never written: a study's past travels with its
    results), then the study's own ledger. Each entry keeps its own publication date; an
    entry found in both is counted once."""
    entries: list[Entry] = []
    seen: set[tuple[str, str]] = set()
    carried = sorted((source / HISTORY_DIR).glob("*.ledger.jsonl"))
    for p in [*carried, *([path] if path is not None else [])]:
        for e in load(p, study):
            key = (str(e.get("published_utc")), json.dumps(e.get("verdicts"), sort_keys=True))
            if key not in seen:
                seen.add(key)
                entries.append(e)
    entries.sort(key=lambda e: str(e.get("published_utc") or ""))
    return entries


def append(path: Path, entry: Entry) -> None:
    """Add one entry, atomically (readers never see half a line)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    atomic_write_text(path, old + json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")


def make_entry(
    *,
    study: str,
    published_utc: str,
    source: str,
    verdicts: Sequence[Verdict],
    claims: Sequence[ClaimCheck],
    context: Context,
    headline: str,
) -> Entry:
    """The ledger line for one publication."""
    return {
        "ledger_version": LEDGER_VERSION,
        "study": study,
        "published_utc": published_utc,
        "source": source,
        "headline": headline,
        "verdicts": [
            {
                "factor": v.factor,
                "verdict": v.verdict,
                "status": v.status,
                "missing": [m.to_json() for m in v.missing],
                "reasons": list(v.reasons),
                "point": v.point,
                "numbers": _light(v),
            }
            for v in verdicts
        ],
        "claims": [
            {
                "premise": c["premise"],
                "status": c["status"],
                "measured_min": c.get("measured_min"),
                "measured_max": c.get("measured_max"),
            }
            for c in claims
        ],
        "context": dict(context),
        "rules": RULES_VERSION,
    }


def _light(v: Verdict) -> dict[str, object]:
    """The few numbers a later reader of the ledger needs to show the earlier value."""
    return Light.keep(v.numbers)


def _same(factor: str, a: Any, b: Any, tol: float) -> bool:
    if factor == "projection" and isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a) and abs(float(b) / float(a) - 1) < tol
    return json.dumps(_norm_json(a), sort_keys=True) == json.dumps(_norm_json(b), sort_keys=True)


def _norm_json(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _norm_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_norm_json(v) for v in x]
    if isinstance(x, str | bool) or x is None:
        return norm(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _matches(point: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    if not where:
        return True
    return all(norm(point.get(k)) == norm(v) for k, v in where.items() if k in point)


def _why(
    earlier: Entry,
    earlier_v: LedgerVerdict,
    now: Entry,
    now_v: LedgerVerdict,
) -> Why:
    """Why a verdict changed, from what the earlier entry recorded."""
    validity = next((v for v in earlier["verdicts"] if v["factor"] == "validity"), None)
    pool = list(earlier_v.get("missing") or [])
    if validity is not None:
        pool += [m for m in validity.get("missing") or [] if m not in pool]
    point = now_v.get("point")
    unfinished = [m for m in pool if point and _matches(m["point"], point)]
    if not unfinished and earlier_v.get("status") != COMPLETE:
        unfinished = list(earlier_v.get("missing") or [])
    ctx_a, ctx_b = earlier.get("context") or {}, now.get("context") or {}
    changed: dict[str, list[object]] = {}
    for key in sorted(set(ctx_a) | set(ctx_b)):
        a, b = ctx_a.get(key), ctx_b.get(key)
        if isinstance(a, dict) or isinstance(b, dict):
            da = a if isinstance(a, dict) else {}
            db = b if isinstance(b, dict) else {}
            for sub in sorted(set(da) | set(db)):
                x, y = da.get(sub), db.get(sub)
                if x != y and x is not None and y is not None:
                    changed[f"{key} {sub}"] = [x, y]
        elif a != b and a is not None and b is not None:
            changed[key] = [a, b]
    out: Why = {"unfinished": unfinished, "changed": changed}
    rules_a, rules_b = int(earlier.get("rules") or 1), int(now.get("rules") or 1)
    if rules_a != rules_b:
        out["rules"] = [rules_a, rules_b]
    return out


def corrections(
    history: Sequence[Entry],
    current: Entry,
    tol: float = 0.05,
) -> Corrections:
    """Every verdict that changed between consecutive publications (the history, then this
    one), each with the earlier value and status, why, and the new value; the earlier
    provisional verdicts that the current data confirm; and claims whose outcome changed."""
    chain = [*history, current]
    changes: list[Change] = []
    for earlier, later in itertools.pairwise(chain):
        before = {v["factor"]: v for v in earlier["verdicts"]}
        for v in later["verdicts"]:
            f = v["factor"]
            if f not in TRACKED or f not in before:
                continue
            b = before[f]
            if _same(f, b["verdict"], v["verdict"], tol):
                continue
            changes.append(
                {
                    "factor": f,
                    "date": later.get("published_utc"),
                    "current": later is current,
                    "earlier": b["verdict"],
                    "earlier_status": b["status"],
                    "earlier_numbers": b.get("numbers") or {},
                    "now": v["verdict"],
                    "now_status": v["status"],
                    "now_numbers": v.get("numbers") or {},
                    "why": _why(earlier, b, later, v),
                }
            )
        claims_before = {c["premise"]: c for c in earlier.get("claims") or []}
        for c in later.get("claims") or []:
            old = claims_before.get(c["premise"])
            if old is not None and old["status"] != c["status"]:
                changes.append(
                    {
                        "factor": f"claim:{c['premise']}",
                        "date": later.get("published_utc"),
                        "current": later is current,
                        "earlier": old["status"],
                        "earlier_status": COMPLETE,
                        "earlier_numbers": {},
                        "now": c["status"],
                        "now_status": COMPLETE,
                        "now_numbers": {},
                        "why": {"unfinished": [], "changed": {}},
                    }
                )
    confirmed: list[Confirmed] = []
    if history:
        last = {v["factor"]: v for v in history[-1]["verdicts"]}
        for v in current["verdicts"]:
            was = last.get(v["factor"])
            if (
                was is not None
                and v["factor"] in TRACKED
                and was["status"] != COMPLETE
                and v["status"] == COMPLETE
                and _same(v["factor"], was["verdict"], v["verdict"], tol)
            ):
                confirmed.append(
                    {
                        "factor": v["factor"],
                        "value": v["verdict"],
                        "numbers": v.get("numbers") or {},
                    }
                )
    return {
        "changes": changes,
        "confirmed": confirmed,
        "earlier": len(history),
        "last_date": history[-1].get("published_utc") if history else None,
    }

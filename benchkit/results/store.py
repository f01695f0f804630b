"""result.json: the versioned record of one job, written atomically and loaded with checks.

Contract keys (architecture.md): schema_version, status, reason, factors, provenance,
metrics. Loading refuses files from a newer benchkit and names the file and the problem.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TextIO

from benchkit.errors import UserError
from benchkit.measure.telemetry import drop_partial
from benchkit.results import bounded, schema
from benchkit.results.schema import SCHEMA_VERSION as SCHEMA_VERSION  # where writers take it from
from benchkit.results.schema import Json, Result
from benchkit.results.trust import CALLS_FILE as CALLS_FILE  # where readers take them from
from benchkit.results.trust import RESULT_FILE as RESULT_FILE

try:
    # A declared dependency; the standard parser stands in where an environment lacks it (a
    # lent machine that installs only what a run needs), reading the same objects, slower.
    import orjson

    _fast_loads: Callable[[bytes], object] = orjson.loads
except ImportError:  # pragma: no cover - exercised only where orjson is missing
    _fast_loads = json.loads
from benchkit.results.trust import Trust, left_out, read_result
from benchkit.results.visible import visible

STATUSES = ("complete", "incomplete", "failed", "unavailable")


def atomic_write_text(path: Path, text: str, *more: str) -> None:
    """Write to a temp file in the same folder, then rename: readers never see half a file.
    `more`: text written after `text`, each in turn (a large page's parts, never joined)."""

    def write(fh: TextIO) -> None:
        for part in (text, *more):
            fh.write(part)

    _atomic_write(path, write)


def _atomic_write(path: Path, write: Callable[[TextIO], object]) -> None:
    """`write` into a temp file in `path`'s folder, then the rename (atomic_write_text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, parts: Iterable[bytes]) -> None:
    """`parts` written in turn, atomically as atomic_write_text: each may be made as it is
    written (a large file's pieces, never all held at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    """`obj` as indented JSON, atomically. Encoded into the file as it goes (the same text as
    json.dumps): dumps first holds every piece of the text, a million small strings (tens of
    MiB) for the verdicts.json of a 1,000-job report."""

    def write(fh: TextIO) -> None:
        json.dump(obj, fh, indent=2, sort_keys=False, default=str)
        fh.write("\n")

    _atomic_write(path, write)


@dataclass(frozen=True)
class JobResult:
    """One loaded result.json and where it came from."""

    path: Path
    data: Json
    # What its digest proves (benchkit.results.trust); a result built in memory was never on disk.
    trust: Trust = Trust.VERIFIED

    @property
    def job_dir(self) -> Path:
        return self.path.parent

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def reason(self) -> str | None:
        r = self.data.get("reason")
        return None if r is None else str(r)

    @property
    def factors(self) -> dict[str, object]:
        return dict(self.data.get("factors") or {})

    @property
    def metrics(self) -> dict[str, object]:
        return dict(self.data.get("metrics") or {})

    @property
    def provenance(self) -> dict[str, object]:
        return dict(self.data.get("provenance") or {})

    @cached_property
    def result(self) -> Result:
        """The same result, typed (benchkit.results.schema)."""
        return schema.load(self.data)


def write_result(path: Path, result: Result | Json) -> Json:
    """The one writer of result.json: through the schema (so what is written is what the
    loader reads), atomically. Returns the JSON object written."""
    data = as_written(result)
    atomic_write_json(path, data)
    return data


def as_written(result: Result | Json) -> Json:
    """The JSON object write_result would write for `result`."""
    typed = result if isinstance(result, Result) else schema.load(result)
    data: Json = schema.to_json(typed)
    return data


def load_result(path: Path, root: Path | None = None) -> JobResult:
    """Load and check one result.json of the run or sweep folder `root` (its job folder's
    parent when None): read bounded and inside `root`, and checked against its digest
    (benchkit.results.trust); one whose digest does not match is taken as a failed job with the
    reason, never with its figures. Every problem is one UserError sentence naming the file."""
    try:
        read = read_result(path, root)
    except OSError as exc:
        raise UserError(f"{path} cannot be read ({exc.strerror}): check the path.") from exc
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON ({exc}): it is not a benchkit result.") from exc
    data = read.data
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise UserError(f"{path} has no integer schema_version: it is not a benchkit result.")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{path} has schema_version {version}, newer than this benchkit reads "
            f"({SCHEMA_VERSION}): upgrade benchkit to render it."
        )
    data = migrate(data)
    if read.checked.trust is Trust.BROKEN:
        data = left_out(data)
    missing = [k for k in ("status", "reason", "factors", "metrics", "provenance") if k not in data]
    if missing:
        raise UserError(
            f"{path} lacks the key(s) {', '.join(missing)}: it is not a complete result."
        )
    if data["status"] not in STATUSES:
        raise UserError(
            f"{path} has status {data['status']!r}; expected one of {', '.join(STATUSES)}."
        )
    for key in ("factors", "metrics", "provenance"):
        if not isinstance(data[key], dict):
            raise UserError(f"{path}: '{key}' must be an object, not {type(data[key]).__name__}.")
    _check_times(path, data["metrics"])
    # Figures a partial sampler gave are not the job's: left out as it is read.
    loaded = JobResult(path=path, data=drop_partial(data), trust=read.checked.trust)
    try:
        loaded.result  # noqa: B018 - typed once here, so a bad block is this sentence, not a traceback later
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UserError(
            f"{path} has a block this benchkit cannot read ({type(exc).__name__}: {exc}): it "
            "was not written by benchkit, or was edited; restore it or remove that job folder."
        ) from exc
    return loaded


migrate = schema.migrate

# The figures every verdict rests on: finite and not negative, and the throughput basis is
# its wall clock over its units (what measure/calls.py wrote), so an edited figure is refused.
_TIMES = ("wall_s", "s_per_unit_throughput", "s_per_unit_slot_latency")


def _check_times(path: Path, metrics: Mapping[str, object]) -> None:
    for key in _TIMES:
        v = metrics.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise UserError(
                f"{path}: metrics.{key} is {v!r}, not a time in seconds: the file was edited "
                "or is corrupt; restore it or remove that job folder."
            )
    wall, units, per_unit = (
        metrics.get(k) for k in ("wall_s", "units_completed", "s_per_unit_throughput")
    )
    if (
        isinstance(wall, int | float)
        and isinstance(units, int)
        and units > 0
        and isinstance(per_unit, int | float)
        and abs(per_unit - wall / units) > 0.01 * max(wall / units, 1e-9)
    ):
        raise UserError(
            f"{path}: metrics.s_per_unit_throughput is {per_unit} but wall_s / units_completed "
            f"is {wall / units:.6g}: the file was edited or is corrupt; restore it or remove "
            "that job folder."
        )


def find_results(root: Path) -> list[JobResult]:
    """Every result.json under a run or sweep folder (one level of job folders, or the root)."""
    if not root.exists():
        raise UserError(f"{root} does not exist: give the folder of a benchkit run or sweep.")
    if not root.is_dir():
        raise UserError(f"{root} is not a folder: give the folder of a benchkit run or sweep.")
    paths = []
    if (root / RESULT_FILE).exists():
        paths.append(root / RESULT_FILE)
    paths += sorted(
        (p for p in root.glob(f"*/{RESULT_FILE}") if p.parent.name != "report"),
        key=lambda p: (len(p.parent.name), p.parent.name),
    )
    if not paths:
        inner = root / "results"
        hint = (
            f" (its results/ folder is: {inner})"
            if (inner / RESULT_FILE).exists() or any(inner.glob(f"*/{RESULT_FILE}"))
            else ""
        )
        raise UserError(
            f"{root} holds no result.json (nor */result.json): it is not a benchkit run or "
            f"sweep folder{hint}."
        )
    return [load_result(p, root) for p in paths]


# --------------------------------------------------------------------------- data out

RESULTS_CSV = "results.csv"
# The first columns of results.csv and frame(); each factor (`factor.<name>`) and each metric
# (nested blocks flattened with dots: `ttft_ms.p95`, `power_w.max`) follow, in the order they
# first appear.
LEAD_COLUMNS = ("job", "pass", "status", "reason")


def result_rows(results: Sequence[JobResult]) -> list[dict[str, object]]:
    """One row per job and pass. Every job has a row with an empty `pass`: the job as a
    whole, the figures the report's verdicts use (telemetry and the server's counters are
    only there). A job measured in N passes (`repeats`) also has rows `pass` 1..N, each with
    that pass's own metrics. A job with no metrics (unavailable, failed early) has its one
    row with the metrics empty."""
    rows: list[dict[str, object]] = []
    for r in results:
        head: dict[str, object] = {
            "job": r.job_dir.name,
            "pass": None,
            "status": r.status,
            "reason": r.reason,
        }
        head.update({f"factor.{k}": v for k, v in r.factors.items()})
        rows.append({**head, **_flat(r.metrics)})
        passes = r.data.get("passes")
        server = r.metrics.get("server")
        for i, block in enumerate(passes if isinstance(passes, list) else [], start=1):
            row = {**head, "pass": i, **_flat(block if isinstance(block, Mapping) else {})}
            # The server's counters are kept per pass beside the whole job's metrics.
            if isinstance(server, list) and i <= len(server) and isinstance(server[i - 1], Mapping):
                row.update(_flat(server[i - 1], "server."))
            rows.append(row)
    return rows


def _flat(block: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """Nested objects as dotted columns; lists (devices, per-pass counters) are left out."""
    out: dict[str, object] = {}
    for k, v in block.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def results_csv(results: Sequence[JobResult]) -> str:
    """results.csv's text: LEAD_COLUMNS, then every other column in first-seen order; an
    empty cell where a job has no such value. Floats are written as Python's shortest exact
    form, so reading the file back gives the very numbers of result.json."""
    rows = result_rows(results)
    columns = list(LEAD_COLUMNS)
    seen = set(columns)
    for row in rows:
        for k in row:
            if k not in seen:
                seen.add(k)
                columns.append(k)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow([_cell(row.get(c)) for c in columns])
    # A bidirectional control in a cell would reorder what a spreadsheet shows
    # (benchkit.results.visible).
    return visible(buf.getvalue())


# A spreadsheet runs a text cell starting with one of these as a formula (a model named
# `=HYPERLINK(...)` would): such text is written with a leading apostrophe, as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_results_csv(path: Path, results: Sequence[JobResult]) -> None:
    atomic_write_text(path, results_csv(results))


def unit_spans(calls: Path) -> dict[str, float]:
    """Seconds each unit took (first `t_sent` to last `t_done`) in a calls.jsonl, in the order
    units first appear; a unit with a failed or untimed call is left out, and a file that
    cannot be read gives none. The per-unit times the report's noise rule pairs and the
    racing policy compares."""
    return spans_of(read_jsonl(calls))


def spans_of(calls: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """`unit_spans` of calls already read (the report reads each calls.jsonl once)."""
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    bad: set[str] = set()
    for c in calls:
        u = str(c.get("unit"))
        t0, t1 = c.get("t_sent"), c.get("t_done")
        if not c.get("ok") or not isinstance(t0, int | float) or not isinstance(t1, int | float):
            bad.add(u)
            continue
        first[u] = min(first.get(u, t0), t0)
        last[u] = max(last.get(u, t1), t1)
    return {u: last[u] - first[u] for u in first if u not in bad and last[u] > first[u]}


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """The JSON objects of a .jsonl file, one per line; unreadable lines and files give none."""
    return read_jsonl_lines(path)[0]


def read_jsonl_lines(path: Path) -> tuple[list[dict[str, object]], list[int]]:
    """The JSON objects of a .jsonl file, and the numbers (from 1) of the non-empty lines that
    are not one: a file cut short or edited by hand, which the report names."""
    try:
        return jsonl_lines(path)
    except OSError:
        return [], []


def jsonl_lines(path: Path) -> tuple[list[dict[str, object]], list[int]]:
    """`read_jsonl_lines`, where a file that cannot be read is OSError (a reader that tells
    an unreadable file from an empty one: benchkit.report.analysis.job_calls)."""
    # Bounded, a regular file inside the job's folder (benchkit.results.bounded): a link to
    # /dev/zero is one sentence, not a report that reads until memory runs out.
    return jsonl_of(path, bounded.read_bytes(path))


def jsonl_of(path: Path, data: bytes) -> tuple[list[dict[str, object]], list[int]]:
    """`jsonl_lines` of `data`, the bytes read from `path`."""
    out: list[dict[str, object]] = []
    bad: list[int] = []
    for n, line in enumerate(bounded.split_lines(path, data), 1):
        obj = _loads(line)
        if obj is _BAD:
            if line.strip():
                bad.append(n)
            continue
        if isinstance(obj, dict):
            out.append(obj)
        else:
            bad.append(n)
    return out, bad


_BAD = object()


def _loads(line: bytes) -> object:
    """One JSON line: orjson first (a fifth of the standard parser's time on calls.jsonl);
    what it refuses (NaN, bytes that are not UTF-8) is read as the standard parser reads the
    line decoded with replacement, as every line was read before. One difference remains: an
    integer beyond 64 bits comes back as a float (nothing benchkit writes has one)."""
    try:
        return _fast_loads(line)
    except ValueError:
        pass
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return _BAD


def results_digest(paths: Sequence[Path]) -> str:
    """sha256 over result.json files (sorted by path): what a publication was made from."""
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(f"\0{path.parent.name}\0".encode())
        h.update(bounded.read_bytes(path, path.parent.parent))
    return h.hexdigest()

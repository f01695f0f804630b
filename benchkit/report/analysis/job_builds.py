"""Each job's llama.cpp build and server identity, read from its provenance: the build number,
commit, source and devices the report names, what makes two builds the same source, and why a
result's server was not provably the one its job started."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

from benchkit.results import schema
from benchkit.results.schema import Result

# "version: 7000 (abc1234)" (llama.cpp's --version) or "0.6.0-dev (build 11434, commit unknown)"
# (builds from the PyPI sdist, which has no git commit).
_BUILD_RE = re.compile(
    r"version:\s*(\d+)\s*\(([0-9a-f]+)\)|\(build\s+(\d+),\s*commit\s+([0-9a-f]+|unknown)\)"
)


class JobBuild(TypedDict):
    """A job's llama.cpp build as the report names it."""

    source: str | None
    build: int | None
    commit: str | None
    version: str
    date: str | None
    devices: str | None


def job_build(result: Result) -> JobBuild | None:
    """One job's llama.cpp build: number, commit, source, source date and devices."""
    sb = result.provenance.server_build
    if sb is None:
        return None
    version = sb.version or ""
    m = _BUILD_RE.search(version)
    number = (m.group(1) or m.group(3)) if m else None
    commit = (m.group(2) or m.group(4)) if m else None
    return {
        "source": sb.source,
        "build": int(number) if number else None,
        "commit": None if commit == "unknown" else commit,
        "version": version.splitlines()[0] if version else "",
        "date": sb.source_date,
        "devices": sb.devices,
    }


class BuildTraits(TypedDict, total=False):
    """How a job's server was built, beside its source: a portable build (GGML_NATIVE=OFF, for
    any x86-64 CPU with AVX2: what is carried to a machine that cannot build) or a native one,
    and the system it was built on (its distribution and C library: its compiler's)."""

    portable: bool
    built_on: str


def build_traits(result: Result) -> BuildTraits:
    """A job's build traits as its provenance records them ({} where it records none)."""
    sb = result.provenance.server_build
    build = sb.extra.get("build") if sb is not None else None
    if not isinstance(build, dict):
        return {}
    out: BuildTraits = {}
    if isinstance(build.get("portable"), bool):
        out["portable"] = bool(build["portable"])
    on = build.get("built_on")
    if isinstance(on, dict):
        system = f"Debian {on['debian']}" if on.get("debian") else str(on.get("os") or "")
        parts = [p for p in (system, str(on.get("libc") or "")) if p]
        if parts:
            out["built_on"] = ", ".join(parts)
    return out


def build_summary(by_job: Mapping[str, Mapping[str, Any] | Result]) -> dict[str, JobBuild]:
    """Per backend: the llama.cpp build number, commit, source and source date its jobs ran.
    `by_job`: each job's result.json object, or the result already loaded from it."""
    out: dict[str, JobBuild] = {}
    for data in by_job.values():
        r = data if isinstance(data, Result) else schema.load(data)
        b = job_build(r)
        if b is not None:
            out.setdefault(str(r.factors.get("backend", "?")), b)
    return out


def build_identity(b: JobBuild) -> str:
    """What makes two builds the same source: the build number and commit when the version
    names them, else the source date, else the source description."""
    if b.get("build") is not None:
        return f"b{b['build']} {b.get('commit') or ''}".strip()
    if b.get("date"):
        return str(b["date"])
    return str(b.get("source"))


def _days_between(a: str, b: str) -> int | None:
    try:
        from datetime import date

        return (date.fromisoformat(b[:10]) - date.fromisoformat(a[:10])).days
    except ValueError:
        return None


def identity_problem(result: Result) -> str | None:
    """Why a result's server was not provably the one the job started, or None: the server
    reported another slot count or model alias than the job planned."""
    server = result.provenance.server
    props = (server.props if server else None) or {}
    if not props or server is None:
        return None
    slots = result.factors.get("slots")
    total = props.get("total_slots")
    if slots is not None and total is not None and int(total) != int(slots):
        return f"the server reported {total} slots, the job planned {slots}"
    alias, seen = server.alias, props.get("model_alias")
    if alias and seen and alias != seen:
        return f"the server answered as model alias {seen!r}, the job started {alias!r}"
    return None

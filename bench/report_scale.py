"""Report generation at scale: N synthetic job folders x M calls -> `python -m benchkit.report`.

Writes a sweep folder the way a real `-m` sweep leaves one (multirun.yaml with the swept
overrides, one numbered folder per job holding result.json and calls.jsonl), then times
`python -m benchkit.report DIR` in a child process and reads its peak resident memory from
the kernel (the child's ru_maxrss). 1,000 jobs = backend 2 x slots 5 x mtp 2 x batch 5 x
ubatch 5 x flash_attn 2; more than 1,000 add server.threads (10 values: up to 10,000 jobs),
so that the 1,000-job sweep stays the one timed before. Each result.json is a real one (the
first job of the llama-server sweep when there is one, else the committed seed fixture) with
its factors replaced and its metrics scaled per point, so that the verdicts have real
differences to find.

    python bench/report_scale.py --jobs 1000 --calls 200 --work /tmp/report-scale
    python bench/report_scale.py --jobs 10000 --calls 20 --work /tmp/report-scale-10k
    python bench/report_scale.py --work /tmp/report-scale --trees OLD,NEW --rounds 3

`--trees` times the report of the folder already written with each checkout in turn (its
benchkit on PYTHONPATH), interleaved, so that a shared machine's changing load meets them alike.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "fixtures" / "results" / "seed-r9700"

GRID: dict[str, list[Any]] = {
    "backend": ["vulkan", "hip"],
    "slots": [1, 2, 4, 6, 8],
    "mtp": [False, True],
    "server.batch": [256, 512, 1024, 2048, 4096],
    "server.ubatch": [64, 128, 256, 512, 1024],
    "server.flash_attn": ["on", "off"],
}
# The factor a sweep of more jobs than GRID's points adds.
MORE: dict[str, list[Any]] = {"server.threads": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]}


def grid(jobs: int) -> dict[str, list[Any]]:
    """GRID, and MORE where `jobs` is more than GRID's points."""
    return GRID if jobs <= math.prod(len(v) for v in GRID.values()) else {**GRID, **MORE}


def _fmt(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _call(i: int, worker: int, t: float, rng: random.Random) -> dict[str, Any]:
    prompt_n = rng.randint(500, 6000)
    n = rng.randint(8, 128)
    prompt_ms = prompt_n * rng.uniform(0.3, 0.7)
    predicted_ms = n * rng.uniform(8, 30)
    t_first = t + prompt_ms / 1000 + 0.002
    t_last = t_first + predicted_ms / 1000
    return {
        "cached_tokens": 0, "cap": 128, "chunks": n, "completion_tokens": n, "error": None,
        "finish_reason": "length" if n == 128 else "stop", "fixture_completion_tokens": n,
        "fixture_prompt_tokens": prompt_n, "http_status": 200, "max_tokens": n,
        "model": "benchkit-synthetic", "ok": True, "prompt_tokens": prompt_n, "repeat": 0,
        "role": "bench", "seq": i % 18, "t_done": t_last + 0.001, "t_first": t_first,
        "t_last": t_last, "t_sent": t,
        "timings": {
            "cache_n": 0, "predicted_ms": predicted_ms, "predicted_n": n,
            "predicted_per_second": (n - 1) / predicted_ms * 1000, "prompt_ms": prompt_ms,
            "prompt_n": prompt_n, "prompt_per_second": prompt_n / prompt_ms * 1000,
        },
        "unit": f"u{i // 18:03d}", "worker": worker,
    }  # fmt: skip


def template() -> dict[str, Any]:
    """A real result.json: the newest CPU job of a harness llama-server sweep, else the seed."""
    return dict(json.loads((SEED / "0" / "result.json").read_text()))


def _scale(metrics: dict[str, Any], point: dict[str, Any], rng: random.Random) -> None:
    speed = min(point["slots"], 4) ** 0.8 * (1.15 if point["mtp"] else 1.0)
    speed *= 1.0 if point["backend"] == "vulkan" else 0.9
    speed *= 1.0 + 0.02 * [256, 512, 1024, 2048, 4096].index(point["server.batch"])
    speed *= rng.uniform(0.97, 1.03)
    for key in ("s_per_unit_throughput", "s_per_unit_slot_latency", "wall_s"):
        if isinstance(metrics.get(key), int | float):
            metrics[key] = metrics[key] / speed * (point["slots"] if "slot" in key else 1)
    for key in ("decode_tok_s", "prefill_tok_s", "output_tok_s"):
        if isinstance(metrics.get(key), int | float):
            metrics[key] = metrics[key] * speed


def write_sweep(root: Path, jobs: int, calls: int, base: dict[str, Any]) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    space = grid(jobs)
    keys = list(space)
    points = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*space.values())]
    points = points[:jobs]
    task = [f"{k}={','.join(_fmt(v) for v in vals)}" for k, vals in space.items()]
    task.append(f"hydra.sweep.dir={root}")
    (root / "multirun.yaml").write_text(
        "hydra:\n  overrides:\n    task:\n" + "".join(f"    - {t}\n" for t in task)
    )
    rng = random.Random(1)
    for n, point in enumerate(points):
        job = root / str(n)
        job.mkdir()
        data = copy.deepcopy(base)
        for k, v in point.items():
            data["factors"][k.rsplit(".", 1)[-1]] = v
        prov = data.setdefault("provenance", {})
        prov["overrides"] = [f"{k}={_fmt(v)}" for k, v in point.items()]
        _scale(data["metrics"], point, rng)
        t = 0.0
        lines = []
        records = []
        for i in range(calls):
            rec = _call(i, i % point["slots"], t, rng)
            t = rec["t_done"]
            records.append(rec)
            lines.append(json.dumps(rec, separators=(",", ":"), sort_keys=True))
        _count(data["metrics"], records)
        (job / "result.json").write_text(json.dumps(data, indent=2) + "\n")
        (job / "calls.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _count(metrics: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """The template's call and unit counts replaced by those of the calls written: the report
    reads a calls.jsonl holding fewer calls than its result counts as cut short and draws
    nothing from it (no stalls, caps or per-unit spans), which a real sweep's report does.
    200 calls make the template's 12 units, so the 1,000-job sweep keeps its figures."""
    units = len({r["unit"] for r in records})
    if units != metrics.get("units_completed") and isinstance(metrics.get("wall_s"), int | float):
        # Per unit as the job would have written it (the report checks it against the wall).
        metrics["s_per_unit_throughput"] = metrics["wall_s"] / units
    metrics.update(
        calls_completed=len(records), calls_failed=0, calls_planned=len(records),
        units_completed=units, units_planned=units,
        calls_hit_cap=sum(r["finish_reason"] == "length" for r in records),
    )  # fmt: skip


def time_report(root: Path, tree: Path | None = None) -> dict[str, Any]:
    """Wall time and peak RSS of `python -m benchkit.report ROOT` in a child process; `tree`:
    another checkout whose benchkit renders it (run from there, on its PYTHONPATH)."""
    env = None if tree is None else {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchkit.report", str(root)],
        cwd=tree or REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    return {
        "exit_code": os.waitstatus_to_exitcode(status),
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "stderr_tail": err[-1500:] if err.strip() else None,
    }


def time_trees(root: Path, trees: list[Path], rounds: int) -> dict[str, Any]:
    """`time_report` of `root` with each tree in turn, `rounds` times over: the trees' runs
    interleaved, so that a shared machine whose load changes meets them alike. Each run with
    the load average before it; each tree with its lowest and median CPU time."""
    runs: dict[str, list[dict[str, Any]]] = {str(t): [] for t in trees}
    for _ in range(rounds):
        for t in trees:
            load = [round(x, 2) for x in os.getloadavg()]
            runs[str(t)].append({"load_average": load, **time_report(root, t)})
    out: dict[str, Any] = {}
    for t, rs in runs.items():
        cpu = sorted(r["cpu_s"] for r in rs)
        out[t] = {
            "cpu_s_min": cpu[0],
            "cpu_s_median": cpu[len(cpu) // 2],
            "wall_s_min": min(r["wall_s"] for r in rs),
            "peak_rss_mib_max": max(r["peak_rss_mib"] for r in rs),
            "runs": rs,
        }
    return out


def run(
    work: Path,
    *,
    jobs: int = 1000,
    calls: int = 200,
    log: Callable[[str], None] = print,
    base: dict[str, Any] | None = None,
) -> dict[str, Any]:
    log(f"report at scale: writing {jobs} jobs x {calls} calls under {work}")
    t0 = time.perf_counter()
    root = write_sweep(work / "sweep", jobs, calls, base or template())
    written = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    out: dict[str, Any] = {"jobs": jobs, "calls_per_job": calls, "bytes_on_disk": size}
    out["write_s"] = round(written, 1)
    out.update(time_report(root))
    log(
        f"report of {jobs} jobs: {out['wall_s']} s wall, {out['cpu_s']} s CPU, "
        f"peak RSS {out['peak_rss_mib']} MiB (exit {out['exit_code']})"
    )
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="time python -m benchkit.report at scale")
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--work", type=Path, default=Path("/tmp/benchkit-report-scale"))
    ap.add_argument("--reuse", action="store_true", help="time the report of an existing folder")
    ap.add_argument(
        "--trees",
        default=None,
        help="comma list of checkouts: time each one's report of the existing folder, in turn",
    )
    ap.add_argument("--rounds", type=int, default=3, help="with --trees: runs of each")
    a = ap.parse_args()
    if a.trees:
        trees = [Path(t).resolve() for t in a.trees.split(",")]
        print(json.dumps(time_trees(a.work / "sweep", trees, a.rounds), indent=1))
    elif a.reuse:
        print(json.dumps(time_report(a.work / "sweep")))
    else:
        print(json.dumps(run(a.work, jobs=a.jobs, calls=a.calls)))

"""Client-measured call time against a real llama-server's own timings, at 1..8 slots.

Runs a real benchkit sweep (`python -m benchkit -m slots=1,2,4,8 resume=false
hydra.sweep.dir=DIR`: the default study's mini workload, 8 units, on the tiny synthetic MoE
and the CPU build) and reads each job's
calls.jsonl and server.log. Per call:

- overhead_ms = (t_done - t_sent) - (timings.prompt_ms + timings.predicted_ms): everything
  the client saw that the server's own timings leave out.
- queue_ms: from the request leaving the client to a slot taking the task (server.log
  `launch_slot_ ... processing task`): HTTP in, tokenization and waiting for the server loop
  or a free slot. The server's timings start only after it: queueing the server does not
  report.
- server_untimed_ms: slot taken to the call's timings being printed (server.log
  `print_timing`, just before the final response is sent) minus prompt_ms + predicted_ms:
  time inside the server that its per-call timings leave out (a slot waiting while other
  slots' prompts fill the batch).
- delivery_ms: timings printed to the client's t_done: the final response's way out and the
  client's own handling of it, the only part that is the client's.
queue + untimed + delivery = overhead.

server.log times are seconds since the server started and calls.jsonl times are seconds
since the replay started; a call is matched to its task by the server's own numbers
(prompt tokens, prompt ms, predicted ms printed by `print_timing`), and the two clocks are
aligned by the smallest (t_done - timings printed) over the job's calls, i.e. taking the
fastest delivery of a final response as zero. So queue_ms is exact up to that delivery time
(sub-millisecond on loopback).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import REPO, pct, r

_TS = r"(\d+)\.(\d+)\.(\d+)\.(\d+)"
_SLOT = r" . slot +{what}: id +(\d+) \| task (\d+) \| "
LAUNCH = re.compile(_TS + _SLOT.format(what="launch_slot_") + "processing task")
PROMPT = re.compile(
    _TS + _SLOT.format(what="print_timing") + r"prompt eval time = +([\d.]+) ms / +(\d+)"
)
EVAL = re.compile(_TS + _SLOT.format(what="print_timing") + r" *eval time = +([\d.]+) ms")


def _secs(m: re.Match[str]) -> float:
    mi, s, ms, us = (int(m.group(i)) for i in range(1, 5))
    return mi * 60 + s + ms / 1e3 + us / 1e6


def parse_log(text: str) -> list[dict[str, Any]]:
    tasks: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        if m := LAUNCH.search(line):
            tasks.setdefault(int(m.group(6)), {})["launch"] = _secs(m)
        elif m := PROMPT.search(line):
            t = tasks.setdefault(int(m.group(6)), {})
            t["timed"] = _secs(m)  # printed just before the final response is sent
            t["prompt_ms"] = float(m.group(7))
            t["prompt_n"] = int(m.group(8))
        elif m := EVAL.search(line):
            tasks.setdefault(int(m.group(6)), {})["predicted_ms"] = float(m.group(7))
    need = {"launch", "prompt_ms", "timed"}
    return [dict(t, task=k) for k, t in tasks.items() if need <= set(t)]


def job_overheads(job: Path) -> dict[str, Any] | None:
    calls = [json.loads(x) for x in (job / "calls.jsonl").read_text().splitlines() if x]
    calls = [c for c in calls if c["ok"] and c.get("timings")]
    tasks = parse_log((job / "server.log").read_text(errors="replace"))
    result_path = job / "result.json"
    result = json.loads(result_path.read_text()) if result_path.exists() else {}
    slots = result.get("factors", {}).get("slots")
    if not calls:
        return None
    by_key = {(t["prompt_n"], round(t["prompt_ms"], 2)): t for t in tasks}
    pairs = []
    for c in calls:
        tm = c["timings"]
        t = by_key.get((int(tm.get("prompt_n", -1)), round(float(tm.get("prompt_ms", -1)), 2)))
        if t is not None:
            pairs.append((c, t))
    offset = min(c["t_done"] - t["timed"] for c, t in pairs) if pairs else None
    overhead, queue, untimed, delivery, call_ms, server_ms = [], [], [], [], [], []
    off = offset or 0.0
    for c, t in pairs:
        tm = c["timings"]
        inside = float(tm.get("prompt_ms", 0)) + float(tm.get("predicted_ms", 0))
        total = 1000 * (c["t_done"] - c["t_sent"])
        overhead.append(total - inside)
        queue.append(1000 * (t["launch"] + off - c["t_sent"]))
        untimed.append(1000 * (t["timed"] - t["launch"]) - inside)
        delivery.append(1000 * (c["t_done"] - (t["timed"] + off)))
        call_ms.append(total)
        server_ms.append(inside)

    def stats(xs: list[float]) -> dict[str, float | None]:
        return {"p50": r(pct(xs, 50)), "p99": r(pct(xs, 99)), "max": r(max(xs) if xs else None)}

    return {
        "slots": slots,
        "status": result.get("status"),
        "calls": len(calls),
        "calls_matched_to_tasks": len(pairs),
        "call_ms": stats(call_ms),
        "server_timings_ms": stats(server_ms),
        "overhead_ms": stats(overhead),
        "queue_ms": stats(queue),
        "server_untimed_ms": stats(untimed),
        "delivery_ms": stats(delivery),
        "overhead_share_pct_p50": r(
            pct([100 * o / t for o, t in zip(overhead, call_ms, strict=True) if t > 0], 50)
        ),
    }


def run(work: Path, *, smoke: bool = False, log: Callable[[str], None] = print) -> dict[str, Any]:
    # The whole mini workload (8 units) keeps 8 slots busy; the smoke run takes 1 unit.
    slots = "1,2" if smoke else "1,2,4,8"
    sweep = work / time.strftime("sweep-%Y%m%d-%H%M%S")
    cmd = [sys.executable, "-m", "benchkit", "-m", f"slots={slots}"]
    if smoke:
        cmd.append("workload.units=1")
    cmd += ["resume=false", f"hydra.sweep.dir={sweep}"]
    log(f"real llama-server sweep: {' '.join(cmd[1:])}")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {
        "command": "python " + " ".join(cmd[1:]),
        "exit_code": proc.returncode,
        "wall_s": r(wall),
        "jobs": [],
    }
    for job in sorted((p for p in sweep.glob("*") if (p / "calls.jsonl").exists()), key=_num):
        row = job_overheads(job)
        if row is not None:
            out["jobs"].append(row)
            log(
                f"llama slots={row['slots']}: overhead p50/p99 {row['overhead_ms']['p50']}/"
                f"{row['overhead_ms']['p99']} ms; queue {row['queue_ms']['p50']}/"
                f"{row['queue_ms']['p99']}; untimed {row['server_untimed_ms']['p50']}/"
                f"{row['server_untimed_ms']['p99']}; delivery {row['delivery_ms']['p50']}/"
                f"{row['delivery_ms']['p99']}"
            )
    if proc.returncode != 0:
        out["stderr_tail"] = proc.stderr[-2000:]
    return out


def _num(p: Path) -> tuple[int, str]:
    return (int(p.name), p.name) if p.name.isdigit() else (1 << 30, p.name)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="overheads of an existing sweep folder")
    ap.add_argument("sweep", type=Path)
    a = ap.parse_args()
    for j in sorted((p for p in a.sweep.glob("*") if (p / "calls.jsonl").exists()), key=_num):
        print(json.dumps(job_overheads(j)))

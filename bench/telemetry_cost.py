"""What the telemetry sampler (benchkit/measure/telemetry.py) costs, and whether it disturbs
the replay.

    python bench/telemetry_cost.py --backend cuda --seconds 20 \
        --out docs/perf/telemetry/telemetry-h200.json
    python bench/telemetry_cost.py --replay --out docs/perf/telemetry/telemetry-replay.json

`--seconds`: the sampler alone, as a job opens it for `--backend` (NVML on an NVIDIA machine;
elsewhere no GPU reader, only the server-process CPU reading, and the reason), sampling this
process for that long at `--interval`. Reported: the sampler thread's own CPU time over the
window (`sampler_cpu_share`: 0.01 is 1% of one core), ticks late by a whole interval, and what
one reading costs when called in a loop (wall and CPU microseconds).

`--replay`: benchkit's replay client (the Replayer a job runs, in this process, as in a job)
against bench/scripted_server.py, whose timing is known exactly, at each `--concurrency`,
three times each in turn: without a sampler, with the sampler at the job's default interval,
and with it at 20x that rate; the GPU reader is the real one where NVML answers, else a stub
NVML module that answers at once, so the sampler's Python work (what holds the GIL) is the
same. Reported per run: the client's TTFT and ITL error against the server's own record of
what it did (the harness's definitions, bench/harness.py), and the sampler's CPU share. A
sampler that blocked the replay would show as larger errors or schedule delays with it on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from benchkit.client.replay import RecordSink, Replayer  # noqa: E402
from benchkit.config.schema import OutputPolicy  # noqa: E402
from benchkit.measure.telemetry import GpuReader, NvmlReader, Sampler, open_reader  # noqa: E402
from benchkit.server.plan import ReplaySpec  # noqa: E402


def log(msg: str) -> None:
    print(f"[telemetry-cost] {msg}", file=sys.stderr, flush=True)


def stub_nvml() -> SimpleNamespace:
    """An NVML that answers every call at once with fixed values (the readings' Python path)."""
    util = SimpleNamespace(gpu=50, memory=20)
    mem = SimpleNamespace(used=2**30)
    energy = [0]

    def total_energy(_h: Any) -> int:
        energy[0] += 1000
        return energy[0]

    return SimpleNamespace(
        NVML_CLOCK_SM=1,
        NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlSystemGetDriverVersion=lambda: "stub",
        nvmlDeviceGetName=lambda h: "stub GPU",
        nvmlDeviceGetUUID=lambda h: "GPU-stub",
        nvmlDeviceGetEnforcedPowerLimit=lambda h: 700000,
        nvmlDeviceGetPowerUsage=lambda h: 300000,
        nvmlDeviceGetUtilizationRates=lambda h: util,
        nvmlDeviceGetMemoryInfo=lambda h: mem,
        nvmlDeviceGetClockInfo=lambda h, c: 1980,
        nvmlDeviceGetTemperature=lambda h, s: 40,
        nvmlDeviceGetTotalEnergyConsumption=total_energy,
    )


def reader_for(backend: str, allow_stub: bool) -> tuple[GpuReader | None, str | None, str]:
    reader, reason = open_reader(backend, [0])
    if reader is not None:
        return reader, None, reader.source
    if allow_stub:
        return NvmlReader(stub_nvml(), [0]), reason, "stub-nvml"
    return None, reason, "none"


def per_call_us(reader: GpuReader | None, n: int = 200) -> dict[str, float | None]:
    """One reading (GPU sample + the server's /proc line), called n times in a loop."""
    from benchkit.measure.telemetry import proc_cpu_s

    pid = os.getpid()
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(n):
        if reader is not None:
            reader.sample()
        proc_cpu_s(pid)
    w1, c1 = time.perf_counter(), time.thread_time()
    return {"wall_us": 1e6 * (w1 - w0) / n, "cpu_us": 1e6 * (c1 - c0) / n}


def idle(backend: str, seconds: float, interval: float) -> dict[str, Any]:
    reader, reason, source = reader_for(backend, allow_stub=False)
    calls = per_call_us(reader)
    s = Sampler(reader, os.getpid(), interval, time.perf_counter())
    s.start()
    time.sleep(seconds)
    p = s.stop()
    if reader is not None:
        reader.close()
    row = {
        "backend": backend,
        "source": source,
        "reason": reason,
        "devices": [] if reader is None else reader.devices,
        "interval_s": interval,
        "window_s": round(p.seconds, 3),
        "samples": len(p.samples),
        "expected_samples": int(p.seconds / interval) + 1,
        "sampler_cpu_s": round(p.sampler_cpu_s, 4),
        "sampler_cpu_share": round(p.sampler_cpu_s / p.seconds, 5) if p.seconds else None,
        "late_ticks": p.sampler_late,
        "one_reading": {k: None if v is None else round(v, 1) for k, v in calls.items()},
        "energy_j": p.energy_j,
        "energy_basis": p.energy_basis,
    }
    log(
        f"{source}: {row['samples']} samples in {row['window_s']} s, sampler CPU "
        f"{100 * (row['sampler_cpu_share'] or 0):.3f}% of a core, one reading "
        f"{row['one_reading']['wall_us']} us wall / {row['one_reading']['cpu_us']} us CPU"
    )
    return row


def _replay_once(
    server: Any, c: int, n_req: int, sampler_interval: float | None, reader: GpuReader | None
) -> dict[str, Any]:
    import harness
    import run_benchkit

    harness.http(server.url + "/_bench/script", script(c))
    harness.http(server.url + "/_bench/reset", {})
    work = Path(tempfile.mkdtemp(prefix="telemetry-cost-"))
    spec = ReplaySpec(
        workers=c,
        output_policy=OutputPolicy.replay,
        cap=harness.TOKENS,
        sampling={"temperature": 0.0},
        stall_timeout_s=120.0,
        job_deadline_s=None,
        units=None,
        repeats=1,
    )
    sink = RecordSink(work / "calls.jsonl")
    t0 = time.perf_counter()
    rep = Replayer(
        base_url=server.url,
        alias=server.alias,
        spec=spec,
        workload=run_benchkit.workload(n_req, harness.PROMPT_TOKENS, harness.TOKENS, False),
        n_vocab=320,
        sink=sink,
        progress=False,
        t0=t0,
    )
    sampler = None
    if sampler_interval is not None:
        sampler = Sampler(reader, server.proc.pid, sampler_interval, t0)
        sampler.start()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    outcome = rep.run()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    p = sampler.stop() if sampler is not None else None
    sink.close()
    served = [s for s in harness.http(server.url + "/_bench/records")["records"] if s["completed"]]
    calls = [json.loads(x) for x in (work / "calls.jsonl").read_text().splitlines()]
    shutil.rmtree(work, ignore_errors=True)
    ok = [x for x in calls if x["ok"] and x["t_first"] is not None]
    c_ttft = [1000 * (x["t_first"] - x["t_sent"]) for x in ok]
    c_itl = [
        1000 * (x["t_last"] - x["t_first"]) / (x["completion_tokens"] - 1)
        for x in ok
        if (x["completion_tokens"] or 0) > 1
    ]
    s_ttft = [1000 * (s["t_first"] - s["t_arrive"]) for s in served]
    s_itl = [1000 * (s["t_last"] - s["t_first"]) / (s["tokens"] - 1) for s in served]
    tokens = sum(s["tokens"] for s in served)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {
        "concurrency": c,
        "requests": n_req,
        "sampler_interval_s": sampler_interval,
        "client": outcome.client,
        "ttft_err_pct": round(harness.err_pct(statistics.mean(c_ttft), statistics.mean(s_ttft)), 4),
        "itl_err_pct": round(harness.err_pct(statistics.mean(c_itl), statistics.mean(s_itl)), 4),
        "client_cpu_ms_per_1k_tokens": round(1e6 * cpu / tokens, 1) if tokens else None,
        "sampler_samples": None if p is None else len(p.samples),
        "sampler_cpu_share": None if p is None or not p.seconds else p.sampler_cpu_s / p.seconds,
        "sampler_late_ticks": None if p is None else p.sampler_late,
        "wall_s": round(outcome.wall_s, 3),
    }


def script(c: int) -> dict[str, Any]:
    import harness

    return {
        "ttft_ms": harness.TTFT_MS,
        "itl_ms": harness.itl_for(c),
        "tokens": harness.TOKENS,
        "chunk_tokens": harness.CHUNK_TOKENS,
    }


def replay(backend: str, concurrency: list[int], interval: float, rounds: int) -> dict[str, Any]:
    import harness

    reader, reason, source = reader_for(backend, allow_stub=True)
    server = harness.Server()
    rows = []
    try:
        for c in concurrency:
            n_req = harness.requests_for(c, smoke=False)
            for k in range(rounds):
                for label, iv in (("off", None), ("on", interval), ("on-20x", interval / 20)):
                    row = {"mode": label, "round": k, **_replay_once(server, c, n_req, iv, reader)}
                    rows.append(row)
                    log(
                        f"c={c:<3d} {label:6s} ttft {row['ttft_err_pct']:+.3f}% "
                        f"itl {row['itl_err_pct']:+.3f}% cpu {row['client_cpu_ms_per_1k_tokens']} "
                        f"ms/1k sampler {row['sampler_cpu_share']}"
                    )
    finally:
        server.close()
        if reader is not None:
            reader.close()
    summary = []
    for c in concurrency:
        for label in ("off", "on", "on-20x"):
            sel = [r for r in rows if r["concurrency"] == c and r["mode"] == label]
            summary.append(
                {
                    "concurrency": c,
                    "mode": label,
                    "runs": len(sel),
                    "ttft_err_pct_mean": round(statistics.mean(r["ttft_err_pct"] for r in sel), 4),
                    "itl_err_pct_mean": round(statistics.mean(r["itl_err_pct"] for r in sel), 4),
                    "ttft_err_pct_max_abs": round(max(abs(r["ttft_err_pct"]) for r in sel), 4),
                    "client_cpu_ms_per_1k_tokens_mean": round(
                        statistics.mean(r["client_cpu_ms_per_1k_tokens"] for r in sel), 1
                    ),
                    "sampler_cpu_share_max": max(
                        (r["sampler_cpu_share"] for r in sel if r["sampler_cpu_share"] is not None),
                        default=None,
                    ),
                }
            )
    return {"reader": source, "reason": reason, "runs": rows, "summary": summary}


def machine() -> dict[str, Any]:
    from benchkit.host.provenance import _cpu_model, detect_gpus

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "gpus": detect_gpus(),
        "python": platform.python_version(),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--backend", default="cuda", help="the job backend whose reader to open")
    ap.add_argument("--seconds", type=float, default=0.0, help="sampler alone for this long")
    ap.add_argument("--interval", type=float, default=0.2, help="the job default: 0.2 s")
    ap.add_argument("--replay", action="store_true", help="beside the replay client")
    ap.add_argument("--concurrency", default="8,64")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    doc: dict[str, Any] = {"machine": machine(), "command": " ".join(sys.argv)}
    if args.seconds > 0:
        doc["idle"] = idle(args.backend, args.seconds, args.interval)
    if args.replay:
        cs = [int(x) for x in args.concurrency.split(",")]
        doc["replay"] = replay(args.backend, cs, args.interval, args.rounds)
    doc["machine_end_load_avg"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

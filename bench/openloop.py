"""The open-loop client's timing and CPU cost at known rates, against the scripted server.

    python bench/openloop.py --out docs/perf/openloop/openloop.json          # benchkit, and the
    python bench/openloop.py --peers --out docs/perf/openloop/openloop.json  # peers where installed
    python bench/openloop.py --markdown docs/perf/openloop/openloop.json

benchkit's open-loop client (`benchkit.load.openloop.OpenLoopReplayer`, as `load=poisson`
and `load=constant` jobs run it) sends calls on a precomputed schedule. Each run here is
its own process (`client` below), so its CPU time is its own; the scripted server
(bench/scripted_server.py) answers every call with a known script (first token 50 ms after
the request, 16 tokens 5 ms apart), fast enough that nothing queues at these rates.

Per (tool, process, rate) a row says:
- arrival_lag_*_ms: when the request's first byte reached the server (its kernel receive
  time, on the machine's monotonic clock) minus when the schedule said to send it. The truth
  the 1 ms target is about. benchkit only: the schedule is benchkit's own (the peers do not
  write theirs down per request in a way read here).
- send_lag_*_ms: the client's own view, t_sent - t_scheduled (benchkit's calls.jsonl).
- cpu_ms_per_request: CPU time (user + system) of the client's process tree while its
  requests were in flight (first request in to last response out), per request; the
  start-up is left out. cpu_share: that CPU time over the same span (1.0 = one core).
- achieved_rps: requests the server received / the span from the first to the last.
The machine's load average stands beside each row: a busy machine delays the client.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
import peers

RATES = (2.0, 8.0, 20.0, 64.0)  # the rates of tests/test_load_integration.py and the unit test
PASS_S = 20.0
SCRIPT = {"ttft_ms": 50.0, "itl_ms": 5.0, "tokens": 16, "chunk_tokens": [1]}


def client(argv: list[str]) -> int:
    """One open-loop pass of benchkit's client (run as its own process by `main`)."""
    from run_benchkit import workload

    from benchkit.client.replay import RecordSink
    from benchkit.config.schema import LoadConfig, LoadProcess, OutputPolicy
    from benchkit.load.arrivals import schedule
    from benchkit.load.openloop import OpenLoopReplayer
    from benchkit.server.plan import ReplaySpec

    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--process", choices=("poisson", "constant"), required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--requests", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    w = workload(a.requests, 32, int(SCRIPT["tokens"]), chat=False)
    load = LoadConfig(process=LoadProcess(a.process), rate=a.rate, max_in_flight=256)
    spec = ReplaySpec(
        workers=256, output_policy=OutputPolicy.replay, cap=w.cap, sampling={},
        stall_timeout_s=60.0, job_deadline_s=None, units=None, repeats=1,
    )  # fmt: skip
    sink = RecordSink(a.out / "calls.jsonl")
    t0 = time.perf_counter()
    rep = OpenLoopReplayer(
        schedule=schedule(load, w), max_pass_s=600.0, base_url=a.url, alias="scripted",
        spec=spec, workload=w, n_vocab=320, sink=sink, progress=False, t0=t0,
    )  # fmt: skip
    out = rep.run()
    sink.close()
    meta = {"t0": t0, "client": out.client, "ended": out.open_loop.ended if out.open_loop else None}
    (a.out / "meta.json").write_text(json.dumps(meta))
    return 0


def _peer_cmd(
    tool: str, url: str, process: str, rate: float, n: int, out: Path, tok: Path
) -> list[str]:
    """guidellm and AIPerf at a fixed request rate (their own open-loop modes)."""
    if tool == "guidellm":
        kind = "poisson" if process == "poisson" else "constant"
        backend = f"kind=openai_http,target={url},model=scripted"
        return [
            str(peers.venv_bin("guidellm")), "run",
            "--backend", f"{backend},request_format=/v1/completions",
            "--profile", f"kind={kind},rate={rate}",
            "--constraint", f"kind=max_requests,count={n}",
            "--data", f"kind=synthetic_text,prompt_tokens=32,output_tokens={SCRIPT['tokens']}",
            "--tokenizer", f"kind=huggingface_auto,model={tok}",
            "--output", f"kind=json,path={out / 'guidellm.json'}",
            "--disable-console-interactive",
        ]  # fmt: skip
    return [
        str(peers.venv_bin("aiperf")), "profile",
        "--model", "scripted", "--url", url, "--endpoint-type", "completions", "--streaming",
        "--request-rate", str(rate),
        "--request-rate-mode", "poisson" if process == "poisson" else "constant",
        "--request-count", str(n), "--isl", "32", "--osl", str(SCRIPT["tokens"]),
        "--tokenizer", str(tok), "--use-server-token-count", "--no-server-metrics",
        "--no-gpu-telemetry", "--ui", "none", "--artifact-dir", str(out / "aiperf"),
    ]  # fmt: skip


def run_one(tool: str, srv: harness.Server, process: str, rate: float, work: Path,
            tok: Path, pass_s: float = PASS_S) -> dict[str, Any]:  # fmt: skip
    n = max(8, int(rate * pass_s))
    out = work / f"{tool}-{process}-{rate:g}"
    harness.http(srv.url + "/_bench/reset", {})
    load0 = os.getloadavg()
    if tool == "benchkit":
        cmd = [sys.executable, __file__, "client", "--url", srv.url, "--process", process,
               "--rate", str(rate), "--requests", str(n), "--out", str(out)]  # fmt: skip
    else:
        out.mkdir(parents=True, exist_ok=True)
        cmd = _peer_cmd(tool, srv.url, process, rate, n, out, tok)
    env = peers._env_plain()
    env["PYTHONPATH"] = str(peers.REPO)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = harness.CpuSampler(proc.pid)
    sampler.start()
    _, err = proc.communicate(timeout=PASS_S * 10 + 300)
    sampler.stop.set()
    sampler.join()
    served = harness.http(srv.url + "/_bench/records")["records"]
    row: dict[str, Any] = {"tool": tool, "process": process, "rate": rate, "requests": n,
                           "load_avg_start": list(load0), "load_avg_end": list(os.getloadavg()),
                           "rc": proc.returncode}  # fmt: skip
    if proc.returncode != 0 or not served:
        row["error"] = err.decode(errors="replace")[-800:]
        return row
    first = min(s["t_arrive"] for s in served)
    last_in = max(s["t_arrive"] for s in served)
    last_out = max(s["t_end"] for s in served if s["completed"])
    cpu = sampler.at(last_out) - sampler.at(first)
    row.update(
        received=len(served),
        achieved_rps=harness.r((len(served) - 1) / (last_in - first), 3)
        if last_in > first
        else None,
        cpu_ms_per_request=harness.r(1000 * cpu / len(served), 3),
        cpu_share=harness.r(cpu / (last_out - first), 4),
    )
    if tool == "benchkit":
        row.update(_benchkit_lags(out, served))
    return row


def _benchkit_lags(out: Path, served: list[dict[str, Any]]) -> dict[str, Any]:
    """Arrival at the server minus the schedule, request by request (the scripted server
    records the prompt; calls are matched by their order of arrival, which the client keeps:
    each is sent at its own due time, the next one later)."""
    meta = json.loads((out / "meta.json").read_text())
    calls = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines() if x]
    due = sorted(meta["t0"] + c["t_scheduled"] for c in calls)
    arrive = sorted(s["t_arrive"] for s in served)
    lag = [1000 * (a - d) for a, d in zip(arrive, due, strict=False)]
    send = [1000 * (c["t_sent"] - c["t_scheduled"]) for c in calls]
    pct = harness.pct
    return {
        "client": meta["client"],
        "ended": meta["ended"],
        "arrival_lag_p50_ms": harness.r(pct(lag, 50), 3),
        "arrival_lag_p99_ms": harness.r(pct(lag, 99), 3),
        "arrival_lag_max_ms": harness.r(max(lag), 3),
        "arrival_lag_min_ms": harness.r(min(lag), 3),
        "within_1ms_share": harness.r(sum(1 for x in lag if abs(x) <= 1.0) / len(lag), 4),
        "send_lag_p50_ms": harness.r(pct(send, 50), 3),
        "send_lag_p99_ms": harness.r(pct(send, 99), 3),
    }


def markdown(doc: dict[str, Any]) -> str:
    cols = ("tool", "process", "rate", "requests", "achieved_rps", "arrival_lag_p50_ms",
            "arrival_lag_p99_ms", "arrival_lag_max_ms", "within_1ms_share",
            "cpu_ms_per_request", "cpu_share", "load_avg_start")  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in doc["rows"]:
        cells = []
        for c in cols:
            v = row.get(c)
            cells.append(
                f"{v[0]:.2f}" if c == "load_avg_start" and v else ("–" if v is None else str(v))
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--peers", action="store_true", help="guidellm and AIPerf too")
    ap.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES))
    ap.add_argument("--markdown", type=Path, help="print the table of a written JSON")
    ap.add_argument("--pass-s", type=float, default=PASS_S, help="seconds of arrivals per run")
    a = ap.parse_args(argv)
    if a.markdown:
        print(markdown(json.loads(a.markdown.read_text())))
        return 0
    tools = ["benchkit"]
    notes: dict[str, str] = {}
    if a.peers:
        for tool in ("guidellm", "aiperf"):
            if peers.venv_bin(tool).exists():
                tools.append(tool)
            else:
                notes[tool] = (
                    f"not run: {peers.venv_bin(tool)} is not installed (peers.ensure_venv)"
                )
    rows = []
    srv = harness.Server()
    try:
        harness.http(srv.url + "/_bench/script", SCRIPT)
        with tempfile.TemporaryDirectory(prefix="openloop-") as tmp:
            tok = peers.write_tokenizer(Path(tmp) / "tokenizer")
            for rate in (float(x) for x in a.rates.split(",")):
                for process in ("constant", "poisson"):
                    for tool in tools:
                        harness.log(f"{tool} {process} {rate:g}/s")
                        rows.append(run_one(tool, srv, process, rate, Path(tmp), tok, a.pass_s))
    finally:
        srv.close()
    doc = {"machine": harness.machine(), "git": harness.git_state(), "script": SCRIPT,
           "pass_s": a.pass_s, "notes": notes, "rows": rows}  # fmt: skip
    text = json.dumps(doc, indent=1)
    if a.out:
        a.out.write_text(text + "\n")
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        sys.exit(client(sys.argv[2:]))
    sys.exit(main())

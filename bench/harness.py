"""Benchmark the benchmark clients: benchkit's replay client beside guidellm and AIPerf.

    python bench/harness.py --all --out docs/perf/harness/harness.json     # the committed table
    python bench/harness.py --smoke --out /tmp/harness.json        # a quick look
    python bench/harness.py --tools benchkit --concurrency 64,512  # one client, some points

`benchkit` is the client as a job runs it (raw HTTP/1.1 with kernel receive times where it can,
benchkit/client/transport.py); `benchkit-httpx` is the same client on its httpx path (its
fallback for https, proxies and platforms without SO_TIMESTAMPNS; before the raw path shipped,
its only one).
Each benchkit row says in `client` which path measured it.

One scripted server (bench/scripted_server.py, its own process) is driven by each client in
turn at each concurrency; every client gets the same script, the same number of requests and
the same token counts. Per (tool, concurrency) the row says:

- ttft_err_pct / itl_err_pct / decode_err_pct: the client's mean TTFT, ITL and per-request
  decode rate against what the server really did to the same requests (its own send times
  on the shared monotonic clock: TTFT = first chunk written - first request byte read; ITL =
  (last chunk - first chunk) / (tokens - 1)). Signed, in percent. `*_vs_script_pct` compare
  with the script itself (which also holds the server's own lateness, reported as
  server_late_p99_ms).
- cpu_ms_per_1k_tokens: CPU time (user + system) of the client's whole process tree from
  the first request reaching the server to the client's exit, per 1,000 tokens streamed: the
  work that grows with requests, whether done while streaming or after (start-up excluded).
  `cpu_ms_per_1k_tokens_inflight` counts only while requests were in flight (first request
  in to last response out); `cpu_ms_per_1k_tokens_total` the whole run, start-up included.
- schedule_delay_p50_ms / _p99_ms: closed-loop schedule delay seen by the server. A closed-loop
  client at concurrency C means to send a new request the moment one of its calls finishes;
  "intended" is therefore the moment the server wrote the last byte of a response, "actual"
  the moment the next request's first byte arrived. With arrivals and completions each
  sorted, the (C+k)-th arrival is matched with the k-th completion. benchkit's own view of
  the same thing (t_sent minus the worker's previous t_done) is
  `client_schedule_delay_p99_ms`.

The `--llama` and `--report-scale` parts are in bench/llama_overhead.py and
bench/report_scale.py; `--all` runs all three and writes one JSON document.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers

from benchkit.cli import Parser, bounded_list

REPO = peers.REPO
CONCURRENCY = (1, 8, 64, 256, 512)
TTFT_MS = 200.0
TOKENS = 64
PROMPT_TOKENS = 32
CHUNK_TOKENS = [1, 3, 2, 4]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def itl_for(c: int) -> float:
    """Gap per token: 10 ms, stretched at high concurrency so that the aggregate rate
    (about 4,000 tokens/s at 512 streams) stays within what two cores can serve."""
    return max(10.0, c / 4)


def requests_for(c: int, smoke: bool) -> int:
    return max(8 if smoke else 24, (1 if smoke else 2) * c)


def log(msg: str) -> None:
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


class Server:
    """The scripted server as a child process of its own."""

    def __init__(self, alias: str = "scripted") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.alias = alias
        cmd = [sys.executable, str(REPO / "bench" / "scripted_server.py")]
        cmd += ["--port", str(self.port), "--alias", alias, "--slots", "1024"]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                http(self.url + "/health")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the scripted server did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


# --------------------------------------------------------------------------- CPU sampling


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(x) for x in fh.read().split()]
        except OSError:
            pass
    return out


def _cpu_s(pid: int) -> float:
    """utime + stime of the process and its reaped children, seconds."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # fields[0] is field 3 (state): utime=14, stime=15, cutime=16, cstime=17.
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK


class CpuSampler(threading.Thread):
    """Samples the CPU time of a process tree every `period` s on the monotonic clock.

    A descendant's time is kept after it exits (its last sample) unless its parent reaps it,
    in which case it moves into the parent's cutime/cstime; both are summed, so a reaped
    child is counted once by keeping, per pid, only the live value."""

    def __init__(self, pid: int, period: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.period = period
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self._last: dict[int, float] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.period)
        self.sample()

    def sample(self) -> None:
        now = time.perf_counter()
        if not os.path.exists(f"/proc/{self.pid}/stat"):
            return  # reaped: the caller has its rusage
        live = {p: _cpu_s(p) for p in _tree(self.pid)}
        # Exited (reaped) descendants: their time now sits in an ancestor's cutime.
        for p in list(self._last):
            if p not in live:
                del self._last[p]
        self._last.update(live)
        self.samples.append((now, sum(self._last.values())))

    def at(self, t: float) -> float:
        """CPU seconds used by time t (linear between samples)."""
        s = self.samples
        if not s:
            return 0.0
        if t <= s[0][0]:
            return s[0][1]
        for (t0, c0), (t1, c1) in itertools.pairwise(s):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.0)
        return s[-1][1]


# --------------------------------------------------------------------------- statistics


def pct(values: Sequence[float], q: float) -> float | None:
    vals = sorted(v for v in values if math.isfinite(v))
    if not vals:
        return None
    pos = (len(vals) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def mean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if math.isfinite(v)]
    return sum(vals) / len(vals) if vals else None


def err_pct(measured: float | None, truth: float | None) -> float | None:
    if measured is None or truth is None or truth == 0:
        return None
    return 100 * (measured - truth) / truth


def r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(x, nd)


def schedule_delays(served: list[dict[str, Any]], concurrency: int) -> list[float]:
    """Server-side closed-loop schedule delay (ms): the (C+k)-th request arrival minus the
    k-th response completion, both sorted."""
    arrivals = sorted(s["t_arrive"] for s in served)
    ends = sorted(s["t_end"] for s in served if s["completed"])
    later = arrivals[concurrency:]
    return [1000 * (a - e) for a, e in zip(later, ends, strict=False)]


# --------------------------------------------------------------------------- one run


def _run_client(
    tool: peers.Tool, run: peers.Run, out: Path
) -> tuple[int, float, float, CpuSampler]:
    """Run the client to its exit with its process tree's CPU sampled: its exit code, its wall
    seconds, its CPU seconds (its own and its reaped children's rusage) and the sampler."""
    t_start = time.perf_counter()
    with open(out / "tool.log", "wb") as logf:
        proc = subprocess.Popen(
            tool.command(run), stdout=logf, stderr=subprocess.STDOUT, env=tool.env(), cwd=out
        )
        sampler = CpuSampler(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        sampler.stop.set()
        sampler.join()
    wall = time.perf_counter() - t_start
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, sampler


def _figures(
    served: list[dict[str, Any]],
    client: list[dict[str, Any]],
    sampler: CpuSampler,
    cpu_total: float,
    server_cpu: float,
    wall: float,
    c: int,
    script: dict[str, Any],
) -> dict[str, Any]:
    """A row's figures (module docstring): the client's view `client` against the server's
    records `served` of the same requests and against the `script`, and the client's CPU."""
    done = [s for s in served if s["completed"]]
    t_lo = min(s["t_arrive"] for s in served)
    t_hi = max(s["t_end"] for s in served)
    tokens = sum(s["tokens"] for s in served)
    cpu_inflight = sampler.at(t_hi) - sampler.at(t_lo)
    # From the first request to the client's exit: its per-request work, whether done while
    # streaming or afterwards (AIPerf's record processors, guidellm's report), without the
    # start-up that does not grow with the number of requests.
    cpu_work = cpu_total - sampler.at(t_lo)

    s_ttft = [1000 * (s["t_first"] - s["t_arrive"]) for s in done]
    s_itl = [1000 * (s["t_last"] - s["t_first"]) / (s["tokens"] - 1) for s in done]
    s_rate = [1000 / x for x in s_itl if x > 0]
    c_ttft = [x["ttft_ms"] for x in client]
    c_itl = [x["itl_ms"] for x in client if "itl_ms" in x]
    c_rate = [1000 / x for x in c_itl if x > 0]
    late = [1000 * (s["t_first"] - s["t_recv"]) - TTFT_MS for s in done]
    delays = schedule_delays(served, c)

    return {
        "ttft_err_pct": r(err_pct(mean(c_ttft), mean(s_ttft)), 3),
        "itl_err_pct": r(err_pct(mean(c_itl), mean(s_itl)), 3),
        "decode_err_pct": r(err_pct(mean(c_rate), mean(s_rate)), 3),
        "cpu_ms_per_1k_tokens": r(1e6 * cpu_work / tokens if tokens else None),
        "schedule_delay_p99_ms": r(pct(delays, 99)),
        "schedule_delay_p50_ms": r(pct(delays, 50)),
        "ttft_err_vs_script_pct": r(err_pct(mean(c_ttft), TTFT_MS), 3),
        "itl_err_vs_script_pct": r(err_pct(mean(c_itl), script["itl_ms"]), 3),
        "cpu_ms_per_1k_tokens_inflight": r(1e6 * cpu_inflight / tokens if tokens else None),
        "cpu_ms_per_1k_tokens_total": r(1e6 * cpu_total / tokens if tokens else None),
        "client_ttft_ms_mean": r(mean(c_ttft)),
        "server_ttft_ms_mean": r(mean(s_ttft)),
        "client_itl_ms_mean": r(mean(c_itl), 3),
        "server_itl_ms_mean": r(mean(s_itl), 3),
        "client_ttft_ms_p99": r(pct(c_ttft, 99)),
        "server_ttft_ms_p99": r(pct(s_ttft, 99)),
        "client_requests_ok": len(client),
        "client_tokens": int(sum(x["tokens"] for x in client)),
        "server_requests": len(served),
        "server_tokens": tokens,
        "server_late_p99_ms": r(pct(late, 99)),
        "server_read_lag_p99_ms": r(
            pct([1000 * (s["t_read"] - s["t_arrive"]) for s in served], 99)
        ),
        "server_cpu_pct": r(100 * server_cpu / (t_hi - t_lo) if t_hi > t_lo else None, 1),
        "window_s": r(t_hi - t_lo),
        "wall_s": r(wall),
        "script": script,
    }


def run_one(
    tool: peers.Tool, server: Server, c: int, n_req: int, work: Path, tokenizer: Path
) -> dict[str, Any]:
    """One client at concurrency `c` for `n_req` requests against the scripted server: its
    row (the figures, or why there are none)."""
    itl = itl_for(c)
    script = {"ttft_ms": TTFT_MS, "itl_ms": itl, "tokens": TOKENS, "chunk_tokens": CHUNK_TOKENS}
    http(server.url + "/_bench/script", script)
    http(server.url + "/_bench/reset", {})
    before = http(server.url + "/_bench/records")["server_cpu_s"]
    out = work / f"{tool.name.replace('@', '-at-')}-c{c}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    run = peers.Run(
        url=server.url,
        alias=server.alias,
        concurrency=c,
        requests=n_req,
        prompt_tokens=PROMPT_TOKENS,
        output_tokens=TOKENS,
        out=out,
        tokenizer=tokenizer,
    )
    returncode, wall, cpu_total, sampler = _run_client(tool, run, out)
    dump = http(server.url + "/_bench/records")
    served = dump["records"]
    server_cpu = dump["server_cpu_s"] - before
    row: dict[str, Any] = {"tool": tool.name, "concurrency": c, "requests": n_req}
    if returncode != 0 or not served:
        tail = (out / "tool.log").read_text(errors="replace")[-2000:]
        row["error"] = f"exit {returncode}; log tail: {tail}"
        log(f"{tool.name} c={c} failed: exit {returncode}")
        return row
    try:
        client = tool.parse(run)
    except (OSError, ValueError, KeyError) as exc:
        row["error"] = f"could not parse its output: {type(exc).__name__}: {exc}"
        return row

    row.update(_figures(served, client, sampler, cpu_total, server_cpu, wall, c, script))
    if tool.name.startswith("benchkit"):
        meta = json.loads((out / "meta.json").read_text())
        row["client"] = meta.get("client")
        row["client_schedule_delay_p99_ms"] = r(pct(peers.benchkit_schedule_delays(run), 99))
    log(
        f"{tool.name:8s} c={c:<3d} ttft {row['ttft_err_pct']:+.2f}%  itl {row['itl_err_pct']:+.2f}%"
        f"  cpu {row['cpu_ms_per_1k_tokens']} ms/1k  sched p99 {row['schedule_delay_p99_ms']} ms"
        f"  (server {row['server_cpu_pct']}% cpu, wall {wall:.0f} s)"
    )
    return row


def scripted_table(
    tools: Sequence[str], concurrencies: Sequence[int], smoke: bool, work: Path
) -> list[dict[str, Any]]:
    if any(not t.startswith("benchkit") for t in tools):
        peers.ensure_venv(log)
    tokenizer = peers.write_tokenizer(work / "tokenizer")
    server = Server()
    rows = []
    try:
        for c in concurrencies:
            for name in tools:
                tool = (
                    peers.benchkit_from(Path(name.split("@", 1)[1]))
                    if name.startswith("benchkit@")
                    else peers.TOOLS[name]
                )
                rows.append(run_one(tool, server, c, requests_for(c, smoke), work, tokenizer))
    finally:
        server.close()
    add_ratios(rows)
    return rows


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """benchkit's CPU per 1k tokens over the best peer's, per concurrency (< 1: benchkit wins)."""
    for c in {row["concurrency"] for row in rows}:
        at = [x for x in rows if x["concurrency"] == c and x.get("cpu_ms_per_1k_tokens")]
        peers_cpu = [x["cpu_ms_per_1k_tokens"] for x in at if not x["tool"].startswith("benchkit")]
        for x in at:
            if peers_cpu:
                x["cpu_vs_best_peer"] = r(x["cpu_ms_per_1k_tokens"] / min(peers_cpu), 3)


# --------------------------------------------------------------------------- machine


def machine() -> dict[str, Any]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "uptime": uptime,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def git_state() -> str:
    try:
        return subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def proposed_copy(patch: Path, work: Path) -> Path:
    """A scratch copy of benchkit/ with `patch` applied (named benchkit+patch in the rows)."""
    dest = work / "benchkit+patch"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(REPO / "benchkit", dest / "benchkit")
    for extra in ("conf", "templates", "fixtures"):
        (dest / extra).symlink_to(REPO / extra)
    subprocess.run(["git", "apply", "-p1", str(patch.resolve())], cwd=dest, check=True)
    return dest


def _f(x: Any, fmt: str = "{:.2f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def markdown(doc: dict[str, Any]) -> str:
    """The committed JSON as the tables of docs/perf/README.md."""
    out = []
    rows = doc.get("rows") or []
    if rows:
        out.append(
            "| tool | streams | TTFT err % | ITL err % | decode err % | CPU ms / 1k tok "
            "| vs best peer | sched. delay p50 / p99 ms | TTFT err vs script % |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for x in sorted(rows, key=lambda x: (x["concurrency"], x["tool"])):
            if "error" in x:
                out.append(f"| {x['tool']} | {x['concurrency']} | failed: {x['error'][:80]} |")
                continue
            out.append(
                f"| {x['tool']} | {x['concurrency']} | {_f(x['ttft_err_pct'], '{:+.2f}')} "
                f"| {_f(x['itl_err_pct'], '{:+.2f}')} | {_f(x['decode_err_pct'], '{:+.2f}')} "
                f"| {_f(x['cpu_ms_per_1k_tokens'], '{:.1f}')} "
                f"| {_f(x.get('cpu_vs_best_peer'), '{:.2f}')} "
                f"| {_f(x['schedule_delay_p50_ms'], '{:.1f}')} / "
                f"{_f(x['schedule_delay_p99_ms'], '{:.1f}')} "
                f"| {_f(x['ttft_err_vs_script_pct'], '{:+.2f}')} |"
            )
    llama = doc.get("llama_server")
    if llama and llama.get("jobs"):
        out.append("")
        out.append(
            "| slots | calls | call ms p50 / p99 | overhead ms p50 / p99 | queue ms p50 / p99 "
            "| server untimed ms p50 / p99 | delivery ms p50 / p99 | overhead share p50 |"
        )
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for j in llama["jobs"]:

            def pp(k: str, j: dict[str, Any] = j) -> str:
                return f"{_f(j[k]['p50'], '{:.1f}')} / {_f(j[k]['p99'], '{:.1f}')}"

            out.append(
                f"| {j['slots']} | {j['calls']} | {pp('call_ms')} | {pp('overhead_ms')} "
                f"| {pp('queue_ms')} | {pp('server_untimed_ms')} | {pp('delivery_ms')} "
                f"| {_f(j['overhead_share_pct_p50'], '{:.1f}')} % |"
            )
    rs = doc.get("report_scale")
    if rs:
        out.append("")
        out.append("| jobs | calls / job | on disk MB | report wall s | CPU s | peak RSS MiB |")
        out.append("|---:|---:|---:|---:|---:|---:|")
        out.append(
            f"| {rs['jobs']} | {rs['calls_per_job']} | {rs['bytes_on_disk'] / 1e6:.0f} "
            f"| {rs['wall_s']} | {rs['cpu_s']} | {rs['peak_rss_mib']} |"
        )
    m = doc.get("machine") or {}
    out.append("")
    out.append(f"Machine: {m.get('cpu_model')}, {m.get('cores')} cores; `{m.get('uptime')}`")
    return "\n".join(out) + "\n"


def build_parser() -> Parser:
    ap = Parser(
        prog="python bench/harness.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    ap.add_argument("--all", action="store_true", help="scripted table, llama-server, report")
    ap.add_argument("--smoke", action="store_true", help="fewer requests, concurrency 1,8,64")
    ap.add_argument(
        "--tools",
        default="benchkit,benchkit-httpx,guidellm,aiperf",
        help="comma list; benchkit@DIR imports benchkit from DIR (a scratch copy) instead",
    )
    ap.add_argument(
        "--concurrency",
        type=bounded_list(int, 1, 4096, means="calls in flight per client"),
        default=None,
        help="comma list (default 1,8,64,256,512)",
    )
    ap.add_argument("--llama", action="store_true", help="overhead against a real llama-server")
    ap.add_argument("--report-scale", action="store_true", help="1,000-job report timing")
    ap.add_argument("--out", type=Path, default=Path("docs/perf/harness/harness.json"))
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: temp)")
    ap.add_argument(
        "--proposed",
        type=Path,
        default=None,
        help="a patch to benchkit/: also measure a scratch copy with it applied ('benchkit+patch')",
    )
    ap.add_argument("--markdown", type=Path, default=None, help="print the tables of a JSON")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())), end="")
        return 0

    work = args.work or Path(tempfile.mkdtemp(prefix="benchkit-harness-"))
    work.mkdir(parents=True, exist_ok=True)
    conc = args.concurrency or ([1, 8, 64] if args.smoke else list(CONCURRENCY))
    doc: dict[str, Any] = {
        "machine_before": machine(),
        "git": git_state(),
        "command": " ".join(["python", "bench/harness.py", *(argv or sys.argv[1:])]),
    }
    scripted = args.all or not (args.llama or args.report_scale)
    tools = args.tools.split(",")
    if args.proposed:
        tools.append(f"benchkit@{proposed_copy(args.proposed, work)}")
        doc["proposed_patch"] = str(args.proposed)
    if scripted:
        doc["rows"] = scripted_table(tools, conc, args.smoke, work)
    if args.all or args.llama:
        import llama_overhead

        doc["llama_server"] = llama_overhead.run(work / "llama", smoke=args.smoke, log=log)
    if args.all or args.report_scale:
        import report_scale

        doc["report_scale"] = report_scale.run(
            work / "report-scale", jobs=100 if args.smoke else 1000, calls=200, log=log
        )
    doc["machine"] = machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    log(f"wrote {args.out} (work in {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

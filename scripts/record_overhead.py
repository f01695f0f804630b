"""Measure what the recording proxy adds to time-to-first-token, against a running server.

    python scripts/record_overhead.py --upstream http://127.0.0.1:8080 [-n 100]

Starts `python -m benchkit.workload record` in front of the upstream (into a temporary
directory, deleted after), then sends the same small streaming chat call alternately
direct and through the recorder, n times each, on keep-alive connections. TTFT is request
sent -> first content chunk received. The prompt repeats, so the server serves it from its
prompt cache and the difference is the proxy's, not prefill noise. Prints the medians and
the median of the paired differences (proxied - direct of neighbouring calls).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

BODY = {
    "messages": [{"role": "user", "content": "Say something short."}],
    "max_tokens": 2,
    "temperature": 0,
    "stream": True,
}


async def ttft(client: httpx.AsyncClient, url: str) -> float:
    try:
        return await _ttft(client, url)
    except httpx.RemoteProtocolError:
        # llama-server closes a connection idle for 5 s; httpx may reuse it as it closes.
        return await _ttft(client, url)


async def _ttft(client: httpx.AsyncClient, url: str) -> float:
    t0 = time.perf_counter()
    first: float | None = None
    async with client.stream("POST", url + "/v1/chat/completions", json=BODY) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if first is None and line.startswith("data: {") and '"content":"' in line:
                first = time.perf_counter() - t0
    if first is None:
        raise RuntimeError("no content chunk")
    return first * 1000


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("-n", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchkit.workload", "record", "--upstream", args.upstream,
            "--listen", "0", "--out", str(Path(tmp) / "fx"), stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        line = (await proc.stderr.readline()).decode()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            print(line, file=sys.stderr)
            return 1
        proxy = m.group(1)
        try:
            direct_ms: list[float] = []
            proxied_ms: list[float] = []
            async with httpx.AsyncClient(timeout=60) as client:
                for _ in range(5):  # warm both paths: connections, prompt cache
                    await ttft(client, args.upstream)
                    await ttft(client, proxy)
                for i in range(args.n):
                    # Alternate which goes first so drift in server load hits both alike.
                    if i % 2:
                        proxied_ms.append(await ttft(client, proxy))
                        direct_ms.append(await ttft(client, args.upstream))
                    else:
                        direct_ms.append(await ttft(client, args.upstream))
                        proxied_ms.append(await ttft(client, proxy))
        finally:
            proc.send_signal(signal.SIGINT)
            await proc.wait()
    diffs = [p - d for p, d in zip(proxied_ms, direct_ms, strict=True)]
    q = statistics.quantiles
    out = {
        "n": args.n,
        "direct_ttft_ms_median": statistics.median(direct_ms),
        "proxied_ttft_ms_median": statistics.median(proxied_ms),
        "added_ms_median_of_pairs": statistics.median(diffs),
        "added_ms_p10_p90_of_pairs": [q(diffs, n=10)[0], q(diffs, n=10)[-1]],
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

"""Drive benchkit's own replay client (`benchkit.client.replay.Replayer`) at one concurrency.

Run as its own process by bench/harness.py, so that its CPU time is the client's alone and is
measured exactly as the peers' is (process and children, from outside). The workload is
`requests` units of one call each (prompt `prompt_tokens` token ids, `output_tokens` forced
by output_policy=replay), replayed by `concurrency` closed-loop workers; benchkit writes its
calls.jsonl as it does in a real job, and that file is what the harness reads.
`--client httpx` makes it take the httpx path (benchkit's fallback for https, proxies and
platforms without SO_TIMESTAMPNS) instead of the raw HTTP/1.1 one; meta.json says which
path measured.

    python bench/run_benchkit.py --url http://127.0.0.1:8399 --alias scripted \
        --concurrency 64 --requests 128 --out /tmp/bk
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchkit.config.schema import OutputPolicy
from benchkit.server.plan import ReplaySpec
from benchkit.workload import Call, Segment, Unit, Workload

try:
    from benchkit.client.replay import RecordSink, Replayer
except ImportError:  # a checkout from before benchkit/client/ (benchkit@DIR)
    from benchkit.replay import RecordSink, Replayer  # type: ignore[no-redef]


def workload(requests: int, prompt_tokens: int, output_tokens: int, chat: bool) -> Workload:
    units = []
    for i in range(requests):
        uid = f"u{i:05d}"
        call = Call(
            unit=uid,
            seq=0,
            role="bench",
            segments=None if chat else (Segment(None, prompt_tokens),),
            text=None,
            messages=({"role": "user", "content": " ".join(["hi"] * prompt_tokens)},)
            if chat
            else None,
            max_tokens=output_tokens,
            completion_tokens=output_tokens,
            recorded_prompt_tokens=prompt_tokens,
            line=i + 1,
        )
        units.append(Unit(id=uid, calls=(call,)))
    return Workload(
        name="bench",
        kind="chat" if chat else "tokens",
        cap=output_tokens,
        output_policy="replay",
        description="bench/run_benchkit.py",
        path=Path("."),
        units=tuple(units),
        recipe=None,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="benchkit's replay client at one concurrency")
    ap.add_argument("--url", required=True)
    ap.add_argument("--alias", required=True)
    ap.add_argument("--concurrency", type=int, required=True)
    ap.add_argument("--requests", type=int, required=True)
    ap.add_argument("--prompt-tokens", type=int, default=32)
    ap.add_argument("--output-tokens", type=int, default=64)
    ap.add_argument("--chat", action="store_true")
    ap.add_argument("--client", choices=("auto", "httpx"), default="auto")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    spec = ReplaySpec(
        workers=args.concurrency,
        output_policy=OutputPolicy.replay,
        cap=args.output_tokens,
        sampling={"temperature": 0.0},
        stall_timeout_s=120.0,
        job_deadline_s=None,
        units=None,
        repeats=1,
    )
    sink = RecordSink(args.out / "calls.jsonl")
    t0 = time.perf_counter()
    # Passed only when asked for, so that an older benchkit (benchkit@DIR) still runs.
    extra = {} if args.client == "auto" else {"client": args.client}
    rep = Replayer(
        base_url=args.url,
        alias=args.alias,
        spec=spec,
        workload=workload(args.requests, args.prompt_tokens, args.output_tokens, args.chat),
        n_vocab=320,
        sink=sink,
        progress=False,
        t0=t0,
        **extra,
    )
    outcome = rep.run()
    sink.close()
    # t0 turns benchkit's times (seconds since t0) into the shared monotonic clock.
    meta = {
        "t0": t0,
        "wall_s": outcome.wall_s,
        "interrupted": outcome.interrupted,
        "client": getattr(outcome, "client", "httpx"),
        "client_fallback": getattr(outcome, "client_fallback", None),
    }
    (args.out / "meta.json").write_text(json.dumps(meta))
    return 0 if outcome.interrupted is None else 1


if __name__ == "__main__":
    sys.exit(main())

"""Summarise a loaded workload: sizes, length statistics, cap hits and prefix sharing."""

from __future__ import annotations

from typing import TypedDict

from benchkit.workload.model import Call, Workload


def shared_prefix_tokens(calls: tuple[Call, ...]) -> int | None:
    """Prompt tokens a prefix cache could reuse, taking the calls one after another.

    A call's reusable part is its longest run of leading keyed segments that is also the
    leading run of some earlier call (llama-server reuses a common prefix, not a segment
    seen elsewhere after different tokens). This is an upper bound: a real server with
    several slots keeps only a few prefixes. None for fixtures without segments.
    """
    seen: set[tuple[str, ...]] = set()
    total = 0
    for c in calls:
        if c.segments is None:
            return None
        prefix: tuple[str, ...] = ()
        hit = True
        for s in c.segments:
            if s.key is None:
                break
            prefix = (*prefix, s.key)
            if hit and prefix in seen:
                total += s.length
            else:
                hit = False
            seen.add(prefix)
    return total


class WorkloadStats(TypedDict):
    """What `python -m benchkit.workload stats --json` prints (its keys are a contract)."""

    units: int
    calls: int
    calls_per_unit_min: int
    calls_per_unit_max: int
    prompt_tokens: int | None
    prompt_tokens_mean: float | None
    prompt_tokens_max: int | None
    completion_tokens: int
    completion_tokens_mean: float | None
    io_ratio: float | None
    capped_calls: int
    shared_prefix_share: float | None


def _r(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def compute(w: Workload) -> WorkloadStats:
    """The statistics as a JSON-ready dict (keys are a contract; see the module CLI)."""
    calls = w.calls
    per_unit = [len(u.calls) for u in w.units]
    prompt = w.prompt_tokens
    completion = w.completion_tokens
    shared = shared_prefix_tokens(calls)
    return {
        "units": len(w.units),
        "calls": len(calls),
        "calls_per_unit_min": min(per_unit),
        "calls_per_unit_max": max(per_unit),
        "prompt_tokens": prompt,
        "prompt_tokens_mean": _r(None if prompt is None else prompt / len(calls), 1),
        "prompt_tokens_max": w.max_prompt_tokens,
        "completion_tokens": completion,
        "completion_tokens_mean": _r(completion / len(calls), 1),
        "io_ratio": _r(None if prompt is None else prompt / completion, 2),
        "capped_calls": w.capped_calls,
        "shared_prefix_share": _r(None if shared is None or not prompt else shared / prompt, 4),
    }


def render_text(w: Workload, s: WorkloadStats) -> str:
    """The statistics as a few aligned lines for people."""

    def n(x: float | None) -> str:
        if x is None:
            return "unknown"
        return f"{x:,}" if isinstance(x, int) else f"{x:,.1f}"

    share = s["shared_prefix_share"]
    lines = [
        f"fixture        {w.name} ({w.kind}, output policy {w.output_policy}, cap {w.cap:,}) "
        f"at {w.path}, fingerprint {w.fingerprint()}",
        f"units          {s['units']}",
        f"calls          {s['calls']} "
        f"({s['calls_per_unit_min']}..{s['calls_per_unit_max']} a unit)",
        f"prompt tokens  total {n(s['prompt_tokens'])}, mean {n(s['prompt_tokens_mean'])}, "
        f"max {n(s['prompt_tokens_max'])}",
        f"completion     total {n(s['completion_tokens'])}, mean {n(s['completion_tokens_mean'])}",
        "io ratio       "
        + (
            "unknown" if s["io_ratio"] is None else f"{s['io_ratio']:.2f} : 1 (prompt : completion)"
        ),
        f"capped calls   {s['capped_calls']} (completion ran to max_tokens)",
        "shared prefix  "
        + (
            "unknown (no segments)"
            if share is None
            else f"{share:.1%} of prompt tokens (upper bound on prefix-cache reuse, file order)"
        ),
    ]
    return "\n".join(lines) + "\n"

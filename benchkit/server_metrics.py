"""Read llama-server's `/metrics` (Prometheus text) into plain numbers, without a network call.

The server's own counters are a second witness beside the per-call timings the client adds
up: they count what the server did, including speculative drafting, whatever the client saw.
Counters run from the server's start, and each pass of a job starts a fresh server, so the
values read at the end of a pass are that pass's totals. llama-server (b11434) prints them
with C++'s default 6 significant digits, so a counter past 999,999 is rounded (1234567 reads
1.23457e+06): prefer the per-call timings for exact token counts.
"""

from __future__ import annotations

import math
import re
from typing import Any

# One sample line: name, optional {labels}, value, optional timestamp (ignored).
_SAMPLE = re.compile(
    r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)"
    r"(?:\{(?P<labels>[^}]*)\})?"
    r"\s+(?P<value>\S+)"
    r"(?:\s+-?\d+)?\s*$"
)
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')

_PREFIX = "llamacpp:"


def parse_prometheus(text: str) -> dict[str, float]:
    """Every sample in a Prometheus text exposition, keyed by name, or by
    `name{k="v",...}` (labels sorted) for labelled samples. Comments and blank lines are
    skipped; a line that is not a sample raises ValueError naming it."""
    out: dict[str, float] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            raise ValueError(f"line {n} of the metrics text is not a sample: {raw!r}")
        key = m["name"]
        if m["labels"] is not None:
            labels = sorted(_LABEL.findall(m["labels"]))
            if labels:
                key += "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"
        out[key] = _number(m["value"], n)
    return out


def _number(text: str, line: int) -> float:
    # Prometheus spells the specials +Inf, -Inf and NaN; Python's float() reads those too.
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"line {line} of the metrics text has no number: {text!r}") from None


def server_counters(samples: dict[str, float]) -> dict[str, Any]:
    """llama-server's counters as result fields; absent counters are None, not zero.

    `draft_acceptance` = accepted / drafted tokens (None when nothing was drafted), the
    server's view of what measure.py computes from per-call timings.
    `draft_acceptance_by_position[i]` = accepted at draft position i / verification steps.
    """

    def get(name: str) -> float | None:
        return samples.get(_PREFIX + name)

    def count(name: str) -> int | None:
        v = get(name)
        return None if v is None or math.isnan(v) else int(v)

    drafted = count("spec_decode_num_draft_tokens_total")
    accepted = count("spec_decode_num_accepted_tokens_total")
    steps = count("spec_decode_num_drafts_total")
    by_pos: dict[int, int] = {}
    pos_re = re.compile(
        re.escape(_PREFIX + "spec_decode_num_accepted_tokens_per_pos_total")
        + r'\{position="(\d+)"\}$'
    )
    for key, value in samples.items():
        m = pos_re.match(key)
        if m:
            by_pos[int(m[1])] = int(value)
    positions = [by_pos.get(i, 0) for i in range(max(by_pos) + 1)] if by_pos else []
    return {
        "prompt_tokens": count("prompt_tokens_total"),
        "prompt_tokens_cached": count("prompt_tokens_cached_total"),
        "prompt_seconds": get("prompt_seconds_total"),
        "tokens_predicted": count("tokens_predicted_total"),
        "tokens_predicted_seconds": get("tokens_predicted_seconds_total"),
        "n_decode": count("n_decode_total"),
        "n_tokens_max": count("n_tokens_max"),
        "busy_slots_per_decode": get("n_busy_slots_per_decode"),
        "draft_tokens": drafted,
        "draft_tokens_accepted": accepted,
        "draft_steps": steps,
        "draft_acceptance": (accepted / drafted) if drafted and accepted is not None else None,
        "draft_accepted_by_position": positions,
        "draft_acceptance_by_position": (
            [a / steps for a in positions] if steps and positions else []
        ),
    }

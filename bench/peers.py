"""The clients compared: benchkit's replay client, guidellm and NVIDIA AIPerf.

benchkit runs twice: `benchkit` as a job runs it (the raw HTTP/1.1 path with kernel receive
times, benchkit/client/transport.py) and `benchkit-httpx` on its httpx path, which is what a job
falls back to for https, a proxy or a platform without SO_TIMESTAMPNS, and what benchkit
used for every call before the raw path shipped.

Each client is a command line run as its own process (so its CPU time is its own, children
included) plus a parser that turns what it wrote into per-request measurements:
`ttft_ms`, `itl_ms` and `tokens`, by the tool's own definitions. guidellm and AIPerf live
in a separate virtual environment (~/.cache/benchkit/bench-venv) that `ensure_venv` makes;
they are not benchkit's dependencies.

Offline: neither peer may reach a model hub here. Both take a local Hugging Face tokenizer
folder, which `write_tokenizer` makes (a whitespace word-level vocabulary that counts the
scripted server's tokens exactly); AIPerf is told to count tokens from the server's `usage`
(`--use-server-token-count`), guidellm does so by default. `HF_HUB_OFFLINE` must stay unset
for AIPerf 0.13: with it set, AIPerf resolves even a local folder through the hub cache and
fails ("Repo id must be in the form ...").
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV = Path.home() / ".cache" / "benchkit" / "bench-venv"
PINS = ("guidellm==0.8.1", "aiperf==0.13.0", "py-spy==0.4.3")


def venv_bin(name: str) -> Path:
    return VENV / "bin" / name


def ensure_venv(log: Callable[[str], None] = print) -> None:
    """Create the peers' venv and install the pinned tools there, unless already done."""
    stamp = VENV / ".benchkit-pins"
    if stamp.exists() and stamp.read_text() == "\n".join(PINS):
        return
    if not (VENV / "bin" / "python").exists():
        log(f"creating {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    log(f"installing {' '.join(PINS)} into {VENV} (several minutes the first time)")
    py = str(VENV / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", *PINS], check=True)
    stamp.write_text("\n".join(PINS))


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character map (what a ByteLevel BPE vocabulary is made of)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1))
    bs += list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs), strict=True))


def write_tokenizer(path: Path) -> Path:
    """A Hugging Face tokenizer folder: byte-level BPE with no merges (one token a byte).

    It loads offline, encodes and decodes any text, so the peers can synthesise prompts of a
    given length from their own corpora. Token counts of the answers come from the server's
    `usage` for every client here, never from this tokenizer."""
    path.mkdir(parents=True, exist_ok=True)
    vocab = {ch: i for i, ch in enumerate(_bytes_to_unicode().values())}
    vocab["<|endoftext|>"] = len(vocab)
    tok: dict[str, Any] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": vocab["<|endoftext|>"],
                "content": "<|endoftext|>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                    "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": [],
        },
    }  # fmt: skip
    (path / "tokenizer.json").write_text(json.dumps(tok))
    cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|endoftext|>",
        "bos_token": "<|endoftext|>",
        "model_max_length": 1_000_000,
    }
    (path / "tokenizer_config.json").write_text(json.dumps(cfg))
    return path


@dataclass(frozen=True)
class Run:
    """One client run: where the server is, what to ask, where to write."""

    url: str
    alias: str
    concurrency: int
    requests: int
    prompt_tokens: int
    output_tokens: int
    out: Path
    tokenizer: Path


@dataclass(frozen=True)
class Tool:
    name: str
    command: Callable[[Run], list[str]]
    parse: Callable[[Run], list[dict[str, float]]]
    env: Callable[[], dict[str, str]]


# --------------------------------------------------------------------------- benchkit


def _benchkit_cmd(r: Run, client: str = "auto") -> list[str]:
    return [
        sys.executable,
        str(REPO / "bench" / "run_benchkit.py"),
        "--url", r.url,
        "--alias", r.alias,
        "--concurrency", str(r.concurrency),
        "--requests", str(r.requests),
        "--prompt-tokens", str(r.prompt_tokens),
        "--output-tokens", str(r.output_tokens),
        "--out", str(r.out),
        "--client", client,
    ]  # fmt: skip


def _benchkit_httpx_cmd(r: Run) -> list[str]:
    return _benchkit_cmd(r, "httpx")


def _benchkit_parse(r: Run) -> list[dict[str, float]]:
    """benchkit's definitions (benchkit/measure/calls.py): TTFT = t_first - t_sent,
    ITL = (t_last - t_first) / (completion_tokens - 1)."""
    out = []
    for line in (r.out / "calls.jsonl").read_text().splitlines():
        c = json.loads(line)
        if not c["ok"] or c["t_first"] is None:
            continue
        n = c["completion_tokens"] or 0
        row = {"ttft_ms": 1000 * (c["t_first"] - c["t_sent"]), "tokens": float(n)}
        if n > 1:
            row["itl_ms"] = 1000 * (c["t_last"] - c["t_first"]) / (n - 1)
        out.append(row)
    return out


def benchkit_schedule_delays(r: Run) -> list[float]:
    """benchkit's own view: t_sent of a worker's call minus t_done of that worker's previous."""
    calls = [json.loads(line) for line in (r.out / "calls.jsonl").read_text().splitlines()]
    by_worker: dict[int, list[dict[str, Any]]] = {}
    for c in calls:
        by_worker.setdefault(c["worker"], []).append(c)
    delays = []
    for recs in by_worker.values():
        recs.sort(key=lambda c: c["t_sent"])
        for prev, nxt in itertools.pairwise(recs):
            delays.append(1000 * (nxt["t_sent"] - prev["t_done"]))
    return delays


# --------------------------------------------------------------------------- guidellm


def _guidellm_cmd(r: Run) -> list[str]:
    return [
        str(venv_bin("guidellm")),
        "run",
        "--backend",
        f"kind=openai_http,target={r.url},model={r.alias},request_format=/v1/completions",
        "--profile", f"kind=concurrent,streams={r.concurrency}",
        "--constraint", f"kind=max_requests,count={r.requests}",
        "--data",
        f"kind=synthetic_text,prompt_tokens={r.prompt_tokens},output_tokens={r.output_tokens}",
        "--tokenizer", f"kind=huggingface_auto,model={r.tokenizer}",
        "--output", f"kind=json,path={r.out / 'guidellm.json'}",
        "--disable-console-interactive",
    ]  # fmt: skip


def _guidellm_parse(r: Run) -> list[dict[str, float]]:
    """guidellm's per-request timings: TTFT = first_token_iteration - request_start,
    ITL = (last_token_iteration - first_token_iteration) / (output tokens - 1)."""
    data = json.loads((r.out / "guidellm.json").read_text())
    out = []
    for b in data["benchmarks"]:
        for req in b["requests"]["successful"]:
            t = req["info"]["timings"]
            n = (req.get("output_metrics") or {}).get("text_tokens") or 0
            if t.get("first_token_iteration") is None:
                continue
            row = {
                "ttft_ms": 1000 * (t["first_token_iteration"] - t["request_start"]),
                "tokens": float(n),
            }
            if n > 1:
                span = t["last_token_iteration"] - t["first_token_iteration"]
                row["itl_ms"] = 1000 * span / (n - 1)
            out.append(row)
    return out


# --------------------------------------------------------------------------- AIPerf


def _aiperf_cmd(r: Run) -> list[str]:
    return [
        str(venv_bin("aiperf")),
        "profile",
        "--model", r.alias,
        "--url", r.url,
        "--endpoint-type", "completions",
        "--streaming",
        "--concurrency", str(r.concurrency),
        "--request-count", str(r.requests),
        "--isl", str(r.prompt_tokens),
        "--osl", str(r.output_tokens),
        "--tokenizer", str(r.tokenizer),
        "--use-server-token-count",
        "--no-server-metrics",
        "--no-gpu-telemetry",
        "--ui", "none",
        "--artifact-dir", str(r.out / "aiperf"),
    ]  # fmt: skip


def _aiperf_parse(r: Run) -> list[dict[str, float]]:
    """AIPerf's own per-request metrics (profile_export.jsonl): time_to_first_token,
    inter_token_latency, output_token_count."""
    out = []
    path = r.out / "aiperf" / "profile_export.jsonl"
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        m = rec.get("metrics") or {}
        if rec.get("metadata", {}).get("benchmark_phase") not in (None, "profiling"):
            continue
        if "time_to_first_token" not in m or rec.get("error"):
            continue
        row = {
            "ttft_ms": float(m["time_to_first_token"]["value"]),
            "tokens": float((m.get("output_token_count") or {}).get("value") or 0),
        }
        if "inter_token_latency" in m:
            row["itl_ms"] = float(m["inter_token_latency"]["value"])
        out.append(row)
    return out


def _env_plain() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    env["NO_COLOR"] = "1"
    return env


def benchkit_from(path: Path) -> Tool:
    """benchkit's client imported from another checkout (a scratch copy with a proposed
    change), named after the folder (`benchkit+patch`) or `benchkit@<folder>` in the rows."""

    def env() -> dict[str, str]:
        e = _env_plain()
        e["PYTHONPATH"] = str(path)
        return e

    name = path.name if path.name.startswith("benchkit") else f"benchkit@{path.name}"
    return Tool(name, _benchkit_cmd, _benchkit_parse, env)


TOOLS: dict[str, Tool] = {
    "benchkit": Tool("benchkit", _benchkit_cmd, _benchkit_parse, _env_plain),
    "benchkit-httpx": Tool("benchkit-httpx", _benchkit_httpx_cmd, _benchkit_parse, _env_plain),
    "guidellm": Tool("guidellm", _guidellm_cmd, _guidellm_parse, _env_plain),
    "aiperf": Tool("aiperf", _aiperf_cmd, _aiperf_parse, _env_plain),
}

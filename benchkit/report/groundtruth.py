"""Reference figures beside a sweep: the decode roofline per job, and agreement with llama.cpp's
own benchmarks (llama-bench, llama-batched-bench) run on the same binary and model. Pure.

The roofline: one sequence's decode reads every active weight once per token, so memory
bandwidth / (active parameters x bytes per weight) bounds single-stream decode. Bytes per
weight come from the model file's size over its parameter count.

Ground truth is read from `<sweep>/ground-truth/llama-bench.json` (llama-bench -o json) and
`<sweep>/ground-truth/batched-bench.jsonl` (llama-batched-bench --output-format jsonl).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchkit.results import JobResult

GROUND_TRUTH_DIR = "ground-truth"


def roofline_rows(results: Sequence[JobResult]) -> list[dict[str, Any]]:
    """Per complete job with known bandwidth and parameters: ceiling and measured share."""
    rows = []
    for r in results:
        if r.status != "complete":
            continue
        hw = r.provenance.get("hardware") or {}
        model = r.provenance.get("model") or {}
        bw = hw.get("bandwidth_gbs")
        total_b, active_b = model.get("params_total_b"), model.get("params_active_b")
        size = model.get("file_bytes")
        if not (bw and total_b and active_b and size):
            continue
        bits = 8 * float(size) / (float(total_b) * 1e9)
        bytes_per_token = float(active_b) * 1e9 * bits / 8
        ceiling = float(bw) * 1e9 / bytes_per_token
        per_seq = r.metrics.get("server_decode_tok_s")
        rows.append(
            {
                "job": r.job_dir.name,
                "slots": r.factors.get("slots"),
                "bits_per_weight": bits,
                "gb_per_token": bytes_per_token / 1e9,
                "ceiling_tok_s": ceiling,
                "per_sequence_tok_s": per_seq,
                "share": (float(per_seq) / ceiling) if per_seq else None,
                "aggregate_tok_s": r.metrics.get("decode_tok_s"),
            }
        )
    return rows


def load_ground_truth(source: Path) -> dict[str, Any] | None:
    d = source / GROUND_TRUTH_DIR
    if not d.is_dir():
        return None
    out: dict[str, Any] = {"single": None, "batched": []}
    lb = d / "llama-bench.json"
    if lb.exists():
        for row in json.loads(lb.read_text()):
            if row.get("n_gen") and not row.get("n_prompt"):
                out["single"] = {"tg_tok_s": row["avg_ts"], "n_gen": row["n_gen"]}
            if row.get("n_prompt") and not row.get("n_gen"):
                out["pp_tok_s"] = row["avg_ts"]
                out["pp_n"] = row["n_prompt"]
    bb = d / "batched-bench.jsonl"
    if bb.exists():
        out["batched"] = [json.loads(x) for x in bb.read_text().splitlines() if x.strip()]
    return out


def agreement_rows(results: Sequence[JobResult], gt: dict[str, Any]) -> list[dict[str, Any]]:
    """Per slot count: benchkit's decode figures next to llama-batched-bench at that batch."""
    by_pl = {int(b["pl"]): b for b in gt.get("batched", [])}
    rows = []
    for r in sorted(
        (r for r in results if r.status == "complete"), key=lambda r: r.factors.get("slots", 0)
    ):
        slots = int(r.factors.get("slots") or 0)
        b = by_pl.get(slots)
        per_seq = r.metrics.get("server_decode_tok_s")
        ref = float(b["speed_tg"]) if b else None
        server_agg = per_seq * slots if per_seq else None
        rows.append(
            {
                "slots": slots,
                "benchkit_decode_tok_s": r.metrics.get("decode_tok_s"),
                "server_per_slot_tok_s": per_seq,
                "server_aggregate_tok_s": server_agg,
                "batched_bench_tg_tok_s": ref,
                "ratio": (server_agg / ref) if server_agg and ref else None,
            }
        )
    return rows

"""Reference figures beside a sweep: the decode roofline per job, and agreement with llama.cpp's
own benchmarks (llama-bench, llama-batched-bench) run on the same binary and model. Pure.

The roofline: one sequence's decode reads every active weight once per token, so memory
bandwidth / (active parameters x bytes per weight) bounds single-stream decode. Bytes per
weight come from the model file's size over its parameter count.

Ground truth is read from `<sweep>/ground-truth/llama-bench.json` (llama-bench -o json) and
`<sweep>/ground-truth/batched-bench*.jsonl` (llama-batched-bench --output-format jsonl), one
file per prompt/generation shape; the agreement table uses the file whose shape is nearest the
workload's mean call, since batched decode speed depends on the context it decodes over.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from benchkit.results import JobResult

GROUND_TRUTH_DIR = "ground-truth"


class RooflineRow(TypedDict):
    job: str
    slots: object
    bits_per_weight: float
    gb_per_token: float
    ceiling_tok_s: float
    per_sequence_tok_s: float | None
    share: float | None
    aggregate_tok_s: float | None


class BenchRow(TypedDict):
    """One line of llama-batched-bench's JSONL (the keys read here; the rest pass through)."""

    pp: int
    tg: int
    pl: int
    speed_tg: float


class BatchedSet(TypedDict):
    """One llama-batched-bench run: its file, prompt and generation shape, and rows."""

    file: str
    pp: int
    tg: int
    rows: list[BenchRow]
    backend: NotRequired[str]


class ChosenSet(BatchedSet):
    """The run nearest the workload's mean call, with that mean (None: unknown)."""

    call_prompt: float | None
    call_completion: float | None


class Single(TypedDict):
    tg_tok_s: float
    n_gen: int


class GroundTruth(TypedDict):
    """llama-bench and llama-batched-bench results of one folder; in the top folder of a
    sweep over backends, also each backend's own (ground-truth/<backend>/)."""

    single: Single | None
    batched: list[BatchedSet]
    pp_tok_s: float | None
    pp_n: int | None
    batched_sets: NotRequired[list[BatchedSet]]
    by_backend: NotRequired[dict[str, GroundTruth]]


class AgreementRow(TypedDict):
    slots: int
    config: str
    benchkit_decode_tok_s: float | None
    server_per_slot_tok_s: float | None
    server_aggregate_tok_s: float | None
    batched_bench_tg_tok_s: float | None
    ratio: float | None


def roofline_rows(results: Sequence[JobResult]) -> list[RooflineRow]:
    """Per complete job with known bandwidth and parameters: ceiling and measured share."""
    rows: list[RooflineRow] = []
    for r in results:
        if r.status != "complete":
            continue
        prov, metrics = r.result.provenance, r.result.metrics
        bw = prov.hardware.get("bandwidth_gbs")
        model = prov.model
        total_b = model.params_total_b if model else None
        active_b = model.params_active_b if model else None
        size = model.file_bytes if model else None
        if not (bw and total_b and active_b and size):
            continue
        bits = 8 * float(size) / (float(total_b) * 1e9)
        bytes_per_token = float(active_b) * 1e9 * bits / 8
        ceiling = float(bw) * 1e9 / bytes_per_token
        per_seq = metrics.server_decode_tok_s
        rows.append(
            {
                "job": r.job_dir.name,
                "slots": r.factors.get("slots"),
                "bits_per_weight": bits,
                "gb_per_token": bytes_per_token / 1e9,
                "ceiling_tok_s": ceiling,
                "per_sequence_tok_s": per_seq,
                "share": (float(per_seq) / ceiling) if per_seq else None,
                "aggregate_tok_s": metrics.decode_tok_s,
            }
        )
    return rows


def load_ground_truth(source: Path) -> GroundTruth | None:
    """The folder's ground truth. A sweep over backends keeps each backend's own runs in
    `ground-truth/<backend>/` (same file names): their batched sets then carry `backend`,
    so each job is compared with its own backend's binary."""
    d = source / GROUND_TRUTH_DIR
    if not d.is_dir():
        return None
    out = _load_runs(d)
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        runs = _load_runs(sub)
        for b in runs.get("batched_sets", []):
            b["file"], b["backend"] = f"{sub.name}/{b['file']}", sub.name
            out.setdefault("batched_sets", []).append(b)
        if runs["single"] or runs["pp_tok_s"]:
            out.setdefault("by_backend", {})[sub.name] = runs
    return out


def _load_runs(d: Path) -> GroundTruth:
    out: GroundTruth = {"single": None, "batched": [], "pp_tok_s": None, "pp_n": None}
    lb = d / "llama-bench.json"
    if lb.exists():
        for row in json.loads(lb.read_text()):
            if row.get("n_gen") and not row.get("n_prompt"):
                out["single"] = {"tg_tok_s": row["avg_ts"], "n_gen": row["n_gen"]}
            if row.get("n_prompt") and not row.get("n_gen"):
                out["pp_tok_s"] = row["avg_ts"]
                out["pp_n"] = row["n_prompt"]
    for bb in sorted(d.glob("batched-bench*.jsonl")):
        rows = [cast(BenchRow, json.loads(x)) for x in bb.read_text().splitlines() if x.strip()]
        if rows:
            out.setdefault("batched_sets", []).append(
                {"file": bb.name, "pp": int(rows[0]["pp"]), "tg": int(rows[0]["tg"]), "rows": rows}
            )
    return out


class BenchLine(TypedDict):
    """llama-bench's single-sequence figures of one build: `name` is its backend as the
    report names it, empty for the sweep's one build."""

    name: str
    single: Single | None
    pp_tok_s: float | None
    pp_n: int | None


def bench_lines(gt: GroundTruth, name: Callable[[str], str]) -> list[BenchLine]:
    """What llama-bench measured, per build: the sweep's own where it ran at the top, else
    each backend's (ground-truth/<backend>/). Only builds with a figure to show."""
    runs: list[tuple[str, GroundTruth]] = [("", gt)]
    if not (gt["single"] or gt["pp_tok_s"]):
        runs = [(name(b), r) for b, r in sorted((gt.get("by_backend") or {}).items())]
    return [
        {"name": n, "single": r["single"], "pp_tok_s": r["pp_tok_s"], "pp_n": r["pp_n"]}
        for n, r in runs
        if r["single"] or r["pp_tok_s"]
    ]


def _call_shape(results: Sequence[JobResult]) -> tuple[float, float] | None:
    """The workload's mean prompt and completion tokens per call."""
    for r in results:
        w = r.result.provenance.workload
        if w and w.calls and w.prompt_tokens and w.completion_tokens:
            return w.prompt_tokens / w.calls, w.completion_tokens / w.calls
    return None


def choose_batched(results: Sequence[JobResult], gt: GroundTruth) -> ChosenSet | None:
    """The llama-batched-bench run whose (prompt, generation) shape is nearest the workload's
    mean call (log distance), with that mean beside it; None without a run."""
    sets = gt.get("batched_sets") or []
    if not sets:
        return None
    shape = _call_shape(results)
    if shape is None:
        return {**sets[0], "call_prompt": None, "call_completion": None}
    p, c = shape

    def distance(b: BatchedSet) -> float:
        return abs(math.log(b["pp"] / p)) + abs(math.log(b["tg"] / c))

    best = min(sets, key=distance)
    return {**best, "call_prompt": p, "call_completion": c}


def _raw_label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in point.items())


def agreement_rows(
    results: Sequence[JobResult],
    gt: GroundTruth,
    label: Callable[[Mapping[str, Any]], str] = _raw_label,
) -> list[AgreementRow]:
    """Per job: benchkit's decode figures next to llama-batched-bench at that batch size, from
    the run chosen by choose_batched. `config` names the factors other than slots that vary,
    as `label` writes a point (the report: as its prose does, "CUDA, MTP off")."""
    chosen = choose_batched(results, gt)
    by_pl = {int(b["pl"]): b for b in (chosen["rows"] if chosen else [])}
    # Per backend: that backend's run of the chosen shape (ground-truth/<backend>/).
    by_backend = {
        str(b["backend"]): {int(x["pl"]): x for x in b["rows"]}
        for b in gt.get("batched_sets") or []
        if b.get("backend") and chosen and (b["pp"], b["tg"]) == (chosen["pp"], chosen["tg"])
    }
    done = [r for r in results if r.status == "complete"]
    varying = sorted(
        k
        for k in {k for r in done for k in r.factors} - {"slots"}
        if len({str(r.factors.get(k)) for r in done}) > 1
    )
    rows: list[AgreementRow] = []
    for r in sorted(done, key=lambda r: (r.factors.get("slots", 0), r.job_dir.name)):
        slots = int(r.result.factors.get("slots") or 0)
        if by_backend:
            b = by_backend.get(str(r.factors.get("backend")), {}).get(slots)
        else:
            b = by_pl.get(slots)
        per_seq = r.result.metrics.server_decode_tok_s
        ref = float(b["speed_tg"]) if b else None
        server_agg = per_seq * slots if per_seq else None
        rows.append(
            {
                "slots": slots,
                "config": label({k: r.factors.get(k) for k in varying}) if varying else "",
                "benchkit_decode_tok_s": r.result.metrics.decode_tok_s,
                "server_per_slot_tok_s": per_seq,
                "server_aggregate_tok_s": server_agg,
                "batched_bench_tg_tok_s": ref,
                "ratio": (server_agg / ref) if server_agg and ref else None,
            }
        )
    return rows


def _text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)

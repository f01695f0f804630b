"""Reference figures beside a sweep: the decode roofline per job, and agreement with llama.cpp's
own benchmarks (llama-bench, llama-batched-bench) run on the same binary and model. Pure.

The roofline: one sequence's decode step reads every active weight once and the keys and values
of its whole context, so memory bandwidth / (active weight bytes + KV cache bytes) bounds
single-stream decode. Bytes per weight come from the model file's size over its parameter
count; the KV bytes from the model's shape and the cache type (analysis.kv_read) at the mean
context of the job's decode steps, from its calls. Where the shape is not known the KV term is
not computed (None) and the ceiling counts the weights alone, which the report says.

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

from benchkit.report.analysis import kv_read
from benchkit.report.analysis.replayed import replayed
from benchkit.results import bounded
from benchkit.results.schema import ModelInfo
from benchkit.results.store import JobResult

GROUND_TRUTH_DIR = "ground-truth"


class RooflineRow(TypedDict):
    job: str
    # The job's point as the report names it (its varying factors), set where it is rendered.
    point: str
    slots: object
    bits_per_weight: float
    # The active weights' bytes, the mean context of a decode step (positions) and the KV
    # cache bytes read at it (None: not computed), and their sum, all per decoded token.
    weights_gb_per_token: float
    context: float | None
    kv_gb_per_token: float | None
    gb_per_token: float
    ceiling_tok_s: float
    per_sequence_tok_s: float | None
    # The server's mean sequences per decode step (busy slots per llama_decode call).
    seqs_per_step: float | None
    share: float | None
    aggregate_tok_s: float | None


class BenchRow(TypedDict):
    """One line of llama-batched-bench's JSONL (the keys read here; the rest pass through)."""

    pp: int
    tg: int
    pl: int
    speed_tg: float
    speed_pp: NotRequired[float]


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
    # The first repetition, left out of tg_tok_s when it ran cold (None: kept or not known).
    cold_first: NotRequired[float | None]


class GroundTruth(TypedDict):
    """llama-bench and llama-batched-bench results of one folder; in the top folder of a
    sweep over backends, also each backend's own (ground-truth/<backend>/)."""

    single: Single | None
    batched: list[BatchedSet]
    pp_tok_s: float | None
    pp_n: int | None
    pp_cold_first: NotRequired[float | None]
    batched_sets: NotRequired[list[BatchedSet]]
    by_backend: NotRequired[dict[str, GroundTruth]]


class AgreementRow(TypedDict):
    """One job against llama-batched-bench at the batch the server actually ran (its own
    sequences per step), interpolated between the measured batches around it."""

    slots: int
    config: str
    output_tok_s: float | None
    seqs_per_step: float | None
    server_per_slot_tok_s: float | None
    server_aggregate_tok_s: float | None
    batched_bench_tg_tok_s: float | None
    ratio: float | None
    source: str | None
    # The server reported no sequences per step (results from before benchkit read that
    # counter): compared at the slot count, an upper bound on the batch it ran.
    at_slots: bool
    # Why no comparison was made (a cold or anomalous batched-bench row around the batch).
    flag: str | None
    # Where the batch below is flagged and a warm one above holds the batch (flag
    # "bound:PL"): the bench rate's least (the warm batch's scaled down to this batch: a
    # decode rate grows no faster than the batch), the most being batched_bench_tg_tok_s,
    # and the ratio's most, the least being `ratio`.
    bench_low: NotRequired[float]
    ratio_high: NotRequired[float]
    # The bench rate interpolated between two measured batches (the server's batch is not one
    # of them): a decode rate growing less than in proportion to the batch, the ratio is an
    # upper bound (review 13: a title gave "0.43x" of an interpolated rate as measured).
    interpolated: NotRequired[bool]


class FlaggedRow(TypedDict):
    """A llama-batched-bench row not compared: its file, batch and why."""

    file: str
    pl: int
    why: str
    speed_pp: float
    speed_tg: float


# A batched-bench row whose prompt rate is below this share of its file's median prompt rate
# ran cold (a backend compiling its kernels on first use, clocks not yet up).
COLD_PP_SHARE = 0.25
# A run's first row (its smallest batch) ran cold where the next batch's prompt rate grew more
# than in proportion to the batch: more sequences a step never make each prompt token faster
# than that, so the first row paid for something else (the warm-up). A review found one at
# 4,186 against 12,188 tok/s at twice the batch compared as if warm; a later one found the
# first rule (under half the run's median) flagging a batch of 1 against one of 16, where a
# lower prompt rate is the batch's own.

# A row whose aggregate decode rate is this much below a smaller batch's is not a clean
# measurement: more sequences per step never decode fewer tokens per second on a GPU.
TG_DROP = 0.10
# llama-bench's first repetition is left out when it is this much slower than the rest.
COLD_REP_SHARE = 0.8


def roofline_rows(
    results: Sequence[JobResult], contexts: Mapping[str, float | None] | None = None
) -> list[RooflineRow]:
    """Per complete job with known bandwidth and parameters: ceiling and measured share.
    `contexts`: each job's mean decode-step context (analysis.job_calls), by job name."""
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
        weights = float(active_b) * 1e9 * bits / 8
        context = (contexts or {}).get(r.job_dir.name)
        kv = _kv_bytes(r, model, context)
        ceiling = float(bw) * 1e9 / (weights + (kv or 0.0))
        per_seq = metrics.server_decode_tok_s
        seqs = _seqs_per_step(r)
        rows.append(
            {
                "job": r.job_dir.name,
                "point": "",
                "slots": r.factors.get("slots"),
                "bits_per_weight": bits,
                "weights_gb_per_token": weights / 1e9,
                "context": context,
                "kv_gb_per_token": None if kv is None else kv / 1e9,
                "gb_per_token": (weights + (kv or 0.0)) / 1e9,
                "ceiling_tok_s": ceiling,
                "per_sequence_tok_s": per_seq,
                "seqs_per_step": seqs,
                "share": (float(per_seq) / ceiling)
                if per_seq and _one_sequence_bound(seqs, r, active_b, total_b)
                else None,
                "aggregate_tok_s": metrics.output_tok_s,
            }
        )
    return rows


def _kv_bytes(r: JobResult, model: object, context: float | None) -> float | None:
    """The KV cache bytes one sequence's decode step reads at `context` positions: None where
    the model's shape, the cache type or the context is not known."""
    shape = kv_read.model_shape(model) if isinstance(model, ModelInfo) else None
    if shape is None or context is None:
        return None
    # The cache types as the job recorded them: one not recorded is not guessed.
    per = kv_read.kv_bytes_per_position(
        shape, r.factors.get("cache_type_k"), r.factors.get("cache_type_v")
    )
    return None if per is None else per * context


# A step of at most this many sequences on average is read as one sequence's.
ONE_SEQUENCE = 1.05


def _seqs_per_step(r: JobResult) -> float | None:
    server = r.metrics.get("server")
    seqs = server.get("busy_slots_per_decode") if isinstance(server, dict) else None
    return float(seqs) if isinstance(seqs, int | float) and seqs > 0 else None


def _one_sequence_bound(
    seqs: float | None, r: JobResult, active_b: object, total_b: object
) -> bool:
    """Whether the one-sequence ceiling bounds this job's steps: a dense model reads every
    weight once a step however many sequences it decodes; a mixture of experts reads the
    experts any of its sequences chose, more bytes than one sequence's as the batch grows, so
    its ceiling holds only where a step decoded one sequence (the review found a 16-slot job
    at "1.6% of the ceiling" against a bound it was never under)."""
    # A drafting job's verify step runs several positions of a sequence (and MTP a NextN
    # block whose weights the ceiling leaves out): one sequence's ceiling does not bound it
    # (review 12: "4.7% of the ceiling" for the MTP study's 1-slot job with MTP on).
    if _drafts(r):
        return False
    if float(str(active_b)) >= float(str(total_b)):
        return True
    if seqs is None:
        return r.factors.get("slots") in (1, "1", None)
    return seqs <= ONE_SEQUENCE


def _drafts(r: JobResult) -> bool:
    """Whether the job drafted: MTP on, a drafter other than none, or draft tokens counted."""
    mtp, spec = r.factors.get("mtp"), r.factors.get("spec")
    if str(mtp).lower() in ("true", "on", "1"):
        return True
    if spec not in (None, "", "none"):
        return True
    drafted = r.metrics.get("draft_tokens")
    return isinstance(drafted, int | float) and drafted > 0


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
        for row in json.loads(bounded.read_text(lb)):
            rate, cold = warm_rate(row)
            if row.get("n_gen") and not row.get("n_prompt"):
                out["single"] = {"tg_tok_s": rate, "n_gen": row["n_gen"], "cold_first": cold}
            if row.get("n_prompt") and not row.get("n_gen"):
                out["pp_tok_s"] = rate
                out["pp_n"] = row["n_prompt"]
                out["pp_cold_first"] = cold
    for bb in sorted(d.glob("batched-bench*.jsonl")):
        rows = [cast(BenchRow, json.loads(x)) for x in bounded.lines(bb) if x.strip()]
        if rows:
            out.setdefault("batched_sets", []).append(
                {"file": bb.name, "pp": int(rows[0]["pp"]), "tg": int(rows[0]["tg"]), "rows": rows}
            )
    return out


def warm_rate(row: Mapping[str, Any]) -> tuple[float, float | None]:
    """A llama-bench row's rate without a cold first repetition: (the mean of the other
    repetitions, the first's rate) when the first ran at under COLD_REP_SHARE of them, else
    (llama-bench's own average, None)."""
    samples = [float(x) for x in row.get("samples_ts") or [] if isinstance(x, int | float)]
    if len(samples) >= 2:
        rest = sum(samples[1:]) / len(samples[1:])
        if samples[0] < COLD_REP_SHARE * rest:
            return rest, samples[0]
    return float(row["avg_ts"]), None


def flagged_rows(rows: Sequence[BenchRow], file: str) -> dict[int, FlaggedRow]:
    """The rows of one llama-batched-bench run that are not clean measurements, by batch:
    a prompt rate far below the run's median, or the first row's (the run's smallest batch)
    below half of it (ran cold), or an aggregate decode rate below a smaller batch's (a batch
    that paid for something else, a first-use compile say)."""
    pp = sorted(float(r.get("speed_pp", 0.0)) for r in rows if r.get("speed_pp"))
    median = pp[len(pp) // 2] if pp else 0.0
    out: dict[int, FlaggedRow] = {}
    ordered = sorted(rows, key=lambda r: int(r["pl"]))
    # Every smaller batch counts, a flagged one too: a cold row's decode may be warm.
    best_tg = 0.0
    for i, r in enumerate(ordered):
        tg, prompt = float(r["speed_tg"]), float(r.get("speed_pp", 0.0))
        why = None
        if median and prompt < COLD_PP_SHARE * median:
            why = "cold"
        elif i == 0 and len(ordered) > 1 and _superlinear(r, ordered[1]):
            why = "cold_first"
        elif tg < (1 - TG_DROP) * best_tg:
            why = "below_smaller_batch"
        if why:
            out[int(r["pl"])] = {
                "file": file,
                "pl": int(r["pl"]),
                "why": why,
                "speed_pp": prompt,
                "speed_tg": tg,
            }
        best_tg = max(best_tg, tg)
    return out


def _superlinear(first: BenchRow, nxt: BenchRow) -> bool:
    """Whether the next batch's prompt rate grew more than in proportion to its batch."""
    a, b = float(first.get("speed_pp", 0.0)), float(nxt.get("speed_pp", 0.0))
    return a > 0 and b > a * int(nxt["pl"]) / int(first["pl"])


def at_batch(
    rows: Sequence[BenchRow], batch: float, flagged: Mapping[int, FlaggedRow]
) -> tuple[float | None, str | None]:
    """llama-batched-bench's aggregate decode rate at `batch` sequences (linear between the
    measured batches around it; exact at a measured one), or None and why: outside the
    measured batches, or a flagged row among those it would use."""
    by_pl = {int(r["pl"]): float(r["speed_tg"]) for r in rows}
    below = [p for p in by_pl if p <= batch + 1e-9]
    above = [p for p in by_pl if p >= batch - 1e-9]
    if not below or not above:
        return None, "outside"
    lo, hi = max(below), min(above)
    bad = [p for p in {lo, hi} if p in flagged]
    if bad == [lo] and hi > batch:
        # Only the warm batch above: the rate at `batch` lies between its rate scaled down to
        # `batch` and its rate (bounds(), which the caller asks for).
        return by_pl[hi], f"bound:{lo}"
    if bad:
        return None, f"flagged:{min(bad)}"
    if hi == lo:
        return by_pl[lo], None
    w = (batch - lo) / (hi - lo)
    return by_pl[lo] + w * (by_pl[hi] - by_pl[lo]), None


def _call_shape(results: Sequence[JobResult]) -> tuple[float, float] | None:
    """The mean prompt and completion tokens per call of the units the jobs replayed
    (analysis.replayed), not the whole fixture's where they replayed fewer."""
    w = replayed(results)
    if w and w.calls and w.prompt_tokens and w.completion_tokens:
        return w.prompt_tokens / w.calls, w.completion_tokens / w.calls
    # A workload record without its unit count (older results): the fixture's calls.
    for r in results:
        f = r.result.provenance.workload
        if f and f.calls and f.prompt_tokens and f.completion_tokens:
            return f.prompt_tokens / f.calls, f.completion_tokens / f.calls
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
    """Per job: the server's decode against llama-batched-bench at the batch the server ran
    (its own sequences per step), from that backend's run of the chosen shape, each row
    naming its file; a row whose bench batches around it are flagged is not compared.
    `config` names the factors other than slots that vary, as `label` writes a point (the
    report: as its prose does, "CUDA, MTP off")."""
    chosen = choose_batched(results, gt)
    own = [chosen] if chosen else []
    # Per backend: that backend's run of the chosen shape (ground-truth/<backend>/).
    sets = {
        str(b["backend"]): b
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
        bench = sets.get(str(r.factors.get("backend"))) if sets else (own[0] if own else None)
        m = r.result.metrics
        server = r.metrics.get("server")
        seqs = server.get("busy_slots_per_decode") if isinstance(server, dict) else None
        batch = float(seqs) if isinstance(seqs, int | float) and seqs > 0 else float(slots)
        ref: float | None = None
        flag: str | None = "no_run"
        if bench is not None:
            ref, flag = at_batch(bench["rows"], batch, flagged_rows(bench["rows"], bench["file"]))
        per_seq = m.server_decode_tok_s
        server_agg = per_seq * batch if per_seq else None
        rows.append(
            {
                "slots": slots,
                "config": label({k: r.factors.get(k) for k in varying}) if varying else "",
                "output_tok_s": m.output_tok_s,
                "seqs_per_step": seqs if isinstance(seqs, int | float) else None,
                "server_per_slot_tok_s": per_seq,
                "server_aggregate_tok_s": server_agg,
                "batched_bench_tg_tok_s": ref,
                "ratio": (server_agg / ref) if server_agg and ref else None,
                "source": bench["file"] if bench else None,
                "at_slots": not (isinstance(seqs, int | float) and seqs > 0),
                "flag": flag,
            }
        )
        if (
            ref
            and bench is not None
            and all(abs(float(x["pl"]) - batch) > 1e-9 for x in bench["rows"])
        ):
            rows[-1]["interpolated"] = True
        if ref and flag and flag.startswith("bound:") and bench is not None:
            top = min(int(x["pl"]) for x in bench["rows"] if int(x["pl"]) >= batch - 1e-9)
            rows[-1]["bench_low"] = ref * batch / top
            if server_agg:
                rows[-1]["ratio_high"] = server_agg / rows[-1]["bench_low"]
    return rows


def all_flagged(gt: GroundTruth) -> list[FlaggedRow]:
    """Every flagged llama-batched-bench row of the folder, file by file."""
    out: list[FlaggedRow] = []
    for b in gt.get("batched_sets") or []:
        out += flagged_rows(b["rows"], b["file"]).values()
    return out


def _text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)

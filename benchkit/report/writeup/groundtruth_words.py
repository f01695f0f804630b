"""The agreement section's sentences: each backend's llama-bench figures (a cold first
repetition named and left out) and the llama-batched-bench rows that were not compared; and
the roofline's, what its bytes per token count and leave out, each term with its size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis import kv_read
from benchkit.report.analysis.groundtruth import (
    AgreementRow,
    GroundTruth,
    RooflineRow,
    all_flagged,
)
from benchkit.report.lang import fmt, i18n, span, tr
from benchkit.report.lang.words import BACKENDS
from benchkit.results.store import JobResult


def flag_text(flag: str | None, lang: str) -> str:
    """Why a job was not compared with llama-batched-bench ('' when it was)."""
    if not flag:
        return ""
    if flag == "outside":
        return tr(lang, "not measured at this batch")
    if flag == "no_run":
        return tr(lang, "no run of this backend")
    if flag.startswith("flagged:"):
        return tr(lang, "not compared: bench batch {pl} flagged", pl=flag.split(":", 1)[1])
    if flag.startswith("bound:"):
        return ""
    return flag


def bench_lines(truth: GroundTruth, lang: str) -> list[str]:
    """llama-bench's single-sequence figures, per backend where each has its own run."""
    out = []
    runs: list[tuple[str | None, GroundTruth]] = [(None, truth)]
    runs += sorted((truth.get("by_backend") or {}).items())
    for backend, g in runs:
        who = f" ({BACKENDS.get(backend, backend)})" if backend else ""
        single = g.get("single")
        if single:
            text = tr(
                lang,
                "llama-bench tg{n}{who}: {rate} tok/s (one sequence, no sampling)",
                who=who,
                n=single["n_gen"],
                rate=fmt.num(single["tg_tok_s"]),
            )
            out.append(text + _cold(single.get("cold_first"), lang))
        if g.get("pp_tok_s"):
            text = tr(
                lang,
                "llama-bench pp{n}{who}: {rate} tok/s",
                who=who,
                n=g.get("pp_n"),
                rate=fmt.num(g["pp_tok_s"], 0),
            )
            out.append(text + _cold(g.get("pp_cold_first"), lang))
    return out


def _cold(first: float | None, lang: str) -> str:
    if first is None:
        return ""
    return tr(
        lang,
        " (its first repetition, {rate} tok/s, ran cold and is left out)",
        rate=fmt.num(first, 0),
    )


def flagged_lines(truth: GroundTruth, lang: str) -> list[str]:
    """One line per llama-batched-bench row left out of the comparison, and why."""
    out = []
    for f in all_flagged(truth):
        if f["why"] == "cold":
            why = tr(
                lang,
                "its prompt rate, {pp} tok/s, is under a quarter of the run's median: it ran cold",
                pp=fmt.num(f["speed_pp"], 0),
            )
        elif f["why"] == "cold_first":
            why = tr(
                lang,
                "its prompt rate, {pp} tok/s, is the run's first batch's, and the next batch's "
                "grew more than in proportion to the batch: it ran cold",
                pp=fmt.num(f["speed_pp"], 0),
            )
        else:
            why = tr(
                lang,
                "its decode rate, {tg} tok/s, is below a smaller batch's in the same run",
                tg=fmt.num(f["speed_tg"]),
            )
        out.append(tr(lang, "`{file}`, batch {pl}: {why}.", file=f["file"], pl=f["pl"], why=why))
    return out


def question_figure(question: str, rows: Sequence[AgreementRow], lang: str) -> str:
    """Where the study asks how the server compares with llama-batched-bench, the answer's
    opening sentence: the ratio at the most slots compared, per configuration ('At 16 slots
    the server decoded 0.43x (greedy sampling) and 0.28x (...) of llama-batched-bench's
    aggregate rate at the same batch.'); '' for another question or no ratio."""
    if "batched-bench" not in question:
        return ""
    compared = [r for r in rows if r["ratio"] is not None]
    if not compared:
        return ""
    top = max(r["slots"] for r in compared)
    at = [r for r in compared if r["slots"] == top]
    ratios = i18n.list_text(
        [
            tr(lang, "{ratio} ({config})", ratio=_ratio(r, lang), config=r["config"])
            if r["config"]
            else _ratio(r, lang)
            for r in at
        ],
        lang,
    )
    if any(r.get("interpolated") for r in at):
        return tr(
            lang,
            "At {slots} the server's aggregate decode was at most {ratios} of "
            "llama-batched-bench's at the same batch, a rate interpolated between two measured "
            "batches (Agreement with llama.cpp's own benchmarks).",
            slots=i18n.slots_phrase(top, lang),
            ratios=ratios,
        )
    return tr(
        lang,
        "At {slots} the server's aggregate decode was {ratios} of llama-batched-bench's at "
        "the same batch (Agreement with llama.cpp's own benchmarks).",
        slots=i18n.slots_phrase(top, lang),
        ratios=ratios,
    )


def question_finding(question: str, rows: Sequence[Mapping[str, Any]], lang: str) -> str:
    """`question_figure` short, for a post's title: 'The server decoded 0.28x–0.43x the rate
    of llama-batched-bench at 16 slots' (no apostrophe: a page escapes it in its <h1>); ''
    for another question or no ratio."""
    if "batched-bench" not in question:
        return ""
    compared = [r for r in rows if r["ratio"] is not None]
    if not compared:
        return ""
    top = max(r["slots"] for r in compared)
    at = [r for r in compared if r["slots"] == top]
    lows = [r["ratio"] for r in at if r["ratio"] is not None]
    highs = [r.get("ratio_high") or r["ratio"] for r in at]
    ratios = span(lang, fmt.ratio(min(lows), lang), fmt.ratio(max(h for h in highs if h), lang))
    if any(r.get("interpolated") for r in at):
        return tr(
            lang,
            "The server decoded at most {ratios} the rate of llama-batched-bench at {slots}",
            ratios=ratios,
            slots=i18n.slots_phrase(top, lang),
        )
    return tr(
        lang,
        "The server decoded {ratios} the rate of llama-batched-bench at {slots}",
        ratios=ratios,
        slots=i18n.slots_phrase(top, lang),
    )


def _ratio(r: AgreementRow, lang: str) -> str:
    """A row's ratio, or its range where the bench rate is bounded (AgreementRow.bench_low)."""
    high = r.get("ratio_high")
    if r["ratio"] is None or high is None:
        return fmt.ratio(r["ratio"], lang)
    return span(lang, fmt.ratio(r["ratio"], lang), fmt.ratio(high, lang))


def cells(r: AgreementRow, lang: str) -> dict[str, str]:
    """A row's bench rate and ratio as its table cells: each a range where the rate is bounded,
    written as the language writes a range (the answer quotes the same text)."""
    low, ref = r.get("bench_low"), r["batched_bench_tg_tok_s"]
    if low is not None and ref is not None:
        bench = span(lang, fmt.num(low), fmt.num(ref))
    elif ref is not None:
        bench = fmt.num(ref)
    else:
        bench = flag_text(r["flag"], lang)
    return {"bench_text": bench, "ratio_text": _ratio(r, lang)}


def bound_line(rows: Sequence[AgreementRow], lang: str) -> str:
    """Where a row's bench rate is bounded, not interpolated: why, once ('' where none is)."""
    flags = [r["flag"] or "" for r in rows]
    bounded = sorted({f.split(":", 1)[1] for f in flags if f.startswith("bound:")})
    if not bounded:
        return ""
    return tr(
        lang,
        "Where the bench batch below a job's batch is flagged ({batches}), its rate there is "
        "bounded by the batch above alone, not interpolated: at most that batch's rate, at "
        "least that rate scaled down to the job's batch (a decode rate grows no faster than "
        "the batch); the bench rate and the ratio are then ranges.",
        batches=", ".join(bounded),
    )


def roofline_terms(results: Sequence[JobResult], rows: Sequence[RooflineRow], lang: str) -> str:
    """What the roofline's bytes per token count and leave out, with each term's size from the
    data: the KV cache at each job's mean decode context where the model's shape is known,
    and the token-embedding table the declared active parameters over-count; where the shape
    is not known, that the ceiling counts the weights alone ('' without rows)."""
    if not rows:
        return ""
    by_job = {r.job_dir.name: r for r in results}
    counted = [r for r in rows if r["kv_gb_per_token"] is not None]
    out: list[str] = []
    shape = None
    if counted:
        shape = kv_read.model_shape(by_job[counted[0]["job"]].result.provenance.model)
    if counted and shape is not None:
        factors = by_job[counted[0]["job"]].factors
        k, v = str(factors.get("cache_type_k")), str(factors.get("cache_type_v"))
        per = kv_read.kv_bytes_per_position(shape, k, v) or 0.0
        out.append(
            tr(
                lang,
                "The ceiling counts, per decoded token, the active weights and the KV cache one "
                "sequence reads at the mean context of the job's decode steps: {layers} layers x "
                "{heads} KV heads x {dim} values each for keys and values, stored as {cache} "
                "({kib} KiB a position), times that context, {ctx} tokens (each call's prompt "
                "and generated tokens, from its calls): {kv} GB a token, {share} of the bytes "
                "counted.",
                layers=shape.layers,
                heads=shape.kv_heads,
                dim=shape.head_dim,
                cache=k if k == v else "/".join((k, v)),
                kib=fmt.num(per / 1024, 0),
                ctx=_range([r["context"] for r in counted], 0, lang),
                kv=_range([r["kv_gb_per_token"] for r in counted], 3, lang),
                share=_range_pct([_kv_share(r) for r in counted], lang),
            )
        )
        bits = counted[0]["bits_per_weight"]
        out.append(
            tr(
                lang,
                "It leaves out the cache's cells beyond a call's own context and the "
                "activations, and it over-counts the token-embedding table, which the declared "
                "active parameters include whole where a step reads one row of it: {vocab} x "
                "{width} at the file's {bits} bits a weight, {emb} GB. The ceiling is a lower "
                "bound, and each share an upper bound, only as far as that over-count exceeds "
                "what is left out, which was not measured.",
                vocab=fmt.integer(shape.n_vocab),
                width=fmt.integer(shape.d_model),
                bits=fmt.num(bits, 2),
                emb=fmt.num(shape.n_vocab * shape.d_model * bits / 8 / 1e9, 3),
            )
        )
    alone = [r["job"] for r in rows if r["kv_gb_per_token"] is None]
    if alone:
        out.append(
            tr(
                lang,
                "The ceiling of {jobs} counts the active weights alone: the KV cache a decode "
                "step reads, which grows with the context, is not counted, as the model's "
                "layers, KV heads and head width (or the job's cache type or calls) are not in "
                "its results. Which way that ceiling is off is not known, so its share is no "
                "bound either way.",
                jobs=i18n.jobs_text(alone, lang),
            )
        )
    return " ".join(out)


def _kv_share(r: RooflineRow) -> float | None:
    kv = r["kv_gb_per_token"]
    return kv / r["gb_per_token"] if kv is not None and r["gb_per_token"] else None


def _range(values: Sequence[float | None], digits: int, lang: str) -> str:
    known = [v for v in values if v is not None]
    return span(lang, fmt.num(min(known), digits), fmt.num(max(known), digits))


def _range_pct(values: Sequence[float | None], lang: str) -> str:
    known = [v for v in values if v is not None]
    return span(lang, fmt.pct(min(known), 1), fmt.pct(max(known), 1))

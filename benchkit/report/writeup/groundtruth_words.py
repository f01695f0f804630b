"""The agreement section's sentences: each backend's llama-bench figures (a cold first
repetition named and left out) and the llama-batched-bench rows that were not compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.groundtruth import AgreementRow, GroundTruth, all_flagged
from benchkit.report.lang import fmt, i18n, span, tr
from benchkit.report.lang.words import BACKENDS


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
    return tr(
        lang,
        "The server decoded {ratios} the rate of llama-batched-bench at {slots}",
        ratios=span(lang, fmt.ratio(min(lows), lang), fmt.ratio(max(h for h in highs if h), lang)),
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

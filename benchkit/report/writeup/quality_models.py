"""The Quality section's "Model files" part: each swept model file's KL divergence from the
reference file, as `llama-perplexity --kl-divergence` measured it (benchkit.quality.models wrote
SWEEP/quality/models.json), with a sentence per file in the report's language. Nothing is shown
for a folder without models.json (one model file, or results from before the comparison)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchkit.quality.models import REASONS, read_models
from benchkit.report.lang import fmt, marked, tr


def kld_cell(x: Any) -> str:
    """A KL divergence as the tool printed it (six decimals): three significant digits, and
    a printed 0 as under the tool's last digit, not as no divergence."""
    if x is None:
        return fmt.DASH
    v = float(x)
    return "< 5e-07" if v == 0 else f"{v:.3g}"


def _reason(entry: Mapping[str, Any], lang: str) -> str:
    why = entry.get("why")
    if why in REASONS:
        return marked(lang, REASONS[str(why)], detail=str(entry.get("detail") or ""))
    return str(entry.get("reason") or "")


def _row(m: Mapping[str, Any], lang: str) -> dict[str, str]:
    k = m.get("kld") or {}
    status = m.get("status")
    note = (
        tr(lang, "reference")
        if status == "reference"
        else _reason(m, lang)
        if status != "measured"
        else ""
    )
    return {
        "model": str(m.get("model")),
        "quant": str(m.get("quant") or fmt.DASH),
        "jobs": ", ".join(str(j) for j in m.get("jobs") or []),
        "kld_mean": kld_cell(k.get("kld_mean")) if k else fmt.DASH,
        "kld_err": kld_cell(k.get("kld_mean_err")) if k else fmt.DASH,
        "top1": fmt.pct(k.get("same_top_p"), 1) if k else fmt.DASH,
        "kld_p99_9": kld_cell(k.get("kld_p99_9")) if k else fmt.DASH,
        "kld_max": kld_cell(k.get("kld_max")) if k else fmt.DASH,
        "note": note,
    }


def _line(m: Mapping[str, Any], reference: str, lang: str) -> str:
    """One file's verdict sentence."""
    if m.get("status") != "measured":
        return tr(
            lang,
            "{model} was not compared with {reference}: {why}.",
            model=str(m.get("model")),
            reference=reference,
            why=_reason(m, lang),
        )
    k = m["kld"]
    return tr(
        lang,
        "{model} against {reference}: mean KL divergence {kld} ± {err} nats, the same most "
        "likely next token at {top1} of {n} positions, the largest KL divergence {max}.",
        model=str(m.get("model")),
        reference=reference,
        kld=kld_cell(k.get("kld_mean")),
        err=kld_cell(k.get("kld_mean_err")),
        top1=fmt.pct(k.get("same_top_p"), 1),
        n=k.get("positions") or fmt.DASH,
        max=kld_cell(k.get("kld_max")),
    )


def model_files_view(source: Path, lang: str) -> dict[str, object]:
    """What quality_models.md.j2 prints (`show` false: nothing)."""
    doc = read_models(source)
    if doc is None:
        return {"show": False}
    ref: Mapping[str, object] = doc.get("reference") or {}
    reference = str(ref.get("model") or fmt.DASH)
    models = [m for m in doc.get("models") or [] if isinstance(m, Mapping)]
    view: dict[str, object] = {"show": True, "not_measured": None, "rows": [], "lines": []}
    if not ref:
        view["not_measured"] = tr(
            lang, "Model files were not compared: {why}.", why=_reason(doc, lang)
        )
        return view
    view["reference_text"] = tr(
        lang,
        "Reference file: {model} ({quant}; {how}).",
        model=reference,
        quant=str(ref.get("quant") or fmt.DASH),
        how=tr(lang, "the file the study declares")
        if doc.get("how") == "declared"
        else tr(lang, "the most precise quant swept"),
    )
    view["rows"] = [_row(m, lang) for m in models]
    view["lines"] = [_line(m, reference, lang) for m in models if m.get("status") != "reference"]
    settings = doc.get("settings") or {}
    text = doc.get("text") or {}
    build = doc.get("build") or {}
    view["how_measured"] = tr(
        lang,
        "How it was measured: llama.cpp's llama-perplexity --kl-divergence, from the build the "
        "jobs' llama-server came from ({source}), wrote the reference file's next-token "
        "distributions over {chunks} chunks of {ctx} tokens of a text drawn from the workload, "
        "then compared each other file's with them at every scored position, over the whole "
        "vocabulary. It measures the model files alone, outside the server: what the server's "
        "other settings change is in the drift table above.",
        source=str(build.get("source") or fmt.DASH),
        chunks=settings.get("chunks", fmt.DASH),
        ctx=settings.get("ctx", fmt.DASH),
    )
    if text:
        view["how_measured"] = str(view["how_measured"]) + " " + _text_sentence(text, lang)
    return view


def _text_sentence(text: Mapping[str, Any], lang: str) -> str:
    """Which text of the workload was used."""
    fields = {"n": text.get("calls", fmt.DASH), "workload": str(text.get("workload"))}
    if text.get("kind") == "tokens":
        return tr(
            lang,
            "The text: the prompts of the first {n} distinct calls of workload {workload}, in "
            "file order; the workload's prompts are token ids, written out as text with the "
            "reference file's vocabulary.",
            **fields,
        )
    return tr(
        lang,
        "The text: the prompts of the first {n} distinct calls of workload {workload}, in "
        "file order.",
        **fields,
    )

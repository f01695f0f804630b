"""Model files: for a sweep over several files of one model (model=tiny-moe-f16,tiny-moe-q8_0),
how far each file's next-token distributions are from a reference file's, measured outside the
server by llama.cpp's own `llama-perplexity --kl-divergence`, written to SWEEP/quality/models.json.

The server-level drift (benchkit.quality.drift) says whether a job's whole setting changes the
answers, over a few probes and a top-k; this says what the file alone does, over every token of
the vocabulary, on a longer text. Both use the same pinned llama.cpp: the tool comes from the
build folder the jobs' llama-server came from, built there on demand as one more target (not in
BUILD_TARGETS, which is part of every build's and job's identity).

The text comes from the workload, deterministically (benchkit.quality.text), enough for CHUNKS
chunks of CTX tokens.

Run from the multirun end callback before the report renders, and by hand:
`python -m benchkit.quality.models SWEEP`. A sweep with one model file gets no models.json.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from benchkit import log
from benchkit.errors import Unavailable, UserError
from benchkit.quality.models_doc import ModelEntry, ModelsDoc
from benchkit.quality.text import n_vocab, workload_text
from benchkit.report.lang import N_
from benchkit.results import bounded

_log = log.get(__name__)

MODELS_FILE = "models.json"
QUALITY_DIR = "quality"
TOOL = "llama-perplexity"
# Context of one chunk and chunks compared: llama-perplexity scores the second half of each
# chunk (the first half is context), so 16 x 256 gives 16 x 127 scored positions.
CTX = 256
CHUNKS = 16
RUN_TIMEOUT_S = 3600.0
# llama.cpp's logger is a thread that is never joined at exit (common/log.cpp,
# common_log_main, llama.cpp issue 22142), so a run sometimes exits 0 with the end of its output
# lost, the statistics with it: 1 run in 4 here. Such a run is made again, up to this often: a
# run takes seconds, and 8 leaves a sweep without its figures once in some 65,000.
ATTEMPTS = 8

# Why a file was not compared: models.json keeps the code, its detail and the English sentence;
# the report words the code in its language (benchkit.report.writeup.quality_models).
REASONS = {
    "declared_missing": N_(
        "no swept model is named {detail}, the reference the study declares "
        "(study.quality.reference_model)"
    ),
    "no_binary": N_("the jobs' results name no llama-server build"),
    "build_changed": N_(
        "the build folder {detail} was rebuilt or removed after the jobs ran, so its "
        "llama-perplexity would not be the same build as their llama-server"
    ),
    "packed": N_(
        "the llama.cpp build {detail} was packed without llama-perplexity; pack it again from "
        "a build that has it"
    ),
    "build_failed": N_("building llama-perplexity failed ({detail})"),
    "no_text": N_("no text could be drawn from the workload ({detail})"),
    "file_gone": N_("the model file {detail} is gone"),
    "reference_failed": N_("the reference file's llama-perplexity run failed ({detail})"),
    "vocab": N_("its vocabulary is not the reference file's"),
    "tool_failed": N_("llama-perplexity failed ({detail})"),
    "elsewhere": N_(
        "the jobs ran on other machines (SLURM), and the machine that ended the sweep may have "
        "neither their device nor the time; run python -m benchkit.quality.models on a machine "
        "like theirs"
    ),
}
Why = tuple[str, str]  # (a REASONS code, its detail)


class _Reason(TypedDict):
    why: str | None
    detail: str | None
    reason: str | None


def reason_text(why: Why) -> str:
    """The English sentence of a reason (models.json's `reason`)."""
    return REASONS[why[0]].format(detail=why[1])


# Bits per weight by quant name prefix, most precise first: the default reference is the most
# precise file swept (the same spirit as study.quality.reference's most conservative point).
_BITS = (
    ("F32", 32.0),
    ("BF16", 16.0),
    ("F16", 16.0),
    ("Q8", 8.5),
    ("Q6", 6.6),
    ("Q5", 5.5),
    ("IQ4", 4.5),
    ("Q4", 4.5),
    ("IQ3", 3.4),
    ("Q3", 3.4),
    ("IQ2", 2.4),
    ("Q2", 2.6),
    ("IQ1", 1.6),
    ("TQ", 1.7),
)


def bits_per_weight(quant: str | None) -> float:
    """Roughly how many bits a weight of this quant has (0 when the name is unknown)."""
    q = (quant or "").upper().replace("MOSTLY_", "")
    return next((b for prefix, b in _BITS if q.startswith(prefix)), 0.0)


@dataclass
class ModelFile:
    """One model file the sweep served, and the jobs that served it."""

    name: str
    quant: str | None
    path: str
    file_bytes: int | None
    jobs: list[str] = field(default_factory=list)


def model_files(records: Mapping[str, Mapping[str, Any]]) -> dict[str, ModelFile]:
    """The distinct model files of a sweep's jobs (job -> result.json), by path, in job order."""
    out: dict[str, ModelFile] = {}
    for job, rec in records.items():
        model = (rec.get("provenance") or {}).get("model") or {}
        path = model.get("path")
        if not path:
            continue
        f = out.setdefault(
            str(path),
            ModelFile(
                name=str(model.get("name") or Path(str(path)).stem),
                quant=model.get("quant"),
                path=str(path),
                file_bytes=model.get("file_bytes"),
            ),
        )
        f.jobs.append(job)
    return out


def choose_reference(
    files: Mapping[str, ModelFile], declared: str | None
) -> tuple[str | None, str]:
    """(path of the reference file, how it was chosen): the declared model name's file, else
    the most precise quant (most bits per weight, then the largest file, then the first)."""
    if declared:
        hit = next((p for p, f in files.items() if f.name == declared), None)
        return (hit, "declared") if hit else (None, "declared_missing")
    if not files:
        return None, "none"
    order = list(files)
    best = max(
        order,
        key=lambda p: (
            bits_per_weight(files[p].quant),
            files[p].file_bytes or 0,
            -order.index(p),
        ),
    )
    return best, "most_precise"


# "Mean    KLD:   0.000006 ±   0.000000", "Same top p: 98.327 ± 0.285 %", "Maximum KLD: ..."
_NUM = r"(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?inf)"
_FIGURES = {
    "kld_mean": rf"^Mean\s+KLD:\s*{_NUM}\s*±\s*{_NUM}",
    "kld_max": rf"^Maximum KLD:\s*{_NUM}",
    "kld_p99_9": rf"^99\.9%\s+KLD:\s*{_NUM}",
    "kld_p99": rf"^99\.0%\s+KLD:\s*{_NUM}",
    "kld_median": rf"^Median\s+KLD:\s*{_NUM}",
    "same_top_p": rf"^Same top p:\s*{_NUM}\s*±\s*{_NUM}\s*%",
    "ln_ppl_ratio": rf"^Mean ln\(PPL\(Q\)/PPL\(base\)\)\s*:\s*{_NUM}\s*±\s*{_NUM}",
    "ppl": rf"^Mean PPL\(Q\)\s*:\s*{_NUM}\s*±\s*{_NUM}",
    "ppl_base": rf"^Mean PPL\(base\)\s*:\s*{_NUM}\s*±\s*{_NUM}",
    "rms_dp": rf"^RMS Δp\s*:\s*{_NUM}\s*±\s*{_NUM}\s*%",
}
# The figures printed as percentages, kept as shares.
_PERCENT = ("same_top_p", "rms_dp")
_CHUNKS_LINE = re.compile(r"kl_divergence: computing over (\d+) chunks, n_ctx=(\d+)")


def parse_kld(text: str) -> dict[str, float | int | None] | None:
    """The figures of a `llama-perplexity --kl-divergence` output, or None when its
    statistics are not there whole (the run failed, or their end was lost at exit: see
    ATTEMPTS). `X_err` is the ± of X; shares, not percent."""
    out: dict[str, float | int | None] = {}
    for key, pattern in _FIGURES.items():
        m = re.search(pattern, text, re.M)
        if m is None:
            continue
        scale = 0.01 if key in _PERCENT else 1.0
        # Rounded to the printed digits: 98.327 % is 0.98327, not 0.9832700000000001.
        out[key] = round(float(m.group(1)) * scale, 9)
        if m.lastindex and m.lastindex > 1:
            out[f"{key}_err"] = round(float(m.group(2)) * scale, 9)
    mean = out.get("kld_mean")
    if not isinstance(mean, float) or not math.isfinite(mean):
        return None
    # "Same top p" is the statistics' last line: without it their end was lost, the run is
    # made again rather than kept with figures missing (a CI run kept one without it).
    if "same_top_p" not in out:
        return None
    m = _CHUNKS_LINE.search(text)
    if m:
        chunks, ctx = int(m.group(1)), int(m.group(2))
        # Each chunk scores the tokens after its first half (llama.cpp's `first = n_ctx/2`).
        out.update(chunks=chunks, ctx=ctx, positions=chunks * (ctx - 1 - ctx // 2))
    return out


def tool_error(text: str) -> str:
    """The line of a failed llama-perplexity run that says why (its last error line)."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    bad = [x for x in lines if re.search(r"\bE \b|error|failed|need at least|inconsistent", x)]
    # "what():  invalid codepoint": a C++ exception's prefix says nothing to a reader.
    return (bad or lines or ["no output"])[-1].replace("what():", "").strip()[:300]


# --------------------------------------------------------------------------- the tool


def perplexity_tool(server_build: Mapping[str, Any]) -> tuple[Path | None, Why | None]:
    """(llama-perplexity of the build the jobs' llama-server came from, or None with why not).

    Built on demand in that build folder, as one more target of the same configured tree:
    only the tool compiles and links, and the build's record (its identity) is unchanged.
    A packed build carried from elsewhere has no source tree to build it in."""
    from benchkit.server.build import read_stamp

    binary = server_build.get("binary")
    if not binary:
        return None, ("no_binary", "")
    build = Path(str(binary)).parent.parent
    stamp = read_stamp(build)
    recorded = server_build.get("build") or {}
    same = stamp is not None and all(
        stamp.get(k) == recorded.get(k) for k in ("source", "flags", "targets")
    )
    if not same:
        return None, ("build_changed", str(build))
    return build_tool(build)


def build_tool(build: Path) -> tuple[Path | None, Why | None]:
    """llama-perplexity in a build folder, built there on demand as one more target of the
    configured tree (`python -m benchkit.provide --pack` builds it too, so a packed build
    carries it); a packed build without it cannot build it."""
    from benchkit.server.progress import run_build
    from benchkit.server.source import file_lock, llama_root

    tool = build / "bin" / TOOL
    if tool.is_file() and os.access(tool, os.X_OK):
        return tool, None
    if not (build / "CMakeCache.txt").is_file():
        return None, ("packed", str(build))
    name = build.name.removeprefix("build-")
    with file_lock(llama_root() / f".build-{name}.lock"):
        if not tool.is_file():
            _log.info(f"building {TOOL} in {build} (once; only this tool compiles and links)")
            jobs = str(os.cpu_count() or 2)
            try:
                run_build(
                    ["cmake", "--build", str(build), "--target", TOOL, "-j", jobs],
                    llama_root() / f"build-{name}.log",
                    f"build ({TOOL})",
                    (TOOL,),
                )
            except Unavailable as exc:
                return None, ("build_failed", str(exc).rstrip("."))
    return tool, None


def _run(cmd: list[str], log_file: Path) -> tuple[int, str, float]:
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        rc, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        rc, text = 124, f"{TOOL} ran past {RUN_TIMEOUT_S:.0f} s and was stopped"
    log_file.write_text("$ " + " ".join(cmd) + "\n" + text)
    return rc, text, round(time.monotonic() - t0, 2)


# --------------------------------------------------------------------------- the comparison


def _entry(f: ModelFile, status: str, why: Why | None = None, **extra: object) -> ModelEntry:
    entry: ModelEntry = {
        "model": f.name,
        "quant": f.quant,
        "path": f.path,
        "jobs": f.jobs,
        "status": status,
    }
    _set_reason(entry, why)
    return cast(ModelEntry, {**entry, **extra})


def _set_reason(d: ModelsDoc | ModelEntry, why: Why | None) -> None:
    r = _reason(why)
    d["why"], d["detail"], d["reason"] = r["why"], r["detail"], r["reason"]


def _reason(why: Why | None) -> _Reason:
    if why is None:
        return {"why": None, "detail": None, "reason": None}
    return {"why": why[0], "detail": why[1], "reason": reason_text(why)}


def compare_models(
    sweep: Path,
    records: Mapping[str, Mapping[str, Any]],
    declared: str | None,
    ctx: int = CTX,
    chunks: int = CHUNKS,
    again: bool = False,
    elsewhere: bool = False,
) -> ModelsDoc | None:
    """Compare every model file of the sweep with the reference file and write
    SWEEP/quality/models.json; None (and no file) when the sweep has one model file. A
    models.json measured from the same inputs is kept unless `again`. `elsewhere`: the jobs
    ran on other machines, so nothing is run here (models.json says so; a by-hand run on a
    machine like theirs measures)."""
    files = model_files(records)
    if len(files) < 2:
        return None
    out_dir = sweep / QUALITY_DIR
    out_dir.mkdir(exist_ok=True)
    ref_path, how = choose_reference(files, declared)
    doc: ModelsDoc = {
        "tool": TOOL,
        "status": "not_measured",
        "reference": None,
        "how": how,
        "settings": {"ctx": ctx, "chunks": chunks},
        "models": [],
    }
    _set_reason(doc, None)
    if ref_path is None:
        why: Why = ("declared_missing", str(declared))
        _set_reason(doc, why)
        doc["models"] = [_entry(f, "not_measured", why) for f in files.values()]
        return _write(out_dir, doc)
    ref = files[ref_path]
    doc["reference"] = {"model": ref.name, "quant": ref.quant, "path": ref.path}
    ref_rec = records[ref.jobs[0]]
    prov = ref_rec.get("provenance") or {}
    server_build = prov.get("server_build") or {}
    doc["build"] = {
        "source": server_build.get("source"),
        "binary": server_build.get("binary"),
        "build": server_build.get("build"),
    }
    doc["key"] = _inputs_key(files, ref, prov, ctx, chunks)
    old = read_models(sweep)
    if (
        not again
        and old is not None
        and old.get("key") == doc["key"]
        and old.get("status") == "measured"
        and all(m.get("status") in ("reference", "measured") for m in old.get("models") or [])
    ):
        # A sweep made again with its jobs reused: same files, build, workload and settings.
        _log.info(f"model files: reused {out_dir / MODELS_FILE} (same files, build and text)")
        return old
    failed: Why | None = ("elsewhere", "")
    if elsewhere:
        _log.info(f"model files not compared: {reason_text(('elsewhere', ''))}")
    else:
        failed = _measure(doc, files, ref, prov, out_dir, ctx, chunks)
    if failed is not None:
        _set_reason(doc, failed)
        doc["models"] = [
            _entry(f, "reference") if f is ref else _entry(f, "not_measured", failed)
            for f in files.values()
        ]
    return _write(out_dir, doc)


def _inputs_key(
    files: Mapping[str, ModelFile], ref: ModelFile, prov: Mapping[str, Any], ctx: int, chunks: int
) -> str | None:
    """What a comparison depends on, hashed: each file (path, size, time), the reference, the
    build, the workload and the settings; None when a file cannot be read (never reused)."""
    try:
        stats = {p: [os.stat(p).st_size, os.stat(p).st_mtime_ns] for p in files}
    except OSError:
        return None
    build = prov.get("server_build") or {}
    record = build.get("build") or {}
    wl = prov.get("workload") or {}
    inputs = {
        "files": stats,
        "reference": ref.path,
        "binary": build.get("binary"),
        "build": {k: record.get(k) for k in ("source", "flags", "targets")},
        "workload": [wl.get("path"), wl.get("fingerprint")],
        "settings": [ctx, chunks, ATTEMPTS],
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def _measure(
    doc: ModelsDoc,
    files: Mapping[str, ModelFile],
    ref: ModelFile,
    prov: Mapping[str, Any],
    out_dir: Path,
    ctx: int,
    chunks: int,
) -> Why | None:
    """Fill doc with the reference's base run and each file's comparison; why nothing could
    be compared, or None."""
    if not Path(ref.path).is_file():
        return ("file_gone", ref.path)
    tool, why = perplexity_tool(prov.get("server_build") or {})
    if tool is None:
        return why
    doc["build"]["tool"] = str(tool)
    wl = (prov.get("workload") or {}).get("path")
    if not wl:
        return ("no_text", "the jobs' results name no workload")
    try:
        text, what = workload_text(Path(str(wl)), Path(ref.path), ctx * chunks)
    except (UserError, ValueError, OSError, KeyError) as exc:
        return ("no_text", str(exc).rstrip("."))
    ref_vocab = n_vocab(Path(ref.path))
    # In the sweep folder, not /tmp (often memory): a real vocabulary's logits take GBs.
    with tempfile.TemporaryDirectory(prefix=".reference-logits-", dir=out_dir) as tmp:
        text_file = out_dir / "models-text.txt"
        text_file.write_bytes(text)
        doc["text"] = {
            **what,
            "file": text_file.name,
            "bytes": len(text),
            "sha256": hashlib.sha256(text).hexdigest(),
        }
        # The reference's logits are large (chunks x ctx/2 x vocabulary x 2 bytes: 0.6 GB for
        # a 150k vocabulary): kept only while the other files are compared.
        base = Path(tmp) / "reference.kld"
        common = ["-c", str(ctx), "--chunks", str(chunks)]
        cmd = [str(tool), "-m", ref.path, "-f", str(text_file), *common]
        cmd += ["--kl-divergence-base", str(base)]
        rc, out, secs = _run(cmd, out_dir / f"models-{_safe(ref.name)}-base.log")
        doc["base_command"] = cmd
        if rc != 0 or not base.is_file():
            return ("reference_failed", tool_error(out))
        _log.info(f"model files: {ref.name} is the reference ({secs:.1f} s)")
        doc["models"].append(_entry(ref, "reference", command=cmd, seconds=secs))
        for f in files.values():
            if f is not ref:
                doc["models"].append(_compare_one(f, tool, base, ref, ref_vocab, common, out_dir))
    doc["status"] = "measured"
    return None


def _compare_one(
    f: ModelFile,
    tool: Path,
    base: Path,
    ref: ModelFile,
    ref_vocab: int,
    common: list[str],
    out_dir: Path,
) -> ModelEntry:
    """One file's comparison with the reference's logits, with a progress line."""
    if not Path(f.path).is_file():
        entry = _entry(f, "not_measured", ("file_gone", f.path))
    elif n_vocab(Path(f.path)) != ref_vocab:
        entry = _entry(f, "not_measured", ("vocab", ""))
    else:
        # The chunks and their tokens come from the reference's file, not the text.
        cmd = [str(tool), "-m", f.path, *common[:2], "--kl-divergence-base", str(base)]
        cmd.append("--kl-divergence")
        attempt = 0
        while True:
            attempt += 1
            rc, out, secs = _run(cmd, out_dir / f"models-{_safe(f.name)}.log")
            figures = parse_kld(out) if rc == 0 else None
            # A run that exits 0 without its statistics lost them at exit (see ATTEMPTS).
            if figures is not None or rc != 0 or attempt == ATTEMPTS:
                break
        if figures is None:
            why = tool_error(out) if rc != 0 else "its output has no KL divergence statistics"
            entry = _entry(f, "not_measured", ("tool_failed", why), command=cmd)
        else:
            entry = _entry(f, "measured", command=cmd, seconds=secs, kld=figures)
        entry["attempts"] = attempt
    if entry["status"] == "measured":
        k = entry["kld"]
        _log.info(
            f"model files: {f.name} against {ref.name}: mean KLD {k['kld_mean']:.6g} ± "
            f"{k.get('kld_mean_err', float('nan')):.2g}, same top token "
            f"{100 * k.get('same_top_p', float('nan')):.2f}% ({entry['seconds']:.1f} s)"
        )
    else:
        _log.info(f"model files: {f.name} not compared: {entry['reason']}")
    return entry


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _write(out_dir: Path, doc: ModelsDoc) -> ModelsDoc:
    tmp = out_dir / (MODELS_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(out_dir / MODELS_FILE)
    return doc


def read_models(sweep: Path) -> ModelsDoc | None:
    """SWEEP/quality/models.json, or None when there is none (or it is unreadable)."""
    try:
        data = json.loads(bounded.read_text(sweep / QUALITY_DIR / MODELS_FILE, sweep))
    except (OSError, ValueError):
        return None
    return cast(ModelsDoc, data) if isinstance(data, dict) else None


def compare_sweep(sweep: Path, again: bool = False, elsewhere: bool = False) -> ModelsDoc | None:
    """compare_models on a sweep folder, with the study's reference_model its jobs carry;
    `again`: measure even where models.json says the same inputs were measured."""
    from benchkit.report.verdicts.folder import resolve_study
    from benchkit.results.store import find_results

    results = find_results(sweep)
    study = resolve_study(results)
    records = {r.job_dir.name: r.data for r in results}
    declared = study.quality.reference_model
    return compare_models(sweep, records, declared, again=again, elsewhere=elsewhere)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchkit.quality.models SWEEP [--again]`: compare the sweep's model files."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchkit.quality.models", description=main.__doc__)
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--again", action="store_true", help="measure again even if nothing changed")
    args = ap.parse_args(argv)
    try:
        doc = compare_sweep(args.sweep, again=args.again)
    except UserError as exc:
        print(f"benchkit: {exc}", file=sys.stderr)
        return 1
    if doc is None:
        print(f"{args.sweep}: one model file only, nothing to compare", file=sys.stderr)
        return 0
    print(str(args.sweep / QUALITY_DIR / MODELS_FILE))
    return 0 if doc["status"] == "measured" else 1


if __name__ == "__main__":
    sys.exit(main())

"""The Quality section: every job's output drift from one reference job (benchkit.quality),
a verdict per factor, the points over the study's drift limit, and what drift does and does
not say. The numbers come from the jobs' quality.jsonl; this module chooses the reference,
compares and words it."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchkit.quality.drift import Drift, compare, margin, not_comparable, read_probes, top1
from benchkit.quality.probe import ProbeRecord
from benchkit.report.lang import fmt, tr
from benchkit.results.store import JobResult

# KV cache types from the most precise down: the default reference takes the first measured.
KV_ORDER = ("f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "iq4_nl", "q4_1", "q4_0")
SPECULATIVE_FACTORS = ("mtp", "spec")


@dataclass
class DriftSet:
    """The drift of a results folder, in no language: the reference, every comparable job's
    drift from it, and why the others have none."""

    reference: str | None = None
    how: str = "none"  # declared | default | declared_missing | none
    declared: dict[str, object] = field(default_factory=dict)
    points: dict[str, dict[str, object]] = field(default_factory=dict)
    drift: dict[str, Drift] = field(default_factory=dict)
    # job -> why it has no drift ("no_block": a result from before the probe)
    reasons: dict[str, str] = field(default_factory=dict)
    probes: int = 0
    top_k: object = None
    tokens: object = None
    # Where the probes came from (quality.probe_source): "task <file>", else the workload.
    source: object = None
    synthetic: bool = False
    # The reference's forced positions with probabilities, and how many distinct likeliest
    # tokens they had: one means its next-token distribution did not depend on the context.
    ref_positions: int = 0
    ref_top1_distinct: int = 0
    # The median, over the reference's positions, of 1 - p(second) / p(first): how close its
    # own greedy choices were (a small margin: its answers rest on near-ties).
    ref_margin: float | None = None

    @property
    def measured(self) -> bool:
        return self.reference is not None

    def columns(self) -> dict[str, dict[str, float]]:
        """Per job, the drift figures a study may limit (`study.quality.limit`): mean KL
        divergence and the share of probes whose answer changed."""
        return {
            "drift_kld": {j: d.kld_mean for j, d in self.drift.items() if d.kld_mean is not None},
            "drift_changed": {j: 1 - d.identical_share for j, d in self.drift.items() if d.probes},
        }

    def flip_gaps(self) -> dict[str, float]:
        """Per job, how far apart the reference held the tokens it flipped (Drift.flip_gap)."""
        return {j: d.flip_gap for j, d in self.drift.items() if d.flip_gap is not None}


@dataclass
class QualityView:
    """What the template prints (empty `rows` with `not_measured`: the one line it says)."""

    not_measured: str | None = None
    reference: str | None = None
    reference_text: str = ""
    rows: list[dict[str, object]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # job -> why its drift is over the study's limit (the recommendation leaves it out).
    over_limit: dict[str, str] = field(default_factory=dict)
    drift: dict[str, Drift] = field(default_factory=dict)


def _rank(factor: str, value: Any, planned: Sequence[Any]) -> tuple[int, float | str]:
    """How conservative a factor's value is (lower first)."""
    v = str(value).lower()
    if factor == "slots":
        return (0, float(value))
    if factor in SPECULATIVE_FACTORS:
        return (0 if v in ("false", "none", "0") else 1, v)
    if factor.startswith("cache_type"):
        return (KV_ORDER.index(v) if v in KV_ORDER else len(KV_ORDER), v)
    plain = [str(p).lower() for p in planned]
    return (plain.index(v) if v in plain else len(plain), v)


def choose_reference(
    jobs: Mapping[str, Mapping[str, Any]],
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    declared: Mapping[str, Any],
) -> tuple[str | None, str]:
    """(job, how it was chosen): the declared point's job, else the most conservative one."""
    if declared:
        want = {k: str(v).lower() for k, v in declared.items()}
        for job, point in jobs.items():
            if all(str(point.get(k)).lower() == v for k, v in want.items()):
                return job, "declared"
        return None, "declared_missing"
    if not jobs:
        return None, "none"
    best = min(
        jobs,
        key=lambda j: tuple(_rank(f, jobs[j].get(f), planned.get(f) or []) for f in varying),
    )
    return best, "default"


def _probes(r: JobResult) -> tuple[list[ProbeRecord] | None, str | None]:
    """The job's probe answers, or why it has none."""
    q = r.data.get("quality")
    if not isinstance(q, Mapping):
        if (r.job_dir / "quality.jsonl").is_file():
            # Probes on disk that result.json does not record: the job ended in its probe (or
            # before writing what it probed), so what they were asked with is not known.
            return None, "unrecorded"
        return None, "no_block"
    if q.get("skipped"):
        return None, str(q["skipped"])
    path = r.job_dir / str(q.get("file") or "")
    if not q.get("file") or not path.is_file():
        return None, f"{q.get('file') or 'quality.jsonl'} is missing"
    return read_probes(path), None


# Kept here for the report's other readers; the formatter itself is the language layer's.
kld_text = fmt.kld


def _row(job: str, point: str, d: Drift | None, why: str | None, lang: str) -> dict[str, object]:
    if d is None:
        if why == "no_block":
            why = tr(lang, "no probe (measured without it)")
        elif why == "unrecorded":
            why = tr(
                lang,
                "quality.jsonl is there but result.json does not record the probe (the job "
                "ended in it), so it is not compared",
            )
        return {
            "job": job,
            "point": point,
            "identical": fmt.DASH,
            "first_diff": fmt.DASH,
            "top1": fmt.DASH,
            "kld_mean": fmt.DASH,
            "kld_max": fmt.DASH,
            "note": why or "",
        }
    return {
        "job": job,
        "point": point,
        "identical": f"{d.identical}/{d.probes}",
        "first_diff": fmt.DASH if d.first_diff_mean is None else f"{d.first_diff_mean:.1f}",
        "top1": fmt.DASH if d.top1_agreement is None else fmt.pct(d.top1_agreement),
        "kld_mean": kld_text(d.kld_mean),
        "kld_max": kld_text(d.kld_max),
        "note": tr(lang, "{n} positions without probabilities", n=d.positions_missing)
        if d.positions_missing
        else "",
    }


def factor_line(setting: str, speculative: bool, d: Drift, lang: str) -> str:
    """One factor's drift verdict: '{setting} changed no answer ...' or how much it changed.
    Markdown: `setting` comes escaped (fmt.md_cell); a broken promise is set in bold."""
    kld = kld_text(d.kld_mean)
    if d.changed == 0:
        text = tr(
            lang,
            "{setting} changed no answer: {n} of {n} probes gave the same tokens, mean KL "
            "divergence {kld}.",
            setting=setting,
            n=d.probes,
            kld=kld,
        )
        if speculative:
            text += " " + tr(
                lang, "Greedy speculative decoding kept every answer here, as it is meant to."
            )
        return text
    first = fmt.DASH if d.first_diff_mean is None else f"{d.first_diff_mean:.1f}"
    text = tr(
        lang,
        "{setting} changed {k} of {n} probes (the first differing token at position {first} on "
        "average), top-1 agreement {top1}, mean KL divergence {kld}.",
        setting=setting,
        k=d.changed,
        n=d.probes,
        first=first,
        top1=fmt.DASH if d.top1_agreement is None else fmt.pct(d.top1_agreement),
        kld=kld,
    )
    if d.flip_gap is not None:
        # The figure that says whether a flip is a near-tie tipping or a changed computation.
        text += " " + tr(
            lang,
            "Where the likeliest token differed, the reference's probabilities for the two "
            "tokens were {gap} apart (the median).",
            gap=fmt.pct(d.flip_gap, 1),
        )
    if speculative:
        # The broken promise in bold, then the figures once (an editor read "changed 1 of 8"
        # twice, the second sentence starting in lower case).
        text = (
            "**"
            + tr(lang, "Greedy speculative decoding is meant to keep every answer.")
            + "** "
            + text[:1].upper()
            + text[1:]
        )
    return text


def _over(d: Drift, limit: Mapping[str, float], lang: str) -> str | None:
    kld_limit, changed_limit = limit.get("kld"), limit.get("changed")
    if kld_limit is not None and d.kld_mean is not None and d.kld_mean > kld_limit:
        return tr(
            lang,
            "mean KL divergence {kld} is over the study's limit {limit}",
            kld=kld_text(d.kld_mean),
            limit=kld_text(kld_limit),
        )
    share = 1 - d.identical_share
    if changed_limit is not None and d.probes and share > changed_limit:
        return tr(
            lang,
            "{share} of probes changed, over the study's limit {limit}",
            share=fmt.pct(share),
            limit=fmt.pct(changed_limit),
        )
    return None


def measure_drift(
    results: Sequence[JobResult],
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    study: Any,
) -> DriftSet:
    """Every complete job's drift from the reference (see DriftSet)."""
    out = DriftSet(declared=dict(getattr(study.quality, "reference", {}) or {}))
    complete = [r for r in results if r.status == "complete"]
    answers: dict[str, list[ProbeRecord]] = {}
    for r in complete:
        recs, why = _probes(r)
        if recs is None:
            out.reasons[r.job_dir.name] = why or ""
        else:
            answers[r.job_dir.name] = recs
    out.points = {r.job_dir.name: {f: r.factors.get(f) for f in varying} for r in complete}
    out.synthetic = any(
        (r.data.get("provenance", {}).get("model") or {}).get("synthetic") for r in complete
    )
    if not answers:
        return out
    out.probes = max(len(a) for a in answers.values())
    out.top_k, out.tokens = _setting(complete, "top_k"), _setting(complete, "tokens")
    out.source = _setting(complete, "source")
    probed = {j: p for j, p in out.points.items() if j in answers}
    out.reference, out.how = choose_reference(probed, varying, planned, out.declared)
    if out.reference is None:
        return out
    tops = [t for rec in answers[out.reference] for t in rec["top"] if t]
    out.ref_positions, out.ref_top1_distinct = len(tops), len({top1(t) for t in tops})
    margins = [margin(t) for t in tops if len(t) > 1]
    out.ref_margin = statistics.median(margins) if margins else None
    for job, recs in answers.items():
        why = not_comparable(recs, answers[out.reference])
        if why is None:
            out.drift[job] = compare(recs, answers[out.reference])
        else:
            out.reasons[job] = why
    return out


def quality_view(
    ds: DriftSet,
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    study: Any,
    lang: str,
    point_text: Callable[[Mapping[str, Any] | None, str], str],
) -> QualityView:
    """The Quality section of a DriftSet, in `lang` (see the module docstring)."""
    view = QualityView()
    if not ds.drift and ds.how != "declared_missing":
        skipped = [w for w in ds.reasons.values() if w and w not in ("no_block", "unrecorded")]
        view.not_measured = (
            tr(lang, "Output drift was not measured: no job ran the probe ({why}).", why=skipped[0])
            if skipped
            else tr(
                lang,
                "Output drift was not measured: these results carry no probe (they were measured "
                "without benchkit's quality probe), so nothing here says whether the faster "
                "settings change the answers.",
            )
        )
        return view
    if ds.reference is None:
        view.not_measured = tr(
            lang,
            "Output drift was not compared: no measured job is at the declared reference point "
            "({point}); set study.quality.reference to a point that was measured.",
            point=", ".join(f"{k}={v}" for k, v in ds.declared.items()),
        )
        return view
    ref = ds.reference
    view.reference = ref
    view.drift = dict(ds.drift)
    view.reference_text = tr(
        lang,
        "Reference: {point} (job {job}; {how}).",
        point=point_text(ds.points[ref], lang) if varying else ref,
        job=ref,
        how=tr(lang, "declared in the study")
        if ds.how == "declared"
        else tr(lang, "the most conservative point measured"),
    )
    limit = dict(getattr(study.quality, "limit", {}) or {})
    for job, point in ds.points.items():
        text = point_text(point, lang) if varying else job
        d = ds.drift.get(job)
        view.rows.append(_row(job, text, d, ds.reasons.get(job), lang))
        over = _over(d, limit, lang) if d is not None and job != ref else None
        if over:
            view.over_limit[job] = over
    view.lines = _factor_lines(ds.points, ds.drift, ref, varying, planned, lang, point_text)
    view.notes = _notes(ds, lang)
    return view


def _factor_lines(
    points: Mapping[str, Mapping[str, Any]],
    drift: Mapping[str, Drift],
    ref: str,
    varying: Sequence[str],
    planned: Mapping[str, Sequence[Any]],
    lang: str,
    point_text: Callable[[Mapping[str, Any] | None, str], str],
) -> list[str]:
    """Per factor: each other value, at the reference's other factors, against the reference."""
    lines = []
    base = points[ref]
    for f in varying:
        values = sorted(
            {str(p.get(f)) for p in points.values()},
            key=lambda v: _rank(f, v, planned.get(f) or []),
        )
        for v in values:
            if v == str(base.get(f)):
                continue
            want = {**base, f: v}
            job = next(
                (
                    j
                    for j, p in points.items()
                    if j in drift and all(str(p.get(k)) == str(want[k]) for k in want)
                ),
                None,
            )
            if job is None:
                continue
            speculative = f in SPECULATIVE_FACTORS and v.lower() not in ("false", "none")
            setting = point_text({f: points[job][f]}, lang)
            held = {k: points[job][k] for k in varying if k != f}
            if held:
                # Measured at the reference's other factors only: said, so that '16 slots'
                # is not read as every 16-slot point.
                setting = f"{setting} ({point_text(held, lang)})"
            lines.append(
                factor_line(
                    fmt.md_cell(setting),
                    speculative,
                    drift[job],
                    lang,
                )
            )
    return lines


def _notes(ds: DriftSet, lang: str) -> list[str]:
    task = str(ds.source)[5:] if str(ds.source).startswith("task ") else None
    notes = [
        tr(
            lang,
            "How it was measured: after each job's timed replay, the same server answered "
            "{n} probes, the questions of the scored task {task}, greedily, and gave its "
            "top-{k} next-token log-probabilities at each of up to {t} positions of a right "
            "answer forced after each question; the probe is in no timed figure. KL divergence "
            "is a lower bound of the full divergence from the two top-{k} lists: a token "
            "missing from a list is taken as no likelier than its last entry.",
            n=ds.probes,
            task=task,
            k=ds.top_k,
            t=ds.tokens,
        )
        if task
        else tr(
            lang,
            "How it was measured: after each job's timed replay, the same server answered "
            "{n} probes drawn from the workload, greedily, and gave its top-{k} next-token "
            "log-probabilities at each of {t} forced positions per probe; the probe is in no "
            "timed figure. KL divergence is a lower bound of the full divergence from the two "
            "top-{k} lists: a token missing from a list is taken as no likelier than its last "
            "entry.",
            n=ds.probes,
            k=ds.top_k,
            t=ds.tokens,
        )
    ]
    if ds.ref_top1_distinct == 1 and ds.ref_positions > 1:
        # Then a setting that tips the one near-tie changes every probe at once: the counts
        # are one event, not independent evidence (a review of the H100 study found it).
        notes.append(
            tr(
                lang,
                "The reference gave the same likeliest token at all {n} forced positions: its "
                "next-token distribution did not depend on the context, so the probes repeat one "
                "observation, and a setting that tips it changes every probe at once.",
                n=ds.ref_positions,
            )
        )
    if ds.synthetic:
        notes.append(
            tr(
                lang,
                "The model has random weights: a drift here is a real change in what the "
                "server computes, but it says nothing about answer quality.",
            )
        )
    return notes


def _setting(results: Sequence[JobResult], key: str) -> object:
    for r in results:
        q = r.data.get("quality")
        if isinstance(q, Mapping) and q.get(key) is not None:
            return q[key]
    return fmt.DASH

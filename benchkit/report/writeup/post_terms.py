"""What a post's lead says was not done, and the glossary paragraph after it: the terms the
post uses, each defined once before the reader meets it (an editor found 'paired units',
'margin', 'bridged', 'on its units alone' and MTP used without a word of what they are).

The lead's own sentences are in post.py; these are the two an editor asked for beside them:
what the data leave out (each point ran once, the points that did not complete, the workload's
shape), and the terms."""

from __future__ import annotations

from collections.abc import Sequence

from benchkit.report.analysis.replayed import replayed
from benchkit.report.lang import fmt, tr, trn
from benchkit.report.verdicts.engine_of import engine_of
from benchkit.report.verdicts.folder import Analysed
from benchkit.results.store import JobResult

# The reason code of a verdict whose points each ran once (no run-to-run noise measured).
_ONCE = "run_noise_unmeasured"


def not_done(a: Analysed, lang: str, unit: str) -> str:
    """'Each point ran once, with no repeats; 7 of the 16 planned points did not complete. Each
    unit is a chain of 2 calls, 1,200 prompt tokens and 768 completion tokens on average.'"""
    out = []
    once = any(_ONCE in v.reasons for v in a.verdicts)
    missing = len(a.sweep.missing)
    if once and missing:
        out.append(
            tr(
                lang,
                "Each point ran once, with no repeats, and {k} of the {n} planned points did "
                "not complete.",
                k=missing,
                n=a.sweep.n_planned,
            )
        )
    elif once:
        out.append(tr(lang, "Each point ran once, with no repeats."))
    elif missing:
        out.append(
            tr(
                lang,
                "{k} of the {n} planned points did not complete.",
                k=missing,
                n=a.sweep.n_planned,
            )
        )
    shape = _shape(a, lang, unit)
    return " ".join([*out, *([shape] if shape else [])])


def _shape(a: Analysed, lang: str, unit: str) -> str:
    """The workload's shape per unit as the jobs replayed it (analysis.replayed), one
    sentence per workload where several were swept (the CPU study's post gave code-edit-10's
    70 and 72 tokens as the shape of both)."""
    groups: dict[str, list[JobResult]] = {}
    for r in a.results:
        w = r.result.provenance.workload
        groups.setdefault(str(w.fixture) if w is not None else "", []).append(r)
    if len(groups) < 2:
        return _one_shape(a.results, lang, unit)
    said = []
    for fixture, jobs in groups.items():
        text = _one_shape(jobs, lang, unit)
        if text:
            said.append(tr(lang, "{fixture}: {shape}", fixture=fixture, shape=text))
    return " ".join(said)


def _one_shape(results: Sequence[JobResult], lang: str, unit: str) -> str:
    """One workload's shape per unit: its calls, and its prompt and completion tokens; the
    units replayed named where they are fewer than the fixture's."""
    w = replayed(results)
    if w is None:
        return ""
    calls = w.calls / w.units
    n = int(calls) if calls.is_integer() else 2
    count = trn(lang, "{n} call", "{n} calls", n, n=fmt.num(calls, 0 if calls.is_integer() else 1))
    if w.prompt_tokens is None or w.completion_tokens is None:
        return tr(
            lang, "On average each {unit} of the workload is {calls}.", unit=unit, calls=count
        )
    prompt = fmt.integer(round(w.prompt_tokens / w.units))
    completion = fmt.integer(round(w.completion_tokens / w.units))
    if w.subset and not w.of_fixture:
        return tr(
            lang,
            "On average each of the {n} {unit}s replayed is {calls} with {prompt} prompt "
            "tokens and {completion} completion tokens.",
            n=fmt.integer(w.units),
            unit=unit,
            calls=count,
            prompt=prompt,
            completion=completion,
        )
    return tr(
        lang,
        "On average each {unit} of the workload is {calls} with {prompt} prompt tokens and "
        "{completion} completion tokens.",
        unit=unit,
        calls=count,
        prompt=prompt,
        completion=completion,
    )


def glossary(a: Analysed, lang: str, unit: str) -> str:
    """The terms the post uses, one paragraph: a unit and the throughput basis, the knee
    where slots were swept, paired units, the margin, a range on the units alone and
    run-to-run noise, an anchor run and a bridged comparison where machines differ, and MTP
    where it was swept. '' for a post without comparisons (open-loop or reference data)."""
    if a.verdict("capacity") is not None or not a.verdicts:
        return ""
    margin = fmt.pct(a.study.knee_gain)
    out = []
    if a.sweep.metric == "s_per_unit_throughput":
        out.append(
            tr(
                lang,
                "A {unit} is one task of the workload, a chain of calls sent in order; its "
                "seconds on the throughput basis are the wall clock over the {unit}s "
                "completed, what a batch of them costs.",
                unit=unit,
            )
        )
    if "slots" in a.sweep.varying and a.verdict("slots") is not None:
        out.append(
            tr(
                lang,
                "The knee is the fewest slots whose time is within the {margin} margin of "
                "the best count's: past it, more slots save less than that.",
                margin=margin,
            )
        )
    out.append(
        tr(
            lang,
            "Two points are compared on the {unit}s both ran (paired {unit}s): the ratio of "
            "their times {unit} by {unit}. A difference smaller than the {margin} margin "
            "counts as none; a comparison whose per-{unit} ratios straddle the margin is "
            "open (not decided).",
            unit=unit,
            margin=margin,
        )
    )
    eng = engine_of(a.sweep)
    machines = {x.machine for xs in eng.by_point.values() for x in xs if x.machine}
    if eng.settings.run_sd is not None:
        # Twins measured the run-to-run noise: no "which a single run cannot measure" beside
        # ranges that hold it (the CPU study, run twice).
        out.append(
            tr(
                lang,
                "A range 'on a repeat' is where a repeat of the comparison would put its ratio "
                "at 95% confidence, from how much the per-{unit} ratios spread and from the "
                "run-to-run noise that the same points run twice on one machine (twin runs) "
                "measured.",
                unit=unit,
            )
        )
    else:
        out.append(
            tr(
                lang,
                "A range 'on its {unit}s alone' is where a repeat of the comparison would put "
                "its ratio at 95% confidence, from how much the per-{unit} ratios spread; it "
                "leaves out run-to-run noise, how far a whole second run of the same point "
                "would move, which a single run cannot measure.",
                unit=unit,
            )
        )
    if a.study.anchors and len(machines) > 1:
        out.append(
            tr(
                lang,
                "Points measured on different cards are compared through a point run on both "
                "(an anchor run); such a comparison is called bridged.",
            )
        )
    elif a.study.anchors:
        out.append(
            tr(
                lang,
                "The anchor runs are the same sweep run again on the same machine: their "
                "points pair with this run's as twins.",
            )
        )
    if any(f.startswith("mtp") for f in a.sweep.varying):
        out.append(
            tr(
                lang,
                "MTP is speculative decoding with the model's multi-token prediction head: "
                "the head drafts tokens and the model verifies them in one step; the share "
                "of drafted tokens accepted is the draft acceptance.",
            )
        )
    return " ".join(out)

"""What a post's lead says was not done, and the glossary paragraph after it: the terms the
post uses, each defined once before the reader meets it (an editor found 'paired units',
'margin', 'bridged', 'on its units alone' and MTP used without a word of what they are).

The lead's own sentences are in post.py; these are the two an editor asked for beside them:
what the data leave out (each point ran once, the points that did not complete, the workload's
shape), and the terms."""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchkit.report.analysis.replayed import replayed
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, tr, trn
from benchkit.report.lang.i18n import list_text
from benchkit.report.verdicts.engine_of import engine_of
from benchkit.report.verdicts.folder import Analysed
from benchkit.results.store import JobResult

# The reason code of a verdict whose points each ran once (no run-to-run noise measured).
_ONCE = "run_noise_unmeasured"


def not_done(a: Analysed, lang: str, unit: str) -> str:
    """'Each point ran once, with no repeats; 7 of the 16 planned points did not complete.'
    The workload's shape per unit follows where the post has no terms paragraph to give it
    (glossary: an open-loop post's, or one without verdicts)."""
    out = []
    # Said here only where no provisional verdict gives it as its reason: the list under the
    # answer says it then (each caveat once in a post).
    once = any(_ONCE in v.reasons for v in a.verdicts) and not any(
        _ONCE in v.reasons and v.status != COMPLETE for v in a.verdicts
    )
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
    shape = "" if _has_glossary(a) else _shape(a, lang, unit)
    return " ".join([*out, *([shape] if shape else [])])


def _has_glossary(a: Analysed) -> bool:
    """Whether the post has a terms paragraph (glossary): not for open-loop load's capacity
    verdict, nor for a post without verdicts."""
    return a.verdict("capacity") is None and bool(a.verdicts)


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


def glossary(a: Analysed, lang: str, unit: str) -> dict[str, str]:
    """The terms the post uses: what a {unit} is, and the knee where slots were swept, said in
    the post ("own"); the others it uses, named for the methods page that defines them
    ("terms": paired units, open comparisons, ranges on the units alone, run-to-run noise,
    machine states, anchor runs, races, draft acceptance). Empty for a post without
    comparisons (open-loop or reference data)."""
    if not _has_glossary(a):
        return {}
    margin = fmt.pct(a.study.knee_gain)
    own = []
    # What a unit is, with the workload's shape per unit: the lead leaves both here, after the
    # answer (#45: the lead says why and what ran; the terms follow the answer). The bases
    # are the methods page's.
    if a.sweep.metric == "s_per_unit_throughput":
        own.append(
            tr(
                lang,
                "A {unit} is one task of the workload, a chain of calls sent in order.",
                unit=unit,
            )
        )
    if shape := _shape(a, lang, unit):
        own.append(shape)
    if "slots" in a.sweep.varying and a.verdict("slots") is not None:
        own.append(
            tr(
                lang,
                "The knee is the fewest slots whose time is within the {margin} margin of "
                "the best count's: past it, more slots save less than that.",
                margin=margin,
            )
        )
    own.append(tr(lang, "A difference under the {margin} margin counts as none.", margin=margin))
    # Twins (the sweep run again on its machine) measure the run-to-run noise that a range
    # "on its units alone" leaves out: the CPU study's post spoke of a single run that cannot
    # measure it, and of bridges between cards it never had.
    eng = engine_of(a.sweep)
    twins = eng.settings.run_sd is not None
    machines = {x.machine for xs in eng.by_point.values() for x in xs if x.machine}
    terms = [
        tr(lang, "paired {unit}s", unit=unit),
        tr(lang, "open comparisons"),
        tr(lang, "ranges on a repeat")
        if twins
        else tr(lang, "ranges on the {unit}s alone", unit=unit),
        tr(lang, "run-to-run noise"),
    ]
    if _machine_states(a) and len(machines) > 1:
        terms.append(tr(lang, "machine states"))
    if a.study.anchors and len(machines) > 1:
        terms.append(tr(lang, "anchor runs and bridged comparisons"))
    elif a.study.anchors:
        terms.append(tr(lang, "twin runs"))
    if a.sweep.race_stopped or a.sweep.race_best:
        terms.append(tr(lang, "races"))
    if any(f.startswith(("mtp", "spec")) for f in a.sweep.varying):
        terms.append(tr(lang, "draft acceptance"))
    return {"own": " ".join(own), "terms": list_text([*terms, *_words(a, lang)], lang)}


# The study's own texts name "the seed" (its question, what it did not try): the post that
# benchkit's first studies set out to check, which the methods page says.
_SEED = re.compile(r"\bseed(?:'s|-shaped)?\b", re.I)


def _words(a: Analysed, lang: str) -> list[str]:
    """The shorthand the post's tables and lists use, defined on the methods page (an editor
    found seed, imputed, SLO, ITL and hit cap used without a word of what they are): each
    where the post uses it."""
    out = []
    texts = " ".join([a.study.question or "", *(a.study.untested or [])])
    if _SEED.search(texts):
        out.append(tr(lang, "the seed"))
    if a.sweep.race_stopped:
        out.append(tr(lang, "imputed figures"))
    if a.sweep.objective.slo:
        out.append(tr(lang, "the SLO"))
    if any(c["kind"] == "rate_swing" for c in a.caveats):
        out.append(tr(lang, "ITL"))
    if a.results:
        out.append(tr(lang, "hit cap"))
    return out


def _machine_states(a: Analysed) -> bool:
    """Whether the post speaks of machine states: jobs on several cards, or on a card or host
    that other work held."""
    return bool(a.sweep.contaminated) or bool(a.sweep.anchors)

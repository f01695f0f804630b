"""A post's opening, which a report does without: the title that says what ran (the kind of
model, the cards, the factors), the lead paragraph (why the study ran, what was measured on
what, and what its data cannot say), and under the answer the one list of what keeps the
verdicts provisional, each reason once and in one sentence.

A report's sections each carry their own provisos; a post's sentences leave them out
(verdicts.voice) because this list says them, so every fact it gives comes from the verdicts'
own numbers and reason codes, as the report's parentheses do."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from benchkit.config.backends import BACKENDS, BackendName, EngineKind
from benchkit.config.schema import StudyText
from benchkit.report.analysis.numbers import ComparisonJson, DraftingNumbers, Point, SlotsNumbers
from benchkit.report.lang import clauses, fmt, grammar, i18n, tr, trn
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import reasons, registry
from benchkit.report.verdicts.compare_words import comparison_text
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.writeup import answer, post_terms, recommend, titles
from benchkit.report.writeup.conditions import params_text

# A card as evidence.gpu_of names it: its name, then the first characters of its UUID.
_CARD = re.compile(r"^(?P<name>.+) (?P<uuid>GPU-[0-9a-f]+)$")
# The factors whose verdicts judge drafting: with them, the lead says what random weights
# leave unknown about drafts.
_DRAFTING = ("mtp", "spec")


def _backends(a: Analysed) -> list[str]:
    return sorted({str(r.factors.get("backend") or "") for r in a.results} - {""})


def _engine(a: Analysed) -> str:
    """What served the model: 'llama.cpp CUDA' for one llama.cpp GPU backend, 'llama.cpp' for
    several or for the CPU, the engine's name otherwise ('vLLM')."""
    names = {m.value for m in BackendName}
    known = {b: BACKENDS.get(BackendName(b)) if b in names else None for b in _backends(a)}
    llama = [b for b, k in known.items() if k is not None and k.engine is EngineKind.llama_cpp]
    others = [
        k.label if k is not None else b
        for b in _backends(a)
        if (k := known.get(b)) is None or k.engine is not EngineKind.llama_cpp
    ]
    if len(llama) == 1 and not others and (k := known[llama[0]]) is not None and k.gpu:
        return f"llama.cpp {i18n.backend_name(llama[0])}"
    return " / ".join((["llama.cpp"] if llama else []) + others) or "llama.cpp"


def _card_name(a: Analysed) -> str:
    """The card as the hardware profile describes it, without its parenthesis ('NVIDIA
    H200'); else as the jobs' telemetry named it."""
    for r in a.results:
        hw = r.provenance.get("hardware")
        desc = str(hw.get("description") or "") if isinstance(hw, dict) else ""
        if desc:
            return re.sub(r"\s*\([^)]*\)\s*$", "", desc)
    for setup in a.sweep.setups.values():
        for part in setup.get("gpu", "").split(" + "):
            if m := _CARD.match(part.strip()):
                return m["name"]
    return ""


def cards(a: Analysed, anchors: bool = True) -> int:
    """How many cards the jobs ran on: the distinct cards their telemetry named (a job a race
    extended may have run on two), with the anchor runs' (`anchors`), one where none was
    named."""
    found = {
        m["uuid"]
        for setup in a.sweep.setups.values()
        for part in setup.get("gpu", "").split(" + ")
        if (m := _CARD.match(part.strip()))
    }
    found |= {
        m["uuid"]
        for units in a.sweep.unit_machines.values()
        for machine in units.values()
        for part in machine.split(" + ")
        if (m := _CARD.match(part.strip()))
    }
    if anchors:
        found |= {
            m["uuid"]
            for job in a.sweep.anchors
            for part in job.machine.split(" + ")
            if (m := _CARD.match(part.strip()))
        }
    return max(len(found), 1)


def _where(a: Analysed, lang: str) -> str:
    """'one NVIDIA H200', '4 NVIDIA H100 SXM cards', 'the CPU': every card a figure of the post
    was measured on, the anchor runs' included (review 12: "on 3 cards" where the check card,
    a fourth, carried the verdicts' one-machine pairs)."""
    if set(_backends(a)) <= {"cpu"}:
        return titles.cpu_where(a, lang)
    name = _card_name(a)
    n = cards(a)
    if not name:
        return tr(lang, "this machine's GPU")
    if n == 1:
        return tr(lang, "one {card}", card=name)
    return tr(lang, "{n} {card} cards", n=n, card=name)


def _checked(a: Analysed, lang: str) -> str:
    """' (checked on one more card)' where anchor runs re-ran points on cards the sweep's own
    jobs did not run on (a title counts those apart); '' otherwise."""
    if set(_backends(a)) <= {"cpu"}:
        return ""
    # `_where` counts them already ("4 NVIDIA H100 SXM cards"): a title says no more.
    extra = cards(a) - cards(a, anchors=False)
    if extra <= 0 or _where(a, lang) != tr(lang, "one {card}", card=_card_name(a)):
        return ""
    return trn(lang, " (checked on one more card)", " (checked on {n} more cards)", extra, n=extra)


def _model(a: Analysed) -> tuple[str, bool, float | None]:
    """The first recorded model's name, whether benchkit wrote it with random weights, and
    its parameters in billions."""
    for r in a.results:
        m = r.result.provenance.model
        if m is not None and m.name:
            return m.name, bool(m.synthetic), m.params_total_b
    return "", False, None


def post_title(a: Analysed, lang: str, found: str = "") -> str:
    """A post's title: what was found with its figure, on what ('Random-weight GLM4MoE-30B-A3B
    on one NVIDIA H200: Vulkan took 1.21x–1.31x the time of CUDA (provisional)',
    answer.finding); without a finding, what ran ('... with llama.cpp: backend, parallel
    slots and MTP'). The model by its short name: the lead gives the full one."""
    full, synthetic, _ = _model(a)
    name = titles.short_name(full)
    model = tr(lang, "Random-weight {model}", model=name) if synthetic else name
    model = model or tr(lang, "a model")
    if found:
        return tr(
            lang,
            "{model} on {where}{check}: {finding}",
            model=model,
            where=_where(a, lang),
            # The cards that only checked points are the lead's to say: a title with a
            # finding stays short.
            check="",
            finding=found,
        )
    factors = i18n.list_text([i18n.factor_name(f, lang) for f in a.sweep.varying], lang)
    where, engine, check = _where(a, lang), _engine(a), _checked(a, lang)
    if not factors:
        return tr(
            lang,
            "{model} on {where} with {engine}{check}",
            model=model,
            where=where,
            engine=engine,
            check=check,
        )
    return tr(
        lang,
        "{model} on {where} with {engine}{check}: {factors}",
        model=model,
        where=where,
        engine=engine,
        check=check,
        factors=factors,
    )


def lead(a: Analysed, words: StudyText, lang: str, unit: str) -> str:
    """The lead paragraph: the study's question, what was measured on what machine, how the
    machines differed, what the model's weights can and cannot say, and what was not
    measured."""
    # The question in the post's register (Korean asks in 합니다체: lang/ko.py question).
    polite = getattr(grammar(lang), "question", None)
    parts = [polite(words.question or "") if polite else words.question or ""]
    parts.append(_measured(a, lang, unit))
    # What the data leave out: single runs, points not run, the workload's shape.
    parts.append(post_terms.not_done(a, lang, unit))
    derived = _derived(a)
    if 0 < derived < len(a.results):
        parts.append(
            tr(
                lang,
                "Of its {total} jobs, {n} are reference data transcribed or derived from a "
                "publication, not measured by benchkit (see Reference data).",
                n=derived,
                total=len(a.results),
            )
        )
    parts += _machines(a, lang)
    parts.append(_model_sentence(a, lang))
    # A scored task (a task block in any complete job's result) measures output quality.
    scored = any(isinstance(r.data.get("task"), Mapping) for r in a.results)
    if not a.study.quality_measured and not scored and not a.drift.measured:
        parts.append(tr(lang, "Output quality was not measured: this is about speed only."))
    elif not a.study.quality_measured and not scored:
        parts.append(
            tr(
                lang,
                "Output quality was not measured: only whether the answers drift from a "
                "reference job's (see Quality).",
            )
        )
    return " ".join(p for p in parts if p)


def _measured(a: Analysed, lang: str, unit: str) -> str:
    """'To answer it, benchkit served the model with llama.cpp CUDA on one NVIDIA H200 at 8
    combinations of parallel slots and MTP, replaying 8 units of the gpu-16 workload at
    each and timing seconds per unit (throughput basis).'"""
    factors = [i18n.factor_name(f, lang) for f in a.sweep.varying]
    n = a.sweep.n_planned
    if len(factors) > 1:
        at = tr(
            lang,
            "{n} combinations of {factors}",
            n=n,
            factors=i18n.list_text(factors, lang),
        )
    elif factors:
        at = tr(lang, "{n} values of {factor}", n=n, factor=factors[0])
    else:
        at = tr(lang, "one setting")
    fixture, replayed, raced = _workload(a)
    if a.verdict("capacity") is not None:
        timing = tr(lang, "the load each setting held")
    else:
        timing = i18n.objective_words(a.sweep.metric, lang)
    fields = {
        "engine": _engine(a),
        "where": _where(a, lang),
        "at": at,
        "fixture": fixture,
        "units": fmt.integer(replayed),
        "unit": unit,
        "timing": timing,
    }
    if _derived(a) >= len(a.results):
        # Reference data (the seed's): numbers a publication gave, not a run of benchkit's.
        return tr(
            lang,
            "To answer it, this post compares {at} on {where} with {engine}, {units} {unit}s "
            "of the {fixture} workload at each, from numbers transcribed or derived from a "
            "publication, not measured by benchkit.",
            **fields,
        )
    if raced:
        return tr(
            lang,
            "To answer it, benchkit served the model with {engine} on {where} at {at}, "
            "replaying up to {units} {unit}s of the {fixture} workload at each and timing "
            "{timing}. The sweep ran as a race: it stopped a point early once the point was "
            "decided slower than the best.",
            **fields,
        )
    if len(fixtures := _fixtures(a)) > 1:
        return tr(
            lang,
            "To answer it, benchkit served the model with {engine} on {where} at {at}, replaying "
            "{units} {unit}s of its workload at each (the workloads: {fixtures}) and timing "
            "{timing}.",
            **fields,
            fixtures=i18n.list_text(fixtures, lang),
        )
    return tr(
        lang,
        "To answer it, benchkit served the model with {engine} on {where} at {at}, replaying "
        "{units} {unit}s of the {fixture} workload at each and timing {timing}.",
        **fields,
    )


def _fixtures(a: Analysed) -> list[str]:
    """The workloads the jobs replayed, each once, in job order (a sweep over workloads)."""
    names = [r.result.provenance.workload for r in a.results]
    return list(dict.fromkeys(w.fixture for w in names if w is not None and w.fixture))


def _derived(a: Analysed) -> int:
    """How many jobs are reference data a publication gave, not measured by benchkit."""
    return next((int(c["jobs"]) for c in a.caveats if c["kind"] == "derived"), 0)


def _workload(a: Analysed) -> tuple[str, int, bool]:
    """The fixture's name, the units each job replayed (the most, where jobs differ), and
    whether they differ (a race)."""
    fixture, total, counts = "", 0, set()
    for r in a.results:
        w = r.result.provenance.workload
        if w is None:
            continue
        fixture = fixture or (w.fixture or "")
        total = total or (w.units or 0)
        if w.units_replayed:
            counts.add(int(w.units_replayed))
    return fixture, max(counts, default=total), len(counts) > 1


def _machines(a: Analysed, lang: str) -> list[str]:
    """How the jobs' machines differed: spread over several cards, or a card that something
    else held memory of; the comparisons count either as another machine."""
    out = []
    n = cards(a, anchors=False)
    if n > 1 and a.study.anchors and cards(a) > n:
        out.append(
            tr(
                lang,
                "The sweep's jobs were spread over {n} cards, and two points of different cards "
                "are compared only through a point measured on both: some points were run again "
                "on one more card for that (the anchor runs).",
                n=n,
            )
        )
    elif n > 1 and a.study.anchors:
        out.append(
            tr(
                lang,
                "The jobs were spread over the {n} cards, and two points of different cards are "
                "compared only through a point measured on both: some points were run again on "
                "one card for that (the anchor runs).",
                n=n,
            )
        )
    elif n > 1:
        out.append(
            tr(
                lang,
                "The jobs were spread over the {n} cards, and two points of different cards are "
                "compared only through a point measured on both.",
                n=n,
            )
        )
    # A card another process held memory of is said once, after the answer, where the post
    # lists what differs per job (review 11: the lead said it before the results, and two
    # sections again).
    return out


def _model_sentence(a: Analysed, lang: str) -> str:
    """What the model's weights let the numbers say."""
    name, synthetic, params = _model(a)
    if not name:
        return ""
    size = tr(lang, " ({n} parameters)", n=params_text(params)) if params else ""
    license_ = next(
        (m.license for r in a.results if (m := r.result.provenance.model) and m.license), None
    )
    if synthetic and any(f.startswith(_DRAFTING) for f in a.sweep.varying):
        return tr(
            lang,
            "The model, {name}{size}, has random weights that benchkit wrote: its speed is that "
            "of a model of its shape, but it says nothing about how often a trained model's "
            "drafts are accepted or what its answers are.",
            name=name,
            size=size,
        )
    if synthetic:
        return tr(
            lang,
            "The model, {name}{size}, has random weights that benchkit wrote: its speed is that "
            "of a model of its shape, but it says nothing about what a trained model answers.",
            name=name,
            size=size,
        )
    if license_:
        return tr(
            lang,
            "The model is {name}{size}, with real weights, under the license {license}.",
            name=name,
            size=size,
            license=license_,
        )
    return tr(
        lang,
        "The model is {name}{size}, from a file given by its path: benchkit does not know "
        "what its weights are.",
        name=name,
        size=size,
    )


def unsettled(
    a: Analysed, by: Mapping[str, an.Verdict], lang: str
) -> tuple[str, list[dict[str, str]]]:
    """What keeps the verdicts provisional, said once: the line that opens the list (how many
    planned points finished), and the reasons, each once with the verdicts it holds for
    ({"label": 'Backend, parallel slots, MTP', "reason": ...}). ('', []) where every verdict
    is settled."""
    by_text: dict[str, list[str]] = {}
    for v in by.values():
        if v.status == an.COMPLETE or registry.kind_of(v.factor).completeness:
            continue
        codes = (["missing"] if v.missing else []) + list(v.reasons)
        for code in codes:
            text = _reason(code, v, a.study.knee_gain, lang)
            if text:
                by_text.setdefault(text, []).append(i18n.factor_name(v.factor, lang))
    if not by_text:
        return "", []
    # A reason several verdicts share is said once, under all of them, first; then each
    # verdict's own, in the verdicts' order.
    shared = sorted(by_text.items(), key=lambda kv: -len(set(kv[1])))
    items: list[dict[str, str]] = [
        {
            "label": grammar(lang).inflect(", ".join(dict.fromkeys(factors)), "capital"),
            "reason": text,
        }
        for text, factors in shared
    ]
    return _intro(a, by, lang), items


def _intro(a: Analysed, by: Mapping[str, an.Verdict], lang: str) -> str:
    validity = registry.study_status(by.values())
    missing = validity.missing
    planned = a.sweep.n_planned
    if missing:
        return tr(
            lang,
            "{k} of {n} planned points did not complete (listed under Not run). Not settled yet:",
            k=len(missing),
            n=planned,
        )
    return tr(lang, "Every planned point finished ({n}). Not settled yet:", n=planned)


def _reason(code: str, v: an.Verdict, margin: float, lang: str) -> str:
    """One reason as a post lists it: one sentence, its numbers the verdict's own; '' for
    one the list need not give (a verdict provisional because another one is, which the
    list names already)."""
    n = v.numbers
    if code.startswith("depends_on:"):
        return ""
    if code == "missing":
        return tr(lang, "the comparisons include planned points that did not complete")
    if code == "open_pairs" and isinstance(n, DraftingNumbers):
        # The drafting section gives every setting's comparison with its range: named here.
        settings = [i18n.point_text(_shared(c), lang) for c in n.open or []]
        return tr(
            lang,
            "not decided at the {margin} margin at {settings} (its section gives their ranges)",
            margin=fmt.pct(margin),
            # Each setting names several factors ('CUDA, 2 slots'): a list of them by commas
            # would run together.
            settings=" / ".join(settings),
        )
    if code == "open_pairs" and hasattr(n, "open"):
        pairs = [comparison_text(c, lang, at=True) for c in getattr(n, "open", None) or []]
        return tr(
            lang,
            "not decided at the {margin} margin: {pairs}",
            margin=fmt.pct(margin),
            pairs=clauses(lang, pairs),
        )
    if code == "run_noise_unmeasured":
        return tr(
            lang,
            "each point ran once, so each range given is its units' spread alone; how far a "
            "second run would move a whole point is not measured",
        )
    if code == "drafts_rejected" and isinstance(n, DraftingNumbers) and n.acceptance_range:
        return tr(
            lang,
            "what drafting would gain with accepted drafts was not tested: at most {share} of "
            "drafts were accepted, so only its cost was measured",
            share=fmt.pct(n.acceptance_range[1]),
        )
    if code == "partial_rounds" and isinstance(n, SlotsNumbers) and n.partial_rounds:
        return _partial(n, lang)
    return reasons.reason_text(code, v, lang)


def _shared(c: ComparisonJson) -> Point:
    """What two compared points have in common: the setting a comparison was made at."""
    return {k: x for k, x in c["other"].items() if str(x) == str(c["base"].get(k))}


def _partial(n: SlotsNumbers, lang: str) -> str:
    rounds = n.partial_rounds or []
    if rounds and all("measured_idle" in r for r in rounds):
        items = i18n.list_text(
            [
                tr(
                    lang,
                    "{slots} ({idle} of slot-time idle)",
                    slots=i18n.slots_phrase(r["slots"], lang),
                    idle=fmt.pct(r.get("measured_idle", 0.0)),
                )
                for r in rounds
            ],
            lang,
        )
        return tr(
            lang,
            "at {slots} the units did not fill whole rounds of slots, so those runs ended with "
            "slots idle",
            slots=items,
        )
    counts = [r["slots"] for r in rounds]
    items = i18n.list_text([i18n.slots_phrase(c, lang) for c in counts], lang)
    return tr(
        lang,
        "at {slots} the units did not fill whole rounds of slots, so those runs ended with "
        "slots idle (the slots-idle share under Where the time went)",
        slots=items,
    )


def recommendation(
    by: Mapping[str, an.Verdict],
    lang: str,
    varying: Sequence[str] | None = None,
    cannot: Collection[str] = (),
) -> str:
    """The answer's recommendation, once (the report's Use this and Summary each have their
    own): the setting to use, and how sure (recommend.recommendation). With `varying` (the
    factors the sweep varied), the settings it chose, and those it held fixed apart."""
    rec = recommend.recommendation(by)
    point = recommend.point_words(rec, by, lang, varying)
    fixed = recommend.held_fixed(rec.point, varying, lang, cannot) if varying is not None else ""
    if rec.state in (recommend.SETTLED, recommend.PROVISIONAL):
        # The headline above names each verdict, so the setting they make is said there; what
        # it cannot say is which settings the sweep held fixed.
        return fixed.strip()
    if rec.state == recommend.BEST_SO_FAR:
        return (
            tr(
                lang,
                "No recommendation yet: the best completed point so far is {point}, but planned "
                "points it is compared with did not complete.",
                point=point,
            )
            + fixed
        )
    return tr(lang, "No recommendation: the data do not single out a setting.")


def _not_isolated(question: str, lang: str) -> str:
    """Where the study asks whether the GPU or the server's CPU loop is the limit, that no
    run isolated it: benchkit measures busy shares, and a busy share does not say which of
    the two waits for the other ('' for another question)."""
    if "CPU loop" not in question:
        return ""
    return tr(
        lang,
        "Whether the GPU or the server's CPU loop is the limit was not isolated: no run "
        "separated the two. Where the time went gives the GPU's busy share and the busiest "
        "server thread's, but a busy share does not say which of them waits for the other.",
    )


def post_view(
    a: Analysed,
    by: Mapping[str, an.Verdict],
    words: StudyText,
    lang: str,
    drift: str | None,
    unit: str,
    sections: Sequence[Mapping[str, object]] = (),
) -> dict[str, object]:
    """What a post prints that a report does not: its title, its lead paragraph, and under
    the answer the recommendation (with the drift at its point) and what is not settled."""
    intro, items = unsettled(a, by, lang)
    said = answer.answer(a, by, lang, unit)
    return {
        "title": post_title(a, lang, answer.finding(a, by, lang, unit)),
        # The answer once, in short sentences (writeup.answer): the bold line, the front
        # matter's description; the sections leave out what it said.
        "headline": " ".join(said),
        "sections": answer.once(sections, said),
        "opening": lead(a, words, lang, unit),
        # The terms the post uses, after the lead (writeup.post_terms).
        "glossary": post_terms.glossary(a, lang, unit),
        "answer": [
            line
            for line in (
                recommendation(by, lang, a.sweep.varying, recommend.cannot_vary_in(a)),
                drift,
                _not_isolated(f"{a.study.question} {words.question or ''}", lang),
            )
            if line
        ],
        "unsettled_intro": intro,
        "unsettled": items,
    }

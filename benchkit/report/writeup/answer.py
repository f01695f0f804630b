"""A post's answer, said once in a few short sentences, numbers first (as the seed study's
"Vulkan, 4 slots, MTP off: about 172 s per unit"): the recommended point's time, then each
verdict in a sentence of its own, then whether they are settled. The report keeps its
one-line headline (writeup.headline); a post's front matter, bold answer and sections say the
answer once between them (review 9 found one run-on sentence printed three times).

Where every speed verdict is provisional but the answers' drift is a finding (greedy probes
are not noisy: a setting that changed most of them did), the post leads with that finding;
its title (post_title) says the finding too, never the list of factors."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.numbers import ProjectionNumbers, of
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.lang import fmt, grammar, tr
from benchkit.report.lang.i18n import point_text
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.common import Verdict, is_setting
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.projection_words import busy_text
from benchkit.report.writeup import claim_figures, headline

# Without a study's drift limit, a setting leads the post when it changed at least this share
# of the probes' answers.
_CHANGED = 0.5
# Where a sentence ends in a section's text (English and Korean both end with a full stop).
_SENTENCE_END = re.compile(r"(?<=\.)\s+")
# The longest verdict sentence a title takes as its finding.
_TITLE = 60
# A parenthesis, nested ones included (a sentence's own numbers and provisos).
_PARENS = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)")
# A section's sentence shorter than this is never taken for part of the answer's.
_SHORT = 30


def answer(a: Analysed, by: Mapping[str, Verdict], lang: str, unit: str) -> list[str]:
    """The answer's sentences: the drift finding first where it leads, the time at the
    recommended point, each verdict, and whether they are settled."""
    speed = [v for v in by.values() if is_setting(v)]
    provisional = [v for v in speed if v.status != COMPLETE]
    time = projection(by, lang, unit, a.sweep.varying, bool(provisional))
    # The time's sentence says whether it is provisional where it names its point.
    carried = tr(lang, " (provisional)") in time
    finding = drift_finding(a, lang) if speed and len(provisional) == len(speed) else ""
    if finding:
        # The speed verdicts are all open: their sentences are in their sections.
        return [
            finding,
            *([time] if time else []),
            tr(lang, "No speed verdict is settled yet: the list below says why."),
        ]
    # The findings first, each with its figure, then the time at the point they name (review
    # 11: answers that led with a configuration and its time). A factor whose speed is not
    # decided but whose answers drifted says the drift beside it: the drift is decided
    # (review 11: "K cache type was not decided" where q4_0 changed every answer).
    found = worst_drift(a)
    drift = {found[1]: drift_finding(a, lang)} if found is not None else {}
    out = [*verdict_sentences(by, lang, drift), *([time] if time else [])]
    if provisional and not carried:
        out.append(tr(lang, "These verdicts are provisional: the list below says why."))
    return out or [headline.headline(by, lang, unit)]


def verdict_sentences(
    by: Mapping[str, Verdict], lang: str, after: Mapping[str, str] | None = None
) -> list[str]:
    """Each verdict's clause of the headline as a sentence of its own, its figure beside it,
    and `after`'s sentence for its factor (a drift finding) after them."""
    out: list[str] = []
    for kind, mine in registry.by_kind(by.values()):
        for v in sorted(mine, key=lambda v: v.factor) if kind.prefix else mine:
            # Each clause as the last of its sentence ("" follows it): a language that joins
            # clauses (Korean ~이며) closes it then.
            texts = [c("") for c in kind.clauses(v, lang)] if kind.clauses else []
            if kind.clause is not None and (own := kind.clause(v, lang)):
                texts.append(own)
            # Each claim beside the figure it stands on (claim_figures): a clause per series
            # with its series' figure, else the one figure after the first clause.
            figures = claim_figures.figures(v, lang) if texts else []
            texts = [t for i, text in enumerate(texts) for t in (text, *figures[i : i + 1])]
            out += [_sentence(t, lang) for t in texts if t]
            if texts and (after or {}).get(v.factor):
                out.append((after or {})[v.factor])
    return out


def _sentence(text: str, lang: str) -> str:
    """`text` as a sentence: a capital where the language has them, unless it opens with a
    name such as q4_0 or vLLM, and a full stop."""
    text = text.strip()
    first = text.split(" ", 1)[0]
    if first.isalpha() and first[1:] == first[1:].lower():
        text = grammar(lang).inflect(text, "capital")
    return text if text.endswith(".") else f"{text}."


def projection(
    by: Mapping[str, Verdict],
    lang: str,
    unit: str,
    varying: Sequence[str],
    provisional: bool = False,
) -> str:
    """'6 slots (provisional): about 6.0 s per unit, 10.0 min per 100 units (throughput
    basis).' at the point the verdicts name; the projection's own words where an application
    factor (a workload the user chooses) gives one figure per value."""
    p = by.get("projection")
    if p is None or p.verdict is None:
        return ""
    pn = of(ProjectionNumbers, p.numbers)
    if pn.application or pn.seconds is None:
        return headline.headline({"projection": p}, lang, unit, varying)
    # The settings the sweep chose between; those it held fixed are said under the answer.
    point = p.point or {}
    shown = {k: x for k, x in point.items() if k in varying} or dict(point)
    text = tr(
        lang,
        "{point}: about {each} per {unit}, {hours} per {units} {unit}s (throughput basis)",
        point=point_text(shown, lang)
        + busy_text(pn.host_busy, lang)
        + (tr(lang, " (provisional)") if provisional else ""),
        each=fmt.seconds(pn.s_per_unit if pn.s_per_unit else pn.seconds / pn.units, lang),
        hours=fmt.hours(pn.seconds, lang),
        units=fmt.integer(pn.units),
        unit=unit,
    )
    if pn.units_stated and pn.units_measured is not None:
        text += tr(
            lang,
            ", {measured} of its {stated} units measured, the rest estimated from its "
            "machine's other points",
            measured=fmt.integer(pn.units_measured),
            stated=fmt.integer(pn.units_stated),
        )
    return _sentence(text, lang)


def drift_finding(a: Analysed, lang: str) -> str:
    """'q4_0 K cache changed 8 of 8 probe answers from f16 K cache's, and answered 6 of 10
    task items right against 9 of 10 for f16 K cache.' (worst_drift); '' where none leads."""
    found = worst_drift(a)
    if found is None:
        return ""
    job, factor = found
    ds = a.drift
    ref = ds.points[str(ds.reference)]
    d = ds.drift[job]
    fields = {
        "setting": point_text({factor: ds.points[job][factor]}, lang),
        "reference": point_text({factor: ref[factor]}, lang),
        "k": d.changed,
        "n": d.probes,
    }
    mine, theirs = _task(a.results, job), _task(a.results, str(ds.reference))
    if mine and theirs:
        return _sentence(
            tr(
                lang,
                "{setting} changed {k} of {n} probe answers from {reference}'s, and answered "
                "{right} of {items} task items right against {ref_right} of {ref_items} for "
                "{reference}",
                **fields,
                right=mine[0],
                items=mine[1],
                ref_right=theirs[0],
                ref_items=theirs[1],
            ),
            lang,
        )
    return _sentence(
        tr(lang, "{setting} changed {k} of {n} probe answers from {reference}'s", **fields), lang
    )


def worst_drift(a: Analysed) -> tuple[str, str] | None:
    """The job, and the one factor it changed from the drift reference, whose answers
    drifted the most, where that is over the study's drift limit (without one: at least half
    the probes changed); None where no such job is."""
    ds = a.drift
    # Random weights answer nothing: their drift is numerics on near-ties, no finding to lead
    # with.
    if ds.synthetic or ds.reference is None or ds.reference not in ds.points:
        return None
    ref = ds.points[ds.reference]
    limit = a.study.quality.limit.get("changed")
    best: tuple[tuple[float, float], str, str] | None = None
    for job, d in ds.drift.items():
        p = ds.points.get(job) or {}
        differ = [k for k in a.sweep.varying if str(p.get(k)) != str(ref.get(k))]
        share = 1 - d.identical_share if d.probes else 0.0
        over = share > limit if limit is not None else share >= _CHANGED
        if len(differ) != 1 or not over:
            continue
        key = (share, d.kld_mean or 0.0)
        if best is None or key > best[0]:
            best = (key, job, differ[0])
    return None if best is None else (best[1], best[2])


def _task(results: Sequence[Any], job: str) -> tuple[int, int] | None:
    """A job's scored task as (right, items), None where it ran none."""
    for r in results:
        block = r.data.get("task") if r.job_dir.name == job else None
        if isinstance(block, Mapping) and block.get("items"):
            return int(block.get("correct") or 0), int(block["items"])
    return None


def finding(a: Analysed, by: Mapping[str, Verdict], lang: str, unit: str) -> str:
    """What a title says was found, short and with its figure: the drift finding where it
    leads the answer, else a comparison's figure ('Vulkan took 1.21x–1.31x the time of CUDA
    (provisional)', claim_figures.title_figure), else the first verdict short enough ('No knee
    up to 16 slots'); '' where none is (the title then says what ran). Never a configuration
    and its time: that is the answer's last sentence, not what the study found."""
    speed = [v for v in by.values() if is_setting(v)]
    found = worst_drift(a)
    if speed and all(v.status != COMPLETE for v in speed) and found is not None:
        d = a.drift.drift[found[0]]
        return tr(
            lang,
            "{setting} changed {k} of {n} probe answers",
            setting=point_text({found[1]: a.drift.points[found[0]][found[1]]}, lang),
            k=d.changed,
            n=d.probes,
        )
    figure = claim_figures.title_figure(by, lang)
    if figure:
        return _sentence(figure, lang).rstrip(".")
    said = [x.rstrip(".") for x in verdict_sentences(by, lang)]
    return next((x for x in said if len(x) <= _TITLE), "")


def says_projection(by: Mapping[str, Verdict], section: Mapping[str, object]) -> bool:
    """Whether `section` is the projection's and the post's answer (the headline) already
    gives its figure: a post states each fact once."""
    p = by.get("projection")
    return section.get("kind") == "projection" and p is not None and p.verdict is not None


def method_only(section: Mapping[str, object]) -> bool:
    """Whether `section` says only how points are compared (the repeats section of a sweep
    without repeats): the methods page says that, once for every post."""
    return section.get("kind") == "repeats" and not section.get("table")


def once(sections: Sequence[Mapping[str, object]], said: Sequence[str]) -> list[dict[str, object]]:
    """The sections without the sentences the answer said already (a section opens with its
    verdict, which the answer gives): each fact once in a post."""
    keys = [_key(s) for s in said if _key(s)]
    out = []
    for s in sections:
        text = str(s.get("text") or "")
        kept = [
            t
            for t in _SENTENCE_END.split(text)
            if not any(k in _key(t) or (len(_key(t)) > _SHORT and _key(t) in k) for k in keys)
        ]
        if kept and _DANGLING.match(kept[0]) and s.get("title"):
            # Opening on "it" with its opener, the answer's sentence, gone: the section's
            # title stands for what "it" is ("MTP (speculative decoding): turning it on took
            # ..."), as the answer's sentence printed again with a colon was still twice.
            first = kept[0].lstrip()
            kept = [f"{s['title']}: {first[:1].lower()}{first[1:]}", *kept[1:]]
        elif not kept or _DANGLING.match(kept[0]):
            # A section left empty, or opening on "it" with its opener gone (a Korean reader
            # found English sections blank or starting "It stands the same ..."): kept whole,
            # its opener joined to the sentence that refers back to it, so the answer's
            # sentence is not printed twice word for word.
            kept = [_joined(_SENTENCE_END.split(text))]
        out.append({**s, "text": " ".join(kept)})
    return out


def _joined(sentences: Sequence[str]) -> str:
    """A section's sentences, the first joined to a second that refers back to it ('MTP hurt
    at every slot count: turning it on took 1.45x ...')."""
    if len(sentences) > 1 and sentences[0].endswith(".") and _DANGLING.match(sentences[1]):
        second = sentences[1].lstrip()
        first = sentences[0][:-1] + ": " + second[:1].lower() + second[1:]
        return " ".join([first, *sentences[2:]])
    return " ".join(sentences)


# A sentence that refers back to the one before it.
_DANGLING = re.compile(
    r"^\s*(?:(?:It|Its|Turning it|The verdict is the same|This|These|They)\b|.*\bturning it on\b)",
    re.IGNORECASE,
)


def _key(text: str) -> str:
    """A sentence as compared: without its parentheses (a section's sentence names its basis,
    the answer's its trade-off), its full stop and its capitals."""
    return re.sub(r"\s+", " ", _PARENS.sub("", text)).strip().rstrip(".").lower()

"""The view model: everything the report's templates print, as sentences in the study's
language and raw numbers for the pure filters. The factor sections come from `sections`, what
was measured on what from `conditions`; here are the status and summary, the verdict table,
claims, corrections, caveats and what was not run, and the study's own words."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchkit import __version__
from benchkit.config.schema import ClaimText, StudyConfig, StudyText
from benchkit.load.measure import DEFINITIONS as LOAD_DEFINITIONS
from benchkit.measure.calls import DEFINITIONS
from benchkit.report import ledger
from benchkit.report.analysis.caveats import caveat_sentence
from benchkit.report.analysis.claims import ClaimCheck, Refuted
from benchkit.report.analysis.quality import quality_view
from benchkit.report.analysis.sweep import Row
from benchkit.report.lang import NC_, clauses, fmt, i18n, tr, trc_marked, trn
from benchkit.report.ledger import words as ledger_words
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import compare_words, registry
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kind import Section
from benchkit.report.verdicts.light import Light
from benchkit.report.writeup import answer, conditions, headline, post, recommend
from benchkit.report.writeup.before_prompt_words import before_prompt_line, before_prompt_short
from benchkit.report.writeup.quality_models import model_files_view
from benchkit.report.writeup.result_columns import result_columns
from benchkit.report.writeup.sections import factor_sections, lead_figure
from benchkit.report.writeup.summary import recommended_drift, status_and_summary
from benchkit.report.writeup.task import task_view
from benchkit.report.writeup.time_rows import imputed_jobs, rows_note, time_rows
from benchkit.report.writeup.titles import composed
from benchkit.report.writeup.trust_words import trust_sentences

# The units a study may name without giving its own word for them (StudyConfig.unit_name).
UNIT_WORDS = {
    "unit": NC_("study unit", "unit"),
    "stock": NC_("study unit", "stock"),
    "document": NC_("study unit", "document"),
    "task": NC_("study unit", "task"),
}


# The caveats a post's lead says already (post.lead): a synthetic model, jobs on another
# machine state.
POST_SAYS = ("derived", "synthetic_model", "contaminated")


def unit_word(study: StudyConfig, lang: str) -> str:
    """What the study's unit is called in `lang`: the study's own word for it there, else a
    known unit's translation, else the unit's name as the study wrote it."""
    own = study.text.get(lang)
    if own is not None and own.unit_name:
        return own.unit_name
    if study.unit_name in UNIT_WORDS:
        return trc_marked(lang, "study unit", UNIT_WORDS[study.unit_name])
    return study.unit_name


def study_words(study: StudyConfig, lang: str, a: Analysed | None = None) -> StudyText:
    """The study's title, question, untested items and claims' words in `lang`: its
    `text.<lang>` where given, else the study's own, else (none declared) composed from what
    ran in `a` (benchkit.report.writeup.titles)."""
    own = study.text.get(lang) or StudyText()
    if a is not None and not (own.title or study.title):
        title, question = composed(a, lang)
        own = replace(own, title=title, question=own.question or study.question or question)
    claims = [ClaimText(c.premise, c.source) for c in study.claims]
    for i, c in enumerate(own.claims or []):
        if i < len(claims):
            claims[i] = ClaimText(c.premise or claims[i].premise, c.source or claims[i].source)
    return StudyText(
        title=own.title or study.title,
        question=own.question or study.question,
        unit_name=unit_word(study, lang),
        untested=list(own.untested if own.untested is not None else study.untested),
        claims=claims,
    )


def _claims_in(words: StudyText, claims: Sequence[ClaimCheck]) -> list[ClaimCheck]:
    """The checked claims with their premise and source in the report's language (the
    ledger keeps the study's own words, so corrections match across languages)."""
    out: list[ClaimCheck] = []
    for i, c in enumerate(claims):
        t = (words.claims or [])[i] if i < len(words.claims or []) else None
        out.append({**c, "premise": t.premise, "source": t.source} if t else c.copy())
    return out


def summary_rows(verdicts: Sequence[an.Verdict], lang: str) -> list[dict[str, str]]:
    """The verdict summary table: each factor's verdict and status (validity and repeats
    have their own sections)."""
    rows = []
    for v in verdicts:
        kind = registry.kind_of(v.factor)
        if not kind.in_summary_table:
            continue
        if kind.table_value is not None:
            value = kind.table_value(v, lang)
        elif getattr(v.numbers, "not_exercised", None):
            value = tr(lang, "not exercised")
        else:
            value = registry.value_text(v.factor, v.verdict, lang, Light.of(Light.keep(v.numbers)))
        rows.append(
            {
                "factor": i18n.factor_name(v.factor, lang),
                "verdict": value,
                "status": i18n.status_word(v.status, lang),
            }
        )
    return rows


def _refuted(words: StudyText, claims: Sequence[ClaimCheck]) -> list[Refuted]:
    """The premises the data refute, as corrections."""
    return [
        Refuted(
            premise=c["premise"],
            source=c["source"],
            metric=c["metric"],
            lo=c["expected_min"],
            hi=c["expected_max"],
            mlo=c["measured_min"],
            mhi=c["measured_max"],
            derived=bool(c.get("derived")),
        )
        for c in _claims_in(words, claims)
        if c["status"] == "refuted"
    ]


def _missing_view(a: Analysed, lang: str) -> list[dict[str, str]]:
    """The planned points that did not complete: each point, its status and why."""
    return [
        {
            "point": i18n.point_text(x.point, lang),
            "status": i18n.status_word(x.status, lang),
            "reason": i18n.recorded_reason(x.reason or "", lang),
        }
        for x in a.sweep.missing
    ]


def view_model(
    a: Analysed,
    *,
    baseline: Analysed | None,
    build: an.Verdict | None,
    corrections: ledger.Corrections | None,
    ledger_file: Path | None,
    figs: Mapping[str, str],
    published: bool,
) -> dict[str, object]:
    """Everything the templates print: sentences in the study's language and raw numbers."""
    study = a.study
    lang = study.lang
    unit = unit_word(study, lang)
    by = {v.factor: v for v in a.verdicts}
    if build is not None:
        by[build.factor] = build
    rows = an.records(a.df)
    imputed = set(imputed_jobs(a))
    for r in rows:
        if str(r.get("job")) in imputed:
            r["imputed"] = True
    validity = registry.study_status(by.values())

    # Factor sections.
    sections = factor_sections(a, by, baseline=baseline, figs=figs, lang=lang, unit=unit)
    if published:
        # A post states each fact once: its answer gives the projection's figure, so the
        # section that restates it is the report's alone.
        sections = [
            s for s in sections if not answer.says_projection(by, s) and not answer.method_only(s)
        ]

    # A caveat about one verdict is said beside its section, once (caveats.KINDS, `beside`).
    beside = _beside(a, sections, lang, published)

    # Verdict summary, corrections, claims, caveats, untested.
    verdict_rows = summary_rows((*a.verdicts, *([build] if build else [])), lang)
    words = study_words(study, lang, a)
    claims = _claims_view(words, a.claims, lang)
    corr = _corrections_view(
        corrections, ledger_file, lang, published=published, study_name=study.name
    )
    # A premise the data refute is a correction too, whether or not a ledger exists.
    corr["refuted"] = _refuted(words, a.claims)
    other_hw = _other_hardware(a, rows)
    missing = _missing_view(a, lang)

    # Status and summary.
    status_line, summary, unsettled = status_and_summary(a, by, lang, unit)
    # A post opens with what ran, why, and the answer with what is not settled (post.py).
    drift = recommended_drift(a, recommend.recommendation(by), lang)
    opening = post.post_view(a, by, words, lang, drift, unit, sections) if published else {}

    return {
        "lang": lang,
        "title": words.title,
        "question": words.question,
        "headline": headline.headline(by, lang, unit),
        "status_line": status_line,
        "provisional": validity.status != an.COMPLETE or bool(unsettled),
        "published": published,
        # A published post opens with its main figure; the report keeps each in its section.
        "lead": lead_figure(sections) if published else None,
        "rendered": None if published else _rendered(a, lang),
        "summary_rows": verdict_rows,
        "objective_note": _objective_note(a, lang),
        # Open-loop load: no unit is a lane, so the units' and bases' texts do not apply.
        "open_loop": registry.load_of(a.sweep) == "open",
        # Model, hardware, workload, sampling, builds and flags.
        **conditions.view(a, lang, post=published),
        "sections": sections,
        "rows": rows,
        # A post leaves out the decode-window rate, which nothing compares across slots.
        "result_columns": [
            c for c in result_columns(lang) if not (published and c.key == "decode_tok_s")
        ],
        "factor_cols": _factor_cols(a, lang),
        "rows_note": rows_note(a, lang),
        # A race restates each point's objective in All results: the energy table's, each
        # job's own, is labelled so.
        "rows_restated": bool(a.sweep.race_stopped or a.sweep.race_best),
        **_time_view(a, rows, lang),
        **_reference_view(a, lang),
        # Open-loop load's own figures, where its capacity verdict is in the report.
        "definitions": i18n.definitions(
            {**DEFINITIONS, **(LOAD_DEFINITIONS if "capacity" in by else {})}, lang
        ),
        "comparing": compare_words.comparison_definitions(a.sweep.knee_gain, lang),
        "caveats": _caveats(a, lang, published, beside),
        "claims": claims,
        "corrections": corr,
        **_quality_views(a, lang),
        "other_hw": other_hw,
        "missing": missing,
        "untested": list(words.untested or []),
        "summary": summary,
        "generator": f"benchkit {__version__}",
        **opening,
    }


def _factor_cols(a: Analysed, lang: str) -> list[dict[str, str]]:
    """All results' columns for the factors the sweep varied beyond the backend, the slots
    and MTP, which it always shows (an editor found decode's sampling missing: two jobs read
    the same)."""
    return [
        {"key": f, "name": i18n.factor_name(f, lang)}
        for f in a.sweep.varying
        if f not in ("backend", "slots", "mtp")
    ]


def _time_view(a: Analysed, rows: Sequence[Row], lang: str) -> dict[str, object]:
    """Where the time went, and whether it has the GPU's or the server thread's busy share
    (the agreement section points to them only then)."""
    found = time_rows(a, rows, lang)
    busy = any(
        r.get("gpu_busy_share") is not None or r.get("server_busiest_thread_share") is not None
        for r in found
    )
    # The time before the server's prompt timer, in the study's figures (a review found it
    # near half of each GPU call's time to first token, in no table).
    return {
        "time_rows": found,
        "time_busy": busy,
        "before_prompt": before_prompt_line(found, lang),
        # A post's one sentence of it; the methods page explains it (#45).
        "before_prompt_short": before_prompt_short(found, lang),
    }


def _claims_view(
    words: StudyText, claims: Sequence[ClaimCheck], lang: str
) -> list[dict[str, object]]:
    """The claims section: each checked claim in the report's language with its status in
    words."""
    return [
        dict(c, status_text=i18n.claim_status(c["status"], lang, bool(c.get("derived"))))
        for c in _claims_in(words, claims)
    ]


def _other_hardware(a: Analysed, rows: Sequence[Row]) -> list[Row]:
    """The table's rows measured on other hardware than the planned (or most common) one."""
    planned_hw = str(a.sweep.constants.get("hardware") or _most_common(rows, "hardware") or "")
    return [
        r
        for r in rows
        if planned_hw and "hardware" in r and an.norm(r["hardware"]) != an.norm(planned_hw)
    ]


def _rendered(a: Analysed, lang: str) -> str:
    """The line a report that is not a publication ends with: when, and from which folder."""
    return tr(
        lang,
        "Rendered {when} from {source}.",
        when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        source=a.source,
    )


def _quality_views(a: Analysed, lang: str) -> dict[str, object]:
    """The quality sections' entries: whether output quality was measured, the drift, the
    model files compared and the task scores."""
    study = a.study
    return {
        "quality_measured": study.quality_measured,
        "quality": quality_view(
            a.drift, a.sweep.varying, a.sweep.planned, study, lang, i18n.point_text
        ),
        "model_files": model_files_view(a.source, lang),
        "task": task_view(
            a.results, a.drift, a.sweep.varying, a.sweep.planned, lang, i18n.point_text
        ),
    }


def _caveats(a: Analysed, lang: str, published: bool, beside: set[str]) -> list[str]:
    """The caveats, what the results' digests could not prove first (benchkit.trust). A
    post's lead has said what the model's weights and the machines leave unsaid: not again
    here; reference data has its own section; a caveat said beside its section (`beside`)
    is not said again."""
    skip = POST_SAYS if published else ("derived",)
    return trust_sentences(a.results, lang, unsigned=not published) + [
        caveat_sentence(c, lang)
        for c in a.caveats
        if c["kind"] not in skip and c.get("beside") not in beside
    ]


def _beside(a: Analysed, sections: Sequence[Section], lang: str, published: bool) -> set[str]:
    """The caveats said beside a section of the kind they name (its first, where a kind has
    several: said once), set on that section as `beside`; returns the kinds said so. One whose
    section the page does not have stays in the caveats list. A post says the random router
    in one sentence with its jobs, `router_jobs`, and links the methods page for why (#45:
    the paragraph was the same in every post)."""
    first: dict[str, Section] = {}
    for s in sections:
        first.setdefault(str(s.get("kind")), s)
    said: set[str] = set()
    for c in a.caveats:
        section = first.get(str(c.get("beside")))
        if section is not None and published and c["kind"] == "random_router":
            section["router_jobs"] = int(c["jobs"])
            said.add(str(c["beside"]))
        elif section is not None:
            notes = section.setdefault("beside", [])
            assert isinstance(notes, list)
            notes.append(caveat_sentence(c, lang))
            said.add(str(c["beside"]))
    return said


def _reference_view(a: Analysed, lang: str) -> dict[str, object]:
    """The Reference data section: results a publication gave, not measured by benchkit."""
    derived = next((c for c in a.caveats if c["kind"] == "derived"), None)
    return {
        "has_derived": bool(derived),
        "reference_intro": trn(
            lang,
            "Some or all results here are reference data transcribed or derived from a "
            "publication, not measured by benchkit ({n} job):",
            "Some or all results here are reference data transcribed or derived from a "
            "publication, not measured by benchkit ({n} jobs):",
            int(derived["jobs"]) if derived else 0,
        ),
        "derived_notes": (derived.get("notes_by", {}).get(lang) or derived["notes"])
        if derived
        else [],
    }


def _objective_note(a: Analysed, lang: str) -> str:
    """What the verdicts judge, and the limits a point must keep (the study's SLO)."""
    slo = ""
    if a.sweep.objective.slo:
        limits = ", ".join(
            f"{i18n.objective_words(k, lang)} ≤ {i18n.objective_value(k, v, lang)}"
            for k, v in a.sweep.objective.slo.items()
        )
        slo = tr(lang, "; a point must also keep {limits}", limits=limits)
    if a.verdict("capacity") is not None:
        # Open-loop load: the load a setting holds is judged, not its time per unit.
        return tr(
            lang,
            "Calls arrived at set rates (open-loop load), so seconds per unit follow the "
            "arrival schedule and decide nothing here: the capacity verdict judges the most "
            "load each setting held{slo}.",
            slo=slo,
        )
    # TRANSLATORS: a particle after {objective} goes inside the ** markers: CommonMark does
    # not close bold between ")" and a letter.
    return tr(
        lang,
        "The verdicts judge **{objective}** (the study's objective; lower is better){slo}. "
        "Output and prefill throughput stand beside it for reference.",
        objective=i18n.objective_words(a.sweep.metric, lang),
        slo=slo,
    )


def _most_common(rows: Sequence[Mapping[str, Any]], key: str) -> Any:
    vals = [r.get(key) for r in rows if r.get(key) is not None]
    return Counter(map(str, vals)).most_common(1)[0][0] if vals else None


def _corrections_intro(corr: ledger.Corrections, changed: bool, published: bool, lang: str) -> str:
    """The corrections section's opening: what changed now, what earlier publications
    corrected, or that there is nothing to correct yet."""
    # To the minute: two publications of one day read alike to the day.
    last = (corr.get("last_date") or "")[:16].replace("T", " ")
    if any(c["current"] for c in corr["changes"]):
        return tr(lang, "Verdicts that changed since an earlier publication of this study:")
    if changed:
        return (
            ledger_words.no_change_intro(last, corr["rules"], lang, published)
            + " "
            + tr(lang, "Earlier publications corrected these verdicts, as recorded:")
        )
    if corr["earlier"]:
        return ledger_words.no_change_intro(last, corr["rules"], lang, published)
    if published:
        return tr(lang, "First publication of this study: nothing to correct yet.")
    return tr(lang, "The study's ledger records no earlier publication yet: nothing to correct.")


def _no_ledger_view(study_name: str, lang: str) -> dict[str, object]:
    """The corrections section of a study with no ledger: says so, and where one would be."""
    intro = tr(
        lang,
        "No ledger of earlier publications exists for this study: study.ledger is not set, "
        "there is no {file} beside the results folder, and the results carry no "
        "history/*.ledger.jsonl. Earlier verdicts cannot be checked here.",
        file=ledger.ledger_name(study_name),
    )
    return {"intro": intro, "post_intro": intro, "post_lines": [], "changes": [], "confirmed": []}


def _series_text(c: ledger.Change, lang: str) -> list[str]:
    """Each series of a per-series verdict whose value moved: 'on Vulkan: hurt at 8+ slots
    → hurt at 4+ slots' (the value as the verdict words it, from the kept runs)."""
    light = Light.of(c["now_numbers"])
    return [
        tr(
            lang,
            "on {series}: {earlier} → {now}",
            series=i18n.point_text(x["series"], lang),
            earlier=registry.value_text(c["factor"], x["earlier"], lang, light),
            now=registry.value_text(c["factor"], x["now"], lang, light),
        )
        for x in c["diff"].get("series") or []
    ]


def _with_series(words: dict[str, str], c: ledger.Change, lang: str) -> dict[str, str]:
    """A post's correction sentence's two values, each with the series whose value moved
    ("..., on Vulkan hurt at 8+ slots")."""
    light = Light.of(c["now_numbers"])
    for x in c["diff"].get("series") or []:
        for side, value in (("earlier", x["earlier"]), ("now", x["now"])):
            words[side] += tr(
                lang,
                ", on {series} {value}",
                series=i18n.point_text(x["series"], lang),
                value=registry.value_text(c["factor"], value, lang, light),
            )
    return words


def _corrections_view(
    corr: ledger.Corrections | None,
    ledger_file: Path | None,
    lang: str,
    *,
    published: bool,
    study_name: str,
) -> dict[str, object]:
    """The corrections section: every verdict that changed between publications, with
    everything that changed in it (ledger_words.what_changed), or plainly why there is none."""
    if corr is None:
        return _no_ledger_view(study_name, lang)
    changes = []
    # Dated to the minute on a day with two publications or more (the H100 study's three on
    # one day all read '2026-12-06'), else to the day.
    stamps = {(c.get("date") or "")[:16] for c in corr["changes"]}
    crowded = {d[:10] for d in stamps if sum(1 for e in stamps if e[:10] == d[:10]) > 1}
    post_lines = []
    for c in corr["changes"]:
        f = c["factor"]
        label = f.split(":", 1)[1] if f.startswith("claim:") else f
        vf = "claim:" if f.startswith("claim:") else f
        new = c["diff"]["presence"] == "new"
        gone = c["diff"]["presence"] == "gone"
        # A render that is not a publication compares the ledger with the results as they are.
        stamp = c.get("date") or ""
        date = stamp[:16].replace("T", " ") if stamp[:10] in crowded else stamp[:10]
        if c["current"] and not published:
            date = tr(lang, "this report")
        earlier = (
            fmt.DASH
            if new
            else registry.value_text(vf, c["earlier"], lang, Light.of(c["earlier_numbers"]))
        )
        now = (
            fmt.DASH
            if gone
            else registry.value_text(vf, c["now"], lang, Light.of(c["now_numbers"]))
        )
        # A post gives only this publication's corrections a reader would see, a value or a
        # status changed: earlier ones stay in the report's table (reviews read them as new,
        # under "no verdict has changed since the earlier publication").
        if c["current"] and (
            c["diff"]["presence"] != "both"
            or c["diff"]["value"]
            or c["diff"].get("series")
            or (c["earlier_status"] != c["now_status"])
        ):
            words = _with_series({"earlier": earlier, "now": now}, c, lang)
            # "The post of {date} gave ...": the earlier publication's date, never this one's
            # (review 11: a correction row that cited the publication it is in).
            before = (corr.get("last_date") or "")[:16].replace("T", " ")
            post_lines.append(
                ledger_words.post_line(
                    c, before or date, i18n.factor_name(label, lang), words.__getitem__, lang
                )
            )
        what = ledger_words.what_changed(c, lang)
        changes.append(
            {
                "factor": i18n.factor_name(label, lang),
                "date": date,
                "earlier": earlier,
                "earlier_status": tr(lang, "no verdict")
                if new
                else i18n.status_word(c["earlier_status"], lang),
                "now": now,
                "now_status": tr(lang, "no verdict")
                if gone
                else i18n.status_word(c["now_status"], lang),
                "what": clauses(lang, [t for t in [what, *_series_text(c, lang)] if t]),
                "why": ledger_words.correction_why(c["why"], lang),
            }
        )
    confirmed = [
        {
            "factor": i18n.factor_name(c["factor"], lang),
            "value": registry.value_text(c["factor"], c["value"], lang, Light.of(c["numbers"])),
        }
        for c in corr["confirmed"]
    ]
    intro = _corrections_intro(corr, bool(changes), published, lang)
    return {
        "intro": intro,
        # A post's: the opening without the table's lead-in, and one sentence a correction.
        "post_intro": intro.removesuffix(
            " " + tr(lang, "Earlier publications corrected these verdicts, as recorded:")
        ),
        "post_lines": post_lines,
        "changes": changes,
        "confirmed": confirmed,
        "rules_notes": ledger_words.rules_notes(corr["changes"], lang),
        "ledger": str(ledger_file) if ledger_file else "",
    }

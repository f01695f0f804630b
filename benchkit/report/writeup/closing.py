"""The report's "Use this" section and the closing summary a sweep prints when it ends.

Words only: the commands come from `use_this`, the verdicts, the recommendation and the
projection from the view (`view.summary_rows`, `summary.status_and_summary`), so the terminal
says what the report says, in the study's language.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.report.lang import i18n, tr, trn
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import reasons, registry
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.writeup import recommend
from benchkit.report.writeup.summary import status_and_summary
from benchkit.report.writeup.use_this import NextStep, StepKind, UseThis
from benchkit.report.writeup.view import study_words, summary_rows, unit_word

SUMMARY_FILE = "summary.txt"


@dataclass(frozen=True)
class StepView:
    text: str
    command: str
    # A post's points as a list under the sentence, where they are too many to read inline.
    points: tuple[str, ...] = ()


@dataclass(frozen=True)
class UseThisView:
    """What the report's "Use this" section prints."""

    intro: str
    # The section's heading: "Use this", or "Best point so far" where nothing is recommended
    # yet (an editor read "No recommendation yet" and then a heading "Use this").
    heading: str = ""
    server_intro: str = ""
    server_command: str | None = None
    rerun_intro: str = ""
    rerun: str | None = None
    steps_intro: str = ""
    steps: list[StepView] = field(default_factory=list)


def use_this_view(
    u: UseThis, lang: str, *, best_so_far: bool = False, post: bool = False
) -> UseThisView:
    """The section's words. `best_so_far`: planned points the recommendation is compared with
    did not complete (recommend.BEST_SO_FAR), so it is named as the Summary names it, never
    as a recommendation. A post's section opens with its commands: its answer has said what
    to use and how sure (writeup.post)."""
    chosen, _ = recommend.split(u.point or {}, u.varying)
    point = i18n.point_text(chosen, lang) if u.point else ""
    # The settings the sweep held fixed, said apart: never named as if it chose them.
    fixed = (
        recommend.held_fixed(u.point, u.varying, lang, u.cannot) if u.varying is not None else ""
    )
    if post:
        intro = ""
    elif u.point and u.settled:
        intro = tr(lang, "Recommended setting: {point}.", point=point) + fixed
    elif u.point and best_so_far:
        intro = (
            tr(
                lang,
                "No recommendation yet: the best completed point so far is {point}, but planned "
                "points it is compared with did not complete.",
                point=point,
            )
            + fixed
        )
    elif u.point and not u.next_steps:
        intro = (
            tr(
                lang,
                "Provisional recommendation: {point}. The verdicts are not settled yet, and no "
                "further run of this sweep would settle them: the sections below say why.",
                point=point,
            )
            + fixed
        )
    elif u.point:
        intro = (
            tr(
                lang,
                "Provisional recommendation: {point}. The verdicts are not settled yet: use it "
                "knowing that, or settle them first with the runs below.",
                point=point,
            )
            + fixed
        )
    else:
        intro = tr(lang, "No recommendation: the data do not single out a setting.")
    return UseThisView(
        intro=intro,
        heading=tr(lang, "Best point so far") if best_so_far else tr(lang, "Use this"),
        server_intro=tr(
            lang,
            "The llama-server command job {job} ran, without the port, alias and monitoring "
            "flags the harness added; the exact command is in job {job}'s result.json.",
            job=u.job or "",
        )
        + sizing_text(u, lang),
        server_command=u.server_command,
        rerun_intro=tr(lang, "benchkit, to measure this point again:"),
        rerun=u.rerun,
        steps_intro=tr(lang, "To settle the open verdicts"),
        steps=[_step_view(s, lang, post) for s in u.next_steps],
    )


def sizing_text(u: UseThis, lang: str) -> str:
    """What the command's context is sized for, as a sentence after the command's intro (with
    its leading space); empty where nothing is known of it."""
    s = u.sizing
    if s is None:
        return ""
    units = s.units or 0
    if s.raised and s.longest_prompt is not None:
        text = trn(
            lang,
            "Its {flag} is raised from {ran} to {value}: job {job} ran {replayed} of the {n} "
            "unit of workload {workload}, and each slot must hold the longest prompt of all of "
            "them ({prompt} tokens) plus the cap ({cap}), {per_slot} tokens padded, so the KV "
            "cache takes more memory than the job measured with.",
            "Its {flag} is raised from {ran} to {value}: job {job} ran {replayed} of the {n} "
            "units of workload {workload}, and each slot must hold the longest prompt of all of "
            "them ({prompt} tokens) plus the cap ({cap}), {per_slot} tokens padded, so the KV "
            "cache takes more memory than the job measured with.",
            units,
            flag=s.flag, ran=str(s.ran), value=str(s.value), job=u.job or "",
            replayed=s.replayed or 0,
            workload=s.workload, prompt=s.longest_prompt, cap=s.cap, per_slot=s.per_slot,
        )  # fmt: skip
    elif s.longest_prompt is not None:
        text = trn(
            lang,
            "Its {flag} gives each slot {per_slot} tokens, enough for the longest prompt of the "
            "{n} unit of workload {workload} ({prompt} tokens) plus the cap ({cap}).",
            "Its {flag} gives each slot {per_slot} tokens, enough for the longest prompt of all "
            "{n} units of workload {workload} ({prompt} tokens) plus the cap ({cap}).",
            units,
            flag=s.flag, per_slot=s.per_slot, workload=s.workload, prompt=s.longest_prompt,
            cap=s.cap,
        )  # fmt: skip
    elif s.replayed is not None and s.replayed < units:
        text = tr(
            lang,
            "Its {flag} holds only the {replayed} of the {n} units of workload {workload} that "
            "job {job} ran: the other units' prompt lengths were not recorded, so give each slot "
            "the longest prompt of your workload plus the cap ({cap}).",
            flag=s.flag, replayed=s.replayed, n=units, workload=s.workload, job=u.job or "",
            cap=s.cap,
        )  # fmt: skip
    else:
        return ""
    if s.over_trained:
        # llama-server caps each slot at the model's trained context: the command as sized
        # refuses the longer prompts (a hostile user's 4,000-token unit on a 3,500 model).
        text += " " + tr(
            lang,
            "The model was trained for {trained} tokens, fewer than the {per_slot} a slot needs: "
            "llama-server caps each slot at {trained} and refuses a longer prompt, so this "
            "command cannot serve the workload's longest units; use a model trained for more, "
            "a lower cap, or rope scaling (--rope-scaling).",
            trained=s.trained,
            per_slot=s.per_slot,
        )
    return " " + text


# From this many points a post lists a step's points under its sentence: inline, points that
# each name several settings ran together, joined by semicolons in English and middle dots in
# Korean (review 11: settings joined by "·" where a list would do).
_LISTED = 3


def _step_view(s: NextStep, lang: str, post: bool) -> StepView:
    if post and s.kind is StepKind.resume and len(s.points) >= _LISTED:
        # The points that did not complete are a post's Not run list already: named once.
        return StepView(step_text(s, lang, post, tr(lang, "listed under Not run")), s.command)
    # Only a step whose sentence names its points (a twin sweep's counts them).
    named = s.kind in (StepKind.repeats, StepKind.stalled)
    if post and named and len(s.points) >= _LISTED and len(s.points[0]) > 1:
        listed = tuple(i18n.point_text(p, lang) for p in s.points)
        return StepView(step_text(s, lang, post, tr(lang, "listed below")), s.command, listed)
    return StepView(step_text(s, lang, post=post), s.command)


def step_text(s: NextStep, lang: str, post: bool = False, listed: str = "") -> str:
    """Why a proposed run, as a sentence ending in a colon (the command follows). A post has
    said under its answer which comparisons are open and that each point ran once: its
    steps say what the run gives. `listed` stands for the points where a list gives them.
    A run that replays other units than the jobs ran says so: a slot count proposal raised
    `workload.units` in its command and nothing said it."""
    text = _step_sentence(s, lang, post, listed)
    if s.ran_units is None or s.units is None or s.units == s.ran_units:
        return text
    return tr(
        lang,
        # TRANSLATORS: {step} is a sentence about the next run, ended by a full stop.
        "{step} Each job replays {units} units, not the {ran} that ran:",
        step=text.rstrip(":").rstrip() + ".",
        units=s.units,
        ran=s.ran_units,
    )


def _step_sentence(s: NextStep, lang: str, post: bool, listed: str) -> str:
    named = [i18n.point_text(p, lang) for p in s.points]
    # Points of one setting each read as a list ('6 slots and 16 slots'); points of several
    # settings hold commas themselves, so a semicolon parts them.
    several = any(len(p) > 1 for p in s.points)
    points = listed or ("; ".join(named) if several else i18n.list_text(named, lang))
    if post and s.kind is StepKind.repeats:
        return tr(
            lang,
            "To settle the open comparisons, these points again with repeats ({points}), so "
            "that each comparison has the spread of whole runs:",
            points=points,
        )
    if post and s.kind is StepKind.twins:
        return trn(
            lang,
            "To measure how far a second run moves a point, the same sweep again into a twin "
            "folder ({n} point), then this report with the twin as its anchors:",
            "To measure how far a second run moves a point, the same sweep again into a twin "
            "folder ({n} points), then this report with the twin as its anchors:",
            len(s.points),
        )
    if s.kind is StepKind.resume:
        return trn(
            lang,
            "{n} planned point did not complete ({points}): the same sweep again, into its "
            "folder (complete jobs are reused, the rest measured):",
            "{n} planned points did not complete ({points}): the same sweep again, into its "
            "folder (complete jobs are reused, the rest measured):",
            len(s.points),
            points=points,
        )
    if s.kind is StepKind.stalled:
        return tr(
            lang,
            "Stalls change a comparison ({points}): these points again with repeats, so a "
            "stall shows as one run's, not as the setting's:",
            points=points,
        )
    if s.kind is StepKind.repeats:
        return tr(
            lang,
            "A comparison is not decided yet ({points}): these points with repeats, so each "
            "comparison has the spread of whole runs:",
            points=points,
        )
    if s.kind is StepKind.loads:
        return tr(
            lang,
            "A capacity is not bracketed closely yet: the loads tried and {points}, reusing "
            "this sweep's complete jobs:",
            points=points,
        )
    if s.kind is StepKind.twins:
        return trn(
            lang,
            "Each point ran once, so how far a second run would move it is not measured: the "
            "same sweep again into a twin folder ({n} point), then this report with the twin "
            "as its anchors:",
            "Each point ran once, so how far a second run would move it is not measured: the "
            "same sweep again into a twin folder ({n} points), then this report with the twin "
            "as its anchors:",
            len(s.points),
        )
    if s.kind in (StepKind.more_slots, StepKind.other_slots) and s.left_out:
        # A count the units do not fill in whole rounds would measure idle slots, not the count.
        left = [trn(lang, "{n} slot", "{n} slots", n) for n in s.left_out]
        return tr(
            lang,
            "{why} To run next: {points}, the counts that the {units} units a job replays fill "
            "in whole rounds ({left} would leave slots idle):",
            why=_slots_why(s, lang),
            points=points,
            units=s.units or 0,
            left=i18n.list_text(left, lang),
        )
    if s.kind is StepKind.more_slots:
        return tr(
            lang,
            "The knee was not reached within the slot counts measured; the counts to run next "
            "are {points} (a larger count, and one between the two largest counts measured):",
            points=points,
        )
    return tr(lang, "Only one slot count completed: more of them ({points}):", points=points)


def _slots_why(s: NextStep, lang: str) -> str:
    """Why more slot counts, as a sentence of its own."""
    if s.kind is StepKind.more_slots:
        return tr(lang, "The knee was not reached within the slot counts measured.")
    return tr(lang, "Only one slot count completed.")


def summary_lines(a: Analysed, u: UseThis, report: Path) -> list[str]:
    """The closing summary, one line each: the verdict table, the recommendation and its
    projection, one line per provisional reason, what to run, and where the report is."""
    lang = a.study.lang
    by = {v.factor: v for v in a.verdicts}
    _, summary, _ = status_and_summary(a, by, lang, unit_word(a.study, lang))
    rows = summary_rows(a.verdicts, lang)
    header = {
        "factor": tr(lang, "factor"),
        "verdict": tr(lang, "verdict"),
        "status": tr(lang, "status"),
    }
    lines = [tr(lang, "Summary: {title}", title=study_words(a.study, lang, a).title)]
    lines += _table([header, *rows], ("factor", "verdict", "status"))
    # The recommendation and the projection (the report's Summary, first two paragraphs).
    lines += summary[:2]
    lines += [
        tr(lang, "Provisional ({factor}): {why}", factor=i18n.factor_name(v.factor, lang), why=w)
        for v, w in provisional_reasons(a.verdicts, lang)
    ]
    view = use_this_view(u, lang)
    if u.server_command:
        lines += [tr(lang, "Use this: {command}", command=u.server_command)]
    if u.rerun:
        lines += [tr(lang, "Measure it again: {command}", command=u.rerun)]
    for s in view.steps:
        lines += [tr(lang, "Next: {why} {command}", why=s.text, command=s.command)]
    lines.append(tr(lang, "Report: {path}", path=str(report)))
    return lines


def provisional_reasons(verdicts: Sequence[an.Verdict], lang: str) -> list[tuple[an.Verdict, str]]:
    """Each provisional verdict's reasons, one entry each: its missing points, then every
    other reason, as the report words them."""
    out: list[tuple[an.Verdict, str]] = []
    for v in verdicts:
        if v.status == an.COMPLETE or registry.kind_of(v.factor).completeness:
            continue
        if v.missing:
            why = tr(lang, "missing: {points}", points=i18n.missing_text(v.missing, lang))
            out.append((v, why))
        out += [(v, reasons.reason_text(r, v, lang)) for r in v.reasons]
    return out


def _table(rows: Sequence[Mapping[str, str]], cols: Sequence[str]) -> list[str]:
    """Rows as plain-text columns, aligned as a terminal draws them (a Hangul or CJK
    character takes two cells)."""
    width = {c: max(_cells(r[c]) for r in rows) for c in cols}
    return [
        "  " + "  ".join(r[c] + " " * (width[c] - _cells(r[c])) for c in cols).rstrip()
        for r in rows
    ]


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)

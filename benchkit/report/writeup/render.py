"""Render a run's or sweep's report folder, and optionally a blog-ready copy, from results alone.

results -> tidy table + planned space -> verdicts (`folder`, with analyse) -> view model
(`view`, with `sections` and `conditions`: i18n sentences, raw numbers for the pure filters)
-> Jinja templates -> report.md, then markdown-it-py turns the same Markdown into a standalone
report.html (`page`); verdicts.json and the figures sit beside them. With a baseline, the two
sweeps are compared config by config; with a ledger, earlier publications' verdicts are
checked and every change listed as a correction (the study's ledger: study.ledger, else
beside the published folder, else beside the results folder, and the results' own
history/); `--publish` writes the blog folder and appends to the ledger. Rendering again
from the same results gives the same files.
"""

from __future__ import annotations

import gc
import html
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, cast

import yaml

from benchkit.errors import UserError
from benchkit.report import ledger
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis import groundtruth as gt
from benchkit.report.analysis import racing, warmup
from benchkit.report.lang import grammar, tr
from benchkit.report.lang.i18n import list_text, point_text
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import registry, voice
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.verdicts.kind import Drawing
from benchkit.report.writeup import energy, methods, recommend
from benchkit.report.writeup import groundtruth_words as gt_words
from benchkit.report.writeup.closing import SUMMARY_FILE, summary_lines, use_this_view
from benchkit.report.writeup.conditions import command_lines
from benchkit.report.writeup.conditions import reported_gpus as _reported_gpus
from benchkit.report.writeup.headline import headline as headline_of
from benchkit.report.writeup.page import compile_templates, write_report
from benchkit.report.writeup.post import post_title
from benchkit.report.writeup.race_check import race_checks
from benchkit.report.writeup.use_this import use_this
from benchkit.report.writeup.view import study_words, unit_word, view_model
from benchkit.results.owned import FolderKind, building, check_replaceable
from benchkit.results.store import JobResult, results_digest
from benchkit.results.trust import left_out_jobs as left_out
from benchkit.results.visible import visible

# Imported from here by the command line, the sweep callback and the tests.
__all__ = [
    "_reported_gpus",
    "analyse_folder",
    "command_lines",
    "render_report",
    "study_words",
]


# What the report's and the blog's writers make (page.write_report, figures): an existing
# folder holding only these, written before folders carried a manifest, may be replaced.
_MADE = ("verdicts.json", "results.csv", "*.png")
REPORT = FolderKind("report", "--out", ("report.md", "report.html", *_MADE), marker="report.html")
PUBLISHED = FolderKind(
    "published post", "--publish", ("index.md", "index.html", *_MADE), example="post",
    marker="index.html",
)  # fmt: skip


def _context(a: Analysed) -> ledger.Context:
    """What was measured, for the ledger: a later correction can say what changed."""
    c = a.sweep.constants
    builds = an.build_summary(a.loaded())
    context: ledger.Context = {
        "model": c.get("model"),
        "hardware": c.get("hardware"),
        "workload": c.get("workload"),
        "sampling": c.get("sampling"),
        "builds": {k: an.build_identity(b) for k, b in builds.items()},
    }
    cards = sorted({ev.gpu_of(r.result) for r in a.results} - {""})
    if cards:
        context["cards"] = ", ".join(cards)
    warm = warmup.study_warmup(warmup.states(a.results))
    if warm is not None:
        context["warmup"] = warm
    return context


def render_report(
    source: Path,
    out_dir: Path,
    *,
    baseline: Path | None = None,
    publish: Path | None = None,
    overrides: Sequence[str] = (),
) -> Path:
    """Render `source` (a run or sweep folder) into `out_dir`; returns out_dir. With
    `baseline`, compare the two sweeps; with `publish`, also write the blog folder there
    and append this publication to the study's ledger. Neither folder may hold anything
    benchkit did not write there (benchkit.owned): that is refused before any work."""
    if publish is not None and publish.resolve() == out_dir.resolve():
        raise UserError(
            f"--out and --publish both name {out_dir}: the post would replace the report; "
            "give them two folders."
        )
    check_replaceable(out_dir, REPORT)
    if publish is not None:
        check_replaceable(publish, PUBLISHED)
    # Before the analysis, whose objects would keep the compiler's memory in use (page.py).
    compile_templates()
    a = analyse_folder(source, overrides)
    # A language may name the study's unit by its own word throughout (Korean does:
    # report/lang/ko.py); the others leave it to the messages' fields.
    lang = a.study.lang
    with _frozen(), grammar(lang).study_unit(unit_word(a.study, lang)):
        return _render_analysed(a, source, out_dir, baseline, publish)


@contextmanager
def _frozen() -> Iterator[None]:
    """What is alive now kept out of the cyclic collector's full collections until the
    report is written: the analysis (the results, the calls' figures, the verdicts) lives
    that long, and each full collection the writing set off went through all of it (a
    twentieth of a 1,000-job report's time). Unfrozen after, unless objects were frozen
    before (the command line freezes what its imports made): unfreezing would undo that,
    and what is frozen here then stays so with them."""
    before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if before == 0:
            gc.unfreeze()


def _render_analysed(
    a: Analysed, source: Path, out_dir: Path, baseline: Path | None, publish: Path | None
) -> Path:
    base = analyse_folder(baseline, study=a.study) if baseline is not None else None
    build = an.compare_builds(a.sweep, base.sweep) if base is not None else None
    lang = a.study.lang
    ledger_file = ledger.ledger_path(a.study.ledger, publish, a.study.name, source)
    data = results_digest([r.path for r in a.results])
    history = ledger.history(source, ledger_file, a.study.name, (data, ledger.RULES_VERSION))
    verdicts = [*a.verdicts, *([build] if build else [])]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    by = {v.factor: v for v in verdicts}
    headline = headline_of(by, lang, unit_word(a.study, lang))
    entry = ledger.make_entry(
        study=a.study.name,
        # Only a publication is dated today; a render compares the history with the results
        # as they were measured, so its corrections carry the measurement's date.
        published_utc=now if publish is not None else (_measured_utc(a.results) or now),
        source=str(source),
        verdicts=verdicts,
        claims=a.claims,
        context=_context(a),
        headline=headline,
        data=data,
    )
    corr = ledger.corrections(history, entry, a.study.knee_gain) if ledger_file or history else None

    with building(out_dir, REPORT) as tmp:
        figs = _figures(a, build, tmp, lang)

        def vm_for(published: bool) -> dict[str, object]:
            return view_model(
                a,
                baseline=base,
                build=build,
                corrections=corr,
                ledger_file=ledger_file,
                figs=figs,
                published=published,
            )

        uses = use_this(a)
        # Named as the Summary names it: a best point so far is not a recommendation.
        best_so_far = recommend.recommendation(by).state == recommend.BEST_SO_FAR
        checks = race_checks(a.source, a.sweep, lang)
        vm = vm_for(published=False)
        vm["use_this"] = use_this_view(uses, lang, best_so_far=best_so_far)
        _add_ground_truth(vm, source, a)
        vm["energy"] = energy.energy_view(a, tmp, lang)  # J/unit, busy shares, telemetry.png
        # What a racing sweep stopped.
        vm["racing"] = racing.racing_view(a.source, lang, left_out(a.results), checks)
        write_report(tmp, vm, verdicts, a, lang, md_name="report.md", html_name="report.html")
        # What a sweep prints when it ends (benchkit.app.report_of), kept beside the report.
        closing = summary_lines(a, uses, out_dir / "report.html")
        # Printed on the terminal too (benchkit.app): bidirectional controls shown, not obeyed.
        (tmp / SUMMARY_FILE).write_text(visible("\n".join(closing)) + "\n", encoding="utf-8")
    if publish is not None:
        # A post's words say each proviso once (verdicts.voice); verdicts.json beside it keeps
        # the report's.
        with voice.post():
            pvm = vm_for(published=True)
            pvm["use_this"] = use_this_view(uses, lang, best_so_far=best_so_far, post=True)
            _add_ground_truth(pvm, source, a)
            # A study that asks how the server compares with llama-batched-bench has that
            # figure for its finding: the title states it.
            question = f"{a.study.question} {pvm.get('question') or ''}"
            agreement = cast("list[Mapping[str, Any]]", pvm["agreement"])
            if found := gt_words.question_finding(question, agreement, lang):
                pvm["title"] = post_title(a, lang, found)
            pvm["energy"] = energy.energy_view(a, None, lang)  # its figure is in out_dir already
            pvm["racing"] = racing.racing_view(a.source, lang, left_out(a.results), checks)
            pvm["left_to_report"] = _left_to_report(pvm, lang)
            # The post links the report it was written from, which keeps what a post leaves
            # out (definitions, the whole ledger, each job's flags).
            pvm["report_link"] = Path(os.path.relpath(out_dir / "report.md", publish)).as_posix()
        _publish(a, publish, out_dir, verdicts, lang, now, pvm)
        if ledger_file is not None:
            ledger.append(ledger_file, entry)
    return out_dir


def _left_to_report(vm: Mapping[str, Any], lang: str) -> str:
    """The per-job tables a post leaves to its report (templates: the roofline, the benchmarks
    where its question is not about them, the race's points, the energy per job), in a list;
    '' where it leaves none. A post keeps the tables that carry its findings (review 11)."""
    energy_view = vm.get("energy")
    racing_view = vm.get("racing")
    left = [
        tr(lang, "the decode roofline per job") if vm.get("roofline") else "",
        tr(lang, "the agreement with llama.cpp's own benchmarks per job")
        if vm.get("ground_truth") and not vm.get("question_figure")
        else "",
        tr(lang, "each point the race stopped")
        if isinstance(racing_view, Mapping) and racing_view.get("rows")
        else "",
        tr(lang, "the energy and telemetry per job")
        if isinstance(energy_view, Mapping) and energy_view.get("rows")
        else "",
    ]
    return list_text([x for x in left if x], lang)


def _measured_utc(results: Sequence[JobResult]) -> str | None:
    """When the newest result was measured (a reused job counts from its measuring pass)."""
    dates = [
        str(r.provenance.get("measured_utc") or r.provenance.get("started_utc") or "")
        for r in results
    ]
    return max((d for d in dates if d), default=None)


def _add_ground_truth(vm: dict[str, object], source: Path, a: Analysed) -> None:
    """Roofline per job and agreement with llama.cpp's own benchmarks, where known."""
    lang = a.study.lang
    label = partial(point_text, lang=lang)
    # Each job's mean decode context, from its calls: the KV cache a step reads grows with it.
    contexts = {r.job_dir.name: jc.decode_context for r in a.results if (jc := a.calls.get(r.path))}
    roofline = gt.roofline_rows(a.results, contexts)
    factors = {r.job_dir.name: r.factors for r in a.results}
    for row in roofline:
        # Named by every factor the sweep varies: slots alone repeat across backends and MTP.
        row["point"] = label({k: factors[row["job"]].get(k) for k in a.sweep.varying})
    vm["roofline"] = roofline
    vm["roofline_terms"] = gt_words.roofline_terms(a.results, roofline, lang)
    truth = gt.load_ground_truth(source)
    vm["ground_truth"] = truth
    agreement = gt.agreement_rows(a.results, truth, label) if truth else []
    vm["agreement"] = [
        dict(r, flag_text=gt_words.flag_text(r["flag"], lang), **gt_words.cells(r, lang))
        for r in agreement
    ]
    vm["batched_shape"] = gt.choose_batched(a.results, truth) if truth else None
    vm["agreement_config"] = any(r["config"] for r in agreement)
    # No job recorded sequences per step: every row is at its slot count, and the table's words
    # and labels say so (a review found "at the batch its server actually ran" over such rows).
    vm["agreement_at_slots"] = bool(agreement) and all(r["at_slots"] for r in agreement)
    vm["bench_lines"] = gt_words.bench_lines(truth, lang) if truth else []
    vm["flagged_lines"] = gt_words.flagged_lines(truth, lang) if truth else []
    vm["bench_bound_line"] = gt_words.bound_line(agreement, lang)
    # A post whose question is this comparison leads its answer with its figure.
    question = f"{a.study.question} {vm.get('question') or ''}"
    vm["question_figure"] = gt_words.question_figure(question, agreement, lang)


def _figures(a: Analysed, build: an.Verdict | None, folder: Path, lang: str) -> dict[str, str]:
    """Every kind's figures ({key: file}), each kind given its verdicts (a figure drawn from
    the rows alone is drawn without one); none of a kind the sweep's load has no verdict of
    (an open-loop sweep's seconds per unit against slots follow its arrival schedule)."""
    drawing = Drawing(a.df, folder, lang)
    load = registry.load_of(a.sweep)
    out: dict[str, str] = {}
    for kind, verdicts in registry.by_kind([*a.verdicts, *([build] if build else [])]):
        if kind.figures is not None and (verdicts or load in kind.loads):
            out.update(kind.figures(verdicts, drawing))
    return out


def _publish(
    a: Analysed,
    dest: Path,
    report_dir: Path,
    verdicts: Sequence[an.Verdict],
    lang: str,
    now: str,
    vm: dict[str, object],
) -> None:
    """The blog folder: index.md with front matter and relative images, the figures, a
    standalone index.html, verdicts.json. Replaced as a whole, never half-written."""
    with building(dest, PUBLISHED) as tmp:
        for png in sorted(report_dir.glob("*.png")):
            shutil.copy2(png, tmp / png.name)
        # The method a post would repeat is on one page it links (writeup.methods).
        vm["methods_link"] = methods.link(dest, tmp, lang)
        fm = {
            # The post's own title, which says what ran (writeup.post).
            "title": vm["title"],
            "date": now,
            "lang": lang,
            # The answer, with the language's spacing as in the page (Korean: no space before
            # a bracket after a word).
            "description": _tidy(str(vm["headline"]), lang),
            # Provisional while any point is missing or any verdict is not settled.
            "status": an.PROVISIONAL if vm["provisional"] else an.COMPLETE,
            "study": a.study.name,
            "generator": vm["generator"],
        }
        write_report(
            tmp,
            vm,
            verdicts,
            a,
            lang,
            md_name="index.md",
            html_name="index.html",
            front_matter=front_matter(fm),
        )


def _tidy(text: str, lang: str) -> str:
    tidy = getattr(grammar(lang), "tidy", None)
    return tidy(text) if tidy is not None else text


def front_matter(fields: Mapping[str, object]) -> str:
    """The post's YAML front matter. Its values come from the study and the results, so each
    is a YAML string whatever it holds (quotes, colons, newlines), and markup in it is
    escaped: a site generator that puts the title into its HTML as it is shows the text."""
    body = "".join(
        f"{k}: {_yaml_string(html.escape(str(v), quote=False))}\n" for k, v in fields.items()
    )
    return f"---\n{body}---\n\n"


def _yaml_string(text: str) -> str:
    """One double-quoted YAML scalar (PyYAML escapes what YAML cannot hold raw)."""
    dumped = str(yaml.safe_dump(text, default_style='"', allow_unicode=True, width=1 << 30))
    return dumped.strip().removesuffix("...").strip()

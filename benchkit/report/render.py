"""Render a run's or sweep's report folder, and optionally a blog-ready copy, from results alone.

results -> tidy table + planned space -> verdicts (analyse) -> view model (i18n sentences,
raw numbers for the pure filters) -> Jinja templates -> report.md, then markdown-it-py turns
the same Markdown into a standalone report.html; verdicts.json and the figures sit beside
them. With a baseline, the two sweeps are compared config by config; with a ledger, earlier
publications' verdicts are checked and every change listed as a correction; `--publish`
writes the blog folder and appends to the ledger. Rendering again from the same results
gives the same files.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from html import escape as html_escape
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import yaml
from markdown_it import MarkdownIt
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from benchkit import __version__, log
from benchkit.config import ClaimText, StudyConfig, StudyText, to_plain
from benchkit.errors import UserError
from benchkit.measure import DEFINITIONS
from benchkit.paths import repo_root
from benchkit.report import analyse as an
from benchkit.report import energy, figures, i18n, ledger, prose
from benchkit.report import evidence as ev
from benchkit.report import groundtruth as gt
from benchkit.report.fmt import filters, integer
from benchkit.report.lang import NC_, ko, tr, trc_marked, trn
from benchkit.report.numbers import (
    BackendNumbers,
    BuildNumbers,
    DraftingNumbers,
    Light,
    RepeatsNumbers,
    SlotsNumbers,
    ValidityNumbers,
    of,
)
from benchkit.report.table import factor_columns, tidy
from benchkit.results import (
    CALLS_FILE,
    RESULTS_CSV,
    JobResult,
    atomic_write_json,
    atomic_write_text,
    find_results,
    write_results_csv,
)
from benchkit.schema import Metrics, ModelInfo, SamplingInfo, WorkloadInfo

_log = log.get(__name__)
MULTIRUN_FILE = "multirun.yaml"


# ------------------------------------------------------------------------------ inputs


def template_env(html: bool, lang: str = "en") -> jinja2.Environment:
    """Jinja environment: undefined names are errors; HTML templates escape everything; `_()`
    and `ngettext()` translate into `lang` (benchkit.report.lang)."""
    env = jinja2.Environment(
        extensions=["jinja2.ext.i18n"],
        loader=jinja2.FileSystemLoader(str(repo_root() / "templates")),
        undefined=jinja2.StrictUndefined,
        autoescape=html,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(filters(lang))
    env.install_gettext_callables(  # type: ignore[attr-defined]  # added by the extension
        gettext=functools.partial(tr, lang), ngettext=functools.partial(trn, lang), newstyle=False
    )
    return env


def collapse_section(body: str, title: str) -> str:
    """The HTML section headed `title` (an <h2> to the next <h2> or the end) folded into a
    <details> element, so a reader who wants it opens it and no one else scrolls past it.
    The title is escaped as the Markdown renderer escaped it."""
    head = f"<h2>{html_escape(title, quote=False)}</h2>"
    start = body.find(head)
    if start < 0:
        return body
    end = body.find("<h2>", start + len(head))
    end = len(body) if end < 0 else end
    inner = body[start + len(head) : end]
    summary = f"<summary>{html_escape(title, quote=False)}</summary>"
    return f'{body[:start]}<details class="appendix">{summary}{inner}</details>\n{body[end:]}'


def markdown_to_html(md: str) -> str:
    # html=False: any markup that came from results is shown as text, never run.
    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(md))


def resolve_study(results: Sequence[JobResult], overrides: Sequence[str] = ()) -> StudyConfig:
    """The study settings the results carry (the most common, if jobs disagree), with
    `study.key=value` overrides applied and checked against the schema."""
    dicts = [r.provenance.get("study") for r in results]
    found = [d for d in dicts if isinstance(d, dict)]
    base: dict[str, object] = {}
    if found:
        keys = [json.dumps(d, sort_keys=True) for d in found]
        common, _ = Counter(keys).most_common(1)[0]
        chosen = found[keys.index(common)]
        known = {f.name for f in fields(StudyConfig)}
        base = {k: v for k, v in chosen.items() if k in known}
    dotlist = []
    for o in overrides:
        if "=" not in o or not o.startswith("study."):
            raise UserError(
                f"{o!r} is not a study override: a report takes study.KEY=VALUE overrides only "
                "(e.g. study.lang=ko)."
            )
        dotlist.append(o.removeprefix("study."))
    try:
        cfg = OmegaConf.merge(
            OmegaConf.structured(StudyConfig), base, OmegaConf.from_dotlist(dotlist)
        )
        obj = OmegaConf.to_object(cfg)
    except OmegaConfBaseException as exc:
        msg = str(exc).splitlines()[0]
        raise UserError(f"bad study override ({msg}): check {', '.join(overrides)}.") from exc
    if not isinstance(obj, StudyConfig):
        raise UserError("the study settings did not resolve to a study config.")
    return obj


def swept_factors(source: Path) -> dict[str, list[Any]]:
    """What a Hydra sweep was launched over, from the multirun.yaml at its root."""
    path = source / MULTIRUN_FILE
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"{path} is not valid YAML ({exc}): fix or remove it.") from exc
    task = (((data.get("hydra") or {}).get("overrides") or {}).get("task")) or []
    return an.parse_sweep_overrides(str(t) for t in task)


@dataclass
class Analysed:
    """One results folder, analysed."""

    source: Path
    results: list[JobResult]
    df: pd.DataFrame
    study: StudyConfig
    sweep: an.Sweep
    verdicts: list[an.Verdict]
    claims: list[an.ClaimCheck]
    caveats: list[dict[str, Any]]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def verdict(self, factor: str) -> an.Verdict | None:
        return next((v for v in self.verdicts if v.factor == factor), None)


def analyse_folder(
    source: Path, overrides: Sequence[str] = (), study: StudyConfig | None = None
) -> Analysed:
    """Load a run or sweep folder and compute every verdict."""
    results = find_results(source)
    study = study or resolve_study(results, overrides)
    df = tidy(results)
    planned = an.planned_space(study.factors, swept_factors(source))
    builds = {r.job_dir.name: an.job_build(r.result) for r in results}
    sw = an.build_sweep(
        df,
        factor_columns(results),
        planned,
        min_effect=study.knee_gain,
        knee_gain=study.knee_gain,
        choices={r.job_dir.name: dict(r.result.provenance.choices) for r in results},
        per_repeat={
            r.job_dir.name: list(r.data["passes"])
            for r in results
            if isinstance(r.data.get("passes"), list)
        },
        objective=ev.objective_of(study.objective, study.slo),
        noise=study.noise,
        spans={r.job_dir.name: unit_spans(r) for r in results if r.status == "complete"},
        setups={
            r.job_dir.name: ev.setup_of(
                r.result, an.build_identity(b) if (b := builds[r.job_dir.name]) else None
            )
            for r in results
            if r.status == "complete"
        },
        cap_limit=study.cap_limit,
    )
    records = {r.job_dir.name: r.data for r in results}
    claims = an.check_claims(df, [to_plain(c) for c in study.claims])
    return Analysed(
        source=source,
        results=results,
        df=df,
        study=study,
        sweep=sw,
        verdicts=an.analyse(sw, study.projection_units),
        claims=claims,
        caveats=an.detect_caveats(df, records, sw),
        records=records,
    )


def unit_spans(r: JobResult) -> dict[str, float]:
    """Seconds each unit took in a single-pass job (first request to last response, every
    call of the unit answered), from its calls.jsonl: the per-unit times the noise rule
    pairs between two single runs. Empty when the job has no calls file or several passes."""
    path = r.job_dir / CALLS_FILE
    if not path.exists() or isinstance(r.data.get("passes"), list):
        return {}
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    bad: set[str] = set()
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    c = json.loads(line)
                except ValueError:
                    continue
                u = str(c.get("unit"))
                t0, t1 = c.get("t_sent"), c.get("t_done")
                if not c.get("ok") or t0 is None or t1 is None:
                    bad.add(u)
                    continue
                first[u] = min(first.get(u, t0), t0)
                last[u] = max(last.get(u, t1), t1)
    except OSError:
        return {}
    return {u: last[u] - first[u] for u in first if u not in bad and last[u] > first[u]}


# -------------------------------------------------------------------------- view model


def _short(arg: str) -> str:
    """A path cut to its file name (full paths stay in result.json)."""
    if re.match(r"^(/|~|\./|\.\./)", arg) or (arg.count("/") >= 2 and " " not in arg):
        return Path(arg).name
    return arg


def _flag_groups(argv: Sequence[str]) -> list[tuple[str, ...]]:
    """argv after the program as (flag, value...) groups: `--parallel 4`, `--metrics`."""
    groups: list[list[str]] = []
    for a in argv[1:]:
        if not groups or (a.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", a)):
            groups.append([a])
        else:
            groups[-1].append(a)
    return [tuple(_short(x) for x in g) for g in groups]


def command_lines(
    jobs: Sequence[tuple[str, Sequence[str], str]],
) -> tuple[str, list[dict[str, str]]]:
    """The flags every job passed, once, and what each job passed besides: (common, per job).
    `jobs` holds (job, argv, label). Order is kept; nothing is dropped."""
    parsed = [(job, _flag_groups(argv), label, argv) for job, argv, label in jobs if argv]
    if not parsed:
        return "", []
    common = [g for g in parsed[0][1] if all(g in p[1] for p in parsed)]
    program = _short(parsed[0][3][0])
    head = " ".join([program, *(" ".join(g) for g in common)])
    rows = [
        {
            "job": job,
            "label": label,
            "flags": " ".join(" ".join(g) for g in groups if g not in common),
        }
        for job, groups, label, _ in parsed
    ]
    return head, rows


def _context(a: Analysed) -> ledger.Context:
    """What was measured, for the ledger: a later correction can say what changed."""
    c = a.sweep.constants
    builds = an.build_summary(a.records)
    return {
        "model": c.get("model"),
        "hardware": c.get("hardware"),
        "workload": c.get("workload"),
        "sampling": c.get("sampling"),
        "builds": {k: an.build_identity(b) for k, b in builds.items()},
    }


def _first(results: Sequence[JobResult], key: str) -> dict[str, object]:
    for r in results:
        v = r.provenance.get(key)
        if isinstance(v, dict) and v:
            return v
    return {}


def _reported_gpus(hardware: Mapping[str, Any], source: Path) -> tuple[str, list[str]]:
    """The GPUs as the machine reported them: the jobs' own detection (hardware.detect), else
    the nvidia-smi table a study script saved beside the results (ground-truth/machine.txt,
    header line then one line per GPU), else nothing."""
    detected = [str(g) for g in hardware.get("detected_gpus") or [] if g]
    if detected:
        return "result.json", detected
    txt = source / gt.GROUND_TRUTH_DIR / "machine.txt"
    try:
        lines = [x.strip() for x in txt.read_text().splitlines() if x.strip()]
    except OSError:
        return "", []
    if not lines or "," not in lines[0]:
        return "", []
    keys = [k.strip() for k in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        vals = [v.strip() for v in line.split(",")]
        if len(vals) != len(keys):
            break
        rows.append(", ".join(f"{k} {v}" for k, v in zip(keys, vals, strict=True)))
    return f"{gt.GROUND_TRUTH_DIR}/machine.txt", rows


# The units a study may name without giving its own word for them (StudyConfig.unit_name).
UNIT_WORDS = {
    "unit": NC_("study unit", "unit"),
    "stock": NC_("study unit", "stock"),
    "document": NC_("study unit", "document"),
    "task": NC_("study unit", "task"),
}


def _unit_name(study: StudyConfig, lang: str) -> str:
    """What the study's unit is called in `lang`: the study's own word for it there, else a
    known unit's translation, else the unit's name as the study wrote it."""
    own = study.text.get(lang)
    if own is not None and own.unit_name:
        return own.unit_name
    if study.unit_name in UNIT_WORDS:
        return trc_marked(lang, "study unit", UNIT_WORDS[study.unit_name])
    return study.unit_name


def study_words(study: StudyConfig, lang: str) -> StudyText:
    """The study's title, question, untested items and claims' words in `lang`: its
    `text.<lang>` where given, else the study's own."""
    own = study.text.get(lang) or StudyText()
    claims = [ClaimText(c.premise, c.source) for c in study.claims]
    for i, c in enumerate(own.claims or []):
        if i < len(claims):
            claims[i] = ClaimText(c.premise or claims[i].premise, c.source or claims[i].source)
    return StudyText(
        title=own.title or study.title,
        question=own.question or study.question,
        unit_name=_unit_name(study, lang),
        untested=list(own.untested if own.untested is not None else study.untested),
        claims=claims,
    )


def _claims_in(words: StudyText, claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checked claims with their premise and source in the report's language (the
    ledger keeps the study's own words, so corrections match across languages)."""
    out = []
    for i, c in enumerate(claims):
        t = (words.claims or [])[i] if i < len(words.claims or []) else None
        out.append(dict(c, premise=t.premise, source=t.source) if t else dict(c))
    return out


def _workload_view(results: Sequence[JobResult], lang: str) -> tuple[list[str], str | None]:
    """The workload section: the fixture's line, and a line per job whose server tokenized
    prompts differently from the fixture."""
    wl = next(
        (wi for r in results if (wi := r.result.provenance.workload) and wi != WorkloadInfo()),
        None,
    )
    # Where the server tokenized prompts differently from the fixture (another tokenizer or
    # chat template), both counts are shown: the fixture's numbers are not what was measured.
    tokenizer_lines = [
        tr(
            lang,
            "Job {job}: the server counted {server} prompt tokens where the fixture records "
            "{fixture} ({n} of {calls} completed calls differ: another tokenizer or chat "
            "template than the fixture was recorded with).",
            job=r.job_dir.name,
            server=integer(r.result.metrics.prompt_tokens),
            fixture=integer(r.result.metrics.fixture_prompt_tokens),
            n=integer(r.result.metrics.prompt_token_mismatches),
            calls=integer(r.result.metrics.calls_completed),
        )
        for r in results
        if (r.result.metrics.prompt_token_mismatches or 0) > 0
    ]
    workload_line = None
    if wl:
        calls = wl.calls or 0
        workload_line = tr(
            lang,
            "Workload {fixture}: {units} units, {calls} calls, {prompt} prompt tokens (mean "
            "{mean_prompt} a call, longest {max_prompt}), {completion} completion tokens; output "
            "policy {policy}, generation cap {cap} tokens.",
            fixture=wl.fixture,
            units=wl.units,
            calls=integer(calls),
            prompt=integer(wl.prompt_tokens),
            mean_prompt=integer((wl.prompt_tokens or 0) / calls) if calls else "–",
            max_prompt=integer(wl.max_prompt_tokens),
            completion=integer(wl.completion_tokens),
            policy=wl.output_policy,
            cap=integer(wl.cap),
        )
        replayed = wl.units_replayed
        if replayed is None:  # results written before units_replayed was recorded
            planned = next(
                (mx.units_planned for r in results if (mx := r.result.metrics) != Metrics()), None
            )
            reps = next((r.result.factors.get("repeats") for r in results), None) or 1
            replayed = int(planned) // int(reps) if planned else None
        if replayed is not None and replayed != wl.units:
            # The plural follows the units replayed ("1 of 10 units was"); a language may
            # leave the fixture's total out.
            workload_line += " " + trn(
                lang,
                "Only its first {n} of {units} units was replayed (workload.units={n}): the "
                "totals above are the whole fixture's.",
                "Only its first {n} of {units} units were replayed (workload.units={n}): the "
                "totals above are the whole fixture's.",
                int(replayed),
                n=integer(replayed),
                units=wl.units,
            )
    return tokenizer_lines, workload_line


def _sampling_lines(results: Sequence[JobResult], lang: str) -> list[str]:
    """The sampling section: what each sampling profile sent, or the server defaults it left."""
    sampling_lines = []
    profiles = Counter(
        str(sp.profile if (sp := r.result.provenance.sampling) else None) for r in results
    )
    if len(profiles) > 1:
        sampling_lines.append(
            tr(
                lang,
                "Sampling differs between jobs: {profiles}.",
                profiles=", ".join(f"`{p}` ({n})" for p, n in profiles.items()),
            )
        )
    seen_profiles: set[str] = set()
    for r in results:
        samp = r.result.provenance.sampling or SamplingInfo()
        prof = str(samp.profile)
        if prof in seen_profiles:
            continue
        seen_profiles.add(prof)
        if samp.sent:
            sent = ", ".join(
                f"{k}={json.dumps(v) if isinstance(v, dict | list) else v}"
                for k, v in samp.sent.items()
            )
            sampling_lines.append(
                tr(lang, "Sampling {profile}: sent {fields}.", profile=prof, fields=sent)
            )
        else:
            server = r.result.provenance.server
            props = (server.props if server else None) or {}
            d = props.get("default_sampling") or {}
            defaults = f" ({', '.join(f'{k}={v}' for k, v in d.items())})" if d else ""
            sampling_lines.append(
                tr(
                    lang,
                    "Sampling {profile}: no sampling fields sent, so the server's defaults "
                    "applied{defaults}.",
                    profile=prof,
                    defaults=defaults,
                )
            )
    return sampling_lines


def _setup_view(a: Analysed, lang: str) -> tuple[list[dict[str, Any]], str, list[dict[str, str]]]:
    """The setup section: each backend's build, and the server flags common to all jobs and
    per job."""
    results = a.results
    builds = [
        {
            "backend": b,
            "source": info.get("source") or "–",
            "version": info.get("version") or "–",
            "date": tr(lang, "; source dated {date}", date=info["date"])
            if info.get("date")
            else "",
            "devices": info.get("devices") or "",
        }
        for b, info in an.build_summary(a.records).items()
    ]
    common_flags, flags = command_lines(
        [
            (
                r.job_dir.name,
                srv.argv if (srv := r.result.provenance.server) else [],
                i18n.point_text({k: r.factors.get(k) for k in a.sweep.varying}, lang)
                if a.sweep.varying
                else "",
            )
            for r in results
        ]
    )
    return builds, common_flags, flags


def _backend_section(
    a: Analysed, b: an.Verdict, lang: str, figs: Mapping[str, str]
) -> dict[str, object]:
    """The backend section: per setting, each backend's objective and ratio, and the winner."""
    backends = sorted(
        {str(c.values["backend"]) for c in a.sweep.cells},
        key=lambda x: (an.norm(x) != an.norm(b.verdict), x),
    )
    table = []
    for e in of(BackendNumbers, b.numbers).contexts:
        table.append(
            {
                "setting": i18n.point_text(e["context"], lang) or "–",
                "cells": [
                    {
                        "value": e["values"].get(x),
                        "ratio": e["ratios"].get(x) if (e["ratios"].get(x) or 1) > 1.0005 else None,
                    }
                    for x in backends
                ],
                "winner": i18n.backend_name(e.get("winner"))
                if e.get("winner")
                else i18n.effect_word("no difference", lang),
            }
        )
    return {
        "kind": "backend",
        "title": tr(lang, "Backend"),
        "text": i18n.backend_sentence(b, lang),
        "columns": [i18n.backend_name(x) for x in backends],
        "table": table,
        "figure": figs.get("backend"),
        "figure_title": tr(lang, "Seconds per unit (throughput basis) against slots, per backend"),
    }


def _slots_section(
    a: Analysed, s: an.Verdict, lang: str, figs: Mapping[str, str]
) -> dict[str, object]:
    """The slots section: the objective per slot count, the knee marked."""
    sn = of(SlotsNumbers, s.numbers)
    knee_slots = s.verdict if sn.knee_reached else None
    metric = a.sweep.metric
    obj_words = i18n.objective_words(metric, lang)
    return {
        "kind": "slots",
        "title": tr(lang, "Parallel slots"),
        "text": i18n.slots_sentence(s, lang),
        "series": i18n.point_text(sn.series, lang),
        "objective_col": "" if metric in ev.PER_UNIT else obj_words,
        "change_col": tr(lang, "{objective}: change vs previous", objective=obj_words),
        "show_uncapped": any(r["capped"] for r in sn.rows or []),
        "table": [
            dict(
                r,
                knee=(r["slots"] == knee_slots),
                objective_text=i18n.objective_value(metric, r["objective"], lang),
                objective_uncapped_text=i18n.objective_value(metric, r["objective_uncapped"], lang),
            )
            for r in sn.rows or []
        ],
        "figure": figs.get("slots"),
        "figure_title": tr(
            lang, "Seconds per unit on both bases, and aggregate decode throughput, against slots"
        ),
    }


def _drafting_section(m: an.Verdict, lang: str, figs: Mapping[str, str]) -> dict[str, object]:
    """One drafting section (MTP, a draft model, n-gram): the effect per setting."""
    dn = of(DraftingNumbers, m.numbers)
    on = an.norm(dn.on_value)
    mtp = m.factor == "mtp"
    return {
        "kind": "mtp",
        "title": tr(lang, "MTP (speculative decoding)")
        if mtp
        else tr(lang, "Speculative decoding ({value}) against none", value=on),
        "col_off": tr(lang, "MTP off s/unit") if mtp else "spec=none",
        "col_on": tr(lang, "MTP on s/unit") if mtp else f"spec={on}",
        "text": i18n.mtp_sentence(m, lang),
        "table": [
            dict(
                e,
                setting=i18n.point_text(e["context"], lang),
                effect_text=i18n.effect_word(e["effect"], lang),
            )
            for e in dn.contexts
        ],
        "figure": figs.get(m.factor),
        "figure_title": tr(
            lang, "MTP on / off: seconds per unit (throughput basis), per slot count"
        )
        if mtp
        else tr(lang, "Drafter on / off: seconds per unit (throughput basis), per slot count"),
    }


def _build_section(
    build: an.Verdict,
    baseline: Analysed | None,
    lang: str,
    figs: Mapping[str, str],
) -> dict[str, object]:
    """The build comparison section: the effect per setting, and what differs between builds."""
    bn = of(BuildNumbers, build.numbers)
    return {
        "kind": "build",
        "title": tr(lang, "Builds compared"),
        "text": i18n.build_sentence(build, lang),
        "baseline": str(baseline.source) if baseline else "",
        "table": [
            dict(
                p,
                setting=i18n.point_text(p["config"], lang),
                effect_text=i18n.effect_word(p["effect"], lang),
            )
            for p in bn.pairs
        ],
        "differs": [{"key": k, "base": v[0], "new": v[1]} for k, v in bn.differs.items()],
        "figure": figs.get("build"),
        "figure_title": tr(
            lang, "Baseline and new build: seconds per unit (throughput basis), config by config"
        ),
    }


def _repeats_section(rep: an.Verdict, knee_gain: float, lang: str) -> dict[str, object]:
    """The repeats section: the noise of each repeated setting."""
    return {
        "kind": "repeats",
        "title": tr(lang, "Repeats and noise"),
        "text": i18n.repeats_sentence(rep, lang, knee_gain),
        "intro": tr(
            lang,
            "Points that ran more than once: mean, coefficient of variation and 95% confidence "
            "interval of seconds per unit (throughput basis). A difference inside the noise is "
            "reported as no difference.",
        )
        if rep.verdict
        else "",
        "table": [
            dict(c, setting=i18n.point_text(c["config"], lang))
            for c in of(RepeatsNumbers, rep.numbers).configs
        ],
        "figure": None,
        "figure_title": "",
    }


def _projection_section(proj: an.Verdict, lang: str, unit: str) -> dict[str, object]:
    """The projection section: one sentence, no table."""
    return {
        "kind": "projection",
        "title": tr(lang, "Projection"),
        "text": i18n.projection_sentence(proj, lang, unit),
        "table": [],
        "figure": None,
        "figure_title": "",
    }


def _factor_sections(
    a: Analysed,
    by: Mapping[str, an.Verdict],
    *,
    build: an.Verdict | None,
    baseline: Analysed | None,
    figs: Mapping[str, str],
    lang: str,
    unit: str,
) -> list[dict[str, object]]:
    """The factor sections in report order: backend, slots, drafting, build, repeats, projection."""
    sections: list[dict[str, object]] = []
    if (b := by.get("backend")) is not None:
        sections.append(_backend_section(a, b, lang, figs))
    if (s := by.get("slots")) is not None:
        sections.append(_slots_section(a, s, lang, figs))
    for m in [v for f, v in by.items() if f == "mtp" or f.startswith("spec=")]:
        sections.append(_drafting_section(m, lang, figs))
    if build is not None:
        sections.append(_build_section(build, baseline, lang, figs))
    sections.append(_repeats_section(by["repeats"], a.study.knee_gain, lang))
    sections.append(_projection_section(by["projection"], lang, unit))
    return sections


def _summary_rows(verdicts: Sequence[an.Verdict], lang: str) -> list[dict[str, str]]:
    """The verdict summary table: each factor's verdict and status (validity and repeats
    have their own sections)."""
    summary_rows = []
    for v in verdicts:
        if v.factor in ("validity", "repeats"):
            continue
        summary_rows.append(
            {
                "factor": i18n.factor_name(v.factor, lang),
                "verdict": i18n.verdict_value_text(
                    v.factor, v.verdict, lang, Light.of(Light.keep(v.numbers))
                ),
                "status": i18n.status_word(v.status, lang),
            }
        )
    return summary_rows


def _status_and_summary(
    a: Analysed, by: Mapping[str, an.Verdict], lang: str, unit: str
) -> tuple[str, list[str], list[str]]:
    """The status line and the summary paragraph: the recommendation (or why none yet), the
    projection, and how settled the verdicts are. Also the factors whose verdicts are still
    provisional. A sweep whose points all finished can still hold provisional verdicts
    (noise, contamination, runaway outputs): never "complete" beside them."""
    study = a.study
    validity = by["validity"]
    proj = by["projection"]
    unsettled = [
        i18n.factor_name(f, lang)
        for f, v in by.items()
        if (f in ("backend", "slots", "mtp") or f.startswith("spec=")) and v.status != an.COMPLETE
    ]
    planned = of(ValidityNumbers, validity.numbers).planned
    if validity.status == an.COMPLETE and unsettled:
        status_line = tr(
            lang,
            "Every planned point finished ({n}), but the data do not settle {factors} yet; "
            "each section says why.",
            n=planned,
            factors=", ".join(unsettled),
        )
    elif validity.status == an.COMPLETE and planned == 1:
        status_line = tr(lang, "Complete: the one planned point finished.")
    elif validity.status == an.COMPLETE:
        status_line = tr(lang, "Complete: all {n} planned points finished.", n=planned)
    else:
        status_line = tr(
            lang,
            "Provisional: {k} of {n} planned points did not complete ({points}). Verdicts that "
            "depend on them are marked provisional and are not conclusions.",
            k=len(validity.missing),
            n=planned,
            points=i18n.missing_text(validity.missing, lang),
        )
    rec_point = proj.point if proj.verdict is not None else None
    # The best completed point is never the answer while a point it depends on is missing.
    settled = all(
        v.status == an.COMPLETE
        for f, v in by.items()
        if f in ("backend", "slots", "mtp") or f.startswith("spec=")
    )
    point = i18n.point_text(rec_point, lang) if rec_point else ""
    if rec_point and settled:
        summary = [
            tr(lang, "Recommended setting: {point}.", point=point)
            + i18n.better_point_text(proj, lang)
        ]
    elif rec_point and validity.status == an.COMPLETE:
        summary = [
            tr(
                lang,
                "Provisional recommendation: {point}; the data do not settle {factors} yet (see "
                "their sections).",
                point=point,
                factors=", ".join(unsettled),
            )
            + i18n.better_point_text(proj, lang)
        ]
    elif rec_point:
        summary = [
            tr(
                lang,
                "No recommendation yet: the best completed point so far is {point}, but planned "
                "points it is compared with did not complete.",
                point=point,
            )
        ]
    else:
        summary = [tr(lang, "No recommendation: the data do not single out a setting.")]
    summary.append(tr(lang, "Projection: {text}", text=i18n.projection_sentence(proj, lang, unit)))
    if validity.status != an.COMPLETE:
        summary.append(
            tr(
                lang,
                "This write-up is provisional: {why}.",
                why=i18n.missing_text(validity.missing, lang),
            )
        )
    elif unsettled:
        summary.append(
            tr(
                lang,
                "Every planned point completed, but the data do not settle {factors} yet (see "
                "their sections).",
                factors=", ".join(unsettled),
            )
        )
    else:
        summary.append(tr(lang, "Every planned point completed."))
    if not study.quality_measured:
        summary.append(tr(lang, "Speed only: output quality was not measured."))
    return status_line, summary, unsettled


def _compared_lines(a: Analysed, lang: str) -> tuple[str, str]:
    """What is compared with what: the model line and the hardware line (with the GPUs the
    results report)."""
    results = a.results
    model = next(
        (mi for r in results if (mi := r.result.provenance.model) and mi != ModelInfo()),
        ModelInfo(),
    )
    hardware = _first(results, "hardware")
    params = ""
    if model.params_total_b and model.params_active_b:
        params = tr(
            lang,
            "{total}B total, {active}B active parameters",
            total=_g(model.params_total_b),
            active=_g(model.params_active_b),
        )
    size = f", {_g(model.size_gb)} GB" if model.size_gb else ""
    model_line = tr(
        lang,
        "Model: {name} ({arch}, {params}, {quant}{size}).",
        name=_txt(model.name),
        arch=_txt(model.architecture),
        params=params or "–",
        quant=_txt(model.quant),
        size=size,
    )
    if model.synthetic:
        synthetic = tr(
            lang,
            "a random-weight synthetic model benchkit wrote itself; its speed says nothing "
            "about any real model",
        )
        model_line = model_line[:-1] + ": " + synthetic + "."
    desc = f" ({hardware['description']})" if hardware.get("description") else ""
    hardware_line = tr(
        lang,
        "Hardware: {name}{desc}{power}.",
        name=_txt(hardware.get("name")),
        desc=desc,
        power=tr(lang, ", power cap {w} W", w=_g(hardware["power_cap_w"]))
        if hardware.get("power_cap_w")
        else "",
    )

    gpu_source, gpus = _reported_gpus(hardware, a.source)
    if gpus:
        hardware_line += " " + tr(
            lang,
            "As the machine reported itself ({source}): {gpus}.",
            source=gpu_source,
            gpus="; ".join(gpus),
        )
    return model_line, hardware_line


def _refuted(words: StudyText, claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The premises the data refute, as corrections."""
    return [
        {
            "premise": c["premise"],
            "source": c["source"],
            "metric": c["metric"],
            "lo": c["expected_min"],
            "hi": c["expected_max"],
            "mlo": c["measured_min"],
            "mhi": c["measured_max"],
        }
        for c in _claims_in(words, claims)
        if c["status"] == "refuted"
    ]


def _missing_view(a: Analysed, lang: str) -> list[dict[str, str]]:
    """The planned points that did not complete: each point, its status and why."""
    return [
        {
            "point": i18n.point_text(x.point, lang),
            "status": i18n.status_word(x.status, lang),
            "reason": x.reason or "",
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
    lang = study.lang.value
    unit = _unit_name(study, lang)
    by = {v.factor: v for v in a.verdicts}
    if build is not None:
        by["build"] = build
    results = a.results
    rows = an.records(a.df)
    validity = by["validity"]

    # What is compared with what.
    model_line, hardware_line = _compared_lines(a, lang)

    # Workload, sampling and setup (builds and every flag).
    tokenizer_lines, workload_line = _workload_view(results, lang)
    sampling_lines = _sampling_lines(results, lang)
    builds, common_flags, flags = _setup_view(a, lang)
    build_caveat = next((c for c in a.caveats if c["kind"] == "builds_differ"), None)

    # Factor sections.
    sections = _factor_sections(
        a, by, build=build, baseline=baseline, figs=figs, lang=lang, unit=unit
    )

    # Verdict summary, corrections, claims, caveats, untested.
    summary_rows = _summary_rows((*a.verdicts, *([build] if build else [])), lang)
    words = study_words(study, lang)
    claims = [
        dict(c, status_text=i18n.claim_status(c["status"], lang))
        for c in _claims_in(words, a.claims)
    ]
    corr = _corrections_view(corrections, ledger_file, lang)
    # A premise the data refute is a correction too, whether or not a ledger exists.
    corr["refuted"] = _refuted(words, a.claims)
    caveats = [i18n.caveat_sentence(c, lang) for c in a.caveats if c["kind"] != "derived"]
    derived = next((c for c in a.caveats if c["kind"] == "derived"), None)
    planned_hw = str(a.sweep.constants.get("hardware") or _most_common(rows, "hardware") or "")
    other_hw = [
        r
        for r in rows
        if planned_hw and "hardware" in r and an.norm(r["hardware"]) != an.norm(planned_hw)
    ]
    missing = _missing_view(a, lang)

    # Status and summary.
    status_line, summary, unsettled = _status_and_summary(a, by, lang, unit)

    return {
        "lang": lang,
        # The column names templates/energy.md.j2 shares with the results table (until it
        # calls _() itself).
        "t": {
            "col_backend": tr(lang, "backend"),
            "col_slots": tr(lang, "slots"),
            "col_mtp": tr(lang, "MTP"),
        },
        "title": words.title,
        "question": words.question,
        "headline": i18n.headline(by, lang, unit),
        "status_line": status_line,
        "provisional": validity.status != an.COMPLETE or bool(unsettled),
        "published": published,
        "rendered": None
        if published
        else tr(
            lang,
            "Rendered {when} from {source}.",
            when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            source=a.source,
        ),
        "summary_rows": summary_rows,
        # TRANSLATORS: a particle after {objective} goes inside the ** markers: CommonMark does
        # not close bold between ")" and a letter.
        "objective_note": tr(
            lang,
            "The verdicts judge **{objective}** (the study's objective; lower is better){slo}. "
            "Decode and prefill throughput stand beside it as explanations.",
            objective=i18n.objective_words(a.sweep.metric, lang),
            slo=tr(
                lang,
                "; a point must also keep {limits}",
                limits=", ".join(
                    f"{i18n.objective_words(k, lang)} ≤ {i18n.objective_value(k, v, lang)}"
                    for k, v in a.sweep.objective.slo.items()
                ),
            )
            if a.sweep.objective.slo
            else "",
        ),
        "model_line": model_line,
        # The first job's model and hardware stand above; every job that differed is named.
        "setup_differences": [i18n.contamination_text([e], lang) for e in a.sweep.contaminated],
        "hardware_line": hardware_line,
        "workload_line": workload_line,
        "tokenizer_lines": tokenizer_lines,
        "sampling_lines": sampling_lines,
        "builds": builds,
        "build_warning": i18n.caveat_sentence(build_caveat, lang) if build_caveat else None,
        "flags": flags,
        "common_flags": common_flags,
        "sections": sections,
        "rows": rows,
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
        "definitions": i18n.definitions(DEFINITIONS, lang),
        "caveats": caveats,
        "claims": claims,
        "corrections": corr,
        "quality_measured": study.quality_measured,
        "other_hw": other_hw,
        "missing": missing,
        "untested": list(words.untested or []),
        "summary": summary,
        "generator": f"benchkit {__version__}",
    }


def _txt(x: Any) -> str:
    return "–" if x is None else str(x)


def _g(x: Any) -> str:
    v = float(x)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _most_common(rows: Sequence[Mapping[str, Any]], key: str) -> Any:
    vals = [r.get(key) for r in rows if r.get(key) is not None]
    return Counter(map(str, vals)).most_common(1)[0][0] if vals else None


def _corrections_view(
    corr: ledger.Corrections | None, ledger_file: Path | None, lang: str
) -> dict[str, object]:
    if corr is None:
        intro = tr(
            lang,
            "No ledger of earlier publications was given (set study.ledger, or publish with "
            "--publish), so earlier verdicts cannot be checked here.",
        )
        return {"intro": intro, "changes": [], "confirmed": []}
    changes = []
    for c in corr["changes"]:
        f = c["factor"]
        label = f.split(":", 1)[1] if f.startswith("claim:") else f
        vf = "claim:" if f.startswith("claim:") else f
        changes.append(
            {
                "factor": i18n.factor_name(label, lang),
                "date": (c.get("date") or "")[:10],
                "earlier": i18n.verdict_value_text(
                    vf, c["earlier"], lang, Light.of(c["earlier_numbers"])
                ),
                "earlier_status": i18n.status_word(c["earlier_status"], lang),
                "now": i18n.verdict_value_text(vf, c["now"], lang, Light.of(c["now_numbers"])),
                "now_status": i18n.status_word(c["now_status"], lang),
                "why": i18n.correction_why(c["why"], lang),
            }
        )
    confirmed = [
        {
            "factor": i18n.factor_name(c["factor"], lang),
            "value": i18n.verdict_value_text(c["factor"], c["value"], lang, Light.of(c["numbers"])),
        }
        for c in corr["confirmed"]
    ]
    if changes:
        intro = tr(lang, "Verdicts that changed since an earlier publication of this study:")
    elif corr["earlier"]:
        intro = tr(
            lang,
            "No verdict has changed since the earlier publication ({date}).",
            date=(corr.get("last_date") or "")[:10],
        )
    else:
        intro = tr(lang, "First publication of this study: nothing to correct yet.")
    return {
        "intro": intro,
        "changes": changes,
        "confirmed": confirmed,
        "ledger": str(ledger_file) if ledger_file else "",
    }


# -------------------------------------------------------------------------------- render


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
    and append this publication to the study's ledger."""
    a = analyse_folder(source, overrides)
    # A Korean report names the study's unit by its own word throughout (report/lang/ko.py);
    # other languages' messages do not use it.
    with ko.study_unit(_unit_name(a.study, a.study.lang.value)):
        return _render_analysed(a, source, out_dir, baseline, publish)


def _render_analysed(
    a: Analysed, source: Path, out_dir: Path, baseline: Path | None, publish: Path | None
) -> Path:
    base = analyse_folder(baseline, study=a.study) if baseline is not None else None
    build = an.compare_builds(a.sweep, base.sweep) if base is not None else None
    lang = a.study.lang.value
    ledger_file = ledger.ledger_path(a.study.ledger, publish, a.study.name)
    history = ledger.history(source, ledger_file, a.study.name)
    verdicts = [*a.verdicts, *([build] if build else [])]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    by = {v.factor: v for v in verdicts}
    headline = i18n.headline(by, lang, _unit_name(a.study, lang))
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
    )
    corr = ledger.corrections(history, entry, a.study.knee_gain) if ledger_file or history else None

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".report-"))
    try:
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

        vm = vm_for(published=False)
        _add_ground_truth(vm, source, a)
        vm["energy"] = energy.energy_view(a, tmp, lang)  # J/unit, busy shares, telemetry.png
        _write_report(tmp, vm, verdicts, a, lang, md_name="report.md", html_name="report.html")
        _swap(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if publish is not None:
        pvm = vm_for(published=True)
        _add_ground_truth(pvm, source, a)
        pvm["energy"] = energy.energy_view(a, None, lang)  # its figure is in out_dir already
        _publish(a, publish, out_dir, verdicts, lang, now, pvm)
        if ledger_file is not None:
            ledger.append(ledger_file, entry)
    return out_dir


def _measured_utc(results: Sequence[JobResult]) -> str | None:
    """When the newest result was measured (a reused job counts from its measuring pass)."""
    dates = [
        str(r.provenance.get("measured_utc") or r.provenance.get("started_utc") or "")
        for r in results
    ]
    return max((d for d in dates if d), default=None)


def _add_ground_truth(vm: dict[str, object], source: Path, a: Analysed) -> None:
    """Roofline per job and agreement with llama.cpp's own benchmarks, where known."""
    vm["roofline"] = gt.roofline_rows(a.results)
    truth = gt.load_ground_truth(source)
    vm["ground_truth"] = truth
    agreement = gt.agreement_rows(a.results, truth) if truth else []
    vm["agreement"] = agreement
    vm["batched_shape"] = gt.choose_batched(a.results, truth) if truth else None
    vm["agreement_config"] = any(r["config"] for r in agreement)


def _figures(a: Analysed, build: an.Verdict | None, folder: Path, lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    s = a.verdict("slots")
    knee = None
    sn = of(SlotsNumbers, s.numbers) if s is not None else None
    if s is not None and sn is not None and sn.knee_reached:
        knee = {"slots": s.verdict}
    series = sn.series if sn is not None else None
    made = {
        "backend": figures.backend_figure(a.df, folder, lang),
        "slots": figures.slots_figure(a.df, folder, lang, knee, series),
        **{
            v.factor: figures.mtp_figure(v, folder, lang)
            for v in a.verdicts
            if v.factor == "mtp" or v.factor.startswith("spec=")
        },
        "build": figures.build_figure(build, folder, lang),
    }
    for k, v in made.items():
        if v:
            out[k] = v
    return out


def _verdicts_json(
    verdicts: Sequence[an.Verdict], a: Analysed, lang: str
) -> list[dict[str, object]]:
    unit = _unit_name(a.study, lang)
    text = {
        "backend": lambda v: i18n.backend_sentence(v, lang),
        "slots": lambda v: i18n.slots_sentence(v, lang),
        "mtp": lambda v: i18n.mtp_sentence(v, lang),
        "build": lambda v: i18n.build_sentence(v, lang),
        "repeats": lambda v: i18n.repeats_sentence(v, lang, a.study.knee_gain),
        "projection": lambda v: i18n.projection_sentence(v, lang, unit),
    }
    out = []
    for v in verdicts:
        j = v.to_json()
        fn = text.get("mtp" if v.factor.startswith("spec=") else v.factor)
        j["summary"] = fn(v) if fn else i18n.verdict_value_text(v.factor, v.verdict, lang, Light())
        out.append(j)
    for c in a.claims:
        out.append(
            {
                "factor": "claim",
                "verdict": c["status"],
                "status": an.COMPLETE,
                "missing": [],
                "basis": c["metric"],
                "numbers": c,
                "summary": c["premise"],
            }
        )
    return out


def _write_report(
    folder: Path,
    vm: dict[str, object],
    verdicts: Sequence[an.Verdict],
    a: Analysed,
    lang: str,
    *,
    md_name: str,
    html_name: str,
    front_matter: str = "",
) -> None:
    md = template_env(html=False, lang=lang).get_template("report.md.j2").render(**vm)
    for hole in prose.holes(md):
        _log.warning(f"the report's prose has a hole ({hole})")
    atomic_write_text(folder / md_name, front_matter + md)
    body = collapse_section(
        markdown_to_html(_inline_images(md, folder)), tr(lang, "Appendix: flags per job")
    )
    html = (
        template_env(html=True, lang=lang)
        .get_template("report.html.j2")
        .render(title=vm["title"], lang=lang, body=body, generator=vm["generator"])
    )
    atomic_write_text(folder / html_name, html)
    atomic_write_json(folder / "verdicts.json", _verdicts_json(verdicts, a, lang))
    # The numbers behind the page, for pandas or a spreadsheet (benchkit.results.frame).
    write_results_csv(folder / RESULTS_CSV, a.results)


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
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".publish-"))
    try:
        for png in sorted(report_dir.glob("*.png")):
            shutil.copy2(png, tmp / png.name)
        fm = {
            "title": study_words(a.study, lang).title,
            "date": now,
            "lang": lang,
            "description": vm["headline"],
            # Provisional while any point is missing or any verdict is not settled.
            "status": an.PROVISIONAL if vm["provisional"] else an.COMPLETE,
            "study": a.study.name,
            "generator": vm["generator"],
        }
        # JSON strings are valid YAML scalars: titles with colons or quotes stay intact.
        front = (
            "---\n"
            + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in fm.items())
            + "---\n\n"
        )
        _write_report(
            tmp,
            vm,
            verdicts,
            a,
            lang,
            md_name="index.md",
            html_name="index.html",
            front_matter=front,
        )
        _swap(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap(tmp: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)


def _inline_images(md: str, folder: Path) -> str:
    """Embed figures as data URIs so the HTML stands alone (one file to publish)."""
    for png in folder.glob("*.png"):
        data = base64.b64encode(png.read_bytes()).decode()
        md = md.replace(f"]({png.name})", f"](data:image/png;base64,{data})")
    return md

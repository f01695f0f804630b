"""A results folder, analysed: its results, the study settings they carry (with the report's
`study.*` overrides), the tidy table, the planned space and every verdict."""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from benchkit import log
from benchkit.config import schema
from benchkit.config.knobs import check_study
from benchkit.config.schema import StudyConfig, to_plain
from benchkit.config.space import swept
from benchkit.config.study_overrides import study_overrides
from benchkit.errors import UserError
from benchkit.paths import conf_dir
from benchkit.racing.estimate import Restated
from benchkit.report.analysis import evidence as ev
from benchkit.report.analysis import racing
from benchkit.report.analysis.anchor_job import AnchorJob
from benchkit.report.analysis.anchors import load_anchors, race_anchors
from benchkit.report.analysis.caps import JobCaps
from benchkit.report.analysis.caveats import Caveat
from benchkit.report.analysis.job_builds import JobBuild
from benchkit.report.analysis.job_calls import JobCalls, read_calls, stalls_caps
from benchkit.report.analysis.quality import DriftSet, measure_drift
from benchkit.report.analysis.slot_use import idle_slot_share
from benchkit.report.analysis.stalls import PER_UNIT, JobStalls
from benchkit.report.analysis.table import factor_columns, tidy
from benchkit.report.lang import check_language, languages
from benchkit.report.verdicts import analyse as an
from benchkit.results import bounded
from benchkit.results.schema import Json, Result
from benchkit.results.store import JobResult, find_results
from benchkit.results.trust import left_out_jobs

MULTIRUN_FILE = "multirun.yaml"
_log = log.get(__name__)


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
        # Where a publication's ledger is written comes from the command line (or the
        # study config of the sweep that renders its own report), never from results read
        # from disk: a results folder from someone else would choose a file to write.
        carried = base.pop("ledger", None)
        if carried and not any(o.startswith("study.ledger=") for o in overrides):
            _log.info(
                f"the results name a ledger ({carried}); it is not used: a ledger comes from "
                f"the command line only (study.ledger={carried} to use that one)."
            )
        base.update(config_words(base))
    given = study_overrides(overrides)
    try:
        cfg = OmegaConf.merge(OmegaConf.structured(StudyConfig), base, *given)
        obj = OmegaConf.to_object(cfg)
    except OmegaConfBaseException as exc:
        raise UserError(_merge_problem(exc, overrides)) from exc
    if not isinstance(obj, StudyConfig):
        raise UserError("the study settings did not resolve to a study config.")
    if not 0 <= obj.knee_gain < 1:
        raise UserError(
            f"study.knee_gain={obj.knee_gain:g} is not a share between 0 and 1: it is the "
            "smallest difference a verdict counts (0.05 for 5%)."
        )
    check_study(obj)
    if obj.lang != obj.lang.strip().lower() and obj.lang.strip().lower() in languages():
        # A language code in any case (`study.lang=KO`), as the catalogs name it.
        obj = replace(obj, lang=obj.lang.strip().lower())
    try:
        check_language(obj.lang)
    except ValueError as exc:
        raise UserError(f"{exc}.") from exc
    return obj


def _merge_problem(exc: OmegaConfBaseException, overrides: Sequence[str]) -> str:
    """A study override the schema cannot take, as one sentence naming it and the fix."""
    key = getattr(exc, "full_key", None) or ""
    msg = str(exc).splitlines()[0]
    if "Cannot convert" in msg and "to string" in msg and key:
        # YAML reads `a: b` as a mapping and `[a]` as a list: text must be quoted as text.
        read = "a list" if "ListConfig" in msg else "a mapping"
        return (
            f"study.{key} takes text, which YAML read as {read}: quote the value inside the "
            f"override too (study.{key}='\"A: B\"')."
        )
    if "ListConfig" in str(exc) and key:
        # A list given as one value: name the key and its form, not OmegaConf's types.
        return f"study.{key} takes a list: write study.{key}=[VALUE] (several: [A,B])."
    if "Dict[" in msg and "Cannot assign" in msg and key:
        return f"study.{key} takes a mapping: write study.{key}={{NAME: VALUE}}."
    if "Incompatible value 'None'" in msg and key:
        return f"study.{key} needs a value: give study.{key}=VALUE."
    if "Cannot merge DictConfig with ListConfig" in msg:
        return _mapping_for_list(overrides)
    nested = re.search(r"(not in|subclass of) '?(\w+Config)'?", msg)
    if nested and nested.group(2) != "StudyConfig" and hasattr(schema, nested.group(2)):
        names = ", ".join(f.name for f in fields(getattr(schema, nested.group(2))))
        if nested.group(1) == "not in":
            return (
                f"{key!r} is not a setting of a {nested.group(2)} (its settings are {names}): "
                f"check {', '.join(overrides)}."
            )
        return (
            f"study.{key} takes a {nested.group(2)}, a mapping of its settings ({names}): write "
            f"it as {{{names.split(', ')[0]}: VALUE, ...}}."
        )
    if "not in struct" in str(exc) or "Key '" in str(exc):
        # An unknown key: name it and the nearest study setting, as a user misspells one.
        close = difflib.get_close_matches(key, [f.name for f in fields(StudyConfig)], n=1)
        hint = f" (did you mean study.{close[0]}?)" if close else ""
        # The settings themselves, not a file that lists five of them (a hostile user was sent
        # to conf/study/default.yaml, which lacks noise, anchors, quality, slo and the rest).
        names = ", ".join(sorted(f.name for f in fields(StudyConfig)))
        return f"study.{key} is not a study setting{hint}: the study settings are {names}."
    for kind, words in _KINDS.items():
        if kind in msg and key:
            value = msg.split("'")[1] if msg.count("'") >= 2 else ""
            return f"study.{key} takes {words}: {value!r} is not one, so give {words}."
    return f"bad study override ({msg}): check {', '.join(overrides)}."


def _mapping_for_list(overrides: Sequence[str]) -> str:
    """A `{...}` given to a study setting that takes a list (`study.untested={a: b}`)."""
    lists = {f.name for f in fields(StudyConfig) if str(f.type).startswith("list")}
    for o in overrides:
        key, _, value = o.removeprefix("study.").partition("=")
        if key in lists and value.lstrip().startswith("{"):
            return f"study.{key} takes a list, not a mapping: write study.{key}=[A,B]."
    return f"a study override gives a mapping where a list is taken: check {', '.join(overrides)}."


# What a value OmegaConf could not convert should have been, by OmegaConf's name for its type.
_KINDS = {
    "converted to Float": "a number",
    "converted to Integer": "a whole number",
    "valid bool": "true or false",
}


# The study's words: what a write-up says about the study, not what was measured or how it is
# judged. Its config may have been worded better, or translated, after the results were made.
WORDS = ("question", "unit_name", "untested", "text")


def config_words(study: Mapping[str, object]) -> dict[str, object]:
    """The current words of the study the results carry, from its config in conf/study: the
    config of the same name and title (the title says it is the same study). Results made
    before a translation or a rewording existed are written up with it; a study without such
    a config keeps its own words, and `study.*` overrides still win."""
    name, title = study.get("name"), study.get("title")
    for path in sorted((conf_dir() / "study").glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data.get("name") == name and data.get("title") == title:
            return {k: data[k] for k in WORDS if k in data}
    return {}


def swept_factors(source: Path) -> dict[str, list[Any]]:
    """What a Hydra sweep was launched over, from the multirun.yaml at its root."""
    path = source / MULTIRUN_FILE
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(bounded.read_text(path, source)) or {}
    except (ValueError, yaml.YAMLError) as exc:
        raise UserError(f"{path} is not valid YAML ({exc}): fix or remove it.") from exc
    return swept(data) if isinstance(data, dict) else {}


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
    caveats: list[Caveat]
    records: dict[str, Json] = field(default_factory=dict)
    drift: DriftSet = field(default_factory=DriftSet)
    # What was taken from each job's calls.jsonl, by its result.json's path.
    calls: dict[Path, JobCalls] = field(default_factory=dict)
    # The report's study.* overrides as given: a next run's report is rendered with them.
    overrides: tuple[str, ...] = ()

    def verdict(self, factor: str) -> an.Verdict | None:
        return next((v for v in self.verdicts if v.factor == factor), None)

    def loaded(self) -> dict[str, Result]:
        """Each job's result as loaded (`records`' keys): not loaded again from its object."""
        return {r.job_dir.name: r.result for r in self.results}


def _derived(data: Mapping[str, object]) -> list[str]:
    """The metrics a result.json says were derived, not measured (reference.derived's keys)."""
    ref = data.get("reference")
    derived = ref.get("derived") if isinstance(ref, Mapping) else None
    return sorted(str(k) for k in derived) if isinstance(derived, Mapping) else []


def _slots_idle(results: Sequence[JobResult], calls: Mapping[Path, JobCalls]) -> dict[str, float]:
    """Each complete job's share of slot-time idle while its server had work (slot_use)."""
    out: dict[str, float] = {}
    for r in results:
        slots = r.result.factors.get("slots")
        jc = calls.get(r.path)
        if r.status != "complete" or jc is None or not str(slots).isdigit():
            continue
        idle = idle_slot_share(jc.windows, int(str(slots)))
        if idle is not None:
            out[r.job_dir.name] = idle
    return out


_WORK = ["workload"]


def analyse_folder(
    source: Path, overrides: Sequence[str] = (), study: StudyConfig | None = None
) -> Analysed:
    """Load a run or sweep folder and compute every verdict."""
    results = find_results(source)
    left_out = left_out_jobs(results)
    study = study or resolve_study(results, overrides)
    calls = read_calls(results)
    df = tidy(results, {p: jc.figures for p, jc in calls.items()})
    # A raced sweep's jobs ran different numbers of units: each is stated on its machine's units.
    restated = racing.restate(df, results, ev.objective_of(study.objective, study.slo).metric)
    planned = an.planned_space(study.factors, swept_factors(source))
    builds = {r.job_dir.name: an.job_build(r.result) for r in results}
    metric = ev.objective_of(study.objective, study.slo).metric
    folders = race_anchors(source, study.anchors)
    anchors = load_anchors(source, folders, factor_columns(results), metric, results)

    machines = racing.unit_machines(source, results)
    stalls, capped, unreadable = stalls_caps(calls, results)
    leave_out_cold_starts(df, stalls, set(restated))
    inputs = _SweepInputs(
        source,
        results,
        study,
        calls,
        planned,
        builds,
        anchors,
        machines,
        left_out,
        stalls,
        capped,
        unreadable,
        restated,
    )
    sw = inputs.sweep(df, study.slo)
    # Output drift needs the sweep's factors to choose its reference; a study that limits
    # drift has the limit applied like an SLO, so the sweep is built again with it.
    drift = measure_drift(results, sw.varying, sw.planned, study)
    _add_answers(df, drift, results)
    if study.quality.limit and drift.measured:
        limits = {ev.DRIFT_LIMITS.get(k, k): v for k, v in study.quality.limit.items()}
        sw = inputs.sweep(df, {**study.slo, **limits})
    records = {r.job_dir.name: r.data for r in results}
    claims = an.check_claims(df, [to_plain(c) for c in study.claims], sw.derived)
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
        drift=drift,
        calls=calls,
        overrides=tuple(overrides),
    )


@dataclass
class _SweepInputs:
    """What the sweep of a results folder is built from besides its table and its SLO (it is
    built twice where a study limits output drift: the second time with the limit)."""

    source: Path
    results: list[JobResult]
    study: StudyConfig
    calls: dict[Path, JobCalls]
    planned: Mapping[str, Sequence[Any]]
    builds: Mapping[str, JobBuild | None]
    anchors: list[AnchorJob]
    machines: dict[str, dict[str, str]]
    left_out: set[str]
    stalls: dict[str, JobStalls]
    capped: dict[str, JobCaps]
    unreadable: dict[str, list[int]]
    restated: dict[str, Restated]

    def sweep(self, df: pd.DataFrame, slo: Mapping[str, float]) -> an.Sweep:
        """The sweep of `df` with the objective held to `slo`."""
        results, study, calls, stalls = self.results, self.study, self.calls, self.stalls
        built = an.build_sweep(
            df,
            factor_columns(results),
            self.planned,
            min_effect=study.knee_gain,
            knee_gain=study.knee_gain,
            choices={r.job_dir.name: dict(r.result.provenance.choices) for r in results},
            per_repeat={
                r.job_dir.name: list(r.data["passes"])
                for r in results
                if isinstance(r.data.get("passes"), list)
            },
            objective=ev.objective_of(study.objective, slo),
            noise=study.noise,
            # A stalled unit's time is the stall's, not the setting's: the per-unit noise is
            # taken without it (the objective keeps it, stated with and without).
            spans={
                r.job_dir.name: {
                    u: t
                    for u, t in calls[r.path].spans.items()
                    if u not in stalls.get(r.job_dir.name, _NO_STALLS).units_stalled
                }
                for r in results
                if r.status == "complete"
            },
            unit_times={
                r.job_dir.name: stalls.get(r.job_dir.name, _NO_STALLS).unit_times(
                    calls[r.path].spans
                )
                for r in results
                if r.status == "complete"
            },
            setups=_setups(results, self.builds),
            cap_limit=study.cap_limit,
            stalls=stalls,
            caps=self.capped,
            unreadable=self.unreadable,
            # The workload is the work itself, never a setting to recommend, whatever a
            # study recorded before it was declared so (a review found "use workload=prose").
            application=[
                *study.application_factors,
                *_WORK[: "workload" not in study.application_factors],
            ],
            race=racing.decisions(self.source, self.left_out),
            race_undecided=racing.undecided(self.source),
            anchors=self.anchors,
        )
        built.unit_machines = self.machines
        built.restated = self.restated
        built.build_traits = {r.job_dir.name: an.build_traits(r.result) for r in results}
        built.slots_idle = _slots_idle(results, calls)
        built.derived = {r.job_dir.name: d for r in results if (d := _derived(r.data))}
        built.measured_spans = {
            r.job_dir.name: dict(calls[r.path].spans)
            for r in results
            if r.status == "complete" and stalls.get(r.job_dir.name, _NO_STALLS).cold
        }
        return built


def _add_answers(df: pd.DataFrame, drift: DriftSet, results: Sequence[JobResult]) -> None:
    """What each job did to the answers, beside its speed in the factor verdicts: its output
    drift's columns and figures, and its task's accuracy, added to `df`."""
    for column, by_job in drift.columns().items():
        df[column] = df["job"].map(by_job)
    df["drift_changed_n"] = df["job"].map({j: d.changed for j, d in drift.drift.items()})
    df["drift_probes"] = df["job"].map({j: d.probes for j, d in drift.drift.items()})
    df["drift_first"] = df["job"].map({j: d.first_diff_mean for j, d in drift.drift.items()})
    df["drift_flip_gap"] = df["job"].map(drift.flip_gaps())
    df["drift_ref_margin"] = drift.ref_margin
    tasks = {r.job_dir.name: t for r in results if isinstance(t := r.data.get("task"), dict)}
    df["task_accuracy"] = df["job"].map({j: t.get("accuracy") for j, t in tasks.items()})
    df["task_items"] = df["job"].map({j: t.get("items") for j, t in tasks.items()})


_NO_STALLS = JobStalls(job="", wall_s=0.0, units=0)


def leave_out_cold_starts(
    df: pd.DataFrame, stalls: Mapping[str, JobStalls], skip: set[str]
) -> None:
    """The per-unit figures the verdicts compare, in `df`, without each job's cold starts
    (benchkit.report.analysis.stalls): a server's first work with no warm-up before it is its start,
    not the setting's speed. A job a race restated on other units (`skip`) keeps its figure:
    the excess is per the job's own units."""
    for job, js in stalls.items():
        if not js.cold or job in skip:
            continue
        rows = df["job"] == job
        for metric in PER_UNIT:
            for column in (metric, f"{metric}_uncapped"):
                if column not in df:
                    continue
                value = df.loc[rows, column].iloc[0] if rows.any() else None
                if isinstance(value, int | float) and value == value:
                    df.loc[rows, column] = js.cold_free(metric, float(value))


def _setups(
    results: Sequence[JobResult], builds: Mapping[str, JobBuild | None]
) -> dict[str, dict[str, str]]:
    """Each complete job's setup (evidence.setup_of), with the card memory its device had in
    use at its start as the sweep's jobs compare it (evidence.shared_cards)."""
    done = [r for r in results if r.status == "complete"]
    out = {
        r.job_dir.name: ev.setup_of(
            r.result, an.build_identity(b) if (b := builds[r.job_dir.name]) else None
        )
        for r in done
    }
    cards = ev.shared_cards({r.job_dir.name: ev.card_in_use(r.result) for r in done})
    for job, memory in cards.items():
        out[job]["card_memory"] = memory
    for r in done:
        # Both states named on the CPU, so that the few jobs of either kind are listed.
        cpu = str(r.result.factors.get("backend") or "") == "cpu"
        out[r.job_dir.name]["host_busy"] = (
            "busy" if ev.host_busy(r.result) else "quiet" if cpu else ""
        )
    return out

"""What to run after reading the report: the recommended point's llama-server command as
its job ran it, the benchkit run that measures it again, and, while the verdicts are not
settled, the runs that would settle them.

Computes only, from the analysed folder (its verdicts as `analyse` gave them, the jobs'
result.json and the sweep's multirun.yaml); `closing` words it for the report and the
terminal. A verdict rule that changes changes what this reads, never what it decides.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

import yaml

from benchkit.racing.observe import RACING_FILE
from benchkit.report.analysis.numbers import (
    BackendNumbers,
    DraftingNumbers,
    FactorNumbers,
    FactorValue,
    Point,
    SlotsNumbers,
)
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.folder import MULTIRUN_FILE, Analysed
from benchkit.report.verdicts.kind import RunUnits
from benchkit.report.writeup import point_blocks
from benchkit.report.writeup.ctx_sizing import Sizing, resized, sized
from benchkit.report.writeup.recommend import cannot_vary_in
from benchkit.results import bounded
from benchkit.results.store import JobResult

# The verdicts whose open comparisons (benchkit.compare) a Next run settles.
ENGINE = (BackendNumbers, SlotsNumbers, DraftingNumbers, FactorNumbers)
# Repeats that give a point a confidence interval for the noise rule.
REPEATS = 3


class StepKind(Enum):
    """Why a next run is proposed."""

    resume = "resume"  # planned points did not complete: the same sweep again, same folder
    repeats = "repeats"  # a verdict rests on a comparison the engine left open
    more_slots = "more_slots"  # the largest slot count was still the best
    other_slots = "other_slots"  # only one slot count completed
    loads = "loads"  # a capacity the loads tried did not bracket, or bracket closely enough
    twins = "twins"  # single runs, no run-to-run noise measured: the sweep again, as anchors
    stalled = "stalled"  # stalls change a comparison: the stalled points measured again


@dataclass(frozen=True)
class NextStep:
    kind: StepKind
    command: str
    # The points it measures (again), as the sweep's factors name them.
    points: list[Point] = field(default_factory=list)
    # Slot counts left out because the units each job replays (`units`) do not fill them in
    # whole rounds (verdicts.exercise.fills).
    left_out: tuple[int, ...] = ()
    units: int | None = None
    # The units the jobs that ran replayed, where the run proposed sets others.
    ran_units: int | None = None


# The folder beside the results that each kind of next run writes into: never the results'
# own (only a resumed sweep goes there), so following a step overwrites nothing.
FOLDER_SUFFIX = {
    StepKind.repeats: "-repeats",
    StepKind.stalled: "-stalled",
    StepKind.twins: "-twin",
    StepKind.more_slots: "-more-slots",
    StepKind.other_slots: "-other-slots",
    StepKind.loads: "-loads",
}


@dataclass(frozen=True)
class UseThis:
    """The recommendation as commands; `settled` when every factor verdict is complete."""

    point: Point | None
    settled: bool
    job: str | None = None
    server_command: str | None = None
    rerun: str | None = None
    next_steps: list[NextStep] = field(default_factory=list)
    # The factors the sweep varied: the point's other settings were held fixed, not chosen.
    varying: tuple[str, ...] | None = None
    # What the server command's context is sized for (every unit of the workload).
    sizing: Sizing | None = None
    # Settings the study's models could not have set another way (recommend.cannot_vary):
    # not said to be held fixed, in the report as in the summary and the post.
    cannot: frozenset[str] = frozenset()


def factor_verdicts(a: Analysed) -> list[an.Verdict]:
    """The verdicts a recommendation rests on (as the summary's "settled" counts them)."""
    return [v for v in a.verdicts if registry.kind_of(v.factor).acted_on]


def use_this(a: Analysed, program: str | None = None) -> UseThis:
    """The recommended point's commands, and what to run next while it is not settled.
    `program` starts every benchkit command (default: `benchkit_program()`)."""
    prog = program or benchkit_program()
    proj = registry.recommending(a.verdicts)
    named = proj is not None and proj.verdict is not None and proj.point
    point = dict(proj.point) if named and proj is not None and proj.point else None
    verdicts = factor_verdicts(a)
    settled = point is not None and all(v.status == an.COMPLETE for v in verdicts)
    job = _job_at(a.results, point) if point else None
    server = rerun = None
    sizing = None
    if job is not None:
        srv = job.result.provenance.server
        if srv is not None and srv.argv:
            # Sized for every unit of the workload, not only those the job ran.
            model = job.result.provenance.model
            sizing = sized(
                srv.argv, srv, job.result.provenance.workload, model.path if model else None
            )
            # Its environment first: device selection (as its backend selects a device,
            # benchkit.backends: GGML_VK_VISIBLE_DEVICES=0, ...) is part of how it ran.
            env = srv.extra.get("env")
            pairs = env.items() if isinstance(env, Mapping) else []
            head = [f"{k}={_quote(str(v))}" for k, v in pairs]
            server = " ".join([*head, runnable(resized(srv.argv, sizing))])
        overrides = [o for o in job.result.provenance.overrides if not o.startswith("hydra.")]
        rerun = " ".join([prog, *map(_quote, overrides)])
    steps = [] if settled else next_steps(a, prog)
    return UseThis(
        point,
        settled,
        job.job_dir.name if job else None,
        server,
        rerun,
        steps,
        tuple(a.sweep.varying),
        sizing,
        cannot_vary_in(a),
    )


# Flags that say how benchkit reached and watched the server, not what it served: an ephemeral
# port, the job's alias, benchkit's API key, its metrics and slot endpoints. The command to use
# leaves them out (result.json keeps the command as run); a user's own flags stay.
HARNESS_FLAGS = frozenset(
    {
        "--host",
        "--port",
        "--alias",
        "--api-key",
        "--metrics",
        "--slots",
        "--no-webui",
        "--served-model-name",
        "--reuse-port",
        "--enable-http-worker-reuseport",
        "--enable-metrics",
    }
)


def runnable(argv: Sequence[str]) -> str:
    """The server command as a user runs it: every path whole (a bare file name fails from
    anywhere else: "failed to open GGUF file"), the flags that define the setting, none of
    the harness's (HARNESS_FLAGS)."""
    groups: list[list[str]] = []
    for a in argv[1:]:
        if not groups or (a.startswith("-") and not _number(a)):
            groups.append([a])
        else:
            groups[-1].append(a)
    kept = [g for g in groups if g[0] not in HARNESS_FLAGS]
    return " ".join(_quote(x) for x in [argv[0], *(x for g in kept for x in g)])


def _number(a: str) -> bool:
    try:
        float(a)
    except ValueError:
        return False
    return True


def next_steps(a: Analysed, prog: str) -> list[NextStep]:
    """The runs that would settle what is not settled, each as one command: the same sweep
    again into its folder where planned points are missing (complete jobs are reused), the
    pairs the comparison engine left open with repeats, and slot counts beyond the best one.
    Every other run writes into a new folder beside this one (FOLDER_SUFFIX), and where the
    report was given study.* overrides, its report is rendered with them."""
    swept = sweep_overrides(a.source)
    steps: list[NextStep] = []
    verdicts = factor_verdicts(a)
    missing = [m.point for m in a.sweep.missing]
    if missing and swept is not None:
        # A raced sweep resumes as a race: the basic sweeper would run every point whole.
        race = ["hydra/sweeper=racing"] if (a.source / RACING_FILE).exists() else []
        args = [*race, *swept, f"hydra.sweep.dir={shown(a.source)}"]
        command = _sweep(prog, args) + _then_report(a, prog, shown(a.source))
        steps.append(NextStep(StepKind.resume, command, missing))
    noisy: list[Point] = []
    # The points already in `noisy`, as sets of their items (equal as the dicts are): looking
    # each point up in the list was quadratic in the open pairs (5,000 at 10,000 jobs).
    seen: set[frozenset[tuple[str, FactorValue]]] = set()

    def add(pair: Sequence[Point]) -> None:
        # Both of a pair checked against the points before it, as a list's `in` did.
        new = [p for p in pair if frozenset(p.items()) not in seen]
        seen.update(frozenset(p.items()) for p in new)
        noisy.extend(new)

    pairs: list[tuple[Point, Point]] = []
    for v in verdicts:
        # A comparison the engine left open (benchkit.compare): both of its points again.
        if "open_pairs" in v.reasons and isinstance(v.numbers, ENGINE):
            for c in v.numbers.open or []:
                add([p for p in (c["base"], c["other"]) if p])
                if c["base"] and c["other"]:
                    pairs.append((c["base"], c["other"]))
    if noisy:
        steps.append(_points_again(a, prog, StepKind.repeats, swept, noisy, pairs))
    stalled = _stalled_points(verdicts, seen)
    if stalled:
        # The points whose stalls change a comparison, again with repeats: a verdict that
        # waits on stalls had no Next at all ("no further run would settle them").
        steps.append(_points_again(a, prog, StepKind.stalled, swept, stalled, []))
    twin = _twins(a, prog, swept, verdicts)
    if twin is not None:
        steps.append(twin)
    run = run_units(a, swept or _single_overrides(a))
    # Each kind's next run, in report order (the capacity search's loads, more slot counts).
    for kind, mine in registry.by_kind(a.verdicts):
        for v in mine:
            p = kind.proposes(v, run) if kind.proposes is not None else None
            if p is None or (p.reuse and swept is None and not a.results):
                continue
            args = _set(swept or _single_overrides(a), p.key, p.values)
            for key, value in p.also:
                args = _set(args, key, value)
            if p.reuse:
                # A new folder that reuses this one's jobs: into this folder, the new values
                # would renumber the points and a job would overwrite another point's result
                # before it was reused.
                args = _set(args, "resume_from", str(shown(a.source)))
            step = _new_folder(a, prog, StepKind(p.why), args, p.points)
            ran = run.units if any(k == "workload.units" for k, _ in p.also) else None
            steps.append(replace(step, left_out=p.left_out, units=p.units, ran_units=ran))
    return steps


def _new_folder(
    a: Analysed, prog: str, kind: StepKind, args: Sequence[str], points: list[Point]
) -> NextStep:
    """A sweep into its own folder beside the results, then its report as this one was
    rendered."""
    folder = Path(f"{shown(a.source)}{FOLDER_SUFFIX[kind]}")
    command = _sweep(prog, [*args, f"hydra.sweep.dir={folder}"]) + _then_report(a, prog, folder)
    return NextStep(kind, command, points)


def _points_again(
    a: Analysed,
    prog: str,
    kind: StepKind,
    swept: list[str] | None,
    points: list[Point],
    pairs: Sequence[tuple[Point, Point]],
) -> NextStep:
    """`points` again with more repeats, and no other point: one sweep per cross product of
    them (point_blocks), each into its folder beside the results (`-repeats`, `-repeats-2`),
    with the overrides that defined those points' work where the jobs had their own (a
    race's `workload.units` each): the sweep cut to the points' values swept every
    combination of them, and replayed the whole workload where the race had replayed less."""
    base = swept if swept is not None else _single_overrides(a)
    named = [_named(p) for p in points]
    found = point_blocks.blocks(named, [(_named(x), _named(y)) for x, y in pairs])
    commands = []
    for i, block in enumerate(found):
        args = list(base)
        for factor, values in block.items():
            values = sorted(values, key=lambda x: (0, float(x), x) if _numeric(x) else (1, 0, x))
            key = next((_key(o) for o in base if _key(o).rsplit(".", 1)[-1] == factor), factor)
            args = _set(args, key, ",".join(values))
        mine = [p for p in points if point_blocks.holds(block, _named(p))]
        for key, value in _own_overrides(a, mine, base):
            args = _set(args, key, value)
        suffix = FOLDER_SUFFIX[kind] + (f"-{i + 1}" if i else "")
        folder = Path(f"{shown(a.source)}{suffix}")
        sweep = _sweep(prog, [*_more_repeats(a, args), f"hydra.sweep.dir={folder}"])
        commands.append(sweep + _then_report(a, prog, folder))
    return NextStep(kind, " && ".join(commands), points)


def _named(point: Point) -> dict[str, str]:
    return {k: an.norm(v) for k, v in point.items()}


def _own_overrides(
    a: Analysed, points: Sequence[Point], base: Sequence[str]
) -> list[tuple[str, str]]:
    """The overrides the jobs of `points` were given beyond the sweep's (`base`): each key
    with its one value, or for `workload.units` (a race gives each point its own) the most
    any of them replayed, so every point replays at least the units it ran."""
    given = {_key(o) for o in base}
    seen: dict[str, list[str]] = {}
    # Looked up, not searched: a 1,000-job report asked 500 points of every job (1.3 million
    # comparisons).
    wanted = {frozenset((k, an.norm(v)) for k, v in p.items()) for p in points}
    keys = {tuple(p) for p in points}
    for r in a.results:
        if not any(frozenset((k, an.norm(r.factors.get(k))) for k in ks) in wanted for ks in keys):
            continue
        for o in r.result.provenance.overrides:
            key, eq, value = o.partition("=")
            if not eq or key.startswith("hydra") or _key(o) in given:
                continue
            seen.setdefault(_key(o), [])
            if value not in seen[_key(o)]:
                seen[_key(o)].append(value)
    out = []
    for key, values in seen.items():
        if len(values) == 1:
            out.append((key, values[0]))
        elif key == "workload.units" and all(v.isdigit() for v in values):
            out.append((key, str(max(int(v) for v in values))))
    return out


def shown(folder: Path) -> Path:
    """A folder as a command names it: relative to the working folder where it lies inside it
    (as `benchkit_program` names the interpreter; a post shows no local paths), else as
    given."""
    if not folder.is_absolute():
        return folder
    try:
        return folder.relative_to(Path.cwd())
    except ValueError:
        return folder


def report_overrides(a: Analysed) -> list[str]:
    """The report's study.* overrides a next run's report is rendered with: all but the
    ledger's (a rerun's report publishes nothing)."""
    return [o for o in a.overrides if not o.startswith("study.ledger=")]


def _then_report(a: Analysed, prog: str, folder: Path, extra: Sequence[str] = ()) -> str:
    """` && <report> FOLDER <overrides>` where this report had overrides (a sweep renders its
    own report without them), else nothing."""
    given = [*report_overrides(a), *extra]
    if not given:
        return ""
    return " && " + " ".join([_report_program(prog), str(folder), *map(_quote, given)])


def run_units(a: Analysed, args: Sequence[str]) -> RunUnits:
    """The units each job of a next run replays (the sweep's `workload.units`, else the whole
    workload) and the units the workload has, from the jobs' records."""
    have = [
        w.units
        for r in a.results
        if (w := r.result.provenance.workload) is not None and w.units is not None
    ]
    available = min(have) if have else None
    given = next((o.split("=", 1)[1] for o in args if _key(o) == "workload.units"), None)
    units = int(given) if given is not None and given.isdigit() else available
    return RunUnits(units, available)


def _more_repeats(a: Analysed, args: Sequence[str]) -> list[str]:
    """`args` with more repeats than the run had: the repeats it ran would settle nothing."""
    ran = max((_repeats_of(r.data) for r in a.results), default=1)
    return _set(list(args), "repeats", str(REPEATS if ran < REPEATS else 2 * ran))


def _stalled_points(
    verdicts: Sequence[an.Verdict], seen: set[frozenset[tuple[str, FactorValue]]]
) -> list[Point]:
    """The points of stalled jobs a provisional verdict names, not already proposed."""
    out: list[Point] = []
    for v in verdicts:
        notes = getattr(v.numbers, "stalled", None) if "stalled" in v.reasons else None
        for n in notes or []:
            key = frozenset(n["point"].items())
            if n["point"] and key not in seen:
                seen.add(key)
                out.append(dict(n["point"]))
    return out


def _twins(
    a: Analysed, prog: str, swept: list[str] | None, verdicts: Sequence[an.Verdict]
) -> NextStep | None:
    """Where a verdict rests on single runs with no run-to-run noise measured: the same sweep
    into a twin folder beside this one, then this report with the twin as its anchors, whose
    jobs of each point on this machine measure how far a second run moves it (rules v8)."""
    if swept is None or not any("run_noise_unmeasured" in v.reasons for v in verdicts):
        return None
    twin = Path(f"{shown(a.source)}{FOLDER_SUFFIX[StepKind.twins]}")
    sweep = _sweep(prog, [*swept, f"hydra.sweep.dir={twin}"])
    # Anchor folders are read relative to the results folder: the twin is its sibling, beside
    # the anchors this report was given (or its results carry).
    anchor = f"../{twin.name}"
    # A twin already among the anchors was run: proposing it again reuses its jobs and
    # measures nothing (a hostile user followed the Next command twice into a loop).
    if any(Path(x).name == twin.name for x in a.study.anchors):
        return None
    anchors = [x for x in a.study.anchors if x != anchor]
    others = [o for o in report_overrides(a) if _key(o) != "study.anchors"]
    listed = ",".join([*anchors, anchor])
    report = " ".join(
        [
            _report_program(prog),
            str(shown(a.source)),
            *map(_quote, [*others, f"study.anchors=[{listed}]"]),
        ]
    )
    # Every point the command sweeps: the measured ones and those that did not complete.
    points = [dict(c.values) for c in a.sweep.cells] + [dict(m.point) for m in a.sweep.missing]
    return NextStep(StepKind.twins, f"{sweep} && {report}", points)


def _report_program(prog: str) -> str:
    """The report's command beside `prog` (the same interpreter): `... -m benchkit.report`."""
    return prog[: -len("benchkit")] + "benchkit.report" if prog.endswith("benchkit") else prog


def _job_at(results: Sequence[JobResult], point: Mapping[str, FactorValue]) -> JobResult | None:
    """The first complete job whose factors are the point's."""
    for r in results:
        if r.status != "complete":
            continue
        if all(an.norm(r.factors.get(k)) == an.norm(v) for k, v in point.items()):
            return r
    return None


def sweep_overrides(source: Path) -> list[str] | None:
    """The overrides a sweep was launched with (multirun.yaml), without where it was written;
    None for a folder that is no Hydra sweep."""
    path = source / MULTIRUN_FILE
    try:
        data = yaml.safe_load(bounded.read_text(path, source)) or {}
    except (OSError, ValueError, yaml.YAMLError):
        return None
    task = ((data.get("hydra") or {}).get("overrides") or {}).get("task") or []
    return [str(t) for t in task if not str(t).startswith("hydra.sweep.dir=")]


def _single_overrides(a: Analysed) -> list[str]:
    """A single run's overrides (the first job's), for a sweep proposed from it."""
    first = a.results[0].result.provenance.overrides if a.results else []
    return [o for o in first if not o.startswith("hydra.")]


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def _repeats_of(data: Mapping[str, object]) -> int:
    """How many passes a job's result.json holds (1: a single pass)."""
    passes = data.get("passes")
    return len(passes) if isinstance(passes, list) else 1


def _set(args: Sequence[str], key: str, value: str) -> list[str]:
    """`args` with `key=value`, in the place of the key's override where there is one."""
    new = f"{key}={value}"
    if any(_key(o) == key for o in args):
        return [new if _key(o) == key else o for o in args]
    return [*args, new]


def _numeric(x: str) -> bool:
    try:
        float(x)
    except ValueError:
        return False
    return True


def _sweep(prog: str, args: Sequence[str]) -> str:
    return " ".join([prog, "-m", *map(_quote, args)])


def _quote(arg: str) -> str:
    # Hydra's list and choice syntax ([a,b], key=a,b) is safe unquoted in a POSIX shell
    # except for brackets, spaces and quotes.
    return shlex.quote(arg) if any(c in arg for c in " '\"[]{}()$*?&;|<>") else arg


def benchkit_program() -> str:
    """How benchkit is started here: the interpreter's path relative to the working folder
    where it lies inside it (`.venv/bin/python -m benchkit` after `make study`), else
    `python -m benchkit`."""
    exe = Path(sys.executable)
    try:
        rel = exe.relative_to(Path.cwd())
    except ValueError:
        return "python -m benchkit"
    return f"{rel} -m benchkit"

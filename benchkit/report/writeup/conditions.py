"""What was measured, on what, with what, as the report states it: the model and hardware
lines, the workload and sampling lines, each backend's build and every server flag."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from benchkit.report.analysis import caveats, warmup
from benchkit.report.analysis import groundtruth as gt
from benchkit.report.lang import i18n, tr, trn
from benchkit.report.lang.fmt import integer
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts.cold_words import warmup_lines
from benchkit.report.verdicts.folder import Analysed
from benchkit.results import bounded
from benchkit.results.schema import Metrics, ModelInfo, SamplingInfo, WorkloadInfo
from benchkit.results.store import JobResult


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


def _first(results: Sequence[JobResult], key: str) -> dict[str, object]:
    for r in results:
        v = r.provenance.get(key)
        if isinstance(v, dict) and v:
            return v
    return {}


def reported_gpus(
    hardware: Mapping[str, Any], source: Path, lang: str = "en"
) -> tuple[str, list[str]]:
    """The GPUs as the machine reported them: the jobs' own detection (hardware.detect), else
    the nvidia-smi table a study script saved beside the results (ground-truth/machine.txt,
    header line then one line per GPU), else nothing."""
    detected = [_detected(str(g), lang) for g in hardware.get("detected_gpus") or [] if g]
    if detected:
        return "result.json", detected
    txt = source / gt.GROUND_TRUTH_DIR / "machine.txt"
    try:
        lines = [x.strip() for x in bounded.read_text(txt, source).splitlines() if x.strip()]
    except (OSError, ValueError):
        return "", []
    if not lines or "," not in lines[0]:
        return "", []
    keys = [k.strip() for k in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        vals = [v.strip() for v in line.split(",")]
        if len(vals) != len(keys):
            break
        rows.append(", ".join(_smi(k, v, lang) for k, v in zip(keys, vals, strict=True)))
    return f"{gt.GROUND_TRUTH_DIR}/machine.txt", rows


def _detected(gpu: str, lang: str) -> str:
    """A GPU as a job recorded it ('NVIDIA H200, 143771 MiB, driver 580.159.04, power limit
    700.00 W', host.provenance) in the report's language: its driver and power limit said as
    nvidia-smi's table is (review 11: English left in a Korean post's cells)."""
    parts = []
    for part in gpu.split(", "):
        if part.startswith("driver "):
            part = _smi("driver_version", part.removeprefix("driver "), lang)
        elif part.startswith("power limit "):
            part = _smi("power.limit [W]", part.removeprefix("power limit "), lang)
        parts.append(part)
    return ", ".join(parts)


def _smi(key: str, value: str, lang: str) -> str:
    """One field of nvidia-smi's CSV (--query-gpu=name,memory.total,driver_version,
    power.limit) in words: a reader sees 'driver 580.159.04', never 'driver_version' (review
    9); a key not known as it is."""
    if key == "name":
        return value
    if key == "memory.total [MiB]":
        return tr(lang, "{value} of memory", value=value)
    if key == "driver_version":
        return tr(lang, "driver {value}", value=value)
    if key == "power.limit [W]":
        return tr(lang, "power limit {value}", value=value)
    return f"{key} {value}"


def _workload_view(results: Sequence[JobResult], lang: str) -> tuple[list[str], str | None]:
    """The workload section: each fixture's line (a sweep of several workloads describes each,
    not the first job's alone), and a line per job whose server tokenized prompts differently
    from the fixture."""
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
    by_fixture: dict[str, list[JobResult]] = {}
    for r in results:
        wi = r.result.provenance.workload
        if wi and wi != WorkloadInfo():
            by_fixture.setdefault(str(wi.fixture), []).append(r)
    lines = [_fixture_line(jobs, lang) for jobs in by_fixture.values()]
    return tokenizer_lines, " ".join(lines) if lines else None


def _fixture_line(results: Sequence[JobResult], lang: str) -> str:
    """One fixture's line, from the jobs that replayed it: its totals and the units replayed."""
    wl = next(wi for r in results if (wi := r.result.provenance.workload))
    calls = wl.calls or 0
    if not wl.prompt_tokens:
        # A text fixture records no prompt lengths (the server tokenises them): said so, not
        # as three dashes (review 13 read "– prompt tokens (mean – a call, longest –)").
        line = tr(
            lang,
            "Workload {fixture}: {units} units, {calls} calls of text whose prompt lengths the "
            "fixture does not record, {completion} completion tokens; output policy {policy}, "
            "generation cap {cap} tokens.",
            fixture=wl.fixture,
            units=wl.units,
            calls=integer(calls),
            completion=integer(wl.completion_tokens),
            policy=wl.output_policy,
            cap=integer(wl.cap),
        )
        return line + _replayed_text(results, wl, lang)
    line = tr(
        lang,
        "Workload {fixture}: {units} units, {calls} calls, {prompt} prompt tokens (mean "
        "{mean_prompt} a call, longest {max_prompt}), {completion} completion tokens; output "
        "policy {policy}, generation cap {cap} tokens.",
        fixture=wl.fixture,
        units=wl.units,
        calls=integer(calls),
        prompt=integer(wl.prompt_tokens),
        # A text fixture records no prompt lengths: "–", never a mean of 0.
        mean_prompt=integer(wl.prompt_tokens / calls) if calls and wl.prompt_tokens else "–",
        max_prompt=integer(wl.max_prompt_tokens),
        completion=integer(wl.completion_tokens),
        policy=wl.output_policy,
        cap=integer(wl.cap),
    )
    return line + _replayed_text(results, wl, lang)


def _replayed_text(results: Sequence[JobResult], wl: WorkloadInfo, lang: str) -> str:
    """' Only its first 4 of 10 units were replayed ...': what of the fixture the jobs
    replayed, where not all of it ('' where they replayed it whole)."""
    line = ""
    replayed = wl.units_replayed
    if replayed is None:  # results written before units_replayed was recorded
        planned = next(
            (mx.units_planned for r in results if (mx := r.result.metrics) != Metrics()), None
        )
        reps = next((r.result.factors.get("repeats") for r in results), None) or 1
        replayed = int(planned) // int(reps) if planned else None
    counts = {
        int(n)
        for r in results
        if (w := r.result.provenance.workload) is not None and (n := w.units_replayed)
    }
    if len(counts) > 1:
        # A raced sweep (or jobs of different workload.units): each job its own count.
        line += " " + tr(
            lang,
            "The jobs replayed its first {least} to {most} of {units} units, each job its "
            "own count (workload.units; a race sets it per point): the totals above are the "
            "whole fixture's.",
            least=integer(min(counts)),
            most=integer(max(counts)),
            units=wl.units,
        )
    elif replayed is not None and replayed != wl.units:
        # The plural follows the units replayed ("1 of 10 units was"); a language may
        # leave the fixture's total out.
        line += " " + trn(
            lang,
            "Only its first {n} of {units} units was replayed (workload.units={n}): the "
            "totals above are the whole fixture's.",
            "Only its first {n} of {units} units were replayed (workload.units={n}): the "
            "totals above are the whole fixture's.",
            int(replayed),
            n=integer(replayed),
            units=wl.units,
        )
    return line


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


class BuildRow(TypedDict):
    """One backend's build as the setup section lists it ("–" where a field was not read)."""

    backend: str
    source: str
    version: str
    date: str
    devices: str


def _setup_view(a: Analysed, lang: str) -> tuple[list[BuildRow], str, list[dict[str, str]]]:
    """The setup section: each backend's build, and the server flags common to all jobs and
    per job."""
    results = a.results
    builds = [
        BuildRow(
            backend=b,
            source=info.get("source") or "–",
            version=info.get("version") or "–",
            date=tr(lang, "; source dated {date}", date=info["date"]) if info.get("date") else "",
            devices=info.get("devices") or "",
        )
        for b, info in an.build_summary(a.loaded()).items()
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


def _first_model(a: Analysed) -> ModelInfo:
    """The model of the first job that recorded one (every job that differed is named apart)."""
    return next(
        (mi for r in a.results if (mi := r.result.provenance.model) and mi != ModelInfo()),
        ModelInfo(),
    )


def model_intro(model: ModelInfo, lang: str) -> str | None:
    """The report's first words on the model: real or random weights, its size, weight type
    and vocabulary, and a real model's license, so no verdict below is read as being about
    another kind of model. None where the results recorded no model."""
    if not model.name:
        return None
    parts = [
        tr(lang, "{n} parameters", n=params_text(model.params_total_b))
        if model.params_total_b
        else None,
        _quant(model.quant, lang),
        tr(lang, "a vocabulary of {n} tokens", n=integer(model.n_vocab)) if model.n_vocab else None,
    ]
    about = " (" + ", ".join(p for p in parts if p) + ")" if any(parts) else ""
    name = _txt(model.name)
    if model.license:
        return tr(
            lang,
            "The model is {name}{about}, with real weights, under the license {license}.",
            name=name,
            about=about,
            license=model.license,
        )
    if model.synthetic:
        return tr(
            lang,
            "The model is {name}{about}, with random weights that benchkit wrote: its speed is "
            "that of a model of its shape, but what its drafts and answers do says nothing "
            "about a real model.",
            name=name,
            about=about,
        )
    return tr(
        lang,
        "The model is {name}{about}, from a file given by its path: benchkit does not know "
        "what its weights are.",
        name=name,
        about=about,
    )


def _compared_lines(a: Analysed, lang: str, post: bool = False) -> tuple[str, str]:
    """What is compared with what: the model line and the hardware line (with the GPUs the
    results report, or the CPU and the server's threads for CPU jobs). A post's lead has
    said what a synthetic model's speed says (post.lead): its model line does not again."""
    model = _first_model(a)
    # What is known of the model, and nothing for what is not: no "–" in the line.
    parts = [str(x) for x in (model.architecture,) if x]
    if model.params_total_b and model.params_active_b:
        parts.append(
            tr(
                lang,
                "{total} total, {active} active parameters",
                total=params_text(model.params_total_b),
                active=params_text(model.params_active_b),
            )
        )
    parts += [q for q in (_quant(model.quant, lang),) if q]
    if model.size_gb:
        parts.append(f"{_g(model.size_gb)} GB")
    about = f" ({', '.join(parts)})" if parts else ""
    model_line = tr(lang, "Model: {name}{about}.", name=_txt(model.name), about=about)
    if model.synthetic and not post:
        synthetic = tr(
            lang,
            "a random-weight synthetic model benchkit wrote itself; its speed says nothing "
            "about any real model",
        )
        model_line = model_line[:-1] + ": " + synthetic + "."
    return model_line, _hardware_line(a, lang)


def params_text(billions: float) -> str:
    """A parameter count as model cards write it: 35B, 3B, 0.45M, 12K."""
    for scale, suffix in ((1.0, "B"), (1e-3, "M"), (1e-6, "K")):
        if billions >= scale:
            return f"{billions / scale:.3g}{suffix}"
    return f"{billions * 1e9:.0f}"


def _hardware_line(a: Analysed, lang: str) -> str:
    """The hardware line: the declared profile (`local` is this machine, so it names the
    CPU instead), the GPUs the machine reported, and for CPU jobs the CPU and the threads
    llama-server ran."""
    hardware = _first(a.results, "hardware")
    cpu_jobs = [r for r in a.results if r.factors.get("backend") == "cpu"]
    name = hardware.get("name")
    desc = f" ({hardware['description']})" if hardware.get("description") else ""
    line = tr(
        lang,
        "Hardware: {name}{desc}{power}.",
        name=tr(lang, "this machine (the local hardware profile)")
        if name == "local"
        else _txt(name),
        desc=desc,
        power=tr(lang, ", power cap {w} W", w=_g(hardware["power_cap_w"]))
        if hardware.get("power_cap_w")
        else "",
    )
    gpu_source, gpus = reported_gpus(hardware, a.source, lang)
    if gpus:
        line += " " + tr(
            lang,
            "As the machine reported itself ({source}): {gpus}.",
            source=gpu_source,
            gpus="; ".join(gpus),
        )
    if cpu_jobs and hardware.get("cpu"):
        threads = sorted({t for r in cpu_jobs if (t := server_threads(r)) is not None})
        ram = hardware.get("ram_gb")
        line += " " + trn(
            lang,
            "CPU: {cpu}, {n} logical CPUs{ram}; llama-server ran {threads} thread.",
            "CPU: {cpu}, {n} logical CPUs{ram}; llama-server ran {threads} threads.",
            max((t[0] for t in threads), default=2),
            cpu=str(hardware["cpu"]),
            n=_txt(hardware.get("cpu_count")),
            ram=", " + _g(ram) + " GB RAM" if ram else "",
            threads=", ".join(_threads_text(t, lang) for t in threads) or "?",
        )
    return line


# llama-server's log: "llama threadpool init, n_threads = 2", or its system_info line
# "n_threads = 2 (n_threads_batch = 2) / 2".
_THREADS = re.compile(r"n_threads = (\d+)(?: \(n_threads_batch = (\d+)\))?")


def server_threads(r: JobResult) -> tuple[int, int] | None:
    """The threads llama-server ran for generation and for prompt batches: its `--threads`
    (and `--threads-batch`) flags where the job passed them, else what its log says."""
    srv = r.result.provenance.server
    argv = list(srv.argv) if srv else []
    flags = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("-")}
    given = flags.get("--threads") or flags.get("-t")
    if given and given.isdigit():
        batch = flags.get("--threads-batch") or flags.get("-tb") or given
        return int(given), int(batch) if batch.isdigit() else int(given)
    try:
        for line in bounded.lines(r.job_dir / "server.log"):
            if m := _THREADS.search(line):
                return int(m.group(1)), int(m.group(2) or m.group(1))
    except OSError:
        return None
    return None


def _threads_text(t: tuple[int, int], lang: str) -> str:
    if t[0] == t[1]:
        return str(t[0])
    return tr(lang, "{n} ({batch} for prompt batches)", n=t[0], batch=t[1])


def _txt(x: Any) -> str:
    return "–" if x is None else str(x)


def _g(x: Any) -> str:
    v = float(x)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def view(a: Analysed, lang: str, post: bool = False) -> dict[str, object]:
    """The view model's lines about what was measured on what: the model and hardware (and
    every job whose setup differed), the workload and sampling, each backend's build (with a
    warning where builds differ) and every flag; `post` for a post's page."""
    model_line, hardware_line = _compared_lines(a, lang, post)
    tokenizer_lines, workload_line = _workload_view(a.results, lang)
    builds, common_flags, flags = _setup_view(a, lang)
    build_caveat = next((c for c in a.caveats if c["kind"] == "builds_differ"), None)
    return {
        "model_intro": model_intro(_first_model(a), lang),
        "model_line": model_line,
        # The first job's model and hardware stand above; every job that differed is named.
        "setup_differences": _differences(a.sweep.contaminated, lang, _no_card(a)),
        "hardware_line": hardware_line,
        "workload_line": workload_line,
        "tokenizer_lines": tokenizer_lines,
        "sampling_lines": _sampling_lines(a.results, lang),
        "warmup_lines": warmup_lines(warmup.states(a.results), lang),
        "builds": builds,
        "build_warning": caveats.caveat_sentence(build_caveat, lang) if build_caveat else None,
        "flags": flags,
        "common_flags": common_flags,
    }


def _no_card(a: Analysed) -> list[str]:
    """The jobs whose telemetry named no card in a sweep whose other jobs' did (evidence.gpu_of
    ''): not on the usual card, not on any known one."""
    setups = a.sweep.setups
    if not any(s.get("gpu") for s in setups.values()):
        return []
    return sorted((j for j, s in setups.items() if not s.get("gpu")), key=lambda j: (len(j), j))


def _differences(
    entries: Sequence[Mapping[str, Any]], lang: str, no_card: Sequence[str] = ()
) -> list[str]:
    """How jobs' setups differed, one line each; the cards the jobs ran on in one line
    (cards_line) before the rest."""
    gpus = [e for e in entries if e["attribute"] == "gpu"]
    # Outside the f-string it stood in: the catalog's extractor does not read into one, and
    # the Korean page printed it in English.
    differs = tr(lang, "Differs per job:")
    rest = [
        differs + " " + i18n.contamination_text([e], lang) + "."
        for e in entries
        if e["attribute"] != "gpu"
    ]
    return ([cards_line(gpus, lang, no_card)] if gpus else []) + rest


# The synthetic models' quantisation as benchkit writes them (conf/model/synth-*.yaml): its
# note in the report's language.
_RANDOM_BLOCKS = " (random valid blocks)"


def _quant(quant: str | None, lang: str) -> str | None:
    """A model's quantisation as the report names it, benchkit's own note translated."""
    if not quant:
        return None
    if quant.endswith(_RANDOM_BLOCKS):
        return tr(lang, "{quant} (random valid blocks)", quant=quant[: -len(_RANDOM_BLOCKS)])
    return quant


def cards_line(entries: Sequence[Mapping[str, Any]], lang: str, no_card: Sequence[str] = ()) -> str:
    """The cards every job ran on, in one line: each card named once by a letter ('card A
    = GPU-a482737e'), then the jobs not on the usual card, a job measured in several runs
    said as its runs (an editor read 'job 4 ran GPU an unrecorded card + ... + ...' as a
    job on three cards at once)."""
    letters: dict[str, str] = {}
    names: set[str] = set()
    for e in [*entries[:1], *entries]:
        for part in [str(entries[0]["usual"]), *str(e["value"]).split(" + ")]:
            part = part.strip()
            if part != "?" and part not in letters:
                letters[part] = chr(ord("A") + len(letters))
                names.add(part.rsplit(" ", 1)[0] if " GPU-" in part else part)
    short = {c: (c.rsplit(" ", 1)[1] if " GPU-" in c else c) for c in letters}
    legend = ", ".join(
        tr(lang, "card {letter} = {card}", letter=x, card=short[c]) for c, x in letters.items()
    )
    if len(names) == 1:
        legend = tr(lang, "{legend}, each an {name}", legend=legend, name=next(iter(names)))

    def card(part: str) -> str:
        part = part.strip()
        return tr(lang, "one not recorded") if part == "?" else letters[part]

    parts = []
    for e in entries:
        runs = str(e["value"]).split(" + ")
        jobs = i18n.jobs_text(e["jobs"], lang)
        if len(runs) == 1:
            parts.append(tr(lang, "{jobs} on card {card}", jobs=jobs, card=card(runs[0])))
            continue
        parts.append(
            tr(
                lang,
                "{jobs} measured in {n} runs, each on one card ({cards})",
                jobs=jobs,
                n=len(runs),
                cards=i18n.list_text([card(r) for r in runs], lang),
            )
        )
    if no_card:
        # A job whose card was not recorded is on none of them (review 7: the line put the
        # H100 study's job 10 on the usual card).
        parts.append(
            tr(lang, "{jobs} on a card not recorded", jobs=i18n.jobs_text(list(no_card), lang))
        )
    return tr(
        lang,
        "The jobs ran on {n} cards ({legend}): on card {usual}, except {parts}.",
        n=len(letters),
        legend=legend,
        usual=letters.get(str(entries[0]["usual"]).strip(), "?"),
        parts="; ".join(parts),
    )

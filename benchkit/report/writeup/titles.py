"""The title and question of a study that declares none, from what ran: the model, where it
ran and the factors swept (a fixed default title had named tiny-moe on the CPU for every
model, and asked about parallel slots for an MTP or open-loop sweep)."""

from __future__ import annotations

import re

from benchkit.report.lang import i18n, tr, trn
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kinds.capacity.verdict import load_axis
from benchkit.results.store import JobResult


def composed(a: Analysed, lang: str) -> tuple[str, str]:
    """(title, question) from the results: '{model} on {where}: {factors}'."""
    complete = [r for r in a.results if r.status == "complete"] or list(a.results)
    models = {m.name for r in complete if (m := r.result.provenance.model) and m.name}
    model = " / ".join(sorted(models)) or tr(lang, "a model")
    where = _where(a, lang)
    axis = load_axis(a.sweep)
    if axis is not None:
        return _open_loop(a, lang, model, where, axis)
    factors = [i18n.factor_name(f, lang) for f in a.sweep.varying]
    objective = i18n.objective_words(a.sweep.metric, lang)
    if not factors:
        return (
            tr(lang, "{model} on {where}", model=model, where=where),
            tr(
                lang,
                "How does this setting do on {objective} for this workload?",
                objective=objective,
            ),
        )
    listed = i18n.list_text(factors, lang)
    return (
        tr(lang, "{model} on {where}: {factors}", model=model, where=where, factors=listed),
        tr(
            lang,
            "How do {factors} change {objective} for this workload?",
            factors=listed,
            objective=objective,
        ),
    )


def _open_loop(a: Analysed, lang: str, model: str, where: str, axis: str) -> tuple[str, str]:
    """Open-loop load: the load swept is the measure, not a factor; the question is the most
    load a setting holds (under the study's SLO where it declares one), not seconds per unit."""
    rest = [i18n.factor_name(f, lang) for f in a.sweep.varying if f not in (axis, "load")]
    slo = bool(a.sweep.objective.slo)
    if not rest:
        title = tr(lang, "{model} on {where}: open-loop load", model=model, where=where)
        if slo:
            return title, tr(
                lang, "How much load does this setting hold under the SLO for this workload?"
            )
        return title, tr(lang, "How much load does this setting keep up with for this workload?")
    listed = i18n.list_text(rest, lang)
    title = tr(
        lang,
        "{model} on {where}: {factors} under open-loop load",
        model=model,
        where=where,
        factors=listed,
    )
    if slo:
        return title, tr(
            lang,
            "How do {factors} change the most load held under the SLO for this workload?",
            factors=listed,
        )
    return title, tr(
        lang,
        "How do {factors} change the most load the server keeps up with for this workload?",
        factors=listed,
    )


def _where(a: Analysed, lang: str) -> str:
    backends = {str(r.factors.get("backend") or "") for r in a.results}
    if backends <= {"cpu", ""}:
        return cpu_where(a, lang)
    names = sorted(
        {
            str(
                r.result.provenance.hardware.get("description")
                or r.result.provenance.hardware.get("name")
                or ""
            )
            for r in a.results
        }
        - {"", "local"}
    )
    return " / ".join(names) if names else tr(lang, "this machine's GPU")


def cpu_where(a: Analysed, lang: str) -> str:
    """The CPU a sweep ran on as its title gives it: '1 of 2 CPU threads' where every job
    passed one `--threads` on hosts of one count of logical CPUs (a review read "on the CPU"
    of a study run on one thread of a 2-CPU host, which its figures depend on; the host
    reports logical CPUs, not cores, so a title says no "core")."""
    cpus = {r.result.provenance.hardware.get("cpu_count") for r in a.results}
    threads = {_flag(r, ("--threads", "-t")) for r in a.results}
    if len(cpus) != 1 or not isinstance(n := next(iter(cpus)), int) or n < 1:
        return tr(lang, "the CPU")
    t = next(iter(threads)) if len(threads) == 1 else None
    if t is None or not t.isdigit():
        # The server chose its threads: the host's count alone is known.
        return trn(lang, "a host of {n} CPU thread", "a host of {n} CPU threads", n)
    return trn(lang, "{n} of {cpus} CPU thread", "{n} of {cpus} CPU threads", n, n=int(t), cpus=n)


def _flag(r: JobResult, names: tuple[str, ...]) -> str | None:
    """A flag's value in the server's command line as the job ran it, None where not given."""
    srv = r.result.provenance.server
    argv = list(srv.argv) if srv else []
    return next((argv[i + 1] for i, x in enumerate(argv[:-1]) if x in names), None)


# What a title leaves out of a model's file name: benchkit's prefix for the random-weight
# models it writes (the title says "Random-weight"), and the quantization suffix (the lead
# gives the full name).
_SYNTH = re.compile(r"^synth-", re.IGNORECASE)
_QUANT = re.compile(r"[-_.](?:I?Q\d\w*|BF16|F16|F32)$", re.IGNORECASE)


def short_name(name: str) -> str:
    """A model's name as a title gives it: 'GLM4MoE-30B-A3B-MTP' for
    'synth-GLM4MoE-30B-A3B-MTP-Q4_K' (review 11: a model's full name made long titles)."""
    return _QUANT.sub("", _SYNTH.sub("", name)) or name

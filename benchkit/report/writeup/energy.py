"""The report's energy and telemetry section, from results alone: GPU energy per unit (J/unit)
and busy shares per job, a verdict line per backend pair ("vulkan cost 1.2x the energy per
unit of cuda"), why a job has no GPU telemetry, and a figure of power and GPU busy time over
the run at the recommended point (the job's telemetry.jsonl; "the provisionally recommended
point" while the summary recommends nothing settled: recommend.recommendation, the summary's
own state). Its numbers are `energy_numbers`', which reads what benchkit/telemetry.py put in
result.json and only divides; nothing here changes another verdict.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from benchkit.measure.telemetry import DEFINITIONS, TELEMETRY_FILE, load_samples
from benchkit.report.analysis.energy_numbers import FACTORS, _norm, _num, backend_energy, job_rows
from benchkit.report.lang import N_, marked, tr, trn
from benchkit.report.lang.i18n import backend_name, job_seconds_text, point_text
from benchkit.report.verdicts.figures import drawable
from benchkit.report.writeup.recommend import recommendation
from benchkit.results.store import find_results

FIGURE = "telemetry.png"


def _label(point: Mapping[str, Any], lang: str) -> str:
    """A point as the prose names it ("CUDA, 8 slots, MTP off")."""
    return point_text(point, lang)


def _g(x: float) -> str:
    """A ratio as the report writes it: two decimals below 10."""
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def verdict_lines(pairs: Sequence[Mapping[str, Any]], n_missing: int, lang: str) -> list[str]:
    lines = []
    for p in pairs:
        apart = p.get("apart") or []
        if not p["ratios"]:
            lines.append(_apart_line(p, apart, lang, alone=True))
            continue
        lo, lo_at = p["min"]
        hi, hi_at = p["max"]
        n = len(p["ratios"])
        other, ref = backend_name(p["other"]), backend_name(p["reference"])
        r = _g(p["mean_ratio"])
        if n > 1 and _g(lo) != _g(hi):
            line = tr(
                lang,
                "{other} cost {r}x the energy per unit of {ref} on average over {n} settings, "
                "from {lo}x ({lo_at}) to {hi}x ({hi_at}).",
                other=other, ref=ref, r=r, n=n,
                lo=_g(lo), lo_at=_label(lo_at, lang), hi=_g(hi), hi_at=_label(hi_at, lang),
            )  # fmt: skip
        else:
            line = trn(
                lang,
                "{other} cost {r}x the energy per unit of {ref} ({n} setting).",
                "{other} cost {r}x the energy per unit of {ref} ({n} settings).",
                n,
                other=other,
                ref=ref,
                r=r,
            )
        if p.get("anchored"):
            line += " " + tr(
                lang,
                "At {where} the sweep's jobs ran on two machines: compared on the anchor runs, "
                "which ran both there on one.",
                where="; ".join(_label(at, lang) for at in p["anchored"]),
            )
        if apart:
            line += " " + _apart_line(p, apart, lang, alone=False)
        if n_missing:
            line += trn(
                lang,
                " Provisional: {n} planned point did not complete, so a setting may be missing.",
                " Provisional: {n} planned points did not complete, so a setting may be missing.",
                n_missing,
            )
        lines.append(line)
    return lines


def _apart_line(
    p: Mapping[str, Any], apart: Sequence[Mapping[str, Any]], lang: str, alone: bool
) -> str:
    """The settings whose energy is not compared, and why."""
    where = "; ".join(_label(at, lang) for at in apart)
    if alone:
        return tr(
            lang,
            "The energy per unit of {a} and {b} is not compared: at every setting both ran "
            "({where}), their jobs did not run on one and the same machine over the same units.",
            a=backend_name(p["reference"]),
            b=backend_name(p["other"]),
            where=where,
        )
    return tr(
        lang,
        "Not compared at {where}: the jobs there did not run on one and the same machine over "
        "the same units.",
        where=where,
    )


# Telemetry reasons benchkit itself writes in fixed words (result.json keeps them in English),
# so that a report in another language states them in it; a reason with the machine's own
# words in it (a library's error) is quoted as recorded.
KNOWN_REASONS = {
    "the run this job extends has no telemetry over its units": N_(
        "the run this job extends has no telemetry over its units"
    ),
    "the job was finished from the calls of an interrupted pass": N_(
        "the job was finished from the calls of an interrupted pass"
    ),
    "the job was finished from the calls of an interrupted pass that recorded no telemetry "
    "over it": N_(
        "the job was finished from the calls of an interrupted pass that recorded no "
        "telemetry over it"
    ),
}


def reason_words(reason: str, lang: str) -> str:
    """A recorded telemetry reason in `lang` where benchkit wrote it in fixed words."""
    known = KNOWN_REASONS.get(reason.rstrip("."))
    return marked(lang, known) if known else reason


def _recommended(a: Any) -> tuple[dict[str, object] | None, bool]:
    """The projection verdict's point, if it names one, and whether the report recommends it
    (the same state as the summary's: recommend.recommendation); else it is only the best
    measured point."""
    verdicts = getattr(a, "verdicts", None) or []
    rec = recommendation({v.factor: v for v in verdicts})
    point = rec.point
    return (dict(point) if isinstance(point, Mapping) and point else None), rec.settled


def _row_at(
    rows: Sequence[Mapping[str, Any]], point: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    for r in rows:
        if all(_norm(r.get(k)) == _norm(v) for k, v in point.items() if k in FACTORS):
            return r
    return None


def telemetry_figure(
    job_dir: Path, out_dir: Path, lang: str, point: Mapping[str, Any], recommended: bool = True
) -> str | None:
    """Board power, GPU busy and the server's CPU over time for one job (its first pass),
    titled with the point as the prose names it, in the words the figure can draw."""
    samples = [s for s in load_samples(job_dir / TELEMETRY_FILE) if s.get("pass", 0) == 0]
    pts = [s for s in samples if _num(s.get("t")) is not None]
    if len(pts) < 2 or not any(_num(s.get("power_w")) is not None for s in pts):
        return None
    # The figure's words in a language an installed font draws (English otherwise).
    text, rc = drawable(lang)
    t0 = float(pts[0]["t"])
    xs = [float(s["t"]) - t0 for s in pts]
    with plt.rc_context(rc):
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 5), dpi=110, sharex=True)
        pw = [(x, _num(s.get("power_w"))) for x, s in zip(xs, pts, strict=True)]
        ax1.plot([x for x, p in pw if p is not None], [p for _, p in pw if p is not None], "-")
        ax1.set_ylabel(tr(text, "board power (W)"))
        gpu = [(x, _num(s.get("gpu_util"))) for x, s in zip(xs, pts, strict=True)]
        ax2.plot(
            [x for x, g in gpu if g is not None],
            [g for _, g in gpu if g is not None],
            "-",
            label=tr(text, "GPU busy"),
        )
        cpu: list[tuple[float, float]] = []
        for x, s in zip(xs, pts, strict=True):
            c = _num(s.get("server_cpu_s"))
            if c is not None:
                cpu.append((x, c))
        if len(cpu) > 1:
            rate = [
                (x1, 100 * (c1 - c0) / (x1 - x0))
                for (x0, c0), (x1, c1) in itertools.pairwise(cpu)
                if x1 > x0
            ]
            ax2.plot(
                [x for x, _ in rate],
                [r for _, r in rate],
                "-",
                alpha=0.7,
                label=tr(text, "server CPU (100% = 1 core)"),
            )
        ax2.set_ylabel(tr(text, "busy (%)"))
        ax2.set_xlabel(tr(text, "seconds since the first request"))
        ax2.legend(loc="best", fontsize=8)
        fig.suptitle(figure_title(text, _label(point, text), recommended), fontsize=10)
        fig.tight_layout()
        fig.savefig(out_dir / FIGURE)
        plt.close(fig)
    return FIGURE


def figure_title(lang: str, point: str, recommended: bool = True) -> str:
    """The telemetry figure's title: above the figure and as its alt text in the report."""
    if not recommended:
        return tr(
            lang,
            "Power and GPU busy time at the point the provisional verdicts name ({point})",
            point=point,
        )
    return tr(lang, "Power and GPU busy time at the recommended point ({point})", point=point)


def _point_line(at: Mapping[str, Any], point: str, lang: str, recommended: bool) -> str:
    """The recommended (or best measured) point's figures, one sentence."""

    def whole(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0f}"

    cores = at["server_cpu_share"]
    j = f"{at['j_per_unit']:,.0f}"
    cpu = "n/a" if cores is None else f"{cores:.2f}"
    fields: dict[str, object] = {
        "point": point,
        "j": j,
        "w": whole(at["power_mean_w"]),
        "wmax": whole(at["power_max_w"]),
        "gpu": _pct(at["gpu_busy_share"]),
        "mem": _pct(at["mem_busy_share"]),
        "cpu": cpu,
        "thread": _pct(at["server_busiest_thread_share"]),
    }
    if not recommended:
        return tr(
            lang,
            "At the point the provisional verdicts name ({point}): {j} J per unit, mean power "
            "{w} W (max {wmax} W), GPU busy {gpu}, memory controller busy {mem}, server CPU "
            "{cpu} cores, busiest server thread {thread} of the time.",
            **fields,
        )
    return tr(
        lang,
        "At the recommended point ({point}): {j} J per unit, mean power {w} W (max {wmax} W), "
        "GPU busy {gpu}, memory controller busy {mem}, server CPU {cpu} cores, busiest server "
        "thread {thread} of the time.",
        **fields,
    )


def no_gpu_sentence(rows: Sequence[Mapping[str, object]], lang: str) -> str:
    """The whole section where no job had GPU telemetry (a CPU sweep): why, in one sentence."""
    reasons = sorted({str(r["reason"]) for r in rows if r["reason"]})
    if reasons and all(" runs on the CPU" in x for x in reasons):
        # The results' reason is English as the job wrote it: a known one is said in the
        # report's language (a Korean reader found it quoted in the Korean post).
        return tr(
            lang,
            "No job had GPU telemetry: the jobs ran on the CPU, so there is no GPU power to "
            "read, and CPU energy is not read; each job's server CPU time is in results.csv "
            "(server_cpu_share, server_busiest_thread_share).",
        )
    if len(reasons) == 1:
        return tr(
            lang,
            "No job had GPU telemetry ({reason}); each job's server CPU time is in results.csv "
            "(server_cpu_share, server_busiest_thread_share).",
            reason=reasons[0],
        )
    return tr(
        lang,
        "No job had GPU telemetry; each job's reason and its server CPU time are in "
        "results.csv (telemetry.reason, server_cpu_share).",
    )


def _anchor_rows(a: Any) -> list[dict[str, object]]:
    """The telemetry rows of the anchor jobs the verdicts bridge through (study.anchors):
    where a setting's own jobs ran on two machines, its anchor runs may have run on one."""
    anchors = getattr(getattr(a, "sweep", None), "anchors", None) or []
    source = getattr(a, "source", None)
    if not anchors or not isinstance(source, Path):
        return []
    wanted: dict[str, set[str]] = {}
    for x in anchors:
        folder, _, job = str(x.job).rpartition("/")
        wanted.setdefault(folder, set()).add(job)
    found = []
    for folder, jobs in sorted(wanted.items()):
        root = Path(folder) if Path(folder).is_absolute() else source / folder
        found += [r for r in find_results(root) if r.job_dir.name in jobs]
    return job_rows(found)


def energy_view(a: Any, folder: Path | None, lang: str) -> dict[str, object]:
    """The section's view model; {"show": False} when no job carries telemetry keys (results
    from before benchkit sampled anything), so older reports render as they did. With a
    `folder`, the figure is drawn into it. The section's fixed words are in the template."""
    rows = job_rows(a.results, getattr(getattr(a, "sweep", None), "stalls", None))
    if not any(r["has_telemetry"] for r in rows):
        return {"show": False}
    gpu_keys = ("j_per_unit", "gpu_busy_share", "power_mean_w")
    if not any(r[k] is not None for r in rows for k in gpu_keys):
        return {"show": True, "brief": no_gpu_sentence(rows, lang)}
    missing = len(getattr(getattr(a, "sweep", None), "missing", []) or [])
    lines = verdict_lines(backend_energy(rows, _anchor_rows(a)), missing, lang)
    point, recommended = _recommended(a)
    at = _row_at(rows, point) if point else None
    figure = None
    if at is not None:
        shown = {k: point[k] for k in FACTORS if point and k in point}
        if at["j_per_unit"] is not None:
            lines.append(_point_line(at, _label(shown, lang), lang, recommended))
        if folder is not None:
            figure = telemetry_figure(Path(at["dir"]), folder, lang, shown, recommended)
        elif (Path(at["dir"]) / TELEMETRY_FILE).exists():
            figure = FIGURE
    reasons: dict[str, int] = {}
    for r in rows:
        if r["j_per_unit"] is None and r["reason"]:
            why = reason_words(str(r["reason"]), lang)
            reasons[why] = reasons.get(why, 0) + 1
    cold = {
        j: st.cold_excess_s
        for j, st in (getattr(getattr(a, "sweep", None), "stalls", None) or {}).items()
        if st.cold
        and any(r["j_per_unit"] is not None and Path(str(r["dir"])).name == j for r in rows)
    }
    if cold:
        # Both figures leave cold starts out (rules v7): the energy at the power sampled
        # during each, an estimate the counter cannot split more finely.
        lines.append(
            tr(
                lang,
                "J/unit leaves out the cold starts that the seconds per unit leave out ({jobs}), "
                "at the power sampled during each.",
                jobs=job_seconds_text(cold, lang),
            )
        )
        if kept := _as_measured(rows, cold, lang):
            lines.append(tr(lang, "As measured, with them: {items}.", items=kept))
    lines += [
        trn(
            lang,
            "No GPU telemetry in {n} job: {reason}.",
            "No GPU telemetry in {n} jobs: {reason}.",
            n,
            reason=why,
        )
        for why, n in reasons.items()
    ]
    return {
        "show": True,
        "rows": [{k: v for k, v in r.items() if k != "dir"} for r in rows],
        "lines": lines,
        "pairs": backend_energy(rows, _anchor_rows(a)),
        "figure": figure,
        "figure_title": figure_title(
            lang, _label({k: point[k] for k in FACTORS if point and k in point}, lang), recommended
        ),
        "definitions": {k: marked(lang, v) for k, v in DEFINITIONS.items()},
    }


def _as_measured(rows: list[dict[str, object]], cold: dict[str, float], lang: str) -> str:
    """Each job whose J/unit leaves out a cold start, at its J/unit as measured (its energy
    over its units): the figure beside the one compared (review 8 found the table's J/unit
    with no word of what was measured)."""
    items = []
    for r in rows:
        job = Path(str(r["dir"])).name
        energy, units = r.get("energy_j"), r.get("units")
        if job in cold and isinstance(energy, float) and isinstance(units, float) and units:
            value = format(energy / units, ",.0f")
            items.append(tr(lang, "job {job} {value} J/unit", job=job, value=value))
    return ", ".join(items)

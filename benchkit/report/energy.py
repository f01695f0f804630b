"""The report's energy and telemetry section, from results alone: GPU energy per unit (J/unit)
and busy shares per job, a verdict line per backend pair ("vulkan cost 1.2x the energy per
unit of cuda"), why a job has no GPU telemetry, and a figure of power and GPU busy time over
the run at the recommended point (the job's telemetry.jsonl). It reads what benchkit/telemetry.py
put in result.json and only divides; nothing here changes another verdict.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from benchkit.report.figures import labels
from benchkit.report.lang import ko
from benchkit.report.lang.ko import with_unit
from benchkit.results import JobResult
from benchkit.telemetry import DEFINITIONS, TELEMETRY_FILE, load_samples

FIGURE = "telemetry.png"
FACTORS = ("backend", "slots", "mtp")

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "title": "Energy and GPU telemetry",
        "intro": (
            "Sampled beside each job during its replay passes (benchkit/telemetry.py): GPU "
            "energy from the GPU's own counter, power, GPU and memory-controller busy shares, "
            "and the server process's CPU time from /proc. J/unit divides the passes' GPU energy "
            "by the units completed: the GPU board only, not the host."
        ),
        "col_job": "job",
        "col_s_tp": "s/unit (throughput)",
        "col_j_unit": "J/unit",
        "col_w_mean": "W mean",
        "col_w_max": "W max",
        "col_gpu": "GPU busy",
        "col_mem": "mem busy",
        "col_cpu": "server CPU (cores)",
        "col_thread": "busiest thread",
        "verdict_one": "{other} cost {r}x the energy per unit of {ref} ({n} setting{s}).",
        "verdict_span": (
            "{other} cost {r}x the energy per unit of {ref} on average over {n} settings, from "
            "{lo}x ({lo_at}) to {hi}x ({hi_at})."
        ),
        "provisional": (
            " Provisional: {n} planned point(s) did not complete, so a setting may be missing."
        ),
        "point": (
            "At the recommended point ({point}): {j} J per unit, mean power {w} W (max {wmax} W), "
            "GPU busy {gpu}, memory controller busy {mem}, server CPU {cpu} cores, busiest "
            "server thread {thread} of the time."
        ),
        "absent": "No GPU telemetry in {n} job(s): {reason}.",
        "fig_title": "Power and GPU busy time at the recommended point ({point})",
        "fig_time": "seconds since the first request",
        "fig_power": "board power (W)",
        "fig_busy": "busy (%)",
        "fig_gpu": "GPU busy",
        "fig_cpu": "server CPU (100% = 1 core)",
        "defs": "How these are measured:",
    },
    "ko": {
        "title": "에너지와 GPU 텔레메트리",
        "intro": (
            "각 작업의 재생 구간 동안 옆에서 샘플링한 값입니다(benchkit/telemetry.py): GPU 자체 "
            "에너지 카운터로 잰 GPU 에너지, 전력, GPU와 메모리 컨트롤러의 사용 비율, "
            "/proc에서 읽은 서버 프로세스의 CPU 시간. J/단위는 재생 구간의 GPU 에너지를 "
            "완료된 단위 수로 나눈 값으로, 호스트가 아닌 GPU 보드만의 에너지입니다."
        ),
        "col_job": "작업",
        "col_s_tp": "단위당 초(처리량)",
        "col_j_unit": "J/단위",
        "col_w_mean": "평균 W",
        "col_w_max": "최대 W",
        "col_gpu": "GPU 사용",
        "col_mem": "메모리 사용",
        "col_cpu": "서버 CPU(코어)",
        "col_thread": "가장 바쁜 스레드",
        "verdict_one": "단위당 에너지: {other_subject} {ref}의 {r}배 (설정 {n}개).",
        "verdict_span": (
            "단위당 에너지: {other_subject} {ref}의 평균 {r}배 (설정 {n}개; {lo_at}에서 {lo}배부터 "
            "{hi_at}에서 {hi}배까지)."
        ),
        "provisional": (" 잠정: 계획된 조합 {n}개가 완료되지 않아 빠진 설정이 있을 수 있습니다."),
        "point": (
            "권장 조합({point})에서: 단위당 {j} J, 평균 전력 {w} W(최대 {wmax} W), GPU 사용 {gpu}, "
            "메모리 컨트롤러 사용 {mem}, 서버 CPU {cpu} 코어, 가장 바쁜 서버 스레드는 시간의 "
            "{thread}."
        ),
        "absent": "GPU 텔레메트리가 없는 작업 {n}개: {reason}.",
        "fig_title": "권장 조합({point})의 전력과 GPU 사용 시간",
        "fig_time": "첫 요청 이후 초",
        "fig_power": "보드 전력 (W)",
        "fig_busy": "사용 (%)",
        "fig_gpu": "GPU 사용",
        "fig_cpu": "서버 CPU (100% = 코어 1개)",
        "defs": "재는 방법:",
    },
}


def _text(lang: str) -> dict[str, str]:
    """This section's words in `lang` (Korean naming the study's unit by its own word)."""
    if lang == "ko":
        return {k: with_unit(v) for k, v in TEXT["ko"].items()}
    return TEXT.get(lang, TEXT["en"])


DEFINITIONS_KO = {
    "energy_j": (
        "재생 구간의 GPU 에너지: 각 구간의 시작과 끝에 읽은 GPU 자체 에너지 카운터(NVML "
        "nvmlDeviceGetTotalEnergyConsumption, amdsmi 에너지 누산기)의 차이를 샘플링한 GPU에 "
        "대해 더한 값. 호스트 CPU가 아닌 GPU 보드만."
    ),
    "j_per_unit": "energy_j / 완료된 단위 수: 단위 하나에 드는 GPU 에너지.",
    "power_w": "평균: energy_j / 구간 길이. 최대: 보드 전력 샘플 중 가장 큰 값.",
    "gpu_busy_share": (
        "샘플에 걸친 GPU 사용률(NVML utilization.gpu: 드라이버의 샘플 주기 중 커널이 하나라도 "
        "실행된 시간의 비율; amdsmi gfx_activity)의 평균을 1에 대한 비율로. 사용 중이 포화는 "
        "아닙니다: 작은 커널 하나만 돌아도 사용 중으로 셉니다."
    ),
    "mem_busy_share": (
        "샘플에 걸친 메모리 컨트롤러 사용률(NVML utilization.memory: 장치 메모리를 읽거나 쓴 "
        "시간의 비율)의 평균."
    ),
    "server_cpu_share": (
        "서버 프로세스와 그 자식들의 CPU 시간(user + system, /proc) / 구간 길이, 코어 수로 센 값: "
        "1.0은 코어 하나가 내내 바빴다는 뜻."
    ),
    "server_busiest_thread_share": (
        "서버에서 가장 바쁜 스레드의 CPU 시간 / 구간 길이: 1.0에 가까우면 스레드 하나"
        "(llama-server의 메인 루프)가 일하든 GPU를 기다리며 돌든 내내 CPU 위에 있었다는 뜻."
    ),
}


def _num(x: Any) -> float | None:
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def _norm(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_norm(v)}" for k, v in point.items())


def _g(x: float) -> str:
    """A ratio as the report writes it: two decimals below 10."""
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def job_rows(results: Sequence[JobResult]) -> list[dict[str, object]]:
    """One row per complete job with its telemetry figures (None where not measured)."""
    rows: list[dict[str, object]] = []
    for r in results:
        if r.status != "complete":
            continue
        m = r.metrics
        # The power and telemetry blocks are JSON objects read key by key.
        pw, tm = m.get("power_w"), m.get("telemetry")
        power: Mapping[str, object] = pw if isinstance(pw, dict) else {}
        tel: Mapping[str, object] = tm if isinstance(tm, dict) else {}
        rows.append(
            {
                "job": r.job_dir.name,
                "dir": r.job_dir,
                **{k: r.factors.get(k) for k in FACTORS},
                "s_per_unit_throughput": _num(m.get("s_per_unit_throughput")),
                "j_per_unit": _num(m.get("j_per_unit")),
                "energy_j": _num(m.get("energy_j")),
                "power_mean_w": _num(power.get("mean")),
                "power_max_w": _num(power.get("max")),
                "gpu_busy_share": _num(m.get("gpu_busy_share")),
                "mem_busy_share": _num(m.get("mem_busy_share")),
                "server_cpu_share": _num(m.get("server_cpu_share")),
                "server_busiest_thread_share": _num(m.get("server_busiest_thread_share")),
                "reason": tel.get("reason"),
                "has_telemetry": "telemetry" in m,
            }
        )
    return rows


def backend_energy(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, object]]:
    """Per pair of backends: the other's J/unit over the reference's (the backend with the
    lower mean J/unit) at each setting of the other factors both completed."""
    with_j = [r for r in rows if r["j_per_unit"] is not None and r["backend"] is not None]
    backends = sorted({str(r["backend"]) for r in with_j})
    if len(backends) < 2:
        return []
    rest = [k for k in FACTORS if k != "backend" and len({_norm(r[k]) for r in with_j}) > 1]

    def key(r: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(_norm(r[k]) for k in rest)

    by: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    for r in with_j:
        by.setdefault((str(r["backend"]), key(r)), []).append(float(r["j_per_unit"]))
    mean = {k: sum(v) / len(v) for k, v in by.items()}
    out = []
    for a, b in itertools.combinations(backends, 2):
        shared = sorted({c for (x, c) in mean if x == a} & {c for (x, c) in mean if x == b})
        if not shared:
            continue
        avg_a = sum(mean[(a, c)] for c in shared) / len(shared)
        avg_b = sum(mean[(b, c)] for c in shared) / len(shared)
        ref, other = (a, b) if avg_a <= avg_b else (b, a)
        ratios = [
            (mean[(other, c)] / mean[(ref, c)], dict(zip(rest, c, strict=True))) for c in shared
        ]
        out.append(
            {
                "reference": ref,
                "other": other,
                "ratios": [{"ratio": x, "at": at} for x, at in ratios],
                "mean_ratio": sum(x for x, _ in ratios) / len(ratios),
                "min": min(ratios, key=lambda t: t[0]),
                "max": max(ratios, key=lambda t: t[0]),
            }
        )
    return out


def verdict_lines(pairs: Sequence[Mapping[str, Any]], n_missing: int, lang: str) -> list[str]:
    t = _text(lang)
    lines = []
    for p in pairs:
        lo, lo_at = p["min"]
        hi, hi_at = p["max"]
        n = len(p["ratios"])
        who = ko.particle(str(p["other"]), "가")  # Korean: the particle its reading takes
        if n > 1 and _g(lo) != _g(hi):
            line = t["verdict_span"].format(
                other=p["other"], other_subject=who, ref=p["reference"], r=_g(p["mean_ratio"]), n=n,
                lo=_g(lo), lo_at=_label(lo_at), hi=_g(hi), hi_at=_label(hi_at),
            )  # fmt: skip
        else:
            line = t["verdict_one"].format(
                other=p["other"], other_subject=who, ref=p["reference"], r=_g(p["mean_ratio"]), n=n,
                s="" if n == 1 else "s",
            )  # fmt: skip
        if n_missing:
            line += t["provisional"].format(n=n_missing)
        lines.append(line)
    return lines


def _recommended(a: Any) -> dict[str, object] | None:
    """The projection verdict's point (the report's recommendation), if it names one."""
    verdict = getattr(a, "verdict", None)
    v = verdict("projection") if callable(verdict) else None
    point = getattr(v, "point", None)
    return dict(point) if isinstance(point, Mapping) and point else None


def _row_at(
    rows: Sequence[Mapping[str, Any]], point: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    for r in rows:
        if all(_norm(r.get(k)) == _norm(v) for k, v in point.items() if k in FACTORS):
            return r
    return None


def telemetry_figure(job_dir: Path, out_dir: Path, lang: str, point: str) -> str | None:
    """Board power, GPU busy and the server's CPU over time for one job (its first pass)."""
    samples = [s for s in load_samples(job_dir / TELEMETRY_FILE) if s.get("pass", 0) == 0]
    pts = [s for s in samples if _num(s.get("t")) is not None]
    if len(pts) < 2 or not any(_num(s.get("power_w")) is not None for s in pts):
        return None
    t = _text(lang)
    words, rc = labels(lang)
    if not rc and lang != "en":  # no Korean font: English axis words every reader can draw
        t = TEXT["en"]
    t0 = float(pts[0]["t"])
    xs = [float(s["t"]) - t0 for s in pts]
    with plt.rc_context(rc):
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 5), dpi=110, sharex=True)
        pw = [(x, _num(s.get("power_w"))) for x, s in zip(xs, pts, strict=True)]
        ax1.plot([x for x, p in pw if p is not None], [p for _, p in pw if p is not None], "-")
        ax1.set_ylabel(t["fig_power"])
        gpu = [(x, _num(s.get("gpu_util"))) for x, s in zip(xs, pts, strict=True)]
        ax2.plot(
            [x for x, g in gpu if g is not None],
            [g for _, g in gpu if g is not None],
            "-",
            label=t["fig_gpu"],
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
            ax2.plot([x for x, _ in rate], [r for _, r in rate], "-", alpha=0.7, label=t["fig_cpu"])
        ax2.set_ylabel(t["fig_busy"])
        ax2.set_xlabel(t["fig_time"])
        ax2.legend(loc="best", fontsize=8)
        fig.suptitle(t["fig_title"].format(point=point), fontsize=10)
        fig.tight_layout()
        fig.savefig(out_dir / FIGURE)
        plt.close(fig)
    del words
    return FIGURE


def energy_view(a: Any, folder: Path | None, lang: str) -> dict[str, object]:
    """The section's view model; {"show": False} when no job carries telemetry keys (results
    from before benchkit sampled anything), so older reports render as they did. With a
    `folder`, the figure is drawn into it."""
    rows = job_rows(a.results)
    if not any(r["has_telemetry"] for r in rows):
        return {"show": False}
    t = _text(lang)
    missing = len(getattr(getattr(a, "sweep", None), "missing", []) or [])
    lines = verdict_lines(backend_energy(rows), missing, lang)
    point = _recommended(a)
    at = _row_at(rows, point) if point else None
    figure = None
    if at is not None:
        label = _label({k: point[k] for k in FACTORS if point and k in point})
        if at["j_per_unit"] is not None:
            lines.append(
                t["point"].format(
                    point=label,
                    j=f"{at['j_per_unit']:,.0f}",
                    w=f"{at['power_mean_w']:.0f}" if at["power_mean_w"] is not None else "n/a",
                    wmax=f"{at['power_max_w']:.0f}" if at["power_max_w"] is not None else "n/a",
                    gpu=_pct(at["gpu_busy_share"]),
                    mem=_pct(at["mem_busy_share"]),
                    cpu="n/a"
                    if at["server_cpu_share"] is None
                    else f"{at['server_cpu_share']:.2f}",
                    thread=_pct(at["server_busiest_thread_share"]),
                )
            )
        if folder is not None:
            figure = telemetry_figure(Path(at["dir"]), folder, lang, label)
        elif (Path(at["dir"]) / TELEMETRY_FILE).exists():
            figure = FIGURE
    reasons: dict[str, int] = {}
    for r in rows:
        if r["j_per_unit"] is None and r["reason"]:
            reasons[str(r["reason"])] = reasons.get(str(r["reason"]), 0) + 1
    lines += [t["absent"].format(n=n, reason=why) for why, n in reasons.items()]
    defs = (
        DEFINITIONS
        if lang == "en"
        else {
            k: with_unit(DEFINITIONS_KO[k]) if k in DEFINITIONS_KO else v
            for k, v in DEFINITIONS.items()
        }
    )
    return {
        "show": True,
        "t": t,
        "rows": [{k: v for k, v in r.items() if k != "dir"} for r in rows],
        "lines": lines,
        "pairs": backend_energy(rows),
        "figure": figure,
        "figure_title": t["fig_title"].format(
            point=_label({k: point[k] for k in FACTORS if point and k in point})
        ),
        "definitions": defs,
    }

"""The energy section's numbers, from results alone: each complete job's telemetry figures
(J/unit without its cold starts, power, busy shares, the server's CPU), and per pair of
backends the other's J/unit over the reference's at each setting both ran alike. It reads what
benchkit/telemetry.py put in result.json and only divides; `energy` says it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.report.analysis.evidence import machine_name
from benchkit.report.analysis.stalls import JobStalls
from benchkit.results.store import JobResult

FACTORS = ("backend", "slots", "mtp")


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


def cold_energy_j(js: JobStalls | None) -> float | None:
    """The GPU energy of a job's cold starts beyond its median rate: the time they added to
    the pass (overlapping ones counted once, as the seconds per unit count them) at the power
    sampled during them, weighted by each one's excess (0 without cold starts; None where one
    was not sampled). Six first calls waiting on one compile add its time once, not six times."""
    if js is None or not js.cold:
        return 0.0
    weighted = weight = 0.0
    for st in js.cold:
        power = st.telemetry.get("power_w") if st.telemetry else None
        if power is None:
            return None
        weighted += st.excess_s * float(power)
        weight += st.excess_s
    return js.cold_excess_s * weighted / weight if weight > 0 else 0.0


def job_rows(
    results: Sequence[JobResult], stalls: Mapping[str, JobStalls] | None = None
) -> list[dict[str, object]]:
    """One row per complete job with its telemetry figures (None where not measured). Its
    seconds and J per unit leave out the cold starts (`stalls`), the joules at the power
    sampled during them, so both figures rest on the same work (rules v7; the seconds since
    v10, as the results table gives them)."""
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
                # Both per-unit figures without the cold starts, so a row's seconds and
                # joules rest on the same work (the results table's seconds likewise).
                "s_per_unit_throughput": _s_without_cold(m, (stalls or {}).get(r.job_dir.name)),
                "j_per_unit": _without_cold(m, (stalls or {}).get(r.job_dir.name)),
                "energy_j": _num(m.get("energy_j")),
                "power_mean_w": _num(power.get("mean")),
                "power_max_w": _num(power.get("max")),
                "gpu_busy_share": _num(m.get("gpu_busy_share")),
                "mem_busy_share": _num(m.get("mem_busy_share")),
                "server_cpu_share": _num(m.get("server_cpu_share")),
                "server_busiest_thread_share": _num(m.get("server_busiest_thread_share")),
                "reason": tel.get("reason"),
                "has_telemetry": "telemetry" in m,
                "machine": machine_name(r.result),
                "units": _num(m.get("units_completed")),
            }
        )
    return rows


def _s_without_cold(m: Mapping[str, object], js: JobStalls | None) -> float | None:
    s = _num(m.get("s_per_unit_throughput"))
    return js.cold_free("s_per_unit_throughput", s) if s is not None and js and js.cold else s


def _without_cold(m: Mapping[str, object], js: JobStalls | None) -> float | None:
    j, energy, units = _num(m.get("j_per_unit")), _num(m.get("energy_j")), js.units if js else 0
    cold = cold_energy_j(js)
    if j is None or not cold or energy is None or not units:
        return j if cold is not None else None
    return (energy - cold) / units


def backend_energy(
    rows: Sequence[Mapping[str, Any]], anchors: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, object]]:
    """Per pair of backends: the other's J/unit over the reference's (the backend with the
    lower mean J/unit) at each setting of the other factors both completed. A setting whose
    jobs ran on two machines is compared on `anchors` (the rows of study.anchors' jobs) where
    both backends' anchor runs there ran on one machine over the same units (rules v11)."""
    with_j = [r for r in rows if r["j_per_unit"] is not None and r["backend"] is not None]
    backends = sorted({str(r["backend"]) for r in with_j})
    if len(backends) < 2:
        return []
    rest = [k for k in FACTORS if k != "backend" and len({_norm(r[k]) for r in with_j}) > 1]

    def key(r: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(_norm(r[k]) for k in rest)

    by = _by_setting(with_j, key)
    spare = _by_setting(
        [r for r in anchors if r["j_per_unit"] is not None and r["backend"] is not None], key
    )
    out: list[dict[str, object]] = []
    for a, b in itertools.combinations(backends, 2):
        both = sorted({c for (x, c) in by if x == a} & {c for (x, c) in by if x == b})
        # Two cards differ by more than the margin on one point, and a raced job's J/unit is
        # over the units it reached: a setting is compared only where both backends' jobs
        # ran on one machine and the same number of units (a review found an average over
        # settings two of which paired two cards), or their anchor runs did.
        pairs: dict[tuple[str, ...], tuple[list[Mapping[str, Any]], ...]] = {}
        anchored = []
        for c in both:
            if _alike([*by[(a, c)], *by[(b, c)]]):
                pairs[c] = (by[(a, c)], by[(b, c)])
            elif (a, c) in spare and (b, c) in spare and _alike([*spare[(a, c)], *spare[(b, c)]]):
                pairs[c] = (spare[(a, c)], spare[(b, c)])
                anchored.append(c)
        apart = [dict(zip(rest, c, strict=True)) for c in both if c not in pairs]
        if not pairs:
            if apart:
                out.append({"reference": a, "other": b, "ratios": [], "apart": apart})
            continue
        out.append(_pair(a, b, pairs, rest, apart, anchored))
    return out


def _by_setting(
    rows: Sequence[Mapping[str, Any]], key: Any
) -> dict[tuple[str, tuple[str, ...]], list[Mapping[str, Any]]]:
    by: dict[tuple[str, tuple[str, ...]], list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault((str(r["backend"]), key(r)), []).append(r)
    return by


def _pair(
    a: str,
    b: str,
    pairs: Mapping[tuple[str, ...], tuple[list[Mapping[str, Any]], ...]],
    rest: Sequence[str],
    apart: list[dict[str, str]],
    anchored: Sequence[tuple[str, ...]],
) -> dict[str, object]:
    """The pair's ratios at the settings compared, the lower mean J/unit as the reference."""

    def mean(rs: Sequence[Mapping[str, Any]]) -> float:
        return sum(float(r["j_per_unit"]) for r in rs) / len(rs)

    avg_a = sum(mean(x) for x, _ in pairs.values()) / len(pairs)
    avg_b = sum(mean(y) for _, y in pairs.values()) / len(pairs)
    flip = avg_a > avg_b
    ref, other = (b, a) if flip else (a, b)
    ratios = []
    for c, (x, y) in pairs.items():
        r = mean(x) / mean(y) if flip else mean(y) / mean(x)
        ratios.append((r, dict(zip(rest, c, strict=True))))
    out: dict[str, object] = {
        "reference": ref,
        "other": other,
        "ratios": [{"ratio": x, "at": at} for x, at in ratios],
        "mean_ratio": sum(x for x, _ in ratios) / len(ratios),
        "min": min(ratios, key=lambda t: t[0]),
        "max": max(ratios, key=lambda t: t[0]),
        "apart": apart,
    }
    if anchored:
        out["anchored"] = [dict(zip(rest, c, strict=True)) for c in anchored]
    return out


def _alike(rows: Sequence[Mapping[str, Any]]) -> bool:
    """No two machines and no two unit counts among `rows`, and no job spread over two
    machines. A machine or count not recorded (reference data) is no evidence either way."""
    machines = {str(r.get("machine") or "") for r in rows} - {""}
    units = {r.get("units") for r in rows} - {None}
    spread = any(" + " in m or "?" in m for m in machines)
    return not spread and len(machines) <= 1 and len(units) <= 1

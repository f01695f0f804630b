"""What the data can support: the study's objective, noise, contamination and runaway outputs.

The verdicts in `analyse` ask the same four questions of every comparison they make, and this
module answers three of them, purely:
- **Objective**: which metric decides (lower is better) and which points an SLO rules out.
- **Noise**: whether a difference between two configurations is real is the comparison
  engine's (benchkit.compare: paired per unit, per machine or bridged, decided at the margin
  on a replication interval), which every verdict asks.
- **Contamination**: jobs that differ in build, model file, sampling, workload or hardware
  where the sweep did not vary that on purpose.
- **Runaway outputs**: jobs whose calls ran to the generation cap beyond the study's limit,
  and the objective with the capped calls' time taken out.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from benchkit.errors import UserError
from benchkit.measure.telemetry import is_partial
from benchkit.report.analysis.numbers import Contamination, ObjectiveJson, SloBreak
from benchkit.results.schema import ModelInfo, Result, SamplingInfo, WorkloadInfo

THROUGHPUT = "s_per_unit_throughput"
SLOT_LATENCY = "s_per_unit_slot_latency"
# Named objectives; any other lower-is-better column of the tidy table may be named directly.
OBJECTIVES = {"throughput": THROUGHPUT, "latency": SLOT_LATENCY}
LOWER_IS_BETTER = (
    THROUGHPUT,
    SLOT_LATENCY,
    *(f"{m}_p{q}" for m in ("ttft_ms", "itl_ms", "e2e_ms") for q in (50, 90, 95, 99)),
)
# Drift from the reference (benchkit.report.analysis.quality) a study may limit like an SLO
# (`study.quality.limit`): mean KL divergence, the share of probes whose answer changed.
DRIFT_LIMITS = {"kld": "drift_kld", "changed": "drift_changed"}
# Metrics that are time per unit: the capped calls' share of call time can be taken out.
PER_UNIT = (THROUGHPUT, SLOT_LATENCY)


@dataclass(frozen=True)
class Objective:
    """The metric that decides (lower is better) and the SLO limits a point must meet."""

    name: str
    metric: str
    slo: dict[str, float] = field(default_factory=dict)

    @property
    def per_unit(self) -> bool:
        return self.metric in PER_UNIT

    def meets(self, values: Mapping[str, float | None]) -> list[SloBreak]:
        """The SLO limits a point breaks ({metric, value, limit}); unknown values break too."""
        out: list[SloBreak] = []
        for metric, limit in self.slo.items():
            v = values.get(metric)
            if v is None or v > limit:
                out.append({"metric": metric, "value": v, "limit": limit})
        return out

    def to_json(self) -> ObjectiveJson:
        return {"name": self.name, "metric": self.metric, "slo": dict(self.slo)}


def objective_of(name: str, slo: Mapping[str, Any] | None = None) -> Objective:
    """`study.objective` and `study.slo` as an Objective; a name or SLO metric benchkit does
    not know is one sentence naming it and the choices."""
    metric = OBJECTIVES.get(name, name)
    choices = ", ".join([*OBJECTIVES, *LOWER_IS_BETTER[2:]])
    if metric not in LOWER_IS_BETTER:
        raise UserError(
            f"study.objective={name!r} is not an objective benchkit knows: use {choices}."
        )
    limits: dict[str, float] = {}
    for k, v in (slo or {}).items():
        m = OBJECTIVES.get(str(k), str(k))
        if m not in LOWER_IS_BETTER and m not in DRIFT_LIMITS.values():
            raise UserError(
                f"study.slo names {k!r}, which is not a metric benchkit knows: use {choices}."
            )
        try:
            limits[m] = float(v)
        except (TypeError, ValueError) as exc:
            raise UserError(
                f"study.slo.{k}={v!r} is not a number: give the limit, e.g. 2000."
            ) from exc
    return Objective(name, metric, limits)


# -------------------------------------------------------------------------- contamination

# What each compared attribute is, and the factor that, when swept, explains a difference.
ATTRIBUTES = {
    "build": None,
    "model": "model",
    # The file itself, compared only between jobs that recorded it: a job whose record lacks
    # it (finished from an interrupted run's calls) ran an unknown file, not another one.
    "model_file": "model",
    "sampling": "sampling",
    "workload": "workload",
    "hardware": "hardware",
    # The physical card (its UUID): two boards of one model are two machines, and a sweep
    # resumed on a lent machine runs its later jobs on another (the H100 study's second
    # session). Unknown where no telemetry named it.
    "gpu": "hardware",
    # The machine itself where no card names it: the declared hardware profile on the host
    # that ran the job (a sweep resumed on another host, or on a profile declared as another
    # machine, ran there).
    "machine": "hardware",
    # The card's memory already in use when the job started (llama-server --list-devices,
    # run just before the server): a job that found much more of it in use than the others
    # shared its card with something else (shared_cards), which is another machine.
    "card_memory": "hardware",
    # A CPU server whose threads had much less of the CPU than they asked for while other
    # processes kept the cores busy (host_busy): its times are the host's load as much as
    # the setting's, another machine state (rules v11).
    "host_busy": "hardware",
}


def gpu_of(result: Result) -> str:
    """The cards a job's telemetry named (name and UUID), '' where none did. A job a race
    extended whose telemetry covers its last run alone (an older benchkit) has '?' for its
    earlier run's card, which is not recorded; so has one whose telemetry was not joined at
    all (no samples: the run it extends had no telemetry over its units), whose devices are
    those of the runs after it."""
    tel = result.metrics.extra.get("telemetry")
    devices = tel.get("devices") if isinstance(tel, dict) else None
    if not isinstance(devices, list) or not devices:
        return ""
    cards = " + ".join(
        f"{d.get('name') or 'GPU'} {str(d.get('uuid') or '')[:12]}".strip()
        for d in devices
        if isinstance(d, dict)
    )
    extended = result.provenance.extra.get("extended")
    metrics = {"wall_s": result.metrics.wall_s, "telemetry": tel}
    if extended and (is_partial(metrics) or (isinstance(tel, dict) and not tel.get("samples"))):
        return f"? + {cards}"  # the earlier run's card first, as a joined extension lists it
    return cards


def machine_name(result: Result) -> str:
    """The machine a job ran on, as the comparison engine tells machines apart: its card where
    telemetry named one, else its declared hardware profile on its host ('' where neither is
    recorded: reference data)."""
    card = gpu_of(result)
    if card:
        return card
    hw = result.provenance.hardware
    host, name = str(hw.get("host") or ""), str(hw.get("name") or "")
    # Lent machines share a host name: the boot ID, where recorded, tells them apart.
    boot = str(hw.get("boot_id") or "")[:8]
    return f"{name}@{host}" + (f" (boot {boot})" if boot else "") if host else ""


# A job's model alias, new_alias(f"{sweep folder}-{job number}"): 'benchkit-mtp8-0-a5f4ffc2'.
_ALIAS = re.compile(r"^benchkit-(?P<sweep>.+)-\d+-[0-9a-f]+$")


def profile_sweep(result: Result) -> str:
    """The sweep folder a job ran in (from its model alias) where no card UUID and no boot ID
    names its machine, only the declared profile on a host name that lent machines share
    ('h200@vm'); '' where a card or a boot names it, or the alias is not benchkit's."""
    if gpu_of(result) or result.provenance.hardware.get("boot_id"):
        return ""
    server = result.provenance.server
    m = _ALIAS.match((server.alias if server else None) or "")
    return m.group("sweep") if m else ""


# A device line of `llama-server --list-devices`: "CUDA0: NVIDIA H200 (143155 MiB, 142629 MiB
# free)".
_CARD_LINE = re.compile(r"^\s*(\S+: .*?) \((\d+) MiB, (\d+) MiB free\)", re.M)
# More in use than the least any job found on the same device, by more than this: the card
# was shared. What the driver itself holds is the same from job to job (to the MiB on every
# published study); a server left running holds gigabytes.
SHARED_MIB = 512


def card_in_use(result: Result) -> dict[str, int]:
    """MiB of each device already in use when the job's server was started, by its
    --list-devices line without the free figure ({} where none was recorded)."""
    build = result.provenance.server_build
    text = build.devices if build is not None and build.devices else ""
    return {f"{m[1]} ({m[2]} MiB)": int(m[2]) - int(m[3]) for m in _CARD_LINE.finditer(text)}


def shared_cards(in_use: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """Each job's `card_memory` setup value: how much more memory its device had in use at
    its start than the least any job of the sweep found on the same device, where that is
    more than SHARED_MIB ('19.7 GiB'), else '0.0 GiB' (a shared card is another machine
    state: evidence.ATTRIBUTES); '' where unknown. Relative, so that two backends' devices,
    whose drivers hold different amounts, compare alike."""
    least: dict[str, int] = {}
    for per in in_use.values():
        for k, v in per.items():
            least[k] = min(least.get(k, v), v)
    out: dict[str, str] = {}
    for job, per in in_use.items():
        extra = max((v - least[k] for k, v in per.items()), default=None)
        if extra is None:
            out[job] = ""
            continue
        out[job] = f"{(extra if extra > SHARED_MIB else 0) / 1024:.1f} GiB"
    return out


# A CPU server is held back by other work where its threads had less than this share of the
# time they asked for while other processes kept at least HOST_OTHER cores busy on average:
# the CPU study's starved jobs had 52-71% beside 1.2-1.5 other cores, its quiet ones 95-99%.
STARVED_SHARE = 0.8
HOST_OTHER = 0.5


def host_busy(result: Result) -> bool:
    """Whether a CPU-backend job's server was held back by other work on its host (its
    threads' share of the CPU under STARVED_SHARE, other processes at HOST_OTHER cores or
    more over its passes). A GPU job's server waits on the card, not the CPU: never."""
    if str(result.factors.get("backend") or "") != "cpu":
        return False
    tel = result.metrics.extra.get("telemetry")
    other = tel.get("host_other_cores") if isinstance(tel, dict) else None
    share = result.metrics.server_cpu_share
    argv = result.provenance.server.argv if result.provenance.server else []
    threads = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-t", "--threads")), None)
    if not isinstance(other, int | float) or share is None or threads is None:
        return False
    try:
        asked = float(threads)
    except ValueError:
        return False
    return asked > 0 and share < STARVED_SHARE * asked and float(other) >= HOST_OTHER


def setup_of(result: Result, build_id: str | None) -> dict[str, str]:
    """One job's setup as comparable strings: llama-server build, model file, sampling sent,
    workload fingerprint and hardware. Empty strings where the result does not say."""
    prov = result.provenance
    model = prov.model or ModelInfo()
    samp = prov.sampling or SamplingInfo()
    wl = prov.workload or WorkloadInfo()
    model_bits = [
        model.name or "",
        model.quant or "",
        f"{model.size_gb:g} GB" if model.size_gb is not None else "",
    ]
    file_bits = [
        (model.path or "").rsplit("/", 1)[-1],
        f"{model.file_bytes:,} bytes" if model.file_bytes is not None else "",
        str(model.extra.get("sha256") or "")[:12],
    ]
    sampling = samp.profile or ""
    if samp.sent:
        sampling = f"{sampling} {json.dumps(samp.sent, sort_keys=True)}".strip()
    return {
        # The host where no card is named (with a card, `gpu` already tells machines apart).
        "machine": "" if gpu_of(result) else machine_name(result),
        # The sweep that ran the job, where only a hardware profile on a host name tells its
        # machine (engine_of.machine_of: two sweeps of one such name are two machine states).
        "sweep": profile_sweep(result),
        "build": build_id or "",
        "model": ", ".join(b for b in model_bits if b),
        "model_file": ", ".join(b for b in file_bits if b),
        "gpu": gpu_of(result),
        "sampling": sampling,
        "workload": " ".join(b for b in (wl.fixture or "", wl.fingerprint or "") if b),
        "hardware": str(prov.hardware.get("name") or ""),
    }


def contamination(
    setups: Mapping[str, Mapping[str, str]], varying: Sequence[str], extra: Sequence[str] = ()
) -> list[Contamination]:
    """Groups of jobs whose setup differs from the sweep's usual one in an attribute that no
    swept factor explains: [{attribute, value, usual, jobs}]. The usual value is the one most
    jobs share (the first job's, in run order, on a tie). `extra` names further keys of the
    setups to compare (factors that differ although the sweep did not plan them)."""
    out: list[Contamination] = []
    # Job folders in run order (0, 1, ..., 10): on a tie, the first job's value is the usual.
    jobs = sorted(setups, key=lambda j: (len(j), j))
    attrs = {**ATTRIBUTES, **{k: None for k in extra if k not in ATTRIBUTES}}
    for attr, factor in attrs.items():
        if factor is not None and factor in varying:
            continue
        values = {j: setups[j].get(attr, "") for j in jobs}
        known = [v for v in values.values() if v]
        if len(set(known)) < 2:
            continue
        counts = Counter(known)
        top = max(counts.values())
        usual = next(v for v in known if counts[v] == top)
        odd: dict[str, list[str]] = {}
        for j, v in values.items():
            if v and v != usual:
                odd.setdefault(v, []).append(j)
        for v, js in odd.items():
            out.append({"attribute": attr, "value": v, "usual": usual, "jobs": js})
    return out


def tainted(entries: Sequence[Contamination], jobs: Sequence[str]) -> list[Contamination]:
    """The contamination entries that touch any of `jobs`, restricted to those jobs."""
    want = set(jobs)
    out: list[Contamination] = []
    for e in entries:
        hit = [j for j in e["jobs"] if j in want]
        if hit:
            out.append(
                {"attribute": e["attribute"], "value": e["value"], "usual": e["usual"], "jobs": hit}
            )
    return out


# ------------------------------------------------------------------------------- runaway


def cap_shares(row: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(share of completed calls that hit the cap, share of call time in them)."""
    hit: Any = row.get("calls_hit_cap")
    calls: Any = row.get("calls_completed")
    by_calls = None
    if is_num(hit) and is_num(calls) and float(calls):
        by_calls = float(hit) / float(calls)
    t: Any = row.get("cap_time_share")
    return by_calls, (float(t) if is_num(t) else None)


def over_cap(row: Mapping[str, Any], limit: float) -> bool:
    a, b = cap_shares(row)
    return (a is not None and a > limit) or (b is not None and b > limit)


def uncapped(value: float | None, row: Mapping[str, Any]) -> float | None:
    """A time-per-unit figure with the capped calls' share of call time taken out: what the
    point would cost had its runaway calls stopped at once (an estimate)."""
    _, share = cap_shares(row)
    if value is None or share is None:
        return None
    return value * (1.0 - share)


def is_num(x: Any) -> TypeGuard[float | str]:
    """A finite number (not a bool, not None, not NaN), or the text of one: float() takes it."""
    if x is None or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False

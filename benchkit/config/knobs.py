"""Every value a user sets, checked once when the config is composed, before anything runs.

Hydra checks types; this checks meaning. Each numeric knob has its allowed range here (a
test holds that no int or float field of the config lacks one), so `workload.units=-1` or
`server.ubatch=0` is one sentence naming the knob and the fix instead of a job that measured
something else and said complete. The flags benchkit decides itself (the port it bound, the
alias that proves the server is this job's, where the API key goes) are refused in
extra_args for the same reason, as is a study name that would not be a plain file name.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from types import UnionType
from typing import Union, get_origin, get_type_hints

from benchkit.config.schema import BenchConfig, StudyConfig
from benchkit.errors import UserError


@dataclass(frozen=True)
class Range:
    """Allowed values of one knob: `lo`..`hi` (inclusive unless `open_lo`), and what the
    knob means, for the sentence."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    means: str = ""

    def allows(self, v: float) -> bool:
        if not math.isfinite(v):
            return False
        if self.lo is not None and (v <= self.lo if self.open_lo else v < self.lo):
            return False
        return self.hi is None or v <= self.hi

    def says(self) -> str:
        if self.lo is not None and self.hi is not None:
            if self.open_lo:
                return f"above {_n(self.lo)} and at most {_n(self.hi)}"
            return f"between {_n(self.lo)} and {_n(self.hi)}"
        if self.lo is not None:
            return f"above {_n(self.lo)}" if self.open_lo else f"{_n(self.lo)} or more"
        return f"{_n(self.hi or 0)} or less"


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


COUNT = Range(1)
SHARE = Range(0, 1)
SECONDS = Range(0, open_lo=True)
NONNEG = Range(0)

# Every int and float knob of BenchConfig, by its dotted path (a synthetic model's recipe is
# checked by benchkit.models.synthetic, a packaged model's by benchkit.models.fetch, a draft
# model's fields as the model's).
RANGES: dict[str, Range] = {
    "slots": Range(1, means="parallel slots"),
    "repeats": Range(1, means="passes of the workload"),
    "hardware.memory_gb": Range(0, open_lo=True),
    "hardware.bandwidth_gbs": Range(0, open_lo=True),
    "hardware.power_cap_w": Range(0, open_lo=True),
    "hardware.device": Range(0, means="a device index"),
    "hardware.device_count": Range(1, means="devices on this host"),
    "model.params_total_b": Range(0, open_lo=True),
    "model.params_active_b": Range(0, open_lo=True),
    "model.size_gb": Range(0, open_lo=True),
    "model.n_vocab": COUNT,
    "sampling.temperature": NONNEG,
    "sampling.top_p": SHARE,
    "sampling.top_k": NONNEG,
    "sampling.min_p": SHARE,
    "sampling.presence_penalty": Range(-2, 2),
    "sampling.seed": Range(-1, means="a seed (-1: random)"),
    "workload.cap": Range(1, means="the most tokens a call may generate"),
    "workload.units": Range(1, means="replay the first N units; unset: all of them"),
    "server.ctx": COUNT,
    "server.batch": COUNT,
    "server.ubatch": COUNT,
    "server.threads": COUNT,
    "server.mtp_draft_max": COUNT,
    "server.startup_timeout_s": SECONDS,
    "server.stall_timeout_s": SECONDS,
    "server.job_deadline_s": SECONDS,
    "server.max_error_rate": SHARE,
    "spec.draft_max": COUNT,
    "spec.synth_len": Range(1),
    "study.projection_units": COUNT,
    "study.knee_gain": Range(0, 1, means="the smallest difference a verdict counts"),
    # A run-to-run noise as a share of one run's figure: 0.05 is 5%; 5 would be 500% (a
    # hostile user's study.noise=5 widened every interval to 0.05x-64x without a word).
    "study.noise": Range(0, 1, means="one run's run-to-run noise as a share, 0.05 for 5%"),
    "study.cap_limit": SHARE,
    "telemetry.interval_s": SECONDS,
    # Bounded: an infinite rate schedules every arrival at one instant, which is no process.
    "load.rate": Range(0, 10_000, open_lo=True, means="calls per second offered"),
    "load.speed": Range(0, 1_000, open_lo=True, means="times the recorded arrival rate"),
    "load.seed": NONNEG,
    "load.requests": Range(1, means="arrivals per pass; unset: one per call of the workload"),
    "load.max_in_flight": Range(1, means="calls in flight before the pass ends as overloaded"),
    "load.max_pass_s": Range(0, 86_400, open_lo=True, means="seconds a pass may last"),
    "quality.prompts": COUNT,
    "quality.tokens": COUNT,
    "quality.prompt_tokens": COUNT,
    "quality.top_k": COUNT,
    "quality.seed": NONNEG,
    "quality.task_abs_tol": NONNEG,
    "quality.task_rel_tol": NONNEG,
    "quality.task_tokens": COUNT,
}
# Paths whose fields are checked elsewhere.
NOT_HERE = ("model.synthetic", "model.package", "spec.draft_model")

# Flags of the server's command line that benchkit sets itself, refused in extra_args: what
# each would break, and what to use instead.
OWNED_FLAGS: dict[tuple[str, ...], str] = {
    ("--port",): "the port is benchkit's to choose (it binds a free one per job)",
    ("--host",): "the address is server.host",
    ("-a", "--alias"): "the alias is the job's proof that the server is its own",
    ("--api-key", "--api-key-file"): (
        "the client would not have the key and every call would fail with 401: give it as "
        "backend.api_key=KEY or $BENCHKIT_API_KEY"
    ),
    ("-np", "--parallel"): "the slot count is slots=N",
}

STUDY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

# A limit on a metric (study.slo): a time or a share, never zero or less (nothing would meet it).
SLO_LIMIT = Range(0, open_lo=True, means="the most a recommended point may have")
# The output drift a recommended point may have (study.quality.limit), by the name a study
# gives it: what it measures, and its range (a share of answers cannot pass 1).
DRIFT_LIMIT_RANGES: dict[str, Range] = {
    "kld": Range(0, means="mean KL divergence from the reference, in nats"),
    "changed": Range(0, 1, means="the share of probes whose greedy answer changed"),
}


def numeric_paths(cls: type = BenchConfig, prefix: str = "") -> Iterator[str]:
    """Every int and float field of the config schema, by dotted path."""
    hints = get_type_hints(cls)
    for f in fields(cls):
        path = prefix + f.name
        if path in NOT_HERE:
            continue
        tp = hints[f.name]
        # A scalar or an optional one (`int | None`); lists and dicts of values are not knobs.
        args = {a for a in getattr(tp, "__args__", (tp,)) if a is not type(None)}
        if get_origin(tp) not in (None, UnionType, Union):
            continue
        if args & {int, float} and bool not in args:
            yield path
        for a in args:
            if isinstance(a, type) and is_dataclass(a):
                yield from numeric_paths(a, path + ".")


def check(cfg: BenchConfig) -> None:
    """Raise one UserError naming the first knob out of its range, or a flag benchkit owns."""
    for path, rng in RANGES.items():
        _in_range(path, _get(cfg, path), rng)
    check_drift_limits(cfg.study.quality.limit)
    for where, args in (("server", cfg.server.extra_args), ("backend", cfg.backend.extra_args)):
        for arg in args:
            flag = str(arg).split("=", 1)[0]
            for names, why in OWNED_FLAGS.items():
                if flag in names:
                    raise UserError(
                        f"{where}.extra_args has {flag}, which benchkit sets itself: {why}; "
                        "remove it from the extra_args."
                    )
    if cfg.resume_from is not None and not Path(cfg.resume_from).is_dir():
        raise UserError(
            f"resume_from={cfg.resume_from} is not a folder: give the run or sweep folder whose "
            "complete jobs may be reused."
        )
    if not STUDY_NAME.fullmatch(cfg.study.name):
        raise UserError(
            f"study.name={cfg.study.name!r} is not a plain name (letters, digits, '.', '_' or "
            "'-', not starting with '.'): files are named after it; give study.name=NAME."
        )


def check_study(study: StudyConfig) -> None:
    """The study settings' ranges (a report's `study.*` overrides are checked here as a job's
    config is by `check`): one UserError naming the first setting out of its range."""
    for path, rng in RANGES.items():
        if path.startswith("study."):
            _in_range(path, _get(study, path.removeprefix("study.")), rng)
    check_drift_limits(study.quality.limit)
    for name, values in study.factors.items():
        # The planned space is points of single values: a mapping or list inside is no value.
        one = next((v for v in values if isinstance(v, Mapping | list | tuple)), None)
        if one is not None:
            raise UserError(
                f"study.factors.{name} lists {one!r}, which is not one value: give the factor's "
                f"values as a list of single values, e.g. study.factors.{name}=[1,2]."
            )
    for metric, limit in study.slo.items():
        _in_range(f"study.slo.{metric}", limit, SLO_LIMIT)


def check_drift_limits(limits: Mapping[str, object]) -> None:
    """study.quality.limit: only limits benchkit knows, each a number in its range. A
    misspelt name would otherwise be taken for an SLO metric and named as one."""
    known = ", ".join(f"{k} ({r.means})" for k, r in DRIFT_LIMIT_RANGES.items())
    for name, value in limits.items():
        rng = DRIFT_LIMIT_RANGES.get(str(name))
        if rng is None:
            near = difflib.get_close_matches(str(name), list(DRIFT_LIMIT_RANGES), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise UserError(
                f"study.quality.limit has no limit named {str(name)!r}{hint}: the limits are "
                f"{known}."
            )
        _in_range(f"study.quality.limit.{name}", value, rng)


def _in_range(path: str, value: object, rng: Range) -> None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not rng.allows(float(value)):
        means = f" ({rng.means})" if rng.means else ""
        raise UserError(f"{path}={value} is out of range{means}: give a value {rng.says()}.")


def _get(obj: object, path: str) -> object:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj

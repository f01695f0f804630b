"""Generate a tokens fixture from a recipe, deterministically (same recipe, same bytes).

A recipe (a JSON file, :class:`Recipe`) describes the shape of a multi-agent pipeline:
how many units and calls, which agent roles run in which order, how long the shared
system prompts and per-unit data blocks are, how earlier outputs are carried into later
prompts, and the prompt and completion length distributions. :func:`synth` turns it into
``fixture.json`` + ``calls.jsonl`` (+ the normalised ``recipe.json``), written atomically.

Every call's prompt is ``[sys:<role>] [unit:<u>:data] [unit:<u>:out:<k>]... [unique]``:
the system prompt is shared by every call of that role in every unit, the data block by
every call of the unit, a carried output by every later call that carries it, and the
last segment (key null) is the call's own content. Its length is what the generator
tunes to reach the prompt-length target; the shared parts set each call's floor.

A recipe file is read by a small strict builder (`_build`), not OmegaConf: a recipe is JSON
a person writes by hand and whose bytes decide the fixture's, so `"cap": "64"` must be refused
(OmegaConf coerces it to 64), and its frozen dataclasses with tuple fields would have to be
unfrozen and converted back for OmegaConf's merge.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from benchkit.errors import UserError
from benchkit.results.owned import FolderKind, building
from benchkit.workload.journal import FixtureCall, Segment
from benchkit.workload.model import (
    FIXTURE_CALLS_FILE,
    FIXTURE_FILE,
    FORMAT_VERSION,
    OUTPUT_POLICIES,
    FixtureMeta,
)

RECIPE_FILE = "recipe.json"
# `synth --out`: a fixture folder written before folders carried a manifest holds these.
FIXTURE_FOLDER = FolderKind(
    "fixture", "--out", (FIXTURE_FILE, FIXTURE_CALLS_FILE, RECIPE_FILE), example="fixture"
)


@dataclass(frozen=True)
class Dist:
    """A length distribution: lognormal with this mean and log-sd ``sigma``, clamped."""

    mean: float
    sigma: float = 0.0
    min: int = 1
    max: int | None = None


@dataclass(frozen=True)
class Carry:
    """Growing context: calls at ``from_seq`` and later carry earlier calls' outputs.

    Up to ``max_outputs`` of the unit's most recent earlier outputs ride along as
    segments ``unit:<u>:out:<k>`` (oldest dropped first if the prompt would pass the max).
    """

    from_seq: int = 0
    max_outputs: int = 0


@dataclass(frozen=True)
class Recipe:
    """Everything that shapes a generated fixture. JSON field names match these names."""

    name: str
    description: str
    seed: int
    units: int
    calls_per_unit: tuple[int, ...]
    roles: tuple[str, ...]
    system_len: Dist
    data_len: Dist
    prompt_mean: float
    prompt_max: int
    completion_len: Dist
    cap: int
    capped_share: float
    carry: Carry = Carry()
    unique_sigma: float = 0.8
    unique_min: int = 16
    total_calls: int | None = None
    target_prompt_tokens: int | None = None
    output_policy: str = "replay"
    format: int = FORMAT_VERSION

    def to_json(self) -> dict[str, object]:
        d: dict[str, object] = asdict(self)
        d["calls_per_unit"] = list(self.calls_per_unit)
        d["roles"] = list(self.roles)
        return d


# --------------------------------------------------------------------------- recipe parsing


def load_recipe(path: str | Path) -> Recipe:
    """Read and check a recipe file; any problem is a UserError naming the field."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(
            f"{p}: cannot be read ({e.strerror}); expected a recipe JSON file"
        ) from None
    except (ValueError, RecursionError) as e:
        raise UserError(f"{p}: not valid JSON ({e}); expected a recipe object") from None
    return recipe_from_dict(raw, str(p))


def recipe_from_dict(raw: Any, where: str = "recipe") -> Recipe:
    """Build a Recipe from parsed JSON, checking types and ranges."""
    r = _build(Recipe, raw, where)
    assert isinstance(r, Recipe)
    _check(r, where)
    return r


def _build(cls: type, raw: Any, where: str) -> Any:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    hints = get_type_hints(cls)
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise UserError(
            f"{where}: unknown field {unknown[0]!r}; expected {', '.join(sorted(names))}"
        )
    kwargs: dict[str, object] = {}
    for f in fields(cls):
        if f.name not in raw:
            if f.default is MISSING and f.default_factory is MISSING:
                raise UserError(f"{where}: missing field {f.name!r}")
            continue
        kwargs[f.name] = _coerce(hints[f.name], raw[f.name], f"{where}.{f.name}")
    return cls(**kwargs)


def _coerce(tp: Any, v: Any, where: str) -> Any:
    origin = get_origin(tp)
    args = get_args(tp)
    if tp in (Dist, Carry):
        return _build(tp, v, where)
    if origin is tuple:
        if not isinstance(v, list) or not v:
            raise UserError(f"{where}: expected a non-empty list")
        return tuple(_coerce(args[0], x, f"{where}[{i}]") for i, x in enumerate(v))
    if args and type(None) in args:  # X | None
        if v is None:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _coerce(inner, v, where)
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise UserError(f"{where}: expected an integer, got {v!r}")
        return v
    if tp is float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise UserError(f"{where}: expected a number, got {v!r}")
        return float(v)
    if tp is str:
        if not isinstance(v, str):
            raise UserError(f"{where}: expected a string, got {v!r}")
        return v
    raise TypeError(f"unsupported recipe field type {tp!r}")  # pragma: no cover


def _check(r: Recipe, where: str) -> None:
    def bad(field: str, what: str) -> UserError:
        return UserError(f"{where}: {field} {what}")

    if r.format != FORMAT_VERSION:
        raise bad("format", f"is {r.format}; expected {FORMAT_VERSION}")
    if not r.name:
        raise bad("name", "is empty; expected a fixture name")
    if r.units < 1:
        raise bad("units", "must be >= 1")
    if any(n < 1 for n in r.calls_per_unit):
        raise bad("calls_per_unit", "must list counts >= 1")
    if any(not x for x in r.roles):
        raise bad("roles", "must be non-empty names")
    if r.cap < 2:
        raise bad("cap", "must be >= 2")
    if not 0.0 <= r.capped_share < 1.0:
        raise bad("capped_share", "must be in [0, 1)")
    if r.unique_min < 1:
        raise bad("unique_min", "must be >= 1")
    if r.carry.from_seq < 0 or r.carry.max_outputs < 0:
        raise bad("carry", "values must be >= 0")
    if r.output_policy not in OUTPUT_POLICIES:
        raise bad("output_policy", f"must be one of {', '.join(OUTPUT_POLICIES)}")
    for name in ("system_len", "data_len", "completion_len"):
        d: Dist = getattr(r, name)
        if d.mean <= 0 or d.sigma < 0 or d.min < 1 or (d.max is not None and d.max < d.min):
            raise bad(name, "needs mean > 0, sigma >= 0, min >= 1, max >= min")
    if r.prompt_mean <= 0 or r.prompt_max < 1:
        raise bad("prompt_mean/prompt_max", "must be positive")
    if r.unique_sigma < 0:
        raise bad("unique_sigma", "must be >= 0")
    if r.total_calls is not None and not (
        r.units * min(r.calls_per_unit) <= r.total_calls <= r.units * max(r.calls_per_unit)
    ):
        raise bad("total_calls", "cannot be reached with these units and calls_per_unit")


# --------------------------------------------------------------------------- generation


def _rng(r: Recipe, stream: str) -> random.Random:
    # One independent stream per purpose (string seeds hash with sha512: stable across
    # Python versions), so changing one knob does not reshuffle everything else.
    return random.Random(f"{r.seed}:{stream}")


def _lognormal(rng: random.Random, mean: float, sigma: float) -> float:
    if sigma == 0:
        return mean
    return rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)


def _draw(rng: random.Random, d: Dist) -> int:
    x = round(_lognormal(rng, d.mean, d.sigma))
    return max(d.min, x if d.max is None else min(d.max, x))


def _fit(draws: list[float], lo: list[int], hi: list[int], total: int) -> list[int]:
    """Integers clamp(round(s*draw), lo, hi) with s chosen so that they sum to ``total``.

    The scale is found by bisection; the last few tokens are then spread one at a time
    over the entries that still have room, in index order, so the sum is exact.
    """
    if not sum(lo) <= total <= sum(hi):
        raise ValueError(f"total {total} outside [{sum(lo)}, {sum(hi)}]")

    def at(s: float) -> list[int]:
        return [min(h, max(lw, round(s * d))) for d, lw, h in zip(draws, lo, hi, strict=True)]

    a, b = 0.0, 1.0
    while sum(at(b)) < total:
        b *= 2
    for _ in range(200):
        m = (a + b) / 2
        if sum(at(m)) < total:
            a = m
        else:
            b = m
    out = at(b)
    residual = total - sum(out)
    while residual:
        step = 1 if residual > 0 else -1
        moved = False
        for i in range(len(out)):
            if residual == 0:
                break
            if (step > 0 and out[i] < hi[i]) or (step < 0 and out[i] > lo[i]):
                out[i] += step
                residual -= step
                moved = True
        if not moved:  # pragma: no cover - excluded by the range check above
            raise ValueError("cannot reach total")
    return out


@dataclass
class _Plan:
    unit: str
    seq: int
    role: str
    base: list[tuple[str, int]]
    completion: int = 0
    unique: int = 0


def _fit_lognormal(
    rng: random.Random, sigma: float, lo: list[int], hi: list[int], total: int, refusal: str
) -> list[int]:
    """One length per (lo, hi) pair, drawn lognormal around 1 with log-sd `sigma` and scaled
    by `_fit` to sum to `total`; a UserError saying `refusal` when no such lengths exist."""
    draws = [_lognormal(rng, 1.0, sigma) for _ in lo]
    try:
        return _fit(draws, lo, hi, total)
    except ValueError:
        raise UserError(refusal) from None


def generate(r: Recipe) -> tuple[FixtureMeta, list[FixtureCall]]:
    """The fixture.json object and the calls.jsonl objects for a recipe (no I/O)."""
    plans = _plans(r)
    _set_completions(r, plans)
    _carry_outputs(r, plans)
    _set_uniques(r, plans)
    return _fixture(r), _calls(r, plans)


def _plans(r: Recipe) -> list[_Plan]:
    """Every call, unit by unit in order, with its role and its shared parts so far: its
    role's system prompt and its unit's data block, their lengths drawn."""
    counts = _calls_per_unit(r)
    width = max(3, len(str(r.units - 1)))
    unit_ids = [f"u{u:0{width}d}" for u in range(r.units)]

    system = {role: _draw(_rng(r, f"system:{role}"), r.system_len) for role in r.roles}
    data_rng = _rng(r, "data")
    data = [_draw(data_rng, r.data_len) for _ in range(r.units)]

    plans: list[_Plan] = []
    for u, uid in enumerate(unit_ids):
        for k in range(counts[u]):
            role = r.roles[k % len(r.roles)]
            plans.append(
                _Plan(uid, k, role, [(f"sys:{role}", system[role]), (f"unit:{uid}:data", data[u])])
            )
    return plans


def _set_completions(r: Recipe, plans: list[_Plan]) -> None:
    """Each call's completion length: a fixed number run to the cap; the rest follow the
    distribution, scaled so that the mean over all calls (capped included) is the recipe's
    mean."""
    n = len(plans)
    n_capped = 0 if r.capped_share == 0 else max(1, round(r.capped_share * n))
    capped = set(_rng(r, "capped").sample(range(n), n_capped))
    comp_rng = _rng(r, "completion")
    free = [i for i in range(n) if i not in capped]
    comp_hi = r.cap - 1 if r.completion_len.max is None else min(r.cap - 1, r.completion_len.max)
    want = round(r.completion_len.mean * n) - r.cap * n_capped
    comps = _fit_lognormal(
        comp_rng,
        r.completion_len.sigma,
        [r.completion_len.min] * len(free),
        [comp_hi] * len(free),
        want,
        f"recipe {r.name}: completion_len.mean {r.completion_len.mean} cannot be met with "
        f"{n_capped} capped calls, min {r.completion_len.min} and cap {r.cap}",
    )
    for i, c in zip(free, comps, strict=True):
        plans[i].completion = c
    for i in capped:
        plans[i].completion = r.cap


def _carry_outputs(r: Recipe, plans: list[_Plan]) -> None:
    """Carried outputs (growing context) added to each call's shared parts, trimmed
    oldest-first to fit under the max; a UserError where the shared parts leave no room."""
    pmax = r.prompt_max
    by_unit: dict[str, list[_Plan]] = {}
    for p in plans:
        by_unit.setdefault(p.unit, []).append(p)
    for p in plans:
        if p.seq >= r.carry.from_seq and r.carry.max_outputs > 0:
            earlier = by_unit[p.unit][max(0, p.seq - r.carry.max_outputs) : p.seq]
            carried = [(f"unit:{p.unit}:out:{e.seq}", e.completion) for e in earlier]
            while carried and _len(p.base) + _len(carried) + r.unique_min > pmax:
                carried.pop(0)
            p.base.extend(carried)
        if _len(p.base) + r.unique_min > pmax:
            raise UserError(
                f"recipe {r.name}: system prompt + data block of {p.unit} call {p.seq} "
                f"({_len(p.base)} tokens) leave no room under prompt_max {pmax}"
            )


def _set_uniques(r: Recipe, plans: list[_Plan]) -> None:
    """Each call's unique part: lognormal draws (log-sd unique_sigma) scaled so that the
    prompt total is exact, each at least unique_min and small enough to keep the prompt
    <= prompt_max."""
    n = len(plans)
    total = (
        r.target_prompt_tokens if r.target_prompt_tokens is not None else round(r.prompt_mean * n)
    )
    shared = sum(_len(p.base) for p in plans)
    unique_rng = _rng(r, "unique")
    lo = [r.unique_min] * n
    hi = [r.prompt_max - _len(p.base) for p in plans]
    uniques = _fit_lognormal(
        unique_rng,
        r.unique_sigma,
        lo,
        hi,
        total - shared,
        f"recipe {r.name}: {total} prompt tokens cannot be reached: the shared parts "
        f"need {shared + sum(lo)} at least and prompt_max allows {shared + sum(hi)} at most",
    )
    for p, u in zip(plans, uniques, strict=True):
        p.unique = u


def _fixture(r: Recipe) -> FixtureMeta:
    """The fixture.json object: the recipe's name, cap and policy, and the recipe itself."""
    return {
        "format": FORMAT_VERSION,
        "name": r.name,
        "kind": "tokens",
        "cap": r.cap,
        "output_policy": r.output_policy,
        "description": r.description,
        "recipe": r.to_json(),
    }


def _calls(r: Recipe, plans: list[_Plan]) -> list[FixtureCall]:
    """The calls.jsonl objects: each call's prompt as its shared segments and its unique
    one (key null), its cap and its completion length."""
    return [
        {
            "unit": p.unit,
            "seq": p.seq,
            "role": p.role,
            "prompt": {
                "segments": [
                    *(Segment(key=k, len=v) for k, v in p.base),
                    Segment(key=None, len=p.unique),
                ]
            },
            "max_tokens": r.cap,
            "completion_tokens": p.completion,
        }
        for p in plans
    ]


def _calls_per_unit(r: Recipe) -> list[int]:
    """Calls per unit, drawn from the recipe's choices, then (if asked) nudged one unit at a
    time so that the total is exact."""
    allowed = sorted(set(r.calls_per_unit))
    rng = _rng(r, "calls")
    counts = [rng.choice(allowed) for _ in range(r.units)]
    if r.total_calls is not None:
        order = list(range(r.units))
        rng.shuffle(order)
        while sum(counts) != r.total_calls:
            up = sum(counts) < r.total_calls
            for u in order:
                i = allowed.index(counts[u])
                if up and i + 1 < len(allowed):
                    counts[u] = allowed[i + 1]
                    break
                if not up and i > 0:
                    counts[u] = allowed[i - 1]
                    break
    return counts


def _len(segs: list[tuple[str, int]]) -> int:
    return sum(n for _, n in segs)


def render(r: Recipe) -> dict[str, bytes]:
    """The bytes of each file of the fixture directory a recipe makes."""
    fixture, calls = generate(r)
    return {
        FIXTURE_FILE: (json.dumps(fixture, indent=2, ensure_ascii=False) + "\n").encode(),
        FIXTURE_CALLS_FILE: "".join(
            json.dumps(c, separators=(",", ":"), ensure_ascii=False) + "\n" for c in calls
        ).encode(),
        RECIPE_FILE: (json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n").encode(),
    }


def synth(recipe: Recipe, out: str | Path) -> Path:
    """Generate the fixture of ``recipe`` into directory ``out``, atomically.

    The files are written to a temporary sibling directory which then replaces ``out``;
    an existing ``out`` is replaced only if it holds nothing but a fixture benchkit wrote
    (benchkit.results.owned), so a typo cannot wipe an unrelated folder.
    """
    files = render(recipe)
    dest = Path(out)
    with building(dest, FIXTURE_FOLDER) as tmp:
        for name, blob in files.items():
            with open(tmp / name, "wb") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
    return dest

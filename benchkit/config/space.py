"""The planned space: which config keys a sweep varies, read from its overrides with Hydra's
own parser, the name each key is recorded and reported under, and the values a job records of
them (result.json's `factors`). The job writes what the report plans, by one naming rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from benchkit import log
from benchkit.job.sweep_progress import MULTIRUN_FILE
from benchkit.paths import conf_dir

_log = log.get(__name__)

# A factor's value: a swept scalar or a group's choice.
Factor = str | int | float | bool | None

# The factors every job records, swept or not, in this order: every study compares on them,
# and the result.json of every study published so far holds exactly these (with the load
# axis and the group choices below). Name -> the config key it reads.
STANDING: tuple[tuple[str, str], ...] = (
    ("backend", "backend.name"),
    ("slots", "slots"),
    ("mtp", "mtp"),
    ("model", "model.name"),
    ("hardware", "hardware.name"),
    ("sampling", "sampling.name"),
    ("workload", "workload.fixture"),
    ("batch", "server.batch"),
    ("ubatch", "server.ubatch"),
    ("flash_attn", "server.flash_attn"),
    ("cache_type_k", "server.cache_type_k"),
    ("cache_type_v", "server.cache_type_v"),
    ("kv_unified", "server.kv_unified"),
    ("repeats", "repeats"),
    ("spec", "spec.type"),
)
_NAME_OF_PATH = {path: name for name, path in STANDING}
_STANDING_NAMES = frozenset(_NAME_OF_PATH.values())


def factor_name(key: str) -> str:
    """The name a planned key is recorded and reported under: a standing factor's for the key
    it reads (`spec.type` is `spec`), else the key's last part (`server.threads` is
    `threads`; a group placed at a package, `model@spec.draft_model`, is its package's:
    `draft_model`)."""
    return _NAME_OF_PATH.get(key, key.rsplit("@", 1)[-1].rsplit(".", 1)[-1])


def parse_sweep_overrides(overrides: Iterable[str]) -> dict[str, list[Any]]:
    """Hydra sweep overrides (`slots=1,2,4`, `backend=vulkan,hip`, `+x=range(1,4)`,
    `mtp=choice(true,false)`, `sort(...)`, `tag(...)`, quoted commas) as key -> values,
    through Hydra's own override parser, so the planned space is exactly what Hydra swept.
    Single values, continuous `interval()` sweeps, hydra.* and study.* keys are not part of
    the planned space; `glob()` over a config group is expanded against conf/."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Glob, QuotedString
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    out: dict[str, list[Any]] = {}
    for raw in overrides:
        try:
            (o,) = parser.parse_overrides([raw])
        except HydraException:
            continue  # not an override Hydra would have run: nothing was swept over it
        # A group placed at a package (`model@spec.draft_model`, the draft model) is its own
        # key, not the group's (`model`, the target).
        key = f"{o.key_or_group}@{o.package}" if o.package else o.key_or_group
        if key.startswith(("hydra.", "study.")) or not o.is_discrete_sweep():
            continue
        value = o.value()
        if isinstance(value, Glob):
            values: list[Any] = _glob_group(o.key_or_group, value)
        else:
            values = list(o.sweep_iterator())
        values = [v.text if isinstance(v, QuotedString) else v for v in values]
        if len(values) > 1:
            out[key] = values
    return out


def _glob_group(group: str, glob: Any) -> list[str]:
    """The choices of config group `group` that a Hydra glob() selects."""
    names = sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))
    return list(glob.filter(names))


def swept(multirun: Mapping[str, Any]) -> dict[str, list[Any]]:
    """What a sweep was launched over, from its multirun.yaml (as loaded): the command line's
    overrides and hydra.sweeper.params, where a sweep may list them instead."""
    hydra = multirun.get("hydra") or {}
    task = (hydra.get("overrides") or {}).get("task") or []
    params = (hydra.get("sweeper") or {}).get("params") or {}
    return parse_sweep_overrides([*(f"{k}={v}" for k, v in params.items()), *map(str, task)])


def sweep_keys(sweep_dir: Path) -> tuple[str, ...]:
    """The keys the sweep in `sweep_dir` varies, from the multirun.yaml Hydra wrote there
    before its first job; none where it cannot be read (its jobs then record the standing
    factors and the study's, and the warning says which file)."""
    path = sweep_dir / MULTIRUN_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return tuple(swept(data)) if isinstance(data, Mapping) else ()
    except (OSError, ValueError, yaml.YAMLError, AttributeError) as exc:
        _log.warning(f"{path} could not be read ({exc}): only the standing factors are recorded")
        return ()


def _value_at(node: object, key: str) -> tuple[bool, Factor]:
    """The scalar at config key `key` (enums as their values); (False, None) where the key
    names no scalar (a group, a list, nothing)."""
    for part in key.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif dataclasses.is_dataclass(node) and not isinstance(node, type) and hasattr(node, part):
            node = getattr(node, part)
        else:
            return False, None
    if isinstance(node, Enum):
        node = node.value
    if node is None or isinstance(node, str | int | float | bool):
        return True, node
    return False, None


def standing(config: object) -> dict[str, Factor]:
    """The standing factors' values in `config` (a BenchConfig), in STANDING's order."""
    out: dict[str, Factor] = {}
    for name, key in STANDING:
        found, value = _value_at(config, key)
        assert found, key  # every standing key is a scalar of BenchConfig
        out[name] = value
    return out


def planned_values(
    config: object, planned: Iterable[str], choices: Mapping[str, str]
) -> dict[str, Factor]:
    """Each planned key's value in `config`, named by `factor_name`, but for the standing
    factors (recorded already) and config groups (their choice is recorded instead): a key a
    study sweeps (server.threads) is recorded without being listed anywhere."""
    out: dict[str, Factor] = {}
    for key in planned:
        name = factor_name(key)
        if name in _STANDING_NAMES or key in choices or name in out:
            continue
        found, value = _value_at(config, key)
        if found:
            out[name] = value
    return out

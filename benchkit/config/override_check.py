"""The two override mistakes Hydra answers with a page of text, caught before it runs: an
option a config group does not have (`backend=cudaa`: Hydra lists its internal `base_*`
schemas among the choices) and a top-level key benchkit does not have (`slot=16`: Hydra
suggests `+slot=16`, which would add a key nothing reads), and a load key the chosen load
process ignores (`load=closed load.rate=2` ran as closed, the rate unused). Each is one
sentence naming the thing and the fix; anything this cannot judge (a user's --config-dir,
sweep functions, interpolations, `+`/`~` overrides, Hydra's own keys) is left to Hydra.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from benchkit.config.schema import GROUPS, LOAD_KEYS_READ, BenchConfig, LoadProcess
from benchkit.config.study_overrides import unreadable
from benchkit.paths import conf_dir

# Arguments after which benchkit's own groups are not the only ones (a user's config dir).
_OWN_GROUPS_ONLY_UNLESS = ("--config-dir", "-cd", "--config-path", "-cp", "hydra.searchpath")
# A value Hydra expands itself: a sweep function, a list, an interpolation, quoting.
_EXPANDED = re.compile(r"[()\[\]{}$'\"*]")
# A value that is more than one: a list or a sweep function (range, choice, glob, interval).
_SWEPT = re.compile(r"^\w+\(|,")
# Hydra's flags of which one command takes one (two: a ValueError's traceback).
_MODES = {
    **dict.fromkeys(("-m", "--multirun"), "-m"),
    **dict.fromkeys(("-c", "--cfg"), "--cfg"),
    **dict.fromkeys(("-i", "--info"), "--info"),
    **dict.fromkeys(("-r", "--run"), "--run"),
}
# Arguments that make benchkit's conf/config.yaml not the config composed.
_OWN_CONFIG_UNLESS = ("--config-name", "-cn")


def problem(argv: Sequence[str], conf: Path | None = None) -> str | None:
    """The first mistaken override of `argv` (a command line after the program), in one
    sentence, or None."""
    root = conf or conf_dir()
    groups = {p.name: p for p in root.iterdir() if p.is_dir() and p.name != "hydra"}
    user_groups = any(a.startswith(_OWN_GROUPS_ONLY_UNLESS) for a in argv)
    fields = [f.name for f in dataclasses.fields(BenchConfig)]
    unread = _unparsable(argv) or _misshapen(argv, groups)
    if unread is not None:
        return unread
    for arg in argv:
        if arg.startswith(("-", "+", "~")) or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        bad = _bad_value(key, value)
        if bad is not None:
            return bad
        if "." in key or "/" in key or key.startswith("hydra") or "@" in key:
            continue
        if key in groups:
            if user_groups or _EXPANDED.search(value):
                continue
            for option in value.split(","):
                if option and not (groups[key] / f"{option}.yaml").is_file():
                    return _no_option(key, option, groups[key])
        elif key not in fields:
            return _no_key(key, sorted({*fields, *groups}))
    if user_groups or any(a.startswith(_OWN_CONFIG_UNLESS) for a in argv):
        return None
    return _ignored_load_key(argv, root)


def adding(argv: Sequence[str]) -> list[str]:
    """`argv` with `++` before an override of a mapping field (`study.slo={ttft_ms_p95: 2000}`,
    `study.quality.limit.changed=0.25`): the config holds such a mapping empty, and Hydra
    refuses a key it lacks without a prefix ("Key 'ttft_ms_p95' is not in struct", a page of
    text for the README's own example). `++` adds the key or replaces its value, as the
    report's study overrides do."""
    maps = mapping_fields()
    out: list[str] = []
    for arg in argv:
        key = arg.split("=", 1)[0]
        plain = "=" in arg and not arg.startswith(("-", "+", "~"))
        below = any(key == m or key.startswith(f"{m}.") for m in maps)
        out.append(f"++{arg}" if plain and below else arg)
    return out


def mapping_fields(cls: type = BenchConfig, prefix: str = "") -> list[str]:
    """The dotted paths of the config's mapping fields (`dict[str, ...]`)."""
    out: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if typing.get_origin(tp) is dict:
            out.append(prefix + f.name)
        for arg in (tp, *typing.get_args(tp)):
            if isinstance(arg, type) and dataclasses.is_dataclass(arg):
                out += mapping_fields(arg, f"{prefix}{f.name}.")
    return out


def _unparsable(argv: Sequence[str]) -> str | None:
    """The first override Hydra's grammar cannot read (`slots=[1,2`, `backend=vulkan,`), in one
    sentence: Hydra answers it with its parser's message, a link and a hint about stack
    traces."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        try:
            parser.parse_overrides([arg])
        except HydraException as exc:
            return unreadable(arg, arg.split("=", 1)[1], exc)
    return None


def _misshapen(argv: Sequence[str], groups: Mapping[str, Path]) -> str | None:
    """The first override Hydra would take in another shape than meant, in one sentence: a key
    given twice (`slots=1 slots=2` ran slots=2 alone), a list for a setting of one value
    (`-m 'slots=[1,2]'`, Hydra's own advice for `slots=1,2` without -m) and a sweep without
    -m (Hydra answers that with that advice)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    modes = list(dict.fromkeys(_MODES[a] for a in argv if a in _MODES))
    if len(modes) > 1:
        return f"{' and '.join(modes)} cannot be given together: give one of them."
    parser = OverridesParser.create()
    sweep = any(a in ("-m", "--multirun") or a.lower() == "hydra.mode=multirun" for a in argv)
    seen: dict[str, str] = {}
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        o = parser.parse_overrides([arg])[0]
        key = o.get_key_element().lstrip("+~")
        if key in seen:
            return (
                f"{key} is given twice ({seen[key]} and {arg}), and only the last would count: "
                f"give it once (several values, swept: -m {key}=A,B)."
            )
        seen[key] = arg
        one = key in groups or _one_value(key)
        value = None if o.is_sweep_override() else o.value()
        if one and isinstance(value, list):
            values = ",".join(str(v) for v in value)
            return (
                f"{arg} gives {key} a list, but it takes one value: to sweep those values, "
                f"write -m {key}={values}."
            )
        if o.is_sweep_override() and not sweep and not key.startswith("hydra."):
            return f"{arg} sweeps {key}: add -m to run one job per value, or give one value."
    return None


def _one_value(key: str) -> bool:
    """Whether the config key `a.b` holds one value (a number, a switch, text or a closed set)
    in benchkit's schema, not a list or a mapping; False for a key it does not have."""
    kind: object = BenchConfig
    for part in key.split("."):
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
            return False
        hints = typing.get_type_hints(kind)
        if part not in hints:
            return False
        kind = hints[part]
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if typing.get_origin(kind) in (typing.Union, types.UnionType) and len(args) == 1:
            kind = args[0]
    if kind in (int, float, bool, str):
        return True
    return isinstance(kind, type) and issubclass(kind, enum.Enum)


def _bad_value(key: str, value: str) -> str | None:
    """A value its typed field cannot take (`slots=16x`, `mtp=maybe`,
    `server.flash_attn=yes`), for the top-level numbers and switches and a group's closed
    sets; None where it can, or where Hydra expands the value."""
    if _EXPANDED.search(value):
        return None
    kind = _field_type(key)
    if kind is None:
        return None
    for option in value.split(","):
        # A whole number out of range (slots=0) is the job's to refuse, with its reason written
        # in its result.json (benchkit.config.knobs), as any setting's range is.
        if option == "null" and _optional(key):
            continue
        if kind is int and not option.lstrip("-").isdigit():
            return f"{key}={option} is not a whole number: give one, e.g. {key}=2."
        if kind is float and not _is_float(option):
            return f"{key}={option} is not a number: give one, e.g. {key}=0.5."
        # OmegaConf's own spellings of a switch.
        if kind is bool and option.lower() not in (
            "true",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "1",
            "0",
            "y",
            "n",
        ):
            return f"{key}={option} is not true or false: give {key}=true or {key}=false."
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            allowed = [str(m.value) for m in kind]
            if option not in allowed:
                return f"{key}={option} is not one of {', '.join(allowed)}: choose one of them."
    return None


def _field_type(key: str) -> type | None:
    """The declared type of `slots`, `repeats`, `mtp` or `group.key` where it is a whole
    number, a switch or a closed set (an Enum); None otherwise."""
    parts = key.split(".")
    if len(parts) == 1 and parts[0] in ("slots", "repeats"):
        return int
    if len(parts) == 1 and parts[0] in ("mtp", "resume"):
        return bool
    if len(parts) == 2 and parts[0] in GROUPS:
        hints = typing.get_type_hints(GROUPS[parts[0]])
        kind = hints.get(parts[1])
        # A number, optional or not (`workload.units=abc`, `server.job_deadline_s=soon`).
        args = {a for a in typing.get_args(kind) if a is not type(None)}
        if len(args) == 1 and kind is not None and type(None) in typing.get_args(kind):
            kind = args.pop()
        if kind in (int, float):
            return typing.cast(type, kind)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            return kind
    return None


def _optional(key: str) -> bool:
    """Whether `group.key` may be null."""
    parts = key.split(".")
    if len(parts) != 2 or parts[0] not in GROUPS:
        return False
    kind = typing.get_type_hints(GROUPS[parts[0]]).get(parts[1])
    return type(None) in typing.get_args(kind)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _no_option(group: str, option: str, folder: Path) -> str:
    options = sorted(p.stem for p in folder.glob("*.yaml") if not p.stem.startswith("base_"))
    near = difflib.get_close_matches(option, options, n=1)
    hint = f" (did you mean {group}={near[0]}?)" if near else ""
    return (
        f"there is no {group} named {option!r}{hint}: choose one of {', '.join(options)}, or "
        f"add conf/{group}/{option}.yaml (with --config-dir for your own)."
    )


def _no_key(key: str, known: Sequence[str]) -> str:
    near = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {near[0]}=...? " if near else ""
    return (
        f"there is no setting named {key!r}: {hint}the top-level settings are "
        f"{', '.join(known)} (a group's own keys are set as group.key=value)."
    )


def _ignored_load_key(argv: Sequence[str], root: Path) -> str | None:
    """An override of a load key that the chosen load process ignores (`load=closed
    load.rate=2`, `load=poisson load.speed=2`), or a swept one that some process of a mixed
    sweep ignores (its jobs would repeat), in one sentence; None otherwise."""
    overrides: dict[str, str] = {}
    for arg in argv:
        if arg.startswith(("-", "~")) or "=" not in arg:
            continue
        key, value = arg.lstrip("+").split("=", 1)
        overrides[key] = value
    chosen = _load_processes(overrides, root)
    if chosen is None:
        return None
    label, processes = chosen
    for key, value in overrides.items():
        group, _, name = key.partition(".")
        if group != "load" or name == "process" or value == "null":
            continue
        readers = [f"load={p.value}" for p in LoadProcess if name in LOAD_KEYS_READ[p]]
        if not readers:
            continue  # not a load key: Hydra names it
        ignoring = [p for p in processes if name not in LOAD_KEYS_READ[p]]
        if ignoring and len(ignoring) == len(processes):
            those = readers[0] if len(readers) == 1 else "one of those"
            return (
                f"{key}={value} is ignored by {label}: only {_joined(readers)} "
                f"read{'s' if len(readers) == 1 else ''} {key}, so drop it or choose {those}."
            )
        if ignoring and _SWEPT.search(value):
            names = ",".join(p.value for p in ignoring)
            return (
                f"{key}={value} is swept, but load={names} ignores it and would measure the "
                f"same jobs once per value: run load={names} as a sweep of its own, without "
                f"{key}."
            )
    return None


def _load_processes(overrides: dict[str, str], root: Path) -> tuple[str, list[LoadProcess]] | None:
    """The load processes the command line chooses, and how to name the choice
    (`load=closed (the default)`); None where Hydra would decide it (an expanded value, an
    option benchkit does not have)."""
    process = overrides.get("load.process")
    if process is not None:
        given = process.split(",")
        if _EXPANDED.search(process) or any(v not in LoadProcess.__members__ for v in given):
            return None
        return f"load.process={process}", [LoadProcess(v) for v in given]
    value = overrides.get("load")
    label = f"load={value}"
    if value is None:
        value = _default_option(root, "load")
        label = f"load={value} (the default)"
    if not value or _EXPANDED.search(value):
        return None
    processes = [_process_of(root / "load" / f"{option}.yaml") for option in value.split(",")]
    if any(p is None for p in processes):
        return None
    return label, [p for p in processes if p is not None]


def _default_option(root: Path, group: str) -> str | None:
    """The option conf/config.yaml's defaults list chooses for `group`."""
    try:
        config = yaml.safe_load((root / "config.yaml").read_text())
    except (OSError, yaml.YAMLError):
        return None
    for entry in (config or {}).get("defaults", []):
        if isinstance(entry, dict) and isinstance(entry.get(group), str):
            return str(entry[group])
    return None


def _process_of(option: Path) -> LoadProcess | None:
    """The process a conf/load option sets (its `process:`), or None where it cannot be read."""
    try:
        data = yaml.safe_load(option.read_text())
    except (OSError, yaml.YAMLError):
        return None
    value = data.get("process") if isinstance(data, dict) else None
    return (
        LoadProcess(value) if isinstance(value, str) and value in LoadProcess.__members__ else None
    )


def _joined(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"

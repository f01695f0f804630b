"""The two override mistakes Hydra answers with a page of text, caught before it runs: an
option a config group does not have (`backend=cudaa`: Hydra lists its internal `base_*`
schemas among the choices) and a top-level key benchkit does not have (`slot=16`: Hydra
suggests `+slot=16`, which would add a key nothing reads). Each is one sentence naming the
thing and the fix; anything this cannot judge (a user's --config-dir, sweep functions,
interpolations, `+`/`~` overrides, Hydra's own keys) is left to Hydra.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
import typing
from collections.abc import Sequence
from pathlib import Path

from benchkit.config import GROUPS, BenchConfig
from benchkit.paths import conf_dir

# Arguments after which benchkit's own groups are not the only ones (a user's config dir).
_OWN_GROUPS_ONLY_UNLESS = ("--config-dir", "-cd", "--config-path", "-cp", "hydra.searchpath")
# A value Hydra expands itself: a sweep function, a list, an interpolation, quoting.
_EXPANDED = re.compile(r"[()\[\]{}$'\"*]")


def problem(argv: Sequence[str], conf: Path | None = None) -> str | None:
    """The first mistaken override of `argv` (a command line after the program), in one
    sentence, or None."""
    root = conf or conf_dir()
    groups = {p.name: p for p in root.iterdir() if p.is_dir() and p.name != "hydra"}
    user_groups = any(a.startswith(_OWN_GROUPS_ONLY_UNLESS) for a in argv)
    fields = [f.name for f in dataclasses.fields(BenchConfig)]
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
    return None


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
        # in its result.json (benchkit.knobs), as any setting's range is.
        if kind is int and not option.lstrip("-").isdigit():
            return f"{key}={option} is not a whole number: give one, e.g. {key}=2."
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
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            return kind
    return None


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

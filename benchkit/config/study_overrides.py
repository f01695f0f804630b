"""The report's `study.KEY=VALUE` overrides, read as Hydra's command line reads them: a list or
a mapping (`[a,b]`, `{changed:0.25}` or `{changed: 0.25}`) by Hydra's override grammar, any
other value as YAML, as OmegaConf's dotlist reads it. A value neither can read is one sentence
naming the override and the fix, never a parser's traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from benchkit.errors import UserError

# Pairs a value opens and must close.
_PAIRS = {"[": "]", "{": "}"}


def study_overrides(overrides: Sequence[str]) -> list[DictConfig]:
    """Each override as a config of the study's keys (without `study.`), in order."""
    return [_one(o) for o in overrides]


def _one(override: str) -> DictConfig:
    if "=" not in override or not override.startswith("study."):
        raise UserError(
            f"{override!r} is not a study override: a report takes study.KEY=VALUE overrides "
            "only (e.g. study.lang=ko)."
        )
    key, value = override.removeprefix("study.").split("=", 1)
    if not key or any(not part for part in key.split(".")):
        raise UserError(
            f"{override!r} names no study setting: write study.KEY=VALUE (e.g. study.lang=ko)."
        )
    if value.lstrip().startswith(tuple(_PAIRS)):
        return _nested(key, _structured(override, value))
    try:
        return OmegaConf.from_dotlist([f"{key}={value}"])
    except (yaml.YAMLError, OmegaConfBaseException) as exc:
        raise UserError(
            f"{override!r} is not a value the report can read ({_first_line(exc)}): quote it "
            "for the shell and, where it holds a colon or a quote, in the value too "
            "(study.title='\"A: B\"')."
        ) from exc


def _structured(override: str, value: str) -> object:
    """A list or mapping as Hydra's override grammar reads it."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides([f"x={value}"])[0]
    except HydraException as exc:
        raise UserError(unreadable(override, value, exc)) from exc
    if parsed.is_sweep_override():
        raise UserError(
            f"{override!r} is a sweep of several values: a report is rendered with one value of "
            "each setting, so give one."
        )
    return parsed.value()


def unreadable(override: str, value: str, exc: Exception) -> str:
    """Why Hydra's override grammar could not read `override`, in one sentence with the fix."""
    for opening, closing in _PAIRS.items():
        if value.count(opening) > value.count(closing):
            return (
                f"{override!r} opens a {opening} it does not close: close it "
                f"(a list: [A,B], a mapping: {{NAME: VALUE}})."
            )
    return (
        f"{override!r} is not a value Hydra's override grammar reads ({_first_line(exc)}): "
        "write a list as [A,B], a mapping as {NAME: VALUE}, a sweep as A,B, and quote text "
        "holding spaces, quotes or parentheses."
    )


def _first_line(exc: Exception) -> str:
    # The grammar's list of the tokens it expected says nothing a user can act on.
    line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return line.split(" expecting ", 1)[0].rstrip(".")


def _nested(key: str, value: object) -> DictConfig:
    """`a.b` and a value as the config {a: {b: value}}."""
    tree: dict[str, object] = {}
    for part in reversed(key.split(".")):
        tree = {part: tree or value}
    cfg = OmegaConf.create(tree)
    if not isinstance(cfg, DictConfig):  # a dict makes a DictConfig: for the type checker
        raise TypeError(key)
    return cfg

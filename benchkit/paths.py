"""Where benchkit finds its own data (configs, templates, workloads) and keeps its cache.

The repository keeps `conf/`, `templates/` and `fixtures/` at its top level. A wheel carries
copies of them inside the package, as `benchkit/_data/` (setup.py maps them at build time),
so an installed benchkit runs from any folder; a checkout (or an editable install of one)
reads them where they are.

The cache root and the llama-quantize binary are config keys (`cache_dir`, `llama_quantize`)
with an environment fallback. A job hands its keys over once with `use_config`; code outside
a job (`python -m benchkit.provide`, tests) has no config and reads the environment alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# What setup.py's build step copies into the wheel; a checkout never has it.
BUNDLED_DATA = PACKAGE_DIR / "_data"
DATA_DIRS = ("conf", "templates", "fixtures")

CACHE_ENV = "BENCHKIT_CACHE"
QUANTIZE_ENV = "BENCHKIT_LLAMA_QUANTIZE"


@dataclass(frozen=True)
class _Configured:
    """The running job's config keys; unset (None) falls back to the environment."""

    cache_dir: str | None = None
    llama_quantize: str | None = None


# A module-level value rather than a parameter: the cache is read deep below the job (the
# server build, the synthetic model, the Vulkan tools), by code that also runs without a job.
_configured = _Configured()


def use_config(*, cache_dir: str | None, llama_quantize: str | None) -> None:
    """Take the job's `cache_dir` and `llama_quantize` keys; each job calls it, so a key unset
    in this job (None) goes back to the environment even after an earlier job in the same
    process set it."""
    global _configured
    _configured = _Configured(cache_dir or None, llama_quantize or None)


def cache_dir() -> Path:
    """The cache root: the `cache_dir` key, else $BENCHKIT_CACHE, else
    $XDG_CACHE_HOME/benchkit, else ~/.cache/benchkit."""
    given = _configured.cache_dir or os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "benchkit"


def llama_quantize_setting() -> tuple[str, str] | None:
    """Where llama-quantize was pointed, as (how it was named, path): the `llama_quantize` key,
    else $BENCHKIT_LLAMA_QUANTIZE; None leaves the search to the caller."""
    if _configured.llama_quantize:
        return "llama_quantize", _configured.llama_quantize
    env = os.environ.get(QUANTIZE_ENV)
    return (QUANTIZE_ENV, env) if env else None


def installed_from_wheel() -> bool:
    """True when this benchkit is an installed wheel (its data inside the package)."""
    return BUNDLED_DATA.is_dir()


def checkout_root() -> Path | None:
    """The source checkout this benchkit runs from (in place or editable), None for a wheel."""
    if installed_from_wheel():
        return None
    root = PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() and (root / "conf").is_dir() else None


def data_root() -> Path:
    """The folder holding `conf/`, `templates/` and `fixtures/`: the wheel's bundled copy when
    installed, else the checkout's top level."""
    return BUNDLED_DATA if installed_from_wheel() else PACKAGE_DIR.parent


def conf_dir() -> Path:
    """benchkit's own Hydra configs (a user's are added with `--config-dir`)."""
    return data_root() / "conf"


def templates_dir() -> Path:
    """The report's Jinja templates."""
    return data_root() / "templates"


def workloads_dir() -> Path:
    """The bundled workload fixtures, by name (`workload.fixture=mini`)."""
    return data_root() / "fixtures" / "workloads"


def repo_root() -> Path:
    """The checkout's top level, or where an installed wheel keeps the same `conf/`,
    `templates/` and `fixtures/` (`data_root()`): `repo_root() / "templates"` is right in both.
    Tests use it for the checkout's other folders (`tests/`, `scripts/`), which only a
    checkout has."""
    return data_root()

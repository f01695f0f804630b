"""Where benchkit finds its own data (configs, templates, workloads) and keeps its cache.

The repository keeps `conf/`, `templates/` and `fixtures/` at its top level. A wheel carries
copies of them inside the package, as `benchkit/_data/` (setup.py maps them at build time),
so an installed benchkit runs from any folder; a checkout (or an editable install of one)
reads them where they are.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# What setup.py's build step copies into the wheel; a checkout never has it.
BUNDLED_DATA = PACKAGE_DIR / "_data"
DATA_DIRS = ("conf", "templates", "fixtures")


def cache_dir() -> Path:
    """The cache root: $BENCHKIT_CACHE, else $XDG_CACHE_HOME/benchkit, else ~/.cache/benchkit."""
    env = os.environ.get("BENCHKIT_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "benchkit"


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

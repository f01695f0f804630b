"""Where benchkit keeps what it builds and writes outside the repo (the cache)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache root: $BENCHKIT_CACHE, else $XDG_CACHE_HOME/benchkit, else ~/.cache/benchkit."""
    env = os.environ.get("BENCHKIT_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "benchkit"


def repo_root() -> Path:
    """The benchkit checkout (conf/, templates/, fixtures/ live here)."""
    return Path(__file__).resolve().parent.parent

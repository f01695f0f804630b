"""Shared test fixtures: composing configs the way the entry point does."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from benchkit.app import to_typed
from benchkit.config import BenchConfig
from benchkit.paths import repo_root


@pytest.fixture
def compose_cfg() -> Iterator[Callable[..., BenchConfig]]:
    """compose_cfg("slots=2", ...) -> BenchConfig, from conf/ exactly as `python -m benchkit`."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):

        def _compose(*overrides: str) -> BenchConfig:
            return to_typed(compose(config_name="config", overrides=list(overrides)))

        yield _compose
    GlobalHydra.instance().clear()

"""Shared test fixtures: composing configs the way the entry point does, and a signing key of
the test session's own (benchkit.results.trust), so tests never make or use the user's key."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from benchkit.app import to_typed
from benchkit.config.schema import BenchConfig
from benchkit.paths import repo_root
from benchkit.results.trust import KEY_ENV


@pytest.fixture(autouse=True, scope="session")
def _session_key(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test and every benchkit it starts signs and verifies with this session's key."""
    os.environ[KEY_ENV] = str(tmp_path_factory.mktemp("key") / "key")


@pytest.fixture
def compose_cfg() -> Iterator[Callable[..., BenchConfig]]:
    """compose_cfg("slots=2", ...) -> BenchConfig, from conf/ exactly as `python -m benchkit`."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):

        def _compose(*overrides: str) -> BenchConfig:
            return to_typed(compose(config_name="config", overrides=list(overrides)))

        yield _compose
    GlobalHydra.instance().clear()

"""The capacity search's command line: what it needs before any sweep runs (the loop itself
runs real sweeps: tests/test_load_integration.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.search import main, plan


def test_a_search_needs_open_loop_load_and_its_first_loads() -> None:
    with pytest.raises(UserError, match=r"load\.rate=0\.5,1,2,4"):
        plan(["load=poisson", "slots=1,2"])
    with pytest.raises(UserError, match="load=poisson"):
        plan(["load.rate=1,2", "slots=1,2"])
    args, key, folder = plan(["load=poisson", "load.rate=1,4", "hydra.sweep.dir=/tmp/s"])
    assert (args, key, folder) == (["load=poisson", "load.rate=1,4"], "load.rate", Path("/tmp/s"))
    assert plan(["load=trace", "load.speed=1,2"])[1] == "load.speed"


def test_a_refused_search_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["slots=1,2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchkit.search: a search starts from loads")

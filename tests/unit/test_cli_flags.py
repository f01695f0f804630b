"""Every numeric flag of every command has a range (benchkit/cli.py): a value out of it, nan or
inf is one line naming the flag and the range, before anything runs (issue #42, attack 8:
`python -m benchkit.search --budget-min -1` or 0 was accepted, nan would never stop)."""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit import search
from benchkit.paths import repo_root
from benchkit.racing.policy import RaceSettings
from benchkit.workload import __main__ as workload_cli

REPO = repo_root()
# The commands a user runs (README): benchkit's modules, the racing sweeper, and the bench
# scripts the README names (harness.py; racing.py holds the racing options' replay).
COMMAND_SOURCES = [
    *sorted((REPO / "benchkit").rglob("*.py")),
    *sorted((REPO / "hydra_plugins").rglob("*.py")),
    REPO / "bench" / "harness.py",
    REPO / "bench" / "racing.py",
]


def _bare_numeric_flags(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        for kw in node.keywords:
            if (
                kw.arg == "type"
                and isinstance(kw.value, ast.Name)
                and kw.value.id in ("int", "float")
            ):
                flag = next((str(a.value) for a in node.args if isinstance(a, ast.Constant)), "?")
                out.append(f"{path.relative_to(REPO)}: {flag} type={kw.value.id}")
    return out


def test_no_command_declares_a_numeric_flag_without_a_range() -> None:
    bare = [f for p in COMMAND_SOURCES for f in _bare_numeric_flags(p)]
    assert bare == [], "declare these with benchkit.cli.bounded(...): " + "; ".join(bare)


def _harness() -> Callable[[list[str]], object]:
    sys.path.insert(0, str(REPO / "bench"))
    harness = pytest.importorskip("harness")
    return lambda argv: harness.build_parser().parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "flag", "says"),
    [
        (["--budget-min", "-1"], "--budget-min", "above 0 and at most 10080"),
        (["--budget-min", "0"], "--budget-min", "above 0"),
        (["--budget-min", "nan"], "--budget-min", "above 0"),
        (["--budget-min", "inf"], "--budget-min", "at most 10080"),
        (["--rounds", "0"], "--rounds", "between 1 and 100"),
        (["--rounds", "two"], "--rounds", "'two' is not a whole number"),
    ],
)
def test_a_search_flag_out_of_range_is_one_line_naming_it(
    argv: list[str], flag: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        search.main([*argv, "load=poisson", "load.rate=1,2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"python -m benchkit.search: argument {flag}: ") and says in err[0]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--listen", "70000"], "argument --listen: 70000 is out of range: give a value between 0"),
        (["--listen", "-1"], "argument --listen: -1 is out of range"),
        (["--grace", "nan"], "argument --grace: nan is out of range"),
        (["--grace", "-2"], "argument --grace: -2 is out of range"),
    ],
)
def test_a_recorder_flag_out_of_range_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        workload_cli.main(["record", "--upstream", "http://127.0.0.1:9", "--out", "x", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def test_the_harness_concurrency_list_is_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    parse = _harness()
    assert parse(["--concurrency", "1,8"]).concurrency == [1, 8]  # type: ignore[attr-defined]
    for bad in ("0,8", "1,x", ","):
        with pytest.raises(SystemExit):
            parse(["--concurrency", bad])
        assert "argument --concurrency:" in capsys.readouterr().err


@pytest.mark.parametrize("hours", [math.nan, math.inf, 0.0, -1.0])
def test_a_racing_budget_that_never_ends_is_refused(hours: float) -> None:
    with pytest.raises(ValueError, match=r"hydra\.sweeper\.budget_h=.* above 0"):
        RaceSettings(budget_s=hours * 3600).check()

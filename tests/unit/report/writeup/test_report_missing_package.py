"""A sweep's closing report on a machine without one of the report's packages (the lent GPU
machine had no Babel, and the report after a SIGTERM ended in a traceback): one sentence naming
the package and what to run, the measurements left as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit import app
from benchkit.report.writeup import render


def test_a_missing_package_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_babel(*args: object, **kwargs: object) -> Path:
        raise ModuleNotFoundError("No module named 'babel'", name="babel")

    monkeypatch.setattr(render, "render_report", no_babel)
    assert app.report_of(tmp_path, "sweep report (so far)") is False
    err = capsys.readouterr().err
    assert "Python package babel is not installed" in err
    assert f"python -m benchkit.report {tmp_path}" in err
    assert "Traceback" not in err

"""A verdict kind is one package and one registry line: a toy kind, written as a package
outside benchkit and added to the registry's tuple (the one line), appears in analyse's
output, in the short value text, in the headline, and in the written report with a section
and a figure of its own, with no other file touched."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from benchkit.report.verdicts import registry

DATA = Path(__file__).parents[3] / "data" / "h200-vulkan-1slot"

TOY = '''"""A toy verdict kind: says the sweep's cell count, to show what a kind needs."""

from __future__ import annotations

import matplotlib.pyplot as plt

from benchkit.report.verdicts import figures
from benchkit.report.analysis.sweep import COMPLETE
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import BOTH, Drawing, Found, Page, Say, VerdictKind


def _compute(found: Found) -> list[Verdict]:
    return [Verdict("toy", len(found.sweep.cells), COMPLETE)]


def _value(value, lang, numbers):
    return f"toy cells: {value}"


def _summary(v: Verdict, say: Say) -> str:
    return f"The toy counted {v.verdict} cells."


def _clause(v: Verdict, lang: str) -> str:
    return f"the toy counted {v.verdict} cells"


def _section(v: Verdict, page: Page) -> dict[str, object]:
    return {"kind": "toy", "title": "Toy cells", "text": f"The toy section: {v.verdict} cells.",
            "table": [], "figure": page.figs.get("toy"), "figure_title": "Toy cells drawn"}


def _figures(verdicts: list[Verdict], d: Drawing) -> dict[str, str]:
    if not verdicts:
        return {}
    fig, ax = plt.subplots()
    ax.bar([0], [verdicts[0].verdict])
    return {"toy": figures._save(fig, d.folder, "toy.png")}


KIND = VerdictKind("toy", _compute, loads=BOTH, value_text=_value, summary=_summary,
                   clause=_clause, section=_section, figures=_figures)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    pkg = tmp_path / "pkgs" / "toykind"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    mod = importlib.import_module("toykind")
    # The one registry line.
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, mod.KIND))
    yield mod
    sys.modules.pop("toykind", None)


def test_toy_kind_reaches_analysis_words_and_report(toy: object, tmp_path: Path) -> None:
    src = tmp_path / "results"
    shutil.copytree(DATA, src)
    from benchkit.report.writeup.render import render_report

    out = render_report(src, tmp_path / "report")
    verdicts = json.loads((out / "verdicts.json").read_text())
    entries = verdicts if isinstance(verdicts, list) else verdicts["verdicts"]
    toy_entry = next(v for v in entries if v["factor"] == "toy")
    assert toy_entry["summary"].startswith("The toy counted ")
    assert registry.value_text("toy", 3, "en", registry.Light()) == "toy cells: 3"
    md = (out / "report.md").read_text()
    assert "the toy counted" in md  # the headline's clause
    assert "toy cells: " in md  # the verdict summary table's value
    # Its own section, and its figure beside it, from the package alone.
    assert "## Toy cells\n\nThe toy section: " in md
    assert "![Toy cells drawn](toy.png)" in md
    assert (out / "toy.png").is_file()

"""The report's figures, checked by drawing them: one quantity per axis, every series told
apart in the legend, and no legend over a data point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from benchkit.paths import repo_root
from benchkit.report.lang import grammar
from benchkit.report.verdicts import figures
from benchkit.report.verdicts.kinds.backend.figure import backend_figure
from benchkit.report.verdicts.kinds.slots.figure import slots_figure
from benchkit.report.writeup.render import analyse_folder

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Each figure as drawn, laid out as saved (the file is written too)."""
    out: dict[str, Any] = {}
    save = figures._save

    def keep(fig: Any, out_dir: Path, name: str) -> str:
        result = save(fig, out_dir, name)  # lays it out as written, then closes it
        FigureCanvasAgg(fig).draw()  # a canvas again, to measure what was drawn
        out[name] = fig
        return result

    monkeypatch.setattr(figures, "_save", keep)
    return out


def points_under_legends(fig: Any) -> list[tuple[str, float, float]]:
    """Data points (display coordinates) that fall inside a legend's drawn box."""
    renderer = fig.canvas.get_renderer()
    boxes = [lg.get_window_extent(renderer) for lg in fig.legends]
    boxes += [ax.get_legend().get_window_extent(renderer) for ax in fig.axes if ax.get_legend()]
    hits = []
    for ax in fig.axes:
        for line in ax.get_lines():
            for x, y in ax.transData.transform(line.get_xydata()):
                hits += [(line.get_label(), x, y) for b in boxes if b.contains(x, y)]
        for patch in ax.patches:
            bb = patch.get_window_extent(renderer)
            hits += [("bar", bb.x1, bb.y1) for b in boxes if b.overlaps(bb)]
    return hits


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_slots_and_backend_figures_of_the_seed(
    tmp_path: Path, drawn: dict[str, Any], lang: str
) -> None:
    a = analyse_folder(SEED, [f"study.lang={lang}"])
    assert slots_figure(a.sweep.df, tmp_path, lang, knee={"slots": 4}) == "slots.png"
    assert backend_figure(a.sweep.df, tmp_path, lang) == "backend.png"
    slots, backend = drawn["slots.png"], drawn["backend.png"]

    # One quantity per axis: the two bases of seconds per unit never share one.
    ylabels = [ax.get_ylabel() for ax in slots.axes]
    # The seed published no output rate per wall second (its "aggregate decode" figure
    # changes meaning with the slot count), so there is no third panel to draw.
    assert len(ylabels) == len(set(ylabels)) == 2
    words, _ = figures.labels(lang)
    assert ylabels[:2] == [words["s_unit_tp"], words["s_unit_lat"]]
    # The knee is marked on the axis it is judged on.
    assert any(t.get_text().endswith(": 4") for t in slots.axes[0].texts)

    for fig in (slots, backend):
        assert points_under_legends(fig) == []
        (legend,) = fig.legends
        names = [t.get_text() for t in legend.get_texts()]
        assert len(names) == len(set(names)) == 4  # vulkan/hip x MTP on/off
        looks = {(h.get_color(), h.get_linestyle(), h.get_marker()) for h in legend.legend_handles}
        assert len(looks) == 4, "two series look the same in the legend"
        assert (tmp_path / ("slots.png" if fig is slots else "backend.png")).stat().st_size > 0


def _hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


def test_a_korean_figure_draws_korean_words_in_a_font_that_has_them(
    tmp_path: Path, drawn: dict[str, Any]
) -> None:
    if figures.drawable("ko")[0] != "ko":
        pytest.skip("no font with Hangul installed (fonts-noto-cjk)")
    a = analyse_folder(SEED, ["study.lang=ko"])
    slots_figure(a.sweep.df, tmp_path, "ko", knee={"slots": 4})
    slots = drawn["slots.png"]
    words = [ax.get_ylabel() for ax in slots.axes] + [ax.get_xlabel() for ax in slots.axes]
    assert all(_hangul(w) for w in words), words
    (legend,) = slots.legends
    assert any(_hangul(t.get_text()) for t in legend.get_texts())  # MTP on/off, in Korean
    # Drawn in a font that has the glyphs, not the default one that shows boxes.
    family = slots.axes[0].yaxis.label.get_fontfamily()
    assert family[0] in grammar("ko").FONTS


def test_without_a_font_for_the_script_a_figure_keeps_its_words_in_english(
    tmp_path: Path, drawn: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(figures, "_installed", lambda fonts=(): frozenset({"DejaVu Sans"}))
    assert figures.drawable("ko") == ("en", {})
    a = analyse_folder(SEED, ["study.lang=ko"])
    slots_figure(a.sweep.df, tmp_path, "ko", knee={"slots": 4})
    slots = drawn["slots.png"]
    texts = [ax.get_ylabel() for ax in slots.axes] + [ax.get_xlabel() for ax in slots.axes]
    texts += [t.get_text() for lg in slots.legends for t in lg.get_texts()]
    assert texts and not any(_hangul(t) for t in texts), texts
    assert slots.axes[0].get_ylabel() == "seconds per unit (throughput basis)"


def test_the_third_slots_panel_is_the_output_rate(tmp_path: Path, drawn: dict[str, Any]) -> None:
    """Where jobs measured it, output tokens per wall second is drawn against slots: the
    figure whose meaning is the same at every slot count."""
    a = analyse_folder(Path(__file__).parent / "data" / "h200-vulkan-1slot")
    a.sweep.df["slots"] = [1, 2]  # two counts so there is a line to draw
    assert slots_figure(a.sweep.df, tmp_path, "en") == "slots.png"
    words, _ = figures.labels("en")
    axes = drawn["slots.png"].axes
    assert [ax.get_ylabel() for ax in axes][2] == words["tok_s"]
    assert axes[2].get_title() == words["decode"] == "Aggregate output throughput"

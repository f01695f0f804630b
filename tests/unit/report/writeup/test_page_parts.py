"""The page's HTML in parts (markdown_html.html_parts), folded and its figures inlined part by
part: the same page, joined, as the whole HTML gives."""

from __future__ import annotations

import base64
import itertools
from html import escape
from pathlib import Path

import pytest

from benchkit.report.writeup import page
from benchkit.report.writeup.markdown_html import html_parts, markdown_to_html

TITLE = "Appendix: flags per job"


def _collapsed(body: str, title: str) -> str:
    """The appendix folded in the whole page, as the report did before it wrote parts."""
    head = f"<h2>{escape(title, quote=False)}</h2>"
    start = body.find(head)
    if start < 0:
        return body
    end = body.find("<h2>", start + len(head))
    end = len(body) if end < 0 else end
    inner = body[start + len(head) : end]
    summary = f"<summary>{escape(title, quote=False)}</summary>"
    return f'{body[:start]}<details class="appendix">{summary}{inner}</details>\n{body[end:]}'


SECTIONS = [
    "<h1>Report</h1>\n<p>One.</p>\n",
    '<h2>Figures</h2>\n<p><img src="a.png" alt="a"></p>\n',
    f"<h2>{TITLE}</h2>\n<table><tr><td>1</td></tr></table>\n",
    "<p>More flags.</p>\n",
    "<h2>Corrections</h2>\n<p>None.</p>\n",
]


@pytest.mark.parametrize("n", range(1, len(SECTIONS) + 1))
def test_the_appendix_folds_across_parts_as_in_the_whole_page(n: int) -> None:
    for sections in itertools.permutations(SECTIONS, n):
        whole = "".join(sections)
        for cuts in itertools.product([False, True], repeat=len(sections) - 1):
            parts, at = [], 0
            for i, cut in enumerate([*cuts, True]):
                if cut:
                    parts.append("".join(sections[at : i + 1]))
                    at = i + 1
            assert "".join(page.collapse_section(parts, TITLE)) == _collapsed(whole, TITLE)


def test_figures_are_inlined_in_every_part(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"\x89PNG a")
    parts = ['<img src="a.png">', "<p>no figure</p>", '<p><img src="a.png"></p>']
    data = base64.b64encode(b"\x89PNG a").decode()
    out = page._inline_images(parts, tmp_path)
    assert "".join(out) == "".join(parts).replace(
        'src="a.png"', f'src="data:image/png;base64,{data}"'
    )
    assert out[1] is parts[1]


def test_the_parts_join_to_the_page() -> None:
    md = "# A\n\ntext\n\n## B\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n## C\n\n- item\n"
    parts = html_parts(md)
    assert len(parts) == 3
    assert "".join(parts) == markdown_to_html(md)

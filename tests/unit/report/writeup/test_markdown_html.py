"""benchkit.report.writeup.markdown_html gives the HTML markdown-it gives for the whole page: on
pages made of the blocks a report holds (headings, paragraphs, lists, quotes, fences, tables) and of
the lines that could make a table not one (a paragraph running into it, a row short of cells,
escaped pipes, text after it without a blank line), and on the report of the seed fixture."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from benchkit.report.writeup import markdown_html
from benchkit.report.writeup.markdown_html import markdown_to_html


def _whole(md: str) -> str:
    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(md))


# Cell text: what tables hold (figures, escapes, emphasis, code, links) and what could cut a
# cell or end a row (pipes, escaped pipes, backslashes, whitespace markdown-it trims or not).
_CELL = st.lists(
    st.sampled_from(
        [
            "a", "12.5 s", "flash\\_attn", "**b**", "*c*", "`x|y`", "\\|", "\\\\|", "\\",
            "[l](http://x)", "<b>", "&amp;", "&", " ", "\t", "\u00a0", "\u2003", "–", "†",
            "x_y", "![i](p.png)", "\u202e", ":", "-", "#",
        ]
    ),
    max_size=4,
).map("".join)  # fmt: skip


@st.composite
def _table(draw: st.DrawFn) -> str:
    cols = draw(st.integers(1, 4))
    head = "|" + "|".join(draw(_CELL) for _ in range(cols)) + "|"
    delims = [
        draw(st.sampled_from(["---", ":--", "--:", ":-:", " - ", "-", "", "x"]))
        for _ in range(cols)
    ]
    delim = "|" + "|".join(delims) + draw(st.sampled_from(["|", "| ", "", "|\t"]))
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        n = draw(st.integers(max(0, cols - 1), cols + 1))
        end = draw(st.sampled_from(["|", "", " |", "| "]))
        rows.append("|" + "|".join(draw(_CELL) for _ in range(n)) + end)
    return "\n".join([head, delim, *rows])


_BLOCK = st.one_of(
    _table(),
    st.sampled_from(
        [
            "", "", " ", "\t", "# Heading", "## Section | with pipe", "### x",
            "A paragraph with **bold** and `code`.", "text | with | pipes", "- item",
            "- item\n  more", "1. one", "> quote", "> | quoted | table |", "```", "~~~",
            "```python", "    code",
            "| lone pipe line", "|---|", "* * *", "Setext\n---", "- | in | list |",
            "[ref]: http://x", "see [ref] and [x]: y", "  ```", "- ```", "> ~~~", "\r\n",
        ]
    ),
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BLOCK, max_size=12), st.booleans())
def test_same_html_as_the_whole_page(blocks: list[str], trailing: bool) -> None:
    md = "\n".join(blocks) + ("\n" if trailing else "")
    # Without markdown_to_html's full collection a page (a tenth of a second in a test run).
    assert markdown_html._html(markdown_html._parser(), md) == _whole(md)


def test_a_table_is_written_out_where_it_stands_alone() -> None:
    # The page a report writes: the table between blank lines, after a heading.
    md = "## Results\n\n| job | time |\n|---|--:|\n| 1 | 2.0 s |\n| 2 \\| 3 | – |\n\nAfter.\n"
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    html = markdown_html._section_html(parser, markdown_html._Inline(parser), md)
    assert html == _whole(md)
    assert markdown_html._table_html(md.split("\n")[2:6], markdown_html._Inline(parser))


def test_short_rows_and_text_run_on_are_left_to_markdown_it() -> None:
    parser = MarkdownIt("commonmark")
    inline = markdown_html._Inline(parser)
    assert markdown_html._table_html(["| a | b |", "|---|---|", "| 1 |"], inline) is None
    assert markdown_html._table_html(["| a | b |", "|---|"], inline) is None
    assert markdown_html._table_html(["| a |"], inline) is None
    md = "| a |\n|---|\n| 1 |\nrun on\n"
    assert markdown_to_html(md) == _whole(md)


def test_the_seed_report_renders_as_whole(tmp_path: Path) -> None:
    from benchkit.report.writeup.render import render_report

    seed = Path(__file__).parents[4] / "fixtures" / "results" / "seed-r9700"
    out = render_report(seed, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert markdown_to_html(md) == _whole(md)

"""A report's pages from its view model: the Markdown through the Jinja templates (translated by
`_()`), the same Markdown as a standalone HTML page (figures inlined, the flags appendix
folded), verdicts.json and results.csv beside them."""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterator, Sequence
from html import escape as html_escape
from pathlib import Path
from types import CodeType

import jinja2
import orjson
from jinja2.bccache import Bucket

from benchkit import log
from benchkit.paths import repo_root
from benchkit.report.lang import grammar, prose, tr, trn
from benchkit.report.lang.fmt import filters
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import registry
from benchkit.report.verdicts.folder import Analysed
from benchkit.report.verdicts.kind import Say
from benchkit.report.verdicts.light import Light
from benchkit.report.writeup.markdown_html import html_parts
from benchkit.report.writeup.tables import drop_constant_columns, drop_empty_columns
from benchkit.report.writeup.view import unit_word
from benchkit.results.store import (
    RESULTS_CSV,
    atomic_write_bytes,
    atomic_write_text,
    write_results_csv,
)
from benchkit.results.visible import visible

_log = log.get(__name__)


class _Compiled(jinja2.BytecodeCache):
    """Each template's code as compiled, kept for the process: every environment of the same
    escaping compiles a template to the same code (the filters are looked up by name when it
    renders, and every language has the same ones), so a post rendered after its report, or a
    report in another language, does not compile it again."""

    def __init__(self) -> None:
        self._code: dict[tuple[str, str], CodeType] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        bucket.code = self._code.get((bucket.key, bucket.checksum))

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            self._code[bucket.key, bucket.checksum] = bucket.code


# By `html` (autoescape), which the compiled code does depend on.
_COMPILED = {False: _Compiled(), True: _Compiled()}


def compile_templates() -> None:
    """The report's templates compiled now, before a report's analysis: compiling report.md.j2
    takes 8 MiB at its most, given back when it ends. Compiled after the analysis, that memory
    came on top of all the analysis holds, and the process kept it (at 1,000 jobs, 12 of a
    report's 200 MiB peak); compiled before, the analysis fills it again."""
    template_env(html=False).get_template("report.md.j2")
    template_env(html=True).get_template("report.html.j2")


def template_env(html: bool, lang: str = "en") -> jinja2.Environment:
    """Jinja environment: undefined names are errors; HTML templates escape everything; `_()`
    and `ngettext()` translate into `lang` (benchkit.report.lang). The templates are compiled
    once a process (`_COMPILED`)."""
    env = jinja2.Environment(
        extensions=["jinja2.ext.i18n"],
        loader=jinja2.FileSystemLoader(str(repo_root() / "templates")),
        bytecode_cache=_COMPILED[html],
        undefined=jinja2.StrictUndefined,
        autoescape=html,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(filters(lang))
    env.install_gettext_callables(  # type: ignore[attr-defined]  # added by the extension
        gettext=functools.partial(tr, lang), ngettext=functools.partial(trn, lang), newstyle=False
    )
    return env


def collapse_section(parts: list[str], title: str) -> list[str]:
    """The HTML section headed `title` (an <h2> to the next <h2> or the end) folded into a
    <details> element, so a reader who wants it opens it and no one else scrolls past it.
    `parts`: the page's HTML in parts (markdown_html.html_parts: whole elements each, so no
    tag runs across two), returned the same way. The title is escaped as the Markdown
    renderer escaped it."""
    head = f"<h2>{html_escape(title, quote=False)}</h2>"
    first = next((i for i, part in enumerate(parts) if head in part), None)
    if first is None:
        return parts
    start = parts[first].find(head) + len(head)
    # The next <h2>, in the part of the title or a later one; else the page's end.
    last, end = first, parts[first].find("<h2>", start)
    while end < 0 and last + 1 < len(parts):
        last += 1
        end = parts[last].find("<h2>")
    if end < 0:
        end = len(parts[last])
    inner = (
        [parts[first][start:end]]
        if last == first
        else [parts[first][start:], *parts[first + 1 : last], parts[last][:end]]
    )
    summary = f"<summary>{html_escape(title, quote=False)}</summary>"
    return [
        *parts[:first],
        parts[first][: start - len(head)],
        f'<details class="appendix">{summary}',
        *inner,
        "</details>\n",
        parts[last][end:],
        *parts[last + 1 :],
    ]


def _write_json(path: Path, items: Sequence[object]) -> None:
    """A report's JSON list, indented, atomically, through orjson: the 6.5 MB verdicts.json of
    a 1,000-job report took 0.29 s of CPU to encode with the standard module and 0.01 s with
    orjson (docs/perf/report). Text is written as UTF-8, not as escapes, and small floats
    without an exponent; a value JSON cannot hold is written as its str(), as
    results.atomic_write_json does. result.json keeps that standard writer.

    Each item is encoded and written in turn, indented as orjson indents a list's items (a
    line break inside JSON text is always written as an escape, so each line break of an
    item's text is one between its lines): the whole list's text at once was the largest
    block a 1,000-job report holds (6.5 MB beside everything else, its peak of memory), an
    item's is at most 1.4 MB."""
    opts = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS

    def parts() -> Iterator[bytes]:
        if not items:
            yield b"[]\n"
            return
        yield b"[\n  "
        for n, item in enumerate(items):
            if n:
                yield b",\n  "
            yield orjson.dumps(item, default=str, option=opts).replace(b"\n", b"\n  ")
        yield b"\n]\n"

    atomic_write_bytes(path, parts())


def _verdicts_json(
    verdicts: Sequence[an.Verdict], a: Analysed, lang: str
) -> list[dict[str, object]]:
    """verdicts.json: each verdict with its one-sentence summary in `lang`, then each claim."""
    say = Say(lang, unit_word(a.study, lang), a.study.knee_gain)
    out = []
    for v in verdicts:
        j = v.to_json()
        fn = registry.kind_of(v.factor).summary
        j["summary"] = fn(v, say) if fn else registry.value_text(v.factor, v.verdict, lang, Light())
        out.append(j)
    for c in a.claims:
        out.append(
            {
                "factor": "claim",
                "verdict": c["status"],
                "status": an.COMPLETE,
                "missing": [],
                "basis": c["metric"],
                "numbers": c,
                "summary": c["premise"],
            }
        )
    return out


def write_report(
    folder: Path,
    vm: dict[str, object],
    verdicts: Sequence[an.Verdict],
    a: Analysed,
    lang: str,
    *,
    md_name: str,
    html_name: str,
    front_matter: str = "",
) -> None:
    """The report's pages into `folder`: the Markdown (after `front_matter`), the standalone
    HTML, verdicts.json and results.csv. A hole in the prose is warned about, not fatal."""
    _write_pages(folder, vm, lang, md_name, html_name, front_matter)
    # After the pages, whose text (several MiB at 1,000 jobs) is let go by then: the objects
    # of verdicts.json are the largest the report makes at once.
    _write_json(folder / "verdicts.json", _verdicts_json(verdicts, a, lang))
    # The numbers behind the page, for pandas or a spreadsheet (benchkit.results.frame).
    write_results_csv(folder / RESULTS_CSV, a.results)


def _write_pages(
    folder: Path, vm: dict[str, object], lang: str, md_name: str, html_name: str, front: str
) -> None:
    """The Markdown page (after the front matter `front`) and the standalone HTML page."""
    md = template_env(html=False, lang=lang).get_template("report.md.j2").render(**vm)
    # A column no row has a value in says nothing: left off every table.
    md = drop_empty_columns(md)
    if vm["published"]:
        # A post says a column that is the same in every row once, under its table.
        md = drop_constant_columns(md, lambda pairs: _same_in_every_row(pairs, lang))
    # A language's own spacing and brackets (Korean: no space before "(" after a word, no
    # semicolon between items), the captions above included.
    tidy = getattr(grammar(lang), "tidy", None)
    if tidy is not None:
        md = tidy(md)
    for hole in prose.holes(md):
        _log.warning(f"the report's prose has a hole ({hole})")
    # Text from results may hold bidirectional controls: shown, never obeyed (benchkit.visible).
    md = visible(md)
    atomic_write_text(folder / md_name, visible(front), md)
    # The HTML in parts, written in turn, never joined (markdown_html.html_parts).
    parts = html_parts(md)
    del md
    parts = _inline_images(collapse_section(parts, tr(lang, "Appendix: flags per job")), folder)
    page = template_env(html=True, lang=lang).get_template("report.html.j2")
    fields: dict[str, object] = {
        "title": vm["title"],
        "lang": lang,
        "generator": vm["generator"],
        # A published post's Markdown leaves its title to the front matter (the blog prints
        # it); the standalone page prints it itself.
        "heading": bool(vm["published"]),
    }
    # The body written into the page's file after the page around it, never through the
    # template (as Markup, then into its output: three copies of a few MiB at once at 1,000
    # jobs, the report's peak of memory); through it where the mark is not the page's once.
    around = page.render(**fields, body=_BODY)
    if around.count(_BODY) == 1:
        head, _, tail = around.partition(_BODY)
        atomic_write_text(folder / html_name, visible(head), *map(visible, parts), visible(tail))
    else:
        body = "".join(parts)
        atomic_write_text(folder / html_name, visible(page.render(**fields, body=body)))


def _same_in_every_row(pairs: Sequence[tuple[str, str]], lang: str) -> str:
    """The caption of a post's table under which columns of one value were dropped."""
    cells = "; ".join(f"{head} {value}" for head, value in pairs)
    return tr(lang, "The same in every row: {cells}.", cells=cells)


# Where the body goes in report.html.j2 while the rest of the page is rendered.
_BODY = "\x00benchkit: the body\x00"


def _inline_images(parts: list[str], folder: Path) -> list[str]:
    """Embed figures as data URIs so the HTML stands alone (one file to publish): in the
    rendered page's parts, where markdown-it wrote each figure's file name as an image's source
    (a quote in text is written as &quot;, so only a tag holds `src="`). Replaced after
    rendering, not in the Markdown: markdown-it went through each data URI a character at a
    time to check and encode it as a link (0.1 s of a 1,000-job report's CPU), and writes it
    unchanged (base64 holds only characters a link keeps). A part without the figure is kept
    as it is, not copied."""
    for png in folder.glob("*.png"):
        src = f'src="{png.name}"'
        data = f'src="data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}"'
        parts = [part.replace(src, data) if src in part else part for part in parts]
    return parts

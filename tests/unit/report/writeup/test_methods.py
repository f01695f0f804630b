"""The methods page (writeup/methods.py): the method every post shares, said once. The pages
in docs/ are the generator's, and a post links the nearest one above it, or a copy beside it
where there is none, so its link always opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.paths import repo_root
from benchkit.report.writeup import methods


@pytest.mark.parametrize("lang", methods.LANGS)
def test_the_docs_methods_pages_are_the_generators(lang: str) -> None:
    """docs/methods.md and docs/methods.ko.md are what the generator writes now: regenerate
    them with `python -m benchkit.report.writeup.methods docs` after changing their words."""
    page = repo_root() / "docs" / methods.file_name(lang)
    assert page.read_text(encoding="utf-8") == methods.render(lang)


def test_the_page_defines_the_jargon_posts_use() -> None:
    text = methods.render("en")
    for term in ("knee", "anchor run", "bridged", "machine state", "race", "paired units"):
        assert term in text, term
    assert "1.28x the time of" in text  # the one way a ratio is written


def test_a_post_links_the_page_above_it(tmp_path: Path) -> None:
    (tmp_path / "docs" / "studies" / "s").mkdir(parents=True)
    (tmp_path / "docs" / "methods.ko.md").write_text("page")
    into = tmp_path / "built"
    into.mkdir()
    blog = tmp_path / "docs" / "studies" / "s" / "blog-ko"
    assert methods.link(blog, into, "ko") == "../../../methods.ko.md"
    assert not (into / "methods.ko.md").exists()


def test_a_post_with_no_page_above_it_gets_its_own_copy(tmp_path: Path) -> None:
    into = tmp_path / "built"
    into.mkdir()
    assert methods.link(tmp_path / "blog", into, "en") == "methods.md"
    assert (into / "methods.md").read_text(encoding="utf-8") == methods.render("en")

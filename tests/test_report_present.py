"""The published studies as a reader meets them: each test renders a study of docs/studies (its
results alone, into a tmp folder; or an altered copy) in English or Korean and asserts that
one presentation fault is gone: the Korean post in Korean, balanced brackets, no stray series
heading, settings in words, plurals, no empty bullets, legends named as the prose names them,
and a published page that opens with its title, headline and main figure."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from benchkit.paths import repo_root
from benchkit.report.render import render_report

STUDIES = repo_root() / "docs" / "studies"
VULKAN = "h200-vulkan-vs-cuda"
MTP = "h200-glm4moe-30b-a3b-mtp"
SLOTS = "h200-qwen3-30b-a3b"
DECODE = "h200-glm4moe-30b-a3b-decode"
ALL = (VULKAN, MTP, SLOTS, DECODE)

Render = Callable[[str, str], Path]
_rendered: dict[tuple[str, str], Path] = {}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Render:
    """The published folder (index.md, index.html, figures) of a study in a language,
    rendered once per module from the study's committed results."""
    base = tmp_path_factory.mktemp("present")

    def get(study: str, lang: str) -> Path:
        if (study, lang) not in _rendered:
            out = base / study / lang
            render_report(
                STUDIES / study / "results",
                out / "report",
                publish=out / "blog",
                overrides=[f"study.lang={lang}", f"study.ledger={out / 'ledger.jsonl'}"],
            )
            _rendered[(study, lang)] = out / "blog"
        return _rendered[(study, lang)]

    return get


def body(md: str) -> str:
    """index.md without its front matter, code spans and image targets."""
    md = md.split("\n---\n", 1)[1] if md.startswith("---\n") else md
    md = re.sub(r"`[^`]*`", "", md)
    return re.sub(r"\]\(data:[^)]*\)|\]\([^)]*\.png\)", "]", md)


# ------------------------------------------------------------------ the study's own words


def test_every_study_config_has_its_korean_words() -> None:
    """Title, question and every untested item, in Korean, for every study config."""
    for path in sorted((repo_root() / "conf" / "study").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        ko = (data.get("text") or {}).get("ko") or {}
        assert ko.get("title") and ko.get("question"), path.name
        assert len(ko.get("untested") or []) == len(data.get("untested") or []), path.name
        assert len(ko.get("claims") or []) == len(data.get("claims") or []), path.name
        for text in [ko["title"], ko["question"], *(ko.get("untested") or [])]:
            assert re.search("[가-힣]", text), (path.name, text)


@pytest.mark.parametrize("study", ALL)
def test_korean_post_is_korean_from_title_to_not_tried_list(published: Render, study: str) -> None:
    """Results measured before the config had Korean words are written up with them: the
    front matter's title, the question and the not-tried list are the config's Korean."""
    md = (published(study, "ko") / "index.md").read_text(encoding="utf-8")
    title = re.search(r'^title: "(.*)"$', md, re.M)
    assert title and re.search("[가-힣]", title.group(1))
    question = re.search(r"^질문: (.*)$", md, re.M)
    assert question and re.search("[가-힣]", question.group(1))
    tried = md.split("연구가 시도하지 않았다고 적어 둔 것:", 1)[1].split("\n## ", 1)[0]
    items = [line for line in tried.splitlines() if line.startswith("- ")]
    assert items and all(re.search("[가-힣]", line) for line in items), items


def test_no_raw_config_key_in_the_prose(published: Render) -> None:
    """The MTP study's draft length is named in words, not as `server.mtp_draft_max`."""
    for lang in ("en", "ko"):
        md = body((published(MTP, lang) / "index.md").read_text(encoding="utf-8"))
        assert "mtp_draft_max" not in md
        assert "server." not in md

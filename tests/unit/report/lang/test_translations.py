"""The report's translations (benchkit.report.lang): every message has its Korean, fields
match, the grammar specs pick the right particle, and an unknown language is one clear error."""

from __future__ import annotations

import pytest

from benchkit.report import lang
from benchkit.report.lang import catalogs


def test_every_message_is_translated_with_its_fields() -> None:
    # The same check `make lint` and `python -m benchkit.report.lang check` run.
    problems = catalogs.check([c for c in lang.languages() if c != lang.SOURCE])
    assert problems == [], "\n".join(map(str, problems))


def test_messages_are_found_in_code_and_templates() -> None:
    found = catalogs.extract()
    places = {loc.split("/")[0] for m in found if m.id for loc, _ in m.locations}
    assert places == {"benchkit", "templates"}
    assert found.get("Question") is not None  # a template's _()


def test_a_field_takes_the_particle_its_word_reads_with() -> None:
    msg = "{winner} won{prov}: on {objective}, {losers} across the {k} settings compared.{tie}"
    cuda = lang.tr("ko", msg, winner="CUDA", prov="", objective="초", losers="", k=2, tie="")
    vulkan = lang.tr("ko", msg, winner="Vulkan", prov="", objective="초", losers="", k=2, tie="")
    assert cuda.startswith("CUDA가 이겼습니다") and vulkan.startswith("Vulkan이 이겼습니다")
    assert "초로 비교한 설정 2개" in cuda
    english = lang.tr("en", msg, winner="CUDA", prov="", objective="s", losers="x", k=2, tie="")
    assert english == "CUDA won: on s, x across the 2 settings compared."


def test_plural_and_span_follow_the_language() -> None:
    assert lang.trn("en", "{n} slot", "{n} slots", 1) == "1 slot"
    assert lang.trn("en", "{n} slot", "{n} slots", 4) == "4 slots"
    assert lang.trn("ko", "{n} slot", "{n} slots", 4) == "슬롯 4개"
    assert lang.span("en", "48%", "52%") == "48%–52%"
    assert lang.span("ko", "48%", "52%") == "48~52%"
    assert lang.span("ko", "1.2배", "1.3배") == "1.2~1.3배"


def test_an_unknown_language_names_the_fix() -> None:
    with pytest.raises(
        ValueError, match=r"study.lang=fr: no such report language; choose one of en, ko"
    ):
        lang.tr("fr", "Question")


def test_a_message_that_is_not_a_literal_is_caught(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text('x = tr(lang, f"{a} slots")\ny = tr(lang, "ok")\n')
    problems = list(catalogs.non_literal_markers(tmp_path / "pkg"))
    assert [p.where for p in problems] == ["pkg/m.py:1"]

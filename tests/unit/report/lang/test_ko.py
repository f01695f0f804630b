"""Korean particles from the word before them (benchkit/report/lang/ko.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.report.lang.ko import ending, particle


@pytest.mark.parametrize(
    ("word", "p", "want"),
    [
        ("Vulkan", "가", "Vulkan이"),  # 벌칸
        ("CUDA", "이", "CUDA가"),  # 쿠다
        ("HIP", "는", "HIP은"),  # 힙
        ("CPU", "은", "CPU는"),  # 씨피유
        ("Metal", "으로", "Metal로"),  # 메탈: ㄹ takes 로
        ("MTP 끔", "가", "MTP 끔이"),  # the old template wrote "MTP 끔가"
        ("MTP 켬", "를", "MTP 켬을"),
        ("슬롯 4개", "가", "슬롯 4개가"),
        ("모델", "과", "모델과"),
        ("슬롯", "와", "슬롯과"),
        ("종목", "로", "종목으로"),
        ("단위", "으로", "단위로"),
        ("서울", "으로", "서울로"),
        ("단위당 초(처리량 기준)", "으로", "단위당 초(처리량 기준)로"),  # the word before "("
        ("8", "이", "8이"),  # 팔
        ("4", "이", "4가"),  # 사
        ("3", "를", "3을"),  # 삼
        ("1", "으로", "1로"),  # 일: ㄹ
        ("10", "가", "10이"),  # 십
        ("22 GB", "가", "22 GB가"),  # 기가바이트
        ("2.6%", "이", "2.6%가"),  # 퍼센트
        ("q8_0", "가", "q8_0이"),  # 영
        ("Vulkan0", "가", "Vulkan0이"),
        ("TTFT p95", "를", "TTFT p95를"),  # 오
        ("XYZ", "가", "XYZ가"),  # spelled: 제트
        ("SLM", "가", "SLM이"),  # 엠
        ("qwen35moe", "이", "qwen35moe이(가)"),  # unknown reading: both forms
        ('"빠름"', "은", '"빠름"은'),
    ],
)
def test_particle_follows_the_word_as_read(word: str, p: str, want: str) -> None:
    assert particle(word, p) == want


def test_an_empty_or_symbol_word_has_no_known_ending() -> None:
    assert ending("") is None
    assert ending("→") is None


def test_the_studys_unit_word_replaces_danwi_with_its_particles() -> None:
    from benchkit.report.lang.ko import study_unit, with_unit

    text = "완료한 단위 수로, 여러 단위를 함께 돌릴 때 단위가 드는 비용; 단위당 초; 단위로 센다"
    assert with_unit(text) == text  # outside a render: the generic word
    with study_unit("종목"):
        assert with_unit(text) == (
            "완료한 종목 수로, 여러 종목을 함께 돌릴 때 종목이 드는 비용; 종목당 초; 종목으로 센다"
        )
        with study_unit("문서"):
            assert with_unit("단위를") == "문서를"
    assert with_unit("단위를") == "단위를"  # reset after the block


def test_english_prose_counts_words_a_reader_sees_untranslated() -> None:
    from benchkit.report.lang.ko import english_prose

    md = "Vulkan이 이겼습니다: `--parallel 4` 기준, 172.4 s, decode tok/s, hip, the winner"
    total, english = english_prose(md, names=frozenset({"hip"}))
    assert english == ["decode", "the", "winner"]
    assert total == 11  # "Vulkan이" is two: the name and its particle


def test_the_seeds_korean_report_has_under_3_percent_english_prose(tmp_path: Path) -> None:
    """#16's bar: names, flags, code and units aside, under 3% of the words are English."""
    from benchkit.paths import repo_root
    from benchkit.report.lang.ko import english_prose
    from benchkit.report.writeup.render import render_report

    out = render_report(
        repo_root() / "fixtures" / "results" / "seed-r9700", tmp_path, overrides=["study.lang=ko"]
    )
    total, english = english_prose(
        (out / "report.md").read_text(), names=frozenset({"hip", "vulkan", "benchkit"})
    )
    assert total > 1000
    assert len(english) / total < 0.03, sorted(set(english))

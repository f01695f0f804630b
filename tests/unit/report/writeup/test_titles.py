"""A study that declares no title or question gets them from what ran (#45: the default
title named tiny-moe on the CPU for every model, and asked about slots for every sweep)."""

from __future__ import annotations

from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.view import study_words

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"


def test_no_declared_title_is_composed_from_the_model_where_and_the_factors() -> None:
    a = analyse_folder(SEED, ["study.title=''", "study.question=''", "study.text={}"])
    words = study_words(a.study, "en", a)
    assert words.title == (
        "Qwen3.6-35B-A3B on AMD Radeon AI PRO R9700 (gfx1201): backend, parallel slots and MTP"
    )
    assert words.question == (
        "How do backend, parallel slots and MTP change seconds per unit (throughput basis) "
        "for this workload?"
    )
    # A language's own declared title (the seed's study.text.ko) is still the study's word.
    assert study_words(a.study, "ko", a).title.startswith("R9700 한 장에서 35B MoE 돌리기")


def test_a_declared_title_is_kept() -> None:
    a = analyse_folder(SEED)
    assert study_words(a.study, "en", a).title.startswith("A 35B MoE on the Radeon AI PRO R9700")

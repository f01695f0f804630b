"""The Korean catalog speaks with one voice: one term per concept (the glossary below, chosen
from the seed post where it has a word, docs/ko-review.md), none of the word-for-word English
phrasings a review took out, particles the grammar module picks rather than ones typed after a
field, and brackets that close. Checked over every msgstr of
benchkit/locale/ko/LC_MESSAGES/benchkit.po, plural forms included, so a new message cannot
bring a variant back."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from babel.messages.pofile import read_po

from benchkit.report.lang import DOMAIN, LOCALE


@dataclass(frozen=True)
class Term:
    """A concept, the one Korean term for it, and the variants (regular expressions) that
    drifted in beside it."""

    concept: str
    term: str
    banned: tuple[str, ...]


GLOSSARY = (
    Term(
        "a point: one combination of the factors' values",
        "조합",
        ("지점", "포인트", r"(?<![가-힣])점마다"),
    ),
    Term("a planned point", "계획한 조합", ("계획 지점", "계획된 조합", "계획 조합")),
    Term(
        "complete (a point, a job)",
        "완료",
        ("완주", "끝까지 돈", "끝까지 돌", "끝나지 않", "끝나지 못"),
    ),
    Term("aggregate (throughput over all slots)", "합산", ("집계",)),
    Term(
        "seconds per unit (the study's unit fills in its own word)",
        "단위당 초",
        ("종목당", "개당 초"),
    ),
    Term("the study", "연구", ("스터디",)),
    Term("this write-up", "보고서", ("리포트",)),
    Term("the recommended point", "권장 설정", ("권장 조합", "추천 설정", "추천 조합")),
    Term(
        "a call that hit the generation cap",
        "상한에 걸린",
        ("상한까지 간", "상한까지 갔", "상한 도달"),
    ),
    Term("a replay pass", "회차", ("재생 구간", "구간 길이")),
    Term("speculative decoding", "투기적 디코딩", ("추측 디코딩", "추론적 디코딩")),
    Term("draft acceptance", "투기 토큰 수용률", ("수락률", "채택률", "드래프트 수락")),
    Term("output drift", "출력 변화", (r"(?<!\()드리프트",)),
    Term("within the noise", "노이즈 이내", ("노이즈 안",)),
    Term("run-to-run noise", "노이즈", ("잡음",)),
    Term("see (a section)", "참고", ("참조",)),
    Term("decode, prefill (the post writes them in English)", "decode", ("디코드", "프리필")),
    Term("the most likely token", "확률이 가장 높은", ("가장 가능성 높은",)),
    # 기준 said five things (a basis, the margin, the drift reference, the baseline build, "as
    # measured from"): each concept its own word, 기준 only the basis (test_gijun_is_a_basis).
    Term(
        "the margin: the smallest difference a verdict counts",
        "문턱",
        ("기준 차이", "무릎 기준", r"\{margin\} 기준", "기준 안", "기준 이내"),
    ),
    Term(
        "the drift reference: the job, point or model file answers are compared with",
        "대조",
        ("기준 작업", "기준 조합", "기준 파일", "기준 대비", "기준과"),
    ),
    Term("the baseline build (against a new build)", "기존 빌드", ("기준 빌드",)),
    # 돈 reads as money: what ran is 돌린 (a reader's #45 review).
    Term("a job or unit that ran", "돌린", (r"(?<![가-힣])돈 ", "돌지 않")),
    Term(
        "the range on the units alone (no run-to-run noise)",
        "단위 간 편차만 반영한 범위",
        ("단위 사이의 편차", "단위만 달라진다고", "실행 전체의 흩어짐"),
    ),
    Term("run-to-run noise, as a post names it", "실행 간 노이즈", ("흩어짐을 얻",)),
    Term(
        "the margin, said once as 문턱",
        "문턱",
        ("무릎 판정 값", "연구가 차이로 치는 가장 작은 효과"),
    ),
    Term(
        "a point run on both machines, which bridges them",
        "연결 조합",
        ("다리로", "다리를", "머신 간 연결", r"\{anchor:으로\} 이었"),
    ),
    Term("units paired", "쌍", (r"짝지은 단위 \{n\}개", r"짝지은 단위\(")),
    Term(
        "draft acceptance, in prose", "투기 토큰 수용률", ("드래프트를 많아야", "받아들이지 않음")
    ),
    # Review 9: 투기 토큰, 드래프트 and 드래프팅 for one thing. Drafting and what it makes are
    # 투기 and 투기 토큰; 드래프트 is said only of the draft model, which is a name.
    Term("a drafted token", "투기 토큰", ("드래프팅", r"드래프트(?! 모델)", "드래프터")),
    # 머신, 카드 and 기기 for one thing: a machine is 머신 (a card, the GPU, stays 카드).
    Term("the machine a job ran on", "머신", (r"(?<![가-힣])기기",)),
    # decode stays "decode"; 디코딩 only in 투기적 디코딩 (speculative decoding, a name).
    Term("decode, in prose", "decode", (r"(?<!투기적 )디코딩",)),
    Term("the workload's file (a fixture)", "워크로드 파일", ("픽스처",)),
    Term("elapsed (wall-clock) time", "경과 시간", ("벽시계",)),
    Term("an open comparison, in a list or a cell", "미결", ("판가름하지 못함",)),
    # Review 11: one word a concept where two were still mixed. "Not decided" in prose is
    # 판가름하지 못했습니다 (미결 in a cell), as docs/methods.ko.md says it; "as measured" is
    # 측정한 그대로; greedy is 그리디, never the English beside it; a race is 레이스.
    Term(
        "not decided (a comparison, a verdict), in prose",
        "판가름하지 못",
        ("판정되지 않", "판정된 비교", "확정하지 못"),
    ),
    Term("as measured (a cold start kept)", "측정한 그대로", ("잰 그대로",)),
    Term("greedy (sampling, answers)", "그리디", (r"(?<![{_a-z])greedy(?![_a-z}])",)),
    Term("a race, a racing sweep", "레이스", ("레이싱",)),
    # Issue #45's reader: one word a concept in a post. Telemetry is 텔레메트리; decode's
    # 속도 is one sequence's speed (시퀀스당), its 처리량 the aggregate over all of them; the
    # section after the answer says what was compared, not "first".
    Term("telemetry (GPU, CPU readings)", "텔레메트리", ("원격 측정",)),
    Term(
        "aggregate decode throughput (every sequence together)",
        "합산 decode 처리량",
        # 처리량 takes 은, never the 는 that 속도 took.
        ("합산 decode 속도", r"(?<!시퀀스당 )decode 속도", "처리량는"),
    ),
    Term("one sequence's decode speed", "시퀀스당 decode 속도", ("시퀀스당 decode 처리량",)),
    Term("what is compared with what (a heading)", "무엇을 무엇과 비교했는지", ("먼저, 무엇을",)),
)
# 기준 names a basis of seconds per unit (처리량 기준, 슬롯 지연 기준) and nothing else.
GIJUN_BASIS = re.compile(r"(처리량|지연|두|늘|이|같은) 기준")

# Word-for-word English a review took out ("depends on", "on a CPU", "than with it off",
# "sampled beside"): none may come back in another message.
# "X took 1.05x the time of Y" as "X에는 Y의 1.05배 시간이 걸렸습니다" and "Nx slower" as "N배
# 느렸습니다": a difference is "X의 소요 시간은 Y의 N배였습니다".
CALQUES = (
    "기대는",
    "기댄",
    "CPU 위에",
    "끈 때의",
    "옆에서 샘플링",
    "끝까지 돈",
    "샘플에 걸친",
    "배 시간이 걸",
    "{ratio} 시간이 걸",
    "{ratio} 느렸",
    # "X의 소요 시간은 Y의 N배였습니다", seven times a post: "X가 Y보다 N배 오래 걸렸습니다"
    # (lang/ko.py took, from the ratio).
    "소요 시간은 {base}의 {ratio}였",
    # "only as compared across machines", word for word (review 9): 서로 다른 머신 사이의 비교.
    "머신을 가로지른",
)

# A field followed by a particle typed after it: the particle cannot know the word (the
# seed's "MTP 끔가"); the field must carry it (`{point:이}`) so lang/ko.py picks the form.
TYPED_PARTICLE = re.compile(r"\{[a-z_]+\}(이|가|을|를|은|는|와|과|으로|로)(?![가-힣])")
# A count comes after its noun, as 단위 100개, 슬롯 4개 (the seed post's order).
COUNT_FIRST = re.compile(r"\{[a-z_]+\}개 (작업|설정|조합|단위|호출)")


def korean_strings() -> list[tuple[str, str]]:
    """(msgid, msgstr) for every message of the Korean catalog, each plural form its own."""
    with (LOCALE / "ko" / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as f:
        catalog = read_po(f, locale="ko")
    out = []
    for m in catalog:
        if not m.id:
            continue
        msgid = m.id[0] if isinstance(m.id, tuple) else m.id
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        out += [(msgid, s) for s in strings]
    return out


STRINGS = korean_strings()


@pytest.mark.parametrize("term", GLOSSARY, ids=lambda t: t.concept)
def test_one_term_per_concept(term: Term) -> None:
    drift = [(msgid, s) for msgid, s in STRINGS for b in term.banned if re.search(b, s)]
    assert not drift, f"{term.concept}: write {term.term!r}; found {drift}"
    # The chosen term is in use: a glossary row for a term no message says would be stale.
    assert any(term.term in s for _, s in STRINGS), term


def test_no_word_for_word_english() -> None:
    found = [(msgid, s) for msgid, s in STRINGS for c in CALQUES if c in s]
    assert not found, found


def test_gijun_is_a_basis() -> None:
    found = [
        (msgid, s)
        for msgid, s in STRINGS
        for m in re.finditer("기준", s)
        if not GIJUN_BASIS.search(s[max(0, m.start() - 4) : m.end()])
    ]
    assert not found, found


def test_particles_after_a_field_come_from_the_grammar_module() -> None:
    found = [(msgid, s) for msgid, s in STRINGS if TYPED_PARTICLE.search(s)]
    assert not found, found


def test_counts_follow_their_noun() -> None:
    found = [(msgid, s) for msgid, s in STRINGS if COUNT_FIRST.search(s)]
    assert not found, found


def balanced(text: str) -> bool:
    """Every (, [ and { closed in order, none closed before it opened."""
    closes = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in closes and (not stack or stack.pop() != closes[ch]):
            return False
    return not stack


def test_every_korean_message_closes_its_brackets() -> None:
    assert balanced("(잠정: 작업 4에서 {shares:가} 걸렸습니다)") and not balanced("(한도 5%.")
    found = [(msgid, s) for msgid, s in STRINGS if not balanced(s)]
    assert not found, found


def test_a_latin_word_takes_its_english_reading_particle() -> None:
    """'sampling=greedy이(가)' in the decode post's headline: a Latin word's particle comes
    from how Korean says it (그리디, 리커멘디드, 챗, 프로그램), never both forms."""
    from benchkit.report.lang import ko

    assert ko.particle("sampling=greedy", "이") == "sampling=greedy가"
    assert ko.particle("qwen-recommended", "을") == "qwen-recommended를"
    assert ko.particle("chat", "이") == "chat이"
    assert ko.particle("program", "으로") == "program으로"
    for word in ("greedy", "top_k", "random", "qwen-recommended"):
        assert "(" not in ko.particle(word, "이"), word


def test_a_ratio_reads_as_how_much_longer() -> None:
    from benchkit.report.lang import ko

    assert ko.took("1.42배") == "보다 1.42배 오래 걸렸습니다"
    assert ko.took("0.63배") == "의 0.63배 시간에 끝났습니다"
    assert ko.took("1.40~1.44배", final=False) == "보다 1.40~1.44배 오래 걸렸고"


def test_a_korean_page_has_no_space_before_a_bracket_and_no_chains() -> None:
    from benchkit.report.lang import ko

    assert ko.tidy("| 슬롯 8개 (잠정) | 16.0초 (1.36배) |") == "| 슬롯 8개(잠정) | 16.0초(1.36배) |"
    assert ko.tidy("133배)(그동안 GPU 사용 2%)") == "133배, 그동안 GPU 사용 2%)"
    assert ko.tidy("`a (b)` 코드 (c)") == "`a (b)` 코드(c)"
    # No semicolon between items: commas, or a middle dot between items that hold commas.
    assert ko.tidy("다시 재십시오(슬롯 6개; 슬롯 3개).") == "다시 재십시오(슬롯 6개, 슬롯 3개)."
    assert ko.tidy("(CUDA, 슬롯 1개; Vulkan, 슬롯 2개)") == "(CUDA, 슬롯 1개 · Vulkan, 슬롯 2개)"
    assert ko.tidy("`a; b`") == "`a; b`"


def test_a_lead_question_asks_in_hapnida() -> None:
    from benchkit.report.lang import ko

    assert ko.question("빠르고 에너지를 적게 쓰는가? 무릎은 어디인가?") == (
        "빠르고 에너지를 적게 쓸까요? 무릎은 어디일까요?"
    )
    assert ko.question("이득을 내는가? 이를 바꾸는가?") == "이득을 낼까요? 이를 바꿀까요?"


# A sentence ends in 합니다체, never in a note's 함, 음 or 됨 (review 9 found them in prose).
NOTE_ENDING = re.compile(r"[가-힣](함|음|됨)\.(\s|$)")
# Korean prose has no semicolons (a list is a sentence or commas), code and formulas aside.
SEMICOLON = re.compile(r"[가-힣)]; |; [가-힣]")
# Nor a slash between two words ("켬/끔 비교") inside a sentence; a formula's " / " stays.
SLASH = re.compile(r"[가-힣]/[가-힣]")


def _prose(s: str) -> str:
    return re.sub(r"`[^`]*`", "", s)


def test_no_note_style_endings_in_sentences() -> None:
    assert NOTE_ENDING.search("판가름하지 못함. 다음") and not NOTE_ENDING.search("못했습니다.")
    found = [(msgid, s) for msgid, s in STRINGS if NOTE_ENDING.search(_prose(s))]
    assert not found, found


def test_no_semicolons_in_korean_prose() -> None:
    found = [(msgid, s) for msgid, s in STRINGS if SEMICOLON.search(_prose(s))]
    assert not found, found


def test_no_slash_between_words_in_a_sentence() -> None:
    found = [(msgid, s) for msgid, s in STRINGS if "니다" in s and SLASH.search(_prose(s))]
    assert not found, found

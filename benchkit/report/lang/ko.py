"""Korean's grammar for the report: particles chosen from the word they follow (이/가, 을/를,
은/는, 와/과, 으로/로) and the study's own word for its unit.

This is the Korean language module (benchkit/report/lang/__init__.py says what one holds): its
catalog, benchkit/locale/ko/LC_MESSAGES/benchkit.po, writes `{point:이}` where a particle
follows a field, and `inflect` fits the particle to the word the field holds; `finish` names
the study's unit by its own word in every translated message.

A Korean particle depends on how the preceding word ends when read aloud: after a final
consonant (받침) 이, 을, 은, 과, 으로; after a vowel 가, 를, 는, 와, 로; and 로, not 으로, after
ㄹ. The word is read as a Korean reader reads it: Hangul by its last syllable; a number by
the Korean reading of its last digit (3 삼, 4 사; 10 십), a unit by its Korean reading (GB
기가바이트); a Latin name by how it is said in Korean (Vulkan 벌칸, HIP 힙, CUDA 쿠다, CPU
씨피유), from a table, else, for a short all-capital name read letter by letter, by its last
letter (L 엘, M 엠, N 엔, R 알 end in a consonant). A parenthetical after the word is skipped, as
Korean orthography has it: "초(처리량 기준)" takes the particle of 초. Where the reading is not
known, both forms are written, "X이(가)", which a reader accepts and a wrong single form is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# Fonts with Hangul glyphs (fonts-noto-cjk, fonts-nanum), the first installed draws a figure's
# Korean labels; matplotlib's default font has none.
FONTS: tuple[str, ...] = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans KR", "NanumGothic")

# Particle pairs: (after a final consonant, after a vowel).
PAIRS = {
    "이": ("이", "가"),
    "가": ("이", "가"),
    "을": ("을", "를"),
    "를": ("을", "를"),
    "은": ("은", "는"),
    "는": ("은", "는"),
    "과": ("과", "와"),
    "와": ("과", "와"),
    "으로": ("으로", "로"),
    "로": ("으로", "로"),
}

# How names that appear in reports are said in Korean, by the final sound: "c" a final
# consonant other than ㄹ, "l" ㄹ, "v" a vowel.
READINGS = {
    "vulkan": "c",  # 벌칸
    "hip": "c",  # 힙
    "cuda": "v",  # 쿠다
    "cpu": "v",  # 씨피유
    "gpu": "v",  # 지피유
    "metal": "l",  # 메탈
    "sycl": "l",  # 시클
    "vllm": "c",  # 브이엘엘엠
    "sglang": "c",  # 에스지랭
    "mtp": "v",  # 엠티피
    "llama-server": "v",  # 라마 서버
    "llama.cpp": "v",  # 라마 씨피피
    "kv": "v",  # 케이브이
    "ttft": "v",  # 티티에프티
    "itl": "l",  # 아이티엘
    "decode": "v",  # 디코드
    "prefill": "l",  # 프리필
    "sampling": "c",  # 샘플링 (a factor named by its key)
    "gb": "v",  # 기가바이트
    "mb": "v",  # 메가바이트
    "ms": "v",  # 밀리초
    "s": "v",  # 초
    "w": "v",  # 와트
    "j": "v",  # 줄
    "%": "v",  # 퍼센트
}
# Digits as read: 0 영, 1 일, 2 이, 3 삼, 4 사, 5 오, 6 육, 7 칠, 8 팔, 9 구.
DIGITS = {
    "0": "c",
    "1": "l",
    "2": "v",
    "3": "c",
    "4": "v",
    "5": "v",
    "6": "c",
    "7": "l",
    "8": "l",
    "9": "v",
}
# Latin letters spelled out (the reading of a name not in READINGS, said letter by letter):
# L 엘, M 엠, N 엔, R 알; the rest end in a vowel (에이, 비, 씨, ...).
LETTERS = {"l": "l", "m": "c", "n": "c", "r": "l"}

_PAREN = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")
_TRAIL = re.compile(r"[\s\"'“”‘’`*_.,:;!?]+$")


def ending(word: str) -> str | None:
    """How `word` ends when read: "c" (final consonant), "l" (ㄹ), "v" (vowel), None unknown."""
    w = word
    while True:
        stripped = _TRAIL.sub("", _PAREN.sub("", w))
        if stripped == w:
            break
        w = stripped
    if not w:
        return None
    last = w[-1]
    if "가" <= last <= "힣":
        final = (ord(last) - 0xAC00) % 28
        return "v" if final == 0 else "l" if final == 8 else "c"
    tail = re.search(r"[A-Za-z][A-Za-z0-9.\-]*$|[0-9]+$|%$", w)
    if tail is None:
        return None
    raw = tail.group(0)
    token = raw.lower()
    if token in READINGS:
        return READINGS[token]
    if token.isdigit():
        # 10 십, 100 백, 1000 천 (a round number ends in its power's reading); else the digit.
        if len(token) > 1 and token.endswith("0"):
            return {1: "c", 2: "c", 3: "c", 4: "v"}.get(len(token) - len(token.rstrip("0")), "c")
        return DIGITS[token[-1]]
    # A known name with a suffix or version ("Vulkan0", "CUDA12"): the suffix is read last.
    m = re.match(r"([a-z.\-]+?)([0-9]+)$", token)
    if m:
        return ending(m.group(2))
    if raw.isalpha() and raw.isupper() and len(raw) <= 5:
        return LETTERS.get(token[-1], "v")
    return _english(token)


def _english(token: str) -> str | None:
    """How a Latin word ('greedy', 'qwen-recommended') ends as Korean transliterates
    English: its last word's final letter, m, n and ng a final consonant (그램, 펜, 링), l ㄹ
    (메탈), a short vowel before p, t or k a final consonant (힙, 챗), anything else a vowel
    (그리디, 리커멘디드, 서버). None where no word of letters ends it."""
    m = re.search(r"([a-z]+)$", token)
    # A model's name with digits in it (qwen35moe) is not read as an English word.
    if m is None or any(ch.isdigit() for ch in token):
        return None
    w = m.group(1)
    last = w[-1]
    if last in "mn" or w.endswith("ng"):
        return "c"
    if last == "l":
        return "l"
    vowels = "aeiou"
    if last in "ptk" and len(w) >= 2 and w[-2] in vowels and (len(w) < 3 or w[-3] not in vowels):
        return "c"
    return "v"


def inflect(word: str, spec: str) -> str:
    """A message field with a particle (`{point:이}`): the word with the form its reading
    takes. A field without one is the word as it is, and so is one that keeps English's
    `capital` (Korean has no capitals). A ratio with `took` (a sentence's end) or `took,`
    (a clause that goes on) is the predicate of 'X took N times Y's time' (took)."""
    if spec in ("took", "took,"):
        return took(word, final=spec == "took")
    return particle(word, spec) if spec and spec != "capital" else word


def took(ratio: str, final: bool = True) -> str:
    """What follows Y in 'X가 Y…' for a ratio X/Y: '보다 1.42배 오래 걸렸습니다' above 1,
    '의 0.63배 시간에 끝났습니다' below it, '의 0.95~1.70배 시간이 걸렸습니다' for a range
    across 1 (a reader found 'X의 소요 시간은 Y의 1.42배였습니다' a calque, said seven times a
    post); with `final` False, the clause that goes on (걸렸고, 끝났고)."""
    nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", ratio.replace(",", ""))]
    end = "습니다" if final else "고"
    if not nums:
        return f"의 {ratio} 시간이 걸렸{end}"
    if min(nums) >= 1:
        return f"보다 {ratio} 오래 걸렸{end}"
    if max(nums) <= 1:
        return f"의 {ratio} 시간에 끝났{end}"
    return f"의 {ratio} 시간이 걸렸{end}"


def finish(text: str) -> str:
    """A translated message before its fields are filled: the study's unit by its own word."""
    return with_unit(text)


def span(lo: str, hi: str) -> str:
    """'48~52%', '1.20~1.31배': a shared unit is written once, after the upper end."""
    if lo[-1:] == hi[-1:] and lo[-1:] in ("%", "배"):
        return f"{lo[:-1]}~{hi}"
    return f"{lo}~{hi}"


def particle(word: str, p: str) -> str:
    """`word` with the particle `p` (either form of its pair) that its ending takes."""
    consonant, vowel = PAIRS[p]
    end = ending(word)
    if end is None:
        return f"{word}{consonant}({vowel})"
    if vowel == "로":
        return word + ("로" if end in ("v", "l") else "으로")
    return word + (vowel if end == "v" else consonant)


# ------------------------------------------------------------- the study's unit, one term

# The Korean strings say 단위 for the study's unit; a study whose unit is another word (종목
# for the seed's stocks) gets that word everywhere, its particles fitted, so a Korean report
# uses one term for one concept. Set for the length of one render (report.writeup.render).
_UNIT: ContextVar[str] = ContextVar("benchkit_ko_unit", default="단위")
_UNIT_WORD = re.compile(r"단위(으로|로|을|를|이|가|은|는|과|와)?")


@contextmanager
def study_unit(word: str) -> Iterator[None]:
    """Within the block, Korean report strings name the study's unit `word`."""
    token = _UNIT.set(word or "단위")
    try:
        yield
    finally:
        _UNIT.reset(token)


def with_unit(text: str) -> str:
    """`text` with 단위 (and the particle after it) as the study's unit word."""
    word = _UNIT.get()
    if word == "단위" or "단위" not in text:
        return text
    return _UNIT_WORD.sub(lambda m: particle(word, m.group(1)) if m.group(1) else word, text)


# ------------------------------------------------------------ English left in Korean prose

_CODE = re.compile(r"`[^`]*`|!\[[^\]]*\]\([^)]*\)|\]\([^)]*\)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*|[가-힣]+")
# Units and symbols a Korean engineer writes in Latin letters.
UNITS = frozenset({"s", "ms", "tok", "b", "gb", "mb", "mib", "w", "j", "k", "m", "n", "x"})


def english_prose(md: str, names: frozenset[str] = frozenset()) -> tuple[int, list[str]]:
    """The words of a Korean Markdown page, and those that are English prose: Latin words
    that are not code (backticks), links or images, not names (any capital letter, or in
    `names`: backends, models, fixtures as the data spell them), not identifiers (digits,
    '_', '.', '-') and not units. What a reader would see as an untranslated English word."""
    text = _CODE.sub(" ", md.replace("\\_", "_"))
    words = _WORD.findall(text)
    english = [
        w
        for w in words
        if w[0].isascii()
        and not re.search(r"[0-9_.\-]", w)
        and not any(c.isupper() for c in w)
        and w.lower() not in UNITS
        and w.lower() not in names
    ]
    return len(words), english


# ------------------------------------------------------------- a page's Korean spacing

# Outside code: a space between a Hangul syllable and "(" (Korean writes "8개(잠정)"), and
# two parentheticals in a row, which a reader found chained thirteen times a post.
_SPACE_PAREN = re.compile(r"(?<=[가-힣]) \((?!\))")
_CHAIN = re.compile(r"\)\((?=[^)]*[가-힣])")
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)


# A list of items joined by "; " (the English join of items that hold commas themselves):
# Korean prose has no semicolon (review 9), so items without commas are joined by commas and
# items with commas by a middle dot, 가운뎃점 ("CUDA, 슬롯 1개 · Vulkan, 슬롯 1개").
_SEMI = re.compile(r"; ")
_ITEM_STOP = "(:.|\n"


def _semicolon(text: str) -> str:
    def join(m: re.Match[str]) -> str:
        before = text[: m.start()]
        left = before[max(before.rfind(c) for c in _ITEM_STOP) + 1 :]
        after = text[m.end() :]
        ends = [i for i in (after.find(c) for c in ");.|\n") if i >= 0]
        right = after[: min(ends, default=len(after))]
        return " · " if ", " in left or ", " in right else ", "

    return _SEMI.sub(join, text)


def tidy(md: str) -> str:
    """A Korean page's spacing and brackets, code spans and blocks left alone: no space
    before "(" after a Korean word, ")(" between two parentheticals made one (", "), and no
    semicolon between items (_semicolon)."""
    parts = _CODE.split(md)
    for i in range(0, len(parts), 2):
        text = _SPACE_PAREN.sub("(", parts[i])
        parts[i] = _semicolon(_CHAIN.sub(", ", text))
    return "".join(parts)


# The study's question as written in 해라체 ("쓰는가?", "어디인가?"), asked in the post's
# 합니다체 ("쓸까요?", "어디일까요?"): the stem's last syllable takes ㄹ, or 을 after a final
# consonant other than ㄹ.
_QUESTION = re.compile(r"([가-힣])(는가)(?=[?,])")
_COPULA = re.compile(r"인가(?=[?,])")


def question(text: str) -> str:
    """A lead's question in 합니다체 (a reader found 해라체 questions in a 합니다체 post)."""

    def polite(m: re.Match[str]) -> str:
        stem = m.group(1)
        code = ord(stem) - 0xAC00
        final = code % 28
        if final == 0:  # no final consonant: it takes ㄹ (쓰 → 쓸)
            return chr(ord(stem) + 8) + "까요"
        if final == 8:  # ㄹ already (만들 → 만들까요)
            return stem + "까요"
        return stem + "을까요"

    return _QUESTION.sub(polite, _COPULA.sub("일까요", text))

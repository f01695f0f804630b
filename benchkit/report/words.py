"""The report's word tables: names of backends, factors, statuses, effects, drafters,
objectives and attributes in English and Korean, one row per word so each word sits
beside its translation. `i18n` looks words up in them."""

from __future__ import annotations

BACKENDS = {
    "vulkan": "Vulkan",
    "hip": "HIP",
    "cuda": "CUDA",
    "cpu": "CPU",
    "metal": "Metal",
    "sycl": "SYCL",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "external": "external",
}


# Whether each name, read aloud in Korean, ends in a consonant (HIP is "힙", CUDA "쿠다",
# CPU "씨피유"): that picks the particle (이/가, 은/는).
KO_FINAL_CONSONANT = {
    "Vulkan": True,
    "HIP": True,
    "CUDA": False,
    "CPU": False,
    "Metal": True,
    "SYCL": True,
    "vLLM": True,
    "SGLang": True,
}


def word_table(*rows: tuple[str, str, str]) -> dict[str, dict[str, str]]:
    """{lang: {key: word}} from (key, English, Korean) rows: one row per word keeps each
    word beside its translation."""
    return {"en": {k: en for k, en, _ in rows}, "ko": {k: ko for k, _, ko in rows}}


FACTORS = word_table(
    ("backend", "backend", "백엔드"),
    ("slots", "parallel slots", "동시 슬롯"),
    ("mtp", "MTP", "MTP"),
    ("projection", "projection", "환산"),
    ("build", "build", "빌드"),
    ("repeats", "repeats", "반복"),
    ("validity", "validity", "유효성"),
)


STATUS_WORDS = word_table(
    ("complete", "complete", "완료"),
    ("provisional", "provisional", "잠정"),
    ("incomplete", "incomplete", "미완주"),
    ("failed", "failed", "실패"),
    ("unavailable", "unavailable", "사용 불가"),
    ("not run", "not run", "실행 안 됨"),
)


EFFECT_WORDS = word_table(
    ("helps", "helps", "도움"),
    ("hurts", "hurts", "손해"),
    ("no difference", "no difference", "차이 없음"),
    ("faster", "faster", "빨라짐"),
    ("slower", "slower", "느려짐"),
    ("mixed", "mixed", "엇갈림"),
)


DRAFTERS = {
    "en": {"mtp": "MTP", "spec=draft": "a draft model", "spec=ngram": "n-gram drafting"},
    # With the topic particle each takes (모델은, 투기는).
    "ko": {"mtp": "MTP는", "spec=draft": "드래프트 모델은", "spec=ngram": "n-gram 투기는"},
}


OBJECTIVE_WORDS = {
    "en": {
        "s_per_unit_throughput": "seconds per unit (throughput basis)",
        "s_per_unit_slot_latency": "seconds per unit (slot-latency basis)",
        "ttft_ms": "time to first token",
        "itl_ms": "inter-token latency",
    },
    "ko": {
        "s_per_unit_throughput": "단위당 초(처리량 기준)",
        "s_per_unit_slot_latency": "단위당 초(슬롯 지연 기준)",
        "ttft_ms": "첫 토큰까지 시간",
        "itl_ms": "토큰 간 지연",
    },
}


ATTRIBUTES = {
    "en": {
        "build": "llama-server build",
        "model": "model file",
        "sampling": "sampling",
        "workload": "workload",
        "hardware": "hardware",
    },
    "ko": {
        "build": "llama-server 빌드",
        "model": "모델 파일",
        "sampling": "샘플링",
        "workload": "워크로드",
        "hardware": "하드웨어",
    },
}


CONTEXT_WORDS = {
    "ko": {
        "builds": "빌드",
        "sampling": "샘플링",
        "workload": "워크로드",
        "model": "모델",
        "hardware": "하드웨어",
    }
}

"""What the warm-up sends before a timed pass (the plan; tests/test_warmup_integration.py
runs it against a real llama-server)."""

from __future__ import annotations

from benchkit.client.warmup import SHORT_PROMPT, WARMUP_TOKENS, batch_sizes, merged, plan_warmup


def test_every_batch_size_up_to_the_slot_count_is_warmed() -> None:
    assert batch_sizes(1) == [1]
    assert batch_sizes(8) == [1, 2, 3, 4, 5, 6, 7, 8]
    # Past 16: powers of two and the count itself, not every size.
    assert batch_sizes(100) == [*range(1, 17), 32, 64, 100]


def test_prompts_cover_the_workload_lengths_and_the_micro_batch() -> None:
    # Shortest, median (1,050 of 300, 900, 1,200, 2,500) and longest; one micro-batch and one
    # with a tail; a short prompt.
    plan = plan_warmup([1200, None, 300, 900, 2500], slots=4, ubatch=512, ctx_per_slot=4096)
    assert plan.prompt_lengths == sorted({SHORT_PROMPT, 300, 1050, 2500, 512, 520})
    assert plan.batch_sizes == [1, 2, 3, 4]
    assert plan.decode_tokens == WARMUP_TOKENS


def test_prompts_longer_than_a_slot_holds_are_cut_to_fit() -> None:
    plan = plan_warmup([5000], slots=1, ubatch=512, ctx_per_slot=1024)
    assert max(plan.prompt_lengths) == 1024 - WARMUP_TOKENS - 1


def test_provenance_keeps_every_pass_seconds_and_the_first_error() -> None:
    a = plan_block(1.5, None)
    b = plan_block(0.5, "HTTPError: boom")
    m = merged(merged(None, a), b)
    assert m["seconds_by_pass"] == [1.5, 0.5] and m["error"] == "HTTPError: boom"
    assert m["seconds"] == 1.5


def plan_block(seconds: float, error: str | None):  # type: ignore[no-untyped-def]
    return {
        "enabled": True, "calls": 3, "seconds": seconds, "prompt_lengths": [16],
        "batch_sizes": [1], "decode_tokens": 32, "error": error, "seconds_by_pass": [],
    }  # fmt: skip

"""A pass's server counters with the warm-up's share taken out (server.metrics.since)."""

from __future__ import annotations

import pytest

from benchkit.server.metrics import ServerCounters, since


def test_counters_after_the_warmup_are_the_pass_own() -> None:
    before: ServerCounters = {
        "prompt_tokens": 400, "tokens_predicted": 100, "n_decode": 100,
        "busy_slots_per_decode": 2.0, "n_tokens_max": 300, "draft_tokens": 60,
        "draft_tokens_accepted": 30, "draft_steps": 20, "draft_accepted_by_position": [20, 10],
    }  # fmt: skip
    after: ServerCounters = {
        "prompt_tokens": 1400, "tokens_predicted": 1100, "n_decode": 500,
        "busy_slots_per_decode": 3.6, "n_tokens_max": 900, "draft_tokens": 360,
        "draft_tokens_accepted": 90, "draft_steps": 120, "draft_accepted_by_position": [70, 20],
    }  # fmt: skip
    d = since(before, after)
    assert d is not None
    assert d["prompt_tokens"] == 1000 and d["tokens_predicted"] == 1000 and d["n_decode"] == 400
    # Busy slots: 3.6 x 500 - 2.0 x 100 = 1,600 over 400 steps.
    assert d["busy_slots_per_decode"] == pytest.approx(4.0)
    assert d["n_tokens_max"] == 900  # a gauge: the later reading
    assert d["draft_tokens"] == 300 and d["draft_tokens_accepted"] == 60
    assert d["draft_acceptance"] == pytest.approx(0.2)
    assert d["draft_accepted_by_position"] == [50, 10]
    assert d["draft_acceptance_by_position"] == [pytest.approx(0.5), pytest.approx(0.1)]


def test_without_an_earlier_reading_the_counters_stand() -> None:
    after: ServerCounters = {"n_decode": 5}
    assert since(None, after) == after
    assert since(after, None) is None

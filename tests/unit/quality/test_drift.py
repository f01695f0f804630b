"""Drift arithmetic (benchkit.quality.drift) and the report's choice of reference
(benchkit.report.quality): pure functions on probe records written here."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from benchkit.quality.drift import compare, kl_lumped, not_comparable
from benchkit.quality.probe import ProbeRecord
from benchkit.report.quality import choose_reference, factor_line


def _rec(i: int, greedy: list[int], top: list[list[list[float]]]) -> ProbeRecord:
    return {
        "probe": i,
        "unit": "u",
        "seq": 0,
        "prompt_tokens": 8,
        "forced": [1, 2],
        "greedy": greedy,
        "top": top,
        "error": None,
    }


def _dist(probs: dict[int, float]) -> list[list[float]]:
    return [[t, math.log(p)] for t, p in sorted(probs.items(), key=lambda kv: -kv[1])]


def test_kl_over_the_whole_vocabulary_is_the_exact_divergence() -> None:
    p, q = {1: 0.5, 2: 0.3, 3: 0.2}, {1: 0.4, 2: 0.4, 3: 0.2}
    exact = sum(p[t] * math.log(p[t] / q[t]) for t in p)
    assert math.isclose(kl_lumped(_dist(p), _dist(q)), exact)
    assert kl_lumped(_dist(p), _dist(p)) == 0.0


@given(
    st.lists(st.floats(0.01, 1.0), min_size=4, max_size=8),
    st.lists(st.floats(0.01, 1.0), min_size=4, max_size=8),
    st.integers(1, 3),
)
def test_kl_over_the_top_k_never_exceeds_the_full_divergence(
    a: list[float], b: list[float], k: int
) -> None:
    n = min(len(a), len(b))
    p = {i: x / sum(a[:n]) for i, x in enumerate(a[:n])}
    q = {i: x / sum(b[:n]) for i, x in enumerate(b[:n])}
    full = sum(p[t] * math.log(p[t] / q[t]) for t in p)
    top_p, top_q = _dist(p)[:k], _dist(q)[:k]
    assert kl_lumped(top_p, top_q) <= full + 1e-9


def test_identical_answers_are_zero_drift_and_a_change_is_counted_where_it_starts() -> None:
    top = [_dist({1: 0.6, 2: 0.4}), _dist({1: 0.5, 2: 0.5})]
    ref = [_rec(0, [5, 6, 7], top), _rec(1, [5, 6, 7], top)]
    same = compare(ref, ref)
    assert (same.identical, same.changed, same.kld_mean, same.top1_agreement) == (2, 0, 0.0, 1.0)
    other_top = [_dist({1: 0.4, 2: 0.6}), _dist({1: 0.5, 2: 0.5})]
    job = [_rec(0, [5, 9, 7], other_top), _rec(1, [5, 6, 7], top)]
    d = compare(job, ref)
    assert (d.identical, d.changed, d.first_diff_mean) == (1, 1, 1.0)
    assert d.top1_agreement == 0.75  # the first position's most likely token flipped
    assert d.kld_mean is not None and d.kld_mean > 0


def test_probes_of_other_tokens_are_not_compared() -> None:
    ref = [_rec(0, [5], [])]
    other = [{**ref[0], "forced": [3, 4]}]
    why = not_comparable(other, ref)  # type: ignore[arg-type]
    assert why is not None and "other tokens" in why


def test_the_default_reference_is_the_most_conservative_point() -> None:
    jobs = {
        "0": {"backend": "vulkan", "slots": 4, "mtp": True, "cache_type_k": "q8_0"},
        "1": {"backend": "vulkan", "slots": 1, "mtp": True, "cache_type_k": "f16"},
        "2": {"backend": "vulkan", "slots": 1, "mtp": False, "cache_type_k": "q8_0"},
        "3": {"backend": "vulkan", "slots": 1, "mtp": False, "cache_type_k": "f16"},
        "4": {"backend": "hip", "slots": 1, "mtp": False, "cache_type_k": "f16"},
    }
    varying = ["backend", "slots", "mtp", "cache_type_k"]
    planned = {"backend": ["vulkan", "hip"]}
    assert choose_reference(jobs, varying, planned, {}) == ("3", "default")
    assert choose_reference(jobs, varying, planned, {"backend": "hip"}) == ("4", "declared")
    assert choose_reference(jobs, varying, planned, {"slots": 8}) == (None, "declared_missing")


def test_speculative_decoding_that_changes_an_answer_is_flagged_loudly() -> None:
    top = [_dist({1: 0.6, 2: 0.4})] * 2
    ref = [_rec(0, [5, 6], top)]
    job = [_rec(0, [5, 8], top)]
    line = factor_line("MTP on", True, compare(job, ref), "en")
    assert line.startswith("**Greedy speculative decoding must not change an answer, and MTP on")
    lossless = factor_line("MTP on", True, compare(ref, ref), "en")
    assert "changed no answer" in lossless and "lossless" in lossless

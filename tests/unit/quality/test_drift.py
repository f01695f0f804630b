"""Drift arithmetic (benchkit.quality.drift) and the report's choice of reference
(benchkit.report.analysis.quality): pure functions on probe records written here."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from benchkit.quality.drift import compare, kl_lumped, not_comparable
from benchkit.quality.probe import ProbeRecord
from benchkit.report.analysis.quality import choose_reference, factor_line


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


def _one_cell(p_top: list[list[float]], q_top: list[list[float]]) -> float:
    """The bound before: shared tokens one by one, all the rest in one cell."""
    p = {int(t): math.exp(lp) for t, lp in p_top}
    q = {int(t): math.exp(lp) for t, lp in q_top}
    shared = p.keys() & q.keys()
    kl = sum(p[t] * math.log(p[t] / q[t]) for t in shared)
    p_rest = 1 - sum(p[t] for t in shared)
    q_rest = 1 - sum(q[t] for t in shared)
    return kl + (p_rest * math.log(p_rest / q_rest) if p_rest > 1e-12 else 0.0)


@given(
    st.lists(st.floats(0.001, 1.0), min_size=5, max_size=12),
    st.lists(st.floats(0.05, 20.0), min_size=5, max_size=12),
    st.integers(1, 4),
)
def test_kl_bound_is_at_least_the_one_cell_bound_and_at_most_the_full(
    a: list[float], tilt: list[float], k: int
) -> None:
    n = min(len(a), len(tilt))
    p = {i: x / sum(a[:n]) for i, x in enumerate(a[:n])}
    raw = {i: p[i] * tilt[i] for i in range(n)}
    q = {i: x / sum(raw.values()) for i, x in raw.items()}
    full = sum(p[t] * math.log(p[t] / q[t]) for t in p)
    top_p, top_q = _dist(p)[:k], _dist(q)[:k]
    bound = kl_lumped(top_p, top_q)
    assert _one_cell(top_p, top_q) - 1e-9 <= bound <= full + 1e-9


def test_top_lists_that_do_not_overlap_are_far_apart_not_identical() -> None:
    """The H100 study's Vulkan 16 slots agreed with CUDA on 0% of top-1 tokens at a mean KL
    of 1.7e-4 (rules v8): with the rest lumped into one cell, two distributions whose top
    tokens differ read as nearly identical. A token missing from a list is no likelier than
    its last entry, which bounds the divergence away from 0."""
    p = _dist({1: 0.5, 2: 0.3, 3: 0.1, 4: 0.05, 5: 0.05})[:3]
    q = _dist({4: 0.5, 5: 0.3, 6: 0.1, 1: 0.05, 2: 0.05})[:3]
    assert _one_cell(p, q) == 0.0
    assert kl_lumped(p, q) > 1.0


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
    assert line.startswith(
        "**Greedy speculative decoding is meant to keep every answer.** MTP on changed 1 of 1"
    )
    lossless = factor_line("MTP on", True, compare(ref, ref), "en")
    assert "changed no answer" in lossless and "kept every answer here" in lossless


def test_a_flipped_top_token_says_how_far_apart_the_reference_held_the_two() -> None:
    """A near-tie tipping and a changed computation both flip the likeliest token: the
    reference's own gap between the two tokens tells them apart, and the line states it (the
    H100 study's Vulkan 16 slots flipped every position where CUDA's top two tokens were
    about 1% apart)."""
    near = [_dist({1: 0.505, 2: 0.495})] * 2
    ref = [_rec(0, [5, 6], near)]
    job = [_rec(0, [5, 8], [_dist({1: 0.495, 2: 0.505})] * 2)]
    d = compare(job, ref)
    assert d.top1_agreement == 0.0
    assert d.flip_gap is not None and abs(d.flip_gap - (1 - 0.495 / 0.505)) < 1e-9
    assert "were 2.0% apart (the median)" in factor_line("16 slots", False, d, "en")
    assert compare(ref, ref).flip_gap is None

"""Parsing llama-server's /metrics text: every sample, labels kept, and the server's own
speculative-decoding counters as result fields."""

from __future__ import annotations

import pytest

from benchkit.server.metrics import parse_prometheus, server_counters

# Verbatim from llama-server b11434 (tiny-mtp, --spec-type draft-mtp --spec-draft-n-max 3
# --spec-synth-len 2.5, one 64-token completion).
MTP_METRICS = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 5
# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused from the cache
# TYPE llamacpp:prompt_tokens_cached_total counter
llamacpp:prompt_tokens_cached_total 0
# HELP llamacpp:prompt_seconds_total Total time spent processing prompts
# TYPE llamacpp:prompt_seconds_total counter
llamacpp:prompt_seconds_total 0.005188
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 64
# HELP llamacpp:tokens_predicted_seconds_total Total time spent generating tokens
# TYPE llamacpp:tokens_predicted_seconds_total counter
llamacpp:tokens_predicted_seconds_total 0.031784
# HELP llamacpp:n_decode_total Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 25
# HELP llamacpp:n_tokens_max Largest observed sequence length (prompt + generation)
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 68
# HELP llamacpp:spec_decode_num_draft_tokens_total Speculative: Total draft tokens generated
# TYPE llamacpp:spec_decode_num_draft_tokens_total counter
llamacpp:spec_decode_num_draft_tokens_total 69
# HELP llamacpp:spec_decode_num_accepted_tokens_total Speculative: Total draft tokens accepted by the target model
# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter
llamacpp:spec_decode_num_accepted_tokens_total 39
# HELP llamacpp:spec_decode_num_drafts_total Speculative: Total speculative decoding verification steps
# TYPE llamacpp:spec_decode_num_drafts_total counter
llamacpp:spec_decode_num_drafts_total 24
# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 963.763
# HELP llamacpp:predicted_tokens_seconds Average generation throughput in tokens/s
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 1982.13
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 0
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 0
# HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call
# TYPE llamacpp:n_busy_slots_per_decode gauge
llamacpp:n_busy_slots_per_decode 1
# HELP llamacpp:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position
# TYPE llamacpp:spec_decode_num_accepted_tokens_per_pos_total counter
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 17
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="1"} 13
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="2"} 9
"""  # noqa: E501

# The same server without speculative decoding: no per-position series at all.
PLAIN_METRICS = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1.23457e+06
llamacpp:tokens_predicted_total 64
llamacpp:spec_decode_num_draft_tokens_total 0
llamacpp:spec_decode_num_accepted_tokens_total 0
llamacpp:spec_decode_num_drafts_total 0
"""


def test_every_sample_is_read_with_its_labels() -> None:
    s = parse_prometheus(MTP_METRICS)
    assert s["llamacpp:prompt_tokens_total"] == 5
    assert s["llamacpp:prompt_seconds_total"] == pytest.approx(0.005188)
    assert s['llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="2"}'] == 9
    assert not any(k.startswith("#") for k in s)
    assert len(s) == 18


def test_speculative_counters_from_a_real_mtp_server() -> None:
    c = server_counters(parse_prometheus(MTP_METRICS))
    assert c["draft_tokens"] == 69 and c["draft_tokens_accepted"] == 39
    assert c["draft_steps"] == 24
    assert c["draft_acceptance"] == pytest.approx(39 / 69)
    assert c["draft_accepted_by_position"] == [17, 13, 9]
    # Position i is accepted in at most every verification step, and less often than i-1.
    assert c["draft_acceptance_by_position"] == pytest.approx([17 / 24, 13 / 24, 9 / 24])
    assert sum(c["draft_accepted_by_position"]) == c["draft_tokens_accepted"]
    assert c["tokens_predicted"] == 64 and c["n_decode"] == 25 and c["n_tokens_max"] == 68
    assert c["busy_slots_per_decode"] == 1


def test_no_drafts_means_no_acceptance_not_zero() -> None:
    c = server_counters(parse_prometheus(PLAIN_METRICS))
    assert c["draft_tokens"] == 0 and c["draft_acceptance"] is None
    assert c["draft_accepted_by_position"] == [] and c["draft_acceptance_by_position"] == []
    # The server prints 6 significant digits: a large counter arrives rounded.
    assert c["prompt_tokens"] == 1234570
    # Counters the server did not send are unknown, not zero.
    assert c["prompt_tokens_cached"] is None and c["n_decode"] is None


def test_labels_are_normalised_and_timestamps_ignored() -> None:
    s = parse_prometheus('m{b="2", a="1"} 3 1700000000000\nn +Inf\n')
    assert s == {'m{a="1",b="2"}': 3.0, "n": float("inf")}


def test_a_line_that_is_not_a_sample_is_an_error() -> None:
    with pytest.raises(ValueError, match="line 2"):
        parse_prometheus("a 1\nthis is not metrics\n")
    with pytest.raises(ValueError, match="no number"):
        parse_prometheus("a one\n")

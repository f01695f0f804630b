"""The report's word tables: names of backends, and the words for factors, statuses,
effects, drafters, objectives, claim statuses and run attributes, keyed as the verdicts
name them.

Each word is English source text marked for the catalogs with its table's context (`NC_`: a
short word such as "mixed" or "sampling" is translated for where it stands); `i18n`
translates it where it is printed (`trc_marked`); the translations are in the catalogs,
benchkit/locale/<lang>/LC_MESSAGES/benchkit.po. Backend names are names, the same in every
language.
"""

from __future__ import annotations

from benchkit.config import backends
from benchkit.report.lang import NC_

# Each backend's name as its declaration gives it (benchkit.backends).
BACKENDS = {b.name.value: b.label for b in backends.BACKENDS.values()}


FACTORS = {
    "backend": NC_("factor", "backend"),
    "slots": NC_("factor", "parallel slots"),
    "mtp": NC_("factor", "MTP"),
    "projection": NC_("factor", "projection"),
    "build": NC_("factor", "build"),
    "repeats": NC_("factor", "repeats"),
    "validity": NC_("factor", "validity"),
    "capacity": NC_("factor", "capacity under the SLO"),
    # An application's factor, named in the reader's language (샘플링); its values stay code.
    "sampling": NC_("factor", "sampling"),
    # A server or harness setting's own word (the key stays in tables' configs and commands).
    "workload": NC_("factor", "workload"),
    "cache_type_k": NC_("factor", "K cache type"),
    "cache_type_v": NC_("factor", "V cache type"),
    "spec": NC_("factor", "drafting"),
    "spec=draft": NC_("factor", "draft model"),
    "spec=ngram": NC_("factor", "n-gram drafting"),
}


# A setting's value in prose ('an f16 K cache', 'the code-edit-10 workload'), by its key: a
# post says settings in words, never as config keys (issue #45's editor).
SETTINGS = {
    "workload": NC_("setting", "the {value} workload"),
    "sampling": NC_("setting", "{value} sampling"),
    "cache_type_k": NC_("setting", "{value} K cache"),
    "cache_type_v": NC_("setting", "{value} V cache"),
}
SPEC_WORDS = {
    "none": NC_("setting", "no drafting"),
    "draft": NC_("setting", "a draft model"),
    "ngram": NC_("setting", "n-gram drafting"),
}
# Sampling presets with a word of their own: the Korean post writes greedy as 그리디 in every
# sentence, never the preset's English name beside it (review 11: 그리디 and greedy mixed).
SAMPLING_WORDS = {
    "greedy": NC_("setting", "greedy sampling"),
}


STATUS_WORDS = {
    "complete": NC_("status", "complete"),
    "provisional": NC_("status", "provisional"),
    "incomplete": NC_("status", "incomplete"),
    "failed": NC_("status", "failed"),
    "unavailable": NC_("status", "unavailable"),
    "not run": NC_("status", "not run"),
}


EFFECT_WORDS = {
    "helps": NC_("effect", "helps"),
    "hurts": NC_("effect", "hurts"),
    "no difference": NC_("effect", "no difference"),
    "no drafts": NC_("effect", "nothing drafted"),
    "open": NC_("effect", "not decided"),
    "faster": NC_("effect", "faster"),
    "slower": NC_("effect", "slower"),
    "mixed": NC_("effect", "mixed"),
}


CLAIM_STATUS = {
    "supported": NC_("claim", "supported"),
    "refuted": NC_("claim", "refuted"),
    "partly": NC_("claim", "partly supported"),
    "untestable": NC_("claim", "not testable here"),
}


# What a drafting verdict is about, as the subject of a sentence: inside it, and opening it
# (where English writes a capital).
DRAFTERS = {
    "mtp": NC_("drafter", "MTP"),
    "spec=draft": NC_("drafter", "a draft model"),
    "spec=ngram": NC_("drafter", "n-gram drafting"),
}
DRAFTERS_OPENING = {
    "mtp": NC_("drafter opening a sentence", "MTP"),
    "spec=draft": NC_("drafter opening a sentence", "A draft model"),
    "spec=ngram": NC_("drafter opening a sentence", "N-gram drafting"),
}


OBJECTIVE_WORDS = {
    "s_per_unit_throughput": NC_("objective", "seconds per unit (throughput basis)"),
    "s_per_unit_slot_latency": NC_("objective", "seconds per unit (slot-latency basis)"),
    "ttft_ms": NC_("objective", "time to first token"),
    "itl_ms": NC_("objective", "inter-token latency"),
    # Drift limits a study holds its points to (study.quality.limit): shares and divergences,
    # not times.
    "drift_changed": NC_("objective", "the share of probe answers changed"),
    "drift_kld": NC_("objective", "the mean KL divergence from the reference"),
}


# What differed in a job that ran on another setup than the rest.
ATTRIBUTES = {
    "build": NC_("run attribute", "llama-server build"),
    "model": NC_("run attribute", "model"),
    "model_file": NC_("run attribute", "model file"),
    "gpu": NC_("run attribute", "GPU"),
    "sampling": NC_("run attribute", "sampling"),
    "workload": NC_("run attribute", "workload"),
    "hardware": NC_("run attribute", "hardware"),
    "card_memory": NC_("run attribute", "card memory in use at the start"),
    "host_busy": NC_("run attribute", "a host busy with other work"),
}


# The words of the ledger's context keys ("builds hip", "sampling"): what was measured again.
CONTEXT_WORDS = {
    "builds": NC_("changed condition", "builds"),
    "sampling": NC_("changed condition", "sampling"),
    "workload": NC_("changed condition", "workload"),
    "model": NC_("changed condition", "model"),
    "hardware": NC_("changed condition", "hardware"),
    "cards": NC_("changed condition", "cards"),
    "warmup": NC_("changed condition", "warm-up"),
}


# Why a verdict is provisional, as a ledger entry records it (Verdict.reasons).
REASON_WORDS = {
    "single_run": NC_("verdict reason", "one run, so no confidence interval"),
    "no_result": NC_("verdict reason", "no complete result at the recommended point"),
    "no_comparison": NC_("verdict reason", "no complete points to compare"),
    "other_series": NC_("verdict reason", "compared only on another series"),
    "one_slot_count": NC_("verdict reason", "only one slot count completed"),
    "inside_noise": NC_("verdict reason", "a margin inside the noise"),
    "contaminated": NC_("verdict reason", "jobs on another setup"),
    "capped": NC_("verdict reason", "calls that ran to the generation cap"),
    "stalled": NC_("verdict reason", "stalls"),
    "slo_none": NC_("verdict reason", "no point met the study's SLO"),
    "knee_not_reached": NC_("verdict reason", "no slot count beyond the knee measured"),
    "builds_differ": NC_("verdict reason", "backends whose builds differ in more than the backend"),
    "bridge_term_unmeasured": NC_(
        "verdict reason", "a bridge between machines with one point run on both"
    ),
    "restated": NC_(
        "verdict reason", "a figure partly restated from the other points of its machine"
    ),
    "knee_across": NC_("verdict reason", "slot counts compared with the best only across machines"),
    "drafts_rejected": NC_("verdict reason", "drafts almost never accepted"),
    "derived_figures": NC_(
        "verdict reason",
        "figures derived from a publication's stated shapes, not measured (Reference data)",
    ),
    "no_drafts_at": NC_("verdict reason", "settings where the drafter drafted nothing"),
    "run_noise_unmeasured": NC_("verdict reason", "single runs with no run-to-run noise measured"),
    "partial_rounds": NC_("verdict reason", "slot counts whose units did not fill whole rounds"),
    "decided_without_cold": NC_(
        "verdict reason", "a comparison decided only with a cold start left out"
    ),
    "not_exercised": NC_("verdict reason", "the run did not exercise the factor"),
    "no_noise_estimate": NC_("verdict reason", "no noise estimate for single runs"),
    "not_bracketed": NC_("verdict reason", "a capacity the loads tried did not bracket"),
    "capacity_marginal": NC_("verdict reason", "a capacity within the noise of the SLO"),
    "capacity_tie": NC_("verdict reason", "settings that held the same load"),
    "no_slo": NC_("verdict reason", "no SLO declared"),
    "race_undecided": NC_("verdict reason", "a point the race left undecided"),
    "open_pairs": NC_("verdict reason", "comparisons not decided at the margin"),
}

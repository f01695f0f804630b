# ruff: noqa: E501 -- Korean glyphs count double width; its sentences read better unbroken.
"""The report's fixed English strings (section titles, table headers, notices), keyed as
`i18n.strings` gives them to the templates; `strings_ko` holds the same keys in Korean."""

EN: dict[str, str] = {
    "question": "Question",
    "rendered": "Rendered {when} from {source}.",
    "status_complete": "Complete: all {n} planned points finished.",
    "status_complete_one": "Complete: the one planned point finished.",
    "status_finished_provisional": (
        "Every planned point finished ({n}), but the data do not settle {factors} yet; "
        "each section says why."
    ),
    "headline_none": "No verdict: no planned point has a complete result yet",
    "status_provisional": (
        "Provisional: {k} of {n} planned points did not complete ({points}). Verdicts that "
        "depend on them are marked provisional and are not conclusions."
    ),
    "sec_compared": "What is compared with what",
    "basis_note": (
        'Every "seconds per unit" names its basis. **Throughput basis**: wall clock / units '
        "completed, what a batch of units costs; projections use it. **Slot-latency "
        "basis**: the time one slot spends on one unit, about slots x the throughput basis. "
        "Numbers of the two bases are never compared with each other."
    ),
    "objective_note": (
        "The verdicts judge **{objective}** (the study's objective; lower is better){slo}. "
        "Decode and prefill throughput stand beside it as explanations."
    ),
    "objective_slo": "; a point must also keep {limits}",
    "model_line": "Model: {name} ({arch}, {params}, {quant}{size}).",
    "model_params": "{total}B total, {active}B active parameters",
    "synthetic_note": (
        "a random-weight synthetic model benchkit wrote itself; its speed says nothing about "
        "any real model"
    ),
    "hardware_line": "Hardware: {name}{desc}{power}.",
    "power_cap": ", power cap {w} W",
    "gpu_reported": "As the machine reported itself ({source}): {gpus}.",
    "compare_warning": (
        "These numbers hold for this model on this hardware only. Do not compare them with "
        "numbers measured on another model or another card: a MoE and a dense model of similar "
        "size give entirely different speeds on the same card."
    ),
    "sec_workload": "Workload and sampling",
    "workload_line": (
        "Workload {fixture}: {units} units, {calls} calls, {prompt} prompt tokens (mean "
        "{mean_prompt} a call, longest {max_prompt}), {completion} completion tokens; output "
        "policy {policy}, generation cap {cap} tokens."
    ),
    "workload_subset": (
        "Only its first {n} of {units} units were replayed (workload.units={n}): the totals "
        "above are the whole fixture's."
    ),
    "sampling_sent": "Sampling {profile}: sent {fields}.",
    "sampling_unsent": (
        "Sampling {profile}: no sampling fields sent, so the server's defaults applied{defaults}."
    ),
    "sampling_mixed": "Sampling differs between jobs: {profiles}.",
    "sec_setup": "Setup",
    "builds_title": "llama-server builds:",
    "build_date": "; source dated {date}",
    "flags_title": (
        "Every flag passed to llama-server (paths shortened to file names; full paths and the "
        "environment are in each job's result.json). Common to every job:"
    ),
    "flags_per_job": "Each job's flags beyond the common ones (Setup), one line per job that differs:",
    "sec_flags_appendix": "Appendix: flags per job",
    "sec_backend": "Backend",
    "sec_slots": "Parallel slots",
    "sec_mtp": "MTP (speculative decoding)",
    "sec_spec": "Speculative decoding ({value}) against none",
    "sec_build": "Builds compared",
    "sec_repeats": "Repeats and noise",
    "sec_projection": "Projection",
    "tokenizer_mismatch": "Job {job}: the server counted {server} prompt tokens where the fixture records {fixture} ({n} of {calls} completed calls differ: another tokenizer or chat template than the fixture was recorded with).",
    "sec_roofline": "Decode roofline",
    "roofline_intro": "One sequence's decode reads every active weight once per token, so memory bandwidth / (active parameters x bytes per weight) bounds single-stream decode. Bytes per weight come from the model file's size over its parameter count; the share compares the server's own per-sequence decode rate with that ceiling.",
    "col_bpw": "bits/weight",
    "col_gb_token": "GB read per token",
    "col_ceiling": "ceiling tok/s (one sequence)",
    "col_per_seq": "server decode tok/s per sequence",
    "col_share": "share of ceiling",
    "sec_ground_truth": "Agreement with llama.cpp's own benchmarks",
    "ground_truth_intro": "llama-bench and llama-batched-bench ran on the same binary and model file as this sweep. They measure the model alone: no HTTP, no sampling, no scheduler, synthetic prompts.",
    "gt_single_note": "one sequence, no sampling",
    "col_gt_benchkit": "benchkit aggregate decode tok/s (client)",
    "col_gt_server_slot": "server decode tok/s per slot",
    "col_gt_server_agg": "server per slot x slots",
    "col_gt_batched": "llama-batched-bench tg tok/s at that batch",
    "col_gt_ratio": "server / batched-bench",
    "col_gt_config": "config",
    "gt_batched_shape": "llama-batched-bench figures below: its run at npp {pp}, ntg {tg} (`{file}`), the shape nearest this workload's mean call ({prompt} prompt and {completion} completion tokens).",
    "ground_truth_why": "Why they differ: llama-batched-bench decodes all sequences in lock-step with nothing else in the batch and never samples; the server samples every token of every slot on the CPU, mixes prompt chunks of other slots into the same batches, and benchkit's client counts from the first to the last token it received. A ratio far below 1 that falls as slots grow means the server, not the GPU, is the limit at those slot counts.",
    "sec_results": "All results",
    "data_out": "Every number of every job and pass is in `results.csv` beside this page (one row per job, and per pass where a job ran several; in Python: `benchkit.results.frame(folder)`).",
    "sec_definitions": "Definitions",
    "sec_caveats": "Measurement caveats",
    "sec_claims": "Claims checked",
    "sec_corrections": "Corrections",
    "sec_quality": "Quality",
    "sec_other_hw": "Other hardware",
    "sec_untested": "Not run or not complete, and not tried",
    "sec_summary": "Summary",
    "sec_reference": "Reference data",
    "col_job": "job",
    "col_backend": "backend",
    "col_slots": "slots",
    "col_mtp": "MTP",
    "col_status": "status",
    "col_reason": "reason",
    "col_point": "planned point",
    "col_config": "config",
    "col_s_tp": "s/unit (throughput)",
    "col_s_lat": "s/unit (slot latency)",
    "col_decode": "decode tok/s (aggregate)",
    "col_prefill": "prefill tok/s (aggregate)",
    "col_calls": "calls ok / failed",
    "col_cap": "hit cap",
    "col_ratio": "ratio to fastest",
    "col_gain": "decode gain vs previous",
    "col_obj_change": "{objective}: change vs previous",
    "col_uncapped": "without capped calls (estimate)",
    "slo_out": "over the SLO",
    "differs_per_job": "Differs per job:",
    "col_ctx": "context (tokens)",
    "col_off": "MTP off s/unit",
    "col_on": "MTP on s/unit",
    "col_on_off": "on / off",
    "col_effect": "effect",
    "col_acceptance": "draft acceptance",
    "col_base": "baseline s/unit",
    "col_new": "new s/unit",
    "col_change": "change",
    "col_prefill_change": "prefill tok/s",
    "col_decode_change": "decode tok/s",
    "col_n": "runs",
    "col_mean": "mean s/unit",
    "col_cv": "CV",
    "col_ci": "95% CI",
    "col_premise": "premise",
    "col_source": "source",
    "col_expected": "expected",
    "col_measured": "measured",
    "col_verdict": "verdict",
    "col_factor": "factor",
    "col_earlier": "earlier",
    "col_now": "now",
    "col_why": "why",
    "col_date": "published",
    "derived_mark": "†",
    "derived_legend": "† values derived from a publication, not measured by benchkit (see Reference data).",
    "yes": "on",
    "no": "off",
    "not_run": "not run",
    "no_figure_data": "No complete points to plot.",
    "fig_backend": "Seconds per unit (throughput basis) against slots, per backend",
    "fig_slots": "Seconds per unit on both bases, and aggregate decode throughput, against slots",
    "fig_mtp": "MTP on / off: seconds per unit (throughput basis), per slot count",
    "fig_spec": "Drafter on / off: seconds per unit (throughput basis), per slot count",
    "fig_build": "Baseline and new build: seconds per unit (throughput basis), config by config",
    "definitions_intro": "How each metric is measured:",
    "noise_single": (
        "Each point ran once, so run-to-run noise is unknown: a difference smaller than "
        "{gain} (study.knee_gain) is reported as no difference, never as a win."
    ),
    "noise_repeats": (
        "Points that ran more than once: mean, coefficient of variation and 95% confidence "
        "interval of seconds per unit (throughput basis). A difference inside the noise is "
        "reported as no difference."
    ),
    "no_caveats": "None detected in the data.",
    "no_claims": "The study declared no claims to check.",
    "claim_supported": "supported",
    "claim_refuted": "refuted",
    "claim_partly": "partly supported",
    "claim_untestable": "not testable here",
    "claims_intro": "Premises the study declared, checked against the complete measurements:",
    "corrections_none": "No verdict has changed since the earlier publication ({date}).",
    "corrections_first": "First publication of this study: nothing to correct yet.",
    "corrections_no_ledger": (
        "No ledger of earlier publications was given (set study.ledger, or publish with "
        "--publish), so earlier verdicts cannot be checked here."
    ),
    "corrections_intro": "Verdicts that changed since an earlier publication of this study:",
    "confirmed_intro": "Earlier provisional verdicts that the data now confirm:",
    "refuted_claims_intro": "Premises the measurements refuted (see Claims checked):",
    "claim_expected": "expected",
    "claim_measured": "measured",
    "quality_not_measured": (
        "Output quality was not measured: this report is about speed only. A setting that is "
        "fast is not thereby one whose answers are good."
    ),
    "quality_measured": "The study declares that output quality was measured separately.",
    "other_hw_intro": (
        "Results from other hardware, listed for reference only: they are never compared with "
        "the numbers above."
    ),
    "untested_missing": "Planned points without a complete result:",
    "untested_declared": "Not tried, as the study declares:",
    "untested_none": "Every planned point completed, and the study lists nothing as untested.",
    "reference_intro": (
        "Some or all results here are reference data transcribed or derived from a "
        "publication, not measured by benchkit ({jobs} jobs):"
    ),
    "summary_rec": "Recommended setting: {point}.",
    "summary_none": "No recommendation: the data do not single out a setting.",
    "summary_projection": "Projection: {text}",
    "summary_status_provisional": "This write-up is provisional: {why}.",
    "summary_status_complete": "Every planned point completed.",
    "summary_status_evidence": (
        "Every planned point completed, but the data do not settle {factors} yet (see their "
        "sections)."
    ),
    "noise_declared": (
        "Each point ran once. The study declares a run-to-run noise of {noise}: a margin "
        "inside it keeps its direction but leaves the verdict provisional; a difference smaller "
        "than {gain} (study.knee_gain) is no difference."
    ),
    "noise_per_unit": (
        "Each point ran once. Two points are compared on the units both replayed: where the "
        "per-unit ratios between them spread wider than the margin, the verdict is provisional; "
        "a difference smaller than {gain} (study.knee_gain) is no difference."
    ),
    "summary_quality": "Speed only: output quality was not measured.",
    "missing_points": "missing: {points}",
    "missing_many": "{n} planned points it depends on did not complete (listed under Not run)",
    "summary_rec_provisional": (
        "Provisional recommendation: {point}; the data do not settle {factors} yet (see "
        "their sections)."
    ),
    "summary_best_so_far": (
        "No recommendation yet: the best completed point so far is {point}, but planned points "
        "it is compared with did not complete."
    ),
}

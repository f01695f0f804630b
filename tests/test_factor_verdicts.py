"""A verdict for every factor a sweep varies, and none for a factor the run never exercised.

Synthetic sweeps in memory (result.json dicts in the contract schema, as test_analyse builds
them) over the knobs users sweep besides backend, slots and MTP: each test alters the results
so that one kind of factor verdict must come out, and asserts what a reader is told.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchkit.report.analysis.numbers import FactorNumbers, ProjectionNumbers, SlotsNumbers, of
from benchkit.report.analysis.table import factor_columns, tidy
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import factor_words, sentences
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence
from benchkit.report.writeup import headline
from benchkit.results.store import JobResult
from tests.test_analyse import RUN_NOISE, result, unit_spans

# What every job here shares, named in the recommended point.
CPU = {"backend": "cpu", "mtp": False}


def job(
    slots: int = 1,
    s: float = 100.0,
    *,
    units: int = 6,
    seqs: float | None = None,
    prompt: int | None = None,
    **factors: Any,
) -> dict[str, Any]:
    """One result with extra swept factors (`ubatch=512`, `cache_type_k="q8_0"`, ...)."""
    d = result("cpu", slots, s=s, metrics={"units_completed": units, "units_planned": units})
    d["factors"].update(factors)
    if seqs is not None:
        d["metrics"]["seqs_per_step"] = seqs
    if prompt is not None:
        d["provenance"]["workload"] = {"fixture": "w6", "max_prompt_tokens": prompt}
    return d


def sweep(
    datas: list[dict[str, Any]],
    *,
    drift: dict[int, tuple[int, int, float]] | None = None,
    application: tuple[str, ...] = ("sampling",),
    noise: float | None = RUN_NOISE,
) -> an.Sweep:
    """The sweep of `datas`; `drift` gives job -> (answers changed, probes, mean KL) as the
    report's Quality section adds them to the table (folder.analyse_folder)."""
    results = [JobResult(Path(f"/sweep/{i}/result.json"), d) for i, d in enumerate(datas)]
    df = tidy(results)
    if drift:
        df["drift_changed_n"] = df["job"].map({str(j): d[0] for j, d in drift.items()})
        df["drift_probes"] = df["job"].map({str(j): d[1] for j, d in drift.items()})
        df["drift_kld"] = df["job"].map({str(j): d[2] for j, d in drift.items()})
    # Each job's per-unit times, as a real run's calls give the comparison engine: without
    # them every pair is open.
    return an.build_sweep(
        df,
        factor_columns(results),
        {},
        min_effect=0.05,
        knee_gain=0.05,
        noise=noise,
        application=application,
        spans={str(i): _spans(d, i) for i, d in enumerate(datas)},
    )


def _spans(d: dict[str, Any], job: int) -> dict[str, float]:
    """`unit_spans` for as many units as the job completed."""
    six = unit_spans(d, job)
    n = int(d["metrics"].get("units_completed") or 6)
    if n <= 6:
        return dict(list(six.items())[:n])
    s = d["metrics"]["s_per_unit_throughput"]
    return {f"u{k}": s * (1 + 0.001 * ((k * 7 + job * 3) % 5 - 2)) for k in range(n)}


def verdicts(sw: an.Sweep) -> dict[str, an.Verdict]:
    return {v.factor: v for v in an.analyse(sw, 100)}


def test_a_numeric_best_at_the_end_of_its_range_says_larger_values_need_measuring() -> None:
    datas = [
        job(n, s=base * f, ubatch=u)
        for n, base in ((1, 100.0), (2, 60.0))
        for u, f in ((128, 1.3), (256, 1.12), (512, 1.0))
    ]
    v = verdicts(sweep(datas))
    u = v["ubatch"]
    n = of(FactorNumbers, u.numbers)
    assert u.verdict == {"state": "best", "best": 512, "kind": "setting"}
    assert u.status == "complete" and n.edge == "largest" and not n.scope_differs
    # Judged at the slots verdict's point (no knee up to 2 slots: 2 slots).
    assert n.primary == {"slots": 2}
    text = factor_words.factor_sentence(u, "en")
    assert text.startswith("ubatch 512 was best on seconds per unit (throughput basis) at 2 slots")
    # Each value against the best by the engine's comparison (its ratio and repeat range).
    assert "ubatch 128 took 1.30x the time of ubatch 512 (1.29x-1.31x on a repeat" in text
    assert "ubatch 256 took 1.12x the time of ubatch 512 (1.11x-1.13x on a repeat" in text
    assert "It is the largest value tested: larger values were not measured" in text
    # The recommended combination names every swept factor, in the headline too.
    p = v["projection"]
    assert p.point == {"backend": "cpu", "slots": 2, "mtp": False, "ubatch": 512}
    line = headline.headline(v, "en", "unit")
    assert "ubatch 512 was best (the largest tested)" in line
    assert "per 100 units at CPU, 2 slots, MTP off, ubatch 512 (throughput basis)" in line


def test_a_categorical_factor_has_its_answer_drift_beside_its_speed() -> None:
    datas = [
        job(1, s=100.0, cache_type_k="f16"),
        job(1, s=90.0, cache_type_k="q8_0"),
        job(2, s=60.0, cache_type_k="f16"),
        job(2, s=54.0, cache_type_k="q8_0"),
    ]
    drift = {0: (0, 16, 0.0), 1: (3, 16, 0.0042), 2: (0, 16, 0.0), 3: (3, 16, 0.0051)}
    v = verdicts(sweep(datas, drift=drift))
    k = v["cache_type_k"]
    n = of(FactorNumbers, k.numbers)
    assert k.verdict == {"state": "best", "best": "q8_0", "kind": "setting"}
    assert n.edge is None and n.numeric is False
    text = factor_words.factor_sentence(k, "en")
    assert "q8_0 K cache fastest (changed 3 of 16 answers, KL 0.0051)" in text
    assert "f16 K cache took 1.11x the time of q8_0 K cache (" in text
    assert "6 units paired, changed 0 of 16 answers, KL 0)" in text
    assert v["projection"].point == {**CPU, "slots": 2, "cache_type_k": "q8_0"}


def test_a_best_value_that_differs_with_slots_is_stated_per_setting() -> None:
    # 512 is best at 1 slot, 128 at 4 slots: the ubatch verdict depends on the slot count.
    datas = [
        job(1, s=100.0, ubatch=128),
        job(1, s=80.0, ubatch=512),
        job(4, s=30.0, ubatch=128),
        job(4, s=40.0, ubatch=512),
    ]
    v = verdicts(sweep(datas))
    u = v["ubatch"]
    n = of(FactorNumbers, u.numbers)
    assert u.verdict["state"] == "depends" and n.scope_differs
    assert [(s["series"], s["best"]) for s in n.by_series or []] == [
        ({"slots": 1}, 512),
        ({"slots": 4}, 128),
    ]
    assert (
        "the best ubatch depends on the other settings (ubatch 512 at 1 slot and ubatch 128 at "
        "4 slots)" in headline.headline(v, "en", "unit")
    )
    # The recommendation takes the best ubatch at the recommended slot count, not elsewhere.
    assert v["projection"].point == {**CPU, "slots": 4, "ubatch": 128}
    assert "The best value differs between the other settings" in factor_words.factor_sentence(
        u, "en"
    )


def test_one_unit_a_point_leaves_slots_not_exercised_never_a_trend() -> None:
    # The sweep: one unit a point, so one slot was busy whatever the count; the
    # figures fall by run-to-run variation only.
    datas = [
        job(n, s=s, units=1, seqs=1.0, ubatch=u)
        for n, s in ((1, 10.0), (2, 9.4), (3, 9.9), (4, 8.3))
        for u in (128, 256)
    ]
    v = verdicts(sweep(datas, noise=None))
    s = v["slots"]
    sn = of(SlotsNumbers, s.numbers)
    assert s.verdict is None and s.status == "provisional" and s.reasons == ["not_exercised"]
    assert sn.not_exercised is not None and sn.not_exercised["why"] == "units"
    assert sn.rows, "the table stays: its sequences per step are the evidence"
    text = sentences.slots_sentence(s, "en")
    assert text.startswith("The run did not exercise parallel slots (1 slot, 2 slots, 3 slots")
    assert "replay at least 8 units a point" in text
    line = headline.headline(v, "en", "unit")
    assert "No knee" not in line and "Parallel slots were not exercised" in line
    # The other factor, compared on one unit a point without declared noise, cannot tell.
    u = v["ubatch"]
    assert "no_noise_estimate" in u.reasons and u.status == "provisional"
    assert "cannot be told from run-to-run variation; 3 units a point" in (
        factor_words.factor_sentence(u, "en")
    )
    # The projection is at the fewest slots, never at the noise's best count.
    assert v["projection"].point is not None and v["projection"].point["slots"] == 1


def test_slots_that_ran_one_sequence_per_step_are_not_exercised() -> None:
    datas = [job(n, s=s, units=8, seqs=1.02) for n, s in ((1, 10.0), (2, 8.0), (4, 7.0))]
    s = verdicts(sweep(datas))["slots"]
    idle = of(SlotsNumbers, s.numbers).not_exercised
    assert s.verdict is None and idle is not None and idle["why"] == "seqs_per_step"
    assert "at most 1.02 sequences per decode step" in sentences.slots_sentence(s, "en")


def test_a_ubatch_above_every_prompt_is_not_exercised() -> None:
    datas = [job(1, s=s, prompt=300, ubatch=u) for u, s in ((512, 10.0), (1024, 9.0))]
    u = verdicts(sweep(datas))["ubatch"]
    n = of(FactorNumbers, u.numbers)
    assert u.verdict["state"] == "not exercised" and u.point is None
    assert n.not_exercised is not None and n.not_exercised["prompt_tokens"] == 300
    assert "covers the longest prompt in flight (300 tokens)" in factor_words.factor_sentence(
        u, "en"
    )
    # Below the longest prompt, the values differ: judged.
    datas = [job(1, s=s, prompt=3000, ubatch=u) for u, s in ((512, 10.0), (1024, 9.0))]
    assert verdicts(sweep(datas))["ubatch"].verdict["state"] == "best"


def test_drafting_that_drafted_nothing_is_not_exercised() -> None:
    datas = []
    for n in (1, 2):
        for on, s in ((False, 100.0 / n), (True, 90.0 / n)):
            d = job(n, s=s)
            d["factors"]["mtp"] = on
            d["metrics"]["draft_tokens"] = 0 if on else None
            datas.append(d)
    m = verdicts(sweep(datas))["mtp"]
    assert m.verdict is None and m.reasons == ["not_exercised"]
    assert "drafted no token" in mtp_sentence(m, "en")


def test_an_application_choice_is_never_the_recommended_setting() -> None:
    # Greedy sampling is faster, and changes answers: it is reported, never recommended.
    datas = [
        job(n, s=base * f, sampling=samp)
        for n, base in ((1, 100.0), (16, 20.0))
        for samp, f in (("greedy", 1.0), ("qwen-recommended", 1.4))
    ]
    drift = {0: (0, 16, 0.0), 1: (5, 16, 0.2), 2: (0, 16, 0.0), 3: (6, 16, 0.2)}
    v = verdicts(sweep(datas, drift=drift))
    samp = v["sampling"]
    assert samp.verdict == {"state": "best", "best": "greedy", "kind": "application"}
    text = factor_words.factor_sentence(samp, "en")
    assert text.startswith("sampling is the application's choice, not a speed setting")
    p = v["projection"]
    assert p.point is not None and "sampling" not in p.point
    pn = of(ProjectionNumbers, p.numbers)
    assert [(a["value"], round(a["seconds"] or 0)) for a in pn.application or []] == [
        ("greedy", 2000),
        ("qwen-recommended", 2800),
    ]
    line = headline.headline(v, "en", "unit")
    # One convention (rules v7): the time as a multiple, where it was measured.
    assert (
        "greedy sampling (your choice, not a setting) was fastest at 16 slots, changed 0 of 16 "
        "answers: qwen-recommended sampling took 1.40x its time" in line
    )
    # The time at each sampling measured, none of them recommended.
    assert "at CPU, 16 slots, MTP off, by the sampling you choose (throughput basis)" in line
    assert " with greedy sampling and " in line
    said = sentences.projection_sentence(p, "en", "unit")
    assert "That is with greedy sampling, one of the values measured, none recommended" in said
    # Not an application choice when the study says so: then it is a setting like any other.
    v = verdicts(sweep(datas, drift=drift, application=()))
    assert v["sampling"].verdict["kind"] == "setting"
    assert v["projection"].point == {**CPU, "slots": 16, "sampling": "greedy"}


def test_no_difference_is_said_and_keeps_the_series_value() -> None:
    datas = [job(1, s=s, flash_attn=fa) for fa, s in (("on", 100.0), ("off", 102.0))]
    v = verdicts(sweep(datas))
    fa = v["flash_attn"]
    assert fa.verdict == {"state": "no difference", "best": None, "kind": "setting"}
    assert factor_words.factor_sentence(fa, "en").startswith("flash_attn made no difference")
    assert headline.headline(v, "en", "unit").startswith("Flash_attn made no difference")

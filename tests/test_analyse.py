"""Verdicts follow the data: knees, winners, MTP effects, noise, missing points, builds, claims.

Synthetic sweeps built in memory (result.json dicts in the contract schema) with the knee
in other places, the other backend winning, points missing and repeats inside the noise;
each test asserts the verdict a reader would be told.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchkit.report import ledger
from benchkit.report.analysis import caveats
from benchkit.report.analysis.table import factor_columns, tidy
from benchkit.report.lang import fmt, grammar, i18n
from benchkit.report.ledger import words as ledger_words
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import sentences
from benchkit.report.verdicts.kinds.builds.words import build_sentence
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence
from benchkit.report.verdicts.kinds.drafting.words import mtp_runs_text
from benchkit.report.writeup import headline
from benchkit.results.store import JobResult


def result(
    backend: str = "vulkan",
    slots: int = 1,
    mtp: bool = False,
    s: float | None = 100.0,
    *,
    decode: float | None = None,
    status: str = "complete",
    reason: str | None = None,
    acceptance: float | None = None,
    model: str = "Test-MoE",
    hardware: str = "card",
    workload: str = "w6",
    sampling: str = "qwen-recommended",
    sent: dict[str, Any] | None = None,
    passes: list[float] | None = None,
    metrics: dict[str, Any] | None = None,
    server: dict[str, Any] | None = None,
    build: str = "version: 7000 (abc1234)",
    study: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One result.json in the contract schema: 24 units, whole rounds at every slot count the
    tests use (1, 2, 3, 4, 6 and 8), so that no knee rests on a count left partly idle."""
    m: dict[str, Any] = {
        "units_completed": 24 if status == "complete" else 2,
        "units_planned": 24,
        "calls_completed": 100,
        "calls_failed": 0,
        "wall_s": None if s is None else 24 * s,
        "s_per_unit_throughput": s,
        "s_per_unit_slot_latency": None if s is None else s * slots,
        "decode_tok_s": decode,
        "prefill_tok_s": None,
        "completion_tokens": 140_000,
        "calls_hit_cap": 0,
        "cap_time_share": 0.0,
        "draft_acceptance": acceptance,
        "itl_ms": {"p50": 10.0, "p90": 12.0, "p99": 15.0},
    }
    m.update(metrics or {})
    data: dict[str, Any] = {
        "schema_version": 1,
        "status": status,
        "reason": reason,
        "factors": {
            "backend": backend,
            "slots": slots,
            "mtp": mtp,
            "model": model,
            "hardware": hardware,
            "sampling": sampling,
            "workload": workload,
        },
        "provenance": {
            "model": {"name": model, "architecture": "qwen3moe", "quant": "Q4_K_M"},
            "hardware": {"name": hardware},
            "sampling": {
                "profile": sampling,
                "sent": {"temperature": 0.7} if sent is None else sent,
            },
            "server_build": {"source": "llama.cpp", "version": build},
            "server": server
            or {"argv": ["/opt/llama-server", "--parallel", str(slots)], "ctx_total": 8192 * slots},
            "study": study or {"name": "t", "title": "T", "knee_gain": 0.05},
        },
        "metrics": m,
    }
    if passes is not None:
        data["passes"] = [{"s_per_unit_throughput": p} for p in passes]
    return data


# A declared run-to-run noise (study.noise) of 0.2%: single synthetic runs have no twins, and
# without a run-to-run term no comparison of two single runs is decided (rules v8); this one
# is small enough that the knee and winner arithmetic these tests check decides as before.
RUN_NOISE = 0.002


def sweep_of(
    datas: list[dict[str, Any]],
    planned: dict[str, list[Any]] | None = None,
    min_effect: float = 0.05,
    noise: float | None = RUN_NOISE,
) -> an.Sweep:
    results = [JobResult(Path(f"/sweep/{i}/result.json"), d) for i, d in enumerate(datas)]
    return an.build_sweep(
        tidy(results),
        factor_columns(results),
        planned or {},
        min_effect=min_effect,
        knee_gain=min_effect,
        noise=noise,
        per_repeat={
            str(i): d["passes"] for i, d in enumerate(datas) if isinstance(d.get("passes"), list)
        },
        spans={str(i): unit_spans(d, i) for i, d in enumerate(datas)},
    )


def unit_spans(d: dict[str, Any], job: int, jitter: float = 0.001) -> dict[str, float]:
    """Six units' times around the job's seconds per unit, each off by up to +-0.2% (a pattern
    of its own per job): what a real run's calls.jsonl gives the comparison engine, which
    decides a pair on the spread of its per-unit ratios and leaves a pair without any open."""
    s = d["metrics"].get("s_per_unit_throughput")
    if d["status"] != "complete" or s is None or isinstance(d.get("passes"), list):
        return {}
    return {f"u{k}": s * (1 + jitter * ((k * 7 + job * 3) % 5 - 2)) for k in range(6)}


def verdicts_of(sw: an.Sweep, units: int = 100) -> dict[str, an.Verdict]:
    return {v.factor: v for v in an.analyse(sw, units)}


SLOTS = [1, 2, 3, 4, 6, 8]


def slot_curve(decode: dict[int, float], backend: str = "vulkan") -> list[dict[str, Any]]:
    """A slots series whose seconds per unit follow the decode curve."""
    return [result(backend, n, s=round(20_000 / d, 1), decode=d) for n, d in decode.items()]


# ---------------------------------------------------------------------------------- knee


def test_knee_is_the_smallest_count_within_the_margin_of_the_best() -> None:
    def cost(rates: list[float]) -> list[float | None]:
        return [1 / r for r in rates]  # seconds per unit from units per second

    assert an.knee([1, 2, 3, 4, 6, 8], cost([92, 151, 192, 226, 229, 221]), 0.05) == (4, True)
    assert an.knee([1, 2, 4, 8], cost([100, 180, 185, 186]), 0.05) == (2, True)
    # A dip followed by a real gain is no knee: 8 still adds more than 5% over 2 and 4.
    assert an.knee([1, 2, 4, 8], cost([100, 150, 149, 200]), 0.05) == (8, False)
    assert an.knee([1, 2, 4, 8], cost([100, 150, 160, 200]), 0.05) == (8, False)
    assert an.knee([1, 2], cost([100, 104]), 0.05) == (1, True)
    # Points an SLO rules out have no cost; a count no different from the best (repeats) is.
    assert an.knee([1, 2, 4], [None, 10.0, 9.0], 0.05) == (4, False)
    assert an.knee([1, 2, 4], [12.0, 10.0, 9.0], 0.05, lambda best, i: i == 1) == (2, True)
    assert an.knee([1, 2], [None, None], 0.05) == (None, False)


def test_slots_knee_follows_the_data_elsewhere() -> None:
    sw = sweep_of(slot_curve({1: 100, 2: 180, 3: 186, 4: 188, 6: 185, 8: 183}))
    s = verdicts_of(sw)["slots"]
    assert s.verdict == 2 and s.status == "complete"
    assert s.numbers.knee_reached is True and s.numbers.latency_grows is True
    beyond = {b["slots"]: b for b in s.numbers.beyond}
    assert beyond[8]["ctx_ratio"] == pytest.approx(4.0)
    assert beyond[4]["latency_ratio"] > 1
    text = sentences.slots_sentence(s, "en")
    assert text.startswith("2 slots was the knee") and "4.00x the context" in text


def test_no_knee_when_the_largest_count_still_gains() -> None:
    sw = sweep_of(slot_curve({1: 100, 2: 190, 4: 350, 8: 600}))
    s = verdicts_of(sw)["slots"]
    # Never complete: nothing beyond 8 slots was measured to show the curve had flattened.
    assert s.verdict == 8 and s.numbers.knee_reached is False and s.status == "provisional"
    assert s.reasons == ["knee_not_reached"]
    assert "No knee up to 8 slots" in sentences.slots_sentence(s, "en")
    assert headline.headline(verdicts_of(sw), "en", "unit").startswith(
        "Provisional: No knee up to 8 slots"
    )


# ------------------------------------------------------------------------------ backend


def test_the_other_backend_can_win_and_ratios_are_per_slot_count() -> None:
    datas = []
    for n, ratio in zip([1, 2, 4], [1.2, 1.25, 1.3], strict=True):
        datas.append(result("hip", n, s=100.0 / n))
        datas.append(result("vulkan", n, s=ratio * 100.0 / n))
    v = verdicts_of(sweep_of(datas))
    b = v["backend"]
    assert b.verdict == "hip" and b.status == "complete" and b.basis == an.THROUGHPUT
    lo, hi = b.numbers.ratio_range["vulkan"]
    assert (lo, hi) == (pytest.approx(1.2), pytest.approx(1.3))
    assert [c["ratios"]["vulkan"] for c in b.numbers.contexts] == pytest.approx([1.2, 1.25, 1.3])
    assert sentences.backend_sentence(b, "en").startswith("HIP won")
    assert "Vulkan took 1.20x–1.30x the time of HIP" in sentences.backend_sentence(b, "en")
    # Slots 1, 2 and 4 with no knee reached: the headline is provisional, the backend is not.
    assert headline.headline(v, "en", "unit").startswith("Provisional: HIP won")
    assert "HIP 백엔드가 이겼고" in headline.headline(v, "ko", "단위")


def test_backends_that_each_win_somewhere_are_mixed() -> None:
    datas = [
        result("hip", 1, s=100),
        result("vulkan", 1, s=130),
        result("hip", 4, s=60),
        result("vulkan", 4, s=40),
    ]
    b = verdicts_of(sweep_of(datas))["backend"]
    assert b.verdict == "mixed" and b.point is None
    assert b.numbers.winners == {"hip": 1, "vulkan": 1}


def test_a_gap_smaller_than_the_minimum_effect_is_no_difference_without_repeats() -> None:
    datas = [result("hip", 1, s=100), result("vulkan", 1, s=103)]
    b = verdicts_of(sweep_of(datas))["backend"]
    assert b.verdict == "no difference"


# ------------------------------------------------------------------------------ repeats


def test_repeats_inside_the_noise_are_never_a_settled_win() -> None:
    # Vulkan is 10% faster on average, but its repeats spread more than that: by the figures
    # Vulkan, provisional, the open pair named (rules v7: an open comparison is never settled).
    hip = [110, 90, 125, 95]
    vk = [100, 80, 115, 85]
    datas = [result("hip", 2, s=x) for x in hip] + [result("vulkan", 2, s=x) for x in vk]
    v = verdicts_of(sweep_of(datas))
    b = v["backend"]
    assert b.status == "provisional" and b.reasons == ["open_pairs"]
    assert b.numbers.open and b.numbers.open[0]["basis"] == "repeats"
    rep = v["repeats"]
    assert rep.verdict["configs_repeated"] == 2
    row = next(r for r in rep.numbers.configs if r["config"]["backend"] == "hip")
    assert row["n"] == 4 and row["mean"] == pytest.approx(105.0)
    assert row["cv"] == pytest.approx(250**0.5 / 105)
    assert row["ci95"] == pytest.approx(3.182 * row["sd"] / 2)
    # The same gap with tight repeats is a real win.
    tight = [result("hip", 2, s=x) for x in (108, 109, 108.5)] + [
        result("vulkan", 2, s=x) for x in (100, 100.5, 99.5)
    ]
    assert verdicts_of(sweep_of(tight))["backend"].verdict == "vulkan"


def test_repeats_within_one_job_come_from_its_passes() -> None:
    datas = [
        result("hip", 1, s=100, passes=[90, 110, 100]),
        result("vulkan", 1, s=96, passes=[80, 112, 96]),
    ]
    sw = sweep_of(datas)
    assert sw.cells[0].stats(an.THROUGHPUT).n == 3  # type: ignore[union-attr]
    assert verdicts_of(sw)["backend"].verdict == "no difference"


def test_mtp_inside_the_noise_is_not_decided() -> None:
    # A pair the noise leaves open names no effect: "no difference" needs a decided pair
    # within the margin (the CPU study's review).
    datas = [result("vulkan", 1, False, s=x) for x in (100, 120, 90)]
    datas += [result("vulkan", 1, True, s=x, acceptance=0.5) for x in (95, 118, 88)]
    m = verdicts_of(sweep_of(datas))["mtp"]
    assert m.verdict == [{"from": None, "to": None, "effect": "open"}]


def test_high_spread_is_a_caveat() -> None:
    datas = [result("vulkan", 1, s=x) for x in (100, 130, 80)]
    sw = sweep_of(datas)
    kinds = {c["kind"]: c for c in an.detect_caveats(sw.df, {}, sw)}
    assert kinds["spread"]["configs"][0]["cv"] > 0.10


# ---------------------------------------------------------------------------------- MTP


def test_mtp_effect_per_slot_count_with_acceptance() -> None:
    datas = []
    for n, ratio in {1: 0.8, 2: 1.12, 3: 1.58, 4: 1.5}.items():
        datas.append(result("vulkan", n, False, s=200.0 / n, decode=50.0 * n))
        datas.append(result("vulkan", n, True, s=ratio * 200.0 / n, acceptance=0.5))
    v = verdicts_of(sweep_of(datas))
    m = v["mtp"]
    assert m.verdict == [
        {"from": 1, "to": 1, "effect": "helps"},
        {"from": 2, "to": None, "effect": "hurts"},
    ]
    assert m.numbers.acceptance_range == [0.5, 0.5]
    assert (
        mtp_runs_text(m.verdict, m.numbers.largest, "en")
        == "helped only at 1 slot and hurt at 2+ slots"
    )
    assert (
        mtp_runs_text(m.verdict, m.numbers.largest, "ko")
        == "슬롯 1개에서만 도움이 됐고, 슬롯 2개 이상에서는 손해였습니다"
    )
    # The projection takes MTP where it helps at the knee, else off.
    assert v["projection"].point is not None and v["projection"].point["mtp"] is False


def test_mtp_that_helps_everywhere_is_recommended_on() -> None:
    datas = []
    for n in (1, 2, 4):
        datas.append(result("vulkan", n, False, s=200.0 / n, decode=50.0 * n))
        datas.append(result("vulkan", n, True, s=0.7 * 200.0 / n, acceptance=0.8))
    v = verdicts_of(sweep_of(datas))
    assert (
        mtp_runs_text(v["mtp"].verdict, v["mtp"].numbers.largest, "en")
        == "helped at every slot count"
    )
    assert v["projection"].point is not None and v["projection"].point["mtp"] is True


def test_each_drafter_of_the_spec_group_gets_its_own_verdict() -> None:
    datas = []
    for n, draft, ngram in ((1, 0.7, 1.01), (2, 0.9, 0.99), (4, 1.3, 1.02)):
        for spec, ratio in (("none", 1.0), ("draft", draft), ("ngram", ngram)):
            d = result(
                "cpu",
                n,
                s=ratio * 100.0 / n,
                decode=None if spec != "none" else 40.0 * n,
                acceptance=None if spec == "none" else 0.6,
            )
            d["factors"]["spec"] = spec
            datas.append(d)
    v = verdicts_of(sweep_of(datas))
    assert v["spec=draft"].verdict == [
        {"from": 1, "to": 2, "effect": "helps"},
        {"from": 4, "to": None, "effect": "hurts"},
    ]
    assert v["spec=ngram"].verdict == [{"from": 1, "to": None, "effect": "no difference"}]
    assert mtp_sentence(v["spec=draft"], "en").startswith(
        "A draft model helped only at 1–2 slots and hurt at 4 slots"
    )
    # The knee is 4 slots (decode keeps gaining); no drafter helps there, so none is advised.
    assert v["projection"].point is not None and v["projection"].point["spec"] == "none"
    head = headline.headline(v, "en", "unit")
    assert "a draft model helped only at 1–2 slots" in head
    assert "n-gram drafting made no difference at any slot count" in head


# ------------------------------------------------------------------------------ validity


def test_a_missing_point_makes_verdicts_provisional_and_is_named() -> None:
    # Slots 1-3 complete, 4 failed, 6 never ran: 3 is best so far, never the answer.
    datas = slot_curve({1: 100, 2: 170, 3: 220})
    datas.append(result("vulkan", 4, s=None, status="failed", reason="server crashed"))
    sw = sweep_of(datas, planned={"slots": [1, 2, 3, 4, 6]})
    v = verdicts_of(sw)
    s = v["slots"]
    assert s.status == "provisional" and s.verdict == 3 and s.numbers.knee_reached is False
    assert [(m.point["slots"], m.status, m.reason) for m in s.missing] == [
        (4, "failed", "server crashed"),
        (6, "not run", None),
    ]
    assert v["validity"].verdict == "provisional"
    assert v["validity"].numbers.to_json() == {"planned": 5, "completed": 3}
    head = headline.headline(v, "en", "unit")
    assert head.startswith("Provisional:") and "3 slots is only the best completed point" in head
    assert "3 slots was the knee" not in head
    text = sentences.slots_sentence(s, "en")
    assert text.startswith(
        "Provisional: 3 slots is only the best completed point, not a conclusion"
    )
    assert v["projection"].status == "provisional"
    assert "depends_on:slots" in v["projection"].reasons


def test_a_planned_point_with_identity_problem_does_not_count() -> None:
    bad = result(
        "vulkan",
        2,
        s=10.0,
        decode=999,
        server={"alias": "job-2", "props": {"total_slots": 9, "model_alias": "other"}},
    )
    datas = [result("vulkan", 1, s=100.0, decode=100), bad]
    sw = sweep_of(datas)
    assert [m.point for m in sw.missing] == [{"slots": 2}]
    assert "9 slots" in str(sw.missing[0].reason)
    kinds = {c["kind"] for c in an.detect_caveats(sw.df, {}, sw)}
    assert "identity" in kinds


def test_planned_space_comes_from_the_study_and_the_sweep_overrides() -> None:
    swept = an.parse_sweep_overrides(
        [
            "backend=vulkan,hip",
            "slots=1,2,4",
            "mtp=choice(false,true)",
            "+rep=range(1,4)",
            "hydra.sweep.dir=/x",
            "study.lang=ko",
            "model=qwen",
            "server.ubatch=512,2048",
            "backend.build_requires=[a,b]",
            # What a regex misses and Hydra's own parser does not.
            "server.cache_type_k=sort(q8_0,f16)",
            "+note='a,b',c",
            "spec=tag(drafting,choice(none,draft))",
            "server.ctx=interval(1024,4096)",
        ]
    )
    assert swept == {
        "backend": ["vulkan", "hip"],
        "slots": [1, 2, 4],
        "mtp": [False, True],
        "rep": [1, 2, 3],
        "server.ubatch": [512, 2048],
        "server.cache_type_k": ["f16", "q8_0"],
        "note": ["a,b", "c"],
        "spec": ["none", "draft"],
    }
    planned = an.planned_space({"slots": [1, 2, 4, 8]}, swept)
    assert planned["slots"] == [1, 2, 4, 8] and planned["ubatch"] == [512, 2048]


def test_projection_is_units_times_seconds_per_unit_on_the_throughput_basis() -> None:
    v = verdicts_of(sweep_of(slot_curve({1: 100, 2: 180, 4: 186})), units=100)
    p = v["projection"]
    assert p.basis == an.THROUGHPUT
    assert p.point == {"backend": "vulkan", "mtp": False, "slots": 2}
    assert p.numbers.seconds == pytest.approx(100 * round(20_000 / 180, 1))
    assert p.verdict == pytest.approx(round(100 * round(20_000 / 180, 1) / 3600, 2))
    assert p.reasons == ["single_run"]


# ------------------------------------------------------------------------------- builds


def test_builds_compare_config_by_config_on_one_basis() -> None:
    base = sweep_of(
        [
            result(
                "vulkan",
                3,
                s=188.5,
                decode=190.0,
                metrics={"prefill_tok_s": 2476.0},
                sampling="unspecified",
            )
        ]
    )
    new = sweep_of([result("vulkan", 3, s=168.0, decode=191.0, metrics={"prefill_tok_s": 2884.0})])
    b = an.compare_builds(new, base)
    assert b.verdict == "faster" and b.status == "complete"
    (pair,) = b.numbers.pairs
    assert pair["change"] == pytest.approx(168.0 / 188.5 - 1)
    assert pair["prefill_effect"] == "faster" and pair["decode_effect"] == "no difference"
    assert b.numbers.differs == {"sampling": ["unspecified", "qwen-recommended"]}
    text = build_sentence(b, "en")
    assert text.startswith("The new build was 11% faster")
    assert "prefill 2,476 → 2,884 tok/s" in text and "decode 190 → 191 tok/s (unchanged)" in text


def test_builds_on_different_workloads_are_not_compared() -> None:
    base = sweep_of([result("vulkan", 3, s=188.5, workload="w6")])
    new = sweep_of([result("vulkan", 3, s=168.0, workload="w12")])
    b = an.compare_builds(new, base)
    assert b.verdict == "not comparable" and b.numbers.pairs == []
    assert b.numbers.blocked_by == {"workload": ["w6", "w12"]}
    assert "not on the same basis" in build_sentence(b, "en")


# ------------------------------------------------------------------------ claims, caveats


def test_claims_are_supported_refuted_or_untestable() -> None:
    datas = [result("hip", n, True, s=100, acceptance=a) for n, a in ((1, 0.5), (2, 0.52))]
    sw = sweep_of(datas)
    claims = an.check_claims(
        sw.df,
        [
            {
                "premise": "77-95% on HIP",
                "metric": "draft_acceptance",
                "expected_min": 0.77,
                "expected_max": 0.95,
            },
            {
                "premise": "about half",
                "metric": "draft_acceptance",
                "expected_min": 0.4,
                "expected_max": 0.6,
            },
            {"premise": "one in range", "metric": "draft_acceptance", "expected_min": 0.51},
            {"premise": "quality", "metric": "rank_ic", "expected_min": 0.1},
        ],
    )
    assert [c["status"] for c in claims] == ["refuted", "supported", "partly", "untestable"]
    assert (claims[0]["measured_min"], claims[0]["measured_max"]) == (0.5, 0.52)


def test_caveats_found_in_the_data() -> None:
    unspecified = result(
        "vulkan",
        8,
        s=100,
        sent={},
        server={"argv": ["x"], "props": {"default_sampling": {"temperature": 0.8}}},
        metrics={
            "calls_hit_cap": 3,
            "cap_time_share": 0.21,
            "itl_ms": {"p50": 9.0, "p90": 40.0, "p99": 1600.0},
        },
    )
    other = result("hip", 8, s=130, build="version: 6400 (0ld)")
    datas = [unspecified, other]
    sw = sweep_of(datas)
    records = {str(i): d for i, d in enumerate(datas)}
    kinds = {c["kind"]: c for c in an.detect_caveats(sw.df, records, sw)}
    assert kinds["cap"]["calls"] == 3 and kinds["cap"]["max_share"] == pytest.approx(0.21)
    assert kinds["rate_swing"]["jobs"][0]["ratio"] == pytest.approx(1600 / 9)
    assert kinds["sampling_unspecified"]["defaults"] == {"temperature": 0.8}
    assert set(kinds["builds_differ"]["builds"]) == {"vulkan", "hip"}
    texts = [caveats.caveat_sentence(c, "en") for c in kinds.values()]
    assert any("21% of call time" in t for t in texts)
    assert any("server's defaults applied (temperature=0.8)" in t for t in texts)


def test_a_software_rasteriser_is_a_caveat_in_both_languages() -> None:
    cpu = result("cpu", 1, s=30)
    soft = result("vulkan", 1, s=600)
    soft["provenance"]["server_build"] = {
        "version": "version: 11434 (abc)",
        "software_device": "Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits)",
        "flash_attn_forced_off": "llvmpipe crashes in flash attention",
    }
    datas = [cpu, soft]
    sw = sweep_of(datas)
    kinds = {c["kind"]: c for c in an.detect_caveats(sw.df, {"0": cpu, "1": soft}, sw)}
    c = kinds["software_device"]
    assert c["devices"] == {"vulkan": "Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits)"}
    assert c["flash_attn_off"] == ["vulkan"]
    en = caveats.caveat_sentence(c, "en")
    assert "says nothing about any GPU" in en and "flash attention off" in en
    assert "GPU에 대해 아무것도" in caveats.caveat_sentence(c, "ko")


def test_jobs_timed_on_the_httpx_fallback_are_a_caveat() -> None:
    raw = result("cpu", 1, s=30)
    raw["provenance"]["client"] = {"path": "raw-http/1.1+SO_TIMESTAMPNS", "fallback": None}
    fell_back = result("cpu", 2, s=20)
    fell_back["provenance"]["client"] = {"path": "httpx", "fallback": "https:// base URL"}
    sw = sweep_of([raw, fell_back])
    kinds = {c["kind"]: c for c in an.detect_caveats(sw.df, {"0": raw, "1": fell_back}, sw)}
    c = kinds["client_httpx"]
    assert c == {"kind": "client_httpx", "jobs": 1, "reasons": ["https:// base URL"]}
    assert "1 job was timed on the httpx path (https:// base URL)" in caveats.caveat_sentence(
        c, "en"
    )
    assert "httpx 경로" in caveats.caveat_sentence(c, "ko")
    # Timed by the kernel everywhere: nothing to say.
    sw = sweep_of([raw])
    assert "client_httpx" not in {c["kind"] for c in an.detect_caveats(sw.df, {"0": raw}, sw)}


# ------------------------------------------------------------------------------- ledger


def _entry(verdicts: list[an.Verdict], date: str, **context: Any) -> dict[str, Any]:
    return ledger.make_entry(
        study="s",
        published_utc=date,
        source="x",
        verdicts=verdicts,
        claims=[],
        context=context,
        headline="h",
    )


def test_a_changed_verdict_is_a_correction_with_the_reason_from_the_earlier_entry() -> None:
    stopped = result("vulkan", 4, s=90.0, status="incomplete", reason="Ctrl-C")
    early = sweep_of(
        [*slot_curve({1: 100, 2: 170, 3: 220}), stopped], planned={"slots": [1, 2, 3, 4]}
    )
    late = sweep_of(
        slot_curve({1: 100, 2: 170, 3: 220, 4: 260, 6: 265}), planned={"slots": [1, 2, 3, 4, 6]}
    )
    first = _entry(an.analyse(early, 100), "2026-09-05", workload="w6")
    second = _entry(an.analyse(late, 100), "2026-09-24", workload="w12")
    corr = ledger.corrections([first], second)
    slots = next(c for c in corr["changes"] if c["factor"] == "slots")
    assert (slots["earlier"], slots["earlier_status"]) == (3, "provisional")
    assert (slots["now"], slots["now_status"]) == (4, "complete")
    (unfinished,) = slots["why"]["unfinished"]
    assert unfinished["point"] == {"slots": 4} and unfinished["status"] == "incomplete"
    assert slots["why"]["changed"] == {"workload": ["w6", "w12"]}
    why = ledger_words.correction_why(slots["why"], "en")
    assert why.startswith("the 4 slots point had not finished (incomplete)")
    assert "measured again with workload w6 → w12" in why
    # Publishing the same verdicts again adds no correction, and keeps the old one listed.
    again = ledger.corrections([first, second], _entry(an.analyse(late, 100), "2026-10-01"))
    assert [c["date"] for c in again["changes"] if c["factor"] == "slots"] == ["2026-09-24"]


def test_a_provisional_verdict_the_data_confirm_is_listed_with_its_status_change() -> None:
    failed = result("vulkan", 8, s=None, status="failed", reason="x")
    early = sweep_of(
        [*slot_curve({1: 100, 2: 180, 4: 186}), failed], planned={"slots": [1, 2, 4, 8]}
    )
    late = sweep_of(slot_curve({1: 100, 2: 180, 4: 186, 8: 184}))
    corr = ledger.corrections(
        [_entry(an.analyse(early, 100), "d1")], _entry(an.analyse(late, 100), "d2")
    )
    # Same value, but the status changed: a correction (value unchanged), and confirmed.
    (slots,) = [c for c in corr["changes"] if c["factor"] == "slots"]
    assert not slots["diff"]["value"] and slots["diff"]["status"]
    assert [m["point"] for m in slots["diff"]["missing_removed"]] == [{"slots": 8}]
    assert {"factor": "slots", "value": 2, "numbers": {"knee_reached": True}} in corr["confirmed"]


def test_ledger_lines_round_trip_and_filter_by_study(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    e = _entry(an.analyse(sweep_of(slot_curve({1: 100, 2: 180})), 100), "d")
    ledger.append(path, e)
    ledger.append(path, dict(e, study="other"))
    assert ledger.load(path, "s") == [json.loads(json.dumps(e))]
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(ledger.UserError, match=r"l\.jsonl:3 is not a JSON line"):
        ledger.load(path, "s")
    assert ledger.ledger_path(None, tmp_path / "blog" / "post", "seed") == (
        tmp_path / "blog" / "seed.ledger.jsonl"
    )
    assert ledger.ledger_path(None, None, "seed") is None


# ----------------------------------------------------------------------- number formats


def test_number_filters_are_pure_and_language_aware() -> None:
    assert fmt.num(1234.56) == "1,234.6" and fmt.num(None) == "–" and fmt.num(float("nan")) == "–"
    assert fmt.integer(664557) == "664,557"
    assert fmt.seconds(0.1234) == "0.123 s" and fmt.seconds(188.5) == "188.5 s"
    assert fmt.seconds(1421.2) == "1,421 s" and fmt.seconds(172.4, "ko") == "172.4초"
    assert fmt.hours(172.4 * 100) == "4.8 h" and fmt.hours(172.4 * 100, "ko") == "4.8시간"
    assert fmt.ratio(1.3607) == "1.36x" and fmt.ratio(1.3607, "ko") == "1.36배"
    assert fmt.pct(0.109) == "11%" and fmt.pct(0.1519, 1) == "15.2%"
    assert fmt.signed_pct(0.18) == "+18%" and fmt.signed_pct(-0.022) == "−2%"
    assert fmt.signed_pct(0.001) == "±0%"
    assert fmt.value(True) == "true" and fmt.value(4.0) == "4" and fmt.value(None) == "–"
    assert fmt.millis(9.04) == "9.0 ms" and fmt.millis(1600) == "1,600 ms"


def test_text_from_results_is_escaped_for_markdown() -> None:
    assert fmt.md_cell("a|b\nc") == "a\\|b c"
    assert fmt.md_cell("<script>x</script>") == "\\<script\\>x\\</script\\>"
    assert fmt.md_cell("**bold** [l](u) `c`") == "\\*\\*bold\\*\\* \\[l\\](u) \\`c\\`"
    assert fmt.code("a`b") == "``a`b``" and fmt.code("`x") == "`` `x ``"


def test_a_names_particle_follows_its_korean_reading() -> None:
    # Every message has its Korean: tests/unit/report/lang/test_translations.py checks the catalogs.
    # A name's particle (a translation's {name:이}) follows how Korean reads the name.
    korean = grammar("ko")
    assert korean.inflect("Vulkan", "이") == "Vulkan이" and korean.inflect("CUDA", "이") == "CUDA가"
    assert korean.inflect("HIP", "은") == "HIP은" and korean.inflect("CPU", "은") == "CPU는"
    assert i18n.span(0.48, 0.52, fmt.pct, "ko") == "48~52%"
    assert i18n.span(0.48, 0.52, fmt.pct, "en") == "48%–52%"

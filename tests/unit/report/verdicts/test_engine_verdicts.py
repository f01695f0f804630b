"""The drafting, factor and projection verdicts on the comparison engine (rules v7): a pair
decided slower is a real difference and completes its verdict; an open pair makes it
provisional, named with the units that would decide it; two machines that no anchor joins are
never compared directly.

Synthetic sweeps in memory (test_analyse's result.json dicts) with per-unit times chosen per
job, as a real run's calls give them, and each job's card where a test puts jobs on two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchkit.report.analysis.numbers import DraftingNumbers, FactorNumbers, ProjectionNumbers, of
from benchkit.report.analysis.table import factor_columns, tidy
from benchkit.report.verdicts import analyse as an
from benchkit.report.verdicts import factor_words, sentences
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence
from benchkit.results.store import JobResult
from tests.test_analyse import RUN_NOISE, result

# Per-unit factors around a job's seconds per unit: steady (a decided pair) and scattered (a
# pair whose per-unit ratios spread across the 5% margin).
STEADY = [1.0, 1.001, 0.999, 1.002, 0.998, 1.0]
SCATTERED = [1.0, 1.25, 0.85, 1.2, 0.9, 0.95]


def sweep(
    datas: list[dict[str, Any]],
    shapes: list[list[float]],
    cards: list[str] | None = None,
) -> an.Sweep:
    """The sweep of `datas`, job i's units shaped by `shapes[i]`, on card `cards[i]`."""
    results = [JobResult(Path(f"/sweep/{i}/result.json"), d) for i, d in enumerate(datas)]
    spans = {
        str(i): {f"u{k}": d["metrics"]["s_per_unit_throughput"] * f for k, f in enumerate(shape)}
        for i, (d, shape) in enumerate(zip(datas, shapes, strict=True))
    }
    setups = {str(i): {"gpu": c} for i, c in enumerate(cards)} if cards else None
    return an.build_sweep(
        tidy(results),
        factor_columns(results),
        {},
        min_effect=0.05,
        knee_gain=0.05,
        noise=RUN_NOISE,
        spans=spans,
        setups=setups,
    )


def verdicts(sw: an.Sweep) -> dict[str, an.Verdict]:
    return {v.factor: v for v in an.analyse(sw, 100)}


# ------------------------------------------------------------------------------ drafting


def _mtp(on_s: float, on_shape: list[float], cards: list[str] | None = None) -> an.Verdict:
    datas = [result("cuda", 1, mtp=False, s=10.0), result("cuda", 1, mtp=True, s=on_s)]
    return verdicts(sweep(datas, [STEADY, on_shape], cards))["mtp"]


def test_drafting_decided_slower_hurts_and_is_complete() -> None:
    m = _mtp(15.0, STEADY)
    n = of(DraftingNumbers, m.numbers)
    assert m.verdict == [{"from": None, "to": None, "effect": "hurts"}]
    assert m.status == "complete" and not n.open
    (c,) = n.comparisons or []
    assert c["outcome"] == "worse" and c["machine"] == "same"
    text = mtp_sentence(m, "en")
    # The figure stated is the comparison's, with its range on a repeat.
    assert f"Turning it on took {c['ratio']:.2f}x the time" in text
    assert "on a repeat, 6 units paired" in text
    assert f"소요 시간이 껐을 때의 {c['ratio']:.2f}배였습니다" in mtp_sentence(m, "ko")


def test_drafting_on_an_open_pair_is_provisional_naming_the_pair_and_its_units() -> None:
    # At 1 slot on took 0.90x the time, its units scattered; at 2 slots 1.50x, steady.
    datas = [
        result("cuda", 1, mtp=False, s=10.0),
        result("cuda", 1, mtp=True, s=9.0),
        result("cuda", 2, mtp=False, s=6.0),
        result("cuda", 2, mtp=True, s=9.0),
    ]
    m = verdicts(sweep(datas, [STEADY, SCATTERED, STEADY, STEADY]))["mtp"]
    n = of(DraftingNumbers, m.numbers)
    assert m.status == "provisional" and "open_pairs" in m.reasons
    (c,) = n.open or []
    assert c["outcome"] == "open" and c["needed"] is not None and c["needed"] > c["units"]
    # The open pair names no effect, whatever its figure (0.90x, past the margin): an effect
    # is named only where a comparison decides it (a review found "hurt" and "no difference"
    # read from open pairs).
    assert m.verdict == [
        {"from": 1, "to": 1, "effect": "open"},
        {"from": 2, "to": None, "effect": "hurts"},
    ]
    text = mtp_sentence(m, "en")
    # Provisional: hedged as the headline hedges it (review 10).
    assert text.startswith("MTP appears to have hurt at 2 slots, not decided at 1 slot")
    assert "MTP on took 0.90x the time of MTP off at 1 slot (" in text
    assert f"about {c['needed']} units paired would decide it" in text
    assert "2 slots 1.50x (1.49x-1.51x on a repeat, 6 units paired)" in text
    assert "판가름됩니다" in mtp_sentence(m, "ko")


def test_drafting_across_two_machines_without_an_anchor_is_open() -> None:
    m = _mtp(15.0, STEADY, cards=["H100 #1", "H100 #2"])
    n = of(DraftingNumbers, m.numbers)
    (c,) = n.open or []
    assert c["machine"] == "across" and c["outcome"] == "open"
    assert m.status == "provisional" and "open_pairs" in m.reasons
    assert "on two machines, no point run on both" in mtp_sentence(m, "en")


# ------------------------------------------------------------------------------ factor


def _ubatch(s: float, shape: list[float], cards: list[str] | None = None) -> dict[str, an.Verdict]:
    datas = [result("cpu", 1, s=10.0), result("cpu", 1, s=s)]
    for d, u in zip(datas, (512, 128), strict=True):
        d["factors"]["ubatch"] = u
    return verdicts(sweep(datas, [STEADY, shape], cards))


def test_a_factor_value_decided_slower_completes_the_best() -> None:
    u = _ubatch(13.0, STEADY)["ubatch"]
    n = of(FactorNumbers, u.numbers)
    assert u.verdict == {"state": "best", "best": 512, "kind": "setting"}
    assert u.status == "complete" and not n.open
    (c,) = n.comparisons or []
    assert c["outcome"] == "worse"
    row = next(r for r in n.contexts[0]["rows"] if r["value"] == 128)
    assert row["effect"] == "worse" and row["comparison"] == c
    assert "ubatch 128 took 1.30x the time of ubatch 512 (1.29x-1.31x on a repeat" in (
        factor_words.factor_sentence(u, "en")
    )


def test_a_factor_value_left_open_is_provisional_naming_the_pair_and_its_units() -> None:
    u = _ubatch(12.0, SCATTERED)["ubatch"]
    n = of(FactorNumbers, u.numbers)
    assert u.status == "provisional" and "open_pairs" in u.reasons
    (c,) = n.open or []
    assert c["needed"] is not None and c["needed"] > c["units"]
    text = factor_words.factor_sentence(u, "en")
    assert "not decided at the margin" in text
    assert "ubatch 128 took 1.20x the time of ubatch 512" in text
    assert f"about {c['needed']} units paired would decide it" in text


def test_a_factor_across_two_machines_without_an_anchor_is_open() -> None:
    u = _ubatch(13.0, STEADY, cards=["H100 #1", "H100 #2"])["ubatch"]
    n = of(FactorNumbers, u.numbers)
    (c,) = n.open or []
    assert c["machine"] == "across" and u.status == "provisional" and "open_pairs" in u.reasons
    assert "on two machines, no point run on both" in factor_words.factor_sentence(u, "en")


# ------------------------------------------------------------------------------ projection


def _faster_than_the_knee(shape: list[float], cards: list[str] | None = None) -> an.Verdict:
    """1 slot is the knee (2 slots measured 2% faster, inside the 5% knee margin)."""
    datas = [result("cpu", 1, s=10.0), result("cpu", 2, s=9.8)]
    return verdicts(sweep(datas, [STEADY, shape], cards))["projection"]


def test_a_faster_point_decided_within_the_margin_is_said_so() -> None:
    p = _faster_than_the_knee(STEADY)
    b = of(ProjectionNumbers, p.numbers).better_point
    assert b is not None and b["comparison"] is not None
    assert b["comparison"]["outcome"] == "within" and b["why"] == "knee"
    text = sentences.better_point_text(p, "en")
    assert "2 slots took 0.98x the time" in text and "within the 5% margin" in text


def test_a_faster_point_left_open_is_not_decided() -> None:
    p = _faster_than_the_knee(SCATTERED)
    b = of(ProjectionNumbers, p.numbers).better_point
    assert b is not None and b["comparison"] is not None
    assert b["comparison"]["outcome"] == "open"
    assert "not decided at the 5% margin" in sentences.better_point_text(p, "en")
    assert "depends_on:slots" in p.reasons


def test_a_faster_point_on_another_machine_without_an_anchor_is_open() -> None:
    p = _faster_than_the_knee(STEADY, cards=["H100 #1", "H100 #2"])
    b = of(ProjectionNumbers, p.numbers).better_point
    assert b is not None and b["comparison"] is not None
    assert b["comparison"]["machine"] == "across" and b["comparison"]["outcome"] == "open"
    assert "on two machines, no point run on both" in sentences.better_point_text(p, "en")


def test_drafts_almost_never_accepted_measure_drafting_s_cost_not_a_finding() -> None:
    """Issue #44: random weights accept 0.1-3% of drafts, so MTP on against off measures what
    drafting costs; the verdict says so and is provisional. Accepted drafts keep it a finding."""
    from benchkit.report.verdicts.kinds.drafting.words import clauses

    for acceptance, rejected in ((0.03, True), (0.6, False)):
        datas = [
            result("cuda", 1, mtp=False, s=10.0),
            result("cuda", 1, mtp=True, s=15.0, acceptance=acceptance),
        ]
        m = verdicts(sweep(datas, [STEADY, STEADY]))["mtp"]
        assert ("drafts_rejected" in m.reasons) is rejected
        said = clauses(m, "en")[0](None)
        assert (
            "(with 3% of drafts accepted, a measured cost; "
            "what accepted drafts would gain was not tested)" in said
        ) is rejected
        if rejected:
            assert m.status == "provisional"
            assert "so this measures what drafting costs" in mtp_sentence(m, "en")

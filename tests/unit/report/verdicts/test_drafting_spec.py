"""The drafting verdict over drafting as a factor (`spec=none,draft spec.draft_max=2,4`):
spec=draft is judged against spec=none at each slot count and draft length, with acceptance
beside it, as MTP on/off is; near-zero acceptance says the verdict measured drafting's cost;
the summary table says so too; and spec=none jobs that record no draft length (no planned
space) still pair with each draft length. Sweeps built in memory, as tests/test_analyse.py
builds them."""

from __future__ import annotations

from typing import Any

from benchkit.report.analysis.numbers import DraftingNumbers, of
from benchkit.report.verdicts.kinds.drafting.verdict import drafting_verdict
from benchkit.report.writeup import headline
from benchkit.report.writeup.view import summary_rows
from tests.test_analyse import result, sweep_of, verdicts_of

PLANNED = {"spec": ["none", "draft"], "draft_max": [2, 4], "slots": [1, 2]}


def jobs(acceptance: float, *, record_none_draft_max: bool = True) -> list[dict[str, Any]]:
    """The README's sweep: spec=none at 100 s/unit (halved at 2 slots), measured once per
    slot count and recorded at both draft lengths (a collapsed duplicate, as
    benchkit.config.drafting makes it); spec=draft 1.3x slower at draft_max=2, 0.8x at 4."""
    out = []
    for slots in (1, 2):
        for n in (2, 4):
            for spec, ratio in (("none", 1.0), ("draft", 1.3 if n == 2 else 0.8)):
                d = result(
                    "cpu", slots, s=ratio * 100.0 / slots, decode=40.0 * slots / ratio,
                    acceptance=None if spec == "none" else acceptance,
                )  # fmt: skip
                d["factors"]["spec"] = spec
                if spec == "draft":
                    d["factors"].update(draft_max=n, draft_model="qwen2.5-coder-0.5b")
                elif record_none_draft_max:
                    d["factors"]["draft_max"] = n
                else:
                    if n == 4:
                        continue  # one spec=none job per slot count, recording no draft length
                out.append(d)
    return out


def test_each_draft_length_is_judged_against_none_at_each_slot_count() -> None:
    sw = sweep_of(jobs(0.62), PLANNED)
    v = verdicts_of(sw)["spec=draft"]
    n = of(DraftingNumbers, v.numbers)
    got = {(e["context"]["draft_max"], e["context"]["slots"]): e for e in n.contexts}
    assert sorted(got) == [(2, 1), (2, 2), (4, 1), (4, 2)]
    assert {k: round(e["ratio"], 2) for k, e in got.items()} == {
        (2, 1): 1.3, (2, 2): 1.3, (4, 1): 0.8, (4, 2): 0.8,
    }  # fmt: skip
    # Acceptance beside each pair.
    assert {e["acceptance"] for e in n.contexts} == {0.62}
    assert n.scope_differs
    head = headline.headline(verdicts_of(sw), "en", "unit")
    assert "on draft max 2 a draft model hurt at every slot count" in head, head
    assert "on draft max 4 a draft model helped at every slot count" in head, head
    assert "its cost" not in head


def test_an_unpinned_series_is_one_series_not_a_mix_of_draft_lengths() -> None:
    # No slots or backend verdict singles out a draft length: the verdict's runs are one
    # series' (the one where drafting was fastest), never "hurt at 1 slot, helped at 1 slot".
    sw = sweep_of(jobs(0.62), PLANNED)
    v = drafting_verdict(sw, None, None, "spec", "none", "draft")
    assert v is not None and v.point == {"draft_max": 4}
    assert v.verdict == [{"from": 1, "to": None, "effect": "helps"}]


def test_near_zero_acceptance_says_it_measured_drafting_cost() -> None:
    sw = sweep_of(jobs(0.03), PLANNED)
    verdicts = verdicts_of(sw)
    v = verdicts["spec=draft"]
    assert "drafts_rejected" in v.reasons
    row = next(
        r for r in summary_rows(list(verdicts.values()), "en") if r["factor"] == "draft model"
    )
    assert row["verdict"].endswith(
        "(with 3% of drafts accepted, a measured cost; "
        "what accepted drafts would gain was not tested)"
    )
    ko = next(
        r for r in summary_rows(list(verdicts.values()), "ko") if "드래프트 모델" in r["factor"]
    )
    assert "잰 것은 비용" in ko["verdict"]
    head = headline.headline(verdicts, "en", "unit")
    assert (
        head.count(
            "(with 3% of drafts accepted, a measured cost; "
            "what accepted drafts would gain was not tested)"
        )
        == 2
    ), head


def test_spec_none_without_a_draft_length_pairs_with_each_one() -> None:
    # Results without a planned space (no multirun.yaml): spec=none records no draft length
    # or draft model, so both vary; each draft length is still compared with spec=none.
    sw = sweep_of(jobs(0.62, record_none_draft_max=False))
    assert {"draft_max", "draft_model"} <= set(sw.varying)
    n = of(DraftingNumbers, verdicts_of(sw)["spec=draft"].numbers)
    assert sorted((e["context"]["draft_max"], e["context"]["slots"]) for e in n.contexts) == [
        (2, 1), (2, 2), (4, 1), (4, 2),
    ]  # fmt: skip


def test_a_setting_where_nothing_was_drafted_is_shown_but_not_judged() -> None:
    # At 2 slots the drafter drafted no token (n-gram on prose, say): the server did the same
    # work as with it off, so its 0.8x there is the host's, not drafting's.
    data = jobs(0.62)
    for d in data:
        draft = d["factors"]["spec"] == "draft"
        idle = draft and d["factors"]["slots"] == 2
        d["metrics"]["draft_tokens"] = 0 if idle else 100 if draft else None
        if idle:
            d["metrics"]["draft_acceptance"] = None
    sw = sweep_of(data, PLANNED)
    v = drafting_verdict(sw, None, None, "spec", "none", "draft")
    assert v is not None and "no_drafts_at" in v.reasons
    n = of(DraftingNumbers, v.numbers)
    shown = {(e["context"]["draft_max"], e["context"]["slots"]): e for e in n.contexts}
    assert shown[(4, 2)]["effect"] == "no drafts" and shown[(4, 2)]["drafted"] == 0
    assert shown[(4, 1)]["effect"] == "helps" and shown[(4, 1)]["drafted"] == 100
    # The verdict rests on the slot count where it drafted only.
    assert v.verdict == [{"from": 1, "to": None, "effect": "helps"}]
    head = headline.headline(verdicts_of(sw), "en", "unit")
    # Only where it drafted: never "helped at every slot count".
    assert "on draft max 4 a draft model appears to have helped at 1 slot," in head, head

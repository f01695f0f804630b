"""A slot sweep on a synthetic mixture of experts says its router is random (report.analysis
.router): a review would not sign the slot-scaling verdict of a random-router model without
it. Said once, beside the parallel slots verdict, not again in the caveats list; untested,
with no invented figure (the results count no expert use)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.report.analysis import router
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.render import render_report

STUDIES = Path(__file__).parents[4] / "docs" / "studies"


def test_a_synthetic_moe_slot_sweep_carries_the_caveat_and_a_real_model_does_not() -> None:
    qwen = analyse_folder(STUDIES / "h200-qwen3-30b-a3b" / "results")
    found = [c for c in qwen.caveats if c["kind"] == "random_router"]
    assert found == [{"kind": "random_router", "jobs": 7, "beside": "slots"}]
    real = analyse_folder(STUDIES / "cpu-qwen2.5-coder-real" / "results")
    assert not [c for c in real.caveats if c["kind"] == "random_router"]


def test_no_slots_varied_no_caveat() -> None:
    moe = {"provenance": {"model": {"synthetic": True, "params_total_b": 30.5,
                                    "params_active_b": 3.3}}}  # fmt: skip
    dense = {"provenance": {"model": {"synthetic": True, "params_total_b": 1.5,
                                      "params_active_b": 1.5}}}  # fmt: skip
    assert router.detect({"0": moe}, ["backend"]) == []
    assert router.detect({"0": dense}, ["slots"]) == []
    assert router.detect({"0": moe, "1": dense}, ["slots"])[0]["jobs"] == 1


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_said_once_beside_the_slots_verdict(tmp_path: Path, lang: str) -> None:
    out = render_report(
        STUDIES / "h200-qwen3-30b-a3b" / "results",
        tmp_path / "report",
        overrides=[f"study.lang={lang}", f"study.ledger={tmp_path / 'ledger.jsonl'}"],
    )
    md = (out / "report.md").read_text(encoding="utf-8")
    words = router.say({"jobs": 7}, lang)
    assert md.count(words) == 1
    # In the parallel slots section, before the next heading.
    (section,) = [s for s in md.split("\n## ") if words in s]
    assert section.startswith(("Parallel slots\n", "동시 슬롯\n"))

"""Which setup a job ran on, as the report compares jobs (evidence.setup_of, contamination):
the physical card from its telemetry, and the model file only where the job recorded it.

On the H100 study's results (docs/studies/h100-vulkan-vs-cuda-warm): its race ran on two lent
machines, and job 10 was finished from an interrupted run's calls without its model file."""

from __future__ import annotations

import copy
from typing import Any

from benchkit.paths import repo_root
from benchkit.report.analysis.evidence import contamination, gpu_of, setup_of
from benchkit.results import schema
from benchkit.results.store import load_result

STUDY = repo_root() / "docs" / "studies" / "h100-vulkan-vs-cuda-warm" / "results"


def _data(job: int) -> dict[str, Any]:
    return copy.deepcopy(load_result(STUDY / str(job) / "result.json").data)


def _setups(datas: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {j: setup_of(schema.load(d), "b1") for j, d in datas.items()}


def test_jobs_on_another_card_are_named() -> None:
    first, second = _data(1), _data(11)  # CUDA, 1 slot: the first machine, then the second
    assert gpu_of(schema.load(first)) != gpu_of(schema.load(second)) != ""
    found = contamination(_setups({"1": first, "3": _data(3), "11": second}), ["mtp", "slots"])
    assert [(e["attribute"], e["jobs"]) for e in found] == [("gpu", ["11"])]
    # A sweep that varies the hardware explains its cards.
    assert contamination(_setups({"1": first, "3": _data(3), "11": second}), ["hardware"]) == []


def test_a_card_not_named_is_unknown_not_another() -> None:
    bare = _data(1)
    bare["metrics"]["telemetry"]["devices"] = []
    assert gpu_of(schema.load(bare)) == ""
    assert contamination(_setups({"0": _data(0), "1": bare, "3": _data(3)}), ["slots"]) == []


def test_an_extension_whose_earlier_card_is_unrecorded_says_so() -> None:
    # Job 4: extended on the second machine by a benchkit that kept the last run's telemetry,
    # then on a third by one that joins runs: its first machine's card is not recorded.
    assert gpu_of(schema.load(_data(4))).startswith("? + NVIDIA H100 80GB HBM3 GPU-a482737e")


def test_a_model_file_not_recorded_is_unknown_not_another() -> None:
    known, unknown = _data(11), _data(10)
    assert unknown["provenance"]["model"]["path"] is None  # finished from its calls
    setups = _setups({"10": unknown, "11": known, "13": _data(13)})
    assert setups["10"]["model"] == setups["11"]["model"]
    assert setups["10"]["model_file"] == ""
    assert not [e for e in contamination(setups, []) if e["attribute"].startswith("model")]
    # Another file is still another file.
    other = _data(13)
    other["provenance"]["model"]["path"] = "/m/another.gguf"
    found = contamination(_setups({"10": unknown, "11": known, "13": other, "15": _data(15)}), [])
    # (Job 15's extension ran on a third machine: its card differs too, which is not this test's.)
    models = [(e["attribute"], e["jobs"]) for e in found if e["attribute"].startswith("model")]
    assert models == [("model_file", ["13"])]


def test_a_verdicts_jobs_are_compared_among_themselves() -> None:
    """The H100 slot verdict (CUDA, MTP off: jobs 1, 3, 5, 7, 9) named jobs 1 and 3 as 'on
    GPU-3d382b62 where the other jobs ran GPU-a482737e', the sweep's usual card, though most
    of its own jobs ran on the first: the usual value is now its own jobs'."""
    from benchkit.report.analysis.numbers import SlotsNumbers, of
    from benchkit.report.verdicts.folder import analyse_folder

    a = analyse_folder(STUDY)
    s = a.verdict("slots")
    assert s is not None
    # Rules v7: the slots verdict is on the comparison engine, which handles the cards in its
    # comparisons (same card, bridged, or open): it names no card as contamination ...
    n = of(SlotsNumbers, s.numbers)
    assert not [e for e in n.contaminated or [] if e["attribute"] == "gpu"]
    # ... while the sweep's setup comparison of the same jobs still finds them, for the
    # verdicts not yet on the engine.
    cells = [c for c in a.sweep.cells if c.get("backend") == "cuda" and c.get("mtp") == "false"]
    bad = [e for e in a.sweep.taint(cells) if e["attribute"] == "gpu"]
    assert {e["usual"] for e in bad} == {"NVIDIA H100 80GB HBM3 GPU-3d382b62"}
    assert sorted(j for e in bad for j in e["jobs"]) == ["5", "7", "9"]

"""result.json through the schema: typed on load, every value kept on write, versions checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.results import schema
from benchkit.results.store import load_result, write_result

COMMITTED = sorted(
    [
        *(repo_root() / "fixtures" / "results").rglob("result.json"),
        *(repo_root() / "docs" / "studies").rglob("result.json"),
    ]
)


def _kept(orig: Any, back: Any, where: str = "") -> None:
    """Every value of `orig` is in `back` unchanged (a null outside the contract's keys may be
    left out); `back` adds only empty values."""
    if isinstance(orig, dict):
        assert isinstance(back, dict), where
        for k, v in orig.items():
            if v is None and k not in back:
                continue
            assert k in back, f"{where}/{k} dropped"
            _kept(v, back[k], f"{where}/{k}")
        for k in set(back) - set(orig):
            assert back[k] in (None, {}, []), f"{where}/{k} invented {back[k]!r}"
    else:
        assert orig == back, where


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(repo_root())))
def test_every_committed_result_round_trips(path: Path) -> None:
    data = json.loads(path.read_text())
    typed = schema.load(data)
    back = schema.to_json(typed)
    _kept(data, back)
    assert schema.load(back) == typed


def test_typed_blocks_read_what_the_file_says(tmp_path: Path) -> None:
    path = repo_root() / "fixtures" / "results" / "seed-r9700" / "6" / "result.json"
    r = load_result(path).result
    assert r.status is schema.Status.complete and r.complete
    assert r.metrics.s_per_unit_throughput == 172.4
    assert r.provenance.model is not None and r.provenance.model.quant == "Q4_K_M"
    assert r.provenance.server is not None and r.provenance.server.slots == 4
    # Keys the schema does not type travel in `extra`.
    assert r.extra["derived"] is True and "reference" in r.extra


def test_the_one_writer_keeps_unknown_keys_and_writes_the_contract(tmp_path: Path) -> None:
    data = {
        "schema_version": 1,
        "status": "failed",
        "reason": "why",
        "factors": {"slots": 2},
        "provenance": {"engine_counter": {"x": 1}},
        "metrics": {"a_new_metric": 3.5},
    }
    written = write_result(tmp_path / "result.json", data)
    assert written["provenance"]["engine_counter"] == {"x": 1}
    assert written["metrics"]["a_new_metric"] == 3.5
    # Every contract metric key is present, null where not measured.
    for key in ("units_completed", "s_per_unit_throughput", "draft_acceptance", "ttft_ms"):
        assert key in written["metrics"]
    assert load_result(tmp_path / "result.json").result.reason == "why"


def test_a_newer_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"schema_version": 99, "status": "complete"}))
    with pytest.raises(UserError, match="upgrade benchkit"):
        load_result(path)

"""A real racing sweep resumed on a second machine measures its anchor there first (issue #41).

The race of tests/test_racing_integration.py (MTP on, far slower, against MTP off listed
twice) runs its first round on one host and stops at max_units 3; the same command with
max_units 6 then runs on a "second machine": the same llama-server on a host of another name
(platform.node patched by a sitecustomize on PYTHONPATH, so the hardware profile names another
host and every point keeps its overrides). Before any unit of its next round, the resumed race
measures the best point again there on its first 3 units (an anchor job under anchors/), and
racing.json says which and why. Its decisions are the one-machine race's: MTP on stopped.
Marked slow: two small races.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchkit.paths import repo_root
from benchkit.report.verdicts.engine_of import engine_of
from benchkit.report.verdicts.folder import analyse_folder
from tests.reliability.conftest import result, run
from tests.test_racing_integration import _args, _fixture, _race

pytestmark = pytest.mark.slow


def _on_host(tmp: Path, host: str) -> dict[str, str]:
    """The environment of a benchkit run whose host is named `host` (and this checkout's code)."""
    site = tmp / f"site-{host}"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(f"import platform\nplatform.node = lambda: {host!r}\n")
    path = [str(site), str(repo_root()), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in path if p)}


def test_a_race_resumed_on_another_machine_measures_its_anchor_first(tmp_path: Path) -> None:
    fixture = _fixture(tmp_path)
    sweep = tmp_path / "race"
    args = [a for a in _args(fixture, sweep) if not a.startswith("hydra.sweeper.max_units")]
    p = run(*args, "hydra.sweeper.max_units=3", cwd=tmp_path, env=_on_host(tmp_path, "host-a"))
    assert p.returncode == 0, p.stderr[-3000:]
    first = _race(sweep)
    assert first["here"].endswith("@host-a") and not first["anchors"]
    p = run(*args, "hydra.sweeper.max_units=6", cwd=tmp_path, env=_on_host(tmp_path, "host-b"))
    assert p.returncode == 0, p.stderr[-3000:]
    race = _race(sweep)
    here = race["here"]
    assert here.endswith("@host-b")
    anchors = race["anchors"]
    # The best point, measured again on host-b on its first 3 units, and why.
    assert len(anchors) == 1, anchors
    a = anchors[0]
    assert (a["point"], a["machine"], a["units"], a["status"]) == (
        race["best"],
        here,
        3,
        "measured",
    )
    assert "current best" in a["why"] and a["offset"] is not None
    assert "anchor first" in p.stderr + p.stdout
    anchor = result(sweep / a["job"])
    assert anchor["metrics"]["units_completed"] == 3 and "reused_from" not in anchor["provenance"]
    # Measured before any unit of the next round: every extension on host-b started later.
    started = anchor["provenance"]["replay_started_utc"]
    for j, pt in race["points"].items():
        runs = result(sweep / j)["provenance"].get("extended") or []
        for r in runs[1:]:
            assert r["started_utc"] > started, (j, r, started)
        if pt["factors"]["mtp"].lower() == "true":
            assert pt["status"] == "stopped", pt  # the one-machine race's decision
            assert pt["machine"] in ("same", "bridged"), pt
    # Each unit's machine kept: the best's first units on host-a, its later ones on host-b.
    best = race["unit_machines"][race["best"]]
    assert {m.rsplit("@", 1)[1] for m in best.values()} == {"host-a", "host-b"}, best
    # Open pairs across machines, if any, say why.
    assert all(o["reason"] for o in race["open_across"])
    json.dumps(race)  # racing.json stays plain JSON
    # The report bridges the machines through the race's anchor without being told
    # (study.anchors unset): the anchor job is one of the sweep's anchors.
    analysed = analyse_folder(sweep)
    assert [x.job for x in analysed.sweep.anchors] == [a["job"]], analysed.sweep.anchors
    # The best job's units ran on both hosts: the engine holds one series per host for it,
    # each with that host's units (racing.json's unit_machines), not one series named by
    # the job's last host.
    eng = engine_of(analysed.sweep)
    # (MTP off is listed twice: where the twins ran on one host they are pooled into one
    # series, "0 + 1", rules v8.)
    job_series = [
        x for xs in eng.by_point.values() for x in xs if race["best"] in x.job.split(" + ")
    ]
    by_host = {x.machine.rsplit("@", 1)[1]: set(x.units) for x in job_series}
    assert set(by_host) == {"host-a", "host-b"}, job_series
    for h, units in by_host.items():
        assert units <= {u for u, m in best.items() if m.endswith("@" + h)}, (h, units)

"""A verdict per swept factor, for real: `python -m benchkit -m` over slots x ubatch x KV cache
type against the CPU llama-server with the synthetic tiny-moe model, on a small synthetic
workload (four units of two ~200-token prompts, ~24-token answers) so the eight jobs take
about a minute on two cores; and a one-unit sweep over slots, which the run cannot exercise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_sweep_integration import run_benchkit

RECIPE = {
    "name": "factors-4",
    "description": "Four short units for the factor verdict test.",
    "seed": 7,
    "units": 4,
    "calls_per_unit": [2, 2],
    "roles": ["ask"],
    "system_len": {"mean": 24.0, "sigma": 0.1, "min": 16, "max": 32},
    "data_len": {"mean": 24.0, "sigma": 0.1, "min": 16, "max": 32},
    "prompt_mean": 200.0,
    "prompt_max": 256,
    "completion_len": {"mean": 24.0, "sigma": 0.05, "min": 20, "max": 28},
    "cap": 64,
    "capped_share": 0.0,
    "carry": {"from_seq": 9, "max_outputs": 1},
    "unique_sigma": 0.5,
    "unique_min": 4,
    "total_calls": None,
    "target_prompt_tokens": None,
    "output_policy": "replay",
    "format": 1,
}
# A short drift probe: four prompts, four tokens each.
PROBE = ("quality.prompts=4", "quality.tokens=4")


def _fixture(tmp: Path) -> Path:
    recipe = tmp / "recipe.json"
    recipe.write_text(json.dumps(RECIPE))
    out = tmp / "factors-4"
    cmd = [sys.executable, "-m", "benchkit.workload", "synth", "--recipe", str(recipe)]
    subprocess.run([*cmd, "--out", str(out)], check=True, capture_output=True)
    return out


def _verdicts(sweep: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((sweep / "report" / "verdicts.json").read_text())
    return {v["factor"]: v for v in data}


@pytest.mark.slow
def test_every_swept_factor_gets_a_verdict_with_its_drift(tmp_path: Path) -> None:
    fixture = _fixture(tmp_path)
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "slots=1,2", "server.ubatch=64,256", "server.cache_type_k=f16,q8_0",
        f"workload.fixture={fixture}", *PROBE, f"hydra.sweep.dir={sweep}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    v = _verdicts(sweep)
    # One verdict per swept factor: the knee for slots, a factor verdict for each of the others.
    assert {"slots", "ubatch", "cache_type_k"} <= set(v)
    for factor in ("ubatch", "cache_type_k"):
        fv = v[factor]
        assert fv["verdict"]["kind"] == "setting", fv
        assert fv["verdict"]["state"] in ("best", "no difference", "depends", "open", "mixed"), fv
        rows = [r for c in fv["numbers"]["contexts"] for r in c["rows"]]
        # Four settings of the others x two values; each row with its answer drift beside it.
        assert len(rows) == 8
        assert all(r["drift_probes"] == 4 for r in rows), rows
        assert all(r["drift_changed"] is not None for r in rows)
    md = (sweep / "report" / "report.md").read_text()
    head = md.splitlines()[2]
    # The headline names the ubatch and KV cache verdicts, and the whole recommended combination.
    # Settings in words in prose (#45): the K cache verdict is "K cache type".
    assert "ubatch" in head and "K cache type" in head, head
    proj = v["projection"]["point"]
    assert {"slots", "ubatch", "cache_type_k"} <= set(proj), proj
    # "1 slot" or "2 slots", whichever the knee is on this machine.
    combination = (
        f"slot{'s' if proj['slots'] != 1 else ''}, MTP off, ubatch {proj['ubatch']}, "
        # The report escapes Markdown's underscores in values too ("q8\\_0").
        f"{str(proj['cache_type_k']).replace('_', chr(92) + '_')} K cache"
    )
    assert combination in head, head
    # A section title begins with a capital (#45: "## sampling" read as a slip).
    for title in ("## Ubatch", "## K cache type"):
        section = md.split(title, 1)[1].split("\n## ", 1)[0]
        assert "answers changed" in section and "/4 |" in section, section


@pytest.mark.slow
def test_one_unit_over_slots_is_not_exercised(tmp_path: Path) -> None:
    fixture = _fixture(tmp_path)
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "slots=1,2", "workload.units=1", f"workload.fixture={fixture}",
        "quality.probe=false", f"hydra.sweep.dir={sweep}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    s = _verdicts(sweep)["slots"]
    assert s["verdict"] is None and s["reasons"] == ["not_exercised"], s
    assert s["numbers"]["not_exercised"]["why"] == "units"
    md = (sweep / "report" / "report.md").read_text()
    assert "No knee" not in md.splitlines()[2]
    assert "Parallel slots were not exercised" in md.splitlines()[2]
    assert "The run did not exercise parallel slots (1 slot, 2 slots)" in md
    assert "replay at least 4 units a point" in md

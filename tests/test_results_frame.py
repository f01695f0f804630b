"""Data out: the report folder's results.csv and `benchkit.results.frame(DIR)` hold the very
numbers of every result.json, one row per job and one more per pass of a repeated job."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchkit.paths import repo_root
from benchkit.report.__main__ import main as report_main
from benchkit.results import frame
from benchkit.results.store import RESULTS_CSV, find_results

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"


def scalars(block: dict[str, object], prefix: str = "") -> dict[str, object]:
    """The JSON's scalar values under their dotted column names (lists are not columns)."""
    out: dict[str, object] = {}
    for k, v in block.items():
        if isinstance(v, dict):
            out.update(scalars(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def same(cell: object, value: object) -> bool:
    if value is None:
        return bool(pd.isna(cell))  # type: ignore[arg-type]
    if isinstance(value, bool):
        return bool(cell) is value
    if isinstance(value, (int, float)):
        return float(cell) == float(value) or (math.isnan(float(value)) and pd.isna(cell))  # type: ignore[arg-type]
    return str(cell) == str(value)


def check_row(row: pd.Series, factors: dict[str, object], metrics: dict[str, object]) -> None:
    for k, v in factors.items():
        assert same(row[f"factor.{k}"], v), (k, row[f"factor.{k}"], v)
    for k, v in scalars(metrics).items():
        assert same(row[k], v), (k, row[k], v)


def test_frame_holds_every_factor_and_metric_of_the_seed_results() -> None:
    df = frame(SEED)
    results = find_results(SEED)
    assert len(df) == len(results) == 24
    assert list(df.columns[:4]) == ["job", "pass", "status", "reason"]
    assert df["pass"].isna().all()  # the seed's jobs ran one pass each
    for r in results:
        (row,) = [row for _, row in df.iterrows() if row["job"] == r.job_dir.name]
        assert row["status"] == r.status
        check_row(row, r.factors, r.metrics)
    # Typed as pandas reads them: numbers are numbers, booleans booleans.
    assert df["factor.mtp"].dtype == bool
    assert df["s_per_unit_throughput"].dtype == float
    assert "ttft_ms.p50" in df.columns  # nested blocks as dotted columns (the seed has no TTFT)


def test_a_repeated_job_has_a_row_per_pass_and_a_job_without_metrics_one_row(
    tmp_path: Path,
) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(SEED / "0", sweep / "0")
    data = json.loads((sweep / "0" / "result.json").read_text())
    m = data["metrics"]
    data["passes"] = [
        {**m, "s_per_unit_throughput": 301.5, "wall_s": 3000.25},
        {**m, "s_per_unit_throughput": 294.5, "wall_s": 2950.75},
    ]
    data["metrics"]["server"] = [{"prompt_tokens": 11}, {"prompt_tokens": 13}]
    (sweep / "0" / "result.json").write_text(json.dumps(data))
    (sweep / "1").mkdir()
    gone = {**data, "status": "unavailable", "reason": "hipcc not found", "metrics": {}}
    gone.pop("passes")
    (sweep / "1" / "result.json").write_text(json.dumps(gone))

    df = frame(sweep)
    job0 = df[df["job"] == "0"]
    assert job0["pass"].tolist()[0] is pd.NA and job0["pass"].tolist()[1:] == [1, 2]
    whole, first, second = (row for _, row in job0.iterrows())
    check_row(whole, data["factors"], {k: v for k, v in m.items() if k != "server"})
    check_row(first, data["factors"], data["passes"][0])
    check_row(second, data["factors"], data["passes"][1])
    assert (first["server.prompt_tokens"], second["server.prompt_tokens"]) == (11, 13)
    (job1,) = [row for _, row in df[df["job"] == "1"].iterrows()]
    assert job1["status"] == "unavailable" and job1["reason"] == "hipcc not found"
    assert pd.isna(job1["s_per_unit_throughput"])


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_report_folder_holds_results_csv_equal_to_frame(tmp_path: Path, lang: str) -> None:
    out = tmp_path / "report"
    assert report_main([str(SEED), "--out", str(out), f"study.lang={lang}"]) == 0
    csv_file = out / RESULTS_CSV
    on_disk = pd.read_csv(csv_file, dtype={"pass": "Int64", "job": str, "reason": str})
    pd.testing.assert_frame_equal(on_disk, frame(SEED))
    assert "`results.csv`" in (out / "report.md").read_text()

"""The report's energy section (benchkit/report/writeup/energy.py): J/unit per job, the backend
energy verdict, why a job has no GPU telemetry, and the telemetry figure at the recommended point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchkit.measure.telemetry import DEFINITIONS
from benchkit.report.analysis.energy_numbers import backend_energy, job_rows
from benchkit.report.lang import marked
from benchkit.report.writeup.energy import verdict_lines
from benchkit.report.writeup.render import render_report
from benchkit.results.store import atomic_write_json, find_results


def job(
    backend: str,
    slots: int,
    s: float,
    j: float | None,
    *,
    gpu: float | None = 0.5,
    reason: str | None = None,
    telemetry: bool = True,
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "units_completed": 8,
        "units_planned": 8,
        "calls_completed": 40,
        "calls_failed": 0,
        "wall_s": 8 * s,
        "s_per_unit_throughput": s,
        "s_per_unit_slot_latency": s * slots,
        "decode_tok_s": 100.0,
        "prefill_tok_s": 1000.0,
        "completion_tokens": 4000,
        "calls_hit_cap": 0,
        "cap_time_share": 0.0,
        "draft_acceptance": None,
    }
    if telemetry:
        m.update(
            {
                "energy_j": None if j is None else 8 * j,
                "j_per_unit": j,
                "power_w": {"mean": None if j is None else j / s, "max": 650.0},
                "gpu_busy_share": gpu,
                "mem_busy_share": 0.3,
                "server_cpu_share": 1.1,
                "server_busiest_thread_share": 0.97,
                "telemetry": {"source": None if j is None else "nvml", "reason": reason},
            }
        )
    return {
        "schema_version": 1,
        "status": "complete",
        "reason": None,
        "factors": {
            "backend": backend,
            "slots": slots,
            "mtp": False,
            "model": "m",
            "hardware": "h200",
            "sampling": "greedy",
            "workload": "gpu-16",
        },
        "provenance": {
            "model": {"name": "m"},
            "hardware": {"name": "h200"},
            "sampling": {"profile": "greedy", "sent": {}},
            "server_build": {"source": "llama.cpp", "version": f"{backend} build"},
            "server": {"argv": ["llama-server"], "ctx_total": 4096},
        },
        "metrics": m,
    }


def sweep(folder: Path, jobs: list[dict[str, Any]]) -> Path:
    for i, data in enumerate(jobs):
        atomic_write_json(folder / str(i) / "result.json", data)
    return folder


def test_vulkan_against_cuda_gives_the_ratio_at_each_setting_and_the_range(tmp_path: Path) -> None:
    src = sweep(
        tmp_path / "s",
        [
            job("cuda", 1, 7.0, 1000.0),
            job("cuda", 8, 5.0, 800.0),
            job("vulkan", 1, 8.0, 1100.0),
            job("vulkan", 8, 6.0, 1200.0),
        ],
    )
    rows = job_rows(find_results(src))
    pairs = backend_energy(rows)
    assert len(pairs) == 1
    p = pairs[0]
    assert p["reference"] == "cuda" and p["other"] == "vulkan"
    assert [round(r["ratio"], 3) for r in p["ratios"]] == [1.1, 1.5]
    assert verdict_lines(pairs, 0, "en") == [
        "Vulkan cost 1.30x the energy per unit of CUDA on average over 2 settings, from 1.10x "
        "(1 slot) to 1.50x (8 slots)."
    ]
    ko = verdict_lines(pairs, 2, "ko")[0]
    assert "1.30배" in ko and "잠정" in ko


def test_one_setting_gives_one_ratio(tmp_path: Path) -> None:
    src = sweep(tmp_path / "s", [job("cuda", 4, 5.0, 500.0), job("vulkan", 4, 5.0, 600.0)])
    pairs = backend_energy(job_rows(find_results(src)))
    assert verdict_lines(pairs, 0, "en") == [
        "Vulkan cost 1.20x the energy per unit of CUDA (1 setting)."
    ]


def test_report_has_the_section_the_figure_and_the_absent_reason(tmp_path: Path) -> None:
    src = sweep(
        tmp_path / "s",
        [
            job("cuda", 1, 7.0, 1000.0),
            job("cuda", 2, 6.0, 900.0),
            job("cpu", 1, 70.0, None, gpu=None, reason="backend=cpu runs on the CPU, so ..."),
        ],
    )
    # The recommended point's samples: power and GPU busy over time.
    lines = [
        {"pass": 0, "t": 0.2 * i, "power_w": 300 + 10 * i, "gpu_util": 50.0, "server_cpu_s": i}
        for i in range(20)
    ]
    for d in ("0", "1"):
        (src / d / "telemetry.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = render_report(src, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert "## Energy and GPU telemetry" in md
    assert "| 1 | cuda | 2 | off | 6.0 s | 900 | 150 | 650 | 50% | 30% | 1.10 | 97% |" in md
    assert "No GPU telemetry in 1 job: backend=cpu runs on the CPU, so ...." in md
    assert "(telemetry.png)" in md and (out / "telemetry.png").stat().st_size > 1000
    assert "**j\\_per\\_unit**" in md  # the definitions travel with the section
    ko = render_report(src, tmp_path / "ko", overrides=["study.lang=ko"])
    assert "## 에너지와 GPU 텔레메트리" in (ko / "report.md").read_text()


def test_results_without_telemetry_render_no_section(tmp_path: Path) -> None:
    src = sweep(tmp_path / "s", [job("cuda", 1, 7.0, None, telemetry=False)])
    md = (render_report(src, tmp_path / "r") / "report.md").read_text()
    assert "Energy and GPU telemetry" not in md and not (tmp_path / "r" / "telemetry.png").exists()


def test_publish_keeps_the_section_and_its_figure(tmp_path: Path) -> None:
    src = sweep(tmp_path / "s", [job("cuda", 1, 7.0, 1000.0)])
    (src / "0" / "telemetry.jsonl").write_text(
        "\n".join(json.dumps({"t": 0.2 * i, "power_w": 300.0, "gpu_util": 90.0}) for i in range(5))
    )
    render_report(src, tmp_path / "r", publish=tmp_path / "blog")
    md = (tmp_path / "blog" / "index.md").read_text()
    assert "(telemetry.png)" in md and (tmp_path / "blog" / "telemetry.png").exists()
    assert "At the recommended point (CUDA, 1 slot, MTP off): 1,000 J per unit" in md


def test_the_telemetry_definitions_are_translated() -> None:
    # benchkit/measure/metrics.py declares them, marked for the catalog; the energy section
    # prints them.
    assert all(marked("ko", text) != text for text in DEFINITIONS.values())

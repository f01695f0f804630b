"""The write-up end to end: the seed's reference data reach the seed's verdicts in English and
Korean, the first correction appears by itself, builds compare on one basis, a published
folder stands alone, and text from results never turns into markup.

Everything renders into tmp_path; the fixtures are only read.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_analyse import result

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.report.__main__ import main as report_main
from benchkit.report.writeup.render import command_lines, render_report
from benchkit.results.store import atomic_write_json, find_results

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"
FIRST = SEED / "history" / "first-sweep"
RETUNE = SEED / "history" / "retune-3-slots"
FIRST_LEDGER = SEED / "history" / "first-publication.ledger.jsonl"


def verdicts(folder: Path) -> dict[str, dict[str, Any]]:
    return {v["factor"]: v for v in json.loads((folder / "verdicts.json").read_text())}


def render(source: Path, out: Path, *args: str) -> Path:
    assert report_main([str(source), "--out", str(out), *args]) == 0
    return out


# ------------------------------------------------------------------------ the seed's verdicts


def test_seed_reference_data_reach_the_seeds_verdicts(tmp_path: Path) -> None:
    out = render(SEED, tmp_path / "en")
    v = verdicts(out)
    # Rules v12 (review 8): 22 of the 24 jobs' seconds per unit were derived from the post's
    # stated shapes, not taken from it, so the backend verdict decides nothing yet.
    assert (v["backend"]["verdict"], v["backend"]["status"]) == ("vulkan", "provisional")
    assert "derived_figures" in v["backend"]["reasons"]
    lo, hi = v["backend"]["numbers"]["ratio_range"]["hip"]
    assert 1.3 <= lo <= hi <= 1.4  # "HIP 1.3 to 1.4x slower at every concurrency"
    # 4 slots, on the objective (seconds per unit, throughput basis); provisional because
    # 3 slots is only 9% slower (2 slots 28%), which a repeat inside the 11% run-to-run
    # noise the post reports could reverse: those comparisons are open (rules v7).
    assert (v["slots"]["verdict"], v["slots"]["status"]) == (4, "provisional")
    assert v["slots"]["reasons"] == ["open_pairs", "derived_figures"]
    assert v["slots"]["basis"] == "s_per_unit_throughput" and v["slots"]["numbers"]["knee_reached"]
    # MTP's 0.80x at 1 slot and 1.12x at 2 slots are open: no effect is named from them (the
    # seed post's "MTP helps at 1 slot" is a figure inside its own 11% noise).
    assert v["mtp"]["verdict"] == [
        {"from": 1, "to": 2, "effect": "open"},
        {"from": 3, "to": None, "effect": "hurts"},
    ]
    assert v["mtp"]["numbers"]["acceptance_range"] == [0.48, 0.52]
    # MTP on against off at 1 slot (0.80x) and 2 slots (1.12x) are open inside the 11% noise
    # the post declares (rules v7: the drafting verdict is on the engine too).
    assert (v["mtp"]["status"], v["mtp"]["reasons"]) == (
        "provisional",
        ["open_pairs", "derived_figures"],
    )
    assert [c["other"]["slots"] for c in v["mtp"]["numbers"]["open"]] == [1, 2]
    p = v["projection"]
    assert p["numbers"]["seconds"] / 3600 == pytest.approx(4.79, abs=0.01)
    assert p["point"] == {"backend": "vulkan", "slots": 4, "mtp": False}
    assert p["basis"] == "s_per_unit_throughput"
    assert p["reasons"] == [
        "depends_on:backend",
        "depends_on:slots",
        "depends_on:mtp",
        "single_run",
    ]
    assert v["claim"]["verdict"] == "refuted"
    assert v["validity"]["verdict"] == "complete" and v["validity"]["missing"] == []
    for entry in v.values():
        assert {"factor", "verdict", "status", "missing", "basis", "numbers"} <= set(entry)

    md = (out / "report.md").read_text()
    # Rules v13: 6 and 8 slots are not settled against 4 at the declared 11% noise (either
    # could be more than 5% faster), so the knee may lie up to 8.
    assert (
        "**Provisional: Vulkan looks faster, the knee lies between 2 and 8 slots, at 4 by the "
        "figures, MTP appears to have hurt at 3+ slots, not decided at 1–2 slots; about 4.8 h per "
        "100 stocks (throughput basis).**"
    ) in md
    assert "HIP took 1.31x–1.40x the time of Vulkan across the 12 settings compared" in md
    assert (
        "3 slots took 1.09x the time of 4 slots (0.89x-1.34x on a repeat, against the declared "
        "noise)" in md
    )
    assert (
        "8 slots took 1.03x the knee's time, with 2.06x the slot latency and 2.00x the context"
    ) in md
    # The seed published no output or per-sequence rate: those columns are left out, not
    # guessed (#45: a column empty in every row is dropped).
    assert "| **4** | 172.4 s | 689.6 s | 0.92x | 104,448 |" in md
    assert "| Vulkan, 3 slots | 188.0 s | 297.0 s | 1.58x | 1.58x | hurts | 49% |" in md
    assert "**refuted, by derived values, not measured ones**" in md
    assert "Output quality was not measured" in md
    corrections = md.split("## Corrections", 1)[1].split("\n## ", 1)[0]
    assert "MTP draft acceptance is 77-95% on HIP" in corrections  # the seed's 2nd correction
    assert (
        "expected draft\\_acceptance 0.77 … 0.95, derived (not measured) 0.48 … 0.52" in corrections
    )
    assert "MTP at 2+ slots re-measured on Vulkan" in md  # the study's untested items
    assert "Provisional recommendation: Vulkan, 4 slots, MTP off" in md
    # The first correction, from the first sweep's ledger the results carry in history/.
    assert "| none up to 3 slots (provisional) |" in corrections
    assert "the Vulkan, 4 slots, MTP off point had not finished (incomplete)" in corrections
    assert "values derived from a publication, not measured by benchkit" in md
    for fig in ("backend.png", "slots.png", "mtp.png"):
        assert (out / fig).stat().st_size > 10_000 and f"]({fig})" in md
    assert "{{" not in md and "{%" not in md


def test_seed_report_in_korean(tmp_path: Path) -> None:
    out = render(SEED, tmp_path / "ko", "study.lang=ko")
    md = (out / "report.md").read_text()
    assert (
        "**잠정: Vulkan 백엔드가 더 빨라 보이고, 동시 슬롯의 무릎은 2~8개 사이이고 "
        "수치로는 4개이며, MTP는 지금까지 잰 바로는 슬롯 1~2개에서는 판가름하지 못했고, "
        "슬롯 3개 이상에서는 손해였습니다. "
        "종목 100개에 약 4.8시간이 걸립니다(처리량 기준).**"
    ) in md
    assert "슬롯 3개가 슬롯 4개보다 1.09배 오래 걸렸습니다(다시 재면 0.89배-1.34배" in md
    assert "## 무엇을 무엇과 비교했는지" in md and "## 정리하면" in md
    assert "HIP이 Vulkan보다 1.31~1.40배 오래 걸렸" in md
    assert "| 슬롯 3개, MTP 끔 | 188.0초 | 255.7초(1.36배) | HIP 1.36배 | Vulkan |" in md
    assert "투기 토큰 수용률은 모든 설정에서 48~52%였습니다" in md
    assert (
        "결과의 품질은 재지 않았습니다" in md and "**반박됨(측정값이 아니라 유도한 값으로)**" in md
    )
    assert '<html lang="ko">' in (out / "report.html").read_text()
    # Verdicts do not depend on the language.
    en = verdicts(render(SEED, tmp_path / "en"))
    ko = verdicts(out)
    assert {k: v["verdict"] for k, v in en.items()} == {k: v["verdict"] for k, v in ko.items()}


def test_the_first_sweep_is_provisional_and_never_recommends_its_best_point(
    tmp_path: Path,
) -> None:
    out = render(FIRST, tmp_path / "first")
    v = verdicts(out)
    assert (v["slots"]["verdict"], v["slots"]["status"]) == (3, "provisional")
    assert not v["slots"]["numbers"]["knee_reached"]
    assert [m["label"] for m in v["slots"]["missing"]] == ["backend=vulkan, slots=4, mtp=false"]
    assert v["slots"]["missing"][0]["status"] == "incomplete"
    assert len(v["validity"]["missing"]) == 4
    md = (out / "report.md").read_text()
    assert md.count("**Provisional: ") == 2  # the headline and the status line
    assert "3 slots is only the best completed point" in md
    assert "3 slots was the knee" not in md and "Recommended setting" not in md
    assert "No recommendation yet: the best completed point so far is Vulkan, 3 slots" in md
    # The partial numbers of the stopped job never enter a verdict.
    assert all(c["values"].get("vulkan") != 210.0 for c in v["backend"]["numbers"]["contexts"])
    assert "49 days (about 7 weeks) older than HIP's" in md
    assert "server's defaults applied (temperature=0.8, top\\_k=40" in md


def test_the_seeds_first_correction_appears_by_itself(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    shutil.copy(FIRST_LEDGER, ledger)
    out = render(SEED, tmp_path / "corrected", f"study.ledger={ledger}")
    md = (out / "report.md").read_text()
    section = md.split("## Corrections", 1)[1].split("\n## ", 1)[0]
    row = next(x for x in section.splitlines() if "| parallel slots |" in x)
    assert "| none up to 3 slots (provisional) |" in row
    assert "| 2-8 slots, 4 by the figures (provisional) |" in row
    assert "the Vulkan, 4 slots, MTP off point had not finished (incomplete)" in row
    assert "workload seed-6 → seed-12" in row
    # Not confirmed since rules v12: its figures are derived (test_verdict_rules_real).
    assert "- backend: Vulkan" not in section
    assert ledger.read_text() == FIRST_LEDGER.read_text()  # rendering never writes the ledger
    ko = render(SEED, tmp_path / "ko", f"study.ledger={ledger}", "study.lang=ko") / "report.md"
    assert "Vulkan, 슬롯 4개, MTP 끔 조합이 완료되지 않았습니다(미완료)" in ko.read_text()


def test_the_ledger_fixture_is_what_publishing_the_first_sweep_records(tmp_path: Path) -> None:
    (entry,) = [json.loads(x) for x in FIRST_LEDGER.read_text().splitlines()]
    render(FIRST, tmp_path / "r", "--publish", str(tmp_path / "blog" / "first"))
    (fresh,) = [json.loads(x) for x in (tmp_path / "blog" / "seed-r9700.ledger.jsonl").open()]

    # The fixture is what the first sweep published; today's rules add reasons and numbers
    # but reach the same verdicts on the same data, but for MTP: its effects read from open
    # pairs' figures are now not decided (the CPU study's review), those decided stand.
    def core(e: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [
            (v["factor"], v["verdict"], v["status"], v["point"])
            for v in e["verdicts"]
            if v["factor"] != "mtp"
        ]

    # Rules v12 (review 8): a verdict resting on derived figures decides nothing, so the
    # backend verdict is provisional, and a claim checked on derived values says so.
    def v12(e: dict[str, Any]) -> dict[str, Any]:
        verdicts = [
            dict(v, status="provisional") if v["factor"] == "backend" else v for v in e["verdicts"]
        ]
        return dict(e, verdicts=verdicts)

    assert core(fresh) == core(v12(entry)) and fresh["context"] == entry["context"]
    (was,) = [v["verdict"] for v in entry["verdicts"] if v["factor"] == "mtp"]
    (now,) = [v["verdict"] for v in fresh["verdicts"] if v["factor"] == "mtp"]
    decided = [r for r in now if r["effect"] != "open"]
    assert decided and all(r["effect"] in {x["effect"] for x in was} for r in decided)
    assert fresh["claims"] == entry["claims"]


def test_every_seed_result_is_reference_data_in_the_contract(tmp_path: Path) -> None:
    for folder in (SEED, FIRST, RETUNE):
        for r in find_results(folder):
            assert r.data["derived"] is True and r.data["reference"]["source"]
            assert r.data["provenance"]["study"]["name"] == "seed-r9700"
    seed_4 = next(
        r
        for r in find_results(SEED)
        if (r.factors["backend"], r.factors["slots"], r.factors["mtp"]) == ("vulkan", 4, False)
    )
    assert seed_4.metrics["s_per_unit_throughput"] == 172.4
    assert "172.4" in seed_4.data["reference"]["measured"]["s_per_unit_throughput"]


def _carried(composed: Any, default: Any, carried: Any) -> Any:
    """`composed` without the keys `carried` lacks, each checked to be at its default."""
    if not isinstance(composed, dict) or not isinstance(carried, dict):
        return composed
    out = {}
    for k, v in composed.items():
        if k in carried:
            out[k] = _carried(v, (default or {}).get(k), carried[k])
        else:
            assert v == (default or {}).get(k), f"{k} is not at its default"
    return out


def test_seed_study_config_composes_as_the_results_carry_it(compose_cfg: Any) -> None:
    from benchkit.config.schema import StudyConfig
    from benchkit.config.schema import to_plain as _plain

    cfg = compose_cfg("study=seed-r9700")
    (seed,) = {json.dumps(r.provenance["study"], sort_keys=True) for r in find_results(SEED)}
    # A key added to the study after the fixtures were recorded (study.quality.reference_model)
    # is absent from them: it must be at its default, and every key they carry must match.
    assert json.loads(seed) == _carried(_plain(cfg.study), _plain(StudyConfig()), json.loads(seed))
    assert cfg.study.claims[0].expected_min == 0.77


# ------------------------------------------------------------------------------- builds


def test_baseline_compares_builds_on_one_basis(tmp_path: Path) -> None:
    out = render(RETUNE, tmp_path / "build", "--baseline", str(FIRST))
    v = verdicts(out)["build"]
    assert v["verdict"] == "faster" and v["status"] == "complete"
    (pair,) = v["numbers"]["pairs"]
    assert pair["change"] == pytest.approx(168.0 / 188.5 - 1)
    assert (pair["base_prefill"], pair["new_prefill"]) == (2476.0, 2884.0)
    assert pair["decode_effect"] == "no difference"
    assert (pair["base_tokens_per_call"], pair["new_tokens_per_call"]) == (1458.0, 1436.0)
    md = (out / "report.md").read_text()
    assert md.startswith("# ") and "**The new build was 11% faster;" in md
    assert (
        "The new build was 11% faster (Vulkan, 3 slots, MTP off: 188.5 s → 168.0 s, throughput "
        "basis); prefill 2,476 → 2,884 tok/s (faster), decode 190 → 191 tok/s (unchanged)."
    ) in md
    assert "- sampling: unspecified → qwen-recommended" in md
    assert (out / "build.png").exists()


def test_baseline_on_another_workload_is_refused_with_the_reason(tmp_path: Path) -> None:
    out = render(SEED, tmp_path / "x", "--baseline", str(FIRST))
    assert verdicts(out)["build"]["verdict"] == "not comparable"
    assert (
        "not on the same basis, so they are not compared (workload: seed-6 → seed-12)"
        in (out / "report.md").read_text()
    )


# ------------------------------------------------------------------------------ publish


def test_publish_writes_a_standalone_blog_folder_and_the_corrections(tmp_path: Path) -> None:
    blog = tmp_path / "blog" / "r9700"
    render(FIRST, tmp_path / "r1", "--publish", str(blog))
    ledger = tmp_path / "blog" / "seed-r9700.ledger.jsonl"
    assert len(ledger.read_text().splitlines()) == 1
    first_md = (blog / "index.md").read_text()
    assert "First publication of this study" in first_md

    render(SEED, tmp_path / "r2", "--publish", str(blog))
    assert len(ledger.read_text().splitlines()) == 2
    md = (blog / "index.md").read_text()
    front, body = md.split("\n---\n\n", 1)
    assert front.startswith("---\ntitle: ")
    fm = dict(line.split(": ", 1) for line in front.splitlines()[1:])
    assert json.loads(fm["status"]) == "provisional" and json.loads(fm["lang"]) == "en"
    # The answer: each verdict a sentence with its figure, then the time (reviews 9 and 11).
    assert json.loads(fm["description"]).startswith(
        "Vulkan looks faster. HIP took 1.31x–1.40x the time of Vulkan. The knee lies"
    )
    assert "Vulkan, 4 slots, MTP off (provisional): about 172.4 s per stock, 4.8 h per 100 " in (
        json.loads(fm["description"])
    )
    assert not body.startswith("# ")  # the title lives in the front matter
    assert "Rendered " not in body and str(repo_root()) not in md  # no local paths
    # The post gives the correction as one sentence; its report keeps the ledger's table.
    now = r"it is now 2-8 slots, 4 by the figures"
    # The first sweep's 3 slots, the largest count, was best by the figures with 2 slots not
    # decided apart from it: "from 2 slots up" (rules v13), where it read "none up to 3 slots".
    was = r"gave parallel slots as from 2 slots up, 3 by the figures \(provisional\); "
    assert re.search(was + now, body)
    for img in re.findall(r"\]\(([^)]+\.png)\)", body):
        assert (blog / img).stat().st_size > 0
    html = (blog / "index.html").read_text()
    assert html.count("data:image/png;base64,") == 3 and 'src="backend.png"' not in html
    assert verdicts(blog)["slots"]["verdict"] == 4

    # Publishing the same results again changes no verdict; the report keeps the correction.
    render(SEED, tmp_path / "r3", "--publish", str(blog))
    again = (blog / "index.md").read_text()
    # A post gives this publication's corrections only; the earlier one stays in its report.
    assert not re.search(r"gave parallel slots as none up to 3 slots", again)
    assert "none up to 3 slots" in (tmp_path / "r3" / "report.md").read_text()
    assert len(ledger.read_text().splitlines()) == 3


# ------------------------------------------------------------------------------ escaping


def _sweep_with_hostile_text(folder: Path) -> None:
    evil = "<script>document.title='pwned'</script> | **x** [l](javascript:alert(1))"
    for i, slots in enumerate((1, 2)):
        d = result("vulkan", slots, s=100.0 / slots, decode=80.0 * slots, model=evil, reason=None)
        d["provenance"]["server"]["argv"] = ["/bin/llama-server", "--alias", "`tick`<b>"]
        atomic_write_json(folder / str(i) / "result.json", d)


def test_text_from_results_stays_text(tmp_path: Path) -> None:
    src = tmp_path / "sweep"
    _sweep_with_hostile_text(src)
    out = render(src, tmp_path / "out")
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert "<script>" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;document.title=" in html
    assert "<b>" not in html and "&lt;b&gt;" in html
    assert "\\<script\\>" in md and "\\| \\*\\*x\\*\\*" in md
    assert "{{" not in html and "{%" not in html


# ------------------------------------------------------------------------------ the CLI


def test_overrides_are_checked_and_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"study\.KEY=VALUE"):
        render_report(SEED, tmp_path / "a", overrides=["slots=4"])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchkit.report",
            str(SEED),
            "study.lang=fr",
            "--out",
            str(tmp_path / "b"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "lang" in proc.stderr and "fr" in proc.stderr
    assert not (tmp_path / "b").exists()


def test_rendering_again_gives_the_same_report(tmp_path: Path) -> None:
    def stable(p: Path) -> str:
        return "\n".join(x for x in p.read_text().splitlines() if not x.startswith("Rendered "))

    a = render(SEED, tmp_path / "a")
    b = render(SEED, tmp_path / "b")
    assert stable(a / "report.md") == stable(b / "report.md")
    assert (a / "verdicts.json").read_text() == (b / "verdicts.json").read_text()


def test_common_flags_are_printed_once_and_nothing_is_dropped() -> None:
    head, rows = command_lines(
        [
            ("0", ["/x/llama-server", "--model", "/m/a.gguf", "--parallel", "1", "--metrics"], "1"),
            (
                "1",
                [
                    "/x/llama-server",
                    "--model",
                    "/m/a.gguf",
                    "--parallel",
                    "2",
                    "--metrics",
                    "--spec-type",
                    "draft-mtp",
                ],
                "2",
            ),
        ]
    )
    assert head == "llama-server --model a.gguf --metrics"
    assert [r["flags"] for r in rows] == ["--parallel 1", "--parallel 2 --spec-type draft-mtp"]


def test_other_hardware_is_listed_apart_and_never_compared(tmp_path: Path) -> None:
    src = tmp_path / "sweep"
    datas = [result("vulkan", n, s=100.0 / n, decode=50.0 * n) for n in (1, 2, 4)]
    datas.append(result("cuda", 4, s=5.0, hardware="rtx5090"))
    for i, d in enumerate(datas):
        atomic_write_json(src / str(i) / "result.json", d)
    out = render(src, tmp_path / "out")
    md = (out / "report.md").read_text()
    other = md.split("## Other hardware", 1)[1].split("\n## ", 1)[0]
    assert "| 3 | rtx5090 | cuda | 4 | 5.0 s |" in other
    assert "more than one hardware (card, rtx5090): numbers across them are not comparable" in md
    v = verdicts(out)
    # CUDA on the other card is not a winner over Vulkan on this one.
    assert v["backend"]["verdict"] is None and v["backend"]["status"] == "provisional"


def test_tokenizer_mismatch_shows_both_counts(tmp_path: Path) -> None:
    import json
    import shutil

    from benchkit.paths import repo_root
    from benchkit.report.writeup.render import render_report

    src = tmp_path / "sweep"
    shutil.copytree(repo_root() / "fixtures" / "results" / "seed-r9700", src)
    first = sorted(src.glob("*/result.json"))[0]
    data = json.loads(first.read_text())
    data["metrics"].update(
        prompt_tokens=900, fixture_prompt_tokens=1000, prompt_token_mismatches=2, calls_completed=5
    )
    first.write_text(json.dumps(data))
    out = render_report(src, tmp_path / "report")
    md = (out / "report.md").read_text()
    want = f"Job {first.parent.name}: the server counted 900 prompt tokens where the fixture"
    assert want in md and "records 1,000 (2 of 5 completed calls differ" in md


def test_a_partial_workload_is_named_beside_the_fixtures_totals(tmp_path: Path) -> None:
    wl = {"fixture": "gpu-16", "units": 16, "calls": 277, "prompt_tokens": 332400,
          "max_prompt_tokens": 3642, "completion_tokens": 13296, "output_policy": "replay",
          "cap": 256}  # fmt: skip
    for i, (prov_extra, planned) in enumerate([({"units_replayed": 8}, 8), ({}, 6)]):
        data = result("cuda", 1, metrics={"units_planned": planned})
        data["provenance"]["workload"] = {**wl, **prov_extra}
        atomic_write_json(tmp_path / f"r{i}" / "0" / "result.json", data)
        md = (render(tmp_path / f"r{i}", tmp_path / f"out{i}") / "report.md").read_text()
        # Older results lack units_replayed: units_planned / repeats says the same.
        assert f"Only its first {planned} of 16 units were replayed" in md
    whole = result("cuda", 1, metrics={"units_planned": 16})
    whole["provenance"]["workload"] = {**wl, "units_replayed": 16}
    atomic_write_json(tmp_path / "r2" / "0" / "result.json", whole)
    assert (
        "Only its first" not in (render(tmp_path / "r2", tmp_path / "o2") / "report.md").read_text()
    )


def test_study_texts_in_the_reports_language_fall_back_key_by_key(tmp_path: Path) -> None:
    from benchkit.config.schema import ClaimConfig, ClaimText, StudyConfig, StudyText
    from benchkit.report.writeup.render import study_words

    study = StudyConfig(
        title="T", question="Q", unit_name="stock", untested=["u1"],
        claims=[ClaimConfig(premise="P", source="S", metric="draft_acceptance")],
        text={"ko": StudyText(title="제목", claims=[ClaimText(premise="전제")])},
    )  # fmt: skip
    ko = study_words(study, "ko")
    assert (ko.title, ko.question, ko.unit_name, ko.untested) == ("제목", "Q", "종목", ["u1"])
    assert ko.claims == [ClaimText("전제", "S")]
    en = study_words(study, "en")
    assert (en.title, en.unit_name, en.claims) == ("T", "stock", [ClaimText("P", "S")])

    # The seed's Korean write-up: its own title, question, untested items and claim.
    out = render(SEED, tmp_path / "ko", "study.lang=ko")
    md = (out / "report.md").read_text()
    assert md.startswith("# R9700 한 장에서 35B MoE 돌리기")
    assert "HIP에서 MTP 투기 토큰 수용률이 77~95%이므로" in md
    assert "Quantizations above" not in md and "Which serving settings" not in md
    assert "끔가" not in md and "켬가" not in md
    assert "단위" not in md and "종목당 초" in md  # one term: the study's unit, 종목

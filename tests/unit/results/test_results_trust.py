"""Issue #42's attacks on results read from disk, each reproduced on a results folder written
by hand (a copy of a published study, signed with the test session's key as a job signs it):

1. a race resumed after a finished job's result.json was edited (digest left stale) took it;
2. the report published a consistently edited result without a word;
3. an edited result whose unkeyed digest was computed again was reused;
7. a calls.jsonl linked to /dev/zero made the report read until a MemoryError;
and a job folder linked outside the sweep was followed, and a right-to-left override in a
result passed raw into report.md, report.html and results.csv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.errors import UserError
from benchkit.paths import repo_root
from benchkit.racing.observe import unit_values
from benchkit.racing.policy import RaceSettings
from benchkit.racing.run import Race
from benchkit.report.writeup.render import render_report
from benchkit.results import bounded, trust
from benchkit.results.reuse import proves_itself
from benchkit.results.store import find_results
from benchkit.results.trust import KEY_ENV, Trust, check, digest, sign

STUDIES = repo_root() / "docs" / "studies"
QWEN = STUDIES / "h200-qwen3-30b-a3b" / "results"  # 7 jobs, slots 1..16, no digest
H100 = STUDIES / "h100-vulkan-vs-cuda-warm" / "results"  # 20 raced jobs, unkeyed digests


def signed_copy(src: Path, dst: Path) -> Path:
    """`src` copied to `dst`, every result with figures signed with this session's key."""
    shutil.copytree(src, dst)
    for p in sorted(dst.glob("*/result.json")):
        data = json.loads(p.read_text())
        if data["status"] in trust.MEASURED_STATUSES:
            data["provenance"]["digest"] = sign(data, p.parent)
            p.write_text(json.dumps(data))
    return dst


def edit(job: Path, **scale: float) -> dict[str, object]:
    """The attack's edit: metrics scaled by hand, consistently, the digest left as it was."""
    data = json.loads((job / "result.json").read_text())
    for key, factor in scale.items():
        data["metrics"][key] *= factor
    (job / "result.json").write_text(json.dumps(data))
    return dict(data)


def report_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit.report", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


# ------------------------------------------------------------------ the key


def test_the_key_is_made_once_private_and_refused_when_others_can_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "key"
    monkeypatch.setenv(KEY_ENV, str(path))
    key = trust.user_key()
    assert path.stat().st_mode & 0o777 == 0o600 and trust.user_key() == key
    path.chmod(0o644)
    with pytest.raises(UserError, match=r"chmod 600 .*key"):
        trust.user_key()


def test_a_result_signed_here_verifies_and_one_signed_elsewhere_is_foreign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = signed_copy(QWEN, tmp_path / "mine")
    data = json.loads((folder / "0" / "result.json").read_text())
    assert check(data, folder / "0").trust is Trust.VERIFIED
    # Another user's key: neither verified nor refused; said to be unverifiable.
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "other-key"))
    theirs = check(data, folder / "0")
    assert theirs.trust is Trust.FOREIGN and "another user's key" in str(theirs.why)
    assert proves_itself(data, folder / "0") is not None  # never reused as this user's


# ------------------------------------------------------------------ attack 3: re-signed


def test_an_edit_with_its_unkeyed_digest_recomputed_is_not_reused(tmp_path: Path) -> None:
    """The recipe: ttft p95 edited from 10.5 ms to 1 ms, `digest()` computed again."""
    folder = signed_copy(QWEN, tmp_path / "s")
    job = folder / "0"
    data = json.loads((job / "result.json").read_text())
    data["metrics"]["ttft_ms"]["p90"] = 1.0
    data["provenance"]["digest"] = digest(data, job)  # what benchkit.results.reuse.digest() was
    assert proves_itself(data, job) is not None  # it was None before the key
    assert check(data, job).trust is Trust.UNKEYED
    # A keyed digest computed without the key does not verify either.
    data["provenance"]["digest"] = f"hmac-sha256:{trust.key_id(trust.user_key())}:{'0' * 64}"
    assert check(data, job).trust is Trust.BROKEN


# ------------------------------------------------------------------ attack 2: the report


def test_the_report_leaves_out_an_edited_result_and_names_it(tmp_path: Path) -> None:
    folder = signed_copy(QWEN, tmp_path / "s")
    # 1 slot made ten times faster: before the check, the report recommended it.
    edit(folder / "0", wall_s=0.1, s_per_unit_throughput=0.1, s_per_unit_slot_latency=0.1)
    out = render_report(folder, tmp_path / "report")
    md = (out / "report.md").read_text()
    assert "Job 0: result.json does not match its digest (it was edited after benchkit" in md
    assert "left out of this report" in md
    assert "| 1 slot" in md or "1 slot" in md  # the point is named among those not complete
    assert "its result.json does not match its digest (edited after it was written)" in md
    csv = (out / "results.csv").read_text().splitlines()
    row0 = next(r for r in csv if r.startswith("0,"))
    assert ",failed," in row0 and "0.759" not in row0  # the forged figure is in no table
    assert "Recommended setting" not in md or "1 slot" not in md.split("Recommended")[1][:80]
    # In Korean too: the same sentence in the report's language.
    ko = render_report(folder, tmp_path / "ko", overrides=["study.lang=ko"])
    assert "result.json이 다이제스트와 맞지 않습니다" in (ko / "report.md").read_text()


def test_the_published_studies_render_and_say_what_their_digests_prove() -> None:
    h100 = find_results(H100)
    assert {r.trust for r in h100} == {Trust.UNKEYED}
    assert {r.trust for r in find_results(QWEN)} == {Trust.UNSIGNED}
    from benchkit.report.writeup.trust_words import trust_sentences

    (said,) = trust_sentences(h100, "en")
    assert said.startswith("Every job: the results carry an unkeyed digest")


def test_results_signed_by_another_user_render_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = signed_copy(QWEN, tmp_path / "s")
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "another-users-key"))
    md = (render_report(folder, tmp_path / "r") / "report.md").read_text()
    assert "signed with another user's key, which this user's key cannot verify" in md
    assert "does not match its digest" not in md


# ------------------------------------------------------------------ attack 1: a race resumed


def _calls(job: Path, units: int) -> None:
    rows = [
        {
            "unit": f"u{u}",
            "seq": 0,
            "repeat": 0,
            "ok": True,
            "t_sent": 10.0 * u,
            "t_done": 10.0 * u + 5 + u,
        }
        for u in range(units)
    ]
    (job / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_race_resumed_after_an_edit_measures_the_point_again(tmp_path: Path) -> None:
    grid = [["slots=1"], ["slots=2"]]
    for point, ov in enumerate(grid):
        job = tmp_path / str(point)
        job.mkdir()
        _calls(job, 3)
        result = {
            "status": "complete",
            "metrics": {"units_completed": 3, "wall_s": 30.0, "s_per_unit_throughput": 10.0},
            "provenance": {"overrides": [*ov, "workload.units=3"]},
        }
        result["provenance"]["digest"] = sign(result, job)
        (job / "result.json").write_text(json.dumps(result))

    def race() -> Race:
        return Race(
            grid=grid,
            swept=["slots"],
            sweep_dir=tmp_path,
            settings=RaceSettings(),
            study={"objective": "throughput"},
            fixture=str(repo_root() / "fixtures" / "workloads" / "gpu-16"),
        )

    assert race()._has("0", 3) and unit_values(tmp_path / "0")
    # The recipe: wall_s and seconds per unit divided by 10, the digest left stale.
    edit(tmp_path / "0", wall_s=0.1, s_per_unit_throughput=0.1)
    again = race()
    assert not again._has("0", 3) and again._wall("0") is None  # the point runs again
    assert again._has("1", 3)  # the untouched one does not
    assert unit_values(tmp_path / "0") == {}  # nor does the report restate it from the edit


# ------------------------------------------------------------------ attack 7: bounded reads


def test_calls_linked_to_dev_zero_is_one_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    shutil.copytree(QWEN, folder)
    (folder / "2" / "calls.jsonl").unlink()
    os.symlink("/dev/zero", folder / "2" / "calls.jsonl")
    p = report_cli(folder, "--out", tmp_path / "r", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "MemoryError" not in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("benchkit.report: ")]
    assert "2/calls.jsonl leads outside" in line or "calls.jsonl is a device" in line


def test_a_job_folder_linked_outside_the_sweep_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    shutil.copytree(QWEN, folder)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(folder / "3", elsewhere)
    os.symlink(elsewhere, folder / "3")
    with pytest.raises(UserError, match=r"3/result.json leads outside .* copy the file"):
        find_results(folder)


@pytest.mark.parametrize("kind", ["device", "pipe", "large", "long line"])
def test_every_read_of_a_results_folder_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "calls.jsonl"
    if kind == "device":
        path = Path("/dev/null")
        root: Path | None = Path("/dev")
    elif kind == "pipe":
        os.mkfifo(path)
        root = None
    else:
        monkeypatch.setenv(bounded.LIMIT_ENV, "1")
        monkeypatch.setattr(bounded, "LINE_LIMIT", 1000)
        path.write_bytes(b"x" * (2 << 20) if kind == "large" else b"x" * 5000)
        root = None
    with pytest.raises(UserError) as exc:
        list(bounded.lines(path, root))
    said = str(exc.value)
    assert str(path) in said and "\n" not in said
    assert {"device": "a device", "pipe": "a pipe", "large": "MiB", "long line": "line"}[
        kind
    ] in said


# ------------------------------------------------------------------ text from results


def test_bidirectional_controls_from_results_are_shown_not_obeyed(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    shutil.copytree(QWEN, folder)
    p = folder / "5" / "result.json"
    data = json.loads(p.read_text())
    data.update(status="failed", reason="bad \u202egguf.exe\u202c and \u2066x\u2069 \u200f")
    p.write_text(json.dumps(data))
    out = render_report(folder, tmp_path / "r")
    for name in ("report.md", "report.html", "results.csv"):
        text = (out / name).read_text()
        assert not any(
            c in text
            for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
        ), name
        assert "[U+202E]gguf.exe[U+202C]" in text, name


def test_results_share_their_repeated_strings(tmp_path: Path) -> None:
    """Two results read: the keys, the string values and the strings of lists they repeat are
    one object each (a sweep's report holds every result; the repeats were most of them)."""
    text = json.dumps(
        {"status": "failed", "reason": "x", "provenance": {"overrides": ["slots=4", "mtp=true"]}}
    )
    reads = []
    for job in ("0", "1"):
        (tmp_path / job).mkdir()
        (tmp_path / job / "result.json").write_text(text)
        reads.append(trust.read_result(tmp_path / job / "result.json", tmp_path).data)
    first, second = (r["provenance"]["overrides"] for r in reads)
    assert first == second == ["slots=4", "mtp=true"]
    assert all(a is b for a, b in zip(first, second, strict=True))
    assert reads[0]["reason"] is reads[1]["reason"]

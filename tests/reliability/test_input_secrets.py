"""Bad input is one clear sentence and a non-zero exit; secrets never reach any output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.conftest import chat_fixture, result, run

SECRET = "sk-benchkit-test-7f3a9c1e5b"


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (
            ["model.path=/nonexistent/model.gguf"],
            "model.path=/nonexistent/model.gguf does not exist",
        ),
        (["backend.server_bin=/nonexistent/llama-server"], "is not an executable file"),
        (["server.ctx_policy=fixed", "server.ctx=1024"], "longest prompt"),
        (["slots=0"], "slots=0"),
        (["workload.fixture=/nonexistent/fixture"], "nonexistent"),
    ],
)
def test_bad_input_is_one_sentence_and_a_nonzero_exit(
    tmp_path: Path, tag: str, args: list[str], expect: str
) -> None:
    run_dir = tmp_path / tag
    p = run(*args, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    r = result(run_dir)
    assert r["status"] == "failed"
    assert expect in r["reason"] and "\n" not in r["reason"]
    assert not list(run_dir.glob("**/*.tmp"))


def test_a_chat_fixture_without_prompt_lengths_is_fitted_by_its_bytes(
    tmp_path: Path, tag: str
) -> None:
    """server.ctx_policy=fit (the default) sizes a workload that records no prompt lengths
    (text written for real models, whose length depends on the tokenizer) by its UTF-8 bytes
    plus a template allowance: a bound no tokenizer exceeds, so the run completes on the real
    server where it used to fail every job (#44: workload=code-edit-10), and says so."""
    run_dir = tmp_path / tag
    fx = chat_fixture(tmp_path / "chat-2")
    p = run(f"workload.fixture={fx}", "slots=1", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    r = result(run_dir)
    assert p.returncode == 0 and r["status"] == "complete", r["reason"]
    flags = r["provenance"]["server"]["argv"]
    ctx = int(flags[flags.index("--ctx-size") + 1])
    # "Say 0." is 6 bytes: 6 + 256 for the template + 16 for its message, plus the cap of 8,
    # padded to a multiple of 256.
    assert ctx == 512
    log = (run_dir / "benchkit.log").read_text()
    assert "record no prompt length" in log and "UTF-8 bytes" in log


def test_bad_fixture_line_names_file_and_line(tmp_path: Path, tag: str) -> None:
    fx = tmp_path / "fx"
    fx.mkdir()
    meta = {"format": 1, "name": "fx", "kind": "tokens", "cap": 8, "output_policy": "replay"}
    (fx / "fixture.json").write_text(json.dumps({**meta, "description": "", "recipe": None}))
    good = {"unit": "u0", "seq": 0, "role": "r", "max_tokens": 8, "completion_tokens": 4}
    good["prompt"] = {"segments": [{"key": None, "len": 5}]}
    bad = {"unit": "u0", "seq": 1, "role": "r", "prompt": 7}
    (fx / "calls.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    run_dir = tmp_path / tag
    p = run(f"workload.fixture={fx}", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1
    reason = result(run_dir)["reason"]
    assert f"{fx / 'calls.jsonl'}:2" in reason


@pytest.mark.slow
def test_api_key_reaches_server_and_client_but_no_output(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run(
        "slots=1",
        "workload.units=1",
        f"backend.api_key={SECRET}",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    r = result(run_dir)
    # complete means every authenticated call was accepted by the server
    assert r["status"] == "complete", r["reason"]
    assert p.returncode == 0
    leaks = [f for f in run_dir.rglob("*") if f.is_file() and SECRET.encode() in f.read_bytes()]
    assert leaks == []
    assert SECRET not in p.stdout + p.stderr


@pytest.mark.slow
def test_api_key_from_environment(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run(
        "slots=1",
        "workload.units=1",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
        env={"BENCHKIT_API_KEY": SECRET},
    )
    assert result(run_dir)["status"] == "complete"
    assert p.returncode == 0
    leaks = [f for f in run_dir.rglob("*") if f.is_file() and SECRET.encode() in f.read_bytes()]
    assert leaks == []


@pytest.mark.slow
def test_model_name_with_markup_stays_inert_in_the_report(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    name = "<script>alert(1)</script>"
    p = run(
        "slots=1",
        "workload.units=1",
        f"model.name='{name}'",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    html = (run_dir / "report" / "report.html").read_text()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;" in html

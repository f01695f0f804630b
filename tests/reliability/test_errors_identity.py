"""HTTP errors counted, never averaged in; identity of the server proven or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.server.build import build_server
from benchkit.server.plan import ServerSpec
from benchkit.server.provide import provide_model
from benchkit.server.serve import RunningServer, free_port
from tests.reliability.conftest import chat_fixture, lines, result, run

pytestmark = pytest.mark.slow


def test_context_overflow_errors_are_counted_and_fail_the_job(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    # A later --ctx-size wins inside llama-server: every slot gets 2048 tokens, too few for
    # the longer prompts, which the server answers with HTTP 400.
    p = run(
        "slots=1",
        "workload.units=1",
        "server.extra_args=[--ctx-size,2048]",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    assert p.returncode == 1
    r = result(run_dir)
    m = r["metrics"]
    assert r["status"] == "failed"
    assert m["calls_failed"] > 0 and m["error_rate"] > 0
    assert "exceed_context_size_error" in r["reason"]
    failed = [x for x in lines(run_dir / "calls.jsonl") if not x["ok"]]
    assert len(failed) == m["calls_failed"]
    assert all(x["http_status"] == 400 for x in failed)
    # Failed calls' tokens are not in the totals.
    assert m["completion_tokens"] == sum(
        x["completion_tokens"] or 0 for x in lines(run_dir / "calls.jsonl") if x["ok"]
    )


def test_error_threshold_lets_a_job_finish_but_not_complete(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run(
        "slots=1",
        "workload.units=1",
        "server.extra_args=[--ctx-size,2048]",
        "server.max_error_rate=1.0",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    r = result(run_dir)
    assert r["status"] == "incomplete", r["reason"]
    assert r["metrics"]["units_completed"] == 0
    assert p.returncode == 1


def test_server_errors_5xx_are_counted_and_fail_the_job(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    # llama-server's chat endpoint throws a runtime_error for a request that carries both a
    # json_schema and a grammar, which its handler maps to HTTP 500 "Cannot use both
    # json_schema and grammar": a real 5xx from the real server, for every call.
    p = run(
        f"workload.fixture={chat_fixture(tmp_path / 'chat-2', prompt_tokens=32)}",
        "slots=1",
        "+sampling.extra.json_schema={type:object}",
        "+sampling.extra.grammar='root ::= \"a\"'",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    assert p.returncode == 1, p.stderr[-2000:]
    r = result(run_dir)
    m = r["metrics"]
    assert r["status"] == "failed"
    assert m["calls_completed"] == 0 and m["error_rate"] == 1.0
    assert "Cannot use both json_schema and grammar" in r["reason"]
    assert r["provenance"]["sampling"]["sent"]["json_schema"] == {"type": "object"}
    failed = [x for x in lines(run_dir / "calls.jsonl") if not x["ok"]]
    assert len(failed) == m["calls_failed"] == 2
    assert {x["http_status"] for x in failed} == {500}
    assert all("HTTP 500" in x["error"] for x in failed)
    # The report names the failure and its first error, and lists what was sent.
    report = (run_dir / "report" / "report.md").read_text()
    assert "2 of 2 calls failed" in report
    assert "HTTP 500: server\\_error: Cannot use both json\\_schema and grammar" in report
    assert 'json\\_schema=\\{"type": "object"\\}' in report


@pytest.fixture
def external_server(tmp_path: Path, compose_cfg):  # type: ignore[no-untyped-def]
    cfg = compose_cfg()
    binary, _ = build_server(cfg.backend)
    model = provide_model(cfg)
    port = free_port()
    spec = ServerSpec(
        argv=(
            str(binary),
            "-m",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--alias",
            "tiny-moe",
            "-np",
            "2",
            "-c",
            "16384",
        ),
        env={},
        port=port,
        alias="tiny-moe",
        slots=2,
    )
    with RunningServer(spec, tmp_path / "ext.log") as srv:
        srv.start(120)
        yield f"http://127.0.0.1:{port}"


def test_external_server_is_measured_only_when_it_is_the_declared_one(
    tmp_path: Path, tag: str, external_server: str
) -> None:
    ok_dir = tmp_path / f"{tag}-ok"
    p = run(
        "backend=external",
        f"backend.url={external_server}",
        "model.name=tiny-moe",
        "slots=2",
        "workload.units=1",
        f"hydra.run.dir={ok_dir}",
        cwd=tmp_path,
    )
    r = result(ok_dir)
    assert r["status"] == "complete", r["reason"]
    assert p.returncode == 0
    assert r["provenance"]["server"]["external"] is True

    for bad, words in (
        ("slots=3", "total_slots=2, not slots=3"),
        ("model.name=qwen-72b", "not model.name='qwen-72b'"),
    ):
        d = tmp_path / f"{tag}-{bad.split('=')[0]}"
        # Each key once: a key given twice is refused before anything runs (review 12).
        model = [] if bad.startswith("model.name=") else ["model.name=tiny-moe"]
        p = run(
            "backend=external",
            f"backend.url={external_server}",
            *model,
            bad,
            "workload.units=1",
            f"hydra.run.dir={d}",
            cwd=tmp_path,
        )
        r = result(d)
        assert r["status"] == "failed" and words in r["reason"]
        assert "Refusing to measure" in r["reason"]
        # Refused before any measurement: not one call was sent.
        assert lines(d / "calls.jsonl") == []

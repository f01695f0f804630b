"""benchkit.job.run's one path: every engine is provided, planned, started once per pass, proven
to be the job's, replayed against and read back in the same order, with the stand-in engine
(tests/engine_standin.py) as the server process. The real llama-server takes the same path
in tests/reliability and tests/test_sweep_integration.py."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchkit.config.schema import BenchConfig, to_plain
from benchkit.job import run as job
from benchkit.server.engines import Engine, engine_for
from benchkit.server.plan import ServerSpec
from benchkit.server.serve import RunningServer, free_port
from tests.unit.server.conftest import STANDIN, run

Compose = Callable[..., BenchConfig]


class Recorder:
    """An Engine that passes every call on to the real one and notes its name."""

    def __init__(self, engine: Engine, calls: list[str]) -> None:
        self.engine, self.calls = engine, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.engine, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return call


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(job, "engine_for", lambda cfg: Recorder(engine_for(cfg), seen))
    return seen


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.fixture
def external(tmp_path: Path) -> Iterator[str]:
    """The stand-in started as a server someone else runs: model tiny-moe, 2 slots."""
    port = free_port()
    argv = (sys.executable, str(STANDIN), "vllm", "x", "--port", str(port))
    argv += ("--served-model-name", "tiny-moe", "--max-num-seqs", "2")
    spec = ServerSpec(argv=argv, env={}, port=port, alias="tiny-moe", slots=2)
    with RunningServer(spec, tmp_path / "external.log") as srv:
        srv.start(60)
        yield spec.base_url


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_every_engine_benchkit_starts_takes_the_one_path(
    engine: str, compose_cfg: Compose, tmp_path: Path, gpu_here: None, calls: list[str]
) -> None:
    result, _ = run(compose_cfg, tmp_path, engine, "repeats=2")
    assert result["status"] == "complete", result["reason"]
    # One server per pass, each proven and read back.
    # Each pass: its server, the counters after the warm-up, the counters after the replay.
    pass_ = ["server", "counters", "counters"]
    assert calls == ["provide", "models", "plan", *pass_, *pass_]
    assert (tmp_path / "job" / "server.log").exists()
    assert (tmp_path / "job" / "server.1.log").exists()
    assert [p["units_completed"] for p in result["passes"]] == [1, 1]
    assert [c["engine"] for c in result["metrics"]["server"]] == [engine, engine]
    # The passes share one clock: the second starts after the first has ended.
    records = lines(tmp_path / "job" / "calls.jsonl")
    first = [r for r in records if r["repeat"] == 0]
    second = [r for r in records if r["repeat"] == 1]
    assert first and second
    assert min(r["t_sent"] for r in second) > max(r["t_done"] for r in first)


def test_an_external_server_takes_the_same_path_and_is_not_sampled(
    compose_cfg: Compose, tmp_path: Path, external: str, calls: list[str]
) -> None:
    cfg = compose_cfg("backend=external", f"backend.url={external}/", "slots=2", "workload.units=1")
    result = job.run_job(cfg, job.JobContext(job_dir=tmp_path / "job"))
    assert result["status"] == "complete", result["reason"]
    # Nothing to build, start or read counters from: the same steps otherwise.
    assert calls == ["provide", "models", "plan", "server"]
    server = result["provenance"]["server"]
    assert server["url"] == external and server["external"] is True
    assert server["alias"] == "tiny-moe" and server["props"]["total_slots"] == 2
    assert "server_build" not in result["provenance"]
    m = result["metrics"]
    assert m["units_completed"] == m["units_planned"] == 1
    assert "server" not in m
    assert m["telemetry"]["reason"] == (
        "backend=external: benchkit did not start the server, so neither its process nor its "
        "GPU is known to be this job's"
    )


def test_an_external_server_with_other_slots_is_refused_before_any_call(
    compose_cfg: Compose, tmp_path: Path, external: str
) -> None:
    cfg = compose_cfg("backend=external", f"backend.url={external}", "slots=3")
    result = job.run_job(cfg, job.JobContext(job_dir=tmp_path / "job"))
    assert result["status"] == "failed"
    assert result["reason"] == (
        f"Refusing to measure {external}: it has total_slots=2, not slots=3. Fix the server "
        "or the config."
    )
    assert not (tmp_path / "job" / "calls.jsonl").exists()


def test_external_without_a_url_fails_with_the_fix(compose_cfg: Compose, tmp_path: Path) -> None:
    result = job.run_job(compose_cfg("backend=external"), job.JobContext(job_dir=tmp_path))
    assert result["status"] == "failed"
    assert result["reason"] == "backend=external needs backend.url=URL of a running llama-server."


def test_a_complete_job_is_reused_without_starting_a_server(
    compose_cfg: Compose,
    tmp_path: Path,
    gpu_here: None,
    calls: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, _ = run(compose_cfg, tmp_path, "vllm", "resume=true")
    assert first["status"] == "complete", first["reason"]
    calls.clear()
    again, _ = run(compose_cfg, tmp_path, "vllm", "resume=true")
    assert calls == ["provide"]
    assert again["status"] == "complete"
    assert again["provenance"]["reused_from"] == str(tmp_path / "job")
    assert again["metrics"] == first["metrics"]
    # How the pass was measured stays with it: the H100 machine check's reused jobs lost
    # their warm-up record, and the report then called it "not recorded".
    assert "warmup" in first["provenance"]
    assert again["provenance"]["warmup"] == first["provenance"]["warmup"]


def test_resume_key_leaves_an_unset_replay_client_out(compose_cfg: Compose) -> None:
    """Jobs measured before `replay_client`, `cache_dir`, `llama_quantize`, the drift probe
    (`quality`, `study.quality`) and open-loop load (`load`, closed by default) existed keep
    their keys (they can be resumed); setting replay_client or an open-loop load is a
    different measurement, so a different key; where the cache lives is not."""
    cfg = compose_cfg()
    assert cfg.replay_client is None
    conf = to_plain(cfg)
    keys = ("resume", "resume_from", "replay_client", "cache_dir", "llama_quantize", "quality")
    for key in (*keys, "load"):
        conf.pop(key)
    conf["study"].pop("quality")  # type: ignore[attr-defined]
    # spec=none composes a draft model it never uses (benchkit.config.drafting): its key holds none,
    # as before spec=none composed one.
    conf["spec"]["draft_model"] = None  # type: ignore[index]
    blob = json.dumps([conf, "fp", "build"], sort_keys=True, default=str)
    before = hashlib.sha256(blob.encode()).hexdigest()[:20]
    assert job.resume_key(cfg, "fp", "build") == before
    assert job.resume_key(compose_cfg("replay_client=httpx"), "fp", "build") != before
    assert job.resume_key(compose_cfg("load=poisson"), "fp", "build") != before
    moved = compose_cfg("cache_dir=/tmp/elsewhere", "llama_quantize=/opt/llama-quantize")
    assert job.resume_key(moved, "fp", "build") == before


def test_a_bad_task_file_fails_the_job_before_anything_is_built_or_measured(
    compose_cfg: Compose, tmp_path: Path, calls: list[str]
) -> None:
    bad = tmp_path / "task.yaml"
    bad.write_text("- prompt: 2 + 2 =\n  expected: 4\n  scorer: close-enough\n")
    result = job.run_job(compose_cfg(f"quality.task={bad}"), job.JobContext(job_dir=tmp_path / "j"))
    assert result["status"] == "failed"
    assert result["reason"].startswith(f"{bad}: item 1 has scorer 'close-enough'; use one of")
    assert calls == []  # not even provided: no build, no server, no call
    assert not (tmp_path / "j" / "calls.jsonl").exists()
    scorer = compose_cfg("quality.task=arith", "quality.task_scorer=nowhere_module:f")
    result = job.run_job(scorer, job.JobContext(job_dir=tmp_path / "k"))
    assert result["status"] == "failed" and "cannot import nowhere_module" in result["reason"]
    assert calls == []


def test_a_reused_job_carries_the_task_it_answered(
    compose_cfg: Compose, tmp_path: Path, gpu_here: None, calls: list[str]
) -> None:
    # vllm has no /completion: the task block says why it is empty, and still names the file.
    first, _ = run(compose_cfg, tmp_path, "vllm", "resume=true", "quality.task=arith")
    assert first["status"] == "complete", first["reason"]
    assert first["task"]["task"] == "arith.yaml" and "has none" in first["task"]["skipped"]
    calls.clear()
    again, _ = run(compose_cfg, tmp_path, "vllm", "resume=true", "quality.task=arith")
    assert calls == ["provide"] and again["provenance"]["reused_from"] == str(tmp_path / "job")
    assert again["task"] == first["task"]

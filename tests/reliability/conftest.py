"""Helpers for reliability tests: run benchkit as a user would and reach its llama-server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchkit.paths import repo_root


def benchkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchkit", *args]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        benchkit_cmd(*args),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def default_sigint() -> None:
    """In the child, Ctrl-C as a terminal delivers it: a shell runs a background job (`make
    test &`) with SIGINT ignored, and Python then never turns it into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        benchkit_cmd(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        preexec_fn=default_sigint,
    )


def server_pids(tag: str) -> list[int]:
    """PIDs of llama-server processes whose alias carries `tag` (each job's alias is unique)."""
    out = subprocess.run(
        ["pgrep", "-f", f"alias benchkit-{tag}-"], capture_output=True, text=True, check=False
    )
    return [int(x) for x in out.stdout.split()]


def wait_for(pred: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def result(job_dir: Path) -> dict[str, Any]:
    return dict(json.loads((job_dir / "result.json").read_text()))


def no_zombies_or_orphans(tag: str) -> None:
    assert server_pids(tag) == [], f"llama-server of {tag} still running"


@pytest.fixture
def tag() -> str:
    return "t" + uuid.uuid4().hex[:10]


@pytest.fixture(autouse=True)
def _kill_leftovers(tag: str) -> Any:
    yield
    for pid in server_pids(tag):
        os.kill(pid, signal.SIGKILL)


REPO = repo_root()


def chat_fixture(d: Path, prompt_tokens: int | None = None) -> Path:
    """Two one-call chat units (the recorder's kind of fixture), with or without each call's
    recorded prompt length."""
    d.mkdir()
    meta = {
        "format": 1,
        "name": "chat-2",
        "kind": "chat",
        "cap": 8,
        "output_policy": "replay",
        "description": "two chat calls",
        "recipe": None,
    }
    (d / "fixture.json").write_text(json.dumps(meta))
    calls = [
        {
            "unit": f"u{i}",
            "seq": 0,
            "role": "ask",
            "prompt": {"messages": [{"role": "user", "content": f"Say {i}."}]},
            "max_tokens": 8,
            "completion_tokens": 4,
            **({} if prompt_tokens is None else {"prompt_tokens": prompt_tokens}),
        }
        for i in range(2)
    ]
    (d / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    return d

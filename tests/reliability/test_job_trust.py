"""A job as a new user and a hostile one drive it (issue #31, items 3 to 8), on the real CPU
llama-server with the synthetic model: nothing lost, nothing foreign trusted, no secret kept,
and every mistake one sentence naming the problem and the fix.

Each test first does what the issue's recipe did (a forged result beside a run, two sweeps
into one folder, a key with a quote, a full disk, ...) and then asserts the outcome.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchkit.results.reuse import proves_itself
from benchkit.results.scrub import Secrets
from tests.reliability.conftest import lines, result, run, start, wait_for

SMALL = ("slots=1", "workload.units=1")


def files_under(root: Path) -> Iterator[Path]:
    for dirpath, _, names in os.walk(root):
        for name in names:
            yield Path(dirpath) / name


def secret_free(root: Path, *values: str, typed: tuple[str, ...] = ()) -> None:
    """No file under root holds a secret, in any form benchkit knows or as it was typed."""
    forms = [f.encode() for f in Secrets(values).forms()] + [t.encode() for t in typed]
    for path in files_under(root):
        data = path.read_bytes()
        for form in forms:
            assert form not in data, f"{path} holds {form!r}"


# ------------------------------------------------------------------ 3. reuse, verified


@pytest.mark.slow
def test_a_forged_result_is_never_reused(tmp_path: Path, tag: str) -> None:
    runs = tmp_path / "runs"
    a = runs / f"{tag}-a"
    p = run(*SMALL, f"hydra.run.dir={a}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    measured = result(a)["metrics"]

    # The recipe: a copy of the run, made 10,000x faster by hand, saved beside it.
    forged = runs / f"{tag}-forged"
    shutil.copytree(a, forged)
    doc = result(forged)
    doc["metrics"].update(s_per_unit_throughput=0.000123, decode_tok_s=999_999.0)
    (forged / "result.json").write_text(json.dumps(doc))

    # A new run beside both (hydra.run.dir under the same parent, as /tmp/x would be) takes
    # neither: a single run reuses only its own folder.
    c = runs / f"{tag}-c"
    p = run(*SMALL, f"hydra.run.dir={c}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    rc = result(c)
    assert "reused_from" not in rc["provenance"] and "reused from" not in p.stderr
    assert rc["metrics"]["decode_tok_s"] != 999_999.0

    # Named explicitly, the forged folder is still refused: its digest does not match.
    d = runs / f"{tag}-d"
    p = run(*SMALL, f"hydra.run.dir={d}", f"resume_from={forged}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "does not match its digest (edited after it was written)" in p.stderr
    assert result(d)["provenance"].get("reused_from") is None
    assert result(d)["metrics"]["s_per_unit_throughput"] != 0.000123

    # The same edit in the run's own folder: measured again, never taken.
    (a / "result.json").write_text(json.dumps({**result(a), "metrics": doc["metrics"]}))
    p = run(*SMALL, f"hydra.run.dir={a}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "reused from" not in p.stderr and result(a)["metrics"]["decode_tok_s"] != 999_999.0

    # A genuine result named by resume_from is reused, unchanged, without measuring.
    e = runs / f"{tag}-e"
    p = run(*SMALL, f"hydra.run.dir={e}", f"resume_from={c}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert result(e)["provenance"]["reused_from"] == str(c)
    assert result(e)["metrics"] == rc["metrics"] and proves_itself(result(e), e) is None
    assert measured != doc["metrics"]


# ------------------------------------------------------------------ 4. one run per folder


@pytest.mark.slow
def test_two_sweeps_into_one_folder_never_mix(tmp_path: Path, tag: str) -> None:
    sweep = tmp_path / "sweeps" / tag
    args = ("-m", "slots=1,2", "workload.units=1", f"hydra.sweep.dir={sweep}")
    first = start(*args, cwd=tmp_path)
    try:
        wait_for(lambda: (sweep / ".benchkit.lock").exists(), 120, "the first sweep to start")
        time.sleep(1)  # the recipe: the second started a second after the first
        t0 = time.monotonic()
        second = run(*args, cwd=tmp_path)
        assert time.monotonic() - t0 < 120  # refused at once, not after measuring
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert f"{sweep} is in use by another benchkit run (pid {first.pid}" in second.stderr
        assert "give this run its own folder" in second.stderr
        _, err = first.communicate(timeout=900)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err[-2000:]
    for job in ("0", "1"):
        r = result(sweep / job)
        assert r["status"] == "complete", r["reason"]
        calls = lines(sweep / job / "calls.jsonl")
        # One run's calls beside that run's result: the counts agree and the digest holds.
        assert len(calls) == r["metrics"]["calls_completed"] + r["metrics"]["calls_failed"]
        assert proves_itself(r, sweep / job) is None
        aliases = {c.get("model") for c in calls}
        assert len(aliases) == 1 and r["provenance"]["server"]["alias"] in aliases


@pytest.mark.slow
def test_a_second_run_into_a_busy_run_folder_is_refused(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / "runs" / tag
    first = start("slots=1", "workload.units=2", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    try:
        wait_for(lambda: (run_dir / "server.log").exists(), 300, "the first run's server")
        hydra_before = (run_dir / ".hydra" / "config.yaml").read_text()
        second = run("slots=2", "workload.units=1", f"hydra.run.dir={run_dir}", cwd=tmp_path)
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert "is in use by another benchkit run" in second.stderr
        # Refused before Hydra wrote into it: the first run's config copy is its own.
        assert (run_dir / ".hydra" / "config.yaml").read_text() == hydra_before
        _, err = first.communicate(timeout=900)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err[-2000:]
    r = result(run_dir)
    assert r["factors"]["slots"] == 1 and r["status"] == "complete"


# ------------------------------------------------------------------ 5. no secret kept

QUOTED = "sk-\"quo'te-9c1e"
TYPED = "backend.api_key='sk-\"quo\\'te-9c1e'"  # how a shell user passes it to Hydra


def test_a_job_that_fails_before_it_starts_keeps_no_secret(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run("hardware.device_count=0", TYPED, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    r = result(run_dir)
    assert r["status"] == "failed" and "hardware.device_count=0" in r["reason"]
    assert "backend.api_key=***" in r["provenance"]["overrides"]
    secret_free(run_dir, QUOTED, typed=("quo'te-9c1e", "quo\\'te-9c1e", "quo''te-9c1e"))
    assert "9c1e" not in p.stdout + p.stderr


def test_a_key_in_extra_args_is_refused_with_the_fix_and_kept_nowhere(
    tmp_path: Path, tag: str
) -> None:
    run_dir = tmp_path / tag
    p = run("server.extra_args=[--api-key,xk-4401bead]", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1
    reason = result(run_dir)["reason"]
    assert reason.startswith("server.extra_args has --api-key, which benchkit sets itself")
    assert "give it as backend.api_key=KEY or $BENCHKIT_API_KEY" in reason
    assert not (run_dir / "server.log").exists()  # refused before any server started
    secret_free(run_dir, "xk-4401bead")


def test_a_password_in_the_url_is_kept_nowhere(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    url = "http://bench:pw-77e1a0@127.0.0.1:9/"  # the discard port: nothing answers
    p = run("backend=external", f"backend.url={url}", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert result(run_dir)["status"] == "failed"
    secret_free(run_dir, "pw-77e1a0")
    assert "pw-77e1a0" not in p.stdout + p.stderr
    assert "bench:***@127.0.0.1:9" in (run_dir / ".hydra" / "overrides.yaml").read_text()


@pytest.mark.slow
def test_a_quoted_key_reaches_the_server_and_no_file(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / tag
    p = run(*SMALL, TYPED, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    r = result(run_dir)
    assert r["status"] == "complete", r["reason"]  # every authenticated call accepted
    secret_free(run_dir, QUOTED, typed=("quo'te-9c1e", "quo\\'te-9c1e", "quo''te-9c1e"))
    assert "9c1e" not in p.stdout + p.stderr


# ------------------------------------------------------------------ 6. values, checked


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("workload.units=-1", "workload.units=-1 is out of range"),
        ("workload.units=0", "workload.units=0 is out of range"),
        ("workload.cap=-1", "workload.cap=-1 is out of range"),
        ("server.ubatch=0", "server.ubatch=0 is out of range"),
        # Item 8: it used to wait out server.startup_timeout_s (600 s) for a port it never got.
        ("server.extra_args=[--port,18080]", "the port is benchkit's to choose"),
    ],
)
def test_a_value_that_would_measure_the_wrong_thing_is_refused(
    tmp_path: Path, tag: str, override: str, says: str
) -> None:
    run_dir = tmp_path / tag
    t0 = time.monotonic()
    p = run(override, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert time.monotonic() - t0 < 120
    assert p.returncode == 1 and "Traceback" not in p.stderr
    r = result(run_dir)
    assert r["status"] == "failed" and says in r["reason"] and "\n" not in r["reason"]
    assert "give a value" in r["reason"] or "remove it from the extra_args" in r["reason"]
    assert not (run_dir / "calls.jsonl").exists() and not (run_dir / "server.log").exists()


# ------------------------------------------------------------------ 7. the disk


def _mount(folder: Path, opts: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small or read-only file system needs root")
    folder.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(folder)]).returncode:
        pytest.skip("this machine does not let a test mount a tmpfs")


def test_a_read_only_output_folder_is_one_sentence(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    _mount(ro, "ro,size=1m")
    try:
        p = run(f"hydra.run.dir={ro / 'run'}", cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert f"cannot write the run folder {ro / 'run'} (Read-only file system)" in p.stderr
        assert "hydra.run.dir=DIR" in p.stderr
        p = run("-m", "slots=1,2", f"hydra.sweep.dir={ro / 'sweep'}", cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert "(Read-only file system): choose a folder you can write (hydra.sweep.dir" in p.stderr
    finally:
        subprocess.run(["umount", str(ro)], check=True)


@pytest.mark.slow
def test_a_disk_that_fills_mid_job_keeps_what_was_measured_and_says_why(
    tmp_path: Path, tag: str
) -> None:
    disk = tmp_path / "disk"
    _mount(disk, "size=2m")
    run_dir = disk / tag
    proc = start("slots=1", "workload.units=3", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    try:
        wait_for(lambda: len(lines(run_dir / "calls.jsonl")) >= 1, 600, "the first call")
        # The recipe: the disk fills while the job runs.
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
        r = result(run_dir)  # written: room was kept for it
        assert r["status"] in ("incomplete", "failed")
        assert "No space left on device" in r["reason"] and "free space" in r["reason"]
        assert "\n" not in r["reason"] and not (run_dir / "error.txt").exists()
        kept = lines(run_dir / "calls.jsonl")
        assert kept and r["metrics"]["calls_completed"] >= len([c for c in kept if c["ok"]])
        # The report fits in what the reserve freed, or its failure is one sentence.
        rendered = (run_dir / "report" / "report.html").exists()
        assert rendered or "cannot write the report to" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["umount", str(disk)], check=True)

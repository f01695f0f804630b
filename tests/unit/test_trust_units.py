"""Issue #31's mechanisms on their own: every numeric knob has a range, the scrub reaches every
form of a secret in every kind of file, a full disk is a sentence and a written result, Ctrl-C
between jobs is a sentence and a report, a missing figure is never printed as 0.

The job-level faults are reproduced with the real llama-server in
tests/reliability/test_job_trust.py; here the engine stand-in serves only where the disk, not
the server, is what is tested.
"""

from __future__ import annotations

import errno
import json
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from benchkit import app, callbacks
from benchkit.config import knobs
from benchkit.config.schema import BenchConfig
from benchkit.errors import UserError
from benchkit.job.folder import failure_reason, write_failure
from benchkit.job.run import summary
from benchkit.paths import repo_root
from benchkit.results.scrub import Secrets, mask_url, scrub_override

Compose = Callable[..., BenchConfig]
SEED = repo_root() / "fixtures" / "results" / "seed-r9700"

# ------------------------------------------------------------------ 6. every knob, checked


def test_every_numeric_knob_has_a_range() -> None:
    """A new int or float field of the config without a range would be accepted unchecked."""
    paths = set(knobs.numeric_paths())
    assert paths - set(knobs.RANGES) == set()
    assert set(knobs.RANGES) - paths == set()  # no range of a knob that is gone


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("workload.units=-1", "workload.units=-1 is out of range (replay the first N units"),
        ("workload.units=0", "workload.units=0 is out of range"),
        ("workload.cap=-1", "workload.cap=-1 is out of range (the most tokens a call may"),
        ("server.ubatch=0", "server.ubatch=0 is out of range: give a value 1 or more."),
        ("sampling.top_p=1.5", "sampling.top_p=1.5 is out of range: give a value between 0 and 1"),
        ("server.stall_timeout_s=0", "server.stall_timeout_s=0.0 is out of range: give a value"),
        ("server.extra_args=[--port,8080]", "server.extra_args has --port, which benchkit sets"),
        ("server.extra_args=[--api-key,k]", "give it as backend.api_key=KEY"),
        ("backend.extra_args=[-np,4]", "the slot count is slots=N"),
        ("study.name=../../x", "study.name='../../x' is not a plain name"),
        ("resume_from=/nonexistent/sweep", "resume_from=/nonexistent/sweep is not a folder"),
    ],
)
def test_a_knob_out_of_range_is_one_sentence(
    compose_cfg: Compose, override: str, says: str
) -> None:
    with pytest.raises(UserError) as exc:
        knobs.check(compose_cfg(override))
    assert says in str(exc.value) and "\n" not in str(exc.value)


def test_the_default_config_and_its_study_configs_pass(compose_cfg: Compose) -> None:
    for study in ("default", "seed-r9700", "h200"):
        knobs.check(compose_cfg(f"study={study}"))


# ------------------------------------------------------------------ 5. one scrub, every form

KEY = "sk-q\"uo'te\\x-7f"


def test_every_written_form_of_a_secret_is_masked(tmp_path: Path) -> None:
    s = Secrets.of(KEY, "http://bob:p%40ss-w0rd@host:8080/v1", ["--api-key", "extra-key-123"])
    assert set(s.values) == {KEY, "p@ss-w0rd", "extra-key-123"}
    forms = [
        json.dumps({"k": KEY}),
        yaml.safe_dump({"k": KEY}),
        yaml.safe_dump({"k": KEY}, default_style='"'),
        repr(KEY),
        "backend.api_key='" + KEY.replace("\\", "\\\\").replace("'", "\\'") + "'",
        "http://bob:p%40ss-w0rd@host:8080/v1",
        "--api-key extra-key-123",
    ]
    for text in forms:
        out = s.text(text)
        assert "***" in out, text
        for v in ("uo'te", 'q"uo', "p%40ss", "p@ss", "extra-key"):
            assert v not in out, (text, out)


def test_scrub_keeps_data_files_whole(tmp_path: Path) -> None:
    """A short key must not break a JSON line's keys; a pickle still loads."""
    s = Secrets(("ok",))
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"ok": True, "error": "key ok refused"}) + "\n")
    pkl = tmp_path / "submitted.pkl"
    pkl.write_bytes(pickle.dumps({"overrides": ["backend.api_key=ok"], "n": 1}))
    log = tmp_path / "job.log"
    log.write_text("started with ok\n")
    s.tree([tmp_path])
    (line,) = [json.loads(x) for x in calls.read_text().splitlines()]
    assert line == {"ok": True, "error": "key *** refused"}
    assert pickle.loads(pkl.read_bytes()) == {"overrides": ["backend.api_key=**"], "n": 1}
    assert log.read_text() == "started with ***\n"


def test_overrides_are_recorded_without_their_secret() -> None:
    assert scrub_override("backend.api_key='a\"b'") == "backend.api_key=***"
    assert scrub_override("+backend.api_key=x") == "+backend.api_key=***"
    assert scrub_override("backend.url=http://u:pw@h:1/x") == "backend.url=http://u:***@h:1/x"
    assert scrub_override("server.extra_args=[--api-key,s3cr3t,-t,4]") == (
        "server.extra_args=[--api-key,***,-t,4]"
    )
    assert scrub_override("slots=1,2") == "slots=1,2"
    assert mask_url("http://h:1/") == "http://h:1/"


# ------------------------------------------------------------------ 7. a full disk


def test_a_write_problem_inside_a_task_group_is_found(tmp_path: Path) -> None:
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "t.jsonl"))
    group = ExceptionGroup("replay", [ValueError("x"), full])
    assert write_failure(group) is full
    (tmp_path / "calls.jsonl").write_text("{}\n{}\n")
    try:
        raise RuntimeError("wrapped") from group
    except RuntimeError as exc:
        reason = failure_reason(exc, tmp_path)
    assert reason.startswith(f"cannot write the job's files to {tmp_path / 't.jsonl'}")
    assert reason.endswith("the 2 call(s) measured before are kept in calls.jsonl.")
    assert not (tmp_path / "error.txt").exists()


# ------------------------------------------------------------------ 7. Ctrl-C between jobs


def test_ctrl_c_between_jobs_is_a_sentence_and_the_report_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(SEED, sweep)

    def interrupted() -> None:
        raise KeyboardInterrupt  # e.g. in the launcher, or a lazy import between two jobs

    monkeypatch.setattr(app, "_hydra_main", interrupted)
    monkeypatch.setattr(callbacks, "_ACTIVE", [sweep])
    with pytest.raises(SystemExit) as exc:
        app.main()
    assert exc.value.code == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "interrupted by the user (Ctrl-C) outside a job (between two jobs" in err
    assert f"Run the same command again with hydra.sweep.dir={sweep} to resume" in err
    assert (sweep / "report" / "report.html").exists()


# ------------------------------------------------------------------ 8. no figure is 0


def test_a_figure_not_measured_is_never_printed_as_zero() -> None:
    metrics = {"s_per_unit_throughput": 2.5, "s_per_unit_slot_latency": None, "decode_tok_s": None}
    line = summary("0", {"status": "complete", "reason": None, "metrics": metrics})
    assert "decode n/a tok/s aggregate" in line and "n/a s/unit (slot latency)" in line
    assert " 0 tok/s" not in line


def test_submitit_job_files_are_scrubbed_when_the_sweep_ends(tmp_path: Path) -> None:
    """Under SLURM, submitit pickles each job's config and logs its output in
    <sweep>/.submitit/: the sweep's end masks the key there (a pickle still loads)."""
    from omegaconf import OmegaConf

    sweep = tmp_path / "sweep"
    shutil.copytree(SEED, sweep)
    jobs = sweep / ".submitit" / "123_0"
    jobs.mkdir(parents=True)
    (jobs / "123_0_submitted.pkl").write_bytes(pickle.dumps({"api_key": "sk-slurm-55"}))
    (jobs / "123_0_log.out").write_text("override backend.api_key=sk-slurm-55\n")
    config = OmegaConf.create(
        {
            "hydra": {
                "sweep": {"dir": str(sweep)},
                "launcher": {"_target_": "hydra_plugins.submitit.SlurmLauncher"},
                "overrides": {"task": ["slots=1,2", "backend.api_key=sk-slurm-55"]},
            },
            "backend": {"api_key": None, "url": None, "extra_args": []},
            "server": {"extra_args": []},
            "study": {"ledger": None},
        }
    )
    callbacks.ReportCallback().on_multirun_end(config)
    for path in jobs.iterdir():
        assert b"slurm-55" not in path.read_bytes(), path
    assert pickle.loads((jobs / "123_0_submitted.pkl").read_bytes()) == {"api_key": "*" * 11}
    assert (sweep / "report" / "report.html").exists()

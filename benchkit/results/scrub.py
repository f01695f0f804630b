"""Secrets out of every file a job writes, in every form they take there.

A secret reaches benchkit three ways: the API key (`backend.api_key` or $BENCHKIT_API_KEY),
a password in `backend.url` (`http://user:PASS@host`), and a key someone passed to the server
through extra_args (refused, but already copied by Hydra). Hydra copies the overrides into
`.hydra/`, `multirun.yaml` and submitit's job files; the job writes them into result.json and
logs; each writer escapes the value its own way (JSON, YAML single and double quotes, Hydra's
override quoting, a URL's percent-encoding, Python's repr in a traceback). `Secrets` knows all
of these forms and replaces each with `***`: in text as text, in JSON-lines files string value
by string value (so a short key never breaks a record's keys), in binary files byte for byte
with as many `*` (so a pickle still loads). `scrub_override` masks the value of an override
that names a secret whatever its quoting.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import yaml

from benchkit.config.schema import BenchConfig
from benchkit.results.schema import Json
from benchkit.results.store import atomic_write_text

MASK = "***"
# Override keys whose value is a secret as a whole, and those that may hold one.
SECRET_KEYS = ("backend.api_key",)
URL_KEYS = ("backend.url",)
ARGS_KEYS = ("server.extra_args", "backend.extra_args")
KEY_FLAGS = ("--api-key",)
# Data files: rewritten string value by string value, never as raw text.
JSON_LINES = (".jsonl",)
YAML_FILES = (".yaml", ".yml")
# Text files larger than this are scrubbed as binary (no decoding of a huge log at once).
_TEXT_LIMIT = 256 << 20


@dataclass(frozen=True)
class Secrets:
    """The plain values to keep out of every file."""

    values: tuple[str, ...] = ()

    @classmethod
    def of(cls, api_key: str | None, url: str | None, extra_args: Iterable[str] = ()) -> Secrets:
        found = [api_key or "", os.environ.get("BENCHKIT_API_KEY", "")]
        if url:
            found.append(url_password(url) or "")
        args = [str(a) for a in extra_args]
        for i, a in enumerate(args):
            flag, eq, value = a.partition("=")
            if flag in KEY_FLAGS:
                found.append(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
        return cls(tuple(dict.fromkeys(v for v in found if v)))

    def __bool__(self) -> bool:
        return bool(self.values)

    def forms(self) -> list[str]:
        """Every form each secret may take in a file, longest first (so a form containing
        another is replaced whole)."""
        out: set[str] = set()
        for s in self.values:
            out.update(
                {
                    s,
                    json.dumps(s)[1:-1],
                    json.dumps(s, ensure_ascii=False)[1:-1],
                    s.replace("'", "''"),  # YAML single-quoted
                    _yaml_double(s),
                    re.sub(r"([\\'\"])", r"\\\1", s),  # Hydra's quoted override
                    re.sub(r"([\\()\[\]{}:=, '\"])", r"\\\1", s),  # Hydra's unquoted override
                    repr(s)[1:-1],
                    quote(s, safe=""),
                    quote(s),
                    shlex.quote(s),
                }
            )
        return sorted((f for f in out if f), key=len, reverse=True)

    def text(self, text: str) -> str:
        for form in self.forms():
            if form in text:
                text = text.replace(form, MASK)
        return text

    def json_value(self, value: object) -> object:
        """A JSON value with every string value in it scrubbed (keys are benchkit's own)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self.json_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json_value(v) for v in value]
        return value

    def json_object(self, obj: Mapping[str, object]) -> Json:
        """A JSON object (a result) with every string in it scrubbed."""
        out = self.json_value(json.loads(json.dumps(obj, default=str)))
        return out if isinstance(out, dict) else {}

    def binary(self, data: bytes) -> bytes:
        for form in self.forms():
            raw = form.encode()
            if raw in data:
                data = data.replace(raw, b"*" * len(raw))
        return data

    def file(self, path: Path) -> None:
        """Scrub one file in place (its inode kept: a log still open for appending goes on
        after the scrubbed text); a file that cannot be read is left alone."""
        if not self or not path.is_file() or path.is_symlink():
            return
        try:
            data = path.read_bytes()
        except OSError:
            return
        if path.suffix in YAML_FILES and len(data) < _TEXT_LIMIT and _is_text(data):
            # An override's own quoting may be none of the known forms: always looked at.
            text = self._yaml(data.decode("utf-8"))
            out = data if text is None else text.encode("utf-8")
        elif not any(f.encode() in data for f in self.forms()):
            return
        elif path.suffix in JSON_LINES and len(data) < _TEXT_LIMIT:
            new = self._json_lines(data.decode("utf-8", errors="surrogateescape"))
            out = new.encode("utf-8", errors="surrogateescape")
        elif _is_text(data) and len(data) < _TEXT_LIMIT:
            out = self.text(data.decode("utf-8")).encode("utf-8")
        else:
            out = self.binary(data)
        if out == data:
            return
        if path.name.endswith(".json"):
            atomic_write_text(path, out.decode("utf-8"))
            return
        with path.open("r+b") as fh:
            fh.write(out)
            fh.truncate()

    def _yaml(self, text: str) -> str | None:
        """Hydra's YAML (.hydra/*.yaml, multirun.yaml): each override in it is masked by its
        key (its quoting is the user's, whatever it was), then every string by its forms;
        None when nothing in it is secret."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return self.text(text)

        def walk(v: object) -> object:
            if isinstance(v, str):
                return self.text(scrub_override(v))
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x) for x in v]
            return v

        clean = walk(data)
        if clean == data and not any(f in text for f in self.forms()):
            return None
        dumped = yaml.safe_dump(clean, sort_keys=False, allow_unicode=True, width=1 << 16)
        return self.text(str(dumped))

    def _json_lines(self, text: str) -> str:
        lines = []
        for line in text.splitlines(keepends=True):
            if not any(f in line for f in self.forms()):
                lines.append(line)
                continue
            try:
                value = json.loads(line)
            except ValueError:
                lines.append(self.text(line))
                continue
            end = "\n" if line.endswith("\n") else ""
            lines.append(json.dumps(self.json_value(value), ensure_ascii=False) + end)
        return "".join(lines)

    def tree(self, roots: Sequence[Path]) -> None:
        """Scrub every file under each root (a folder, or a file)."""
        if not self:
            return
        for root in roots:
            if root.is_file():
                self.file(root)
            elif root.is_dir():
                for dirpath, _, names in os.walk(root):
                    for name in names:
                        self.file(Path(dirpath) / name)


def secrets_of(cfg: BenchConfig) -> Secrets:
    """This job's secrets: its API key (or $BENCHKIT_API_KEY), its URL's password, a key in
    its extra_args."""
    return Secrets.of(
        cfg.backend.api_key,
        cfg.backend.url,
        [*cfg.server.extra_args, *cfg.backend.extra_args],
    )


def override_secrets(overrides: Iterable[str]) -> list[str]:
    """The secret values an override list names (`backend.api_key=...`, a URL's password, a
    key in extra_args), as typed and unquoted: for files written from the overrides alone."""
    found: list[str] = []
    for o in overrides:
        key, eq, value = str(o).partition("=")
        name = key.lstrip("+~")
        if not eq:
            continue
        if name in SECRET_KEYS:
            found += [value, value.strip(chr(39) + chr(34))]
        elif name in URL_KEYS:
            found.append(url_password(value.strip(chr(39) + chr(34))) or "")
        elif name in ARGS_KEYS:
            items = [x.strip(" '\"") for x in value.strip("[]").split(",")]
            found += Secrets.of(None, None, items).values
    return [f for f in found if f and f != MASK]


def scrub_override(override: str) -> str:
    """An override as recorded: a secret's value masked whatever its quoting, a URL's
    password masked, a key passed in extra_args masked."""
    key, eq, value = override.partition("=")
    if not eq:
        return override
    name = key.lstrip("+~")
    if name in SECRET_KEYS:
        return f"{key}={MASK}"
    if name in URL_KEYS:
        return f"{key}={mask_url(value.strip(chr(39) + chr(34)))}"
    if name in ARGS_KEYS and any(f in value for f in KEY_FLAGS):
        for flag in KEY_FLAGS:
            value = re.sub(rf"({re.escape(flag)}\s*[=,]\s*)([^,\]\s]+)", rf"\g<1>{MASK}", value)
        return f"{key}={value}"
    return override


def url_password(url: str) -> str | None:
    try:
        pw = urlsplit(url).password
    except ValueError:
        return None
    return unquote(pw) if pw else None


def mask_url(url: str) -> str:
    """The URL with its password (if any) as ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:{MASK}@{host}").geturl()


def _yaml_double(s: str) -> str:
    dumped = str(yaml.safe_dump(s, default_style='"', allow_unicode=True, width=1 << 30))
    return dumped.strip().removesuffix("...").strip()[1:-1]


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Hydra's launchers log each job's overrides as typed ("#0 : backend.api_key=sk-..."), on
# stdout and into CI logs. An override that names a secret key, and a URL's password.
_LOGGED_SECRET = re.compile(
    r"((?:^|[\s'\"\[,])[+~]*(?:" + "|".join(map(re.escape, SECRET_KEYS)) + r")=)"
    r"('[^']*'|\"[^\"]*\"|\S+)"
)
_LOGGED_PASSWORD = re.compile(r"(://[^/\s:@]*:)([^@\s/]+)(@)")


class LogMask(logging.Filter):
    """A logging filter (set on the handlers of conf/hydra/hydra_logging/benchkit.yaml and the
    job's log) that masks secrets in every record: the values this process was given (the
    overrides on its command line, $BENCHKIT_API_KEY) in each form `Secrets` knows, and any
    `backend.api_key=` value or URL password by its shape, whatever the record says."""

    def __init__(self) -> None:
        super().__init__()
        typed = override_secrets(sys.argv[1:])
        self.secrets = Secrets(tuple(dict.fromkeys([*Secrets.of(None, None).values, *typed])))

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = mask_text(text, self.secrets)
        if masked != text:
            record.msg, record.args = masked, None
        return True


def mask_text(text: str, secrets: Secrets = Secrets()) -> str:
    """`text` with `secrets` and every secret-shaped value (an api_key override, a URL's
    password) masked."""
    text = secrets.text(text)
    text = _LOGGED_SECRET.sub(rf"\g<1>{MASK}", text)
    return _LOGGED_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", text)

"""benchkit's progress and warning lines, through `logging`.

Every module logs to `logging.getLogger("benchkit.<module>")`. A handler of ours, set once on
the `benchkit` logger, prints each record to standard error as `[benchkit] message`, the form
users and scripts read; records also reach the root logger, where Hydra's job logging
(conf/hydra/job_logging/benchkit.yaml: a file handler only) writes them to the job's log.
"""

from __future__ import annotations

import logging
import sys

ROOT = "benchkit"


class _Plain(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        prefix = "[benchkit] " if record.levelno < logging.WARNING else "[benchkit] warning: "
        return prefix + record.getMessage()


class _NoSecrets(logging.Filter):
    """benchkit.results.scrub.LogMask on the console line too (an error text may quote a key), made
    on first use: scrub imports modules that log."""

    def __init__(self) -> None:
        super().__init__()
        self._mask: logging.Filter | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self._mask is None:
            from benchkit.results.scrub import LogMask

            self._mask = LogMask()
        return self._mask.filter(record)


def get(name: str) -> logging.Logger:
    """The logger of one module (`__name__`), with the `[benchkit]` console line set up once."""
    root = logging.getLogger(ROOT)
    if not any(getattr(h, "_benchkit", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Plain())
        handler.addFilter(_NoSecrets())
        handler._benchkit = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.setLevel(logging.INFO)
    return logging.getLogger(name if name.startswith(ROOT) else f"{ROOT}.{name}")

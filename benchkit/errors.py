"""The one exception type for mistakes a user can make and fix (bad input, missing files), and
the few others every layer must tell apart (a backend this machine lacks, a stop by SIGTERM)."""

from __future__ import annotations


class UserError(Exception):
    """A mistake the user can fix; its message is one sentence naming the thing and the fix.

    Entry points print it without a traceback and exit non-zero.
    """


class FixtureError(UserError):
    """A workload fixture that cannot be loaded: names the file, the line and what is wrong."""

    def __init__(self, path: str, line: int | None, what: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {what}")
        self.path = path
        self.line = line
        self.what = what


class Unavailable(Exception):
    """This machine cannot build or run a backend; the message is the one-line reason."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `timeout`, a container stopping), taken as Ctrl-C is: the job in
    progress is written as incomplete and every server it started is stopped. Without it,
    Python would die at once and leave the llama-server running."""


# An interrupted job's recorded reasons: a report says them in its own language
# (report.lang.i18n.recorded_reason).
INTERRUPTED = "interrupted by the user (Ctrl-C)"
TERMINATED = "stopped by SIGTERM"


def interrupt_reason(exc: BaseException) -> str:
    """The incomplete job's reason for an interrupt: Ctrl-C or SIGTERM."""
    if isinstance(exc, Terminated):
        return TERMINATED
    return INTERRUPTED


def interrupt_for(reason: str | None, status: str) -> KeyboardInterrupt:
    """A job's interrupt passed on as it came (SIGTERM stays SIGTERM for the exit code), with
    the status the job was written with (`job_status`) for the sweep's last line."""
    exc = Terminated() if reason == interrupt_reason(Terminated()) else KeyboardInterrupt()
    exc.job_status = status  # type: ignore[attr-defined]
    return exc

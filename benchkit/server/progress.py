"""One build step's output: kept whole in its log, shown as one progress line naming the target.

CMake's Makefile generator counts percent per target asked for, so a build of four targets
reaches 100% four times; `BuildProgress` says which target a percentage is of.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from benchkit.errors import Unavailable


class BuildProgress:
    """The one progress line of a `cmake --build ... --target A B C D` run, naming the target.

    CMake's Makefile generator counts percent per target asked for: built one after the other,
    each of A, B, C, D runs to 100% in turn, from where its own dependencies already stand. The
    line says which target the percentage is of ("llama-server (1/4)"), so the next target's
    count reads as the next target, not as the build starting again. Lines of a nested build
    (an ExternalProject such as Vulkan's shader generator, with its own percentages) are
    left out of it.
    """

    _PCT = re.compile(r"^\[\s*(\d+)%\]")
    _BUILT = re.compile(r"^\[\s*\d+%\] Built target (\S+)")
    _NESTED_START = re.compile(r"Performing build step for '")
    _NESTED_END = re.compile(r"Performing \w+ step for '|Completed '")

    def __init__(self, what: str, targets: tuple[str, ...] | list[str]) -> None:
        self.what = what
        self.targets = list(targets)
        self.index = 0  # the target being built
        self.pct: int | None = None
        self.nested = False

    @property
    def target(self) -> str:
        return self.targets[self.index] if self.targets else ""

    def text(self) -> str:
        pct = "  -" if self.pct is None else f"{self.pct:3d}"
        if len(self.targets) > 1:
            where = f" {self.target} ({self.index + 1}/{len(self.targets)})"
        else:
            where = f" {self.target}" if self.targets else ""
        return f"{self.what}: {pct}%{where}"

    def feed(self, line: str) -> bool:
        """Take one line of the build's output; True when the progress line changed."""
        # The outer build's own lines open and close a nested build's; they count.
        if self.nested:
            if not self._NESTED_END.search(line):
                return False
            self.nested = False
        if self._NESTED_START.search(line):
            self.nested = True
        built = self._BUILT.match(line)
        if built and built.group(1) == self.target and self.index + 1 < len(self.targets):
            self.index += 1
            self.pct = None
            return True
        m = self._PCT.match(line)
        if m is None:
            return False
        pct = int(m.group(1))
        if self.pct is not None and pct <= self.pct:
            return False  # never backwards within a target
        self.pct = pct
        return True


def run_build(cmd: list[str], log: Path, what: str, targets: tuple[str, ...] = ()) -> None:
    """Run a build step, keeping its whole output in `log` and showing one progress line."""
    tty = sys.stderr.isatty()
    progress = BuildProgress(what, targets)
    shown = ""
    last: tuple[int, int] = (-1, -1)  # (target, tens of percent) last printed off a terminal
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            if not progress.feed(line) or progress.pct is None:
                continue
            text = f"[benchkit] {progress.text()}"
            if tty:
                # One line, rewritten in place (padded over a longer earlier text).
                print("\r" + text.ljust(len(shown)), end="", file=sys.stderr, flush=True)
                shown = text
            elif (progress.index, progress.pct // 10) != last:
                # Off a terminal (CI logs): a line per target and 10%, still showing life.
                print(text, file=sys.stderr, flush=True)
                last = (progress.index, progress.pct // 10)
        rc = proc.wait()
    if tty and shown:
        print(file=sys.stderr)
    if rc != 0:
        raise Unavailable(f"{what} failed (exit {rc}); the build log is {log}.")

"""Command-line flags with their ranges, for every benchkit command (and the bench scripts the
README names).

The config's knobs have had ranges since issue #24 (benchkit.config.knobs); the flags of the
commands around it had none: `python -m benchkit.search --budget-min -1` (or 0, or nan, which no
comparison ever ends) was accepted. Here a numeric flag is declared with its range and what it
means (`bounded`), argparse turns a value out of range into one line naming the flag, the value
and the range, and a test holds that no command declares a bare `type=int` or `type=float`
flag (tests/unit/test_cli_flags.py).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import NoReturn

from benchkit.config.knobs import Range


class Bounded:
    """An argparse `type`: a number of `kind` within `rng`, else one sentence."""

    def __init__(self, kind: type[int] | type[float], rng: Range) -> None:
        self.kind = kind
        self.range = rng
        # argparse names the type in its message when it cannot convert: keep it short.
        self.__name__ = "whole number" if kind is int else "number"

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a {self.__name__}: give one {self.range.says()}{self._means()}."
            ) from None
        # nan fails every comparison and inf passes an open upper end: neither is a setting.
        if not math.isfinite(value) or not self.range.allows(float(value)):
            raise argparse.ArgumentTypeError(
                f"{text} is out of range: give a value {self.range.says()}{self._means()}."
            )
        return value

    def _means(self) -> str:
        return f" ({self.range.means})" if self.range.means else ""


def bounded(kind: type[int] | type[float], lo: float | None = None, hi: float | None = None, *,
            open_lo: bool = False, means: str = "") -> Bounded:  # fmt: skip
    """The `type=` of a numeric flag: `kind` between `lo` and `hi` (inclusive unless
    `open_lo`)."""
    return Bounded(kind, Range(lo, hi, open_lo=open_lo, means=means))


class BoundedList(Bounded):
    """An argparse `type`: a comma list of numbers each within the range (`1,8,64`)."""

    def __call__(self, text: str) -> list[int | float]:  # type: ignore[override]
        items = [x.strip() for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError(
                f"{text!r} holds no value: give a comma list of values {self.range.says()}."
            )
        return [Bounded.__call__(self, x) for x in items]


def bounded_list(kind: type[int] | type[float], lo: float | None = None,
                 hi: float | None = None, *, means: str = "") -> BoundedList:  # fmt: skip
    """The `type=` of a flag that takes a comma list of numbers, each within `lo`..`hi`."""
    return BoundedList(kind, Range(lo, hi, means=means))


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (`prog: argument --flag: what and the fix`),
    without the usage block in front; --help still prints it."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)

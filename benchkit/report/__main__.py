"""`python -m benchkit.report DIR`: render a run's or sweep's report again from its results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkit.errors import UserError
from benchkit.report.render import render_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchkit.report", description=__doc__)
    ap.add_argument("dir", type=Path, help="a run folder (outputs/runs/TS) or sweep folder")
    ap.add_argument("--out", type=Path, default=None, help="report folder (default DIR/report)")
    args = ap.parse_args(argv)
    try:
        out = render_report(args.dir, args.out or args.dir / "report")
    except UserError as exc:
        print(f"benchkit.report: {exc}", file=sys.stderr)
        return 2
    print(out / "report.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())

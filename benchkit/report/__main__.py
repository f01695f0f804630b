"""`python -m benchkit.report DIR`: render a run's or sweep's report again from its results.

    python -m benchkit.report DIR [--out OUT] [--baseline DIR] [--publish DIR] [study.KEY=VALUE ...]

`--baseline` compares DIR with an earlier sweep config by config on the same basis;
`--publish` also writes a blog-ready folder (index.md with front matter, figures, a
standalone index.html, verdicts.json) and appends the verdicts to the study's ledger
(`study.ledger`, or DIR/../<study.name>.ledger.jsonl beside the published folder).
`study.*` overrides (e.g. `study.lang=ko`) change the write-up's settings, not the results.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from benchkit.errors import UserError

if __name__ == "__main__":
    # `python -m benchkit.report`: one report, then the process ends. The report's imports
    # (pandas, matplotlib, its own modules) make objects that live as long as the process,
    # and each full collection the collector ran while they were made went through all made
    # so far (a tenth of a second in all): paused while they are made, then frozen (below).
    gc.disable()

from benchkit.report.writeup.render import render_report  # after the pause above


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchkit.report",
        description="Render a benchkit run's or sweep's report from its results alone.",
    )
    ap.add_argument(
        "dir", type=Path, nargs="?", help="a run folder (outputs/runs/TS) or sweep folder"
    )
    ap.add_argument(
        "overrides", nargs="*", help="study.KEY=VALUE settings of the write-up, e.g. study.lang=ko"
    )
    ap.add_argument("--out", type=Path, default=None, help="report folder (default DIR/report)")
    ap.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="an earlier sweep to compare with, config by config",
    )
    ap.add_argument(
        "--publish", type=Path, default=None,
        help="write a blog-ready folder here and append the verdicts to the study's ledger",
    )  # fmt: skip
    given = sys.argv[1:] if argv is None else argv
    if not given:
        # parse_intermixed_args would name the optional overrides as required too.
        ap.error("give the run or sweep folder to report on, e.g. outputs/sweeps/DATE/TIME")
    args = ap.parse_intermixed_args(argv)
    if args.dir is None:
        # Options alone (--out X): argparse would name the optional overrides as required.
        ap.error("give the run or sweep folder to report on, e.g. outputs/sweeps/DATE/TIME")
    if args.baseline is not None and not args.baseline.is_dir():
        print(
            f"benchkit.report: --baseline {args.baseline} is not a folder: give the earlier "
            "sweep folder to compare with, config by config.",
            file=sys.stderr,
        )
        return 2
    try:
        out = render_report(
            args.dir,
            args.out or args.dir / "report",
            baseline=args.baseline,
            publish=args.publish,
            overrides=args.overrides,
        )
    except UserError as exc:
        print(f"benchkit.report: {exc}", file=sys.stderr)
        return 2
    print(out / "report.html")
    if args.publish is not None:
        print(args.publish / "index.md")
    return 0


if __name__ == "__main__":
    # What the imports made, kept out of the collector's full collections for good (each
    # went through all of it again; render_report keeps its analysis out likewise while it
    # writes), and the collector running again for what the report makes.
    gc.freeze()
    gc.enable()
    code = main()
    # And what the report made, at the end: the interpreter's shutdown collects garbage
    # several times over everything still alive (a third of a second at 1,000 jobs); the
    # operating system takes the memory back all the same.
    gc.freeze()
    sys.exit(code)

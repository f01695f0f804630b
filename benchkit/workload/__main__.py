"""Command line for workload fixtures: ``synth`` (generate), ``stats`` and ``record``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchkit import timeouts
from benchkit.cli import Parser, bounded
from benchkit.errors import UserError
from benchkit.workload.journal import convert_cli
from benchkit.workload.model import load_workload
from benchkit.workload.record import record
from benchkit.workload.stats import compute, render_text
from benchkit.workload.synth import load_recipe, synth


def build_parser() -> Parser:
    parser = Parser(prog="python -m benchkit.workload", description="Workload fixtures.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_synth = sub.add_parser("synth", help="generate a tokens fixture from a recipe")
    p_synth.add_argument("--recipe", required=True, help="recipe JSON file")
    p_synth.add_argument("--out", required=True, help="fixture directory to (re)write")
    p_stats = sub.add_parser("stats", help="summarise a fixture")
    p_stats.add_argument("path", help="fixture directory, or a name under fixtures/workloads/")
    p_stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p_rec = sub.add_parser(
        "record",
        help="record a client's calls through a proxy into a fixture",
        description="Listen on 127.0.0.1:PORT, forward to --upstream, and on SIGINT/SIGTERM "
        "write the calls as a fixture. Units: header X-Benchkit-Unit, else body field "
        "benchkit_unit, else one unit 'default'.",
    )
    p_rec.add_argument("--upstream", help="the server to forward to, e.g. http://127.0.0.1:8080")
    p_rec.add_argument(
        "--listen",
        type=bounded(int, 0, 65535, means="a TCP port; 0: any free one"),
        help="port to listen on, on 127.0.0.1 (0: any)",
    )
    p_rec.add_argument("--out", required=True, help="fixture directory to write (must be new)")
    p_rec.add_argument(
        "--lengths-only",
        action="store_true",
        help="store prompt and completion lengths only, no content (private data)",
    )
    p_rec.add_argument(
        "--grace",
        type=bounded(float, 0, 3600, means="seconds calls in flight get at shutdown"),
        default=timeouts.RECORD_GRACE_S,
        help="seconds calls in flight get to finish at shutdown "
        f"(default {timeouts.RECORD_GRACE_S:.0f})",
    )
    p_rec.add_argument(
        "--keep-journal", action="store_true", help="keep the journal beside the fixture"
    )
    p_rec.add_argument(
        "--convert",
        metavar="JOURNAL",
        help="write the fixture of an earlier recording's journal instead of recording",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "record":
            if args.convert:
                return convert_cli(Path(args.convert), Path(args.out))
            if not args.upstream or args.listen is None:
                parser.error("record needs --upstream URL and --listen PORT (or --convert)")
            return record(
                upstream=args.upstream,
                port=args.listen,
                out=Path(args.out),
                lengths_only=args.lengths_only,
                grace_s=args.grace,
                keep_journal=args.keep_journal,
            )
        if args.command == "synth":
            out = synth(load_recipe(args.recipe), args.out)
            w = load_workload(out)
            s = compute(w)
            print(
                f"wrote {out}: {s['units']} units, {s['calls']} calls, "
                f"{s['prompt_tokens']:,} prompt tokens, fingerprint {w.fingerprint()}"
            )
        else:
            w = load_workload(args.path)
            s = compute(w)
            if args.json:
                print(json.dumps(s, indent=2))
            else:
                sys.stdout.write(render_text(w, s))
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

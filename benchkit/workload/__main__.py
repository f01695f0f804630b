"""Command line for workload fixtures: ``synth`` (generate from a recipe) and ``stats``."""

from __future__ import annotations

import argparse
import json
import sys

from benchkit.errors import UserError
from benchkit.workload.model import load_workload
from benchkit.workload.stats import compute, render_text
from benchkit.workload.synth import load_recipe, synth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchkit.workload", description="Workload fixtures."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_synth = sub.add_parser("synth", help="generate a tokens fixture from a recipe")
    p_synth.add_argument("--recipe", required=True, help="recipe JSON file")
    p_synth.add_argument("--out", required=True, help="fixture directory to (re)write")
    p_stats = sub.add_parser("stats", help="summarise a fixture")
    p_stats.add_argument("path", help="fixture directory, or a name under fixtures/workloads/")
    p_stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    args = parser.parse_args(argv)
    try:
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

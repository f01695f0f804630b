"""`python -m benchkit.provide BACKEND [--portable] [--pack FILE]`: build (or find in the cache)
llama-server for a backend before any job needs it (`make server`, a cluster's login node).

The command line only; the work is benchkit.server.build's. What it prints is the command's
output (the binary's path on stdout, a refusal on stderr), so it is printed, not logged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkit.errors import Unavailable, UserError
from benchkit.quality.models import build_tool
from benchkit.server.build import build_server, pack_build
from benchkit.server.provide import backend_from_conf


def main(argv: list[str] | None = None) -> int:
    """`python -m benchkit.provide BACKEND`: build (or find) llama-server and print its path."""
    ap = argparse.ArgumentParser(prog="python -m benchkit.provide", description=main.__doc__)
    ap.add_argument("backend", nargs="?", default="cpu")
    ap.add_argument(
        "--portable",
        action="store_true",
        help="build for any x86-64 CPU with AVX2, to carry to another machine",
    )
    ap.add_argument("--pack", type=Path, help="write the build's bin/ (stripped) to this .tar.xz")
    args = ap.parse_args(argv)
    try:
        binary, took = build_server(backend_from_conf(args.backend), portable=args.portable)
        if args.pack:
            # The sweep's model-file comparison (benchkit.quality.models) needs the build's
            # llama-perplexity, and a packed build cannot build it where it is carried.
            _, missing = build_tool(binary.parent.parent)
            if missing is not None:
                note = f"no llama-perplexity in the pack: {missing[1]}"
                print(f"benchkit.provide: {note}", file=sys.stderr)
            pack_build(binary.parent.parent, args.pack)
            print(f"{args.pack} ({args.pack.stat().st_size / 2**20:.1f} MiB)")
    except (UserError, Unavailable) as exc:
        # Exit 3: this machine cannot build it (make server goes on); 2: the request is wrong.
        unavailable = isinstance(exc, Unavailable)
        why = f"{args.backend} is unavailable here: {exc}" if unavailable else str(exc)
        print(f"benchkit.provide: {why}", file=sys.stderr)
        return 3 if unavailable else 2
    state = f"built in {took:.0f} s" if took is not None else "cached"
    print(f"{binary} ({state})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

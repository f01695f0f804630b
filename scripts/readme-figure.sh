#!/usr/bin/env bash
# The README's first screen: the default study's report as a reader sees it.
#   docs/first-run/report.png  the top of report.html, in headless Chromium (Debian: chromium)
#   docs/first-run/report.md   the whole report, with its figure (slots.png) beside it
# Without an argument it runs the default study first, exactly as `make study` does (the
# Makefile's STUDY, into outputs/sweeps/<timestamp>); with SWEEP it renders that folder's
# report again from its results. Run it after a change to the report's first screen.
# Usage: scripts/readme-figure.sh [SWEEP]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "readme-figure: needs chromium (Debian: apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
sweep=${1:-}
if [ -z "$sweep" ]; then
  # shellcheck disable=SC2046  # STUDY is a list of overrides, split as make splits it
  report=$("$py" -m benchkit $(sed -n 's/^STUDY ?= //p' Makefile) | tail -n 1)
  sweep=$(dirname "$(dirname "$report")")
else
  "$py" -m benchkit.report "$sweep" > /dev/null
fi
out=$root/docs/first-run
mkdir -p "$out"
cp "$sweep/report/report.md" "$out/report.md"
cp "$sweep/report/slots.png" "$out/slots.png"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
  --user-data-dir="$tmp/profile" --window-size=960,1180 --force-device-scale-factor=1 \
  --screenshot="$out/report.png" "file://$(cd "$sweep" && pwd)/report/report.html" 2> "$tmp/chromium.log" \
  || { cat "$tmp/chromium.log" >&2; exit 1; }
echo "$out/report.png"

#!/usr/bin/env bash
# Render a published study folder (docs/studies/NAME) from its results/ alone:
#   report/   the English report (report.md/.html, figures, verdicts.json)
#   report-ko/ the Korean report
#   blog/     with --blog: `--publish blog`, which appends the verdicts to NAME.ledger.jsonl
#   blog-ko/  with --blog: the Korean post, `--publish blog-ko study.lang=ko`, with its own
#             ledger NAME.ko.ledger.jsonl (each language's post keeps its own corrections)
# Usage: scripts/render-study.sh DIR [--blog]
set -euo pipefail
dir=${1:?usage: render-study.sh DIR [--blog]}
name=$(basename "$dir")
# Rendered from where it is run (the repository's root), so that the commands a report prints
# (hydra.sweep.dir=..., resume) name the study's folder as a reader at the root types it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each folder is benchkit's whole (a report never replaces files it did not write): the
# Korean report has its own folder; the earlier layout kept it inside report/.
rm -f "$dir/report/report.ko.md" "$dir/report/report.ko.html"
# A study whose sweep ran on several machines may keep, in `anchors` (one folder a line,
# relative to results/), the folders of jobs that re-ran some of its points on one machine:
# the comparison engine bridges the machines through them (study.anchors).
anchors=()
if [ -f "$dir/anchors" ]; then
  list=$(grep -v '^[[:space:]]*\(#\|$\)' "$dir/anchors" | paste -sd, -)
  anchors=("study.anchors=[$list]")
fi
# A study may keep, in `overrides` (one a line), report settings its results were not measured
# with, such as the drift a recommended point may have (study.quality.limit): every render
# takes them, so the reports and the posts weigh the same results alike.
if [ -f "$dir/overrides" ]; then
  while IFS= read -r line; do
    case "$line" in ''|'#'*) ;; *) anchors+=("$line") ;; esac
  done < "$dir/overrides"
fi
python -m benchkit.report "$dir/results" --out "$dir/report" "${anchors[@]}" > /dev/null
python -m benchkit.report "$dir/results" --out "$dir/report-ko" study.lang=ko "${anchors[@]}" > /dev/null
if [ "${2:-}" = --blog ]; then
  python -m benchkit.report "$dir/results" --out "$tmp/pub" --publish "$dir/blog" \
    "study.ledger=$dir/$name.ledger.jsonl" "${anchors[@]}" > /dev/null
  python -m benchkit.report "$dir/results" --out "$tmp/pub-ko" --publish "$dir/blog-ko" study.lang=ko \
    "study.ledger=$dir/$name.ko.ledger.jsonl" "${anchors[@]}" > /dev/null
fi
echo "$dir/report/report.md"

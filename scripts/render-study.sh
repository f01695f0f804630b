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
# Each language's report reads its ledger (its Corrections list the earlier publications); with
# --blog the same run writes the post beside it and appends this publication to the ledger, so
# the post's link to "the full report" is the study's own report folder (../report/report.md).
en=("study.ledger=$dir/$name.ledger.jsonl")
ko=(study.lang=ko "study.ledger=$dir/$name.ko.ledger.jsonl")
if [ "${2:-}" = --blog ]; then
  python -m benchkit.report "$dir/results" --out "$dir/report" --publish "$dir/blog" \
    "${en[@]}" "${anchors[@]}" > /dev/null
  python -m benchkit.report "$dir/results" --out "$dir/report-ko" --publish "$dir/blog-ko" \
    "${ko[@]}" "${anchors[@]}" > /dev/null
else
  python -m benchkit.report "$dir/results" --out "$dir/report" "${en[@]}" "${anchors[@]}" > /dev/null
  python -m benchkit.report "$dir/results" --out "$dir/report-ko" "${ko[@]}" "${anchors[@]}" > /dev/null
fi
echo "$dir/report/report.md"

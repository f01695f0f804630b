"""Each point a race decided, compared again as the verdicts compare it: the racing table's
last column (analysis.racing.racing_view). A race decides under the rules of its day, on the
units and cards it had; the verdicts ask the comparison engine, on one machine or bridged,
never across machines. A raced point and the report then cannot disagree unsaid (review 3 of
the rules-v9 posts: the H100 race stopped CUDA 8 slots "1.20x slower" than 16 across two
cards, beside a headline of 0.96x on one)."""

from __future__ import annotations

from pathlib import Path

from benchkit.report.analysis.numbers import ComparisonJson
from benchkit.report.analysis.racing import RaceCheck, load_race
from benchkit.report.analysis.sweep import Sweep
from benchkit.report.lang import fmt, tr
from benchkit.report.verdicts.compare_words import how_text, outcome_words
from benchkit.report.verdicts.engine_of import comparison_json, engine_of, point_of


def engine_check(source: Path, sw: Sweep) -> dict[str, ComparisonJson]:
    """Each point the race decided (stopped, or settled within the margin) against the point
    it was decided against, as the engine compares them ({} for a sweep that did not race)."""
    race = load_race(source)
    if race is None:
        return {}
    points = {j: point_of(c) for c in sw.cells for j in c.jobs}
    eng = engine_of(sw)
    out: dict[str, ComparisonJson] = {}
    for job, p in race["points"].items():
        if not isinstance(p, dict) or p.get("status") not in ("stopped", "settled"):
            continue
        best = str(p.get("best") or race.get("best") or "")
        if job not in points or best not in points:
            continue
        c = eng.compare(points[best], points[job])
        if c is not None:
            out[str(job)] = comparison_json(sw, c)
    return out


def race_checks(source: Path, sw: Sweep, lang: str) -> dict[str, RaceCheck]:
    """`engine_check` as the racing table takes it: each comparison's outcome and words
    ('1.04x (0.99x-1.08x ..., 8 units paired, ...): not decided')."""
    return {
        job: {
            "outcome": c["outcome"],
            "text": tr(
                lang,
                "{ratio} ({how}): {outcome}",
                ratio=fmt.ratio(c["ratio"], lang),
                how=how_text(c, lang),
                outcome=outcome_words(c["outcome"], lang),
            ),
        }
        for job, c in engine_check(source, sw).items()
    }

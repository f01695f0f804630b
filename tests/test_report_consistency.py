"""A report never contradicts itself: each check reads a rendered report.md (or a published
index.md) of the four studies under docs/studies (their results alone, English, into tmp;
the committed folders are never written) and holds one kind of sentence against the data the
same page shows:

(i)   no section says there is no comparison while its own table has rows;
(ii)  the energy section says "recommended" only when the summary recommends a setting;
(iii) every ratio, percentage and decimal the headline quotes is in a table of the report,
      or (a ratio or a percentage) follows from two values of one table within their
      rounding (whole numbers, slot counts and the projection's unit count, are left out);
(iv)  the corrections never say that no verdict changed while the ledger's entries (and this
      render) differ in a verdict's value, status or reasons, and every such difference
      has its row.

Each check is also run on a page with the contradiction it looks for, so that it is known
to find one (the pages the studies published before these checks had (i), (ii) and (iv))."""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchkit.paths import repo_root
from benchkit.report.lang.i18n import factor_name
from benchkit.report.ledger import RULES_VERSION, Entry, LedgerVerdict
from benchkit.report.writeup.render import render_report

STUDIES = repo_root() / "docs" / "studies"
ALL = sorted(p.name for p in STUDIES.iterdir() if (p / "results").is_dir())
# Reported in their own sections, not corrected (ledger.UNTRACKED).
UNTRACKED = ("validity", "repeats")
# Two projections within this share are the same (the ledger's default tolerance).
PROJECTION_TOL = 0.05


@dataclass(frozen=True)
class Rendered:
    """One study rendered twice into tmp: the report (the ledger found beside the results
    folder, read only) and a publication (against a copy of that ledger)."""

    study: str
    report: str
    published: str
    verdicts: list[LedgerVerdict]
    ledger: list[Entry]


_done: dict[str, Rendered] = {}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Rendered]:
    base = tmp_path_factory.mktemp("consistency")
    for study in ALL:
        if study in _done:
            continue
        src = STUDIES / study / "results"
        # As scripts/render-study.sh renders it: with the study's anchors, where it has any.
        anchors = _anchors(STUDIES / study)
        out = render_report(src, base / study / "report", overrides=anchors)
        ledger_src = STUDIES / study / f"{study}.ledger.jsonl"
        ledger = base / study / "ledger.jsonl"
        if ledger_src.exists():
            shutil.copy(ledger_src, ledger)
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        entries: list[Entry] = [json.loads(x) for x in lines]
        blog = base / study / "blog"
        render_report(
            src,
            base / study / "again",
            publish=blog,
            overrides=[f"study.ledger={ledger}", *anchors],
        )
        _done[study] = Rendered(
            study=study,
            report=(out / "report.md").read_text(encoding="utf-8"),
            published=(blog / "index.md").read_text(encoding="utf-8"),
            verdicts=json.loads((out / "verdicts.json").read_text(encoding="utf-8")),
            ledger=entries,
        )
    return _done


def _anchors(study: Path) -> list[str]:
    """The overrides render-study.sh passes: study.anchors from the study's `anchors` file,
    and the report settings of its `overrides` file, one a line."""

    def lines(name: str) -> list[str]:
        f = study / name
        text = f.read_text().splitlines() if f.exists() else []
        return [x.strip() for x in text if x.strip() and x.strip()[0] != "#"]

    anchors = lines("anchors")
    return ([f"study.anchors=[{','.join(anchors)}]"] if anchors else []) + lines("overrides")


# ------------------------------------------------------------------------------ the page


def sections(md: str) -> dict[str, str]:
    """Each '## ' section's text by its heading (the part before the first heading as '')."""
    out: dict[str, str] = {}
    for i, part in enumerate(re.split(r"^## ", md, flags=re.M)):
        head, _, text = part.partition("\n")
        out["" if i == 0 else head.strip()] = text if i else part
    return out


def prose(text: str) -> str:
    """A section's lines that are not table rows."""
    return "\n".join(x for x in text.splitlines() if not x.startswith("|"))


def tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of a text: each a list of rows (the header first) of cells."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def headline(md: str) -> str:
    body = md.split("\n---\n", 1)[1] if md.startswith("---\n") else md
    return next(x for x in body.splitlines() if x.startswith("**")).strip("*")


# ------------------------------------------------------------------------ (i) comparisons

NO_COMPARISON = re.compile(r"\bno complete points (?:to )?compare\b", re.I)


def said_no_comparison_beside_rows(md: str) -> list[str]:
    """Sections whose prose says there is nothing to compare above a table with rows."""
    return [
        head
        for head, text in sections(md).items()
        if NO_COMPARISON.search(prose(text)) and any(len(t) > 1 for t in tables(text))
    ]


@pytest.mark.parametrize("study", ALL)
def test_no_section_says_no_comparison_above_its_own_rows(
    rendered: dict[str, Rendered], study: str
) -> None:
    r = rendered[study]
    assert said_no_comparison_beside_rows(r.report) == []
    assert said_no_comparison_beside_rows(r.published) == []


# ------------------------------------------------------------------- (ii) recommendation

RECOMMENDED = re.compile(r"(?<![-\w])recommended\b", re.I)


def energy_recommends_without_a_recommendation(md: str) -> bool:
    """The energy section names a recommended point while the summary recommends nothing (a
    post says its recommendation under its answer, and has no summary: issue #45)."""
    parts = sections(md)
    summary = (parts.get("Summary") or parts.get("The answer") or "").strip()
    energy = parts.get("Energy and GPU telemetry", "")
    recommends = re.search(r"^Recommended setting", summary, re.M) is not None
    return not recommends and bool(RECOMMENDED.search(energy))


@pytest.mark.parametrize("study", ALL)
def test_the_energy_section_recommends_only_what_the_summary_does(
    rendered: dict[str, Rendered], study: str
) -> None:
    r = rendered[study]
    assert "## Summary" in r.report
    assert not energy_recommends_without_a_recommendation(r.report)
    assert not energy_recommends_without_a_recommendation(r.published)


# ------------------------------------------------------------------ (iii) headline numbers

NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(x|%)?")


def _value(cell: str) -> tuple[float, float] | None:
    """A table cell's first number and its rounding (half its last digit), or None."""
    m = re.search(r"[−-]?\d[\d,]*(?:\.\d+)?", cell)
    if m is None:
        return None
    text = m.group(0).replace(",", "").replace("−", "-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return float(text), 0.5 * 10**-decimals


# A printed number rounded coarser than this share of itself ("1 slot", "3%") gives no ratio.
COARSE = 0.02


def _table_values(md: str) -> list[list[tuple[float, float]]]:
    """Each table's positive numbers (the header left out) precise enough to give a ratio,
    with their rounding."""
    out = []
    for t in tables(md):
        values = [v for row in t[1:] for c in row if (v := _value(c)) is not None]
        out.append([v for v in values if v[0] > 0 and v[1] / v[0] <= COARSE])
    return out


def _follows(quoted: float, half: float, kind: str, md: str) -> bool:
    """Whether a ratio (kind 'x') or a relative change (kind '%', as a share) is what two
    values of one table give, within the rounding of the three printed numbers."""
    for values in _table_values(md):
        for a, ha in values:
            for b, hb in values:
                if a == b:
                    continue
                ratio = a / b
                slack = ratio * (ha / a + hb / b) + half
                got = ratio if kind == "x" else abs(ratio - 1)
                if math.isclose(got, quoted, abs_tol=slack):
                    return True
    return False


def unbacked_headline_numbers(md: str, post: bool = False) -> list[str]:
    """The headline's numbers that no table of the page shows or gives. A post (`post`) states
    the projection's time in its answer alone (it has no Projection section: each fact once);
    before #45's reorder its first bold line was the Terms paragraph, so this check read that
    instead of its headline."""
    cells = " ‖ ".join(c for t in tables(md) for row in t for c in row)
    head = headline(md)
    body = md.replace(head, "")
    out = []
    for m in NUMBER.finditer(head):
        number, kind = m.group(1), m.group(2) or ""
        if not kind and "." not in number:
            continue  # a whole number: a slot count, the projection's unit count
        if re.match(r"\s*(min|h)\b", head[m.end() :]) and (
            post or f"{number} {head[m.end() :].split()[0]}" in body
        ):
            continue  # a projection's time, stated in its own section with how it is computed
        if re.search(rf"(?<![\d.,]){re.escape(number + kind)}(?![\d])", cells):
            continue
        decimals = len(number.split(".")[1]) if "." in number else 0
        half = 0.5 * 10**-decimals
        value = float(number.replace(",", ""))
        if kind == "%" and _follows(value / 100, half / 100, "%", md):
            continue
        if kind == "x" and _follows(value, half, "x", md):
            continue
        out.append(number + kind)
    return out


@pytest.mark.parametrize("study", ALL)
def test_every_number_of_the_headline_is_in_a_table(
    rendered: dict[str, Rendered], study: str
) -> None:
    r = rendered[study]
    assert unbacked_headline_numbers(r.report) == []
    assert unbacked_headline_numbers(r.published, post=True) == []


# ---------------------------------------------------------------------- (iv) corrections


def _key(v: LedgerVerdict) -> tuple[object, ...]:
    reasons = sorted(v.get("reasons") or [])
    return (json.dumps(v.get("verdict"), sort_keys=True), v.get("status"), reasons)


def _same(factor: str, a: LedgerVerdict, b: LedgerVerdict) -> bool:
    x, y = a.get("verdict"), b.get("verdict")
    if factor == "projection" and isinstance(x, int | float) and isinstance(y, int | float):
        close = bool(x) and abs(float(y) / float(x) - 1) < PROJECTION_TOL
        return close and _key(a)[1:] == _key(b)[1:]
    if "reasons" not in a and a.get("status") != "complete":
        return False  # an older entry without its reasons: never "the same"
    return _key(a) == _key(b)


def differences(entries: list[Entry], current: list[LedgerVerdict]) -> list[tuple[int, str]]:
    """(index of the later of two consecutive entries, factor) for every tracked verdict
    whose value, status or reasons differ; index len(entries) is this render."""
    chain = [*(e["verdicts"] for e in entries), current]
    out = []
    for i in range(1, len(chain)):
        before = {v["factor"]: v for v in chain[i - 1]}
        after = {v["factor"]: v for v in chain[i]}
        for f in sorted(set(before) | set(after)):
            if f in UNTRACKED:
                continue
            a, b = before.get(f), after.get(f)
            if a is None or b is None or not _same(f, a, b):
                out.append((i, f))
    return out


def correction_rows(md: str) -> list[list[str]]:
    section = sections(md).get("Corrections", "")
    found = [t for t in tables(section) if t[0][:2] == ["published", "factor"]]
    return found[0][1:] if found else []


def corrections_contradict(
    md: str, entries: list[Entry], current: list[LedgerVerdict], this: str
) -> list[str]:
    """What the corrections section gets wrong against the ledger: 'no verdict changed' said
    while the last entry and this render differ, and differences without their row (`this`:
    the date column of this render's own rows)."""
    section = sections(md).get("Corrections", "")
    # The ledger's last entry made from these results under these rules is this publication:
    # a report rendered beside its ledger (no study.ledger given) leaves such a twin out
    # (benchkit.report.ledger.history), so its Corrections compare with the entry before.
    while (
        this == "this report"
        and entries
        and entries[-1].get("rules") == RULES_VERSION
        and all(
            _same(v["factor"], v, w)
            for v, w in zip(entries[-1]["verdicts"], current, strict=False)
            if v["factor"] == w["factor"]
        )
    ):
        entries = entries[:-1]
    diffs = differences(entries, current)
    problems = []
    now = [f for i, f in diffs if i == len(entries)]
    if entries and now and "No verdict has changed" in section:
        problems.append(f"'No verdict has changed' while {now} changed")
    # A row is dated to the day, or to the minute on a day with several publications.
    rows = {(r[0], r[1]) for r in correction_rows(md)}
    rows |= {(r[0][:10], r[1]) for r in correction_rows(md)}
    for i, f in diffs:
        date = this if i == len(entries) else str(entries[i].get("published_utc") or "")[:10]
        if (date, factor_name(f, "en")) not in rows:
            problems.append(f"no row for {f} at {date}")
    return problems


@pytest.mark.parametrize("study", ALL)
def test_corrections_list_every_difference_the_ledger_holds(
    rendered: dict[str, Rendered], study: str
) -> None:
    r = rendered[study]
    assert "No ledger of earlier publications" not in r.report  # each study has one
    assert corrections_contradict(r.report, r.ledger, r.verdicts, "this report") == []
    published_on = re.search(r'^date: "(\d{4}-\d\d-\d\d)', r.published, re.M)
    assert published_on is not None
    # A post gives the corrections a reader would see (a value or a status changed), one
    # sentence each, and links the report's whole ledger (#45): each it gives is one of the
    # ledger's differences, dated as the ledger dates it.
    section = sections(r.published).get("Corrections", "")
    assert "| published | factor |" not in section
    diffs = differences(r.ledger, r.verdicts)
    known = {
        (str(r.ledger[i].get("published_utc") or "")[:10], factor_name(f, "en"))
        for i, f in diffs
        if i < len(r.ledger)
    } | {(published_on.group(1), factor_name(f, "en")) for i, f in diffs if i == len(r.ledger)}
    said = re.findall(
        r"^- The post of (\d{4}-\d\d-\d\d)(?: [\d:]+)? gave (?:no (.+?) verdict|(.+?) as )",
        section,
        re.M,
    )
    for date, new, old in said:
        assert (date, new or old) in known, (date, new or old)
    assert "report.md" in sections(r.published).get("The full report", "")


# ----------------------------------------------------------- the checks find what they seek

CONTRADICTIONS = """**Provisional: CUDA won; about 9.9 min per 100 units (throughput basis).**

| factor | verdict | status |
|---|---|---|
| backend | CUDA | provisional |

## MTP (speculative decoding)

No complete points compare MTP on and off (Provisional: no complete points to compare).

| config | MTP off s/unit | MTP on s/unit | on / off | effect | draft acceptance |
|---|---|---|---|---|---|
| Vulkan, 1 slot | 12.2 s | 15.4 s | 1.26x | hurts | 3% |

## Energy and GPU telemetry

- At the recommended point (CUDA, 8 slots, MTP off): 1,315 J per unit.

## Corrections

No verdict has changed since the earlier publication (2026-12-03).

## Summary

No recommendation yet: the best completed point so far is CUDA, 8 slots, MTP off.
"""


def test_each_check_finds_the_contradiction_it_looks_for() -> None:
    md = CONTRADICTIONS
    assert said_no_comparison_beside_rows(md) == ["MTP (speculative decoding)"]
    assert energy_recommends_without_a_recommendation(md)
    assert not energy_recommends_without_a_recommendation(
        md.replace("No recommendation yet", "Recommended setting")
    )
    # A post says it under its answer.
    assert energy_recommends_without_a_recommendation(md.replace("## Summary", "## The answer"))
    # 9.9 min is nowhere in a table; 1.26x is in one, and 1.25x follows from 15.4 / 12.2.
    assert unbacked_headline_numbers(md) == ["9.9"]
    quoted = md.replace("about 9.9 min", "1.26x and 1.25x and 1.40x")
    assert unbacked_headline_numbers(quoted) == ["1.40x"]

    def verdict(reasons: list[str] | None) -> LedgerVerdict:
        v: LedgerVerdict = {
            "factor": "backend", "verdict": "cuda", "status": "provisional", "missing": []
        }  # fmt: skip
        if reasons is not None:
            v["reasons"] = reasons
        return v

    def entry(date: str, v: LedgerVerdict) -> Entry:
        return {
            "ledger_version": 1, "study": "s", "published_utc": date, "source": "results",
            "verdicts": [v],
        }  # fmt: skip

    first = entry("2026-12-03T14:15:34Z", verdict(["contaminated"]))
    second = entry("2026-12-03T14:32:41Z", verdict([]))
    problems = corrections_contradict(md, [first, second], [verdict(["stalled"])], "this report")
    assert problems == [
        "'No verdict has changed' while ['backend'] changed",
        "no row for backend at 2026-12-03",
        "no row for backend at this report",
    ]
    # An older entry without its reasons is never "the same" as a provisional verdict.
    old = entry("2026-01-01", verdict(None))
    assert differences([old], [verdict([])]) == [(1, "backend")]

"""The corrections ledger on altered copies (tmp) of the published studies' ledgers and
results: a reason dropped with the same value is a correction, a rules bump names both
versions, identical entries say no verdict changed, an older entry without its reasons is
still compared, any factor's verdict is tracked, and report.md (not only the blog) shows the
history wherever a ledger exists and says so where none does."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from benchkit.paths import repo_root
from benchkit.report import ledger
from benchkit.report.ledger import Entry, LedgerVerdict
from benchkit.report.ledger import words as ledger_words
from benchkit.report.writeup.render import render_report

STUDIES = repo_root() / "docs" / "studies"
# The studies' ledgers as they stood before their rules-v3 republication (2026-12-06), kept so
# these tests do not change meaning each time a study is published again.
LEDGERS = Path(__file__).parent / "data" / "ledgers"
VULKAN = "h200-vulkan-vs-cuda"
DECODE = "h200-glm4moe-30b-a3b-decode"  # the smallest results folder


def entries(study: str, tmp_path: Path) -> list[Entry]:
    """The study's ledger, read from a copy in tmp."""
    path = tmp_path / f"{study}.ledger.jsonl"
    shutil.copy(LEDGERS / f"{study}.ledger.jsonl", path)
    return ledger.load(path, study)


def verdict(entry: Entry, factor: str) -> LedgerVerdict:
    return next(v for v in entry["verdicts"] if v["factor"] == factor)


def later(entry: Entry, date: str, **changes: object) -> Entry:
    """A copy of an entry published at `date`, with top-level keys changed."""
    out = copy.deepcopy(entry)
    out["published_utc"] = date
    for k, v in changes.items():
        out[k] = v  # type: ignore[literal-required]
    return out


def corrections_section(md: str) -> str:
    return md.split("## Corrections", 1)[1].split("\n## ", 1)[0]


# ------------------------------------------------------------------ ledger.corrections


def test_a_reason_dropped_with_the_same_value_is_a_correction(tmp_path: Path) -> None:
    # The Vulkan study's two publications: the backend stayed CUDA (provisional), but the
    # second no longer gave "contaminated" as a reason; both blogs said nothing changed.
    first, second = entries(VULKAN, tmp_path)
    corr = ledger.corrections([first], second)
    backend = next(c for c in corr["changes"] if c["factor"] == "backend")
    d = backend["diff"]
    assert (backend["earlier"], backend["now"]) == ("cuda", "cuda")
    assert not d["value"] and not d["status"]
    assert (d["reasons_removed"], d["reasons_added"]) == (["contaminated"], [])
    # The status did not change, so only the reasons are listed.
    assert ledger_words.what_changed(backend, "en") == "reasons: jobs on another setup removed"
    # A reason that replaces another reads as both.
    now = later(second, "2026-12-05T00:00:00Z")
    verdict(now, "backend")["reasons"] = ["stalled"]
    (c,) = [c for c in ledger.corrections([second], now)["changes"] if c["factor"] == "backend"]
    assert ledger_words.what_changed(c, "en") == "reasons: stalls added"
    (c,) = [c for c in ledger.corrections([first], now)["changes"] if c["factor"] == "backend"]
    assert "reasons: jobs on another setup removed, stalls added" in ledger_words.what_changed(
        c, "en"
    )


def test_a_rules_bump_is_listed_with_both_versions(tmp_path: Path) -> None:
    _, second = entries(DECODE, tmp_path)
    assert second["rules"] == 2
    bumped = later(second, "2026-12-05T00:00:00Z", rules=3)
    verdict(bumped, "projection")["reasons"] = ["single_run", "stalled"]
    corr = ledger.corrections([second], bumped)
    (c,) = corr["changes"]
    assert c["factor"] == "projection" and c["why"]["rules"] == [2, 3]
    what = ledger_words.what_changed(c, "en")
    assert what.endswith("reasons: stalls added; rules v2 → v3")
    assert ledger_words.correction_why(c["why"], "en") == "the verdict rules changed (v2 → v3)"
    (note,) = ledger_words.rules_notes(corr["changes"], "en")
    assert note.startswith("v3: a call far outside its job's own rate is named as a stall")
    # A bump that changes no verdict is said, without a correction.
    same = ledger.corrections([second], later(second, "2026-12-05T00:00:00Z", rules=3))
    assert same["changes"] == [] and same["rules"] == [2, 3]
    assert ledger_words.no_change_intro("2026-12-03", same["rules"], "en").endswith(
        "though the verdict rules changed since (v2 → v3)."
    )
    # An entry without `rules` was published under version 1: every version since is named.
    v1 = {k: v for k, v in second.items() if k != "rules"}
    corr = ledger.corrections([v1], bumped)  # type: ignore[list-item]
    assert [n[:3] for n in ledger_words.rules_notes(corr["changes"], "en")] == ["v2:", "v3:"]


def test_identical_entries_say_no_verdict_changed(tmp_path: Path) -> None:
    _, second = entries(DECODE, tmp_path)
    again = later(second, "2026-12-05T00:00:00Z")
    corr = ledger.corrections([second], again)
    assert corr["changes"] == [] and corr["rules"] == [2, 2]
    assert ledger_words.no_change_intro("2026-12-03", corr["rules"], "en") == (
        "No verdict has changed since the earlier publication (2026-12-03): value, status and "
        "reasons are the same."
    )


def test_an_older_entry_without_reasons_is_still_compared(tmp_path: Path) -> None:
    first, second = entries(VULKAN, tmp_path)
    for v in first["verdicts"]:
        del v["reasons"]  # as a ledger line from before reasons were recorded
    corr = ledger.corrections([first], second)
    # A complete verdict has no reasons, so repeats and validity aside, only the provisional
    # verdicts whose reasons are now known and not empty are listed.
    slots = next(c for c in corr["changes"] if c["factor"] == "slots")
    assert not slots["diff"]["reasons_known"] and slots["diff"]["reasons_added"] == ["capped"]
    assert "capped (the earlier entry recorded no reasons)" in ledger_words.what_changed(
        slots, "en"
    )
    complete: LedgerVerdict = {"factor": "x", "verdict": 1, "status": "complete", "missing": []}
    assert ledger.reasons_of(complete) == []
    assert ledger.reasons_of(verdict(first, "backend")) is None


def test_any_factor_is_tracked_and_a_new_verdict_is_listed(tmp_path: Path) -> None:
    _, second = entries(DECODE, tmp_path)
    ubatch: LedgerVerdict = {
        "factor": "factor:server.ubatch", "verdict": 512, "status": "provisional", "missing": [],
        "reasons": ["inside_noise"],
    }  # fmt: skip
    with_factor = later(second, "2026-12-05T00:00:00Z", rules=3)
    with_factor["verdicts"].append(ubatch)
    moved = later(with_factor, "2026-12-06T00:00:00Z")
    moved_v = verdict(moved, "factor:server.ubatch")
    moved_v["verdict"], moved_v["status"], moved_v["reasons"] = 1024, "complete", []
    corr = ledger.corrections([second, with_factor], moved)
    new, changed = (c for c in corr["changes"] if c["factor"] == "factor:server.ubatch")
    assert new["diff"]["presence"] == "new" and not new["current"]
    assert ledger_words.what_changed(new, "en").startswith(
        "a verdict the earlier publication did not give; reasons: a margin inside the noise added"
    )
    assert (changed["earlier"], changed["now"], changed["current"]) == (512, 1024, True)
    assert ledger_words.what_changed(changed, "en") == (
        "value changed; status provisional → complete; reasons: a margin inside the noise removed"
    )


# ------------------------------------------------------------- the report, not only the blog


def test_the_report_shows_the_history_wherever_a_ledger_exists(tmp_path: Path) -> None:
    study = tmp_path / "study"
    results = study / "results"
    shutil.copytree(STUDIES / DECODE / "results", results)
    beside = study / f"{DECODE}.ledger.jsonl"

    # No ledger anywhere: said plainly.
    md = (render_report(results, tmp_path / "none") / "report.md").read_text()
    assert "No ledger of earlier publications exists for this study" in corrections_section(md)

    # The ledger beside the results folder (as docs/studies keeps it), read and never written;
    # its last entry holds this render's own verdicts under rules v2, so only the rules moved.
    now = json.loads((tmp_path / "none" / "verdicts.json").read_text())
    lines = [json.loads(x) for x in (LEDGERS / f"{DECODE}.ledger.jsonl").read_text().splitlines()]
    lines[-1]["verdicts"] = [
        {k: v[k] for k in ("factor", "verdict", "status", "missing", "reasons", "point")}
        for v in now
        if ledger.tracked(v["factor"])
    ]
    lines[-1]["rules"] = 2
    beside.write_text("".join(json.dumps(x) + "\n" for x in lines))
    before = beside.read_text()
    md = (render_report(results, tmp_path / "beside") / "report.md").read_text()
    section = corrections_section(md)
    assert "No ledger" not in section
    assert section.lstrip().startswith(
        "No verdict has changed since the earlier publication (2026-12-03 13:45): value, status "
        "and reasons are the same, though the verdict rules changed since "
        f"(v2 → v{ledger.RULES_VERSION})."
    )
    assert beside.read_text() == before

    # An earlier entry whose reasons differ from this render's: a row dated "this report".
    lines = [json.loads(x) for x in before.splitlines()]
    for v in lines[-1]["verdicts"]:
        if v["factor"] == "slots":
            v["reasons"] = ["contaminated"]
    beside.write_text("".join(json.dumps(x) + "\n" for x in lines))
    md = (render_report(results, tmp_path / "altered") / "report.md").read_text()
    published, rendered = (
        x for x in corrections_section(md).splitlines() if "| parallel slots |" in x
    )
    assert "jobs on another setup added" in published
    assert rendered.startswith("| this report | parallel slots | 16 slots (")
    assert (
        "jobs on another setup removed" in rendered
        and f"rules v2 → v{ledger.RULES_VERSION}" in rendered
    )

    # The results folder's own history/ is read too, with no ledger beside it.
    beside.rename(results / "history.ledger.jsonl")
    (results / "history").mkdir()
    (results / "history.ledger.jsonl").rename(results / "history" / "first.ledger.jsonl")
    md = (render_report(results, tmp_path / "history") / "report.md").read_text()
    assert "| this report | parallel slots |" in corrections_section(md)


def test_a_post_in_another_language_is_not_an_earlier_publication(tmp_path: Path) -> None:
    """Published in English then in Korean from the same results (scripts/render-study.sh),
    the Korean post reads the English ledger beside the results: the English entry just
    written is the same publication, so the Korean post lists the same current corrections
    as the English one (it had said no verdict changed)."""
    study = tmp_path / "study"
    results = study / "results"
    shutil.copytree(STUDIES / DECODE / "results", results)
    en, ko = study / f"{DECODE}.ledger.jsonl", study / f"{DECODE}.ko.ledger.jsonl"
    render_report(results, tmp_path / "r", overrides=[f"study.ledger={en}"])
    now = json.loads((tmp_path / "r" / "verdicts.json").read_text())
    # One earlier publication in each language, whose slots verdict the data now change.
    earlier = json.loads((LEDGERS / f"{DECODE}.ledger.jsonl").read_text().splitlines()[-1])
    earlier["verdicts"] = [
        {k: v[k] for k in ("factor", "verdict", "status", "missing", "reasons", "point")}
        for v in now
        if ledger.tracked(v["factor"])
    ]
    earlier["rules"] = ledger.RULES_VERSION
    verdict(earlier, "slots")["reasons"] = ["contaminated"]
    for path in (en, ko):
        path.write_text(json.dumps(earlier) + "\n")
    intro = "Verdicts that changed since an earlier publication of this study:"
    posts = {}
    for lang, path in (("en", en), ("ko", ko)):
        out = render_report(
            results,
            tmp_path / f"report-{lang}",
            publish=tmp_path / f"blog-{lang}",
            overrides=[f"study.ledger={path}"],
        )
        assert out.exists()
        posts[lang] = corrections_section((tmp_path / f"blog-{lang}" / "index.md").read_text())
        assert len(path.read_text().splitlines()) == 2  # this publication appended
    assert posts["en"].lstrip().startswith(intro)
    # The Korean render is in English here (no study.lang): the same words, the same rows.
    assert posts["ko"] == posts["en"]
    assert "this report" not in posts["ko"]


def test_a_publication_records_the_size_of_its_comparisons(tmp_path: Path) -> None:
    """The ledger keeps the backend verdict's ratio and value ranges and drafting's on/off
    range, so that a later publication can show them move (the H200 study's 1.61x at 1 slot
    had no number in its ledger); an older entry without them reads as not recorded."""
    out = tmp_path / "r"
    shutil.copytree(STUDIES / VULKAN / "results", tmp_path / "results")
    render_report(tmp_path / "results", out)
    data = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    by = {v["factor"]: v for v in data}
    light = ledger.Light.of(by["backend"]["numbers"])
    assert light.ratio_range is not None and light.value_range is not None
    lo, hi = light.ratio_range["vulkan"]
    assert 1.0 < lo <= hi
    assert set(light.value_range) == {"cuda", "vulkan"}
    on_off = ledger.Light.of(by["mtp"]["numbers"]).on_off_range
    assert on_off is not None and on_off[0] > 1.0  # MTP hurt: on took longer than off
    old = verdict(entries(VULKAN, tmp_path)[0], "backend")
    assert ledger.Light.of(old.get("numbers") or {}).ratio_range is None


def test_a_change_on_other_results_says_so(tmp_path: Path) -> None:
    """A verdict that moved because more units were measured (the H100 race's later rounds)
    names the results as having changed, where both entries kept a digest of them."""
    first = entries(VULKAN, tmp_path)[-1]
    first["data"] = "a" * 64
    second = later(first, "2026-12-10T00:00:00Z", data="b" * 64)
    verdict(second, "slots")["verdict"] = 2
    (c,) = [c for c in ledger.corrections([first], second)["changes"] if c["factor"] == "slots"]
    assert "the results differ" in ledger_words.correction_why(c["why"], "en")
    same = later(first, "2026-12-10T00:00:00Z")
    verdict(same, "slots")["verdict"] = 2
    (c,) = [c for c in ledger.corrections([first], same)["changes"] if c["factor"] == "slots"]
    assert "the results differ" not in ledger_words.correction_why(c["why"], "en")

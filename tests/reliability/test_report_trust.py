"""The report as a new user and a hostile one drive it (issue #31, items 1, 2, 7 and 8): it
never removes what it did not write, a results folder from someone else never chooses where
a publication writes, and every mistake is one sentence.

Each test copies the seed's reference results (fixtures/results/seed-r9700) and renders
them with `python -m benchkit.report` as a user would; no server is needed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchkit.paths import repo_root
from benchkit.results.owned import MANIFEST

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"


def report(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchkit.report", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root (hidden ones too) with its content's hash."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def one_sentence(stderr: str) -> str:
    """The command's complaint: one line, no traceback."""
    assert "Traceback" not in stderr, stderr
    (line,) = [x for x in stderr.splitlines() if x.startswith("benchkit.report: ")]
    return line


def copy_seed(dest: Path) -> Path:
    subprocess.run(["cp", "-r", str(SEED), str(dest)], check=True)
    return dest


# ------------------------------------------------------------------ 1. what it did not write


def test_out_into_the_results_folder_removes_nothing(tmp_path: Path) -> None:
    """`report R --out R` used to delete R's result.json, calls, .hydra and any other file."""
    src = copy_seed(tmp_path / "R")
    (src / "0" / ".hydra").mkdir()
    (src / "0" / ".hydra" / "config.yaml").write_text("slots: 1\n")
    (src / "notes.txt").write_text("mine\n")
    before = snapshot(src)
    p = report(src, "--out", src, cwd=tmp_path)
    assert p.returncode == 2
    line = one_sentence(p.stderr)
    assert f"{src} holds files benchkit did not write" in line
    assert "give --out a new or empty folder" in line
    assert snapshot(src) == before  # nothing lost
    assert not list(tmp_path.glob(".R.*"))  # no half-built folder left beside it


def test_publish_into_a_blog_with_other_posts_removes_nothing(tmp_path: Path) -> None:
    """`--publish BLOG` on an existing blog used to delete BLOG/other-post/."""
    src = copy_seed(tmp_path / "R")
    blog = tmp_path / "BLOG"
    (blog / "other-post").mkdir(parents=True)
    (blog / "other-post" / "index.md").write_text("# my other post\n")
    before = snapshot(blog)
    p = report(src, "--out", tmp_path / "out", "--publish", blog, cwd=tmp_path)
    assert p.returncode == 2
    line = one_sentence(p.stderr)
    assert "other-post" in line and "give --publish a new or empty folder" in line
    assert snapshot(blog) == before
    assert not (tmp_path / "out").exists()  # refused before any work

    # Its own folder under the blog is fine, and publishing again replaces only its own files.
    post = blog / "seed"
    assert report(src, "--out", tmp_path / "out", "--publish", post, cwd=tmp_path).returncode == 0
    written = json.loads((post / MANIFEST).read_text())
    assert {"index.md", "index.html", "verdicts.json"} <= set(written)
    assert report(src, "--out", tmp_path / "out", "--publish", post, cwd=tmp_path).returncode == 0
    assert (blog / "other-post" / "index.md").read_text() == "# my other post\n"
    # A file of the user's put into the post since is not the report's to remove.
    (post / "comments.md").write_text("keep me\n")
    p = report(src, "--out", tmp_path / "out", "--publish", post, cwd=tmp_path)
    assert p.returncode == 2 and "comments.md" in one_sentence(p.stderr)
    assert (post / "comments.md").read_text() == "keep me\n"


def test_a_report_folder_from_before_manifests_is_still_replaced(tmp_path: Path) -> None:
    """A report/ an earlier benchkit wrote (no manifest) holds only the report's own names,
    its page marked as benchkit's: rendering again replaces it, as before."""
    out = tmp_path / "report"
    out.mkdir()
    for name in ("report.md", "verdicts.json", "results.csv", "slots.png"):
        (out / name).write_text("old")
    (out / "report.html").write_text('<head><meta name="generator" content="benchkit 0.1.0">')
    assert report(SEED, "--out", out, cwd=tmp_path).returncode == 0
    assert (out / "report.md").read_text() != "old" and (out / MANIFEST).exists()


# ------------------------------------------------------------------ 2. trust of results


def _hostile_study(src: Path, **study: object) -> None:
    for p in src.glob("*/result.json"):
        d = json.loads(p.read_text())
        d["provenance"]["study"].update(study)
        p.write_text(json.dumps(d))


def test_results_never_choose_where_a_publication_writes(tmp_path: Path) -> None:
    """A result.json naming a ledger outside the publish folder used to create that file."""
    src = copy_seed(tmp_path / "R")
    evil = tmp_path / "elsewhere" / "evil.ledger.jsonl"
    _hostile_study(src, ledger=str(evil))
    post = tmp_path / "blog" / "post"
    p = report(src, "--out", tmp_path / "out", "--publish", post, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not evil.exists() and not evil.parent.exists()
    assert "it is not used: a ledger comes from the command line only" in p.stderr
    # The ledger is the default one, beside the published folder.
    assert (tmp_path / "blog" / "seed-r9700.ledger.jsonl").exists()
    # Given on the command line, the same path is the user's choice and is written.
    mine = tmp_path / "mine.ledger.jsonl"
    p = report(
        src, "--out", tmp_path / "out", "--publish", tmp_path / "blog" / "post",
        f"study.ledger={mine}", cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0 and mine.exists()


def test_a_study_name_from_results_cannot_climb_out(tmp_path: Path) -> None:
    """`study.name: ../../x` used to write x.ledger.jsonl two levels above the blog."""
    src = copy_seed(tmp_path / "R")
    _hostile_study(src, name="../../x")
    pub = tmp_path / "a" / "b" / "post"
    p = report(src, "--out", tmp_path / "out", "--publish", pub, cwd=tmp_path)
    assert p.returncode == 2
    line = one_sentence(p.stderr)
    assert "study.name '../../x' is not a plain name" in line and "study.name=NAME" in line
    assert not list(tmp_path.rglob("x.ledger.jsonl")) and not pub.exists()
    # The fix the sentence names works.
    p = report(src, "--out", tmp_path / "out", "--publish", pub, "study.name=seed", cwd=tmp_path)
    assert p.returncode == 0 and (pub.parent / "seed.ledger.jsonl").exists()


def test_a_factor_value_from_results_names_no_path(tmp_path: Path) -> None:
    """A figure is named after a factor's value: one read from results stays a plain name."""
    from benchkit.results.owned import safe_name

    assert safe_name("spec-../../../etc/x") == "spec-..-..-..-etc-x"
    assert "/" not in safe_name("a/b\\c") and not safe_name("..hidden").startswith(".")


# ------------------------------------------------------------------ 7. one sentence


def test_a_malformed_ledger_is_one_sentence(tmp_path: Path) -> None:
    """A ledger line without a verdict's 'factor' used to raise KeyError: 'factor'."""
    ledger = tmp_path / "l.jsonl"
    entry = {"study": "seed-r9700", "published_utc": "2026-01-01T00:00:00Z", "source": "x"}
    entry["verdicts"] = [{"verdict": "hip", "status": "complete"}]
    ledger.write_text(json.dumps(entry) + "\n")
    p = report(SEED, "--out", tmp_path / "out", f"study.ledger={ledger}", cwd=tmp_path)
    assert p.returncode == 2
    line = one_sentence(p.stderr)
    assert f"{ledger}:1 is not a ledger entry (verdict 0 has no 'factor')" in line


def test_a_result_without_reason_is_one_sentence(tmp_path: Path) -> None:
    src = copy_seed(tmp_path / "R")
    p0 = src / "0" / "result.json"
    d = json.loads(p0.read_text())
    del d["reason"]
    p0.write_text(json.dumps(d))
    p = report(src, "--out", tmp_path / "out", cwd=tmp_path)
    assert p.returncode == 2
    assert f"{p0} lacks the key(s) reason" in one_sentence(p.stderr)
    # A block of the wrong shape is one sentence too, never a traceback.
    d["reason"] = None
    d["provenance"]["benchkit"] = "not an object"
    d["metrics"]["ttft_ms"] = "fast"
    p0.write_text(json.dumps(d))
    p = report(src, "--out", tmp_path / "out", cwd=tmp_path)
    assert "Traceback" not in p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only folder needs root")
def test_a_read_only_out_folder_is_one_sentence(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)]).returncode:
        pytest.skip("this machine does not let a test mount a tmpfs")
    try:
        p = report(SEED, "--out", ro / "report", cwd=tmp_path)
        assert p.returncode == 2
        line = one_sentence(p.stderr)
        assert "cannot write the report to" in line and "Read-only file system" in line
        assert "write to another folder" in line
    finally:
        subprocess.run(["umount", str(ro)], check=True)


# ------------------------------------------------------------------ 8. smaller


def test_front_matter_is_yaml_and_markup_in_it_is_text(tmp_path: Path) -> None:
    # A post's title says what ran (#45): the model's name from the results, which is the
    # results' text, not ours; markup and a line break in it stay text in the front matter.
    title = 'Vulkan "wins": <script>alert(1)</script>\nnext: line'
    src = copy_seed(tmp_path / "R")
    for path in src.glob("*/result.json"):
        d = json.loads(path.read_text())
        d["provenance"]["model"]["name"] = title
        path.write_text(json.dumps(d))
    post = tmp_path / "post"
    p = report(src, "--out", tmp_path / "out", "--publish", post, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    md = (post / "index.md").read_text()
    front = md.split("---\n")[1]
    fm = yaml.safe_load(front)
    assert fm["title"].startswith(
        'Vulkan "wins": &lt;script&gt;alert(1)&lt;/script&gt;\nnext: line'
    )
    assert "<script>" not in front and set(fm) >= {"title", "date", "status"}


def test_a_formula_in_results_is_text_in_results_csv(tmp_path: Path) -> None:
    src = copy_seed(tmp_path / "R")
    p0 = src / "0" / "result.json"
    d = json.loads(p0.read_text())
    d["factors"]["model"] = '=HYPERLINK("http://x","y")'
    p0.write_text(json.dumps(d))
    assert report(src, "--out", tmp_path / "out", cwd=tmp_path).returncode == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text())))
    models = {r["factor.model"] for r in rows}
    assert '\'=HYPERLINK("http://x","y")' in models
    assert not any(m.startswith("=") for m in models)
    # Numbers stay numbers, negative ones included.
    assert all(not r["wall_s"].startswith("'") for r in rows)

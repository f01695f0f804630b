"""report.html in a real browser: headless Chromium (Debian's `chromium` package) opens it,
takes a screenshot, and reports from inside the page that every figure decoded, that no
template text leaked and that markup from results stayed inert.

The page under test is a copy of report.html with one checking script appended (the report
itself carries no script); `--dump-dom` returns the DOM after the script ran. Skipped, with
the reason, only where Chromium is not installed: `apt-get install -y chromium`.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import matplotlib.image as mpimg
import pytest
from test_analyse import result

from benchkit.paths import repo_root
from benchkit.report.writeup.render import render_report
from benchkit.results.store import atomic_write_json

SEED = repo_root() / "fixtures" / "results" / "seed-r9700"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian: apt-get install -y chromium); the browser check "
    "needs a real browser",
)

PROBE = """
<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images).map(i => ({
    alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
    inline: i.src.startsWith("data:image/png;base64,")}));
  const probe = document.createElement("pre");
  probe.id = "benchkit-probe";
  probe.textContent = JSON.stringify({
    imgs: imgs,
    scripts: document.scripts.length,
    title: document.title,
    text: document.body.innerText,
    links: Array.from(document.links).map(a => a.getAttribute("href")),
    // Where the headline and the verdict table end, in CSS pixels from the page's top.
    headline_bottom: (() => { const h = document.querySelector("body > p > strong");
      return h ? h.getBoundingClientRect().bottom + window.scrollY : null; })(),
    first_table_bottom: (() => { const t = document.querySelector("table");
      return t ? t.getBoundingClientRect().bottom + window.scrollY : null; })(),
    first_h2: (document.querySelector("h2") || {}).innerText,
    details: Array.from(document.querySelectorAll("details")).map(d => ({
      open: d.open, summary: d.querySelector("summary").innerText,
      shown: Array.from(d.children).filter(c => c.tagName !== "SUMMARY")
        .some(c => c.checkVisibility())})),
  });
  document.body.appendChild(probe);
});
</script>
"""


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]
    return subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )


def probe(report: Path, tmp: Path) -> dict[str, Any]:
    """Open a copy of the report with the probe script; return what the page said."""
    page = tmp / "probe.html"
    page.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    proc = chromium(
        "--window-size=1280,800",
        "--virtual-time-budget=10000",
        "--dump-dom",
        page.as_uri(),
        profile=tmp / "p1",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r'<pre id="benchkit-probe">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"the probe did not run; DOM tail: {proc.stdout[-500:]}"
    found: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    return found


def screenshot(report: Path, tmp: Path) -> Path:
    shot = tmp / "report.png"
    proc = chromium(
        "--window-size=1280,4000", f"--screenshot={shot}", report.as_uri(), profile=tmp / "p2"
    )
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    return shot


# What each language's first screen must show: the headline's opening, the title (study.text
# for Korean) and the folded appendix's summary.
SEED_PAGES = {
    "en": (
        "Vulkan looks faster, the knee lies between 2 and 8 slots, at 4 by the figures",
        "A 35B MoE on the Radeon AI PRO R9700: backend, parallel slots and MTP, one at a time",
        "Appendix: flags per job",
    ),
    "ko": (
        "Vulkan 백엔드가 더 빨라 보이고, 동시 슬롯의 무릎은 2~8개 사이이고 수치로는 4개이며",
        "R9700 한 장에서 35B MoE 돌리기: 백엔드, 동시 슬롯, MTP를 하나씩",
        "부록: 작업별 플래그",
    ),
}


@pytest.mark.parametrize("lang", sorted(SEED_PAGES))
def test_seed_report_in_the_browser(tmp_path: Path, lang: str) -> None:
    headline, title, appendix = SEED_PAGES[lang]
    out = render_report(SEED, tmp_path / "report", overrides=[f"study.lang={lang}"])
    page = probe(out / "report.html", tmp_path)
    assert len(page["imgs"]) == 3
    for img in page["imgs"]:
        assert img["complete"] and img["inline"], img["alt"]
        assert img["width"] > 500 and img["height"] > 300, img["alt"]
    assert page["scripts"] == 1  # only the probe
    assert "{{" not in page["text"] and "{%" not in page["text"]
    assert headline in page["text"]
    assert page["title"] == title
    # A page that reads like a post: the first screen (1280 x 800) holds the headline and the
    # verdict table; the per-job flags wait, folded, in the appendix at the end.
    assert page["headline_bottom"] is not None and page["headline_bottom"] < 800
    assert page["first_table_bottom"] is not None and page["first_table_bottom"] < 800
    assert page["details"] == [{"open": False, "summary": appendix, "shown": False}]

    shot = screenshot(out / "report.html", tmp_path)
    pixels = mpimg.imread(shot)
    assert pixels.shape[1] == 1280 and pixels.shape[0] >= 1000
    # Not a blank page: text and figures put dark pixels on the white background.
    assert (pixels[..., :3].mean(axis=2) < 0.5).mean() > 0.005


def test_markup_in_results_stays_inert_in_the_browser(tmp_path: Path) -> None:
    src = tmp_path / "sweep"
    evil = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='img'\">"
    for i, slots in enumerate((1, 2)):
        d = result("vulkan", slots, s=100.0 / slots, decode=80.0 * slots, model=evil)
        d["provenance"]["hardware"]["description"] = "[click](javascript:alert(1))"
        atomic_write_json(src / str(i) / "result.json", d)
    out = render_report(src, tmp_path / "report")
    page = probe(out / "report.html", tmp_path)
    assert page["scripts"] == 1 and page["title"] not in ("pwned", "img")
    assert "<script>document.title='pwned'</script>" in page["text"]  # shown as text
    assert all(not (h or "").startswith("javascript:") for h in page["links"])
    assert all(img["inline"] for img in page["imgs"])  # the injected <img> is not an element
    assert "{{" not in page["text"] and "{%" not in page["text"]

"""Render a run's or sweep's report folder from its result files alone.

Data -> view model (analysis, formatted numbers) -> Jinja templates -> report.md, then
markdown-it-py turns the same Markdown into a standalone report.html. Idempotent: rendering
again from the same results gives the same files.
"""

from __future__ import annotations

import base64
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import jinja2
from markdown_it import MarkdownIt

from benchkit.measure import DEFINITIONS
from benchkit.paths import repo_root
from benchkit.report.figures import slots_figure
from benchkit.report.fmt import FILTERS
from benchkit.report.table import tidy
from benchkit.results import JobResult, atomic_write_text, find_results


def template_env(html: bool) -> jinja2.Environment:
    """Jinja environment: undefined names are errors; HTML templates escape everything."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(repo_root() / "templates")),
        undefined=jinja2.StrictUndefined,
        autoescape=html,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


def markdown_to_html(md: str) -> str:
    # html=False: any markup that came from results is shown as text, never run.
    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(md))


def _server_flags(r: JobResult) -> str:
    argv = (r.provenance.get("server") or {}).get("argv") or []
    if not argv:
        return ""
    return " ".join([Path(argv[0]).name, *argv[1:]])


def view_model(results: list[JobResult], source: Path) -> dict[str, Any]:
    df = tidy(results)
    rows = df.to_dict("records")
    counts = df["status"].value_counts().to_dict()
    not_run = [
        {"job": r.job_dir.name, "factors": r.factors, "status": r.status, "reason": r.reason}
        for r in results
        if r.status != "complete"
    ]
    first = results[0]
    prov = first.provenance
    builds = {}
    for r in results:
        b = r.provenance.get("server_build")
        if b:
            builds[r.factors.get("backend", "?")] = b
    return {
        "title": "benchkit report",
        "source": str(source),
        "generated_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "n_jobs": len(results),
        "counts": counts,
        "rows": rows,
        "not_run": not_run,
        "model": prov.get("model") or {},
        "hardware": prov.get("hardware") or {},
        "workload": next(
            (r.provenance["workload"] for r in results if "workload" in r.provenance), None
        ),
        "sampling": prov.get("sampling") or {},
        "builds": builds,
        "flags": [
            {"job": r.job_dir.name, "flags": _server_flags(r)} for r in results if _server_flags(r)
        ],
        "definitions": DEFINITIONS,
        "figures": [],
        "_df": df,
    }


def render_report(source: Path, out_dir: Path) -> Path:
    """Render `source` (a run or sweep folder) into `out_dir`; returns out_dir."""
    results = find_results(source)
    vm = view_model(results, source)
    df = vm.pop("_df")
    # Build in a temp folder beside the target, then swap: never a half-written report.
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".report-"))
    try:
        fig = slots_figure(df, tmp)
        if fig:
            vm["figures"].append(
                {"file": fig, "title": "Seconds per unit and decode throughput against slots"}
            )
        md = template_env(html=False).get_template("report.md.j2").render(**vm)
        atomic_write_text(tmp / "report.md", md)
        body = markdown_to_html(_inline_images(md, tmp))
        html = (
            template_env(html=True)
            .get_template("report.html.j2")
            .render(title=vm["title"], body=body)
        )
        atomic_write_text(tmp / "report.html", html)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def _inline_images(md: str, folder: Path) -> str:
    """Embed figures as data URIs so report.html stands alone (one file to publish)."""
    for png in folder.glob("*.png"):
        data = base64.b64encode(png.read_bytes()).decode()
        md = md.replace(f"]({png.name})", f"](data:image/png;base64,{data})")
    return md

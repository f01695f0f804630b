"""The report's import layers, read from its source with ast: no import deferred into a
function to hold a circle open, no circle among module-level imports, and a verdict kind
package that reads only the engine, the verdicts' common helpers, numbers and the language
layer, never the write-up."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import benchkit

REPORT = Path(benchkit.__file__).parent / "report"
KINDS = REPORT / "verdicts" / "kinds"
VERDICTS = "benchkit.report.verdicts"  # `from benchkit.report.verdicts import figures`

# Function-level imports of benchkit modules that stay, each with its reason (none hold a
# circle open).
DEFERRED_OK = {
    # benchkit.paths finds the templates folder; read only when a template needs it, not a
    # circle.
    ("benchkit/report/lang/catalogs.py", "benchkit.paths"): "templates folder read on demand",
}
# What the write-up is: a kind package imports none of these.
WRITE_UP = {
    "sections",
    "headline",
    "closing",
    "page",
    "render",
    "use_this",
    "ledger",
    "view",
    "folder",
    "conditions",
    "analyse",
}
# What a kind package may import from benchkit.
KIND_MAY = (
    "benchkit.compare",
    "benchkit.schema",
    "benchkit.report.verdicts.common",
    "benchkit.report.verdicts.kind",
    "benchkit.report.verdicts.kinds",
    "benchkit.report.verdicts.engine_of",
    "benchkit.report.verdicts.exercise",
    "benchkit.report.analysis.numbers",
    "benchkit.report.analysis.load_numbers",
    "benchkit.report.analysis.sweep",
    "benchkit.report.verdicts.light",
    "benchkit.report.lang",
    "benchkit.report.lang.i18n",
    "benchkit.report.lang.fmt",
    "benchkit.report.lang.words",
    "benchkit.report.verdicts.cold_words",
    # What figures share (fonts, words, legend, saving); each kind draws its own.
    "benchkit.report.verdicts.figures",
    "benchkit.report.verdicts.sentences",
    "benchkit.report.verdicts.factor_words",
    "benchkit.report.verdicts.compare_words",
    "benchkit.report.verdicts.reasons",
)


def _rel(p: Path) -> str:
    return p.relative_to(REPORT.parent.parent).as_posix()


def _module(p: Path) -> str:
    parts = list(p.relative_to(REPORT.parent.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    return [f"{base}.{a.name}" for a in node.names] + [base]


def _top_imports(p: Path) -> list[ast.Import | ast.ImportFrom]:
    tree = ast.parse(p.read_text())
    return [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]


def test_no_function_level_imports_of_benchkit() -> None:
    found = []
    for p in sorted(REPORT.rglob("*.py")):
        tree = ast.parse(p.read_text())
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
                names = [n for n in _imported(node) if n.startswith("benchkit")]
                if not names:
                    continue
                guarded = any(
                    isinstance(s, ast.If) and node in ast.walk(s)
                    for s in tree.body  # `if TYPE_CHECKING:` at module level
                )
                key = (_rel(p), names[-1])
                if not guarded and key not in DEFERRED_OK:
                    found.append(f"{key[0]}:{node.lineno} {key[1]}")
    assert not found, found


def test_no_circle_among_module_imports() -> None:
    mods = {_module(p): p for p in REPORT.rglob("*.py")}
    graph = {
        m: {n for node in _top_imports(p) for n in _imported(node) if n in mods and n != m}
        for m, p in mods.items()
    }
    seen: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        seen[m] = 1
        for n in sorted(graph[m]):
            if seen.get(n) == 1:
                return [*path, m, n]
            if n not in seen and (c := visit(n, [*path, m])):
                return c
        seen[m] = 2
        return None

    for m in sorted(mods):
        if m not in seen:
            assert (c := visit(m, [])) is None, " -> ".join(c or [])


def test_kind_packages_import_no_write_up() -> None:
    bad = []
    for p in sorted(KINDS.rglob("*.py")):
        for node in _top_imports(p):
            for name in _imported(node):
                if not name.startswith("benchkit.") or name in ("benchkit.report", VERDICTS):
                    continue
                leaf = name.removeprefix("benchkit.report.").split(".")[0]
                if leaf in WRITE_UP or not name.startswith(KIND_MAY):
                    bad.append(f"{_rel(p)}: {name}")
    assert not bad, bad


def test_every_kind_package_is_registered() -> None:
    from benchkit.report.verdicts import registry

    packages = {p.name for p in KINDS.iterdir() if (p / "__init__.py").exists()}
    registered = {
        mod.__name__.rsplit(".", 1)[-1]
        for mod in vars(registry).values()
        if isinstance(mod, ModuleType)
        and mod.__name__.startswith("benchkit.report.verdicts.kinds.")
        and any(k in vars(mod).values() for k in registry.KINDS)
    }
    assert packages == registered

"""The report's import layers, read from its source with ast.

benchkit/report/ is grouped by role into layers, lowest first: the language layer (`lang`),
the analysis (`analysis`), the verdicts (`verdicts`, a package per kind under `kinds/`), the
corrections ledger (`ledger`) and the write-up (`writeup`). Every module sits in exactly one
layer's package and imports only its own layer or a lower one: the write-up may import the
analysis, never the reverse. Besides: no import deferred into a function to hold a circle open,
no circle among module-level imports, and a verdict kind package that reads only the engine
(benchkit.compare, the sweep and its numbers), the verdicts' common helpers and the language
layer, never the ledger or the write-up."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import benchkit

PACKAGE = Path(benchkit.__file__).parent
REPORT = PACKAGE / "report"
KINDS = REPORT / "verdicts" / "kinds"

# The layers, lowest first: a module imports its own layer's modules and lower layers' only.
LAYERS = (
    "lang",  # the catalogs, the languages' grammar, formatters, word tables, phrases
    "analysis",  # results read: the sweep, its numbers, evidence, calls, stalls, caveats
    "verdicts",  # what the kinds share, the kinds, and the runs of every verdict
    "ledger",  # the corrections ledger: what each publication said, and what changed
    "writeup",  # the view, its sections, the pages, render
)
# Outside the layers: the package itself, and `python -m benchkit.report`, which renders.
TOP = {"benchkit.report", "benchkit.report.__main__"}

# Function-level imports of benchkit modules that stay, each with its reason (none hold a
# circle open).
DEFERRED_OK = {
    # benchkit.paths finds the templates folder; read only when a template needs it, not a
    # circle.
    ("benchkit/report/lang/catalogs.py", "benchkit.paths"): "templates folder read on demand",
}
# What a kind package may import from benchkit: the engine, the verdicts' common helpers and
# the language layer.
KIND_MAY = (
    # The comparison engine, and the sweep and numbers it is asked through.
    "benchkit.compare",
    "benchkit.results.schema",
    # The drafting settings a job records (what a drafter's comparison pairs on).
    "benchkit.config.drafting",
    "benchkit.report.analysis.sweep",
    "benchkit.report.analysis.numbers",
    "benchkit.report.analysis.load_numbers",
    # The verdicts' common helpers (a kind reads another kind's verdict: projection reads the
    # drafting and factor verdicts it projects from).
    "benchkit.report.verdicts.common",
    "benchkit.report.verdicts.kind",
    "benchkit.report.verdicts.kinds",
    "benchkit.report.verdicts.engine_of",
    "benchkit.report.verdicts.exercise",
    "benchkit.report.verdicts.light",
    # The words the kinds say their verdicts with, and what figures share (fonts, words,
    # legend, saving); each kind draws its own.
    "benchkit.report.verdicts.sentences",
    "benchkit.report.verdicts.reasons",
    "benchkit.report.verdicts.factor_words",
    "benchkit.report.verdicts.cold_words",
    "benchkit.report.verdicts.compare_words",
    "benchkit.report.verdicts.figures",
    # Whether the words are a report's or a post's (a post says a proviso once, in the list
    # under its answer: the drafting clause leaves its cost proviso to it).
    "benchkit.report.verdicts.voice",
    # The language layer.
    "benchkit.report.lang",
)


def _rel(p: Path) -> str:
    return p.relative_to(PACKAGE.parent).as_posix()


def _module(p: Path) -> str:
    parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p) for p in PACKAGE.rglob("*.py")}


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import reads: `from a.b import c` reads a.b.c where c is a module, else
    a.b."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    return sorted(
        {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    )


def _top_imports(p: Path) -> list[ast.Import | ast.ImportFrom]:
    tree = ast.parse(p.read_text())
    return [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]


def _all_imports(p: Path) -> list[ast.Import | ast.ImportFrom]:
    """Every import, `if TYPE_CHECKING:` ones and function-level ones included."""
    tree = ast.parse(p.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[2])


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(f"{p}.") for p in prefixes)


def test_every_module_sits_in_exactly_one_layer() -> None:
    outside = [
        _rel(p)
        for p in sorted(REPORT.rglob("*.py"))
        if _module(p) not in TOP and _module(p).split(".")[2] not in LAYERS
    ]
    assert not outside, outside
    # Each layer a package, each folder under it one too (setuptools finds only packages).
    folders = {p.parent for p in REPORT.rglob("*.py")}
    assert not [_rel(f) for f in sorted(folders) if not (f / "__init__.py").exists()]
    assert {f.name for f in REPORT.iterdir() if (f / "__init__.py").exists()} == set(LAYERS)


def test_modules_import_only_their_layer_or_lower() -> None:
    bad = []
    for p in sorted(REPORT.rglob("*.py")):
        m = _module(p)
        if m in TOP:
            continue
        for node in _all_imports(p):
            for name in _imported(node):
                if not name.startswith("benchkit.report.") or name in TOP:
                    continue
                if _layer(name) > _layer(m):
                    bad.append(f"{_rel(p)}:{node.lineno} ({LAYERS[_layer(m)]}) imports {name}")
    assert not bad, bad


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


def test_kind_packages_import_the_engine_common_helpers_and_language_only() -> None:
    bad = []
    for p in sorted(KINDS.rglob("*.py")):
        for node in _all_imports(p):
            for name in _imported(node):
                if name.startswith("benchkit.") and not _under(name, KIND_MAY):
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

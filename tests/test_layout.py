"""The package layout states the design: no import cycles, and a runtime that needs torch only.

Every ``import`` of ``inliner/**.py`` counts, lazy ones inside functions included: a cycle
hidden behind a function-level import is still two modules that cannot be read apart.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import inliner
from tests.support.paths import DEVELOPMENT

PACKAGE = Path(inliner.__file__).resolve().parent
ROOT = PACKAGE.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The inliner modules ``name`` imports (``from p import m`` of a submodule counts as ``p.m``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {module for module in found if module in known and module != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert "inliner.engine.rewrite" in graph["inliner.engine"]  # a lazy import counts
    assert "inliner.hook._cache" in graph["inliner.hook"]  # `from inliner.hook import _cache`
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_runtime_imports_no_engine_module():
    graph = import_graph()
    runtime = [name for name in graph if name == "inliner.runtime" or name.startswith("inliner.runtime.")]
    for name in runtime:
        outside = {m for m in graph[name] if not m.startswith("inliner.runtime")}
        assert not outside, f"{name} imports {sorted(outside)}"


def test_importing_the_runtime_loads_neither_libcst_nor_black():
    code = (
        "import sys, inliner.runtime; "
        "print(sorted(m for m in ('libcst', 'black', 'inliner.engine') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_tests_reach_their_helpers_as_a_package():
    """``tests`` is a package: helpers are imported from ``tests.support``, never put on ``sys.path``
    (the harness alone adds a golden case's own directory, to load that case as a module)."""
    tests = PACKAGE.parent / "tests"
    inserts = sorted(
        path.relative_to(tests).as_posix()
        for path in tests.rglob("*.py")
        if re.search(r"^\s*sys\.path\.(insert|append)\(", path.read_text(), re.M) and path.name != "harness.py"
    )
    assert inserts == []
    assert (tests / "__init__.py").exists() and (tests / "support" / "__init__.py").exists()
    helpers = {path.stem for path in (tests / "support").glob("*.py")} - {"__init__"}
    bare = re.compile(r"^\s*(?:from|import) (" + "|".join(sorted(helpers)) + r")\b", re.M)
    imported_bare = sorted(
        p.relative_to(tests.parent).as_posix()
        for p in [*tests.rglob("*.py"), *(tests.parent / "scripts").glob("*.py")]
        if bare.search(p.read_text())
    )
    assert imported_bare == [], "import them as tests.support.<module>"


def test_the_layout_table_names_every_module():
    """A module is in docs/development.md's table by its path, or by its file name in the row of its folder."""
    page = DEVELOPMENT.read_text()
    table = page.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    missing = []
    for path in sorted((ROOT / "inliner").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        folder = rel.rsplit("/", 1)[0] + "/"
        by_folder = [row for row in rows if f"`{folder}" in row.split(" | ")[0] or f"`{folder}`" in row]
        if f"`{rel}`" in table or any(f"`{path.name}`" in row or path.name in row for row in by_folder):
            continue
        if path.name in ("__init__.py", "__main__.py") and by_folder:
            continue
        missing.append(rel)
    assert not missing, f"add these to the layout table in docs/development.md: {missing}"

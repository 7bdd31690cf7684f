"""The layout of bench/: its modules import each other one way only (no import cycle).

The import graph is read from the source with :mod:`ast`, so it sees every import: at
module level, inside functions and under ``if TYPE_CHECKING:``, absolute or relative.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def module_names(package: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of ``package`` (a folder), subpackages too."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, modules: Set[str]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (its file: ``path``) imports.

    Relative imports are resolved; ``from X import a`` imports the module ``X.a`` if there
    is one, else ``X``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return (found & modules) - {name}


def import_graph(package: Path) -> dict[str, set[str]]:
    """``{module: the modules of the package it imports}`` for every module of ``package``."""
    modules = module_names(package)
    return {name: imports_of(name, path, modules.keys()) for name, path in modules.items()}


def find_cycle(graph: Mapping[str, Set[str]]) -> list[str] | None:
    """Return an import cycle of ``graph`` (``[a, b, a]``: a imports b, b imports a), or None."""
    finished: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in finished:
            return None
        for imported in sorted(graph[module]):
            cycle = visit(imported, [*path, module])
            if cycle is not None:
                return cycle
        finished.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle is not None:
            return cycle
    return None


def test_bench_has_no_import_cycle() -> None:
    graph = import_graph(BENCH)
    assert "bench._report" in graph["bench.harness"]  # the graph sees bench's imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in bench/: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_relative_and_function_level_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "def f():\n    from .sub.c import g\n",
        "sub/__init__.py": "",
        "sub/c.py": "import os\nfrom .. import a as _a\nfrom . import d\n",
        "sub/d.py": "from pkg.b import f\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph(package)
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.sub.c"},
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.a", "pkg.sub.d"},
        "pkg.sub.d": {"pkg.b"},
    }
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    (package / "b.py").write_text("")
    assert find_cycle(import_graph(package)) is None

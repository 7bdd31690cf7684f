"""The source layout keeps the rules docs/design.md states.

Layers and the order of the nodes subpackages are checked by import-linter (``make test``
runs ``lint-imports``); what it cannot say is checked here: module sizes, private names
crossing subpackage borders, every subpackage having a place in the contracts and a
docstring saying what it holds.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "hyperslab"
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    """Dotted name -> path of every module of the hyperslab package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imported_names(name: str, path: Path) -> list[tuple[str, str, int]]:
    """(module imported from, name imported, line) for every ``from X import Y``."""
    package = _package_of(name, path)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        found.extend((source, alias.name, node.lineno) for alias in node.names)
    return found


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _private_owner(dotted: str, modules: dict[str, Path]) -> str | None:
    """The package that owns the first private part of ``dotted`` (None: nothing private)."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            owner = ".".join(parts[:i])
            # a private name inside module M belongs to M's package
            return owner if owner not in modules or modules[owner].name == "__init__.py" \
                else owner.rpartition(".")[0]
    return None


def test_no_module_is_over_800_lines() -> None:
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_private_names_stay_in_their_subpackage() -> None:
    modules = _modules()
    crossings = []
    for name, path in modules.items():
        package = _package_of(name, path)
        for source, imported, line in _imported_names(name, path):
            if not source.startswith("hyperslab"):
                continue
            owner = _private_owner(f"{source}.{imported}", modules)
            if owner is not None and not (package == owner
                                          or package.startswith(owner + ".")):
                crossings.append(f"{path.relative_to(SRC)}:{line}: {source}.{imported}")
    assert crossings == []


@pytest.mark.parametrize("container", ["hyperslab.nodes", "hyperslab.compute"])
def test_every_subpackage_has_a_place_in_the_layer_contracts(container: str) -> None:
    config = tomllib.loads((SRC.parent / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    layered: set[str] = set()
    for contract in contracts:
        if contract.get("type") == "layers" and container in contract.get("containers", []):
            for layer in contract["layers"]:
                layered.update(part.strip() for part in layer.split("|"))
    folder = SRC.joinpath(*container.split("."))
    children = {p.parent.name if p.name == "__init__.py" else p.stem
                for p in folder.glob("*/__init__.py")} | {
                    p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    assert layered, f"no layers contract has {container} as its container"
    assert children - layered == set()


def test_every_package_says_what_it_holds() -> None:
    silent = [name for name, path in _modules().items()
              if path.name == "__init__.py"
              and len(ast.get_docstring(ast.parse(path.read_text())) or "") < 100]
    assert silent == []


def test_the_private_name_check_sees_a_crossing() -> None:
    """The checker itself: a private name of another subpackage is found, one of the
    importer's own subpackage is not."""
    modules = _modules()
    assert _private_owner("hyperslab.storage._attrtypes.x", modules) == "hyperslab.storage"
    assert _private_owner("hyperslab.nodes.atoms.atom._ComplexErrorAtom", modules) \
        == "hyperslab.nodes.atoms"
    assert _private_owner("hyperslab.nodes.atoms.atom.Atom", modules) is None

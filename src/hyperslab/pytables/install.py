"""``install_as_tables()``: make ``import tables`` give hyperslab, in PyTables' module layout.

After :func:`install_as_tables`, ``import tables`` returns :mod:`hyperslab.pytables` and
``import tables.X`` returns ``hyperslab.pytables.X`` (the same module object under both
names), so code and libraries written for PyTables (pandas' ``HDFStore``, for one) run on
hyperslab unchanged.  This is the convention of PyMySQL's ``install_as_MySQLdb``.

PyTables' own test packages (``tables.tests`` and ``tables.nodes.tests``) are the one
exception: they are data and code of the PyTables distribution, not API, so where PyTables
is installed they are loaded from its files (unchanged) and run against hyperslab.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ALIAS = "tables"
"""The name hyperslab is installed under."""

TARGET = "hyperslab.pytables"
"""The package that holds PyTables' module layout over hyperslab."""

REDIRECTS = {"tables.parameters": "hyperslab.parameters"}
"""PyTables modules that are hyperslab modules themselves (settings users change in place)."""

PYTABLES_TEST_PACKAGES = ("tables.tests", "tables.nodes.tests")
"""Packages that stay PyTables' own files: its test suite and its data files."""


class _AliasLoader(importlib.abc.Loader):
    """Loads ``tables.X`` as the already importable ``hyperslab.pytables.X``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target module ran when it was imported."""


class TablesFinder(importlib.abc.MetaPathFinder):
    """Finds ``tables`` and ``tables.*`` in hyperslab's PyTables layout.

    ``tables.tests`` and ``tables.nodes.tests`` are found in the installed PyTables
    distribution (``pytables_root``), or not at all when it is not installed.
    """

    def __init__(self, pytables_root: Path | None) -> None:
        self.pytables_root = pytables_root

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        for package in PYTABLES_TEST_PACKAGES:
            if fullname == package:
                return self._pytables_package(fullname)
            if fullname.startswith(package + "."):
                return None  # found by the normal path finder in the package's __path__
        name = REDIRECTS.get(fullname, TARGET + fullname[len(ALIAS):])
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            return None
        if spec is None:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(name),
            is_package=spec.submodule_search_locations is not None)

    def _pytables_package(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        if self.pytables_root is None:
            return None
        folder = self.pytables_root.joinpath(*fullname.split(".")[1:])
        init = folder / "__init__.py"
        if not init.is_file():
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[str(folder)])


def pytables_root() -> Path | None:
    """The folder of the installed PyTables package, found without importing it."""
    current = sys.modules.get(ALIAS)
    if current is not None and getattr(current, "__name__", "") == TARGET:
        finder = next((f for f in sys.meta_path if isinstance(f, TablesFinder)), None)
        return finder.pytables_root if finder is not None else None
    try:
        spec = importlib.machinery.PathFinder.find_spec(ALIAS)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def install_as_tables() -> None:
    """Make ``import tables`` (and ``tables.*``) give hyperslab from now on.

    Call it before anything imports PyTables.  Code written for PyTables then runs on
    hyperslab unchanged, libraries included::

        import hyperslab
        hyperslab.install_as_tables()
        import pandas as pd          # pandas' HDFStore now uses hyperslab
        pd.DataFrame({"a": [1, 2]}).to_hdf("data.h5", key="df", format="table")

    Calling it again does nothing.

    Raises
    ------
    ImportError
        If PyTables itself was imported already in this process: two libraries cannot
        both be ``tables``.
    """
    current = sys.modules.get(ALIAS)
    if current is not None:
        if getattr(current, "__name__", "") == TARGET:
            return
        raise ImportError(
            "install_as_tables(): PyTables was imported already in this process "
            f"({getattr(current, '__file__', current)!r}); call it before anything imports "
            "tables")
    root = pytables_root()
    sys.meta_path.insert(0, TablesFinder(root))
    importlib.import_module(ALIAS)

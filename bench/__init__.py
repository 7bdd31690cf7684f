"""Benchmarks of hyperslab against its rivals (PyTables, h5py, ...).

Each benchmark is a module ``bench/<name>.py`` with a ``main(argv) -> int`` function, run as
``python -m bench <name> [options]`` or ``hyperslab bench <name> [options]``.  The shared
machinery (fresh-process runs, statistics, JSON / markdown / PNG reports) is in
:mod:`bench.harness`.  Support modules are ``harness.py`` and any module whose name starts
with an underscore; every other module in this folder is a benchmark.
"""

from __future__ import annotations

from pathlib import Path

SUPPORT_MODULES = frozenset({"harness"})
"""Modules of this package that are not benchmarks (besides ``_*`` modules)."""


def benchmark_names(folder: Path | None = None) -> list[str]:
    """Return the names of the benchmarks found in ``folder`` (this package by default).

    Parameters
    ----------
    folder : Path, optional
        A ``bench/`` folder; defaults to the folder of this package.

    Returns
    -------
    list of str
        Sorted module names, without support modules.
    """
    folder = Path(__file__).resolve().parent if folder is None else folder
    return sorted(
        path.stem
        for path in folder.glob("*.py")
        if not path.stem.startswith("_") and path.stem not in SUPPORT_MODULES
    )

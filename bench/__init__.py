"""Benchmarks of hyperslab against its rivals (PyTables, h5py, ...).

Each benchmark is a module ``bench/<name>.py`` with a ``main(argv) -> int`` function, run as
``python -m bench <name> [options]`` or ``hyperslab bench <name> [options]``.  The shared
machinery (fresh-process runs, statistics, JSON / markdown / PNG reports) is in
:mod:`bench.harness`.  Support modules are ``harness.py`` and any module whose name starts
with an underscore; every other module in this folder is a benchmark.

A benchmark's usage line names the command that ran it: ``python -m bench NAME``, or
``hyperslab bench NAME`` when ``hyperslab bench`` runs it (it sets :data:`PROG_ENV` in the
environment of the interpreter it starts; see :func:`prog_name`).
"""

from __future__ import annotations

import os
from pathlib import Path

SUPPORT_MODULES = frozenset({"harness"})
"""Modules of this package that are not benchmarks (besides ``_*`` modules)."""

PROG_ENV = "HYPERSLAB_BENCH_PROG"
"""Environment variable naming the command that runs the benchmarks (``hyperslab bench``)."""

DEFAULT_PROG = "python -m bench"
"""The command that runs the benchmarks when :data:`PROG_ENV` is not set."""


def prog_name(name: str = "") -> str:
    """Return the command that runs benchmark ``name``, for usage lines and errors.

    Parameters
    ----------
    name : str, optional
        A benchmark name; empty for the command that runs them all.

    Returns
    -------
    str
        ``"python -m bench NAME"``, or ``"hyperslab bench NAME"`` when run by
        ``hyperslab bench`` (the environment variable :data:`PROG_ENV`).

    Examples
    --------
    >>> import os
    >>> prog_name("nodes") if PROG_ENV not in os.environ else "python -m bench nodes"
    'python -m bench nodes'
    """
    prog = os.environ.get(PROG_ENV) or DEFAULT_PROG
    return f"{prog} {name}" if name else prog


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

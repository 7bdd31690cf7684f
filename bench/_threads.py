"""Thread counts of the rivals: each library's defaults, or one count for all.

Every benchmark takes ``--blosc-nthreads N`` (see :func:`bench.harness.add_common_arguments`)
and runs inside :func:`thread_setting`, which gives every library ``N`` threads:

* hyperslab: ``hyperslab.parameters.MAX_THREADS`` (its pool, which also sets how many
  threads decode the blocks of one chunk);
* PyTables: ``tables.parameters.MAX_BLOSC_THREADS`` (applied by PyTables whenever a file
  opens) and ``tables.set_blosc_max_threads``;
* h5py + hdf5plugin (and b2h5py): the ``BLOSC_NTHREADS`` environment variable, which
  C-Blosc2 reads in every context the HDF5 filter creates;
* python-blosc2: ``blosc2.set_nthreads``;
* numexpr (used by hyperslab's and PyTables' queries and by ``Expr``):
  ``numexpr.set_num_threads``.

In fresh-process runs, ``BLOSC_NTHREADS`` and ``HYPERSLAB_MAX_THREADS`` (read when hyperslab
is imported) carry it from the start, and ``bench._child`` applies :data:`ENV` to the other
libraries when the timed block starts (after the case's set-up imported them).
:func:`thread_report` says what each rival used, for every report.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

ENV = "HYPERSLAB_BENCH_NTHREADS"
"""Environment variable that carries ``--blosc-nthreads`` to child processes."""

_ENV_VARS = ("BLOSC_NTHREADS", "HYPERSLAB_MAX_THREADS", ENV)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _library_threads() -> dict[str, Any]:
    """Each importable library's thread setting now."""
    import blosc2
    import numexpr

    from hyperslab import parameters

    found: dict[str, Any] = {"hyperslab": parameters.MAX_THREADS, "blosc2": blosc2.nthreads,
                             "numexpr": numexpr.get_num_threads()}
    tables = _module("tables")
    if tables is not None and hasattr(tables, "set_blosc_max_threads"):
        found["tables"] = tables.parameters.MAX_BLOSC_THREADS
    return found


def _set_library_threads(settings: dict[str, Any]) -> None:
    """Give each library already imported its entry of ``settings`` (as
    :func:`_library_threads` gives)."""
    parameters = sys.modules.get("hyperslab.parameters")
    if parameters is not None:
        parameters.MAX_THREADS = settings["hyperslab"]
    if "blosc2" in sys.modules:
        sys.modules["blosc2"].set_nthreads(settings["blosc2"])
    if "numexpr" in sys.modules:
        sys.modules["numexpr"].set_num_threads(settings["numexpr"])
    tables = sys.modules.get("tables")
    if "tables" in settings and tables is not None and hasattr(tables, "set_blosc_max_threads"):
        tables.parameters.MAX_BLOSC_THREADS = settings["tables"]
        tables.set_blosc_max_threads(settings["tables"] or os.cpu_count() or 1)


def _all(nthreads: int) -> dict[str, Any]:
    return {"hyperslab": nthreads, "blosc2": nthreads, "numexpr": nthreads,
            "tables": nthreads}


@contextlib.contextmanager
def thread_setting(nthreads: int | None) -> Iterator[None]:
    """Run the block with ``nthreads`` threads in every library (None: their defaults).

    Restores the previous settings and environment afterwards.

    Raises
    ------
    ValueError
        If ``nthreads`` is not None nor at least 1.
    """
    if nthreads is None:
        yield
        return
    if nthreads < 1:
        raise ValueError(f"--blosc-nthreads must be at least 1, not {nthreads}")
    saved_env = {name: os.environ.get(name) for name in _ENV_VARS}
    saved = _library_threads()
    for name in _ENV_VARS:
        os.environ[name] = str(nthreads)
    _set_library_threads(_all(nthreads))
    try:
        yield
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _set_library_threads(saved)


def apply_from_env() -> None:
    """In a child process, when the timed block starts: apply the parent's
    ``--blosc-nthreads``, if any (:data:`ENV`), to the libraries imported."""
    value = os.environ.get(ENV)
    if value:
        _set_library_threads(_all(int(value)))


def hdf5plugin_blosc2_version() -> str:
    """The C-Blosc2 version built into hdf5plugin's Blosc2 filter ("unknown" if not found).

    hdf5plugin does not report it; the filter's shared library holds it as a string next to
    C-Blosc2's release date.
    """
    hdf5plugin = _module("hdf5plugin")
    if hdf5plugin is None:
        return "not installed"
    try:
        path = hdf5plugin.get_config().registered_filters["blosc2"]
        with open(path, "rb") as library:
            found = re.search(rb"\x00(\d+\.\d+\.\d+[\w.]*)\x00\$Date::", library.read())
    except (OSError, KeyError, AttributeError):
        return "unknown"
    return found.group(1).decode() if found else "unknown"


def cblosc2_builds() -> dict[str, str]:
    """The C-Blosc2 library each rival compresses with: python-blosc2's (which hyperslab
    uses), PyTables' bundled one and hdf5plugin's filter."""
    builds: dict[str, str] = {}
    blosc2 = _module("blosc2")
    if blosc2 is not None:
        builds["C-Blosc2 (hyperslab, python-blosc2)"] = str(blosc2.blosclib_version).split()[0]
    tables = _module("tables")
    if tables is not None and hasattr(tables, "which_lib_version"):
        found = tables.which_lib_version("blosc2")
        builds["C-Blosc2 (PyTables)"] = str(found[1]) if found else "not built in"
    builds["C-Blosc2 (hdf5plugin filter)"] = hdf5plugin_blosc2_version()
    return builds


def thread_report() -> dict[str, str]:
    """The threads each rival uses now (each library's default, or ``--blosc-nthreads``)."""
    import blosc2
    import numexpr

    from hyperslab import parameters
    from hyperslab.chunked.workers import default_workers

    report = {
        "hyperslab": str(default_workers(parameters.MAX_THREADS)),
        "python-blosc2": str(blosc2.nthreads),
        "h5py + hdf5plugin filter": os.environ.get("BLOSC_NTHREADS", "1"),
        "numexpr": str(numexpr.get_num_threads()),
    }
    tables = _module("tables")
    if tables is not None and hasattr(tables, "parameters"):
        report["PyTables"] = str(tables.parameters.MAX_BLOSC_THREADS or os.cpu_count())
    report["setting"] = os.environ.get(ENV, "library defaults")
    return report

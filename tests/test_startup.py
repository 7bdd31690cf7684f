"""``import hyperslab`` stays light: h5py, blosc2, numexpr and dask load on first use.

PyTables' ``import tables`` loads NumPy, numexpr and its extensions; hyperslab's start-up
must cost no more, so the modules that need h5py (files and nodes), blosc2 (Blosc2 chunks),
numexpr (queries, ``Expr``) or dask are imported by ``hyperslab.__getattr__`` on first use.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hyperslab

LAZY_LIBRARIES = ("blosc2", "numexpr", "h5py", "hdf5plugin", "dask")


def _loaded_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return the LAZY_LIBRARIES it loaded."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    modules = json.loads(out.splitlines()[-1])
    return [name for name in LAZY_LIBRARIES if name in modules]


def test_import_loads_no_heavy_library() -> None:
    assert _loaded_after("import hyperslab") == []


def test_atoms_and_filters_need_no_heavy_library() -> None:
    code = (
        "import hyperslab\n"
        "hyperslab.Float64Atom(); hyperslab.Filters(5, 'blosc2:zstd'); hyperslab.Int32Col()"
    )
    assert _loaded_after(code) == []


def test_first_use_loads_h5py() -> None:
    assert "h5py" in _loaded_after("import hyperslab\nhyperslab.open_file")


def test_every_public_name_imports() -> None:
    code = "from hyperslab import *\nimport hyperslab\nprint(len(hyperslab.__all__))"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    for name in hyperslab.__all__:
        assert getattr(hyperslab, name) is not None, name
    assert set(hyperslab.__all__) <= set(dir(hyperslab))


def test_lazy_names_are_the_submodules_objects() -> None:
    from hyperslab.nodes.files.file import File, open_file
    from hyperslab.nodes.tables.table import Table

    assert hyperslab.open_file is open_file
    assert hyperslab.File is File
    assert hyperslab.Table is Table


def test_unknown_name_is_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        hyperslab.no_such_name  # noqa: B018

"""Small points of PyTables' API that its own test suite checks (index versions, column
attributes, error details, argument checks, warnings), each against PyTables as the
oracle."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import tables

import hyperslab

PT_TESTS = Path(tables.__file__).parent / "tests"


# ---------------------------------------------------------------------- index versions
@pytest.mark.parametrize("name", ["indexes_2_0.h5", "indexes_2_1.h5"])
def test_index_version_of_pytables_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(PT_TESTS / name, path)
    with tables.open_file(path) as f:
        expected = f.root.table1.cols.var1.index._v_version
    with hyperslab.open_file(path) as f:
        assert f.root.table1.cols.var1.index._v_version == expected
    assert expected in ("2.0", "2.1")


def test_index_version_of_new_index(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w") as f:
        t = f.create_table("/", "t", np.dtype([("x", "i4")]))
        t.append([(i,) for i in range(10)])
        t.cols.x.create_index()
        assert t.cols.x.index._v_version == "2.1"
    with tables.open_file(h5path) as f:
        assert f.root.t.cols.x.index._v_version == "2.1"

"""Details of tables and arrays that PyTables' own tests exercise, with PyTables and NumPy
as oracles: multidimensional column defaults given with extra leading dimensions, the
values a Row gives before and after iteration, assignments of values with extra leading
dimensions of length 1, flavors, and PyTables' private keyword arguments.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import tables

import hyperslab

LIBS = {"hyperslab": hyperslab, "tables": tables}
both = pytest.mark.parametrize("lib", list(LIBS.values()), ids=list(LIBS))


def _md_description(lib: ModuleType) -> dict[str, Any]:
    return {
        "var1_": lib.IntCol(dflt=((1, 1),), shape=2, pos=0),
        "var2": lib.IntCol(dflt=((1, 1), (1, 1)), shape=(2, 2), pos=1),
        "var3": lib.Int16Col(dflt=2, pos=2),
        "var4": lib.StringCol(itemsize=4, dflt=[b"abcd", b"efgh"], shape=(2, 2), pos=3),
    }


# ------------------------------------------------------------- multidimensional defaults
@both
def test_md_default_with_a_leading_dimension_is_kept_as_given(lib: ModuleType) -> None:
    col = lib.Int32Col(shape=(2, 2), dflt=((1, 1),))
    assert col.dflt.shape == (1, 2)
    assert np.array_equal(col.dflt, [[1, 1]])
    if lib is hyperslab:  # PyTables does not check; it fails only when rows are made
        for dflt, shape in [(((1, 1, 1),), (2, 2)), (((1, 1), (1, 1)), 2)]:
            with pytest.raises(ValueError, match="does not broadcast"):
                lib.Int32Col(shape=shape, dflt=dflt)


@pytest.mark.parametrize("writer", list(LIBS), ids=[f"written_by_{n}" for n in LIBS])
def test_md_defaults_fill_rows_and_read_back(tmp_path: Path, writer: str) -> None:
    path = tmp_path / "md.h5"
    lib = LIBS[writer]
    with lib.open_file(str(path), "w") as f:
        t = f.create_table("/", "t", _md_description(lib))
        t.row.append()
        t.flush()
    for reader in LIBS.values():
        with reader.open_file(str(path)) as f:
            t = f.root.t
            rec = t[0]
            assert rec["var1_"].tolist() == [1, 1]
            assert rec["var2"].tolist() == [[1, 1], [1, 1]]
            assert rec["var3"] == 2
            assert rec["var4"].tolist() == [[b"abcd", b"efgh"], [b"abcd", b"efgh"]]
            assert np.array_equal(t.coldflts["var1_"], [[1, 1]])


# ------------------------------------------------------------------- Row values
@both
def test_row_being_filled_gives_python_scalars(tmp_path: Path, lib: ModuleType) -> None:
    with lib.open_file(str(tmp_path / "r.h5"), "w") as f:
        t = f.create_table("/", "t", {"i": lib.Int16Col(dflt=2), "f": lib.Float32Col(),
                                      "s": lib.StringCol(3), "b": lib.BoolCol(),
                                      "c": lib.ComplexCol(8), "a": lib.Int16Col(shape=2)})
        row = t.row
        types = {k: type(row[k]) for k in ("i", "f", "s", "b", "c")}
        assert types == {"i": int, "f": float, "s": bytes, "b": bool, "c": complex}
        assert isinstance(row["a"], np.ndarray)
        row["i"] = 0x0102
        # NumPy 2 keeps int16 in int16: only a Python int gives 0x0201 here (test_tablesMD)
        assert ((row["i"] >> 8) & 0xFF) + ((row["i"] << 8) & 0xFF00) == 0x0201


@both
def test_row_keeps_the_last_row_read_after_the_loop(tmp_path: Path, lib: ModuleType) -> None:
    with lib.open_file(str(tmp_path / "r.h5"), "w") as f:
        t = f.create_table("/", "t", {"x": lib.Int32Col()})
        t.append([(i,) for i in range(10)])
        t.nrowsinbuf = 3
        rows = [r for r in t.iterrows() if r["x"] < 4]
        assert rows[-1]["x"] == 9  # PyTables' semantics: the row object is shared
        t.row["x"] = 5  # the table's own row is another object
        assert t.row["x"] == 5


# ----------------------------------------------- values with extra leading dimensions
@both
@pytest.mark.parametrize("kind", ["array", "carray"])
def test_assign_with_extra_leading_dimensions(tmp_path: Path, lib: ModuleType,
                                             kind: str) -> None:
    expected = np.zeros((3, 4))
    expected[...] = np.ones((1, 3, 4))  # NumPy is the oracle
    expected[0:2] = np.full((1, 1, 2, 4), 2.0)
    with lib.open_file(str(tmp_path / "a.h5"), "w") as f:
        create = f.create_array if kind == "array" else f.create_carray
        a = create("/", "a", obj=np.zeros((3, 4)))
        a[...] = np.ones((1, 3, 4))
        a[0:2] = np.full((1, 1, 2, 4), 2.0)
        assert np.array_equal(a[:], expected)
        with pytest.raises(ValueError):
            a[...] = np.ones((2, 3, 4))


@both
def test_column_assign_with_an_extra_leading_dimension(tmp_path: Path,
                                                       lib: ModuleType) -> None:
    with lib.open_file(str(tmp_path / "c.h5"), "w") as f:
        t = f.create_table("/", "t", {"col1": lib.Int32Col(shape=2)})
        t.append([([i, i],) for i in range(4)])
        t.cols.col1[1:] = [[[2, 3], [3, 4], [4, 5]]]
        assert t.cols.col1[:].tolist() == [[0, 0], [2, 3], [3, 4], [4, 5]]

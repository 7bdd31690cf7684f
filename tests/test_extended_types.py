"""Extended precision numbers (float128, complex256) in tables and arrays, as PyTables
stores them: native long doubles, complex ones as an HDF5 compound ``(r, i)`` of two.

PyTables and h5py are the oracles, both ways: the values (full long double precision),
the HDF5 types of datasets and table members, and the tables' attributes.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab

pytestmark = pytest.mark.skipif(not hasattr(np, "complex256"),
                                reason="no 16-byte long double on this platform")

LIBS = {"hyperslab": hyperslab, "tables": tables}
PAIRS = [(a, b) for a in LIBS for b in LIBS]
THIRD = np.longdouble(1) / 3  # not a float64: checks the full precision


def _rows() -> np.ndarray:
    dtype = np.dtype([("a", "c32"), ("b", "f16"), ("c", "c32", (2,)), ("d", "i4")])
    rows = np.zeros(3, dtype=dtype)
    rows["a"] = [1 + 2j, THIRD * 1j, -THIRD]
    rows["b"] = [3.5, THIRD, -1e300]
    rows["c"] = [[1j, 2], [THIRD, -THIRD * 1j], [0, 0]]
    rows["d"] = [1, 2, 3]
    return rows


def _write(lib: ModuleType, path: Path) -> None:
    class Record(lib.IsDescription):  # type: ignore[name-defined,misc]
        a = lib.ComplexCol(32, pos=0)
        b = lib.Float128Col(pos=1)
        c = lib.ComplexCol(32, shape=(2,), pos=2)
        d = lib.Int32Col(pos=3)

    values = np.array([1 + 2j, THIRD - THIRD * 1j], dtype="c32")
    with lib.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", Record)
        table.append(_rows()[:2])
        row = table.row
        for name in ("a", "b", "c", "d"):
            row[name] = _rows()[2][name]
        row.append()
        table.flush()
        f.create_array("/", "arr", values)
        f.create_carray("/", "carr", obj=values, chunkshape=(1,))
        f.create_earray("/", "earr", obj=values)
        f.create_array("/", "f128", np.array([THIRD, 2.5], dtype="f16"))
        f.create_carray("/", "f128c", obj=np.array([[THIRD, 2.5]], dtype="f16"),
                        filters=lib.Filters(complevel=1, complib="blosc2"))


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_extended_precision_round_trips(tmp_path: Path, writer: str, reader: str) -> None:
    path = tmp_path / "x.h5"
    _write(LIBS[writer], path)
    values = np.array([1 + 2j, THIRD - THIRD * 1j], dtype="c32")
    with LIBS[reader].open_file(str(path), "r") as f:
        table = f.root.t
        assert table.coldtypes["a"] == np.dtype("c32")
        assert table.coldtypes["b"] == np.dtype("f16")
        assert table.description._v_dtype == _rows().dtype
        got = table.read()
        for name in _rows().dtype.names:
            np.testing.assert_array_equal(got[name], _rows()[name])
        np.testing.assert_array_equal(table.col("b"), _rows()["b"])
        assert table[1]["b"] == THIRD
        np.testing.assert_array_equal(table.read_where("d > 1")["a"], _rows()["a"][1:])
        for name in ("arr", "carr", "earr"):
            node = f.get_node("/" + name)
            assert node.atom == LIBS[reader].ComplexAtom(32)
            np.testing.assert_array_equal(node[:], values)
        assert f.root.f128.atom == LIBS[reader].Float128Atom()
        np.testing.assert_array_equal(f.root.f128[:], [THIRD, 2.5])
        np.testing.assert_array_equal(f.root.f128c[:], [[THIRD, 2.5]])


def _types(path: Path) -> dict[str, Any]:
    with h5py.File(path, "r") as h5:
        found = {name: h5[name].id.get_type() for name in h5}
        attrs = {key: (h5["t"].attrs.get_id(key).get_type(), h5["t"].attrs[key])
                 for key in h5["t"].attrs if key != "NROWS"}
        fill = h5["t"].id.get_create_plist()
        fill_value = np.zeros(1, dtype=h5["t"].dtype)
        fill.get_fill_value(fill_value)
        return {"types": found, "attrs": attrs, "fill": fill_value}


def test_the_hdf5_types_are_pytables(tmp_path: Path) -> None:
    _write(hyperslab, tmp_path / "ours.h5")
    _write(tables, tmp_path / "theirs.h5")
    ours, theirs = _types(tmp_path / "ours.h5"), _types(tmp_path / "theirs.h5")
    assert set(ours["types"]) == set(theirs["types"])
    for name, htype in ours["types"].items():
        assert htype.equal(theirs["types"][name]), name
    member = ours["types"]["t"].get_member_type(0)  # complex256: (r, i) of long doubles
    assert [member.get_member_name(i) for i in range(2)] == [b"r", b"i"]
    assert member.get_member_type(0).equal(h5py.h5t.NATIVE_LDOUBLE)
    assert set(ours["attrs"]) == set(theirs["attrs"])
    for key, (htype, value) in ours["attrs"].items():
        assert htype.equal(theirs["attrs"][key][0]), key
        assert repr(value) == repr(theirs["attrs"][key][1]), key
    for name in _rows().dtype.names:  # by value: a long double's last 6 bytes are padding
        np.testing.assert_array_equal(ours["fill"][name], theirs["fill"][name])


def test_h5py_reads_what_hyperslab_writes(tmp_path: Path) -> None:
    _write(hyperslab, tmp_path / "x.h5")
    with h5py.File(tmp_path / "x.h5", "r") as h5:
        assert h5["t"].dtype == _rows().dtype
        np.testing.assert_array_equal(h5["t"][:]["c"], _rows()["c"])
        assert h5["arr"].dtype == np.dtype("c32")
        assert h5["f128"][0] == THIRD


def _write_big(lib: ModuleType, path: Path) -> None:
    with lib.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", {"a": lib.ComplexCol(32, pos=0),
                                          "d": lib.Int32Col(pos=1)}, byteorder="big")
        table.append([(1 + 2j, 1), (THIRD * 1j, 2)])


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_big_endian_complex256_columns_are_big_endian(
        tmp_path: Path, writer: str, reader: str) -> None:
    # h5py makes '>c32' a pair of little-endian long doubles; PyTables stores big-endian
    # ones, so a big-endian table's byteorder reads back 'big', not 'mixed'
    _write_big(LIBS[writer], tmp_path / "x.h5")
    with LIBS[reader].open_file(str(tmp_path / "x.h5"), "r") as f:
        assert f.root.t.byteorder == "big"
        np.testing.assert_array_equal(f.root.t.col("a"), np.array([1 + 2j, THIRD * 1j], "c32"))
    _write_big(tables, tmp_path / "theirs.h5")
    with h5py.File(tmp_path / "x.h5", "r") as ours, h5py.File(tmp_path / "theirs.h5") as theirs:
        assert ours["t"].id.get_type().equal(theirs["t"].id.get_type())


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_big_endian_complex256_arrays_keep_their_values(
        tmp_path: Path, writer: str, reader: str) -> None:
    # h5py reads and writes '>c32' through a little-endian pair: garbage both ways
    native = np.array([1 + 2j, THIRD * 1j, -THIRD], dtype="c32")
    big = native.astype(native.dtype.newbyteorder(">"))
    with LIBS[writer].open_file(str(tmp_path / "x.h5"), "w") as f:
        f.create_array("/", "a", big)
        f.create_earray("/", "e", obj=big).append(big)
        f.create_carray("/", "c", obj=native, byteorder="big")[1] = 5j
    with LIBS[reader].open_file(str(tmp_path / "x.h5"), "r") as f:
        assert (f.root.a.byteorder, f.root.c.byteorder) == ("big", "big")
        np.testing.assert_array_equal(f.root.a.read(), native)
        assert f.root.a[1] == native[1]
        np.testing.assert_array_equal(f.root.e[:], np.concatenate([native, native]))
        np.testing.assert_array_equal(f.root.c[:], [native[0], 5j, native[2]])

"""Compound (table) datasets in the storage layer: layouts, file types, raw-layout I/O.

Oracles: NumPy (bytes in, bytes out), PyTables (files it writes, files it reads) and h5py.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)
import numpy as np
import pytest
import tables
from h5py import h5t

from hyperslab.chunked.engine import ChunkEngine, RawKind
from hyperslab.codecs.filters import Filters
from hyperslab.codecs.pipeline import filters_to_pipeline
from hyperslab.errors import HDF5ExtError
from hyperslab.storage import compound
from hyperslab.storage.compound import (
    compound_file_type,
    decode_time64,
    encode_time64,
    layout_of_type,
)
from hyperslab.storage.create import create_table_dataset
from hyperslab.storage.datasets import Dataset

ENUM = {"red": 0, "green": 1, "blue": 7}

# name, layout dtype of the field, time?, enum?
FIELDS: list[tuple[str, Any, bool, bool]] = [
    ("i8", "<i8", False, False),
    ("u2", "<u2", False, False),
    ("f2", "<f2", False, False),
    ("f4", "<f4", False, False),
    ("c8", "<c8", False, False),
    ("c16", "<c16", False, False),
    ("b", "?", False, False),
    ("t32", "<i4", True, False),
    ("t64", "<f8", True, False),
    ("e", "u1", False, True),
    ("s", "S5", False, False),
    ("cell", ("<i2", (2, 3)), False, False),
    ("bcell", ("?", (2,)), False, False),
    ("nested", [("x", "<f8"), ("y", "S3")], False, False),
    ("be", ">i4", False, False),
]


def _dtype(fields: list[tuple[str, Any, bool, bool]]) -> np.dtype[Any]:
    return np.dtype([(name, dt) for name, dt, _t, _e in fields])


def _spec(fields: list[tuple[str, Any, bool, bool]]) -> dict[str, Any]:
    return {
        "dtype": _dtype(fields),
        "time_fields": frozenset(name for name, _d, t, _e in fields if t),
        "enums": {name: ENUM for name, _d, _t, e in fields if e},
    }


def _records(dtype: np.dtype[Any], n: int, seed: int = 0) -> np.ndarray:
    """Random records whose every byte is meaningful (valid bools, enums, strings)."""
    rng = np.random.default_rng(seed)
    data = np.zeros(n, dtype=dtype)
    raw = rng.integers(0, 256, size=(n, dtype.itemsize), dtype=np.uint8)
    data.view(np.uint8).reshape(n, dtype.itemsize)[...] = raw
    for name in dtype.names or ():
        field = dtype[name]
        base = field.base
        if base.kind == "b":
            data[name] = rng.integers(0, 2, size=data[name].shape).astype(bool)
        elif base.kind == "f":
            data[name] = rng.normal(size=data[name].shape)
        elif base.kind == "c":
            data[name] = rng.normal(size=data[name].shape) + 1j
        elif base.kind == "S":
            words = [b"", b"a", b"ab", b"full-" * 4]
            data[name] = np.array(words, dtype="S20")[
                rng.integers(0, 4, size=data[name].shape)].astype(base)
        elif base.names is not None:
            data[name] = _records(base, n, seed + 1)
    if "e" in (dtype.names or ()):
        data["e"] = rng.choice(list(ENUM.values()), size=n)
    return data


def _new_table(path: Path, *, chunks: tuple[int, ...] = (4,), pipeline: Any = (),
               fill_row: Any = None, fields: Any = None) -> tuple[h5py.File, Dataset]:
    f = h5py.File(path, "w")
    spec = _spec(FIELDS if fields is None else fields)
    ds = create_table_dataset(
        f.id, "t", chunks=chunks, pipeline=pipeline, fill_row=fill_row, track_times=False,
        **spec,
    )
    return f, ds


def _append(ds: Dataset, records: np.ndarray) -> None:
    n = ds.shape[0]
    ds.resize((n + len(records),))
    ds.write_rows(n, records)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    assert a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------- layouts and types
def test_layout_round_trip_of_every_member_class() -> None:
    spec = _spec(FIELDS)
    htype = compound_file_type(**spec)
    layout = layout_of_type(htype)
    assert layout.dtype == spec["dtype"]
    assert layout.time_fields == {"t32", "t64"}
    assert layout.bitfield_fields == {"b", "bcell"}
    assert layout.enums == {"e": ENUM}
    assert list(layout.enums["e"]) == ["red", "green", "blue"]  # the given order
    classes = {htype.get_member_name(i).decode(): htype.get_member_type(i)
               for i in range(htype.get_nmembers())}
    assert classes["t32"].equal(h5t.UNIX_D32LE)
    assert classes["t64"].equal(h5t.UNIX_D64LE)
    assert classes["b"].equal(h5t.STD_B8LE)
    assert classes["s"].get_strpad() == h5t.STR_NULLTERM
    assert classes["s"].get_cset() == h5t.CSET_ASCII
    assert classes["c8"].get_class() == h5t.COMPOUND
    assert classes["cell"].get_class() == h5t.ARRAY
    assert classes["be"].get_order() == h5t.ORDER_BE


def test_layout_keeps_offsets_itemsize_and_byte_order() -> None:
    dtype = np.dtype({"names": ["a", "t"], "formats": [">i2", ">f8"], "offsets": [8, 0],
                      "itemsize": 24})
    htype = compound_file_type(dtype, time_fields=frozenset({"t"}))
    assert htype.get_size() == 24
    assert htype.get_member_type(htype.get_member_index(b"t")).equal(h5t.UNIX_D64BE)
    # the same fields, offsets and itemsize, listed in offset order (PyTables' column order)
    assert layout_of_type(htype).dtype == np.dtype(
        {"names": ["t", "a"], "formats": [">f8", ">i2"], "offsets": [0, 8], "itemsize": 24})


def test_nested_paths() -> None:
    dtype = np.dtype([("n", [("t", "<i4"), ("e", "i1"), ("b", "?")])])
    htype = compound_file_type(dtype, time_fields=frozenset({"n/t"}),
                               enums={"n/e": {"no": 0, "yes": 1}})
    layout = layout_of_type(htype)
    assert layout.dtype == dtype
    assert layout.time_fields == {"n/t"}
    assert layout.bitfield_fields == {"n/b"}
    assert layout.enums == {"n/e": {"no": 0, "yes": 1}}


@pytest.mark.parametrize(
    ("dtype", "field"),
    [
        (np.dtype([("ok", "i4"), ("o", object)]), "o"),
        (np.dtype([("u", "U3")]), "u"),
        (np.dtype([("n", [("when", "M8[s]")])]), "n/when"),
        (np.dtype([("v", "V4")]), "v"),
    ],
)
def test_compound_file_type_rejects_unstorable_fields(dtype: np.dtype[Any], field: str) -> None:
    with pytest.raises(TypeError, match=repr(field)):
        compound_file_type(dtype)


def test_compound_file_type_rejects_bad_time_and_enum_fields() -> None:
    with pytest.raises(TypeError, match="'t'"):
        compound_file_type(np.dtype([("t", "i2")]), time_fields=frozenset({"t"}))
    with pytest.raises(TypeError, match="'e'"):
        compound_file_type(np.dtype([("e", "f4")]), enums={"e": {"a": 0}})
    with pytest.raises(TypeError, match="structured"):
        compound_file_type(np.dtype("i4"))


def test_layouts_are_kept_per_type_and_read_only() -> None:
    little = compound_file_type(np.dtype([("a", "<i4"), ("e", "i1")]),
                                enums={"e": {"no": 0, "yes": 1}})
    big = compound_file_type(np.dtype([("a", ">i4"), ("e", "i1")]),
                             enums={"e": {"no": 0, "yes": 1}})
    first = layout_of_type(little)
    # The same type again (a table opened again): the same layout, not parsed anew.
    assert layout_of_type(little.copy()) is first
    # Another type, even one differing only in byte order, has its own layout.
    other = layout_of_type(big)
    assert other.dtype == np.dtype([("a", ">i4"), ("e", "i1")])
    assert first.dtype == np.dtype([("a", "<i4"), ("e", "i1")])
    assert (first.byteorder, other.byteorder) == ("little", "mixed")  # the i1 enum: little
    # Shared, so nobody may change it.
    with pytest.raises(TypeError):
        first.enums["e"]["maybe"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        first.enums["x"] = {}  # type: ignore[index]
    assert dict(first.enums["e"]) == {"no": 0, "yes": 1}


def test_layout_of_type_rejects_vlen_members(tmp_path: Path) -> None:
    dtype = np.dtype([("a", "i4"), ("v", h5py.vlen_dtype("i4"))])
    with pytest.raises(TypeError, match="'v'"):
        layout_of_type(h5t.py_create(dtype, logical=True))
    with pytest.raises(TypeError, match="compound"):
        layout_of_type(h5t.STD_I32LE)
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_dataset("v", shape=(2,), dtype=dtype)
        ds = Dataset(f["v"].id)
        with pytest.raises(TypeError, match="unsupported compound"):
            _ = ds.layout
        assert ds.dtype.names == ("a", "v")  # still described (as h5py sees it)


# ---------------------------------------------------------------------- our round trips
def test_round_trip_every_selection(tmp_path: Path) -> None:
    f, ds = _new_table(tmp_path / "t.h5")
    with f:
        data = _records(ds.dtype, 23)
        _append(ds, data[:10])
        _append(ds, data[10:])
        assert ds.layout is not None and ds.dtype == _dtype(FIELDS)
        assert ds.hdf5_class == "COMPOUND"
        _same(ds.read(), data)
        _same(ds.read(Ellipsis), data)
        _same(ds.read(slice(3, 20, 4)), data[3:20:4])
        _same(ds.read((slice(-5, None),)), data[-5:])
        _same(ds.read(slice(30, 40)), data[30:40])
        _same(ds.read(np.int64(-1)), data[-1])
        _same(ds.read_rows(2, 5, 3), data[2:17:3])
        out = np.empty(4, dtype=ds.dtype)
        assert ds.read_rows(1, 4, out=out) is out
        _same(out, data[1:5])
        coords = np.array([22, 0, 5, 5, 13], dtype=np.int64)
        _same(ds.read_points(coords), data[coords])
        _same(ds.read_points(np.array([], dtype=np.int64)), data[:0])


def test_writes_in_place(tmp_path: Path) -> None:
    f, ds = _new_table(tmp_path / "t.h5")
    with f:
        data = _records(ds.dtype, 12)
        expected = data.copy()
        _append(ds, data)
        other = _records(ds.dtype, 12, seed=5)
        ds.write(slice(1, 9, 3), other[:3])
        expected[1:9:3] = other[:3]
        ds.write(0, other[5])
        expected[0] = other[5]
        ds.write_rows(4, other[6:8], step=5)
        expected[4:10:5] = other[6:8]
        ds.write_points(np.array([11, 2]), other[9:11])
        expected[[11, 2]] = other[9:11]
        ds.write_points([7], other[11])
        expected[7] = other[11]
        _same(ds.read(), expected)
        ds.write_all(other)
        _same(ds.read(), other)


def test_record_dtype_values_are_cast_to_the_layout(tmp_path: Path) -> None:
    fields = [("be", ">i4", False, False), ("t", ">f8", True, False)]
    f, ds = _new_table(tmp_path / "t.h5", fields=fields)
    with f:
        native = np.array([(1, 2.5), (-3, 4.0)], dtype=[("be", "=i4"), ("t", "=f8")])
        _append(ds, native)
        got = ds.read()
        assert got.dtype == np.dtype([("be", ">i4"), ("t", ">f8")])
        assert got.tolist() == native.tolist()
        assert ds.dsid.get_type().get_member_type(1).equal(h5t.UNIX_D64BE)


def test_selection_errors(tmp_path: Path) -> None:
    f, ds = _new_table(tmp_path / "t.h5")
    with f:
        _append(ds, _records(ds.dtype, 5))
        with pytest.raises(IndexError, match="index 5 is out of range"):
            ds.read(5)
        with pytest.raises(ValueError, match="positive"):
            ds.read(slice(None, None, -1))
        with pytest.raises(TypeError, match="unsupported index"):
            ds.read([0, 1])
        with pytest.raises(IndexError, match="too many indices"):
            ds.read((0, 0))
        with pytest.raises(IndexError, match="rows 3 to 5"):
            ds.read_rows(3, 2, 2)
        with pytest.raises(ValueError, match="step=0"):
            ds.read_rows(0, 2, 0)
        with pytest.raises(IndexError, match="coordinate 7"):
            ds.read_points(np.array([1, 7]))
        with pytest.raises(IndexError, match="coordinate -1"):
            ds.write_points(np.array([-1]), ds.read(0))
        with pytest.raises(ValueError, match="out must be"):
            ds.read_rows(0, 2, out=np.empty(3, dtype=ds.dtype))
        with pytest.raises(ValueError, match="out must be"):
            ds.read_rows(0, 2, out=np.empty(2, dtype=ds.dtype.newbyteorder(">")))
        with pytest.raises(IndexError, match="out of range"):
            ds.write_rows(4, ds.read(slice(0, 2)))
        before = ds.read()
        with pytest.raises(ValueError, match="cannot write"):
            ds.write(slice(0, 3), before[:2])
        _same(ds.read(), before)  # bad input leaves the file alone


def test_nd_compound_dataset_matches_h5py(tmp_path: Path) -> None:
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")])
    data = np.zeros((6, 7), dtype=dtype)
    data["a"] = np.arange(42).reshape(6, 7)
    data["b"] = data["a"] / 7
    with h5py.File(tmp_path / "nd.h5", "w") as f:
        f.create_dataset("nd", data=data)
        f.create_dataset("scalar", data=data[2, 3])
        ds = Dataset(f["nd"].id)
        for key in [(), (1,), (slice(1, 5, 2), 3), (-1, slice(None, None, 3)), (Ellipsis, 2)]:
            _same(ds.read(key), f["nd"][key])
        ds.write((slice(0, 6, 5), slice(2, 4)), data[0, 0])
        data[0:6:5, 2:4] = data[0, 0]
        _same(f["nd"][()], data)
        scalar = Dataset(f["scalar"].id)
        assert scalar.is_scalar
        _same(scalar.read(), data[2, 3].reshape(()).copy())
        with pytest.raises(ValueError, match="not 1-D"):
            ds.read_rows(0, 1)


def test_complex_arrays_are_not_compound(tmp_path: Path) -> None:
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f.create_dataset("c", data=np.arange(4) + 1j)
        ds = Dataset(f["c"].id)
        assert ds.layout is None
        assert ds.dtype == np.dtype("c16")
        _same(ds.read_rows(1, 2), np.arange(1, 3) + 1j)


@pytest.mark.parametrize(
    ("data", "make"),
    [
        (np.arange(10, dtype=">i4"), "plain"),
        (np.array([True, False, True, True]), "bitfield"),
        (np.array([b"ab", b"abcd", b""], dtype="S4"), "plain"),
    ],
)
def test_rows_of_non_compound_datasets(tmp_path: Path, data: np.ndarray, make: str) -> None:
    with h5py.File(tmp_path / "p.h5", "w") as f:
        if make == "bitfield":
            f.create_dataset("d", data=data.view(np.uint8), dtype=h5py.h5t.STD_B8LE)
        else:
            f.create_dataset("d", data=data)
        ds = Dataset(f["d"].id)
        n = len(data)
        _same(ds.read_rows(1, n - 1), ds.read(slice(1, None)))
        _same(ds.read_rows(0, (n + 1) // 2, 2), data[::2])
        _same(ds.read_points([n - 1, 0]), data[[n - 1, 0]])
        ds.write_rows(0, data[::-1])
        ds.write_points([0], data[0])
        expected = data[::-1].copy()
        expected[0] = data[0]
        _same(ds.read(), expected)


def test_raw_chunk_bookkeeping_follows_row_writes(tmp_path: Path) -> None:
    f, ds = _new_table(tmp_path / "t.h5")
    with f:
        data = _records(ds.dtype, 16)
        ds.resize((16,))
        ds.write_rows(0, data[:4])
        assert ds.chunk_is_written((0,)) and not ds.chunk_is_written((1,))
        ds.write_rows(9, data[9:11])
        assert ds.chunk_is_written((2,)) and not ds.chunk_is_written((3,))
        ds.write_points(np.array([15]), data[15])
        assert ds.chunk_is_written((3,)) and not ds.chunk_is_written((1,))
        h5 = f["t"].id  # HDF5's own index says where each chunk is
        for grid in range(4):
            info = h5.get_chunk_info_by_coord((4 * grid,))
            want = (None if info.byte_offset is None
                    else (info.byte_offset, info.size, info.filter_mask))
            assert ds.chunk_location((grid,)) == want, grid
        assert ds.read_raw_chunk((3,)) == (h5.read_direct_chunk((12,))[1], 0)


# ---------------------------------------------------------------------- fill values
def test_fill_row_set_when_hdf5_can_take_it(tmp_path: Path) -> None:
    fields = [f for f in FIELDS if f[0] not in ("b", "t32", "t64", "bcell")]
    dtype = _dtype(fields)
    fill = np.zeros((), dtype=dtype)
    fill["i8"], fill["f2"], fill["c16"], fill["s"] = -3, 1.5, 2 - 1j, b"abcd"
    fill["e"], fill["cell"], fill["nested"]["y"], fill["be"] = 7, 9, b"xy", 1 << 20
    f, ds = _new_table(tmp_path / "t.h5", fields=fields, fill_row=fill)
    with f:
        got = ds.fillvalue()
        _same(got, fill)
        ds.resize((6,))  # unwritten rows read as the fill row
        _same(ds.read(), np.full(6, fill))
    with h5py.File(tmp_path / "t.h5") as h5:  # kept in the file
        _same(Dataset(h5["t"].id).fillvalue(), fill)


FILL_CASES = [("b", True), ("t32", 5), ("t64", 1.5), ("bcell", [False, True]),
              ("s", b"abcde")]


@pytest.mark.parametrize(("field", "value"), FILL_CASES)
def test_fill_row_with_times_bitfields_and_full_strings(
    tmp_path: Path, field: str, value: Any
) -> None:
    """Times, bitfields and full-length NULLTERM strings, which h5py cannot convert, are
    given to HDF5 in the file type itself (as PyTables does): unwritten rows read as it."""
    fill = np.zeros((), dtype=_dtype(FIELDS))
    fill["i8"] = 4
    fill[field] = value
    f, ds = _new_table(tmp_path / "t.h5", fill_row=fill)
    with f:
        assert ds.dsid.get_create_plist().fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED
        _same(ds.fillvalue(), fill)
        ds.resize((3,))
        _same(ds.read(), np.full(3, fill))


@pytest.mark.parametrize(("field", "value"), FILL_CASES)
def test_fill_row_without_hdf5_library(
    tmp_path: Path, field: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where HDF5's C library cannot be found, h5py's conversion is all there is: such
    fill rows are not set, and unwritten rows read as zeros."""
    monkeypatch.setattr(compound, "_hdf5_library", lambda: None)
    fill = np.zeros((), dtype=_dtype(FIELDS))
    fill["i8"] = 4
    fill[field] = value
    f, ds = _new_table(tmp_path / "t.h5", fill_row=fill)
    with f:
        _same(ds.fillvalue(), np.zeros((), dtype=ds.dtype))
        ds.resize((3,))
        _same(ds.read(), np.zeros(3, dtype=ds.dtype))
        assert ds.dsid.get_create_plist().get_fill_time() == h5py.h5d.FILL_TIME_ALLOC


def test_zero_fill_row_and_bad_fill_row(tmp_path: Path) -> None:
    f, ds = _new_table(tmp_path / "t.h5", fill_row=np.zeros((), dtype=_dtype(FIELDS)))
    with f:
        _same(ds.fillvalue(), np.zeros((), dtype=ds.dtype))
        with pytest.raises(ValueError, match="0-d"):
            create_table_dataset(f.id, "u", chunks=(4,), fill_row=np.zeros(2, ds.dtype),
                                 **_spec(FIELDS))
        assert "u" not in f


# ---------------------------------------------------------------------- PyTables and h5py
class _Desc(tables.IsDescription):
    i8 = tables.Int64Col(pos=0, dflt=-2)
    f2 = tables.Float16Col(pos=1)
    c16 = tables.ComplexCol(16, pos=2)
    b = tables.BoolCol(pos=3, dflt=True)
    t32 = tables.Time32Col(pos=4, dflt=7)
    t64 = tables.Time64Col(pos=5, dflt=2.25)
    e = tables.EnumCol(tables.Enum(ENUM), "blue", base="uint8", pos=6)
    s = tables.StringCol(5, pos=7, dflt=b"dflt")
    cell = tables.Int16Col(shape=(2, 3), pos=8)
    bcell = tables.BoolCol(shape=(2,), pos=9)

    class nested(tables.IsDescription):
        _v_pos = 10
        x = tables.Float64Col(pos=0)
        y = tables.StringCol(3, pos=1)


def _pytables_rows(n: int) -> np.ndarray:
    """Values for _Desc's columns (record dtype, native), time64 with exact microseconds."""
    dtype = tables.Description(_Desc().columns)._v_dtype
    data = _records(dtype, n, seed=3)
    data["t64"] = np.round(np.linspace(-3.5, 1e9, n), 6)
    return data


@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_pytables_files_read_identically(tmp_path: Path, byteorder: str) -> None:
    path = tmp_path / "pt.h5"
    rows = _pytables_rows(9)
    with tables.open_file(path, "w") as f:
        t = f.create_table("/", "t", _Desc, byteorder=byteorder, chunkshape=(4,))
        t.append(rows)
        expected = t.read()
    with h5py.File(path, "r") as f:
        ds = Dataset(f["t"].id)
        layout = ds.layout
        assert layout is not None
        assert layout.time_fields == {"t32", "t64"}
        assert layout.bitfield_fields == {"b", "bcell"}
        assert dict(layout.enums["e"]) == ENUM
        assert ds.dtype["i8"].isnative == (byteorder == sys.byteorder)
        # PyTables keeps time fields in the machine's order, even in big-endian tables
        assert ds.dtype["t32"] == np.dtype("<i4")
        got = ds.read()
        record = np.dtype([(n, ds.dtype[n].newbyteorder("=")) for n in ds.dtype.names or ()])
        assert record == expected.dtype
        native = got.astype(record)
        # PyTables stores Time64 values as timeval32 words
        np.testing.assert_array_equal(decode_time64(got["t64"]), expected["t64"])
        assert encode_time64(expected["t64"], ds.dtype["t64"]).tobytes() == \
            got["t64"].tobytes()
        native["t64"] = expected["t64"]
        _same(native, expected)
        points = ds.read_points([8, 1]).astype(record)
        assert points[["i8", "s"]].tolist() == expected[[8, 1]][["i8", "s"]].tolist()
        fill = ds.fillvalue()
        assert fill is not None
        assert fill["b"] and fill["t32"] == 7 and fill["s"] == b"dflt"
        # PyTables gives HDF5 the fill row in the machine's byte order, even for big-endian
        # tables (it reads defaults from FIELD_<j>_FILL, never from the fill value)
        assert fill["i8"].tobytes() == np.array(-2, dtype="=i8").tobytes()
        assert fill["t64"] == 2.25  # the fill value is a plain float64, not a timeval


def test_our_files_read_by_pytables_and_h5py(tmp_path: Path) -> None:
    path = tmp_path / "ours.h5"
    rows = _pytables_rows(11)
    f, ds = _new_table(path, fields=[
        (n, rows.dtype[n], n in ("t32", "t64"), n == "e") for n in rows.dtype.names or ()
    ])
    with f:
        stored = rows.copy()
        stored["t64"] = encode_time64(rows["t64"])
        _append(ds, stored)
        f["t"].attrs["CLASS"] = np.bytes_("TABLE")
        f["t"].attrs["VERSION"] = np.bytes_("2.7")
        f["t"].attrs["TITLE"] = np.bytes_("ours")
        f["t"].attrs["NROWS"] = np.int64(11)
    with tables.open_file(path) as pt:
        table = pt.root.t
        assert table.coltypes["t32"] == "time32" and table.coltypes["b"] == "bool"
        assert table.coltypes["e"] == "enum"
        _same(table.read(), rows)
    with h5py.File(path, "r") as f:
        others = [n for n in rows.dtype.names or () if n not in ("t32", "t64")]
        # h5py's own conversions of the other members (its high level needs the dtype)
        subset = np.dtype([(n, rows.dtype[n]) for n in others])
        got = np.empty(11, dtype=subset)
        f["t"].id.read(h5py.h5s.ALL, h5py.h5s.ALL, got)
        for name in others:
            want = rows[name]
            if name in ("b", "bcell"):
                want = want.view(np.uint8)  # h5py reads bitfields as uint8
            np.testing.assert_array_equal(got[name], want)
        with pytest.raises(TypeError):
            _ = f["t"].dtype  # h5py has no NumPy type for H5T_TIME


# ---------------------------------------------------------------------- chunk engine
@pytest.mark.parametrize("compressed", [False, True])
def test_chunk_engine_on_tables(tmp_path: Path, compressed: bool) -> None:
    chunks = (8,)
    fields = [("i", "<i4", False, False), ("b", "?", False, False),
              ("t32", "<i4", True, False), ("t64", "<f8", True, False),
              ("s", "S3", False, False)]
    pipeline: list[tuple[int, int, tuple[int, ...]]] = []
    if compressed:
        itemsize = _dtype(fields).itemsize
        pipeline = [(s.filter_id, s.flags, s.cd_values) for s in filters_to_pipeline(
            Filters(complevel=5, complib="blosc2"), itemsize, chunks, classname="TABLE")]
    f, ds = _new_table(tmp_path / "e.h5", chunks=chunks, pipeline=pipeline, fields=fields)
    with f, ThreadPoolExecutor(2) as pool:
        engine = ChunkEngine(ds, lambda: pool, 2)
        assert engine.kind is (RawKind.BLOSC2 if compressed else RawKind.PLAIN)
        data = _records(ds.dtype, 37)
        ds.resize((37,))
        parts: list[tuple[Any, np.ndarray]] = []

        def fallback(box: Any, value: np.ndarray) -> None:
            parts.append((box, value))
            ds.write(slice(box[0][0], box[0][1]), value)

        if compressed:
            engine.write_box(((0, 37),), data, fallback)
            assert parts == []  # every chunk whole (the last one up to the end)
            changed = _records(ds.dtype, 10, seed=9)
            engine.write_box(((3, 13),), changed, fallback)
            assert [box for box, _v in parts] == [((3, 8),), ((8, 13),)]
            _same(ds.read(slice(3, 13)), changed)
            engine.write_box(((3, 13),), data[3:13], fallback)
        else:  # the engine writes only Blosc2 chunks
            ds.write(slice(0, 37), data)
        _same(engine.read_box(((0, 37),)), data)
        _same(engine.read_box(((5, 30),)), data[5:30])
        _same(ds.read(), data)  # HDF5's own pipeline agrees
        _same(engine.read_item((35,)), data[35])
        ds.resize((45,))
        tail = engine.read_box(((37, 45),))
        _same(tail, np.zeros(8, dtype=ds.dtype))  # unwritten: the (zero) fill row
    with tables.open_file(tmp_path / "e.h5") as pt:
        assert pt.root.t.read(0, 37)["s"].tolist() == data["s"].tolist()


def test_write_error_is_ours(tmp_path: Path) -> None:
    path = tmp_path / "ro.h5"
    f, ds = _new_table(path)
    with f:
        _append(ds, _records(ds.dtype, 3))
    with h5py.File(path, "r") as f:
        ds = Dataset(f["t"].id)
        with pytest.raises(HDF5ExtError, match="cannot write"):
            ds.write_rows(0, ds.read(slice(0, 1)))


@pytest.mark.parametrize("pipeline", [(), "blosc2"])
def test_append_rows_grows_and_writes(tmp_path: Path, pipeline: Any) -> None:
    steps: list[tuple[int, int, tuple[int, ...]]] = []
    if pipeline:
        steps = [(s.filter_id, s.flags, s.cd_values) for s in filters_to_pipeline(
            Filters(5, "blosc2:lz4", shuffle=True), _dtype(FIELDS).itemsize, (4,),
            classname="TABLE")]
    f, ds = _new_table(tmp_path / "a.h5", pipeline=steps)
    with f:
        rows = _records(ds.dtype, 17, 1)
        ds.append_rows(0, rows[:10])
        ds.append_rows(10, rows[10:])
        assert ds.shape == (17,)
        _same(ds.read_rows(0, 17), rows)


def test_append_rows_refuses_bad_arrays_and_keeps_rows(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    f, ds = _new_table(tmp_path / "b.h5")
    with f:
        rows = _records(ds.dtype, 6, 3)
        ds.append_rows(0, rows)
        # A buffer of another dtype would be read past its end by HDF5: refused up front.
        for bad in (np.zeros(3, "f8"), rows[::2], rows.reshape(2, 3), list(rows)):
            with pytest.raises(TypeError, match="C-contiguous 1-D array"):
                ds.append_rows(6, bad)  # type: ignore[arg-type]
        assert ds.shape == (6,)

        def refuse(self: Dataset) -> Any:
            raise OSError("no room")

        monkeypatch.setattr(Dataset, "_memory_type", refuse)
        with pytest.raises(HDF5ExtError, match="cannot append 6 rows"):
            ds.append_rows(6, rows)
        monkeypatch.undo()
        assert ds.shape == (6,)  # the failed append took its rows back
        _same(ds.read_rows(0, 6), rows)


def test_members_stored_out_of_offset_order_read_in_offset_order(tmp_path: Path) -> None:
    # as PyTables' out_of_order_types.h5: the first member has the last offset
    import hyperslab

    dtype = np.dtype({"names": ["c", "b", "a"], "formats": ["S5", "i4", "f8"],
                      "offsets": [12, 8, 0], "itemsize": 17})
    rows = np.array([(b"x", 1, 2.5), (b"yy", 3, -1.0)], dtype=dtype)
    with h5py.File(tmp_path / "o.h5", "w") as h5:
        h5.create_dataset("t", data=rows, maxshape=(None,), chunks=(4,))
        h5["t"].attrs["CLASS"] = np.bytes_("TABLE")
    got = []
    for lib in (hyperslab, tables):
        with lib.open_file(str(tmp_path / "o.h5"), "r") as f:
            table = f.root.t
            got.append((table.colnames, table.read().dtype.names, table[0][0],
                        [row[0] for row in table], table.read().tolist()))
    assert got[0] == got[1]
    assert got[0][0] == ["a", "b", "c"] and got[0][2] == 2.5

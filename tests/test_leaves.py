"""Array, CArray and EArray: creation, properties, reading, writing, growing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.errors import FiltersWarning

DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16",
          "S5"]


def _data(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "S5":
        return np.array([f"s{i}".encode() for i in range(n)], dtype="S5").reshape(shape)
    if dtype == "?":
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) % 100).astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_atom_round_trips(h5path: Path, dtype: str) -> None:
    data = _data(dtype, (6, 4))
    with hyperslab.open_file(h5path, "w") as f:
        f.create_array("/", "a", data)
        f.create_carray("/", "c", obj=data, filters=hyperslab.Filters(1, "zlib"))
        e = f.create_earray("/", "e", hyperslab.Atom.from_dtype(data.dtype), shape=(0, 4))
        e.append(data[:2])
        e.append(data[2:])
    with hyperslab.open_file(h5path, "r") as f:
        for name in ("a", "c", "e"):
            node = f.get_node("/", name)
            out = node[:]
            assert out.dtype == data.dtype, name
            np.testing.assert_array_equal(out, data)
            assert node.atom.dtype == data.dtype
            assert node.shape == (6, 4) and node.nrows == 6 and len(node) == 6


def test_leaf_properties(h5file: hyperslab.File) -> None:
    filters = hyperslab.Filters(complevel=5, complib="blosc2:zstd", shuffle=True)
    ca = h5file.create_carray("/", "c", hyperslab.Float64Atom(), shape=(1000, 100),
                              filters=filters, title="cube")
    assert ca.chunkshape == (1310, 100)
    assert ca.filters == filters
    assert (ca.ndim, ca.maindim, ca.extdim, ca.flavor) == (2, 0, -1, "numpy")
    assert ca.byteorder == "little" and ca.title == "cube"
    assert ca.size_in_memory == 1000 * 100 * 8
    ca[:] = 1.0
    h5file.flush()
    assert 0 < ca.size_on_disk < ca.size_in_memory
    ea = h5file.create_earray("/", "e", hyperslab.Int32Atom(), shape=(3, 0), expectedrows=10**6)
    assert (ea.extdim, ea.maindim, ea.nrows) == (1, 1, 0)
    assert ea.chunkshape is not None and ea.chunkshape[0] == 3


def test_read_start_stop_step_and_out(h5file: hyperslab.File) -> None:
    data = np.arange(50).reshape(10, 5)
    arr = h5file.create_array("/", "a", data)
    np.testing.assert_array_equal(arr.read(), data)
    np.testing.assert_array_equal(arr.read(1, 9, 3), data[1:9:3])
    np.testing.assert_array_equal(arr.read(8, 1, -2), data[8:1:-2])
    out = np.empty((3, 5), dtype=data.dtype)
    assert arr.read(0, 3, out=out) is out
    np.testing.assert_array_equal(out, data[:3])
    with pytest.raises(ValueError, match="does not match"):
        arr.read(0, 4, out=out)
    rows = list(arr.iterrows(2, 8, 2))
    assert len(rows) == 3
    np.testing.assert_array_equal(rows[1], data[4])
    np.testing.assert_array_equal(np.array(list(arr)), data)


def test_scalar_empty_and_python_flavor(h5file: hyperslab.File) -> None:
    scalar = h5file.create_array("/", "s", np.float32(2.5))
    assert scalar.shape == () and scalar.read() == np.float32(2.5)
    empty = h5file.create_array("/", "e", np.empty((0, 3), dtype="i2"))
    assert empty.shape == (0, 3) and empty.read().shape == (0, 3)
    lst = h5file.create_array("/", "l", [1, 2, 3])
    assert lst.flavor == "python" and lst.read() == [1, 2, 3]
    with pytest.raises(TypeError, match="atom and shape"):
        h5file.create_array("/", "bad")
    with pytest.raises(TypeError, match="object, unicode or void"):
        h5file.create_array("/", "bad", np.array(["a"], dtype="U1"))
    assert "bad" not in h5file.root


def test_big_endian_reads_native(h5file: hyperslab.File) -> None:
    data = np.arange(12, dtype=">f8").reshape(3, 4)
    arr = h5file.create_array("/", "a", data)
    assert arr.byteorder == "big"
    out = arr[:]
    assert out.dtype == np.dtype("f8") and out.dtype.isnative
    np.testing.assert_array_equal(out, data)
    ca = h5file.create_carray("/", "c", hyperslab.Int32Atom(), shape=(4,), byteorder="big")
    ca[:] = [1, 2, 3, 4]
    assert ca.byteorder == "big"
    np.testing.assert_array_equal(ca[::-1], [4, 3, 2, 1])


def test_earray_append_errors_leave_data(h5file: hyperslab.File) -> None:
    ea = h5file.create_earray("/", "e", hyperslab.Float64Atom(), shape=(0, 3))
    ea.append(np.ones((2, 3)))
    with pytest.raises(ValueError, match="rank of the appended object"):
        ea.append(np.ones(3))
    with pytest.raises(ValueError, match=r"differs from the shape"):
        ea.append(np.ones((2, 4)))
    with pytest.raises(ValueError, match="cannot append"):
        ea.append([["a", "b", "c"]])
    assert ea.nrows == 2
    np.testing.assert_array_equal(ea[:], np.ones((2, 3)))
    with pytest.raises(ValueError, match="one of the dimensions"):
        h5file.create_earray("/", "bad", hyperslab.Int8Atom(), shape=(0, 0))
    with pytest.raises(ValueError, match="one of the dimensions"):
        h5file.create_earray("/", "bad", hyperslab.Int8Atom(), shape=(2, 3))


def test_earray_truncate(h5file: hyperslab.File) -> None:
    ea = h5file.create_earray("/", "e", hyperslab.Int16Atom(dflt=-1), shape=(0,))
    ea.append(np.arange(10, dtype="i2"))
    ea.truncate(4)
    np.testing.assert_array_equal(ea[:], np.arange(4))
    ea.truncate(6)
    np.testing.assert_array_equal(ea[:], [0, 1, 2, 3, -1, -1])
    with pytest.raises(ValueError, match="non-negative"):
        ea.truncate(-1)


def test_carray_from_obj_and_fill(h5file: hyperslab.File) -> None:
    ca = h5file.create_carray("/", "c", hyperslab.Float32Atom(dflt=1.5), shape=(3, 2))
    np.testing.assert_array_equal(ca[:], np.full((3, 2), 1.5, dtype="f4"))
    with pytest.raises(ValueError, match="not consistent"):
        h5file.create_carray("/", "d", obj=np.zeros((2, 2)), shape=(3, 3))
    with pytest.raises(ValueError):
        h5file.create_carray("/", "d", hyperslab.Int8Atom(), shape=(4,), chunkshape=(0,))
    assert "d" not in h5file.root


def test_least_significant_digit(h5file: hyperslab.File) -> None:
    filters = hyperslab.Filters(complevel=1, least_significant_digit=2)
    ca = h5file.create_carray("/", "c", obj=np.linspace(0, 1, 101), filters=filters)
    assert np.abs(ca[:] - np.linspace(0, 1, 101)).max() <= 0.005
    assert not np.array_equal(ca[:], np.linspace(0, 1, 101))


def test_lzo_falls_back_to_zlib_with_a_warning(h5file: hyperslab.File) -> None:
    with pytest.warns(FiltersWarning, match="lzo"):
        filters = hyperslab.Filters(1, "lzo")
    ca = h5file.create_carray("/", "c", hyperslab.Int8Atom(), shape=(4,), filters=filters)
    assert ca.filters.complib == "zlib"


def test_reading_lzo_data_names_the_missing_filter(h5path: Path) -> None:
    with h5py.File(h5path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4,))
        dcpl.set_filter(305, h5py.h5z.FLAG_OPTIONAL, (1,))
        space = h5py.h5s.create_simple((4,))
        dsid = h5py.h5d.create(f.id, b"lzo", h5py.h5t.NATIVE_INT8, space, dcpl=dcpl)
        dsid.write_direct_chunk((0,), b"\x00" * 7, filter_mask=0)
    with hyperslab.open_file(h5path, "r") as f:
        node = f.root.lzo
        assert node.filters.complib == "lzo"
        with pytest.raises(hyperslab.FilterNotAvailableError, match="lzo"):
            node[:]


def test_flavor_follows_the_flavor_attribute(h5file: hyperslab.File) -> None:
    arr = h5file.create_array("/", "a", np.arange(3))
    assert arr.flavor == "numpy" and isinstance(arr[:], np.ndarray)
    arr.attrs.FLAVOR = "python"
    assert arr.flavor == "python" and arr[:] == [0, 1, 2]
    del arr.attrs.FLAVOR
    assert arr.flavor == "numpy"


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "pytables"])
def test_read_out_checks_as_pytables(tmp_path: Path, lib: Any) -> None:
    """``read(out=...)``: PyTables' messages (size in bytes first, then C order) and an
    ``out`` in the other byte order takes the values (PyTables reads into it)."""
    data = np.arange(20.0)
    with lib.open_file(str(tmp_path / "o.h5"), "w") as f:
        arr = f.create_array("/", "a", data)
        swapped = np.empty(20, dtype=">f8")
        assert arr.read(out=swapped) is swapped
        np.testing.assert_array_equal(swapped, data)
        for size in [10, 21]:
            with pytest.raises(ValueError, match="output array size invalid, got"):
                arr.read(0, 20, 1, np.empty(size))
        with pytest.raises(ValueError, match="output array not C contiguous"):
            arr.read(0, 20, 2, np.empty(20)[::2])
        t = f.create_table("/", "t", np.dtype([("i", "<i4"), ("s", "S1")]))
        t.append([(i, b"x") for i in range(6)])
        with pytest.raises(ValueError, match="array must be in system's byteorder"):
            t.read(out=np.empty(6, dtype=[("i", ">i4"), ("s", "S1")]))
        with pytest.raises(ValueError, match="output array size invalid, got"):
            t.read(out=np.empty(5, dtype=t.dtype))
        with pytest.raises(ValueError, match="output array size invalid, got"):
            t.read(field="i", out=np.empty(7, dtype="<i4"))
        with pytest.raises(ValueError, match="output array not C contiguous"):
            t.read(0, 6, 2, out=np.empty(6, dtype=t.dtype)[::2])


def _enum_leaves(lib: Any, path: Path) -> None:
    with lib.open_file(str(path), "w") as f:
        e = f.create_earray("/", "e", lib.EnumAtom(["a", "b", "c"], "b", base="uint8"), (0,))
        e.append(np.array([0, 1, 2], "u1"))
        f.create_carray("/", "c", lib.EnumAtom({"x": 3, "y": 5}, "y", base="int32"), (4,),
                        byteorder="big")
        f.create_array("/", "plain", [1, 2])


@pytest.mark.parametrize("writer", [hyperslab, tables], ids=["hyperslab", "pytables"])
def test_enum_arrays_are_hdf5_enums(tmp_path: Path, writer: Any) -> None:
    """EArrays and CArrays of enumerated atoms are HDF5 enum datasets (members in PyTables'
    order, default first) that either library reads back, with ``get_enum``."""
    path = tmp_path / "enum.h5"
    _enum_leaves(writer, path)
    seen = {}
    for lib in [hyperslab, tables]:
        with lib.open_file(str(path)) as f:
            seen[lib.__name__] = [(dict(f.root.e.get_enum()), f.root.e.read().tolist(),
                                   dict(f.root.c.get_enum()), f.root.c.read().tolist())]
            with pytest.raises(TypeError, match="not of an enumerated type"):
                f.root.plain.get_enum()
    assert seen["hyperslab"] == seen["tables"]
    with h5py.File(path) as h5:
        assert list(h5py.check_enum_dtype(h5["e"].dtype)) == ["b", "a", "c"]
        if writer is hyperslab:  # PyTables stores a big-endian enum's values byteswapped
            assert h5py.check_enum_dtype(h5["c"].dtype) == {"y": 5, "x": 3}
            assert h5["c"].dtype.byteorder == ">" and h5["c"].fillvalue == 5

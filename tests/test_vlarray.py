"""VLArray: ragged rows stored as HDF5 variable-length data, as PyTables stores them.

PyTables and h5py are the oracles, both ways: what PyTables writes hyperslab reads, what
hyperslab writes PyTables and h5py read, and both libraries make the same HDF5 objects
(element types, chunks, filter pipelines, fill settings, attributes and their types).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.errors import HDF5ExtError

LIBS = {"hyperslab": hyperslab, "tables": tables}


def _enum_atom(lib: ModuleType) -> Any:
    return lib.EnumAtom(["red", "green", "blue"], "green", base="uint8")


# name -> (atom factory, create kwargs, rows appended, flavor)
CASES: dict[str, tuple[Callable[[ModuleType], Any], dict[str, Any], list[Any], str]] = {
    "int32": (lambda lib: lib.Int32Atom(), {}, [[1, 2, 3], [], np.arange(5, dtype="i4")],
              "numpy"),
    "int32_zlib_shuffle": (lambda lib: lib.Int32Atom(),
                           {"filters": ("zlib", 5, True)}, [[7] * 40, [1]], "numpy"),
    "float64_blosc": (lambda lib: lib.Float64Atom(), {"filters": ("blosc", 5, False)},
                      [[1.5, -2.0], []], "numpy"),
    "int16_big": (lambda lib: lib.Int16Atom(), {"byteorder": "big"}, [[1, 256, -3]], "numpy"),
    "float64_2x3": (lambda lib: lib.Float64Atom(shape=(2, 3)), {},
                    [np.arange(12.0).reshape(2, 2, 3), np.ones((2, 3))], "numpy"),
    "int32_2_big": (lambda lib: lib.Int32Atom(shape=(2,)), {"byteorder": "big"},
                    [[[1, 2], [3, 4]], []], "numpy"),
    "string3": (lambda lib: lib.StringAtom(itemsize=3), {}, [[b"ab", b"cde"], [b"x"]],
                "numpy"),
    "bool": (lambda lib: lib.BoolAtom(), {}, [[True, False, True]], "numpy"),
    "enum": (_enum_atom, {}, [[0, 1, 2, 1]], "numpy"),
    "complex128": (lambda lib: lib.ComplexAtom(16), {}, [[1 + 2j, -3j]], "numpy"),
    "int8_python": (lambda lib: lib.Int8Atom(), {}, [[1, -2], []], "python"),
    "vlstring": (lambda lib: lib.VLStringAtom(), {}, [b"hello", b"", b"\x00\xff"], "numpy"),
    "vlunicode": (lambda lib: lib.VLUnicodeAtom(), {}, ["h\xe9llo \u20ac", "", "a"], "numpy"),
    "object": (lambda lib: lib.ObjectAtom(), {}, [{"a": 1}, [1, 2], None], "numpy"),
}


def _write(lib: ModuleType, path: Path, names: list[str] | None = None) -> None:
    with lib.open_file(str(path), "w") as f:
        for name in names or list(CASES):
            atom, kwargs, rows, flavor = CASES[name]
            kwargs = dict(kwargs)
            if "filters" in kwargs:
                complib, level, shuffle = kwargs["filters"]
                kwargs["filters"] = lib.Filters(level, complib=complib, shuffle=shuffle)
            vla = f.create_vlarray("/", name, atom(lib), title=f"title {name}", **kwargs)
            if flavor != "numpy":
                vla.flavor = flavor
            for row in rows:
                vla.append(row)


def _expected(name: str) -> list[Any]:
    atom, _kwargs, rows, _flavor = CASES[name]
    if name in ("vlstring", "vlunicode", "object"):
        return rows
    dtype = atom(tables).dtype
    return [np.array(row, dtype=dtype.base).reshape((-1, *dtype.shape)) for row in rows]


def _assert_rows(name: str, got: list[Any]) -> None:
    expected = _expected(name)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if isinstance(e, np.ndarray):
            if CASES[name][3] == "python":
                assert g == e.tolist()
            else:
                assert isinstance(g, np.ndarray)
                assert g.dtype == e.dtype and g.dtype.isnative
                np.testing.assert_array_equal(g, e)
        else:
            assert g == e and type(g) is type(e)


def _describe(node: Any) -> dict[str, Any]:
    atom = node.atom
    return {
        "atom": type(atom).__name__, "type": atom.type, "shape": tuple(atom.shape),
        "nrows": int(node.nrows), "node_shape": tuple(int(n) for n in node.shape),
        "chunkshape": tuple(int(c) for c in node.chunkshape), "title": str(node.title),
        "byteorder": node.byteorder, "flavor": node.flavor,
        "complevel": node.filters.complevel, "complib": node.filters.complib,
        "shuffle": node.filters.shuffle,
        "enum": dict(node.get_enum()) if atom.kind == "enum" else None,
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for libname, lib in LIBS.items():
        path = tmp_path_factory.mktemp(libname) / "vlarrays.h5"
        _write(lib, path)
        out[libname] = path
    return out


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize(("writer", "reader"), [("tables", "hyperslab"),
                                                ("hyperslab", "tables"),
                                                ("hyperslab", "hyperslab")])
def test_rows_read_back(files: dict[str, Path], name: str, writer: str, reader: str) -> None:
    with LIBS[reader].open_file(str(files[writer])) as f:
        node = f.get_node("/" + name)
        assert type(node).__name__ == "VLArray"
        _assert_rows(name, node.read())
        _assert_rows(name, [node[i] for i in range(node.nrows)])
        _assert_rows(name, list(node))


@pytest.mark.parametrize("name", list(CASES))
def test_same_description_in_both_libraries(files: dict[str, Path], name: str) -> None:
    """Each library describes the other's VLArray as its own (atom, chunks, order, ...)."""
    seen = []
    for path in files.values():
        for lib in LIBS.values():
            with lib.open_file(str(path)) as f:
                seen.append(_describe(f.get_node("/" + name)))
    assert all(s == seen[0] for s in seen), seen


def _layout(dset: h5py.Dataset) -> dict[str, Any]:
    vtype = dset.id.get_type()
    element = vtype.get_super()
    dcpl = dset.id.get_create_plist()
    attrs = {}
    for key in dset.attrs:
        aid = h5py.h5a.open(dset.id, key.encode())
        atype = aid.get_type()
        attrs[key] = (dset.attrs[key] if aid.get_space().get_simple_extent_type() != 2
                      else None, atype.get_class(), atype.get_size(), atype.get_cset())
    inner = element
    while inner.get_class() == h5py.h5t.ARRAY:
        inner = inner.get_super()
    return {
        "class": vtype.get_class(),
        "element": (element.get_class(), element.get_size(),
                    element.get_array_dims() if element.get_class() == h5py.h5t.ARRAY
                    else None),
        "inner": (inner.get_class(), inner.get_size(),
                  inner.get_order() if inner.get_class() in (h5py.h5t.INTEGER, h5py.h5t.FLOAT)
                  else None,
                  [inner.get_member_name(i) for i in range(inner.get_nmembers())]
                  if inner.get_class() == h5py.h5t.ENUM else None,
                  inner.get_strpad() if inner.get_class() == h5py.h5t.STRING else None),
        "shape": dset.shape, "maxshape": dset.maxshape, "chunks": dset.chunks,
        "filters": [dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())],
        "fill": (dcpl.fill_value_defined(), dcpl.get_fill_time(), dcpl.get_alloc_time()),
        "attrs": attrs,
    }


@pytest.mark.parametrize("name", list(CASES))
def test_same_hdf5_layout_as_pytables(files: dict[str, Path], name: str) -> None:
    with h5py.File(files["tables"], "r") as theirs, h5py.File(files["hyperslab"], "r") as ours:
        assert _layout(ours[name]) == _layout(theirs[name])


@pytest.mark.parametrize("name", list(CASES))
def test_h5py_reads_our_rows_as_pytables_rows(files: dict[str, Path], name: str) -> None:
    """h5py gets the same bytes, in the same dtypes, from our file as from PyTables'
    (shaped atoms of the non-native order included: PyTables stores those unconverted)."""
    rows = {}
    for libname, path in files.items():
        with h5py.File(path, "r") as f:
            rows[libname] = [(g.dtype, g.shape, g.tobytes()) for g in f[name][...]]
    assert rows["hyperslab"] == rows["tables"]
    if name in ("vlstring", "vlunicode", "object") or "big" in name or name == "bool":
        return
    with h5py.File(files["hyperslab"], "r") as f:
        for got, expected in zip(f[name][...], _expected(name), strict=True):
            np.testing.assert_array_equal(got, expected)


def test_pickles_and_code_points_as_pytables_stores_them(files: dict[str, Path]) -> None:
    with h5py.File(files["hyperslab"], "r") as f:
        assert pickle.loads(f["object"][0].tobytes()) == {"a": 1}
        codes = f["vlunicode"][0]
        assert "".join(map(chr, codes)) == "h\xe9llo \u20ac"


def test_pytables_appends_to_our_vlarray(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    _write(hyperslab, path, ["int32", "vlunicode"])
    with tables.open_file(str(path), "a") as f:
        f.root.int32.append([9, 9])
        f.root.vlunicode.append("z\u20ac")
    with hyperslab.open_file(path, "a") as f:
        assert f.root.int32[-1].tolist() == [9, 9]
        assert f.root.vlunicode[-1] == "z\u20ac"
        f.root.int32.append([5])
    with tables.open_file(str(path)) as f:
        assert f.root.int32.nrows == 5 and f.root.int32[4].tolist() == [5]


@pytest.fixture
def ints(h5file: hyperslab.File) -> Any:
    vla = h5file.create_vlarray("/", "v", hyperslab.Int32Atom())
    for i in range(10):
        vla.append(list(range(i)))
    return vla


def test_selections(ints: Any) -> None:
    rows = [list(range(i)) for i in range(10)]
    assert ints[-1].tolist() == rows[-1]
    assert [r.tolist() for r in ints[2:9:3]] == rows[2:9:3]
    assert [r.tolist() for r in ints[[1, -2, 3]]] == [rows[1], rows[-2], rows[3]]
    mask = np.arange(10) % 4 == 0
    assert [r.tolist() for r in ints[mask]] == [rows[i] for i in np.flatnonzero(mask)]
    assert [r.tolist() for r in ints.read(3, 7, 2)] == rows[3:7:2]
    assert [r.tolist() for r in ints.read(4)] == [rows[4]]
    assert ints.read(5, 5) == []
    numbers = []
    for row in ints.iterrows(1, 8, 3):
        numbers.append(ints.nrow)
        assert row.tolist() == rows[ints.nrow]
    assert numbers == [1, 4, 7]
    assert ints.shape == (10,) and len(ints) == 10
    assert ints.get_row_size(3) == 12
    assert ints.size_in_memory == 4 * sum(range(10))
    with pytest.raises(IndexError):
        ints[10]
    with pytest.raises(ValueError, match="negative"):
        ints[::-1]
    with pytest.raises(IndexError):
        ints[2.5]


def test_setitem_keeps_row_lengths(ints: Any) -> None:
    ints[3] = [7, 8, 9]
    ints[4] = [1]  # broadcast into the row
    ints[1:3] = [[5], [6, 6]]
    assert ints[3].tolist() == [7, 8, 9]
    assert ints[4].tolist() == [1, 1, 1, 1]
    assert [r.tolist() for r in ints[1:3]] == [[5], [6, 6]]
    with pytest.raises(ValueError, match="larger than number of elements"):
        ints[2] = [1, 2, 3]
    with pytest.raises(IndexError):
        ints[10] = [1]


def test_setitem_pseudo_atom(h5file: hyperslab.File) -> None:
    vla = h5file.create_vlarray("/", "s", hyperslab.VLStringAtom())
    vla.append(b"abc")
    vla[0] = b"xyz"
    assert vla[0] == b"xyz"
    with pytest.raises(TypeError):
        vla.append("text, not bytes")


def test_creation_errors(h5file: hyperslab.File) -> None:
    with pytest.raises(ValueError, match="zero"):
        h5file.create_vlarray("/", "a", hyperslab.Int32Atom(shape=(0,)))
    with pytest.raises(ValueError, match="rank"):
        h5file.create_vlarray("/", "b", hyperslab.Int32Atom(), chunkshape=(2, 2))
    with pytest.raises(ValueError, match="atom"):
        h5file.create_vlarray("/", "c")
    with pytest.raises(TypeError, match="consistent"):
        h5file.create_vlarray("/", "d", hyperslab.Int8Atom(), obj=np.arange(3))
    with pytest.raises(HDF5ExtError):
        h5file.create_vlarray("/", "e", hyperslab.Int32Atom(),
                              filters=hyperslab.Filters(5, complib="blosc2"))
    assert "/e" not in h5file and "/a" not in h5file
    vla = h5file.create_vlarray("/", "f", obj=np.arange(3))
    assert vla.atom == hyperslab.Int64Atom() and vla[0].tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="not a sequence"):
        vla.append(5)
    with pytest.raises(ValueError, match="broadcast"):  # as in PyTables
        h5file.create_vlarray("/", "g", hyperslab.Int32Atom(shape=(2,))).append([1, 2, 3])
    with pytest.raises(NotImplementedError):
        vla.size_on_disk  # noqa: B018
    with pytest.raises(TypeError, match="enumerated"):
        vla.get_enum()


def test_chunkshape_and_expectedrows_as_pytables(tmp_path: Path) -> None:
    shapes = {}
    for libname, lib in LIBS.items():
        with lib.open_file(str(tmp_path / f"{libname}.h5"), "w") as f:
            shapes[libname] = [
                f.create_vlarray("/", "a", lib.Int32Atom(), chunkshape=13).chunkshape,
                f.create_vlarray("/", "b", lib.Float64Atom(shape=(3,)),
                                 expectedrows=10**7).chunkshape,
                f.create_vlarray("/", "c", lib.ObjectAtom()).chunkshape,
            ]
    assert shapes["hyperslab"] == [tuple(int(c) for c in s) for s in shapes["tables"]]


def test_copy_with_options_keeps_rows_and_flavor(h5file: hyperslab.File) -> None:
    vla = h5file.create_vlarray("/", "v", hyperslab.Int16Atom(shape=(2,)))
    vla.flavor = "python"
    for i in range(6):
        vla.append([[i, i]] * i)
    copy = vla.copy("/", "w", start=1, step=2, filters=hyperslab.Filters(1))
    assert copy.flavor == "python" and copy.filters.complevel == 1
    assert copy.read() == [[[i, i]] * i for i in range(1, 6, 2)]


def test_time_vlarrays_read_as_pytables_reads_them(tmp_path: Path) -> None:
    """h5py cannot read vlen H5T_TIME data: read unconverted (tests/test_time_vlarray.py)."""
    path = tmp_path / "t.h5"
    with tables.open_file(str(path), "w") as f:
        f.create_vlarray("/", "t", tables.Time64Atom()).append([1.5])
    with hyperslab.open_file(path) as f:
        assert f.root.t.atom == hyperslab.Time64Atom() and f.root.t.nrows == 1
        np.testing.assert_array_equal(f.root.t.read(), [[1.5]])


def test_repr_like_pytables(ints: Any) -> None:
    lines = repr(ints).splitlines()
    assert lines[1:] == ["  atom = Int32Atom(shape=(), dflt=0)", "  byteorder = 'little'",
                         "  nrows = 10", "  flavor = 'numpy'"]

"""h5py compatibility, both ways: any HDF5 reader (h5py + hdf5plugin) reads hyperslab's
data, and hyperslab opens files written by plain h5py as PyTables opens them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from compat_kit import (
    ALL_ATOMS,
    H5PY_DTYPES,
    AtomSpec,
    assert_same_value,
    build_filters,
    build_h5py_layouts,
    build_leaves,
    describe_node,
    filter_variants,
)

FILTER_VARIANTS = dict(filter_variants())


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("compat_h5py")


def _h5py_view(expected: Any) -> np.ndarray:
    """What h5py reads for data hyperslab wrote: PyTables' bools are 8-bit bitfields."""
    data = np.asarray(expected)
    if data.dtype.kind == "b":
        return data.astype(np.uint8)
    return data


# ---------------------------------------------------------------------------------- h5py reads ours
@pytest.mark.parametrize("spec", ALL_ATOMS, ids=lambda s: s.id)
def test_hyperslab_leaves_read_by_h5py(folder: Path, spec: AtomSpec) -> None:
    path = folder / f"leaves-{spec.id}.h5"
    expected = build_leaves(hyperslab, path, spec)
    with h5py.File(path, "r") as h:
        for name, want in expected.items():
            dset = h[name]
            got = np.asarray(dset[()])
            want = _h5py_view(want)
            assert got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
            element = dset.dtype.base if dset.dtype.subdtype is None else dset.dtype.subdtype[0]
            assert element.kind == want.dtype.kind, name
            assert element.itemsize == want.dtype.itemsize, name
            big = name.startswith("big") and element.itemsize > 1
            assert (element.byteorder == ">") == big, name
            if spec.kwargs.get("shape"):
                from_obj = name in ("array", "scalar", "empty", "pylist", "big_array")
                assert (dset.dtype.subdtype is None) == from_obj, name


@pytest.mark.parametrize("variant", list(FILTER_VARIANTS))
def test_hyperslab_filters_read_by_h5py(folder: Path, variant: str) -> None:
    """Every complib and shuffle variant decodes through h5py + hdf5plugin's filters."""
    kwargs = FILTER_VARIANTS[variant]
    path = folder / f"filters-{variant.replace(':', '_')}.h5"
    expected = build_filters(hyperslab, path, kwargs)
    lossy = kwargs.get("least_significant_digit") is not None
    with h5py.File(path, "r") as h:
        assert hdf5plugin.FILTERS  # registered: Blosc (32001) and Blosc2 (32026)
        for name, want in expected.items():
            got = h[name][()]
            assert got.dtype == want.dtype, name
            if lossy and want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, atol=0.5 * 10**-2)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)


# ---------------------------------------------------------------------------------- we read h5py's
def _pytables_view(path: Path) -> Any:
    """Open with PyTables, ignoring its warnings about datasets it cannot load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tables.open_file(str(path), "r")


@pytest.mark.parametrize("dtype", H5PY_DTYPES)
def test_h5py_layouts_read_by_hyperslab(folder: Path, dtype: str) -> None:
    """Contiguous, chunked, extendable, compressed, 0-d, empty, filled and H5T_ARRAY
    datasets of one dtype: hyperslab gives h5py's data and PyTables' description."""
    path = folder / f"h5py-{dtype.replace('>', 'be')}.h5"
    written = build_h5py_layouts(path, dtype)
    with hyperslab.open_file(path, "r") as f, _pytables_view(path) as t:
        for name, want in written.items():
            ours, theirs = f.get_node("/" + name), t.get_node("/" + name)
            assert describe_node(ours) == describe_node(theirs), name
            got = ours.read()
            if np.dtype(dtype).kind == "b":  # h5py's bools are an enum: PyTables' EnumAtom
                want = want.astype(np.int8)
            native = want.dtype.base.newbyteorder("=") if want.dtype.byteorder == ">" else None
            assert_same_value(got, want.astype(native) if native else want, name)
            if not (dtype == ">c16" and name.startswith("subarray")):
                # (PyTables reads big-endian complex array types byte-swapped: its bug)
                assert_same_value(got, theirs.read(), name)


def _plugin_datasets() -> Iterator[tuple[str, dict[str, Any]]]:
    for cname in ("blosclz", "lz4", "lz4hc", "zlib", "zstd"):
        for shuffle, label in ((0, "noshuffle"), (1, "shuffle"), (2, "bitshuffle")):
            yield f"blosc-{cname}-{label}", dict(hdf5plugin.Blosc(cname, 4, shuffle))
            yield f"blosc2-{cname}-{label}", dict(hdf5plugin.Blosc2(cname, 4, shuffle))
    yield "bzip2", dict(hdf5plugin.BZip2(blocksize=5))
    yield "gzip", {"compression": "gzip", "compression_opts": 1}
    yield "gzip-shuffle-fletcher32", {"compression": "gzip", "shuffle": True,
                                      "fletcher32": True}
    yield "shuffle-only", {"shuffle": True}
    yield "lzf", {"compression": "lzf"}
    yield "zstd", dict(hdf5plugin.Zstd())
    yield "lz4", dict(hdf5plugin.LZ4())


PLUGIN_DATASETS = dict(_plugin_datasets())
FOREIGN = {"lzf": "lzf", "zstd": "zstd", "lz4": "lz4"}
"""Compressors PyTables does not know (it reports no compression); hyperslab names them."""


@pytest.fixture(scope="module")
def plugin_file(folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """One file with a dataset per h5py/hdf5plugin filter pipeline (2-D and 1-D chunks)."""
    path = folder / "plugins.h5"
    data = {"2d": np.arange(1200, dtype="f8").reshape(40, 30) / 3,
            "1d": np.arange(500, dtype="i4") % 17}
    with h5py.File(path, "w") as h:
        for name, kwargs in PLUGIN_DATASETS.items():
            h.create_dataset(f"{name}-2d", data=data["2d"], chunks=(16, 30), **kwargs)
            h.create_dataset(f"{name}-1d", data=data["1d"], chunks=(100,), **kwargs)
    return path, data


@pytest.mark.parametrize("name", list(PLUGIN_DATASETS))
def test_h5py_plugin_filters_read_by_hyperslab(
    plugin_file: tuple[Path, dict[str, np.ndarray]], name: str
) -> None:
    path, data = plugin_file
    with hyperslab.open_file(path, "r") as f, _pytables_view(path) as t:
        for rank in ("2d", "1d"):
            ours, theirs = f.get_node(f"/{name}-{rank}"), t.get_node(f"/{name}-{rank}")
            assert_same_value(ours.read(), data[rank], name)
            assert_same_value(ours[3:17:4], data[rank][3:17:4], name)
            if name in FOREIGN:
                # A difference: hyperslab names a compressor PyTables does not know
                # (complevel -1); PyTables reports Filters() with complevel 0.
                assert ours.filters.complib == FOREIGN[name]
                assert ours.filters.complevel == -1
                assert theirs.filters.complevel == 0
                continue
            assert repr(ours.filters) == repr(theirs.filters), name
            description = describe_node(ours)
            assert description == describe_node(theirs), name


def test_plugin_filters_named_as_pytables_names_them(
    plugin_file: tuple[Path, dict[str, np.ndarray]]
) -> None:
    path, _ = plugin_file
    with hyperslab.open_file(path, "r") as f:
        filters = f.get_node("/blosc2-zstd-bitshuffle-2d").filters
        assert (filters.complib, filters.complevel, filters.bitshuffle) == (
            "blosc2:zstd", 4, True)
        filters = f.get_node("/gzip-shuffle-fletcher32-1d").filters
        assert (filters.complib, filters.complevel, filters.shuffle, filters.fletcher32) == (
            "zlib", 4, True, True)
        filters = f.get_node("/blosc-lz4hc-shuffle-1d").filters
        assert (filters.complib, filters.shuffle) == ("blosc:lz4hc", True)


def test_h5py_tree_and_attributes_read_by_hyperslab(tmp_path: Path) -> None:
    """Groups without PyTables' attributes, nested; attributes of h5py's own types."""
    path = tmp_path / "tree.h5"
    with h5py.File(path, "w") as h:
        g = h.create_group("a/b/c")
        g["x"] = np.arange(3)
        h.create_group("empty")
        h.attrs.update({
            "int": 3, "float": 2.5, "str": "text ✓", "bytes": b"raw", "array": np.arange(4),
            "strings": ["a", "bc"], "complex": 1 + 2j, "fixed": np.array(b"fixed", "S8"),
            "u8": np.uint64(5), "empty_f8": h5py.Empty("f8"),
        })
        h["a"].attrs["note"] = "on a group"
        h["a/b/c/x"].attrs["unit"] = "m"
        h["a/b/c/x"].attrs["big"] = np.arange(3, dtype=">i4")
        h["a/b/c/x"].attrs["flag"] = True
        h["a/b/c/x"].attrs["flags"] = np.array([True, False])
    with hyperslab.open_file(path, "r") as f, _pytables_view(path) as t, \
            warnings.catch_warnings():
        # PyTables warns about (and drops) the h5py bool attributes: they are checked below.
        warnings.simplefilter("ignore", tables.DataTypeWarning)
        ours = {node._v_pathname: describe_node(node) for node in f.walk_nodes("/")}
        theirs = {node._v_pathname: describe_node(node) for node in t.walk_nodes("/")}
        assert ours == theirs
        assert ours["/a/b"]["class"] == "Group" and ours["/"]["title"] == ""
        for name in ("int", "float", "str", "bytes", "array", "strings", "complex", "fixed",
                     "u8", "empty_f8"):
            assert_same_value(f.root._v_attrs[name], t.root._v_attrs[name], name)
        assert f.root.a._v_attrs.note == "on a group"
        x = f.get_node("/a/b/c/x")
        assert x._v_attrs.unit == "m"
        # Differences, documented in storage/attributes.py: the true values of big-endian
        # numbers, and h5py's bools (PyTables warns and returns None).
        np.testing.assert_array_equal(x._v_attrs.big, [0, 1, 2])
        assert x._v_attrs.flag is np.True_
        assert_same_value(x._v_attrs.flags, np.array([True, False]), "flags")


def test_h5py_special_datasets(tmp_path: Path) -> None:
    """Enums, variable-length strings and null dataspaces, as far as PyTables goes."""
    path = tmp_path / "special.h5"
    with h5py.File(path, "w") as h:
        enum = h5py.enum_dtype({"A": 0, "B": 1, "C": 2}, basetype="u1")
        h.create_dataset("enum", data=np.array([0, 2, 1], "u1"), dtype=enum)
        h.create_dataset("vlen", data=["a", "bc"], dtype=h5py.string_dtype())
        h["null"] = h5py.Empty("f8")
    with hyperslab.open_file(path, "r") as f, _pytables_view(path) as t:
        ours, theirs = f.root.enum, t.root.enum
        assert describe_node(ours) == describe_node(theirs)
        assert_same_value(ours.read(), theirs.read(), "enum")
        with pytest.warns(UserWarning, match="variable length strings are not supported"):
            assert type(t.root.vlen).__name__ == "UnImplemented"
        with pytest.warns(UserWarning, match="``/vlen`` is of an unsupported type"):
            assert type(f.root.vlen).__name__ == "UnImplemented"
        with pytest.raises(NotImplementedError, match="/vlen"):
            f.root.vlen.read()
        # A difference: PyTables opens a null dataspace as a 0-d Array and reads
        # uninitialized memory; hyperslab reports it as UnImplemented.
        assert type(t.root.null).__name__ == "Array"
        with pytest.warns(UserWarning, match="it will become an ``UnImplemented`` node"):
            assert type(f.root.null).__name__ == "UnImplemented"


def test_a_class_attribute_naming_no_leaf_class_is_guessed_as_pytables_does(
        tmp_path: Path) -> None:
    """Another program's CLASS, or a damaged one (``CARRAY`` read as ``CASRAY``):
    PyTables classifies the dataset as if it had none, and so does hyperslab."""
    path = tmp_path / "class.h5"
    with h5py.File(path, "w") as h:
        for name, cls in (("spectrum", b"SPECTRUM"), ("damaged", b"CASRAY")):
            h.create_dataset(name, data=np.arange(12.0).reshape(3, 4), chunks=(2, 2),
                             maxshape=(None, 4)).attrs["CLASS"] = np.bytes_(cls)
    with hyperslab.open_file(path, "r") as f, _pytables_view(path) as t:
        for name in ("spectrum", "damaged"):
            ours, theirs = f.get_node("/" + name), t.get_node("/" + name)
            assert type(ours).__name__ == type(theirs).__name__ == "EArray"
            assert_same_value(ours.read(), theirs.read(), name)


def test_h5py_edits_hyperslab_file(tmp_path: Path) -> None:
    """h5py can append to our EArrays and write our CArrays; we read what it wrote."""
    path = tmp_path / "edit.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_earray("/", "e", hyperslab.Int16Atom(), shape=(0, 2), chunkshape=(4, 2),
                        filters=hyperslab.Filters(3, "blosc2:zstd"))
        f.create_carray("/", "c", hyperslab.BoolAtom(), shape=(5,))
    with h5py.File(path, "a") as h:
        h["e"].resize((3, 2))
        h["e"][...] = [[1, 2], [3, 4], [5, 6]]
        h["c"][1] = 1
    with hyperslab.open_file(path, "r") as f:
        assert f.root.e.nrows == 3
        np.testing.assert_array_equal(f.root.e[:], [[1, 2], [3, 4], [5, 6]])
        assert_same_value(f.root.c[:], np.array([False, True, False, False, False]), "c")



"""PyTables compatibility, both ways: files written by hyperslab open in PyTables and
PyTables' files open in hyperslab, with the same nodes, attributes, filters and data.

Every check runs on the same trees built once by each library (``compat_kit``): the node
descriptions PyTables and hyperslab give of one file must be equal, the data must be what
was written, and the two files must have the same HDF5 layout (types, dataspaces, chunks,
filter pipelines with their cd_values, fill values, attribute types).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from compat_kit import (
    ALL_ATOMS,
    ATTRIBUTE_VALUES,
    BIG_ENDIAN_ATTRIBUTES,
    AtomSpec,
    assert_reads,
    assert_same_layout,
    assert_same_nodes,
    assert_same_value,
    atom_repr,
    build_attributes,
    build_filters,
    build_groups,
    build_leaves,
    describe_node,
    filter_variants,
    sample,
)

LIBS = {"hyperslab": hyperslab, "tables": tables}
FILTER_VARIANTS = dict(filter_variants())

Built = tuple[Path, Any]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Built]]:
    """Build a tree once per (library, builder, argument); return (path, expected data)."""
    cache: dict[tuple[str, str, str], Built] = {}
    folder = tmp_path_factory.mktemp("compat_pytables")

    def get(libname: str, builder: Callable[..., Any], key: str, *args: Any) -> Built:
        ident = (libname, builder.__name__, key)
        if ident not in cache:
            path = folder / f"{len(cache)}-{libname}.h5"
            cache[ident] = (path, builder(LIBS[libname], path, *args))
        return cache[ident]

    yield get


def _open_both(path: Path) -> tuple[Any, Any]:
    return hyperslab.open_file(path, "r"), tables.open_file(str(path), "r")


# ---------------------------------------------------------------------------------- leaves
@pytest.mark.parametrize("writer", ["hyperslab", "tables"])
@pytest.mark.parametrize("spec", ALL_ATOMS, ids=lambda s: s.id)
def test_leaves_open_alike(built: Callable[..., Built], spec: AtomSpec, writer: str) -> None:
    """Data, shapes, dtypes, atoms, chunkshapes, byteorders, nrows, maindim/extdim, flavor,
    titles and attributes: what PyTables and hyperslab say of one file is the same."""
    path, expected = built(writer, build_leaves, spec.id, spec)
    ours, theirs = _open_both(path)
    with ours, theirs:
        assert_same_nodes(ours, theirs)
        assert_reads(ours, expected)
        assert_reads(theirs, expected)


@pytest.mark.parametrize("spec", ALL_ATOMS, ids=lambda s: s.id)
def test_leaves_same_layout_as_pytables(built: Callable[..., Built], spec: AtomSpec) -> None:
    ours, _ = built("hyperslab", build_leaves, spec.id, spec)
    theirs, _ = built("tables", build_leaves, spec.id, spec)
    assert_same_layout(ours, theirs)


def test_leaf_properties_as_pytables_reports(built: Callable[..., Built]) -> None:
    """Spot checks of the values both libraries agree on (so agreement is not vacuous)."""
    spec = AtomSpec("Int32Atom", (), {"shape": (2,)})
    path, _ = built("hyperslab", build_leaves, spec.id, spec)
    with tables.open_file(str(path)) as f:
        ca = f.root.carray
        assert (ca.shape, ca.chunkshape, ca.nrows, ca.maindim) == ((4, 3), (2, 3), 4, 0)
        assert atom_repr(ca.atom) == (
            "Int32Atom(shape=(2,), dflt=array([0, 0], dtype=int32))"
        )
        ea = f.root.earray_dim1
        assert (ea.shape, ea.extdim, ea.maindim, ea.nrows) == ((2, 5), 1, 1, 5)
        assert f.root.big.byteorder == "big" and f.root.array.byteorder == "little"
        assert f.root.array.flavor == "numpy" and f.root.pylist.flavor == "python"
        assert f.title == "leaves of Int32Atom(shape=(2,))"
        assert f.root.earray.title == "earray" and f.root.carray_auto.title == ""
        assert f.root._v_attrs.PYTABLES_FORMAT_VERSION == "2.1"
        assert f.root.earray._v_attrs.EXTDIM == 0 and f.root.earray_dim1._v_attrs.EXTDIM == 1
        assert f.root.array._v_attrs.FLAVOR == "numpy"
        assert (f.root.carray._v_attrs.CLASS, f.root.carray._v_attrs.VERSION) == (
            "CARRAY", "1.1")


def test_shaped_atoms_are_hdf5_array_types(built: Callable[..., Built]) -> None:
    """Int32Atom(shape=(2,)) in a CArray: the dataset keeps the leaf's shape and each element
    is an H5T_ARRAY of 2 ints, as in PyTables (not a dataset of shape + (2,))."""
    spec = AtomSpec("Int32Atom", (), {"shape": (2,)})
    path, _ = built("hyperslab", build_leaves, spec.id, spec)
    with h5py.File(path, "r") as h:
        assert h["carray"].shape == (4, 3)
        assert h["carray"].dtype == np.dtype(("<i4", (2,)))
        assert h["earray"].maxshape == (None, 3)
        assert h["big"].dtype == np.dtype((">i4", (2,)))
    with hyperslab.open_file(path) as f:
        assert f.root.carray.dtype == np.dtype(("<i4", (2,)))
        assert f.root.carray[1].shape == (3, 2)
        assert f.root.carray[::-2, [0, 2]].shape == (2, 2, 2)


def test_pytables_shaped_bool_atom_is_boolatom(tmp_path: Path) -> None:
    """PyTables' BoolAtom(shape=(2,)) is an H5T_ARRAY of 8-bit bitfields: BoolAtom here."""
    path = tmp_path / "bools.h5"
    with tables.open_file(str(path), "w") as f:
        ca = f.create_carray("/", "b", tables.BoolAtom(shape=(2,)), shape=(3,))
        ca[1] = [True, False]
    with hyperslab.open_file(path) as f:
        node = f.root.b
        assert atom_repr(node.atom) == "BoolAtom(shape=(2,), dflt=array([False, False]))"
        assert node.dtype == np.dtype(("?", (2,)))
        np.testing.assert_array_equal(node[:], [[False, False], [True, False], [False, False]])


def test_pytables_shaped_atom_fill_value(tmp_path: Path) -> None:
    """An H5T_ARRAY fill value (h5py cannot read it) becomes the atom's dflt and fills."""
    path = tmp_path / "fill.h5"
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "i", tables.Int32Atom(shape=(2,), dflt=7), shape=(3,))
        f.create_carray("/", "b", tables.BoolAtom(shape=(2,), dflt=True), shape=(2,))
    with hyperslab.open_file(path) as f, tables.open_file(str(path)) as t:
        for name in ("i", "b"):
            ours, theirs = f.get_node("/" + name), t.get_node("/" + name)
            assert atom_repr(ours.atom) == atom_repr(theirs.atom)
            assert_same_value(ours.read(), theirs.read(), name)
        np.testing.assert_array_equal(f.root.i[:], np.full((3, 2), 7, dtype="i4"))


def test_shaped_atom_with_nonzero_default_is_refused(tmp_path: Path) -> None:
    """A difference: h5py cannot store a fill value of an HDF5 array type, so hyperslab
    refuses a shaped atom with a non-zero default instead of silently losing it."""
    with hyperslab.open_file(tmp_path / "f.h5", "w") as f:
        with pytest.raises(NotImplementedError, match="non-zero fill value"):
            f.create_carray("/", "x", hyperslab.Int32Atom(shape=(2,), dflt=3), shape=(4,))
        assert "x" not in f.root
        shaped = f.create_earray("/", "y", hyperslab.Float64Atom(shape=(2,)), shape=(0,))
        shaped.append([[1.0, 2.0]])
        with pytest.raises(ValueError, match="rank of the appended object"):
            shaped.append([1.0, 2.0])


def test_array_of_shaped_atom_is_flattened_like_pytables(tmp_path: Path) -> None:
    """An Array made from a shaped atom and a shape holds plain elements, zeros (PyTables
    ignores the atom's dflt there)."""
    for lib in (hyperslab, tables):
        path = tmp_path / f"{lib.__name__}.h5"
        with lib.open_file(str(path), "w") as f:
            f.create_array("/", "a", atom=lib.Int16Atom(shape=(2,), dflt=3), shape=(3,))
        with hyperslab.open_file(path) as f, tables.open_file(str(path)) as t:
            assert describe_node(f.root.a) == describe_node(t.root.a)
            assert f.root.a.shape == (3, 2)
            assert_same_value(f.root.a.read(), np.zeros((3, 2), dtype="i2"), "a")
    flavors = []
    for lib in (hyperslab, tables):
        with h5py.File(tmp_path / f"{lib.__name__}.h5", "r") as h:
            flavors.append(h["a"].attrs.get("FLAVOR"))
    assert flavors[1] == b"numpy"
    assert flavors[0] == flavors[1]


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_refused_by_both(tmp_path: Path, lib: ModuleType) -> None:
    """Zero-length CArrays, and a shaped atom given with obj, fail in both libraries."""
    with lib.open_file(str(tmp_path / "z.h5"), "w") as f:
        with pytest.raises(ValueError, match="zero-dimensions"):
            f.create_carray("/", "c", lib.Int8Atom(), shape=(0, 2))
        for create in (f.create_carray, f.create_earray):
            with pytest.raises(TypeError, match="not consistent"):
                create("/", "s", atom=lib.Int32Atom(shape=(2,)), obj=np.zeros((3, 2), "i4"))
        assert "c" not in f.root and "s" not in f.root


# ---------------------------------------------------------------------------------- filters
@pytest.mark.parametrize("writer", ["hyperslab", "tables"])
@pytest.mark.parametrize("variant", list(FILTER_VARIANTS))
def test_filters_open_alike(built: Callable[..., Built], variant: str, writer: str) -> None:
    kwargs = FILTER_VARIANTS[variant]
    path, expected = built(writer, build_filters, variant, kwargs)
    ours, theirs = _open_both(path)
    with ours, theirs:
        assert_same_nodes(ours, theirs, data=False)
        for node in ("/carray", "/carray_auto", "/earray", "/group/inherited"):
            _assert_filters_as_written(ours.get_node(node).filters, kwargs, node)
        want = repr(tables.Filters(**kwargs))  # groups keep them whole (packed attribute)
        assert repr(ours.root.group._v_filters) == want
        assert repr(ours.root.group.subgroup._v_filters) == want
        lossy = kwargs.get("least_significant_digit") is not None
        for name, want_data in expected.items():
            got, theirs_data = ours.get_node("/" + name).read(), theirs.get_node("/" + name)
            assert_same_value(got, theirs_data.read(), name)
            if lossy and writer == "tables" and want_data.dtype == np.uint8:
                continue  # PyTables' quantization garbles uint8 data (its bug)
            if lossy and want_data.dtype.kind == "f":
                np.testing.assert_allclose(got, want_data, atol=0.5 * 10**-2)
            else:
                assert_same_value(got, want_data, name)


def _assert_filters_as_written(filters: Any, kwargs: dict[str, Any], what: str) -> None:
    """Filters read back from a file are the ones written, but for what is not stored:
    the quantization digits, and the codec of plain 'blosc2', read back as BloscLZ when
    the leaf has 2 dimensions or more (HDF5's Blosc2 filter then records the codec)."""
    want = tables.Filters(**kwargs)
    got = (filters.complevel, filters.shuffle, filters.bitshuffle, filters.fletcher32)
    assert got == (want.complevel, want.shuffle, want.bitshuffle, want.fletcher32), what
    complibs = {want.complib, "blosc2:blosclz"} if want.complib == "blosc2" else {want.complib}
    assert filters.complib in complibs, what
    assert filters.least_significant_digit is None, what


@pytest.mark.parametrize("variant", list(FILTER_VARIANTS))
def test_filters_same_layout_as_pytables(built: Callable[..., Built], variant: str) -> None:
    """Same filter pipelines (ids, flags, cd_values), chunks and FILTERS attributes."""
    kwargs = FILTER_VARIANTS[variant]
    ours, _ = built("hyperslab", build_filters, variant, kwargs)
    theirs, _ = built("tables", build_filters, variant, kwargs)
    assert_same_layout(ours, theirs)
    with h5py.File(ours, "r") as a, h5py.File(theirs, "r") as b:
        assert a["group"].attrs["FILTERS"] == b["group"].attrs["FILTERS"]


def test_filters_attribute_reads_as_filters(built: Callable[..., Built]) -> None:
    """``attrs.FILTERS`` of a group: PyTables gives a Filters object."""
    kwargs = FILTER_VARIANTS["zlib-shuffle"]
    path, _ = built("tables", build_filters, "zlib-shuffle", kwargs)
    with hyperslab.open_file(path) as f, tables.open_file(str(path)) as t:
        assert repr(t.root.group._v_attrs.FILTERS) == repr(tables.Filters(**kwargs))
        theirs = t.root.group._v_attrs.FILTERS
        ours = f.root.group._v_attrs.FILTERS
        assert not isinstance(ours, (int, np.integer)), "FILTERS must read as Filters"
        assert repr(ours) == repr(theirs)


# ---------------------------------------------------------------------------------- groups
@pytest.mark.parametrize("writer", ["hyperslab", "tables"])
def test_groups_open_alike(built: Callable[..., Built], writer: str) -> None:
    path, _ = built(writer, build_groups, "groups")
    ours, theirs = _open_both(path)
    with ours, theirs:
        assert_same_nodes(ours, theirs)
        assert ours.title == theirs.title == "root title"
        assert ours.root.unicode_title._v_title == "título ✓"
        c = ours.get_node("/a/b/c")
        assert repr(c._v_filters) == repr(tables.Filters(1, "zlib", fletcher32=True))
        assert repr(ours.get_node("/a/b/c/inherit_c").filters) == repr(c._v_filters)
        assert repr(ours.get_node("/a/inherit_root").filters) == repr(
            tables.Filters(complevel=2, complib="blosc"))


def test_groups_same_layout_as_pytables(built: Callable[..., Built]) -> None:
    ours, _ = built("hyperslab", build_groups, "groups")
    theirs, _ = built("tables", build_groups, "groups")
    assert_same_layout(ours, theirs)


def test_group_filters_attribute_written_like_pytables(built: Callable[..., Built]) -> None:
    ours, _ = built("hyperslab", build_groups, "groups")
    theirs, _ = built("tables", build_groups, "groups")
    with h5py.File(ours, "r") as a, h5py.File(theirs, "r") as b:
        written = {name: "FILTERS" in a[name].attrs for name in ("/", "/a", "/a/b", "/a/b/c")}
        expected = {name: "FILTERS" in b[name].attrs for name in written}
    assert expected == {"/": True, "/a": True, "/a/b": True, "/a/b/c": True}
    assert written == expected


def test_carray_sys_attrs_are_ascii(built: Callable[..., Built]) -> None:
    """PyTables writes a new CArray's CLASS/VERSION/TITLE in ASCII, other nodes' in UTF-8."""
    spec = ALL_ATOMS[0]
    ours, _ = built("hyperslab", build_leaves, spec.id, spec)
    theirs, _ = built("tables", build_leaves, spec.id, spec)
    csets = []
    for path in (ours, theirs):
        with h5py.File(path, "r") as h:
            attr = h5py.h5a.open(h["carray"].id, b"CLASS")
            root = h5py.h5a.open(h.id, b"CLASS")
            csets.append((attr.get_type().get_cset(), root.get_type().get_cset()))
    assert csets[1] == (h5py.h5t.CSET_ASCII, h5py.h5t.CSET_UTF8)
    assert csets[0] == csets[1]


# ---------------------------------------------------------------------------------- attributes
@pytest.mark.parametrize("writer", ["hyperslab", "tables"])
def test_attributes_open_alike(built: Callable[..., Built], writer: str) -> None:
    """User attributes of every kind on every node class read back identically."""
    path, _ = built(writer, build_attributes, "attrs", ATTRIBUTE_VALUES)
    ours, theirs = _open_both(path)
    with ours, theirs:
        assert_same_nodes(ours, theirs)
        for node in ("/", "/g", "/g/a", "/c", "/e"):
            attrs = ours.get_node(node)._v_attrs
            extra = ["set_node_attr"] if node == "/g/a" else []
            assert sorted(attrs._f_list("user")) == sorted([*ATTRIBUTE_VALUES, *extra]), node
            for name, value in ATTRIBUTE_VALUES.items():
                _check_attribute(attrs[name], value, f"{node}.{name}")
        assert ours.get_node("/g/a")._v_attrs.set_node_attr == "via file"


def _check_attribute(got: Any, value: Any, what: str) -> None:
    """An attribute reads back as PyTables returns the value written."""
    if isinstance(value, str):
        assert got == value and isinstance(got, str), what
    elif isinstance(value, bool):
        assert isinstance(got, np.bool_) and got == value, what
    elif isinstance(value, (int, float, complex, bytes)) or value is None:
        assert got == value, what
    elif isinstance(value, (list, tuple, dict)):
        assert got == value and type(got) is type(value), what
    elif isinstance(value, np.ndarray) and value.dtype.kind == "U":
        np.testing.assert_array_equal(got, value, err_msg=what)
    elif isinstance(value, np.ndarray) and value.ndim == 0:
        assert_same_value(got, value[()], what)  # PyTables returns 0-d arrays as scalars
    else:
        assert_same_value(got, value, what)


def test_attributes_same_layout_as_pytables(built: Callable[..., Built]) -> None:
    ours, _ = built("hyperslab", build_attributes, "attrs", ATTRIBUTE_VALUES)
    theirs, _ = built("tables", build_attributes, "attrs", ATTRIBUTE_VALUES)
    assert_same_layout(ours, theirs)


def test_big_endian_attributes(tmp_path: Path) -> None:
    """Big-endian attributes keep their type; hyperslab reads the true values, as h5py does
    (PyTables returns them byte-swapped, a PyTables bug)."""
    for lib in (hyperslab, tables):
        path = tmp_path / f"{lib.__name__}.h5"
        build_attributes(lib, path, BIG_ENDIAN_ATTRIBUTES)
        with hyperslab.open_file(path) as f, h5py.File(path, "r") as h:
            for name, value in BIG_ENDIAN_ATTRIBUTES.items():
                got = f.root.g.a._v_attrs[name]
                np.testing.assert_array_equal(got, value)
                np.testing.assert_array_equal(h["g/a"].attrs[name], value)
                assert h["g/a"].attrs[name].dtype.byteorder == ">"


# ---------------------------------------------------------------------------------- edits
def test_pytables_edits_hyperslab_file_and_back(tmp_path: Path) -> None:
    """Alternate writers on one file: each sees the other's appends, writes and attrs."""
    path = tmp_path / "shared.h5"
    data = sample(np.dtype("f4"), (6, 3))
    with hyperslab.open_file(path, "w") as f:
        f.create_earray("/", "e", hyperslab.Float32Atom(), shape=(0, 3),
                        filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True))
        f.root.e.append(data[:2])
    with tables.open_file(str(path), "a") as t:
        t.root.e.append(data[2:4])
        t.root.e._v_attrs.edited_by = "tables"
        t.create_carray("/", "c", obj=data, filters=tables.Filters(1, "zlib"))
    with hyperslab.open_file(path, "a") as f:
        f.root.e.append(data[4:])
        f.root.c[0] = -1
    with tables.open_file(str(path)) as t:
        np.testing.assert_array_equal(t.root.e[:], data)
        assert t.root.e._v_attrs.edited_by == "tables"
        np.testing.assert_array_equal(t.root.c[0], [-1, -1, -1])
        np.testing.assert_array_equal(t.root.c[1:], data[1:])


def test_unknown_filters_read_without_warnings(tmp_path: Path) -> None:
    """A PyTables file written with every complib opens in hyperslab without warnings."""
    path = tmp_path / "all.h5"
    with tables.open_file(str(path), "w") as t:
        for i, complib in enumerate(sorted({k["complib"] for k in FILTER_VARIANTS.values()
                                            if "complib" in k})):
            t.create_carray("/", f"c{i}", obj=np.arange(10), filters=tables.Filters(
                4, complib))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with hyperslab.open_file(path) as f, tables.open_file(str(path)) as t:
            for node in f.walk_nodes("/", "Leaf"):
                other = t.get_node(node._v_pathname)
                assert repr(node.filters) == repr(other.filters)
                np.testing.assert_array_equal(node[:], np.arange(10))


def test_full_width_strings_written_into_pytables_arrays_keep_every_byte(
        tmp_path: Path) -> None:
    """PyTables stores strings NUL-terminated: values of the full width written by
    hyperslab (slices, lists of indices, appends, table rows) keep their last byte."""
    path = tmp_path / "strings.h5"
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "c", tables.StringAtom(3), shape=(6,))
        f.create_earray("/", "e", tables.StringAtom(3), shape=(0, 2))
        f.create_table("/", "t", {"s": tables.StringCol(3)})
    with hyperslab.open_file(path, "a") as f:
        f.root.c[:3] = np.array([b"abc", b"xyz", b"q"])
        f.root.c[[4, 5]] = np.array([b"def", b"ghi"])
        f.root.c[[3]] = b"jkl"
        f.root.e.append(np.array([[b"abc", b"de"], [b"fgh", b"ijk"]]))
        f.root.t.append([(b"abc",), (b"xy",)])
    expected = ([b"abc", b"xyz", b"q", b"jkl", b"def", b"ghi"],
                [[b"abc", b"de"], [b"fgh", b"ijk"]], [b"abc", b"xy"])
    with tables.open_file(str(path)) as f:
        got = (f.root.c[:].tolist(), f.root.e[:].tolist(), f.root.t.col("s").tolist())
    assert got == expected
    with hyperslab.open_file(path) as f:
        assert (f.root.c[:].tolist(), f.root.e[:].tolist(),
                f.root.t.col("s").tolist()) == expected

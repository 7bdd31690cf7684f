"""Small points of PyTables' API that its own test suite checks (index versions, column
attributes, error details, argument checks, warnings), each against PyTables as the
oracle."""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any

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


# ---------------------------------------------------------------------- column attributes
def _described(lib: Any) -> type:
    class Entry(lib.IsDescription):
        freq = lib.Float32Col(attrs={"val": 13.3, "unit": "Hz"})
        labels = lib.StringCol(itemsize=2, attrs={"nbits": 10})

        class nest(lib.IsDescription):
            x = lib.Int8Col(attrs={"u": "m"})

    return Entry


def _column_attrs_session(lib: Any, path: Path) -> list[object]:
    seen: list[object] = []
    with lib.open_file(path, "w") as f:
        t = f.create_table("/", "t", _described(lib))
        t.cols.freq.attrs.extra = np.int32(3)
        t.cols.labels.attrs._f_rename("nbits", "bits")
        seen += [repr(t.cols.freq.attrs), str(t.cols.nest.x.attrs), t.cols.nest.x.attrs.keys()]
    with lib.open_file(path, "a") as f:
        t = f.root.t
        seen += [t.cols.freq.attrs.val, t.cols.freq.attrs["unit"], t.cols.freq.attrs.extra,
                 t.cols.labels.attrs.contains("bits"), t.cols.labels.attrs.contains("nbits")]
        del t.cols.freq.attrs["extra"]
        seen.append(sorted(t.attrs._v_attrnames))
    return seen


def test_column_attrs_as_pytables(tmp_path: Path) -> None:
    ours = _column_attrs_session(hyperslab, tmp_path / "hs.h5")
    theirs = _column_attrs_session(tables, tmp_path / "pt.h5")
    assert ours == theirs
    assert [type(v) for v in ours] == [type(v) for v in theirs]
    # each library reads the other's
    with tables.open_file(tmp_path / "hs.h5") as f:
        assert f.root.t.cols.labels.attrs.bits == 10
        assert f.root.t.cols.nest.x.attrs.u == "m"
    with hyperslab.open_file(tmp_path / "pt.h5") as f:
        assert f.root.t.cols.labels.attrs.bits == 10
        assert f.root.t.cols.freq.attrs.keys() == ["u", "unit", "val"]


# ---------------------------------------------------------------------- HDF5 back traces
@pytest.mark.parametrize("policy", [True, "VERBOSE", False])
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_h5_backtrace_policy(lib: Any, policy: object, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "empty.h5"
    path.write_bytes(b"")
    monkeypatch.setattr(lib.HDF5ExtError, "DEFAULT_H5_BACKTRACE_POLICY", policy)
    with pytest.raises(lib.HDF5ExtError) as info:
        lib.open_file(path)
    trace = info.value.h5backtrace
    if not policy:
        assert trace is None
        return
    assert trace[-1][-1] == "file signature not found"  # HDF5's innermost error
    if policy == "VERBOSE":
        assert trace[-1][-1] in str(info.value)
    assert lib.HDF5ExtError("x", h5bt=False).h5backtrace is None


def test_h5_backtrace_empty_without_hdf5_error() -> None:
    assert hyperslab.HDF5ExtError("found by hyperslab").h5backtrace == []
    assert hyperslab.HDF5ExtError.DEFAULT_H5_BACKTRACE_POLICY == \
        tables.HDF5ExtError.DEFAULT_H5_BACKTRACE_POLICY


# ---------------------------------------------------------------------- negative steps
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
@pytest.mark.parametrize("key", [np.s_[2:3:-3], np.s_[::-1], np.s_[5:1:-2]])
def test_table_and_column_slices_refuse_negative_steps(lib: Any, key: slice,
                                                       tmp_path: Path) -> None:
    with lib.open_file(tmp_path / "t.h5", "w") as f:
        t = f.create_table("/", "t", np.zeros(10, "i4,f8"))
        with pytest.raises(ValueError, match="slice step cannot be negative"):
            t[key]
        with pytest.raises(ValueError, match="slice step cannot be negative"):
            t.cols.f0[key]
        assert len(t[1:9:3]) == len(t.cols.f1[1:9:3]) == 3


# ---------------------------------------------------------------------- len(table.cols)
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_len_of_cols_counts_columns_at_its_level(lib: Any, tmp_path: Path) -> None:
    dtype = np.dtype([("a", "i4"), ("info", [("x", "f8"), ("y", "i2")]),
                      ("b", "f4")])
    with lib.open_file(tmp_path / "t.h5", "w") as f:
        t = f.create_table("/", "t", np.zeros(7, dtype))
        assert (len(t.cols), len(t.cols.info), len(t.cols.a)) == (3, 2, 7)
        assert len(t.cols.info) == len(t.cols.info._v_colnames)


# ---------------------------------------------------------------------- closed groups, paths
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_closing_a_group_closes_its_open_descendants(lib: Any, tmp_path: Path) -> None:
    with lib.open_file(tmp_path / "t.h5", "w") as f:
        g1 = f.create_group("/", "g1")
        g2 = f.create_group("/g1", "g2")
        a = f.create_array("/g1/g2", "a", [1, 2])
        other = f.create_group("/", "g10")  # a sibling whose name starts like g1's
        g1._f_close()
        assert (g1._v_isopen, g2._v_isopen, a._v_isopen, other._v_isopen) == \
            (False, False, False, True)
        with pytest.raises(lib.ClosedNodeError):
            g1._f_get_child("g2")
        with pytest.raises(lib.ClosedNodeError):
            f.get_node(g1)
        assert list(f.get_node("/g1/g2/a")[:]) == [1, 2]
        assert f.get_node("/g1")._v_isopen and not g1._v_isopen


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_get_node_needs_an_absolute_path(lib: Any, tmp_path: Path) -> None:
    with lib.open_file(tmp_path / "t.h5", "w") as f:
        f.create_array("/", "array", [1, 2])
        with pytest.raises(NameError, match="must start with a slash"):
            f.get_node("array")
        assert f.get_node("/", "array")._v_name == "array"


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_child_group_class(lib: Any, tmp_path: Path) -> None:
    with lib.open_file(tmp_path / "t.h5", "w") as f:
        f.create_group("/", "g")
        assert f.root._g_get_child_group_class("g") is lib.Group
        assert "_g_get_child_group_class" in dir(f.root)


# ---------------------------------------------------------------------- reads as PyTables
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
@pytest.mark.parametrize("atom", ["string", "int"])
def test_unwritten_item_of_a_shaped_atom_has_the_atom_shape(lib: Any, atom: str,
                                                           tmp_path: Path) -> None:
    shaped = (lib.StringAtom(itemsize=3, shape=2, dflt=b"") if atom == "string"
              else lib.Int32Atom(shape=(2, 3)))
    with lib.open_file(tmp_path / "a.h5", "w") as f:
        ca = f.create_carray("/", "c", atom=shaped, shape=(4,))
        assert ca[1].shape == shaped.shape
        np.testing.assert_array_equal(ca[1], np.zeros(shaped.shape, shaped.dtype.base))
    with lib.open_file(tmp_path / "a.h5") as f:
        assert f.root.c[-1].shape == shaped.shape


def _earray_rows(lib: Any, path: Path) -> list[np.ndarray]:
    data = np.arange(2 * 3 * 7, dtype="i4").reshape(2, 3, 7)
    with lib.open_file(path, "w") as f:
        ea = f.create_earray("/", "e", atom=lib.Int32Atom(), shape=(2, 3, 0))
        ea.append(data)
        ea.nrowsinbuf = 3
        rows = [row.copy() for row in ea] + [row.copy() for row in ea.iterrows(1, 7, 2)]
    # PyTables swaps the extendable axis with the first one (not a move): (3, 2) rows here
    assert rows[0].shape == (3, 2)
    np.testing.assert_array_equal(rows[4], data[..., 4].swapaxes(0, 1))
    return rows


def test_earray_rows_along_a_later_extendable_axis(tmp_path: Path) -> None:
    got = _earray_rows(hyperslab, tmp_path / "h.h5")
    expected = _earray_rows(tables, tmp_path / "t.h5")
    assert len(got) == len(expected) == 10
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def _read_sorted_windows(lib: Any, path: Path) -> list[list[int]]:
    values = np.random.default_rng(3).permutation(100).astype("i4")
    windows = [(16, None, None), (24, 54, -1), (14, 54, -3), (24, 25, -2), (137, 25, -2),
               (33, 55, 5), (None, None, -2), (0, 10, -1), (5, None, -1)]
    with lib.open_file(path, "w") as f:
        t = f.create_table("/", "t", np.dtype([("i", "i4")]))
        t.append(values.view(t.dtype))
        t.cols.i.create_csindex()
        return [t.read_sorted("i", start=a, stop=b, step=c)["i"].tolist()
                for a, b, c in windows]


def test_read_sorted_takes_pytables_index_ranges(tmp_path: Path) -> None:
    # not slice rules: a start alone is one row, a negative step counts from the top
    got = _read_sorted_windows(hyperslab, tmp_path / "h.h5")
    assert got == _read_sorted_windows(tables, tmp_path / "t.h5")
    assert got[0] == [16] and got[1] == list(range(75, 45, -1))


# ---------------------------------------------------------------------- append_where
def _append_where_session(lib: Any, path: Path) -> tuple[list[int], list[int], str]:
    with lib.open_file(path, "w") as f:
        src = f.create_table("/", "src", np.dtype([("x", "i4"), ("y", "f8")]))
        src.append([(i, i / 2) for i in range(10)])
        whole, ranged = f.create_table("/", "whole", src.dtype), f.create_table(
            "/", "ranged", src.dtype)
        src.append_where(whole)
        src.append_where(ranged, start=1, stop=9, step=3)
        seen = (whole.col("x").tolist(), ranged.col("x").tolist())
    with pytest.raises(lib.ClosedNodeError) as info:
        src.append_where(whole, "x > 3")
    return seen[0], seen[1], type(info.value).__name__


def test_append_where_without_condition_and_closed(tmp_path: Path) -> None:
    got = _append_where_session(hyperslab, tmp_path / "h.h5")
    assert got == _append_where_session(tables, tmp_path / "t.h5")
    assert got[0] == list(range(10))


# ---------------------------------------------------------------------- warnings
@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
def test_new_child_shadowed_by_an_attribute_warns(lib: Any, tmp_path: Path) -> None:
    with lib.open_file(tmp_path / "a.h5", "w") as f:
        f.root.test, f.root.lnk = "attr", 1
        with pytest.warns(lib.NaturalNameWarning, match="already has an attribute named"):
            child = f.create_array(f.root, "test", [1])
        with pytest.warns(lib.NaturalNameWarning, match="``lnk``"):
            f.create_soft_link(f.root, "lnk", "/test")
        assert f.root.test == "attr" and f.get_node("/test") is child
        del f.root.test
        assert f.root.test is child


def _old_flavor_session(lib: Any, path: Path) -> list[object]:
    shutil.copy(PT_TESTS / "oldflavor_numeric.h5", path)
    seen: list[object] = []
    with lib.open_file(path, "a") as f:
        for name in ("array1", "carray1", "vlarray1", "array2"):
            node = f.get_node("/", name)
            # no warning for 'python' (warnings are errors here)
            with pytest.warns(lib.FlavorWarning) if name != "array2" else nullcontext():
                data = node.read()
                node.copy("/", name + "copy")
            seen += [node.flavor, type(data).__name__]
        seen.append(f.root.array1copy.flavor)
    return seen


def test_unavailable_flavors_are_kept_and_warn(tmp_path: Path) -> None:
    got = _old_flavor_session(hyperslab, tmp_path / "h.h5")
    assert got == _old_flavor_session(tables, tmp_path / "t.h5")
    assert got[:2] == ["numeric", "ndarray"]


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "tables"])
@pytest.mark.parametrize(("name", "path"), [("smpl_unsupptype.h5", "/CompoundChunked"),
                                            ("scalar.h5", "/variable length string")])
def test_loading_an_unimplemented_node_warns(lib: Any, name: str, path: str) -> None:
    with lib.open_file(PT_TESTS / name) as f:
        with pytest.warns(UserWarning) as record:
            node = f.get_node(path)
        assert isinstance(node, lib.UnImplemented)
        assert any("UnImplemented" in str(w.message) for w in record)
        assert f.get_node(path) is node  # cached: no second warning

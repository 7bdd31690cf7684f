"""The set-up of a leaf's first reads: what a node look-up and the first ``node[i]`` ask of
HDF5, and that each shortcut gives what the general path gives.

* ``CLASS`` (and every scalar fixed-length string attribute) is read in one ``H5Aread``
  with a memory type of the stored character set: PyTables and h5py store ``CLASS`` as
  ASCII, which HDF5 does not convert to UTF-8 (the general path is slower);
* a leaf's ``FLAVOR`` is looked for before it is opened (most leaves have none);
* a single item of a read-only file never makes h5py's high-level ``Dataset``, and the
  shape comes from the dataspace read when the dataset is opened.

Oracles: the general (slow) string path, NumPy, h5py and PyTables (files written by them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables
from h5py import h5a, h5s, h5t

import hyperslab
from hyperslab.storage import attributes as raw
from hyperslab.storage import attrread, datasetinfo

CSETS = {"ascii": h5t.CSET_ASCII, "utf8": h5t.CSET_UTF8}
PADS = {"nullterm": h5t.STR_NULLTERM, "nullpad": h5t.STR_NULLPAD, "spacepad": h5t.STR_SPACEPAD}


def _write_string(gid: Any, name: str, payload: bytes, cset: int, pad: int) -> None:
    stype = h5t.C_S1.copy()
    stype.set_size(len(payload))
    stype.set_cset(cset)
    stype.set_strpad(pad)
    attr = h5a.create(gid, name.encode(), stype, h5s.create(h5s.SCALAR))
    attr.write(np.frombuffer(payload, dtype=f"S{len(payload)}").reshape(()), mtype=stype)


@pytest.fixture
def no_slow_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The general string path fails: what reads must come from the fast one."""

    def refuse(attr: Any, name: str) -> str:
        raise AssertionError(f"attribute {name!r} took the slow path")

    monkeypatch.setattr(attrread, "_string_slow", refuse)


@pytest.mark.parametrize("cset", list(CSETS))
@pytest.mark.parametrize("pad", list(PADS))
@pytest.mark.parametrize("payload", [b"CARRAY", b"ab\x00cd", b"x  ", b"\xc3\xa9t\xc3\xa9"])
def test_fixed_strings_read_fast_as_the_general_path_reads_them(
        tmp_path: Path, cset: str, pad: str, payload: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with h5py.File(tmp_path / "s.h5", "w") as f:
        _write_string(f.id, "s", payload, CSETS[cset], PADS[pad])
    with h5py.File(tmp_path / "s.h5", "r") as f:
        general = attrread._string_slow(h5a.open(f.id, b"s"), "s")
        calls: list[str] = []
        original = attrread._string_slow
        monkeypatch.setattr(attrread, "_string_slow",
                            lambda attr, name: calls.append(name) or original(attr, name))
        assert raw.read_string_attribute(f.id, "s") == general
        assert raw.read_string_attribute_of(f.id, ".", "s") == general
        assert calls == []  # the fast path answered


@pytest.mark.parametrize("value", [np.array([b"abcdef"]), np.array([b"ab", b"cd"])])
def test_string_arrays_are_still_refused(tmp_path: Path, value: Any) -> None:
    # A one-element array fills the fast path's buffer as a scalar would.
    with h5py.File(tmp_path / "s.h5", "w") as f:
        f.attrs["s"] = value
        with pytest.raises(TypeError, match="'s'"):
            raw.read_string_attribute(f.id, "s")


def test_pytables_carray_class_reads_fast(tmp_path: Path, no_slow_strings: None) -> None:
    path = tmp_path / "pt.h5"
    with tables.open_file(path, "w") as f:
        f.create_carray("/", "c", obj=np.arange(40.0), chunkshape=(8,))
    with hyperslab.open_file(path, "r") as f:
        node = f.get_node("/c")
        assert type(node).__name__ == "CArray"
        assert node._v_attrs.CLASS == "CARRAY"
        assert node[13] == 13.0


@pytest.fixture
def h5_file(tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A file of h5py datasets (raw and Blosc2, CLASS as the chunks benchmark writes it)
    and one without CLASS."""
    data = np.arange(1000, dtype="<f8") * 1.5
    path = tmp_path / "h5.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("raw", data=data, chunks=(16,))
        f.create_dataset("b2", data=data, chunks=(16,),
                         **hdf5plugin.Blosc2(cname="lz4", clevel=5,
                                             filters=hdf5plugin.Blosc2.SHUFFLE))
        f.create_dataset("bare", data=data.astype(">i4"), chunks=(10,))
        for name in ("raw", "b2"):
            f[name].attrs["CLASS"] = np.bytes_(b"CARRAY")
            f[name].attrs["VERSION"] = np.bytes_(b"1.1")
    return path, data


@pytest.mark.parametrize("name", ["raw", "b2", "bare"])
def test_first_items_need_no_h5py_dataset(h5_file: tuple[Path, np.ndarray], name: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = h5_file
    expected = data.astype(">i4") if name == "bare" else data
    with hyperslab.open_file(path, "r") as f:
        with monkeypatch.context() as m:
            def refuse(dsid: Any) -> None:
                raise AssertionError("h5py.Dataset made for a single item")

            m.setattr(datasetinfo.h5py, "Dataset", refuse)
            node = f.get_node("/" + name)
            values = [node[i] for i in (0, 999, 517, -1)]
            assert node.shape == (1000,)
        assert values == [expected[0], expected[999], expected[517], expected[-1]]
        assert all(type(v) is type(expected[0]) for v in values)
        assert node.read(3, 9).tolist() == expected[3:9].tolist()  # h5py's Dataset now made


def test_leaves_without_flavor_never_open_it(h5_file: tuple[Path, np.ndarray],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = h5_file
    original = raw.read_string_attribute

    def spy(oid: Any, name: str) -> Any:
        assert name != "FLAVOR", "opened a FLAVOR the leaf does not have"
        return original(oid, name)

    monkeypatch.setattr(raw, "read_string_attribute", spy)
    with hyperslab.open_file(path, "r") as f:
        node = f.get_node("/raw")
        assert node[7] == data[7]
        assert node.flavor == "numpy"


@pytest.mark.parametrize("flavor", ["python", "numpy"])
def test_a_stored_flavor_still_counts(tmp_path: Path, flavor: str) -> None:
    path = tmp_path / "fl.h5"
    with tables.open_file(path, "w") as f:
        f.create_array("/", "a", obj=np.arange(10, dtype="i8")).flavor = flavor
    with hyperslab.open_file(path, "r") as f:
        node = f.get_node("/a")
        value = node[4]
        assert node.flavor == flavor
        assert type(value) is (int if flavor == "python" else np.int64)
        assert value == 4


def test_writable_files_keep_asking_for_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "w.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_earray("/", "e", atom=hyperslab.Float64Atom(), shape=(0,), chunkshape=(4,))
    with hyperslab.open_file(path, "a") as f:
        node = f.get_node("/e")
        assert node.shape == (0,)
        node.append(np.arange(6.0))
        assert node.shape == (6,)
        assert node[5] == 5.0
    with h5py.File(path, "r") as f:
        assert f["e"].shape == (6,)


@pytest.mark.parametrize("name", ["raw", "bare"])
def test_one_dataset_per_leaf(h5_file: tuple[Path, np.ndarray], name: str,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A leaf without CLASS is classified on a Dataset that the leaf then reads through
    (it made a second one); a leaf with CLASS makes its one at the first read."""
    path, data = h5_file
    made: list[Any] = []
    original = datasetinfo.DatasetInfo.__init__

    def spy(self: Any, dsid: Any, access: Any = None) -> None:
        made.append(dsid)
        original(self, dsid, access)

    monkeypatch.setattr(datasetinfo.DatasetInfo, "__init__", spy)
    with hyperslab.open_file(path, "r") as f:
        node = f.get_node("/" + name)
        assert type(node).__name__ == "CArray"
        assert node[3] == (int(data[3]) if name == "bare" else data[3])
        assert node.shape == (1000,) and node.extdim == -1  # (maxshape without h5py)
        assert len(made) == 1


def test_a_flavor_hdf5_cannot_look_for_is_read_as_before(
        h5_file: tuple[Path, np.ndarray], monkeypatch: pytest.MonkeyPatch) -> None:
    """Damaged attribute messages can fail the existence check where the open still
    answers (a fuzzed file did): the read then decides, as it did before the check."""
    path, data = h5_file

    def damaged(oid: Any, name: str) -> bool:
        raise hyperslab.HDF5ExtError(f"cannot look for attribute {name!r}")

    monkeypatch.setattr(raw, "has_attribute", damaged)
    with hyperslab.open_file(path, "r") as f:
        node = f.get_node("/raw")
        assert node[9] == data[9]
        assert node.flavor == "numpy"


STANDARD_NUMBERS = [f"{order}{kind}{size}" for order in "<>" for kind, sizes in
                    (("i", (1, 2, 4, 8)), ("u", (1, 2, 4, 8)), ("f", (4, 8)))
                    for size in sizes]


@pytest.mark.parametrize("dtype", STANDARD_NUMBERS)
def test_standard_numbers_take_their_dtype_without_converting_the_type(
        tmp_path: Path, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Datasets of HDF5's standard integers and IEEE floats get h5py's dtype from one
    ``H5Tequal`` (the general path, failing here, is not taken); written by h5py, read
    back exactly (NumPy, h5py and PyTables as oracles)."""
    data = np.arange(-5, 11).astype(dtype)
    path = tmp_path / "n.h5"
    with h5py.File(path, "w") as f:
        attrs = f.create_dataset("x", data=data, chunks=(4,)).attrs
        for name, value in (("CLASS", b"CARRAY"), ("VERSION", b"1.1"), ("TITLE", b"")):
            attrs[name] = np.bytes_(value)  # a CArray as PyTables writes it: nothing guessed
    with h5py.File(path, "r") as f:
        oracle = f["x"].dtype
    with tables.open_file(path, "r") as f:
        pt_dtype, pt_order = f.root.x.dtype, f.root.x.byteorder

    def refuse(htype: Any) -> Any:
        raise AssertionError("the general type path was taken")

    monkeypatch.setattr(datasetinfo, "_innermost", refuse)
    with hyperslab.open_file(path, "r") as f:
        node = f.root.x
        assert node._dataset.dtype.str == oracle.str == np.dtype(dtype).str
        monkeypatch.undo()  # the byte order is read from the type: the general path
        assert node.dtype == pt_dtype and node.byteorder == pt_order
        got = [node[i] for i in range(len(data))]
        assert got == data.tolist()
        np.testing.assert_array_equal(node[:], data)


STANDARD_NUMBERS = [f"STD_{s}{b}{o}" for s in "IU" for b in (8, 16, 32, 64) for o in ("LE", "BE")]
STANDARD_NUMBERS += [f"IEEE_F{b}{o}" for b in (32, 64) for o in ("LE", "BE")]


@pytest.mark.parametrize("name", STANDARD_NUMBERS)
def test_standard_numbers_get_the_dtype_h5py_gives(name: str) -> None:
    """The table of standard types, made from their names, gives each h5py's own dtype
    (the oracle: ``TypeID.dtype``), byte order included, and no other type of its key."""
    std = getattr(h5t, name)
    oracle = std.dtype
    got = datasetinfo._standard_dtype(std.copy(), std.get_class(), std.get_size())
    assert got == oracle and got is not None and got.str == oracle.str
    matches = [t for t, _ in datasetinfo._number_types(std.get_class(), std.get_size(),
                                                        std.get_order()) if std.equal(t)]
    assert len(matches) == 1


def test_a_first_read_makes_only_its_own_standard_types(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first dataset of a process makes the standard types of its own class, size and
    byte order only (making all twenty with h5py's conversion cost 150 us of a
    process's first read)."""
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(5, dtype="<f8"))
    monkeypatch.setattr(datasetinfo, "_NUMBER_TYPES", {})
    with hyperslab.open_file(path, "r") as f:
        assert f.root.x[3] == 3.0
    assert list(datasetinfo._NUMBER_TYPES) == [(h5t.FLOAT, 8, h5t.ORDER_LE)]


def test_numbers_that_are_not_standard_take_the_general_path(tmp_path: Path) -> None:
    """A half float, an integer of 20 significant bits in 4 bytes and a bitfield are not
    HDF5's standard types: their dtype is h5py's, the general way."""
    path = tmp_path / "o.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("half", data=np.arange(4, dtype="<f2"))
        odd = h5t.STD_I32LE.copy()
        odd.set_precision(20)  # padded: equal to no standard type
        dset = h5py.h5d.create(f.id, b"odd", odd, h5s.create_simple((3,)))
        dset.write(h5s.ALL, h5s.ALL, np.array([1, 25, -3], dtype="<i4"))
        f.create_dataset("bits", data=np.array([0, 1, 1], dtype="u1"),
                         dtype=h5py.h5t.STD_B8LE)
    with h5py.File(path, "r") as f:
        oracles = {name: (f[name].dtype, f[name][...]) for name in ("half", "odd")}
        assert datasetinfo._standard_dtype(f["odd"].id.get_type(), h5t.INTEGER, 4) is None
        assert datasetinfo._standard_dtype(f["half"].id.get_type(), h5t.FLOAT, 2) is None
    with hyperslab.open_file(path, "r") as f:
        for name, (dtype, values) in oracles.items():
            node = f.get_node("/" + name)
            assert node.dtype == dtype
            np.testing.assert_array_equal(node[:], values)
        assert f.root.bits.dtype == np.dtype("?")  # PyTables' booleans: the general path
        assert f.root.bits[:].tolist() == [False, True, True]

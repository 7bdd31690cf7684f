"""Damaged metadata gives hyperslab's documented exceptions (or the right data), never a raw
h5py exception, a ``RecursionError`` or a ``UnicodeDecodeError``.

Each file is written with h5py or hyperslab, then damaged at a known place of its HDF5
structures (found from what h5py reports about the file, not at fixed offsets): an object
header address past the end of the file, an attribute message whose sizes run off its
buffer, a local heap that does not hold the group's link names, attribute names and
values that are not UTF-8, a Blosc2 filter message with parameters out of range.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

import hyperslab as hs
from hyperslab.errors import HDF5ExtError, NoSuchNodeError
from hyperslab.storage import chunkindex, tree


def _patch(path: Path, old: bytes, new: bytes, *, within: tuple[int, int] | None = None) -> None:
    """Replace the one occurrence of ``old`` (in the byte range ``within``)."""
    data = bytearray(path.read_bytes())
    lo, hi = within or (0, len(data))
    assert data.count(old, lo, hi) == 1, (old, data.count(old, lo, hi))
    at = data.index(old, lo, hi)
    data[at:at + len(old)] = new
    path.write_bytes(bytes(data))


def _small_tree(path: Path) -> None:
    with h5py.File(path, "w") as h5:
        g = h5.create_group("g")
        sub = g.create_group("sub")
        sub.attrs["note"] = "nested"
        g.create_dataset("d", data=np.arange(5))
        h5.attrs["ZZNAME"] = np.int32(3)


def _header_address(path: Path, name: str) -> int:
    with h5py.File(path, "r") as h5:
        return int(h5py.h5o.get_info(h5[name].id).addr)


def test_an_object_that_cannot_be_opened_gives_hdf5exterror_not_recursion(
        tmp_path: Path) -> None:
    # /g/sub's entry in its parent's symbol table points past the end of the file.
    path = tmp_path / "unreachable.h5"
    _small_tree(path)
    entry = struct.pack("<Q", _header_address(path, "g/sub"))
    data = path.read_bytes()
    at = data.index(entry, data.index(b"SNOD", data.index(b"SNOD") + 4))  # in /g's table
    path.write_bytes(data[:at] + struct.pack("<Q", len(data) + 100_000) + data[at + 8:])
    with h5py.File(path, "r") as h5:  # the oracle: h5py's walk stops there too
        with pytest.raises(RuntimeError, match="past end of allocation"):
            h5.visit(lambda name: None)
    with hs.open_file(path) as f:
        # HDF5 cannot tell what /g/sub is (a group, maybe): a walk or a listing cannot go
        # on without leaving out what may be below it, so they raise, as h5py's visit
        # does (PyTables leaves /g/sub out).  The node itself is not made either.
        for action in (lambda: list(f.walk_nodes("/")), lambda: list(f.walk_groups("/")),
                       lambda: f.list_nodes("/g"), lambda: list(f.root.g),
                       lambda: list(f.walk_nodes("/", "Leaf")), lambda: str(f),
                       lambda: f.get_node("/g/sub"), lambda: f.root.g.sub,
                       lambda: f.root.g["sub"], lambda: f.get_node("/g/sub")._v_attrs,
                       lambda: f.root.g._v_groups.keys()):
            with pytest.raises(HDF5ExtError, match=r"sub\W.*past end of allocation"):
                action()
        assert "sub" in f.root.g and "/g/sub" in f  # the link is there
        assert f.root.g.d[:].tolist() == [0, 1, 2, 3, 4]


def test_a_node_removed_behind_its_back_raises_its_own_error(tmp_path: Path) -> None:
    """A property failing with an AttributeError subclass (NoSuchNodeError) inside a class
    with ``__getattr__`` (Group, AttributeSet) used to recurse until RecursionError."""
    path = tmp_path / "removed.h5"
    with hs.open_file(path, "w") as f:
        f.create_group("/", "g")._v_attrs.x = 1
        f.create_array("/", "a", np.arange(3))
    with hs.open_file(path, "a") as f:
        group, array = (f.get_node(p) for p in ("/g", "/a"))  # listed, not opened yet
        for name in ("g", "a"):
            tree.delete_link(f.root._g_h5id, name)
        for action in (lambda: group._v_attrs._v_attrnames,
                       lambda: group._v_title, lambda: array.attrs._v_attrnames,
                       lambda: "x" in group._v_attrs):
            with pytest.raises(NoSuchNodeError, match="there is no node at"):
                action()


def test_a_failing_member_of_a_group_is_not_taken_for_a_child(h5file: hs.File) -> None:
    with pytest.raises(AttributeError, match="the root group has no parent group") as info:
        h5file.root._v_parent  # noqa: B018
    assert not isinstance(info.value, NoSuchNodeError)  # not "no child named _v_parent"


def test_attribute_messages_that_run_off_their_buffer(tmp_path: Path) -> None:
    # The dataspace size of the root's attribute message ZZNAME is 512 bytes too big.
    path = tmp_path / "attr.h5"
    _small_tree(path)
    data = bytearray(path.read_bytes())
    at = data.index(b"ZZNAME\x00")
    assert data[at - 6:at - 4] == b"\x07\x00"  # (name size, type size, dataspace size)
    data[at - 1] += 2
    path.write_bytes(bytes(data))
    with hs.open_file(path) as f:
        attrs = f.root._v_attrs
        for action in (lambda: attrs._v_attrnames, lambda: "ZZNAME" in attrs,
                       lambda: attrs.ZZNAME, lambda: list(attrs), lambda: repr(attrs)):
            with pytest.raises(HDF5ExtError, match="attribute"):
                action()
        assert f.root.g.d[1] == 1  # the rest of the file reads


def test_a_group_whose_link_names_cannot_be_read(tmp_path: Path) -> None:
    # The root group's local heap says its names are 2 bytes further than they are.
    path = tmp_path / "heap.h5"
    _small_tree(path)
    data = path.read_bytes()
    heap = data.index(b"HEAP")
    (segment,) = struct.unpack_from("<Q", data, heap + 24)
    _patch(path, b"HEAP" + data[heap + 4:heap + 24] + struct.pack("<Q", segment),
           b"HEAP" + data[heap + 4:heap + 24] + struct.pack("<Q", segment + 2))
    with hs.open_file(path) as f:
        for action in (lambda: list(f.root), lambda: f.list_nodes("/"),
                       lambda: list(f.walk_nodes("/")), lambda: str(f)):
            with pytest.raises(HDF5ExtError, match="link"):
                action()


def test_attribute_names_and_values_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "utf8.h5"
    with hs.open_file(path, "w", title="TITLE-\u00fc\u00fc") as f:
        with pytest.warns(hs.NaturalNameWarning):  # as PyTables: not an identifier
            f.root._v_attrs["NAME-\u00fc\u00fc"] = np.int32(7)
        f.root._v_attrs.value = "VALUE-\u00fc\u00fc"
    # Each "\u00fc\u00fc" (c3 bc c3 bc) becomes bytes that are not UTF-8.
    for text in (b"NAME-", b"VALUE-", b"TITLE-"):
        _patch(path, text + b"\xc3\xbc\xc3\xbc", text + b"\xff\xfe\xc3\xbc")
    with hs.open_file(path) as f:
        attrs = f.root._v_attrs
        with pytest.warns(hs.DataTypeWarning, match="not UTF-8.*NAME-"):
            names = attrs._v_attrnames  # faithful, and not silent
        name = next(n for n in names if n.startswith("NAME-"))
        assert name == b"NAME-\xff\xfe\xc3\xbc".decode("utf-8", "surrogateescape")
        assert getattr(attrs, name) == 7  # the name listed reads its attribute
        with pytest.warns(hs.DataTypeWarning, match="not UTF-8"):
            value = attrs.value
        assert value == np.bytes_(b"VALUE-\xff\xfe\xc3\xbc")  # the bytes, as stored
        assert f.root._v_title == "TITLE-\ufffd\ufffd\u00fc"
        assert "TITLE-" in str(f)
    with h5py.File(path, "r") as h5:
        assert b"NAME-\xff\xfe\xc3\xbc" in h5.attrs.keys()  # h5py: the bytes


def test_a_damaged_root_group_fails_to_open_with_hdf5exterror(tmp_path: Path) -> None:
    path = tmp_path / "root.h5"
    _small_tree(path)
    # The superblock's entry for the root group points at the dataset /g/d.
    root, dataset = (struct.pack("<Q", _header_address(path, p)) for p in ("/", "g/d"))
    data = path.read_bytes()
    assert data.count(root, 0, 200) == 1
    at = data.index(root, 0, 200)
    path.write_bytes(data[:at] + dataset + data[at + 8:])
    with pytest.raises(HDF5ExtError, match="cannot open the root group"):
        hs.open_file(path)


def test_blosc2_parameters_out_of_range_still_read_right(tmp_path: Path) -> None:
    """The chunks decode without the compression level: HDF5's filter reads them."""
    path = tmp_path / "clevel.h5"
    values = np.arange(1000.0)
    with hs.open_file(path, "w") as f:
        f.create_carray("/", "c", obj=values, chunkshape=(100,),
                        filters=hs.Filters(5, "blosc2"))
    with h5py.File(path, "r") as h5:
        cd_values = h5["c"].id.get_create_plist().get_filter(0)[2]
    assert cd_values[4] == 5  # the compression level
    damaged = (*cd_values[:4], 7077893, *cd_values[5:])
    _patch(path, struct.pack(f"<{len(cd_values)}I", *cd_values),
           struct.pack(f"<{len(cd_values)}I", *damaged))
    with hs.open_file(path) as f:
        assert f.root.c[:].tolist() == values.tolist()
        assert f.root.c[::7].tolist() == values[::7].tolist()
        assert f.root.c[5] == 5.0
        repr(f.root.c)


def test_an_extdim_naming_no_unlimited_dimension_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "extdim.h5"
    with hs.open_file(path, "w") as f:
        f.create_earray("/", "e", hs.Int16Atom(), (0, 2), obj=np.arange(10).reshape(5, 2))
    with h5py.File(path, "r+") as h5:
        h5["e"].attrs["EXTDIM"] = np.int32(40)
    with hs.open_file(path) as f:
        e = f.root.e
        assert (e.extdim, e.maindim, e.nrows) == (0, 0, 5)
        assert e.read().tolist() == np.arange(10).reshape(5, 2).tolist()


def test_a_table_of_an_unsupported_compound_type(tmp_path: Path) -> None:
    path = tmp_path / "vlen.h5"
    dtype = np.dtype([("a", "i4"), ("s", h5py.string_dtype())])
    with h5py.File(path, "w") as h5:
        d = h5.create_dataset("t", (3,), dtype=dtype, maxshape=(None,), chunks=(2,))
        d.attrs["CLASS"] = np.bytes_(b"TABLE")
        d.attrs["VERSION"] = np.bytes_(b"2.7")
        d.attrs["TITLE"] = np.bytes_(b"")
        h5.create_dataset("u", (3,), dtype=dtype)  # no CLASS: PyTables' UnImplemented
    with hs.open_file(path) as f:
        for action in (lambda: f.root.t.description, lambda: f.root.t.nrows,
                       lambda: f.root.t[:], lambda: f.root.t.cols):
            with pytest.raises(HDF5ExtError, match="unsupported compound type"):
                action()
        assert "unsupported compound type" in repr(f.root.t)  # says so, does not fail
        with pytest.warns(UserWarning, match="``/u`` is of an unsupported type"):
            assert type(f.root.u).__name__ == "UnImplemented"
        assert "does not implement" in repr(f.root.u)
        with pytest.raises(NotImplementedError, match="/u"):
            f.root.u.read()


def test_a_chunk_index_with_addresses_past_64_bits() -> None:
    # What chunk_iter reports for a damaged chunk B-tree: an address of 2**64 - 1.
    def iterate(callback: Any) -> None:
        callback(((0,), 0, 4096, 100))
        callback(((10,), 0, 2**64 - 1, 100))

    with pytest.raises(HDF5ExtError, match="out of range"):
        chunkindex.collect_chunks(iterate, 1)

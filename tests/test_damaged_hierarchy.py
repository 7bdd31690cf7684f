"""Damaged hierarchies: nodes whose objects cannot be opened, walks that cannot be
complete, index groups that cannot be opened.

A walk or a listing never leaves a node out silently: where HDF5 can still tell that an
object it cannot open is a dataset, it is listed (as h5py's ``visit`` lists it) as an
``Unknown`` node whose every use raises ``HDF5ExtError``; where it cannot tell (a group,
maybe), the walk raises (see ``test_damaged_metadata``).  A query never needs an index to
be right: it scans when the index cannot be opened.  Each file is written with h5py or
hyperslab and damaged at a place found from what h5py reports about it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import h5py
import numexpr as ne
import numpy as np
import pytest

import hyperslab as hs
from hyperslab.errors import HDF5ExtError


def _replace_once(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1, data.count(old)
    path.write_bytes(data.replace(old, new))


def _point_past_the_end(path: Path, name: str) -> None:
    """Make the link ``name`` (its group's symbol table entry) point past the file's end."""
    with h5py.File(path, "r") as h5:
        address = h5py.h5o.get_info(h5[name].id).addr
    _replace_once(path, struct.pack("<Q", address),
                  struct.pack("<Q", path.stat().st_size + 100_000))


def test_a_dataset_hdf5_lists_but_cannot_open_is_an_unknown_node(tmp_path: Path) -> None:
    path = tmp_path / "dims.h5"
    with h5py.File(path, "w") as h5:
        g = h5.create_group("g")
        g.create_dataset("ramp", data=np.arange(4999, dtype="i4"), chunks=(500,),
                         maxshape=(4999,))
        g["ramp"].attrs["units"] = "m"
        g.create_dataset("grid", data=np.arange(12.0).reshape(3, 4))
    # The extent of /g/ramp (its dimension and maximum) becomes 2**63.
    _replace_once(path, struct.pack("<QQ", 4999, 4999), struct.pack("<QQ", 2**63, 2**63))
    with h5py.File(path, "r") as h5:  # the oracle lists /g/ramp and cannot open it
        listed = ["/"]
        h5.visit(lambda name: listed.append("/" + name))
        with pytest.raises(KeyError, match="power of 2"):
            h5["g/ramp"]
    with hs.open_file(path) as f:
        assert sorted(node._v_pathname for node in f.walk_nodes("/")) == sorted(listed)
        ramp = f.get_node("/g/ramp")
        assert type(ramp) is hs.Unknown
        assert f.root.g.ramp is ramp and f.root.g["ramp"] is ramp and "/g/ramp" in f
        assert [node._v_name for node in f.list_nodes("/g")] == ["grid", "ramp"]
        assert [group._v_pathname for group in f.walk_groups("/")] == ["/", "/g"]
        for action in (lambda: ramp.shape, lambda: ramp.dtype, lambda: ramp.read(),
                       lambda: ramp[0:3], lambda: list(ramp), lambda: ramp.sum(),
                       lambda: ramp._v_attrs.units, lambda: str(ramp),
                       lambda: list(f.walk_nodes("/", "Leaf")),
                       lambda: f.list_nodes("/g", "Array")):
            with pytest.raises(HDF5ExtError, match=r"g/ramp.*power of 2"):
                action()
        assert f.root.g.grid[1, 2] == 6.0  # the rest of the file reads


def test_a_named_datatype_is_an_unknown_node_without_the_leaf_api(tmp_path: Path) -> None:
    path = tmp_path / "named.h5"
    with h5py.File(path, "w") as h5:
        h5.create_group("g")
        h5["g/t"] = np.dtype("<f8")  # a named (committed) datatype
        h5["g/t"].attrs["note"] = "a type"
        h5["g/d"] = np.arange(3)
        assert isinstance(h5["g/t"], h5py.Datatype)
    with hs.open_file(path) as f:
        t = f.root.g.t
        assert type(t) is hs.Unknown
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/g", "/g/d", "/g/t"]
        assert [n._v_pathname for n in f.walk_nodes("/", "Leaf")] == ["/g/d"]
        assert t._v_attrs.note == "a type" and t.name == "t"
        assert not hasattr(t, "shape")  # as for PyTables' nodes without a shape
        for action, builtin in ((lambda: t.shape, AttributeError),
                                (lambda: t.read(), AttributeError),
                                (lambda: t.nrows, AttributeError),
                                (lambda: t[0], TypeError), (lambda: list(t), TypeError),
                                (lambda: len(t), TypeError)):
            with pytest.raises(HDF5ExtError, match=r"/g/t.*named datatype") as info:
                action()
            assert isinstance(info.value, builtin)
        with pytest.raises(AttributeError, match="no attribute 'nonsense'") as plain:
            t.nonsense  # noqa: B018
        assert not isinstance(plain.value, HDF5ExtError)


def test_a_query_scans_when_the_index_group_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "indexed.h5"
    rng = np.random.default_rng(5)
    data = np.zeros(300, dtype=[("id", "i4"), ("x", "f8")])
    data["id"] = np.arange(300)
    data["x"] = rng.integers(-100, 100, 300) / 4
    with hs.open_file(path, "w") as f:
        table = f.create_table(f.create_group("/", "g"), "t", obj=data, chunkshape=(50,))
        table.cols.x.create_csindex()
    _point_past_the_end(path, "g/_i_t")
    with h5py.File(path, "r") as h5:  # the oracle reads the table; the index is damaged
        records = h5["g/t"][...]
        with pytest.raises(KeyError, match="past end of allocation"):
            h5["g/_i_t"]
    for mode in ("r", "a"):  # indexes opened one by one, or all at once
        with hs.open_file(path, mode) as f:
            table = f.root.g.t
            for condition in ("x > 5.0", "(id > 10) & (x < 4)"):
                with pytest.warns(hs.PerformanceWarning, match=r"_i_t.*scans"):
                    got = table.read_where(condition)
                expected = records[ne.evaluate(condition, {"id": records["id"],
                                                           "x": records["x"]})]
                np.testing.assert_array_equal(got, expected)
            # A sorted read needs the index: it says why it cannot have it.
            with pytest.raises(HDF5ExtError, match="_i_t"):
                table.read_sorted("x")


def test_link_names_that_are_not_utf8_are_listed_faithfully_with_a_warning(
        tmp_path: Path) -> None:
    path = tmp_path / "names.h5"
    with h5py.File(path, "w") as h5:
        g = h5.create_group("g")
        g.create_dataset(b"d\xff", data=np.arange(3))  # as a damaged heap leaves a name
        g.create_dataset("e", data=np.arange(2))
        visited: list[bytes | str] = []
        h5.visit(visited.append)
        assert b"g/d\xff" in visited  # h5py lists the bytes
    name = b"d\xff".decode("utf-8", "surrogateescape")
    with hs.open_file(path) as f:
        with pytest.warns(hs.DataTypeWarning, match=r"not UTF-8.*d\\udcff"):
            paths = [node._v_pathname for node in f.walk_nodes("/")]
        assert paths == ["/", "/g", f"/g/{name}", "/g/e"]
        assert f.get_node(f"/g/{name}")[:].tolist() == [0, 1, 2]  # and it reads


def test_a_sorted_read_refuses_rows_a_damaged_index_lists_past_the_table(
        tmp_path: Path) -> None:
    path = tmp_path / "rows.h5"
    data = np.zeros(300, dtype=[("id", "i4"), ("x", "f8")])
    data["x"] = np.arange(300.0)[::-1]
    with hs.open_file(path, "w") as f:
        f.create_table("/", "t", obj=data, chunkshape=(50,)).cols.x.create_csindex()
    with h5py.File(path, "r+") as h5:
        h5["_i_t/x/indicesLR"][0] = 1_000_000  # a row number past the table's 300
    with hs.open_file(path) as f:
        with pytest.raises(HDF5ExtError, match=r"/_i_t/x is malformed: its indices hold "
                                               r"row 1000000, outside the table's 300 rows"):
            f.root.t.read_sorted("x")

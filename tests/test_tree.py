"""The object tree: opening, groups, natural naming, walks and hierarchy changes."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.storage import tree


def _sample(f: hyperslab.File) -> None:
    f.create_group("/", "g1", "group one")
    f.create_group("/g1", "sub")
    f.create_group("/", "g2")
    f.create_array("/", "arr", np.arange(3))
    f.create_array("/g1", "x", np.ones(2))
    f.create_array("/g1/sub", "y", np.zeros(4))
    f.create_group("/", "_p_private")
    f.create_array("/_p_private", "z", np.zeros(1))
    f.create_group("/g2", "_i_hidden")


def test_open_modes(h5path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        hyperslab.open_file(h5path, "r")
    with pytest.raises(FileNotFoundError):
        hyperslab.open_file(h5path, "r+")
    with pytest.raises(ValueError, match="invalid mode"):
        hyperslab.open_file(h5path, "x")
    with hyperslab.open_file(h5path, "a", title="created by a") as f:
        assert f.isopen and f.mode == "a" and f.title == "created by a"
    with hyperslab.open_file(h5path, "r") as f:
        assert f.title == "created by a"
        with pytest.raises(hyperslab.FileModeError, match="not writable"):
            f.create_group("/", "g")
        with pytest.raises(hyperslab.FileModeError):
            f.root._v_attrs.x = 1
    assert not f.isopen
    with pytest.raises(hyperslab.ClosedFileError):
        f.get_node("/")


def test_not_an_hdf5_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.h5"
    path.write_bytes(b"not an hdf5 file at all" * 100)
    with pytest.raises(hyperslab.HDF5ExtError, match=r"junk\.h5"):
        hyperslab.open_file(path, "r")
    assert path.read_bytes().startswith(b"not an hdf5")


def test_natural_naming_and_get_node(h5file: hyperslab.File) -> None:
    _sample(h5file)
    assert h5file.root.g1.sub.y is h5file.get_node("/g1/sub/y")
    assert h5file.get_node("/g1", "x") is h5file.root.g1.x
    assert h5file.get_node(h5file.root.g1, "sub")._v_pathname == "/g1/sub"
    assert h5file.root["g1/sub/y"].path == "/g1/sub/y"
    assert h5file.root.g1["sub"]._v_name == "sub"
    assert h5file.root.g1._v_title == "group one"
    assert h5file.root.g1.sub.y.parent is h5file.root.g1.sub
    assert h5file.root.g1.sub._v_depth == 2
    with pytest.raises(hyperslab.NoSuchNodeError):
        h5file.root.nothere  # noqa: B018
    with pytest.raises(LookupError):
        h5file.get_node("/g1/nothere")
    with pytest.raises(AttributeError):
        h5file.root.g1.nothere  # noqa: B018
    with pytest.raises(TypeError, match="could not find a ``Group`` node"):
        h5file.get_node("/arr", classname="Group")
    assert "/g1/sub" in h5file and "/nope" not in h5file
    assert "x" in h5file.root.g1 and "_i_hidden" in h5file.root.g2


def test_walks_match_pytables(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w") as f:
        _sample(f)
    with hyperslab.open_file(h5path, "r") as f, tables.open_file(h5path, "r") as t:
        assert [n._v_pathname for n in f] == [n._v_pathname for n in t]
        for where in ("/", "/g1"):
            for classname in (None, "Group", "Leaf", "Array"):
                ours = [n._v_pathname for n in f.walk_nodes(where, classname)]
                theirs = [n._v_pathname for n in t.walk_nodes(where, classname)]
                assert ours == theirs, (where, classname)
            assert [n._v_pathname for n in f.walk_groups(where)] == [
                n._v_pathname for n in t.walk_groups(where)
            ]
        assert [n._v_name for n in f.list_nodes("/")] == [n._v_name for n in t.list_nodes("/")]
        assert [n._v_name for n in f.iter_nodes("/", "Group")] == [
            n._v_name for n in t.iter_nodes("/", "Group")
        ]
        assert sorted(f.root._v_children) == sorted(t.root._v_children)
        assert sorted(f.root._v_groups) == sorted(t.root._v_groups)
        assert sorted(f.root._v_leaves) == sorted(t.root._v_leaves)
        assert sorted(f.root._v_hidden) == sorted(t.root._v_hidden)
        assert [n._v_pathname for n in f.root.g1._f_walknodes()] == [
            n._v_pathname for n in t.root.g1._f_walknodes()
        ]
        # PyTables 3.11 under NumPy 2 prints np.str_('...') titles and np.int64 shapes;
        # ours print as PyTables does under NumPy 1 (plain reprs).
        for path in ("/g1", "/arr", "/g1/sub/y"):
            theirs = re.sub(r"np\.(?:str_|int64)\(([^()]*)\)", r"\1", str(t.get_node(path)))
            assert str(f.get_node(path)) == theirs
        assert str(f.root.g1) == "/g1 (Group) 'group one'"


def test_create_group_errors_leave_file_intact(h5file: hyperslab.File) -> None:
    h5file.create_group("/", "g")
    with pytest.raises(hyperslab.NodeError, match="already has a child node named ``g``"):
        h5file.create_group("/", "g")
    with pytest.raises(ValueError, match="'/' character"):
        h5file.create_group("/", "a/b")
    with pytest.raises(ValueError, match="empty string"):
        h5file.create_group("/", "")
    with pytest.raises(hyperslab.NoSuchNodeError):
        h5file.create_group("/missing", "x")
    with pytest.warns(hyperslab.NaturalNameWarning):
        h5file.create_group("/", "not valid")
    assert sorted(h5file.root._v_children) == ["g", "not valid"]
    deep = h5file.create_group("/a/b/c", "d", createparents=True)
    assert deep._v_pathname == "/a/b/c/d"


def test_remove_rename_move_copy(h5file: hyperslab.File) -> None:
    _sample(h5file)
    x = h5file.root.g1.x
    sub = h5file.root.g1.sub
    y = sub.y
    h5file.rename_node("/g1", "renamed")
    assert (x.path, sub._v_pathname, y.path) == ("/renamed/x", "/renamed/sub", "/renamed/sub/y")
    assert h5file.get_node("/renamed/sub/y") is y
    assert "/g1" not in h5file
    h5file.move_node("/renamed/sub", "/g2", "moved")
    assert y.path == "/g2/moved/y"
    np.testing.assert_array_equal(y[:], np.zeros(4))
    with pytest.raises(hyperslab.NodeError, match="into itself"):
        h5file.move_node("/g2", "/g2/moved")
    with pytest.raises(hyperslab.NodeError, match="already has a node named"):
        h5file.move_node("/arr", "/renamed", "x")
    h5file.move_node("/arr", "/renamed", "x", overwrite=True)
    assert not x.isopen
    np.testing.assert_array_equal(h5file.root.renamed.x[:], np.arange(3))
    copy = h5file.copy_node("/g2", "/", "g2copy", recursive=True)
    assert [n._v_pathname for n in h5file.walk_nodes(copy)] == [
        "/g2copy", "/g2copy/moved", "/g2copy/moved/y"
    ]
    shallow = h5file.copy_node("/g2", "/", "g2shallow")
    assert list(shallow._v_children) == []
    with pytest.raises(hyperslab.NodeError, match="has child nodes"):
        h5file.remove_node("/g2")
    h5file.remove_node("/g2", recursive=True)
    assert not y.isopen and "/g2" not in h5file
    with pytest.raises(hyperslab.ClosedNodeError):
        y.read()
    with pytest.raises(hyperslab.NodeError, match="root group"):
        h5file.remove_node("/")


def test_copy_leaf_with_options(h5file: hyperslab.File) -> None:
    ea = h5file.create_earray("/", "e", hyperslab.Float64Atom(), shape=(0, 3), title="T")
    ea.append(np.arange(30.0).reshape(10, 3))
    ea.attrs.units = "m"
    new = h5file.copy_node(ea, "/", "e2", start=2, stop=8, step=2,
                           filters=hyperslab.Filters(3, "zlib"))
    assert isinstance(new, hyperslab.EArray)
    np.testing.assert_array_equal(new[:], np.arange(30.0).reshape(10, 3)[2:8:2])
    assert new.filters.complevel == 3 and new.title == "T" and new.attrs.units == "m"


def test_hidden_nodes_skipped(h5file: hyperslab.File) -> None:
    _sample(h5file)
    paths = [n._v_pathname for n in h5file]
    assert not any("_p_" in p or "_i_" in p for p in paths)
    assert h5file.get_node("/_p_private/z").is_visible() is False
    assert h5file.is_visible_node("/g1") is True


def test_reprs(h5file: hyperslab.File) -> None:
    _sample(h5file)
    assert str(h5file.root) == "/ (RootGroup) 'test file'"
    assert repr(h5file.root.g1).splitlines()[1] == "  children := ['sub' (Group), 'x' (Array)]"
    assert "Object Tree:" in str(h5file)
    assert repr(h5file).startswith("File(filename=")
    assert "atom := Int64Atom(shape=(), dflt=0)" in repr(h5file.root.arr)


def test_context_manager_closes_nodes(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w") as f:
        g = f.create_group("/", "g")
    assert not g._v_isopen
    assert "closed" in repr(g)


def test_open_pytables_files_without_warnings(h5path: Path) -> None:
    with tables.open_file(h5path, "w") as t:
        t.create_group("/", "g")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with hyperslab.open_file(h5path, "a") as f:
            f.create_group("/g", "h")
    with tables.open_file(h5path, "r") as t:
        assert t.root.g.h._v_attrs.CLASS == "GROUP"


def test_root_uep(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w") as f:
        f.create_array("/a/b", "x", np.arange(4), createparents=True)
    with hyperslab.open_file(h5path, "r", root_uep="/a") as f:
        np.testing.assert_array_equal(f.root.b.x[:], np.arange(4))
        assert f.root.b.x.path == "/b/x"
    with pytest.raises(hyperslab.NoSuchNodeError, match="User Entry Point"):
        hyperslab.open_file(h5path, "r", root_uep="/zzz")


def test_soft_links(h5path: Path) -> None:
    with tables.open_file(h5path, "w") as t:
        t.create_group("/", "data")
        t.root.data._v_attrs.marker = 1
        t.create_array("/data", "x", np.arange(3))
        t.create_soft_link("/data", "alias", "/data/x")
    with hyperslab.open_file(h5path, "a") as f:
        link = f.root.data.alias
        assert isinstance(link, hyperslab.SoftLink)
        assert link.target == "/data/x"
        np.testing.assert_array_equal(link()[:], np.arange(3))
        # The link's own attributes (HDF5 links have none); ``link.attrs`` is its
        # target's, as every plain name of a soft link is in PyTables.
        assert link._v_attrs._f_list("all") == [] and "marker" not in link._v_attrs
        with pytest.raises(TypeError, match="links can not have attributes"):
            link._v_attrs.new = 1
        assert "new" not in f.root.data._v_attrs
        assert link.attrs._f_list("all") == f.root.data.x.attrs._f_list("all")
        assert [n._v_pathname for n in f] == ["/", "/data", "/data/alias", "/data/x"]


def test_addresses_and_kinds_without_metadata_sizes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """object_address and child_kind answer from the object header: H5Oget_info would
    also read every node of a chunked dataset's chunk B-tree to sum its size."""
    from h5py import h5o

    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=np.arange(10_000), chunks=(10,))
        f.create_group("g")
    with h5py.File(path, "r") as f:
        expected = {name: h5o.get_info(f[name].id).addr for name in ("d", "g")}

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("h5o.get_info called")

        monkeypatch.setattr(tree.h5o, "get_info", refuse)
        for name, kind in (("d", tree.Kind.DATASET), ("g", tree.Kind.GROUP)):
            assert tree.object_address(f[name].id) == expected[name]
            assert tree.child_kind(f.id, name) is kind


def test_link_kind(tmp_path: Path) -> None:
    path = tmp_path / "links.h5"
    with h5py.File(path, "w") as f:
        f.create_group("g")
        f["soft"] = h5py.SoftLink("/g")
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["ext"] = h5py.ExternalLink("other.h5", "/x")
    with h5py.File(path, "r") as f:
        gid = f.id if isinstance(f.id, h5py.h5g.GroupID) else h5py.h5g.open(f.id, b"/")
        assert tree.link_kind(gid, "g") is None  # a hard link
        assert tree.link_kind(gid, "soft") is tree.Kind.SOFTLINK
        assert tree.link_kind(gid, "dangling") is tree.Kind.SOFTLINK
        assert tree.link_kind(gid, "ext") is tree.Kind.EXTLINK
        assert tree.link_kind(gid, "absent") is tree.Kind.UNKNOWN
        assert tree.link_kind(gid, "absent/deeper") is tree.Kind.UNKNOWN
        assert tree.link_kind(gid, "g/absent") is tree.Kind.UNKNOWN

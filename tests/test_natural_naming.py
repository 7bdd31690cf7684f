"""Natural naming reaches every child, whatever its name, as in PyTables.

A group's members are all in PyTables' reserved forms (``_v_*``, ``_f_*``, ``_g_*``, ``_c_*``,
dunders), so a child named ``name``, ``attrs``, ``copy`` or ``_file`` is what
``group.<name>`` gives.  Leaves and files keep their plain PEP 8 members.  PyTables is the
oracle: files written by either library are read with natural naming by both.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import tables

import hyperslab

LIBS = {"hyperslab": hyperslab, "tables": tables}

RESERVED = ("_v_", "_f_", "_g_", "_c_", "__")
"""PyTables' reserved forms of member names."""

FORMER_MEMBERS = (
    # public members Group had before it kept PyTables' reserved forms only
    "name", "title", "path", "attrs", "file", "parent", "filters", "depth", "copy", "move",
    "remove", "rename", "close", "isopen", "walk_nodes", "walk_groups", "list_nodes",
    "iter_nodes", "get_child", "children_view", "is_visible",
    # private ones, from Node and Group
    "_file", "_path", "_h5id", "_h5id_", "_isopen", "_class_value", "_kind", "_links",
    "_kinds", "_visible", "_link_table", "_kind_of", "_visible_names", "_hidden_names",
    "_child_added", "_child_removed", "_names_of", "_attr_changed", "_class_label",
    # and any other name
    "foo",
)
"""Child names natural naming must reach: every former plain or private Group member."""

RECORD = np.dtype([("index", "i4"), ("label", "S12")])


def _array_data(i: int) -> np.ndarray:
    return np.arange(i, i + 5, dtype="i8")


def _table_data(i: int, name: str) -> np.ndarray:
    return np.array([(i, name.encode()), (-i, b"second")], dtype=RECORD)


def _build(lib: ModuleType, path: Path) -> None:
    """Children named after every former member: groups (under the root group), arrays
    and tables (under a plain group each)."""
    with lib.open_file(str(path), "w") as f:
        arrays = f.create_group("/", "arrays")
        tabs = f.create_group("/", "tables")
        for i, name in enumerate(FORMER_MEMBERS):
            group = f.create_group("/", name, title=f"group {name}")
            f.create_array(group, "marker", np.array([i]))
            f.create_array(arrays, name, _array_data(i), title=f"array {name}")
            f.create_table(tabs, name, obj=_table_data(i, name), title=f"table {name}")


def _check_children(lib: ModuleType, f: Any) -> None:
    """Every child, read by natural naming (``getattr`` is how Python spells
    ``group.<name>`` for a name in a variable), is the right node with the right data."""
    root, arrays, tabs = f.root, f.root.arrays, f.root.tables
    for i, name in enumerate(FORMER_MEMBERS):
        group = getattr(root, name)
        assert isinstance(group, lib.Group), name
        assert group._v_pathname == f"/{name}" and group._v_title == f"group {name}"
        assert group.marker.read().tolist() == [i]
        array = getattr(arrays, name)
        assert isinstance(array, lib.Array), name
        assert array._v_pathname == f"/arrays/{name}" and array.title == f"array {name}"
        np.testing.assert_array_equal(array.read(), _array_data(i))
        table = getattr(tabs, name)
        assert type(table).__name__ == "Table", name  # hyperslab.Table is not exported
        assert table.name == name and table.title == f"table {name}"
        np.testing.assert_array_equal(table.read(), _table_data(i, name))
        assert group is root._f_get_child(name) and array is arrays._f_get_child(name)
    # and the same spelled out, as user code writes it
    assert f.root.arrays.name.read().tolist() == _array_data(0).tolist()
    assert f.root.tables.attrs.read()["label"][0] == b"attrs"
    assert f.root.copy.marker[0] == FORMER_MEMBERS.index("copy")
    assert f.root.arrays._file.title == "array _file"
    assert f.root.walk_nodes._v_name == "walk_nodes"
    assert f.root.tables._path.nrows == 2


def _plain_members(obj: Any) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith(RESERVED))


def test_group_members_are_in_reserved_forms(tmp_path: Path) -> None:
    """dir() of an empty group (and of the root) shows no member outside PyTables'
    reserved forms, not even a name PyTables' own groups have outside them."""
    with tables.open_file(str(tmp_path / "pt.h5"), "w") as t:
        theirs = _plain_members(t.create_group("/", "g"))
        assert _plain_members(t.root) == [*theirs, "g"]
    assert theirs == ["_AttributeSet", "_get_obj_info", "_get_obj_timestamps"]
    with hyperslab.open_file(tmp_path / "hs.h5", "w") as f:
        group = f.create_group("/", "g")
        assert _plain_members(group) == []  # PyTables' three are not needed
        assert _plain_members(f.root) == ["g"]  # its child


def test_group_state_stays_in_reserved_forms_when_used(tmp_path: Path) -> None:
    """The members of every class of a group, and the state a used group keeps, are all in
    reserved forms (what dir() shows and what natural naming would be shadowed by)."""
    with hyperslab.open_file(tmp_path / "hs.h5", "w") as f:
        group = f.create_group("/", "g", filters=hyperslab.Filters(1, "zlib"))
        f.create_array(group, "a", np.arange(3))
        group._v_attrs.note = "x"
        assert (group._v_filters.complevel, len(group), group._v_nchildren) == (1, 1, 1)
        assert [n._v_name for n in group._f_walknodes()] == ["a"]
        assert repr(group).startswith("/g (Group)") and "a" in group._v_leaves
        assert (group._v_depth, group._v_name, group._v_parent) == (1, "g", f.root)
        for node in (group, f.root):
            members = {n for cls in type(node).__mro__ for n in vars(cls)} | set(vars(node))
            assert [n for n in members if not n.startswith(RESERVED)] == []


@pytest.mark.parametrize("reader", ["hyperslab", "tables"])
@pytest.mark.parametrize("writer", ["hyperslab", "tables"])
def test_children_named_after_former_members(tmp_path: Path, writer: str, reader: str) -> None:
    path = tmp_path / f"{writer}.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these names is unfit for natural naming
        _build(LIBS[writer], path)
        with LIBS[reader].open_file(str(path), "r") as f:
            _check_children(LIBS[reader], f)


@pytest.mark.parametrize("lib", ["hyperslab", "tables"])
def test_tutorial_columns_name(tmp_path: Path, lib: str) -> None:
    """PyTables' tutorial: a group ``columns`` with an array ``name``."""
    module = LIBS[lib]
    path = tmp_path / "tutorial.h5"
    names = np.array([b"Particle:      5", b"Particle:      6"])
    with module.open_file(str(path), "w") as h5file:
        gcolumns = h5file.create_group(h5file.root, "columns", "Pressure and Name")
        h5file.create_array(gcolumns, "pressure", np.array([25.0, 36.0]), "Pressure column")
        h5file.create_array(gcolumns, "name", names, "Name column selection")
    with module.open_file(str(path), "r") as h5file:
        np.testing.assert_array_equal(h5file.root.columns.name.read(), names)
        assert h5file.root.columns.name.title == "Name column selection"
        assert h5file.root.columns._v_title == "Pressure and Name"


def test_missing_child_errors_as_pytables(tmp_path: Path) -> None:
    """A missing child is a NoSuchNodeError (an AttributeError too) with PyTables' message,
    for any name that is not a member: plain, private, reserved-form or dunder."""
    path = tmp_path / "f.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
    names = ["missing", "_missing", "_v_missing", "_f_missing", "__missing__", "name"]
    with hyperslab.open_file(path) as f, tables.open_file(str(path)) as t:
        for name in names:
            for group, error in ((f.root.g, hyperslab.NoSuchNodeError),
                                 (t.root.g, tables.NoSuchNodeError)):
                with pytest.raises(error) as caught:
                    getattr(group, name)
                assert str(caught.value) == f"group ``/g`` does not have a child named ``{name}``"
                assert isinstance(caught.value, AttributeError | LookupError)
                assert getattr(group, name, "default") == "default"
                assert not hasattr(group, name)


@pytest.mark.parametrize("lib", ["hyperslab", "tables"])
def test_python_attributes_on_groups(tmp_path: Path, lib: str) -> None:
    """``group.foo = value`` sets a Python attribute: with a NaturalNameWarning when a
    visible child ``foo`` exists (PyTables: once it has listed the children), which natural
    naming then no longer reaches until the attribute is deleted; ``del group.child``
    removes no node."""
    module = LIBS[lib]
    path = tmp_path / "f.h5"
    with module.open_file(str(path), "w") as f:
        group = f.create_group("/", "g")
        f.create_array(group, "foo", np.arange(3))
        f.create_array(group, "_p_hidden", np.arange(2))
    with module.open_file(str(path), "a") as f:
        group = f.root.g
        assert "foo" in group._v_children  # PyTables warns once it has listed children
        with pytest.warns(module.NaturalNameWarning,
                          match="group ``/g`` already has a child node named ``foo``"):
            group.foo = 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            group.bar = 2  # no child of that name
            group._p_hidden = 3  # a hidden child: natural naming does not list it
        assert (group.foo, group.bar, group._p_hidden) == (1, 2, 3)
        np.testing.assert_array_equal(group._f_get_child("foo").read(), np.arange(3))
        del group.foo
        np.testing.assert_array_equal(group.foo.read(), np.arange(3))
        with pytest.raises(AttributeError) as caught:
            del group.foo
        assert str(caught.value).endswith(
            "object has no attribute 'foo' (use ``node._f_remove()`` if you want to remove "
            "a node)"
        )
        assert "foo" in group


@pytest.mark.parametrize("lib", ["hyperslab", "tables"])
def test_dir_lists_children_named_as_identifiers(tmp_path: Path, lib: str) -> None:
    module = LIBS[lib]
    with module.open_file(str(tmp_path / "f.h5"), "w") as f:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", module.NaturalNameWarning)
            for name in ("name", "not valid", "copy"):
                f.create_group("/", name)
        assert {"name", "copy"} <= set(dir(f.root)) and "not valid" not in dir(f.root)


LEAF_PLAIN = ("name", "title", "attrs", "filters", "copy", "move", "remove", "rename",
              "close", "chunkshape", "shape", "nrows", "read")
"""Plain members PyTables' leaves have, and ours keep."""

OUR_LEAF_PLAIN = ("path", "file", "parent", "depth", "isopen", "is_visible")
"""Plain members hyperslab's leaves add (PyTables: ``_v_pathname``, ``_v_file``, ...)."""

FILE_PLAIN = ("root", "title", "filters", "mode", "filename", "isopen", "close", "flush",
              "get_node", "walk_nodes", "walk_groups", "list_nodes", "iter_nodes",
              "create_group", "create_array", "remove_node", "rename_node", "move_node",
              "copy_node", "is_visible_node")
"""Plain members of PyTables' File, which ours keeps."""


def _make_leaves(lib: ModuleType, f: Any) -> dict[str, Any]:
    return {
        "Array": f.create_array("/", "a", np.arange(6), title="ta"),
        "CArray": f.create_carray("/", "c", lib.Int64Atom(), shape=(6,), title="tc",
                                  filters=lib.Filters(1, "zlib")),
        "EArray": f.create_earray("/", "e", lib.Int64Atom(), shape=(0,), title="te"),
        "Table": f.create_table("/", "t", obj=_table_data(1, "t"), title="tt"),
    }


def test_leaves_and_files_keep_plain_members(tmp_path: Path) -> None:
    with tables.open_file(str(tmp_path / "pt.h5"), "w") as t:
        for leaf in _make_leaves(tables, t).values():
            assert set(LEAF_PLAIN) <= set(dir(leaf))
        assert set(FILE_PLAIN) <= set(dir(t))
    with hyperslab.open_file(tmp_path / "hs.h5", "w") as f:
        assert set(FILE_PLAIN) <= set(dir(f))
        assert (f.title, f.isopen, f.mode) == ("", True, "w")
        f.title, f.filters = "the file", hyperslab.Filters(2, "zlib")  # the root group's
        assert (f.root._v_title, f.root._v_filters) == ("the file", f.filters)
        assert (f.title, f.filters.complevel) == ("the file", 2)
        for classname, leaf in _make_leaves(hyperslab, f).items():
            assert type(leaf).__name__ == classname
            assert set(LEAF_PLAIN + OUR_LEAF_PLAIN) <= set(dir(leaf))
            name = leaf.name
            assert (leaf.path, leaf.file, leaf.parent, leaf.depth) == (
                f"/{name}", f, f.root, 1)
            assert (leaf.isopen, leaf.is_visible(), leaf.title) == (True, True, f"t{name}")
            assert (leaf.name, leaf.path) == (leaf._v_name, leaf._v_pathname)
            leaf.attrs.unit = "m"
            assert leaf._v_attrs.unit == "m" == leaf.attrs.unit
            leaf.title = "new"
            assert leaf._v_title == "new"
            copy = leaf.copy("/", f"{name}_copy")
            assert copy.path == f"/{name}_copy" and copy.attrs.unit == "m"
            copy.rename(f"{name}_renamed")
            assert copy.name == f"{name}_renamed"
            group = f.create_group("/", f"{name}_dir")
            copy.move(group)
            assert copy.parent is group and copy.depth == 2
            copy.remove()
            assert not copy.isopen and f"{name}_renamed" not in group
            leaf.close()
            assert not leaf.isopen and f.get_node(f"/{name}") is not leaf

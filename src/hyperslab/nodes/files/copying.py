"""Copying nodes: whole subtrees with HDF5's object copy, leaves with new settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hyperslab.errors import NodeError
from hyperslab.nodes.leaves.array import Array, CArray, EArray
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.leaves.vlarray import VLArray
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.attributeset import NOT_COPIED_ATTRS
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import check_name, is_under, join_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree

if TYPE_CHECKING:
    from hyperslab.nodes.files.file import File

_LEAF_OPTIONS = frozenset(
    {"title", "filters", "chunkshape", "start", "stop", "step", "copyuserattrs", "stats",
     "expectedrows", "byteorder", "sortby", "checkCSI", "propindexes"}
)
_TABLE_OPTIONS = frozenset({"sortby", "checkCSI", "propindexes"})


def copy_node(
    file: File,
    where: Node | str,
    newparent: Node | str | None,
    newname: str | None,
    name: str | None,
    *,
    overwrite: bool,
    recursive: bool,
    createparents: bool,
    **kwargs: Any,
) -> Node:
    """Copy a node; see :meth:`hyperslab.nodes.files.file.File.copy_node`.

    Raises
    ------
    NodeError
        On a name clash without ``overwrite``, or copying a group into itself recursively.
    TypeError
        For an unknown copy option.
    """
    node = file.get_node(where, name)
    unknown = set(kwargs) - _LEAF_OPTIONS
    if unknown:
        raise TypeError(f"copy_node() got unknown options: {', '.join(sorted(unknown))}")
    target = (node._v_parent if node._v_pathname != "/" else file.root) if newparent is None else (
        file._parent_for_new(newparent, createparents)
    )
    file._check_writable()
    newname = node._v_name if newname is None else newname
    check_name(newname)
    newpath = join_path(target._v_pathname, newname)
    if newpath == node._v_pathname:
        raise NodeError(f"can not copy node ``{node._v_pathname}`` onto itself")
    if isinstance(node, Group) and recursive and is_under(target._v_pathname, node._v_pathname):
        raise NodeError(f"can not copy group ``{node._v_pathname}`` recursively into itself")
    if not isinstance(node, Table) and set(kwargs) & _TABLE_OPTIONS:
        raise TypeError(f"copy options {sorted(set(kwargs) & _TABLE_OPTIONS)} are for "
                        f"tables; ``{node._v_pathname}`` is a {type(node).__name__}")
    if isinstance(node, Table) and kwargs.get("sortby") is not None:
        node._indexing.sortby_index(kwargs["sortby"], bool(kwargs.get("checkCSI", False)))  # early
    file._make_room(target, newname, overwrite)
    if isinstance(node, Group):
        _copy_group(file, node, target, newname, recursive=recursive, title=kwargs.get("title"))
    elif isinstance(node, Leaf) and (set(kwargs) - {"copyuserattrs"} or
                                     kwargs.get("copyuserattrs") is False):
        _copy_leaf_with_options(file, node, target, newname, **kwargs)
    else:
        tree.copy_object(node._v_parent._g_h5id, node._v_name, target._g_h5id, newname)
        target._g_child_added(newname, node._c_kind)
    return file._load_child(target, newname)


def _copy_group(
    file: File, group: Group, target: Group, newname: str, *, recursive: bool, title: Any
) -> None:
    if recursive and group._v_pathname != "/":
        tree.copy_object(group._v_parent._g_h5id, group._v_name, target._g_h5id, newname)
        target._g_child_added(newname, group._c_kind)
    else:
        new = file._new_group(target, newname, group._v_title, None)
        names = [n for n in raw.attribute_names(group._g_h5id) if n not in NOT_COPIED_ATTRS]
        raw.copy_attributes(group._g_h5id, new._g_h5id, names)
        if raw.has_attribute(group._g_h5id, "FILTERS"):
            raw.copy_attributes(group._g_h5id, new._g_h5id, ["FILTERS"])
        if recursive:
            for child in group._f_iter_nodes():
                copy_node(file, child, new, None, None, overwrite=False, recursive=True,
                          createparents=False)
    if title is not None:
        file._load_child(target, newname)._v_title = title


def _copy_leaf_with_options(
    file: File, leaf: Leaf, target: Group, newname: str, **kwargs: Any
) -> None:
    """Copy a leaf row range into a new leaf with new title, filters or chunkshape."""
    start, stop, step = kwargs.get("start"), kwargs.get("stop"), kwargs.get("step")
    title = kwargs.get("title", leaf.title)
    if isinstance(leaf, Table):
        _copy_table(file, leaf, target, newname, **kwargs)
        return
    if isinstance(leaf, VLArray):
        vla = file.create_vlarray(
            target, newname, atom=leaf.atom, title=title,
            filters=kwargs.get("filters", leaf.filters),
            expectedrows=kwargs.get("expectedrows"), chunkshape=kwargs.get("chunkshape"),
            byteorder=kwargs.get("byteorder"),
        )
        leaf._copy_rows(vla, start, stop, step)
        if raw.has_attribute(leaf._g_h5id, "FLAVOR"):
            raw.copy_attributes(leaf._g_h5id, vla._g_h5id, ["FLAVOR"])
        if kwargs.get("copyuserattrs", True):
            raw.copy_attributes(leaf._g_h5id, vla._g_h5id, list(leaf.attrs._v_attrnamesuser))
        return
    data = leaf.read(start, stop, step) if leaf.shape != () else leaf.read()
    if isinstance(leaf, EArray):
        shape = list(leaf.shape)
        shape[leaf.extdim] = 0
        new: Leaf = file.create_earray(
            target, newname, atom=leaf.atom, shape=tuple(shape), title=title,
            filters=kwargs.get("filters", leaf.filters),
            expectedrows=kwargs.get("expectedrows", max(leaf.nrows, 1)),
            chunkshape=kwargs.get("chunkshape"), byteorder=kwargs.get("byteorder"),
        )
        new.append(data)  # type: ignore[attr-defined]
    elif isinstance(leaf, CArray):
        new = file.create_carray(
            target, newname, atom=leaf.atom, shape=data.shape, title=title,
            filters=kwargs.get("filters", leaf.filters), chunkshape=kwargs.get("chunkshape"),
            byteorder=kwargs.get("byteorder"),
        )
        new[...] = data
    elif isinstance(leaf, Array):
        new = file.create_array(target, newname, obj=data, title=title,
                                byteorder=kwargs.get("byteorder"))
    else:
        raise NodeError(f"copying {type(leaf).__name__} node ``{leaf._v_pathname}`` with options "
                        f"is not supported")
    if kwargs.get("copyuserattrs", True):
        names = [n for n in leaf.attrs._v_attrnamesuser]
        raw.copy_attributes(leaf._g_h5id, new._g_h5id, names)


def _copy_table(file: File, table: Table, target: Group, newname: str,
                **kwargs: Any) -> None:
    """Copy rows ``start:stop:step`` of a table, in ``sortby`` order when given (by its
    'full' index, streaming), with its indexes re-created with ``propindexes``."""
    start, stop, step = kwargs.get("start"), kwargs.get("stop"), kwargs.get("step")
    sortby = kwargs.get("sortby")
    new = file.create_table(
        target, newname, description=table.description,
        title=kwargs.get("title", table.title), filters=kwargs.get("filters", table.filters),
        expectedrows=kwargs.get("expectedrows", max(table.nrows, 1)),
        chunkshape=kwargs.get("chunkshape"), byteorder=kwargs.get("byteorder"),
    )
    try:
        if sortby is not None:
            batches = table._indexing.sorted_batches(sortby, bool(kwargs.get("checkCSI", False)),
                                            start, stop, step)
        else:
            batches = (records for _, records in table._iter_blocks(start, stop, step))
        for records in batches:
            new._append_records(records.copy())
        new.flush()
        if kwargs.get("copyuserattrs", True):
            names = list(table.attrs._v_attrnamesuser)
            raw.copy_attributes(table._g_h5id, new._g_h5id, names)
        if kwargs.get("propindexes", False):
            for path, index in table.colindexes.items():
                new._indexing.create(path, kind=index.kind, optlevel=index.optlevel,
                                  filters=index.filters)
    except BaseException:
        file.remove_node(new)  # no half-copied table is left behind
        raise


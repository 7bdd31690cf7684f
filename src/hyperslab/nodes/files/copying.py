"""Copying nodes, the children of a group and whole files, as PyTables does.

A node is copied into a group of the same file or of another open file.  Where no option
changes what is copied, HDF5 copies the object itself (H5Ocopy: a leaf's chunks as they
are, a group's whole subtree with ``recursive``); otherwise each node is copied on its
own, leaves with their new settings (rows ``start:stop:step``, ``filters``,
``chunkshape``, ``title``, ...).  Soft and external links are copied as links, never
what they point at.

Options (PyTables' names, all optional):

* ``title``, ``filters``, ``chunkshape`` (a shape, ``'keep'``: the source's, the
  default, or ``'auto'``), ``expectedrows``, ``byteorder``: settings of the copy;
* ``start``, ``stop``, ``step``: the rows of a leaf to copy;
* ``copyuserattrs`` (default true): copy the user attributes (the flavor always is);
* ``sortby``, ``checkCSI``, ``propindexes``: for tables (see ``Table.copy``);
* ``progress``: a progress bar of a table's rows copied (True, False; by default one for
  sorted copies of a million rows or more where stderr is a terminal), hyperslab's own;
* ``stats``: a dict whose ``groups``, ``leaves``, ``links``, ``bytes`` and ``hardlinks``
  counts are increased by what is copied;
* ``use_hardlinks`` (with ``address_map``): in copies of several nodes, an object
  reached by several hard links is copied once and hard-linked again in the copy.

An unknown option raises ``TypeError`` (PyTables ignores it: a misspelled option would
silently copy something else).
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from hyperslab import parameters
from hyperslab.errors import NodeError
from hyperslab.nodes.files.link import Link
from hyperslab.nodes.indexes.progress import PROGRESS_MIN_ROWS
from hyperslab.nodes.leaves.array import Array, CArray, EArray
from hyperslab.nodes.leaves.flavor import warn_unavailable
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.leaves.vlarray import VLArray
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import check_name, is_under, join_path, normalize_path, split_path
from hyperslab.nodes.tree.node import Node
from hyperslab.progress import progress_bar
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree

if TYPE_CHECKING:
    from hyperslab.nodes.files.file import File

_LEAF_OPTIONS = frozenset(
    {"title", "filters", "chunkshape", "start", "stop", "step", "copyuserattrs",
     "expectedrows", "byteorder", "sortby", "checkCSI", "propindexes"}
)
"""Options that may change what a leaf's copy holds (any of them: copied node by node)."""
_TABLE_OPTIONS = frozenset({"sortby", "checkCSI", "propindexes"})
_OPTIONS = _LEAF_OPTIONS | {"stats", "use_hardlinks", "address_map", "progress"}
_GROUP_OWN = frozenset({"TITLE", "FILTERS"})
"""A group's system attributes that its copy writes itself (from the copy's options)."""


def check_options(kwargs: dict[str, Any]) -> None:
    """Refuse unknown copy options (``TypeError`` naming them); give ``use_hardlinks`` the
    ``address_map`` every node copied shares."""
    unknown = set(kwargs) - _OPTIONS
    if unknown:
        raise TypeError(f"unknown copy options: {', '.join(sorted(unknown))} (known: "
                        f"{', '.join(sorted(_OPTIONS))})")
    if kwargs.get("use_hardlinks"):
        kwargs.setdefault("address_map", {})


def _owner(node: Node) -> File:
    """The open file of a node (any File: copies may cross files)."""
    return cast("File", node._v_file)


def _count(options: dict[str, Any], what: str, n: int = 1) -> None:
    stats = options.get("stats")
    if stats is not None:
        stats[what] = stats.get(what, 0) + n


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
        On a name clash without ``overwrite``, copying a node onto itself, or a group into
        itself recursively.
    OSError
        Copying the root group onto the root of its own file.
    TypeError
        For an unknown copy option, or table options for another kind of node.
    """
    node = file.get_node(where, name)
    check_options(kwargs)
    if node._v_pathname == "/" and newparent is not None and newname is None:
        dstgroup = _group_in_any_file(file, newparent, createparents)
        if dstgroup._v_file is file:
            raise OSError("You cannot copy a root group over the same file")
        copy_children(file, file.root, dstgroup, overwrite=overwrite, recursive=recursive,
                      createparents=False, **kwargs)
        return dstgroup
    if newparent is None and newname is None:
        raise NodeError("you should specify at least a ``newparent`` or a ``newname`` "
                        "parameter")
    srcparent = split_path(node._v_pathname)[0]
    newname = node._v_name if newname is None else check_name(newname)
    dstfile = newparent._v_file if isinstance(newparent, Node) else file
    if dstfile is file:
        dstpath = srcparent if newparent is None else (
            newparent._v_pathname if isinstance(newparent, Node) else normalize_path(newparent))
        if join_path(dstpath, newname) == node._v_pathname:
            raise NodeError(f"source and destination nodes are the same node: "
                            f"``{node._v_pathname}``")
        if recursive and isinstance(node, Group) and is_under(dstpath, node._v_pathname):
            raise NodeError(f"can not move or recursively copy node ``{node._v_pathname}`` "
                            f"into itself")
    if not isinstance(node, Table) and set(kwargs) & _TABLE_OPTIONS:
        raise TypeError(f"copy options {sorted(set(kwargs) & _TABLE_OPTIONS)} are for "
                        f"tables; ``{node._v_pathname}`` is a {type(node).__name__}")
    if isinstance(node, Table) and kwargs.get("sortby") is not None:
        node._indexing.sortby_index(kwargs["sortby"], bool(kwargs.get("checkCSI", False)))
    target = _group_in_any_file(file, srcparent if newparent is None else newparent,
                                createparents)
    _owner(target)._make_room(target, newname, overwrite)
    return _copy_logged(file, node, target, newname, recursive, kwargs)


def _group_in_any_file(file: File, where: Node | str, createparents: bool) -> Group:
    """The group at ``where``: a path in ``file``, or a group of any open file."""
    owner = _owner(where) if isinstance(where, Node) else file
    return owner._parent_for_new(where, createparents)


def _copy_logged(file: File, node: Node, target: Group, newname: str, recursive: bool,
                 options: dict[str, Any]) -> Node:
    """Copy ``node`` as one action of the undo log of the copy's file: the creation of the
    copy (what it holds is not logged; nor, as in PyTables, a copy of a link)."""
    dstfile = _owner(target)
    file._warn_cross_file_copy(dstfile)
    with dstfile._undo_pause():
        new = _copy(node, target, newname, recursive, options)
    if not isinstance(node, Link):
        dstfile._log_create(new)
    return new


def _copy(node: Node, target: Group, newname: str, recursive: bool,
          options: dict[str, Any]) -> Node:
    """Copy ``node`` as ``target``'s child ``newname`` (known to be free)."""
    dstfile = _owner(target)
    if isinstance(node, Link):
        tree.copy_link(node._v_parent._g_h5id, node._v_name, target._g_h5id, newname)
        target._g_child_added(newname, node._c_kind)
        _count(options, "links")
    elif isinstance(node, Group):
        _copy_group(node, target, newname, recursive, options)
    elif isinstance(node, Leaf) and set(options) & _LEAF_OPTIONS:
        _copy_leaf_with_options(node, target, newname, options)
    else:
        if isinstance(node, Leaf):  # PyTables reads the data, which warns
            warn_unavailable(node.flavor, node._v_pathname)
        tree.copy_object(node._v_parent._g_h5id, node._v_name, target._g_h5id, newname)
        target._g_child_added(newname, node._c_kind)
        if isinstance(node, Leaf):
            _count(options, "leaves")
            _count(options, "bytes", node.size_in_memory)
    return dstfile._load_child(target, newname)


def _copy_group(group: Group, target: Group, newname: str, recursive: bool,
                options: dict[str, Any]) -> None:
    title = options.get("title")
    if recursive and group._v_pathname != "/" and set(options) <= {"title"}:
        # Nothing changes: HDF5 copies the whole subtree (hidden nodes, as indexes, too).
        tree.copy_object(group._v_parent._g_h5id, group._v_name, target._g_h5id, newname)
        target._g_child_added(newname, group._c_kind)
        if title is not None:
            target._v_file._load_child(target, newname)._v_title = title
        return
    filters = options.get("filters")
    if filters is None and raw.has_attribute(group._g_h5id, "FILTERS"):
        filters = group._v_filters
    new = _owner(target)._new_group(target, newname, group._v_title if title is None else title,
                                    filters)
    if options.get("copyuserattrs", True):  # CLASS and VERSION too, as PyTables
        names = group._v_attrs._g_copied_names(new._v_file._options.pytables_sys_attrs)
        raw.copy_attributes(group._g_h5id, new._g_h5id,
                            [n for n in names if n not in _GROUP_OWN])
    _count(options, "groups")
    if recursive:
        rest = {k: v for k, v in options.items() if k != "title"}
        _copy_tree(group, new, rest)


def _copy_tree(src: Group, dst: Group, options: dict[str, Any]) -> None:
    """Copy every visible node below ``src`` into ``dst``, group by group (as PyTables)."""
    stack = [(src, dst)]
    while stack:
        srcparent, dstparent = stack.pop()
        for child in srcparent._f_iter_nodes():
            if _hard_link_again(child, dstparent, options):
                continue
            new = _copy(child, dstparent, child._v_name, False, options)
            if isinstance(child, Group):
                stack.append((child, new))  # type: ignore[arg-type]


def _hard_link_again(node: Node, dstparent: Group, options: dict[str, Any]) -> bool:
    """With ``use_hardlinks``: hard-link ``node`` in the copy if its object (reached by
    several hard links) was copied already, else remember where its copy goes."""
    if not options.get("use_hardlinks") or isinstance(node, Link):
        return False
    h5id = node._g_h5id
    if tree.hard_link_count(h5id) < 2:
        return False
    address_map = options["address_map"]
    address = tree.object_address(h5id)
    newpath = join_path(dstparent._v_pathname, node._v_name)
    if address in address_map:
        _owner(dstparent).create_hard_link(dstparent, node._v_name, address_map[address][0])
        address_map[address].append(newpath)
        _count(options, "hardlinks")
        return True
    address_map[address] = [newpath]
    return False


def copy_children(
    file: File,
    srcgroup: Node | str,
    dstgroup: Node | str,
    *,
    overwrite: bool = False,
    recursive: bool = False,
    createparents: bool = False,
    **kwargs: Any,
) -> None:
    """Copy the children of ``srcgroup`` into ``dstgroup`` (a group of any open file).

    Raises
    ------
    NodeError
        If ``dstgroup`` has a child of a name to copy and ``overwrite`` is false (before
        anything is copied).
    """
    check_options(kwargs)
    src = file._as_group(srcgroup)
    dst = _group_in_any_file(file, dstgroup, createparents)
    names = list(src._g_visible_names())
    if not overwrite:
        for childname in names:
            if childname in dst:
                raise NodeError(f"destination group ``{dst._v_pathname}`` already has a node "
                                f"named ``{childname}``; you may want to use the "
                                f"``overwrite`` argument")
    for child in list(src._f_iter_nodes()):
        if _hard_link_again(child, dst, kwargs):
            continue
        _owner(dst)._make_room(dst, child._v_name, overwrite)
        _copy_logged(file, child, dst, child._v_name, recursive, kwargs)


def copy_file(file: File, dstfilename: str | os.PathLike[str], overwrite: bool = False,
              **kwargs: Any) -> None:
    """Copy a whole file; see :meth:`hyperslab.nodes.files.file.File.copy_file`."""
    from hyperslab.nodes.files.file import open_file

    file._check_open()
    dstfilename = os.fspath(dstfilename)
    if os.path.realpath(file.filename) == os.path.realpath(dstfilename):
        raise OSError("You cannot copy a file over itself")
    params = {k: kwargs.pop(k) for k in list(kwargs) if hasattr(parameters, k.upper())
              and k not in _OPTIONS}
    filters = kwargs.pop("filters", None)
    if filters is None and raw.has_attribute(file.root._g_h5id, "FILTERS"):
        filters = file.root._v_filters
    title = kwargs.pop("title", file.title)
    check_options(kwargs)
    if os.path.isfile(dstfilename) and not overwrite:
        raise OSError(f"file ``{dstfilename}`` already exists; you may want to use the "
                      f"``overwrite`` argument")
    with open_file(dstfilename, "w", title=title, filters=filters, **params) as dst:
        if kwargs.get("copyuserattrs", True):
            file.root._v_attrs._f_copy(dst.root)
        copy_children(file, file.root, dst.root, recursive=True, **kwargs)


def _chunkshape(leaf: Leaf, options: dict[str, Any]) -> Any:
    """The chunk shape of a leaf's copy: the source's unless another is asked for."""
    chunkshape = options.get("chunkshape", "keep")
    if chunkshape == "keep":
        return leaf.chunkshape
    if chunkshape == "auto":
        return None
    return chunkshape


def _copy_leaf_with_options(leaf: Leaf, target: Group, newname: str,
                            options: dict[str, Any]) -> None:
    """Copy a leaf's rows ``start:stop:step`` into a new leaf with new settings."""
    file = _owner(target)
    start, stop, step = _row_range(leaf, options)
    options = {**options, "start": start, "stop": stop, "step": step}
    title = options.get("title")
    title = leaf.title if title is None else title
    filters = options.get("filters")
    filters = leaf.filters if filters is None else filters
    if isinstance(leaf, Table):
        new: Leaf = _copy_table(leaf, target, newname, title, filters, options)
        nbytes = new.nrows * new.rowsize
    elif isinstance(leaf, VLArray):
        vla = file.create_vlarray(
            target, newname, atom=leaf.atom, title=title, filters=filters,
            expectedrows=options.get("expectedrows"), chunkshape=_chunkshape(leaf, options),
            byteorder=options.get("byteorder"))
        leaf._copy_rows(vla, start, stop, step)
        new, nbytes = vla, vla.size_in_memory
    else:
        data = leaf.read(start, stop, step) if leaf.shape != () else leaf.read()
        if leaf.flavor != "numpy":
            data = np.asarray(data, dtype=leaf.dtype)
        new = _new_array(leaf, file, target, newname, data, title, filters, options)
        nbytes = int(math.prod(leaf.shape)) * leaf.dtype.itemsize
    if options.get("copyuserattrs", True):  # CLASS, VERSION, FLAVOR... too, as PyTables
        names = leaf.attrs._g_copied_names(new._v_file._options.pytables_sys_attrs)
        raw.copy_attributes(leaf._g_h5id, new._g_h5id, names)
        for name in names:
            new._v_attrs._changed(name)
    if raw.has_attribute(leaf._g_h5id, "FLAVOR"):  # the flavor is always copied
        raw.copy_attributes(leaf._g_h5id, new._g_h5id, ["FLAVOR"])
        new._g_attr_changed("FLAVOR")
    _count(options, "leaves")
    _count(options, "bytes", nbytes)


def _row_range(leaf: Leaf, options: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``start, stop, step`` of the rows to copy: as PyTables, ``start`` alone is one row
    (``-1``: the last one to the end)."""
    start, stop, step = options.get("start"), options.get("stop"), options.get("step")
    if start is not None and stop is None and step is None:
        stop = None if start == -1 else start + 1
        if stop == 0:  # start + 1 == 0 can't end a slice
            stop = None
    return start, stop, step


def _new_array(leaf: Leaf, file: File, target: Group, newname: str, data: Any, title: str,
               filters: Any, options: dict[str, Any]) -> Leaf:
    chunkshape = _chunkshape(leaf, options)
    byteorder = options.get("byteorder")
    if isinstance(leaf, EArray):
        shape = list(leaf.shape)
        shape[leaf.extdim] = 0
        new: Leaf = file.create_earray(
            target, newname, atom=leaf.atom, shape=tuple(shape), title=title, filters=filters,
            expectedrows=options.get("expectedrows", max(leaf.nrows, 1)),
            chunkshape=chunkshape, byteorder=byteorder,
        )
        new.append(data)  # type: ignore[attr-defined]
        return new
    if isinstance(leaf, CArray):
        new = file.create_carray(target, newname, atom=leaf.atom, shape=data.shape, title=title,
                                 filters=filters, chunkshape=chunkshape, byteorder=byteorder)
        new[...] = data
        return new
    if isinstance(leaf, Array):
        return file.create_array(target, newname, obj=data, title=title, byteorder=byteorder)
    raise NodeError(f"copying {type(leaf).__name__} node ``{leaf._v_pathname}`` with options "
                    f"is not supported")


def _copy_bar(table: Table, options: dict[str, Any], sortby: Any) -> Any:
    """The progress bar of a table copy, counting rows: ``progress=True`` shows it,
    ``False`` not; by default (None) a sorted copy of a million rows or more shows it
    where stderr is a terminal."""
    rows = len(range(*slice(options.get("start"), options.get("stop"),
                            options.get("step")).indices(table.nrows)))
    show = options.get("progress")
    if show is None:
        show = None if sortby is not None and rows >= PROGRESS_MIN_ROWS else False
    return progress_bar(rows, f"copying {table._v_pathname}", show=show, unit="rows")


def _copy_table(table: Table, target: Group, newname: str, title: str, filters: Any,
                options: dict[str, Any]) -> Table:
    """Copy rows ``start:stop:step`` of a table, in ``sortby`` order when given (by its
    'full' index, streaming), with its indexes re-created with ``propindexes``."""
    file = _owner(target)
    start, stop, step = options.get("start"), options.get("stop"), options.get("step")
    sortby = options.get("sortby")
    new = file.create_table(
        target, newname, description=table.description, title=title, filters=filters,
        expectedrows=options.get("expectedrows", max(table.nrows, 1)),
        chunkshape=_chunkshape(table, options), byteorder=options.get("byteorder"),
    )
    try:
        if sortby is not None:
            batches = table._indexing.sorted_batches(
                sortby, bool(options.get("checkCSI", False)), start, stop, step)
        else:
            batches = (records for _, records in table._iter_blocks(start, stop, step))
        with _copy_bar(table, options, sortby) as bar:
            for records in batches:
                new._append_records(records.copy())
                bar.update(len(records))
        new.flush()
        if options.get("propindexes", False):
            for path, index in table.colindexes.items():
                new._indexing.create(path, kind=index.kind, optlevel=index.optlevel,
                                     filters=index.filters)
    except BaseException:
        file.remove_node(new)  # no half-copied table is left behind
        raise
    return new

"""The File: opening, the object tree, and every hierarchy operation."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from hyperslab import parameters
from hyperslab.chunked.engine import default_workers
from hyperslab.codecs.filters import Filters
from hyperslab.errors import (
    ClosedFileError,
    FileModeError,
    HDF5ExtError,
    NodeError,
    NoSuchNodeError,
)
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.files import openfiles
from hyperslab.nodes.files.flushguard import FlushGuard
from hyperslab.nodes.files.link import ExternalLink, SoftLink, Unknown
from hyperslab.nodes.files.nodecache import NodeCache
from hyperslab.nodes.files.registry import class_by_name, class_for_classid, leaf_class
from hyperslab.nodes.leaves import create
from hyperslab.nodes.leaves.array import Array, CArray, EArray
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.tables.create import create_table
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.compat import FileAttrsCompat
from hyperslab.nodes.tree.group import Group, RootGroup
from hyperslab.nodes.tree.naming import (
    check_name,
    is_hidden_path,
    is_under,
    join_path,
    normalize_path,
    split_path,
)
from hyperslab.nodes.tree.node import Node
from hyperslab.options import FileOptions
from hyperslab.storage import attributes as raw
from hyperslab.storage import h5file, tree
from hyperslab.storage.preads import FileAccess, file_access
from hyperslab.storage.tree import Kind

FORMAT_VERSION = "2.1"
"""PyTables' file format version written in the root group."""


def open_file(
    filename: str | os.PathLike[str],
    mode: str = "r",
    title: str = "",
    root_uep: str = "/",
    filters: Filters | None = None,
    node_cache_slots: int | None = None,
    **params: Any,
) -> File:
    """Open an HDF5 file and return a :class:`File`.

    Parameters
    ----------
    filename : str or os.PathLike
        The file to open.
    mode : {'r', 'r+', 'a', 'w'}
        Read-only; read/write an existing file; read/write creating it if needed; create,
        truncating an existing file.
    title : str
        The title of the root group of a new file.
    root_uep : str
        The group shown as ``root`` (the User Entry Point).
    filters : Filters, optional
        Default filters of a new file (inherited by the leaves created in it).
    node_cache_slots : int, optional
        Node cache size for this file (default ``hyperslab.parameters.NODE_CACHE_SLOTS``).
    **params
        Any name of :mod:`hyperslab.parameters`, for this file only.

    Returns
    -------
    File
        The open file; use it as a context manager to close it.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "example.h5")
    >>> with hyperslab.open_file(path, "w", title="demo") as f:
    ...     g = f.create_group("/", "detector", "Detector data")
    ...     print(f.root.detector)
    /detector (Group) 'Detector data'
    """
    return File(filename, mode, title, root_uep, filters, node_cache_slots, **params)


def _lsd_of(filters: Filters) -> int | None:
    digits = filters.least_significant_digit
    return None if digits is None else int(digits)


class File(FileAttrsCompat):
    """An open HDF5 file and its object tree (create it with :func:`open_file`)."""

    def __init__(
        self,
        filename: str | os.PathLike[str],
        mode: str = "r",
        title: str = "",
        root_uep: str = "/",
        filters: Filters | None = None,
        node_cache_slots: int | None = None,
        **params: Any,
    ) -> None:
        overrides = dict(params)
        if node_cache_slots is not None:
            overrides["node_cache_slots"] = node_cache_slots
        self._options = FileOptions.from_defaults(vars(parameters), overrides)
        self.filename = os.fspath(filename)
        self.mode = mode
        self.root_uep = normalize_path(root_uep)
        if filters is not None and not isinstance(filters, Filters):
            raise TypeError(f"filters must be a Filters instance or None, not {filters!r}")
        existed = os.path.exists(self.filename)
        options = self._options
        openfiles.check_and_register(self, self.filename, mode)
        try:
            self._h5 = h5file.open_h5(
                self.filename,
                mode,
                chunk_cache_size=options.chunk_cache_size,
                chunk_cache_nelmts=options.chunk_cache_nelmts,
                chunk_cache_preempt=options.chunk_cache_preempt,
                metadata_cache_size=options.metadata_cache_size,
            )
        except BaseException:
            openfiles.unregister(self, self.filename)
            raise
        self._isopen = True
        # Read-only files: asked now, with the end of allocation their superblock records
        # (raw reads stay within it), read when HDF5 reads it rather than amid a query.
        self._access: FileAccess | None = file_access(self._h5.id) if mode == "r" else None
        self._pool: ThreadPoolExecutor | None = None
        self._workers = default_workers()
        self._cache = NodeCache(options.node_cache_slots)
        self._loading = threading.RLock()  # one node object per path, whatever the thread
        # Leaves holding rows not yet in the file (kept alive until flushed).
        self._unflushed: set[Any] = set()
        self._guard = FlushGuard(self)  # what a kill leaves behind (flushguard.py)
        try:
            root_id = h5file.root_group(self._h5, self.root_uep)
        except KeyError:
            self._h5.close()
            self._isopen = False
            openfiles.unregister(self, self.filename)
            raise NoSuchNodeError(
                f"the root User Entry Point ``{self.root_uep}`` does not exist in "
                f"``{self.filename}``"
            ) from None
        except HDF5ExtError:  # a damaged file: do not leave it open
            self._h5.close()
            self._isopen = False
            raise
        self.root = RootGroup(self, "/", root_id)
        if mode == "w" or (mode == "a" and not existed):
            self._init_root(title, filters)
            self._guard.flush()  # a valid empty file, whenever the program is killed

    def _init_root(self, title: str, filters: Filters | None) -> None:
        h5id = self.root._g_h5id
        if self._options.pytables_sys_attrs:
            raw.write_sys_string(h5id, "TITLE", title)
            raw.write_sys_string(h5id, "CLASS", "GROUP")
            raw.write_sys_string(h5id, "VERSION", "1.0")
            raw.write_sys_string(h5id, "PYTABLES_FORMAT_VERSION", FORMAT_VERSION)
        if filters is not None:
            raw.write_int_attribute(h5id, "FILTERS", filters._pack(), "int64")

    # ------------------------------------------------------------------ state
    @property
    def isopen(self) -> bool:
        """Whether the file is open."""
        return self._isopen

    @property
    def title(self) -> str:
        """The title of the root group."""
        return self.root._v_title

    @title.setter
    def title(self, value: str) -> None:
        self.root._v_title = value

    @property
    def filters(self) -> Filters:
        """Default filters of the file (the root group's)."""
        return self.root._v_filters

    @filters.setter
    def filters(self, value: Filters) -> None:
        self.root._v_filters = value

    @property
    def format_version(self) -> str | None:
        """PyTables' format version of the file (None if not written by PyTables' rules)."""
        return raw.read_string_attribute(self.root._g_h5id, "PYTABLES_FORMAT_VERSION")

    @property
    def node_cache_slots(self) -> int:
        """The node cache size of this file."""
        return self._cache.slots

    @property
    def params(self) -> FileOptions:
        """The frozen settings of this file."""
        return self._options

    def _executor(self) -> ThreadPoolExecutor:
        """The file's pool of threads for (de)compressing chunks (made on first use).

        Raises ``ClosedFileError`` once the file is closed (e.g. for a query iterator
        left open past the file's ``close``).
        """
        self._check_open()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="hyperslab")
        return self._pool

    @property
    def _file_access(self) -> FileAccess:
        """How the HDF5 file is open, as raw chunk I/O needs to know (asked of HDF5 once
        for all the leaves, not once per dataset)."""
        access = self._access
        if access is None:
            access = self._access = file_access(self._h5.id)
        return access

    def _check_open(self) -> None:
        if not self._isopen:
            raise ClosedFileError("the file object is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self.mode == "r":
            raise FileModeError(
                f"the file ``{self.filename}`` is not writable (opened in mode 'r')"
            )

    # ------------------------------------------------------------------ loading nodes
    def _class_by_name(self, classname: str | None) -> type[Node] | None:
        return class_by_name(classname)

    def _load_child(self, group: Group, name: str) -> Node:
        """Return the child ``name`` of ``group``, from the cache or freshly loaded."""
        path = join_path(group._v_pathname, name)
        node = self._cache.get(path)
        if node is not None:
            return node  # type: ignore[return-value]
        with self._loading:  # threads that miss the same path at once get one node
            node = self._cache.get(path)
            if node is not None:
                return node  # type: ignore[return-value]
            return self._load_missing(group, name, path)

    def _load_missing(self, group: Group, name: str, path: str) -> Node:
        gid = group._g_h5id
        links = group._v__links
        if links is not None:
            if name not in links:
                raise NoSuchNodeError(
                    f"group ``{group._v_pathname}`` does not have a child named ``{name}``"
                )
            link_kind = links[name]
        else:
            link_kind = tree.link_kind(gid, name)
            if link_kind is Kind.UNKNOWN:
                raise NoSuchNodeError(
                    f"group ``{group._v_pathname}`` does not have a child named ``{name}``"
                )
        node = self._make_node(gid, name, path, link_kind)
        group._v__kinds[name] = node._c_kind
        self._cache.add(node)
        return node

    def _open_h5id(self, path: str, kind: Kind) -> Any:
        """Open the HDF5 object at ``path`` for a node loaded without opening it.

        Raises
        ------
        HDF5ExtError
            If the object is not of the ``kind`` its CLASS attribute promised.
        """
        try:
            h5id = tree.open_path(self.root._g_h5id, path)
        except KeyError:
            raise NoSuchNodeError(f"there is no node at ``{path}`` any more") from None
        actual = tree.kind_of_id(h5id)
        if actual is not kind:
            raise HDF5ExtError(
                f"the object at ``{path}`` is a {actual.name.lower()}, but its CLASS "
                f"attribute says it is a {kind.name.lower()}: the file is malformed"
            )
        return h5id

    def _make_node(self, gid: Any, name: str, path: str, link_kind: Kind | None) -> Node:
        if link_kind is Kind.SOFTLINK:
            return SoftLink(self, path, gid)
        if link_kind is Kind.EXTLINK:
            return ExternalLink(self, path, gid)
        classid = raw.read_string_attribute_of(gid, name, "CLASS")
        # PyTables reads CLASS (a system attribute) back as a str; cache it for attrs.CLASS.
        class_value = None if classid is None else np.str_(classid)
        if classid is not None:
            cls = class_for_classid(classid)
            if cls is not None:
                return cls(self, path, None, class_value)
        try:
            h5id = tree.open_child(gid, name)
        except KeyError:  # the link went away since it was listed
            raise NoSuchNodeError(f"there is no node at ``{path}`` any more") from None
        except HDF5ExtError as exc:  # the link is there, its object cannot be opened
            return self._unopened_node(gid, name, path, exc)
        kind = tree.kind_of_id(h5id)
        if kind is Kind.GROUP:
            return Group(self, path, h5id, class_value)
        if kind is Kind.DATASET:
            return leaf_class(h5id)(self, path, h5id, class_value)
        return Unknown(self, path, h5id)

    def _unopened_node(self, gid: Any, name: str, path: str, exc: HDF5ExtError) -> Node:
        """The node of a link whose object HDF5 cannot open (a damaged file).

        When HDF5 can still tell that the object is a dataset (its header says so, another
        message of it is damaged), it is an :class:`Unknown` node: listed by walks, as
        h5py's ``visit`` lists it, with nothing below it left out; every use of it raises
        ``HDF5ExtError``.  Otherwise it may be a group, whose nodes a walk would leave out:
        ``HDF5ExtError`` naming the path and HDF5's reason.
        """
        try:
            kind = tree.child_kind(gid, name)
        except HDF5ExtError:
            kind = Kind.UNKNOWN
        if kind in (Kind.DATASET, Kind.NAMED_TYPE):
            return Unknown(self, path, None)
        raise HDF5ExtError(
            f"cannot open the object at ``{path}``: {exc.__cause__ or exc} (the file is "
            f"damaged)"
        ) from exc

    def _load_node(self, path: str) -> Node:
        if path == "/":
            return self.root
        node = self._cache.get(path)
        if node is not None:
            return node  # type: ignore[return-value]
        parent_path, name = split_path(path)
        return self._load_child(self._get_group(parent_path), name)

    def _get_group(self, path: str) -> Group:
        node = self._load_node(path)
        if not isinstance(node, Group):
            raise NoSuchNodeError(f"``{path}`` is a {type(node).__name__}, not a group")
        return node

    def _forget_node(self, node: Node) -> None:
        if self._cache.get(node._v_pathname) is node:
            self._cache.drop_one(node._v_pathname)

    def get_node(
        self, where: Node | str, name: str | None = None, classname: str | None = None
    ) -> Node:
        """Return the node at ``where`` (a path or a node), or its child ``name``.

        Parameters
        ----------
        where : str or Node
            An absolute path (``'/a/b'``) or a node of this file.
        name : str, optional
            A child of ``where`` to return instead.
        classname : str, optional
            Require the node to be of this class (PyTables' class names).

        Raises
        ------
        NoSuchNodeError
            If there is no node there.
        HDF5ExtError
            If the link is there but the object it points at cannot be opened and may be
            a group (a damaged file): the message names the path and what HDF5 reported.
            h5py raises ``KeyError`` there, PyTables ``NoSuchNodeError``.  A dataset HDF5
            cannot open, and an object that opens but is neither a group nor a dataset (a
            named datatype), is an :class:`~hyperslab.nodes.files.link.Unknown` node, whose
            leaf API raises ``HDF5ExtError``.
        TypeError
            If the node is not of class ``classname``.
        """
        self._check_open()
        if isinstance(where, Node):
            if where._v_file is not self:
                raise NodeError(
                    f"node ``{where._v_pathname}`` does not belong to file {self.filename}"
                )
            if not where._v_isopen:
                raise NoSuchNodeError(f"node ``{where._v_pathname}`` is closed or was removed")
            path = where._v_pathname
        else:
            path = normalize_path(where)
        if name is not None:
            path = join_path(path, check_name(name)) if path != "/" else "/" + name
        try:
            node = self._load_node(path)
        except NoSuchNodeError:
            raise NoSuchNodeError(f"group ``{split_path(path)[0]}`` does not have a child "
                                  f"named ``{split_path(path)[1]}``") from None
        cls = class_by_name(classname)
        if cls is not None and not isinstance(node, cls):
            raise TypeError(
                f"could not find a ``{classname}`` node at ``{path}``; instead, a "
                f"``{type(node).__name__}`` node has been found there"
            )
        return node

    def __contains__(self, path: object) -> bool:
        """Whether a node exists at ``path`` (a link there, even to an object that cannot
        be opened; ``HDF5ExtError`` if a group on the way cannot be read)."""
        if not isinstance(path, str):
            return False
        self._check_open()
        path = normalize_path(path)
        if path == "/":
            return True
        parent, name = split_path(path)
        try:
            return name in self._get_group(parent)
        except NoSuchNodeError:
            return False

    def is_visible_node(self, path: str) -> bool:
        """Whether the node at ``path`` is visible (not hidden, nor below a hidden group)."""
        return not is_hidden_path(self.get_node(path)._v_pathname)

    # ------------------------------------------------------------------ walking
    # Walks and listings never leave a node out: a group whose links cannot all be read,
    # or a link whose object cannot be opened and may be a group (a damaged file), raises
    # HDF5ExtError when the walk reaches it, as h5py's ``visit`` does (PyTables leaves
    # such nodes out).  A dataset that cannot be opened is listed, as an Unknown node.

    def iter_nodes(self, where: Node | str, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the children of group ``where`` (of class ``classname``).

        Raises ``HDF5ExtError`` on reaching a child that cannot be opened (see
        :meth:`walk_nodes`).
        """
        return self._as_group(where)._f_iter_nodes(classname)

    def list_nodes(self, where: Node | str, classname: str | None = None) -> list[Node]:
        """Return the children of group ``where`` (of class ``classname``) in name order.

        Raises ``HDF5ExtError`` if a child cannot be opened (see :meth:`walk_nodes`).
        """
        return list(self.iter_nodes(where, classname))

    def walk_groups(self, where: Node | str = "/") -> Iterator[Group]:
        """Iterate over group ``where`` and every visible group below it.

        Raises ``HDF5ExtError`` on reaching a child whose kind cannot be read (it may be
        a group; see :meth:`walk_nodes`).
        """
        return self._as_group(where)._f_walk_groups()

    def walk_nodes(self, where: Node | str = "/", classname: str | None = None) -> Iterator[Node]:
        """Iterate over every visible node from ``where`` down (of class ``classname``).

        As in PyTables, with no ``classname`` the start node comes first, then each group
        reached by :meth:`walk_groups` is followed by its children in name order.

        Raises
        ------
        HDF5ExtError
            When the walk reaches a group whose links cannot be listed, or a link whose
            object cannot be opened and may be a group (a damaged file; the message
            names it): a walk never leaves a node out silently.  The nodes before it have
            been yielded.  A dataset HDF5 cannot open is yielded as an
            :class:`~hyperslab.nodes.files.link.Unknown` node (its use raises ``HDF5ExtError``).
        """
        start = self.get_node(where)
        cls = class_by_name(classname)
        if not isinstance(start, Group):
            if cls is None or isinstance(start, cls):
                yield start
            return
        if cls is None:
            yield start
            for group in start._f_walk_groups():
                yield from group._f_iter_nodes()
        else:
            yield from start._f_walknodes(classname)

    def __iter__(self) -> Iterator[Node]:
        """Iterate over every visible node of the file."""
        return self.walk_nodes("/")

    def _as_group(self, where: Node | str) -> Group:
        node = self.get_node(where)
        if not isinstance(node, Group):
            raise TypeError(f"node ``{node._v_pathname}`` is not a group")
        return node

    # ------------------------------------------------------------------ creating
    def _parent_for_new(self, where: Node | str, createparents: bool) -> Group:
        self._check_writable()
        if isinstance(where, Node) or not createparents:
            return self._as_group(where)
        path = normalize_path(where)
        group: Group = self.root
        for part in [p for p in path.split("/") if p]:
            if part in group:
                group = self._as_group(join_path(group._v_pathname, part))
            else:
                group = self._new_group(group, part, "", None)
        return group

    def _check_new_name(self, parent: Group, name: str) -> str:
        check_name(name)
        if name in parent:
            raise NodeError(
                f"group ``{parent._v_pathname}`` already has a child node named ``{name}``"
            )
        return name

    def _new_group(self, parent: Group, name: str, title: str, filters: Filters | None) -> Group:
        self._check_new_name(parent, name)
        gid = tree.create_group(parent._g_h5id, name)
        if self._options.pytables_sys_attrs:
            raw.write_sys_string(gid, "CLASS", "GROUP")
            raw.write_sys_string(gid, "VERSION", "1.0")
            raw.write_sys_string(gid, "TITLE", title)
        # As PyTables: explicit filters are written; otherwise the parent's FILTERS attribute
        # is inherited only when the parent has one.
        if filters is None and raw.has_attribute(parent._g_h5id, "FILTERS"):
            filters = parent._v_filters
        if filters is not None:
            raw.write_int_attribute(gid, "FILTERS", filters._pack(), "int64")
        parent._g_child_added(name, Kind.GROUP)
        return self._load_child(parent, name)  # type: ignore[return-value]

    def create_group(
        self,
        where: Node | str,
        name: str,
        title: str = "",
        filters: Filters | None = None,
        createparents: bool = False,
    ) -> Group:
        """Create a group ``name`` in ``where`` and return it.

        Raises
        ------
        NodeError
            If ``where`` already has a child ``name``.
        FileModeError
            If the file is read-only.
        """
        parent = self._parent_for_new(where, createparents)
        return self._new_group(parent, name, title, filters)

    def _finish_leaf(self, parent: Group, name: str, cls: type[Leaf], dataset: Any) -> Any:
        """Register a just-created leaf and return its node (no re-reading of the file)."""
        parent._g_child_added(name, Kind.DATASET)
        class_value = np.str_(cls._c_classid) if self._options.pytables_sys_attrs else None
        node = cls(self, join_path(parent._v_pathname, name), dataset.dsid, class_value)
        self._cache.add(node)
        self._guard.created(node)
        return node

    def create_array(
        self,
        where: Node | str,
        name: str,
        obj: Any = None,
        title: str = "",
        byteorder: str | None = None,
        createparents: bool = False,
        atom: Atom | None = None,
        shape: Any = None,
        track_times: bool = True,
    ) -> Array:
        """Create a contiguous :class:`Array` holding ``obj`` (or ``atom`` x ``shape``).

        Raises
        ------
        TypeError
            If neither ``obj`` nor both ``atom`` and ``shape`` are given, or ``obj`` cannot
            be stored.
        """
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        if obj is None:
            if atom is None or shape is None:
                raise TypeError("if the obj parameter is not specified, both the atom and "
                                "shape parameters must be given")
            data, _ = create.as_data(create.filled(atom, shape), atom)
            flavor = "numpy"
        else:
            data, flavor = create.as_data(obj, atom)
        data = data.astype(create.with_byteorder(data.dtype, byteorder), copy=False)
        dataset = create.create_array_dataset(
            parent._g_h5id, name, data, track_times=track_times
        )
        if self._options.pytables_sys_attrs:
            create.write_leaf_sys_attrs(dataset.dsid, Array._c_classid, Array._c_version,
                                        title, flavor=flavor)
        return self._finish_leaf(parent, name, Array, dataset)

    def create_carray(
        self,
        where: Node | str,
        name: str,
        atom: Atom | None = None,
        shape: Any = None,
        title: str = "",
        filters: Filters | None = None,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
        blockshape: Any = None,
    ) -> CArray:
        """Create a chunked, fixed-shape :class:`CArray`, filled from ``obj`` if given.

        ``blockshape`` (Blosc2 compression only) sets the b2nd blocks each chunk is cut
        into: the unit of partial decompression (a selection decodes only the blocks it
        touches).  By default blocks are chosen for the CPU's L2 cache
        (:func:`hyperslab.codecs.blockshape.choose_blockshape`).  Chunks written whole
        (``arr[...] = x`` covering them, ``append``) get these blocks; chunks HDF5's filter
        writes in part get the filter's own.

        Raises
        ------
        TypeError
            If neither ``obj`` nor ``atom`` and ``shape`` are given.
        ValueError
            If ``obj`` disagrees with ``atom``/``shape``, or ``chunkshape`` or
            ``blockshape`` is invalid (nothing is created).
        """
        return self._new_chunked(
            CArray, where, name, atom, shape, obj, title=title, filters=filters,
            chunkshape=chunkshape, byteorder=byteorder, createparents=createparents,
            track_times=track_times, expectedrows=None, blockshape=blockshape,
        )

    def create_earray(
        self,
        where: Node | str,
        name: str,
        atom: Atom | None = None,
        shape: Any = None,
        title: str = "",
        filters: Filters | None = None,
        expectedrows: int | None = None,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
        blockshape: Any = None,
    ) -> EArray:
        """Create an extendable :class:`EArray` (one dimension of ``shape`` must be 0).

        ``blockshape`` is as in :meth:`create_carray`.

        Raises
        ------
        ValueError
            If ``shape`` has no zero dimension or more than one, or ``blockshape`` is
            invalid.
        """
        node = self._new_chunked(
            EArray, where, name, atom, shape, obj, title=title, filters=filters,
            chunkshape=chunkshape, byteorder=byteorder, createparents=createparents,
            track_times=track_times, expectedrows=expectedrows, blockshape=blockshape,
        )
        assert isinstance(node, EArray)
        return node

    def _new_chunked(
        self,
        cls: type[CArray],
        where: Node | str,
        name: str,
        atom: Atom | None,
        shape: Any,
        obj: Any,
        *,
        title: str,
        filters: Filters | None,
        chunkshape: Any,
        byteorder: str | None,
        createparents: bool,
        track_times: bool,
        expectedrows: int | None,
        blockshape: Any = None,
    ) -> CArray:
        """Create a CArray or (``cls`` EArray) an EArray; see their ``create_*`` methods."""
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        extendable = cls is EArray
        atom, shape, data = create.resolve_atom_shape(atom, shape, obj, extendable=extendable)
        extdim = create.extendable_dim(shape) if extendable else None
        if expectedrows is None:
            expectedrows = self._options.expected_rows_earray if extendable else (
                shape[0] if shape else 1)
        filters = filters if filters is not None else parent._v_filters
        chunks = create.chunked_layout(shape, atom, filters, maindim=extdim or 0,
                                       expectedrows=int(expectedrows), chunkshape=chunkshape,
                                       classname=cls._c_classid)
        blocks = create.check_blockshape(blockshape, chunks, filters)
        dataset = create.create_chunked_dataset(
            parent._g_h5id, name, shape=shape, atom=atom, filters=filters, chunkshape=chunks,
            extdim=extdim, byteorder=byteorder, track_times=track_times,
        )
        if self._options.pytables_sys_attrs:
            create.write_leaf_sys_attrs(dataset.dsid, cls._c_classid, cls._c_version, title,
                                        extdim=extdim)
        node: CArray = self._finish_leaf(parent, name, cls, dataset)
        node._lsd = _lsd_of(filters)
        if blocks is not None:
            node._engine.set_blockshape(blocks)
        if data is not None:
            if isinstance(node, EArray):
                node.append(data)
            else:
                node[...] = data
        return node

    def create_table(
        self,
        where: Node | str,
        name: str,
        description: Any = None,
        title: str = "",
        filters: Filters | None = None,
        expectedrows: int = 10_000,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
    ) -> Table:
        """Create a :class:`Table` of rows described by ``description`` (or ``obj``'s dtype).

        ``description`` is an IsDescription subclass or instance, a dict of Cols, a NumPy
        structured dtype or array, or a Description; ``obj`` (a structured array or rows)
        fills the table.  ``expectedrows`` sizes the chunks when ``chunkshape`` is None.

        Raises
        ------
        TypeError
            If neither ``description`` nor ``obj`` describes the rows.
        ValueError
            If ``obj`` does not fit ``description``, or ``chunkshape`` is invalid.
        """
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        return create_table(
            self, parent, name, description, title=title, filters=filters,
            expectedrows=expectedrows, chunkshape=chunkshape, byteorder=byteorder, obj=obj,
            track_times=track_times,
        )

    # ------------------------------------------------------------------ changing the tree
    def remove_node(
        self, where: Node | str, name: str | None = None, recursive: bool = False
    ) -> None:
        """Remove a node (a non-empty group only with ``recursive=True``).

        Raises
        ------
        NodeError
            For the root group, or a non-empty group without ``recursive``.
        """
        self._check_writable()
        node = self.get_node(where, name)
        if node._v_pathname == "/":
            raise NodeError("the root group can not be removed")
        if isinstance(node, Group) and len(node._g_link_table()) and not recursive:
            raise NodeError(
                f"group ``{node._v_pathname}`` has child nodes; please set `recursive` to true "
                f"to remove it"
            )
        parent = node._v_parent
        companion = _companion(node, parent)
        tree.delete_link(parent._g_h5id, node._v_name)
        parent._g_child_removed(node._v_name)
        for gone in self._cache.drop(node._v_pathname):
            gone._v__isopen = False  # type: ignore[attr-defined]
        if companion is not None:  # a table's indexes go with it
            self.remove_node(parent, companion, recursive=True)

    def rename_node(
        self, where: Node | str, newname: str, name: str | None = None, overwrite: bool = False
    ) -> None:
        """Rename a node in its group."""
        self.move_node(where, None, newname, name, overwrite=overwrite)

    def move_node(
        self,
        where: Node | str,
        newparent: Node | str | None = None,
        newname: str | None = None,
        name: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> None:
        """Move a node to ``newparent`` (default: its parent) as ``newname``.

        Raises
        ------
        NodeError
            For the root group, a name clash without ``overwrite``, or a move into the
            node's own subtree.
        """
        self._check_writable()
        node = self.get_node(where, name)
        if node._v_pathname == "/":
            raise NodeError("the root group can not be moved or renamed")
        old_parent = node._v_parent
        if newparent is None:
            target = old_parent
        else:
            target = self._parent_for_new(newparent, createparents)
        newname = node._v_name if newname is None else newname
        newpath = join_path(target._v_pathname, newname)
        if newpath == node._v_pathname:
            return
        if is_under(target._v_pathname, node._v_pathname):
            raise NodeError(f"can not move node ``{node._v_pathname}`` into itself (``{newpath}``)")
        check_name(newname)
        self._make_room(target, newname, overwrite)
        companion = _companion(node, old_parent)
        tree.move_link(old_parent._g_h5id, node._v_name, target._g_h5id, newname)
        old_parent._g_child_removed(node._v_name)
        target._g_child_added(newname, node._c_kind)
        self._cache.repath(node._v_pathname, newpath)
        if companion is not None:  # a table's indexes follow it
            moved: Any = self.get_node(newpath)
            self.move_node(old_parent, target, moved._indexing.group_name(), companion,
                           overwrite=True)
            moved._indexing.reload()  # found again in the new place

    def _make_room(self, target: Group, newname: str, overwrite: bool) -> None:
        """Remove ``target``'s child ``newname`` for a move or copy, if ``overwrite``.

        Raises
        ------
        NodeError
            If the child exists and ``overwrite`` is false.
        """
        if newname in target:
            if not overwrite:
                raise NodeError(
                    f"destination group ``{target._v_pathname}`` already has a node named "
                    f"``{newname}``; set `overwrite` to replace it"
                )
            self.remove_node(target, newname, recursive=True)

    def copy_node(
        self,
        where: Node | str,
        newparent: Node | str | None = None,
        newname: str | None = None,
        name: str | None = None,
        overwrite: bool = False,
        recursive: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> Node:
        """Copy a node (a group's subtree too with ``recursive``) and return the copy.

        Leaves accept PyTables' copy options in ``kwargs``: ``title``, ``filters``,
        ``chunkshape``, ``start``, ``stop``, ``step``, ``copyuserattrs`` (default True).
        """
        from hyperslab.nodes.files.copying import copy_node

        return copy_node(self, where, newparent, newname, name, overwrite=overwrite,
                         recursive=recursive, createparents=createparents, **kwargs)

    # ------------------------------------------------------------------ closing
    def flush(self) -> None:
        """Write every buffer to the file (in the order :mod:`~hyperslab.nodes.files.flushguard`
        describes, so that a program killed later finds every flushed row)."""
        self._check_open()
        if self.mode != "r":
            self._flush_leaves()
            self._guard.flush()

    def _flush_leaves(self) -> None:
        """Write the rows that leaves still buffer (table appends) to HDF5."""
        for leaf in list(self._unflushed):
            if leaf._v__isopen:
                leaf._flush_rows()
        self._unflushed.clear()

    def close(self) -> None:
        """Close the file; every node object of it becomes closed too."""
        if not self._isopen:
            return
        if self.mode != "r":
            self._flush_leaves()
            self._guard.close()
        for node in self._cache.live_nodes():
            node._v__isopen = False  # type: ignore[attr-defined]
        self._cache.clear()
        self.root._v__isopen = False
        self._isopen = False
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        self._h5.close()
        openfiles.unregister(self, self.filename)

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reprs
    def __str__(self) -> str:
        if not self._isopen:
            return f"<closed File {self.filename!r}>"
        mtime = time.ctime(os.stat(self.filename).st_mtime)
        lines = [f"{self.filename} (File) {self.title!r}", f"Last modif.: {mtime!r}",
                 "Object Tree: "]
        lines.extend(str(node) for node in self)
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        if not self._isopen:
            return f"<closed File {self.filename!r}>"
        head = (f"File(filename={self.filename}, title={self.title!r}, mode={self.mode!r}, "
                f"root_uep={self.root_uep!r}, filters={self.filters!r})")
        return "\n".join([head, *(repr(node) for node in self)])


def _companion(node: Node, parent: Group) -> str | None:
    """The name of the hidden group holding ``node``'s indexes, if it is a table that
    has one (it is removed, moved and renamed with the table)."""
    if not isinstance(node, Table):
        return None
    name = node._indexing.group_name()
    return name if name in parent else None


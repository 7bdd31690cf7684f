"""The File: opening and closing, its state, and the object tree's operations by mixin.

:class:`File` holds what a file is while open (the HDF5 file, options, node cache, worker
pool, flush guard) and opens, flushes and closes it.  The operations on its tree come from
mixins, one module each: getting and loading nodes (:mod:`~hyperslab.nodes.files.lookup`),
creating them (:mod:`~hyperslab.nodes.files.creation`), removing, renaming and moving them
(:mod:`~hyperslab.nodes.files.editing`), walking the tree
(:mod:`~hyperslab.nodes.files.walking`), undoing and redoing changes
(:mod:`~hyperslab.nodes.files.undoredo`); copying is in :mod:`~hyperslab.nodes.files.copying`.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from hyperslab import parameters
from hyperslab.chunked.pools import FilePool
from hyperslab.chunked.workers import default_workers
from hyperslab.codecs.filters import Filters, set_max_threads
from hyperslab.errors import ClosedFileError, FileModeError, HDF5ExtError, NoSuchNodeError
from hyperslab.nodes.files import openfiles, pickling
from hyperslab.nodes.files.creation import NodeCreation
from hyperslab.nodes.files.editing import TreeEditing
from hyperslab.nodes.files.flushguard import FlushGuard
from hyperslab.nodes.files.linking import LinkCreation
from hyperslab.nodes.files.lookup import NodeLookup
from hyperslab.nodes.files.nodecache import NodeCache
from hyperslab.nodes.files.undoredo import TRANSACTIONS, UndoRedo
from hyperslab.nodes.files.walking import TreeWalking
from hyperslab.nodes.tree.compat import FileAttrsCompat
from hyperslab.nodes.tree.group import RootGroup
from hyperslab.nodes.tree.naming import normalize_path
from hyperslab.nodes.tree.node import Node
from hyperslab.options import FileOptions
from hyperslab.storage import attributes as raw
from hyperslab.storage import h5file
from hyperslab.storage.drivers import Driver
from hyperslab.storage.preads import FileAccess, file_access

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


def copy_file(srcfilename: str | os.PathLike[str], dstfilename: str | os.PathLike[str],
              overwrite: bool = False, **kwargs: Any) -> None:
    """Copy the file ``srcfilename`` to ``dstfilename`` (see :meth:`File.copy_file`).

    The source is opened read-only for the copy (it may be open elsewhere, read-only).
    """
    with File(srcfilename, "r") as src:
        src.copy_file(dstfilename, overwrite=overwrite, **kwargs)


class File(NodeLookup, NodeCreation, LinkCreation, TreeEditing, TreeWalking, UndoRedo,
           FileAttrsCompat):
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
        self._workers = default_workers(self._options.max_threads)
        for library in ("blosc", "blosc2"):  # as PyTables: opening resets the setting
            set_max_threads(library, self._options.max_blosc_threads or default_workers())
        self.filename = os.fspath(filename)
        self.mode = mode
        self.root_uep = normalize_path(root_uep)
        if filters is not None and not isinstance(filters, Filters):
            raise TypeError(f"filters must be a Filters instance or None, not {filters!r}")
        options = self._options
        driver = Driver.from_options(options)
        existed = driver.exists(self.filename)
        openfiles.check_and_register(self, self.filename, mode)
        try:
            self._h5 = h5file.open_h5(
                self.filename,
                mode,
                chunk_cache_size=options.chunk_cache_size,
                chunk_cache_nelmts=options.chunk_cache_nelmts,
                chunk_cache_preempt=options.chunk_cache_preempt,
                metadata_cache_size=options.metadata_cache_size,
                driver=driver,
                user_block_size=options.user_block_size,
            )
        except BaseException:
            openfiles.unregister(self, self.filename)
            raise
        self._isopen = True
        # Read-only files: asked now, with the end of allocation their superblock records
        # (raw reads stay within it), read when HDF5 reads it rather than amid a query.
        self._access: FileAccess | None = file_access(self._h5.id) if mode == "r" else None
        self._pool: FilePool | None = None
        self._cache = NodeCache(options.node_cache_slots)
        self._loading = threading.RLock()  # one node object per path, whatever the thread
        # Leaves holding rows not yet in the file (kept alive until flushed).
        self._unflushed: set[Any] = set()
        self._guard = FlushGuard(self)  # what a kill leaves behind (flushguard.py)
        self._undoEnabled = False  # undoredo.py; enabled below if the file has a log
        self._undo_paused = 0
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
        elif mode != "r" and TRANSACTIONS in self:  # as PyTables: a logged file logs on
            try:
                self.enable_undo()
            except BaseException:
                self.close()
                raise

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
    def _node_manager(self) -> Any:
        """PyTables' node manager, whose ``cache`` (with ``nslots``) its tests inspect: the
        node cache itself stands for both here."""
        return _NodeManagerView(self._cache)

    @property
    def params(self) -> FileOptions:
        """The frozen settings of this file: attributes by lower-case name, or PyTables'
        upper-case names by subscription (``f.params["IO_BUFFER_SIZE"]``, as PyTables'
        ``File.params`` dict)."""
        return self._options

    def _executor(self) -> FilePool:
        """The file's pool of threads for (de)compressing chunks (made on first use; its
        threads are shared with the process's other files, see
        :mod:`~hyperslab.chunked.pools`).

        Raises ``ClosedFileError`` once the file is closed (e.g. for a query iterator
        left open past the file's ``close``).
        """
        self._check_open()
        if self._pool is None:
            self._pool = FilePool(self._workers)
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

    # ------------------------------------------------------------------ the file itself
    def get_file_image(self) -> bytes:
        """The bytes of the whole file (flushed first), whatever its driver: what
        ``open_file(..., driver="H5FD_CORE", driver_core_image=...)`` opens.

        Raises
        ------
        HDF5ExtError
            If the file's driver cannot give an image.
        """
        self.flush()
        return h5file.file_image(self._h5)

    def get_filesize(self) -> int:
        """The size of the file in bytes: its user block, its HDF5 data and anything
        written past them."""
        self._check_open()
        return h5file.file_size(self._h5)

    def get_userblock_size(self) -> int:
        """The size of the file's user block in bytes (0: none)."""
        self._check_open()
        return h5file.user_block_size(self._h5)

    def fileno(self) -> int:
        """The operating system's descriptor of the file (for ``fcntl`` and the like).

        Raises
        ------
        HDF5ExtError
            If the file's driver holds no descriptor of its own (core, stdio, split).
        """
        self._check_open()
        return h5file.file_descriptor(self._h5)

    # ------------------------------------------------------------------ copying
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

        Parameters
        ----------
        where : str or Node
            The node to copy (or its parent group, with ``name``).
        newparent : str or Group, optional
            The group the copy goes in: a path in this file, or a group of any open file
            (default: the node's parent).  Copying the root group into a group of another
            file copies its children there (and returns that group).
        newname : str, optional
            The copy's name (default: the node's).
        name : str, optional
            The name of the node to copy in group ``where``.
        overwrite : bool
            Replace a node of that name in ``newparent``.
        recursive : bool
            Copy a group's descendants too.
        createparents : bool
            Create the groups on the way to ``newparent`` that are missing.
        **kwargs
            Copy options: see :mod:`~hyperslab.nodes.files.copying` (``title``,
            ``filters``, ``chunkshape``, ``start``/``stop``/``step``, ``copyuserattrs``,
            ``stats``, ...).

        Returns
        -------
        Node
            The copy.

        Raises
        ------
        NodeError
            On a name clash without ``overwrite``, copying a node onto itself, or a group
            recursively into itself.
        OSError
            Copying the root group onto the root of its own file.
        TypeError
            For an unknown copy option.
        """
        from hyperslab.nodes.files.copying import copy_node

        return copy_node(self, where, newparent, newname, name, overwrite=overwrite,
                         recursive=recursive, createparents=createparents, **kwargs)

    def copy_children(
        self,
        srcgroup: Node | str,
        dstgroup: Node | str,
        overwrite: bool = False,
        recursive: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> None:
        """Copy the children of group ``srcgroup`` into ``dstgroup`` (a path in this file
        or a group of any open file); their descendants too with ``recursive``.

        ``kwargs`` are the copy options of :meth:`copy_node`, applied to every node
        copied.  Without ``overwrite``, a child name ``dstgroup`` already has raises
        ``NodeError`` before anything is copied.
        """
        from hyperslab.nodes.files.copying import copy_children

        copy_children(self, srcgroup, dstgroup, overwrite=overwrite, recursive=recursive,
                      createparents=createparents, **kwargs)

    def copy_file(self, dstfilename: str | os.PathLike[str], overwrite: bool = False,
                  **kwargs: Any) -> None:
        """Copy the whole file to a new file ``dstfilename``.

        Parameters
        ----------
        dstfilename : str or os.PathLike
            The new file.
        overwrite : bool
            Replace ``dstfilename`` if it exists (it must not be open).
        **kwargs
            ``title`` and ``filters`` of the new file (default: this file's), the copy
            options of :meth:`copy_node`, and names of :mod:`hyperslab.parameters` for
            opening the new file.

        Raises
        ------
        OSError
            If ``dstfilename`` is this file, or exists and ``overwrite`` is false.
        """
        from hyperslab.nodes.files.copying import copy_file

        copy_file(self, dstfilename, overwrite, **kwargs)

    # ------------------------------------------------------------------ closing
    def flush(self) -> None:
        """Write every buffer to the file (in the order :mod:`~hyperslab.nodes.files.flushguard`
        describes, so that a program killed later finds every flushed row)."""
        self._check_open()
        if self.mode != "r":
            self._save_undo_state()
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
            self._save_undo_state()
            self._flush_leaves()
            self._guard.close()
        live = list(self._cache.live_nodes())
        for node in live:
            node._g_file_closing()  # type: ignore[attr-defined]
        for node in live:
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

    # ------------------------------------------------------------------ pickling
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle a read-only file as its path, mode, root and settings: it is reopened
        where it is unpickled, once per process (see :mod:`~hyperslab.nodes.files.pickling`).

        Raises
        ------
        TypeError
            If the file is open for writing (reopen it with mode ``'r'``, or pass the path)
            or is an in-memory image.
        ClosedFileError
            If it is closed.
        """
        return pickling.file_reduction(self)

    def _reduce_node(self, node: Node) -> tuple[Any, tuple[Any, ...]]:
        """What ``node.__reduce__`` returns (see :meth:`__reduce__`)."""
        return pickling.node_reduction(self, node)

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reprs
    def __str__(self) -> str:
        if not self._isopen:
            return f"<closed File {self.filename!r}>"
        try:
            mtime = time.ctime(os.stat(self.filename).st_mtime)
        except OSError:
            mtime = "<in-memory file>"
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


class _NodeManagerView:
    """What PyTables code reads of ``File._node_manager``: its ``cache``."""

    def __init__(self, cache: NodeCache) -> None:
        self.cache = cache

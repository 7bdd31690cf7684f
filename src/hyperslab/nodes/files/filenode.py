"""File nodes: a binary file stored in an EArray of bytes, as PyTables' ``tables.nodes.filenode``.

A file node is an ordinary :class:`~hyperslab.nodes.leaves.array.EArray` of ``uint8`` (one
byte a row) carrying two attributes, ``NODE_TYPE = 'file'`` and ``NODE_TYPE_VERSION``: 1 for
an array of shape ``(0, 1)`` (PyTables before 2.0), 2 for shape ``(0,)`` (what
:func:`new_node` creates).  Nothing else marks it, so PyTables reads our file nodes and we
read its own.

The objects :func:`new_node` and :func:`open_node` return are :class:`io.RawIOBase` streams
(wrap one in :class:`io.BufferedReader` for buffering).  Data can only be appended: writing
at a position past the end fills the gap with zeros, writing before the end is refused by
the array, and :meth:`RawPyTablesIO.truncate` may only grow the file.  The only line
separator is ``b"\\n"``.

Per-object state: the node (``None`` once closed), the mode and the stream position.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hyperslab.errors import NoSuchNodeError
from hyperslab.nodes.atoms.atom import UInt8Atom
from hyperslab.nodes.files.file import File, open_file
from hyperslab.nodes.leaves.array import EArray
from hyperslab.nodes.tree.attributeset import AttributeSet
from hyperslab.nodes.tree.group import Group

NodeType = "file"
"""The value of the ``NODE_TYPE`` attribute of a file node."""

NodeTypeVersions = [1, 2]
"""The values of ``NODE_TYPE_VERSION`` this module reads; new nodes get the last."""

# Row shape of ``n`` bytes, and the EArray's shape, for each version.
_SHAPE_OF_SIZE: dict[int, Callable[[int], tuple[int, ...]]] = {
    1: lambda n: (n, 1),
    2: lambda n: (n,),
}
_EARRAY_SHAPE = {1: (0, 1), 2: (0,)}

_NEW_NODE_KWARGS = frozenset({"where", "name", "title", "filters", "expectedsize"})
_MODE_LETTERS = frozenset("arwb+tU")
_IDENTIFIER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _validate_mode(mode: object) -> None:
    """Raise TypeError or ValueError unless ``mode`` is a valid :func:`open` mode string."""
    if not isinstance(mode, str):
        raise TypeError(f"invalid mode: {mode!r}")
    letters = set(mode)
    if letters - _MODE_LETTERS or len(letters) != len(mode):
        raise ValueError(f"invalid mode: {mode!r}")
    kinds = sum(letter in letters for letter in "rwa")
    if "U" in letters:
        if letters & {"w", "a"}:
            raise ValueError("can't use U and writing mode at once")
        kinds = max(kinds, 1)
    if {"t", "b"} <= letters:
        raise ValueError("can't have text and binary mode at once")
    if kinds > 1:
        raise ValueError("can't have read/write/append mode at once")
    if kinds == 0:
        raise ValueError("must have exactly one of read/write/append mode")


def _mode_writes(mode: str) -> bool:
    return any(letter in mode for letter in "wa+")


def _check_attributes(node: Any) -> None:
    """Raise ValueError unless ``node`` carries a file node's type and a known version."""
    ntype = getattr(node.attrs, "NODE_TYPE", None)
    version = getattr(node.attrs, "NODE_TYPE_VERSION", None)
    if ntype != NodeType:
        raise ValueError(f"invalid type of node object: {ntype}")
    if version not in NodeTypeVersions:
        raise ValueError(f"unsupported type version of node object: {version}")


def _version_of(node: Any) -> int:
    """The checked ``NODE_TYPE_VERSION`` of ``node`` (PyTables 1.x stored it as a 1-array)."""
    _check_attributes(node)
    return int(np.asarray(node.attrs.NODE_TYPE_VERSION).ravel()[0])


def _child_path(where: Any, name: str | None) -> str:
    """The path of child ``name`` of ``where`` (a group or a path), as get_node joins it.

    Joined here so that a name which is not a Python identifier (a stored file's name) is
    looked up without a NaturalNameWarning, as in PyTables.
    """
    parent = where._v_pathname if isinstance(where, Group) else os.fspath(where)
    if name is None:
        return parent
    return parent.rstrip("/") + "/" + name


class RawPyTablesIO(io.RawIOBase):
    """Raw binary I/O on a file node (an EArray of ``uint8`` in an open file).

    Parameters
    ----------
    node : EArray
        The file node: an EArray of :class:`UInt8Atom` with the ``NODE_TYPE`` and
        ``NODE_TYPE_VERSION`` attributes of a file node.
    mode : str, optional
        A mode as :func:`open` takes; the mode of the node's file when not given.  A mode
        that writes needs a file that is writable.
    """

    def __init__(self, node: EArray, mode: str | None = None) -> None:
        super().__init__()
        if not isinstance(node, EArray):
            raise TypeError('the "node" parameter should be a tables.EArray')
        if not isinstance(node.atom, UInt8Atom):
            raise TypeError('only nodes with atom "UInt8Atom" are allowed')
        version = _version_of(node)
        if mode is None:
            mode = node._v_file.mode
        else:
            _validate_mode(mode)
            if _mode_writes(mode) and not _mode_writes(node._v_file.mode):
                raise ValueError(
                    "RawPyTablesIO can't be open in write mode if "
                    "the underlying hdf5 file is not writable"
                )
        self._node: EArray | None = node
        self._mode = mode
        self._pos = 0
        self._version = version
        self._shape_of_size = _SHAPE_OF_SIZE[self._version]

    @property
    def mode(self) -> str:
        """The mode this stream was opened in."""
        return self._mode

    def _open_node(self) -> EArray:
        """The node, or ValueError once this stream or its file is closed."""
        node = self._node
        if node is None or not node._v_isopen:
            raise ValueError("host PyTables file is already closed!")
        return node

    def _readable_node(self) -> EArray:
        node = self._open_node()
        if not self.readable():
            raise io.UnsupportedOperation("File or stream is not readable.")
        return node

    def _writable_node(self) -> EArray:
        node = self._open_node()
        if not self.writable():
            raise io.UnsupportedOperation("File or stream is not writable.")
        return node

    def tell(self) -> int:
        """Return the stream position."""
        self._open_node()
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        """Move to byte ``pos`` from the start (``whence=0``), here (1) or the end (2).

        A position before the start is clipped to 0 for ``whence`` 1 and 2 and raises
        ValueError for 0.  Returns the new position.
        """
        node = self._open_node()
        try:
            offset = pos.__index__()
        except AttributeError:
            raise TypeError("an integer is required") from None
        if whence == 0:
            if offset < 0:
                raise ValueError(f"negative seek position {offset!r}")
            self._pos = offset
        elif whence == 1:
            self._pos = max(0, self._pos + offset)
        elif whence == 2:
            self._pos = max(0, node.nrows + offset)
        else:
            raise ValueError("invalid whence value")
        return self._pos

    def seekable(self) -> bool:
        """Return True: file nodes support random access."""
        return True

    def readable(self) -> bool:
        """Whether the mode allows reading."""
        return "r" in self._mode or "+" in self._mode

    def writable(self) -> bool:
        """Whether the mode allows writing (appending)."""
        return _mode_writes(self._mode)

    def fileno(self) -> int:
        """Return the file descriptor of the node's HDF5 file."""
        return self._open_node()._v_file.fileno()

    def close(self) -> None:
        """Flush and close the stream; closing a closed stream does nothing.

        Warns (UserWarning) when the node's file was closed first.
        """
        if not self.closed and (self._node is None or not self._node._v_isopen):
            warnings.warn("host PyTables file is already closed!", stacklevel=2)
        try:
            super().close()
        finally:
            self._node = None  # lets the file close

    def flush(self) -> None:
        """Flush the node's data to the file."""
        node = self._open_node()
        if node._v_file.mode != "r":
            node.flush()

    def truncate(self, size: int | None = None) -> int:
        """Grow the file to ``size`` bytes (the position by default), zero-filled.

        A file node can not shrink: a size below the current one raises OSError.  Moves
        to ``size`` and returns it.
        """
        node = self._writable_node()
        if size is None:
            size = self._pos
        elif size < 0:
            raise ValueError(f"negative truncate position {size!r}")
        if size < node.nrows:
            raise OSError("truncating is only allowed for growing a file")
        self._append_zeros(node, size - node.nrows)
        return self.seek(size)

    def readinto(self, buffer: Any) -> int:
        """Read up to ``len(buffer)`` bytes into ``buffer``; return how many (0 at the end)."""
        node = self._readable_node()
        view = memoryview(buffer).cast("B")
        stop = min(self._pos + len(view), node.nrows)
        if stop <= self._pos:
            return 0
        count = stop - self._pos
        view[:count] = self._read_bytes(node, self._pos, stop)
        self._pos = stop
        return count

    def readall(self) -> bytes:
        """Read from the position to the end, in one read of the node."""
        node = self._readable_node()
        start = self._pos
        stop = max(start, node.nrows)
        self._pos = stop
        return self._read_bytes(node, start, stop) if stop > start else b""

    def readline(self, size: int | None = -1) -> bytes:
        r"""Read a line (up to and including ``b"\n"``), at most ``size`` bytes if positive."""
        node = self._readable_node()
        limit = -1 if size is None else size.__index__()
        step = node.chunkshape[0] if node.chunkshape else io.DEFAULT_BUFFER_SIZE
        parts: list[bytes] = []
        remaining = limit
        while limit <= 0 or remaining > 0:
            want = step if limit <= 0 else min(step, remaining)
            stop = min(self._pos + want, node.nrows)
            if stop <= self._pos:
                break
            block = self._read_bytes(node, self._pos, stop)
            end = block.find(b"\n")
            if end >= 0:
                block = block[: end + 1]
            self._pos += len(block)
            parts.append(block)
            remaining -= len(block)
            if end >= 0:
                break
        return b"".join(parts)

    def write(self, data: Any) -> int:
        """Append ``data`` (a bytes-like object) at the position; return its length.

        A position past the end is reached by zero-filling the gap first.
        """
        node = self._writable_node()
        if isinstance(data, str):
            raise TypeError("can't write str to binary stream")
        array = np.frombuffer(data, dtype=np.uint8)
        if array.size == 0:
            return 0
        self._append_zeros(node, self._pos - node.nrows)
        node.append(array.reshape(self._shape_of_size(array.size)))
        self._pos += array.size
        return int(array.size)

    def _read_bytes(self, node: EArray, start: int, stop: int) -> bytes:
        return node._read_numpy(start, stop).tobytes()  # a 'numarray' FLAVOR of v1 nodes

    def _append_zeros(self, node: EArray, count: int) -> None:
        """Append ``count`` zero bytes without moving the position (nothing if ``count <= 0``)."""
        if count > 0:
            node.append(np.zeros(self._shape_of_size(count), dtype=np.uint8))


class _FileNodeAttrs:
    """The ``attrs`` and ``node`` properties of file node streams."""

    _node: EArray | None

    @property
    def attrs(self) -> AttributeSet:
        """The attribute set of the node (AttributeError once the stream is closed)."""
        node = self._node
        if node is None:
            raise AttributeError("'NoneType' object has no attribute 'attrs'")
        return node.attrs

    @property
    def node(self) -> EArray | None:
        """The EArray holding the data (``None`` once the stream is closed)."""
        return self._node


class ROFileNode(_FileNodeAttrs, RawPyTablesIO):
    """A read-only file node stream; made by ``open_node(node, 'r')``.

    Parameters
    ----------
    node : EArray
        An existing file node.
    """

    def __init__(self, node: EArray) -> None:
        RawPyTablesIO.__init__(self, node, "r")


class RAFileNode(_FileNodeAttrs, RawPyTablesIO):
    """A file node stream that reads and appends; made by :func:`new_node` and ``open_node``.

    Parameters
    ----------
    node : EArray or None
        An existing file node to open, or None to create one in ``h5file``.
    h5file : File or None
        The file in which to create a node, with the keyword arguments ``where`` and
        ``name`` (both required), ``title``, ``filters`` and ``expectedsize`` (an estimate
        of the size in bytes).
    """

    def __init__(self, node: EArray | None, h5file: File | None, **kwargs: Any) -> None:
        if node is None:
            if h5file is None:
                raise TypeError("either a node or a file is needed")
            node = _create_node(h5file, kwargs)
        else:
            _check_attributes(node)
        RawPyTablesIO.__init__(self, node, "a+")


def _create_node(h5file: File, kwargs: dict[str, Any]) -> EArray:
    """Create an empty file node (of the newest version) from :func:`new_node`'s arguments."""
    for key in kwargs:
        if key not in _NEW_NODE_KWARGS:
            raise TypeError(f"{key!r} keyword argument is not allowed")
    args = dict(kwargs)
    if "expectedsize" in args:
        args["expectedrows"] = args.pop("expectedsize")  # a byte a row
    version = NodeTypeVersions[-1]
    node = h5file.create_earray(atom=UInt8Atom(), shape=_EARRAY_SHAPE[version], **args)
    try:
        node.attrs.NODE_TYPE = NodeType
        node.attrs.NODE_TYPE_VERSION = version
    except RuntimeError:
        h5file.remove_node(args["where"], args["name"])
        raise
    return node


def new_node(h5file: File, **kwargs: Any) -> RAFileNode:
    """Create a file node in ``h5file`` and return a stream that reads and appends it.

    Parameters
    ----------
    h5file : File
        A writable file.
    **kwargs
        ``where`` and ``name`` (required): where to create the node; ``title``,
        ``filters``; ``expectedsize``: an estimate of the size in bytes.  Any other keyword
        raises TypeError.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> from hyperslab.nodes.files import filenode
    >>> path = os.path.join(tempfile.mkdtemp(), "f.h5")
    >>> with hyperslab.open_file(path, "w") as h5:
    ...     fnode = filenode.new_node(h5, where="/", name="notes")
    ...     fnode.write(b"one\\ntwo\\n")
    ...     fnode.seek(0)
    ...     fnode.readlines()
    ...     fnode.close()
    8
    0
    [b'one\\n', b'two\\n']
    """
    return RAFileNode(None, h5file, **kwargs)


def open_node(node: EArray, mode: str = "r") -> ROFileNode | RAFileNode:
    """Open the file node ``node`` to read (``mode='r'``) or to read and append (``'a+'``).

    The position starts at 0.  Any other mode raises OSError.
    """
    if mode == "r":
        return ROFileNode(node)
    if mode == "a+":
        return RAFileNode(node, None)
    raise OSError(f"invalid mode: {mode}")


def _guess_node_name(where: Any, name: str | None, filename: Any) -> tuple[Any, str]:
    """``where`` and ``name`` for :func:`save_to_filenode` when ``name`` is not given."""
    if name is None:
        if isinstance(where, Group) or (isinstance(where, str) and where.endswith("/")):
            name = os.path.basename(os.fspath(filename))
        elif isinstance(where, str):
            parent, _, name = where.rpartition("/")
            where = "/" + parent.lstrip("/")
    if name is None:
        raise TypeError("a node name is needed")
    if not _IDENTIFIER.match(name):
        name = re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"^[^a-zA-Z_]", "_", name))
    return where, name


def save_to_filenode(
    h5file: File | str | os.PathLike[str],
    filename: str | os.PathLike[str],
    where: Group | str,
    name: str | None = None,
    overwrite: bool = False,
    title: str = "",
    filters: Any = None,
) -> None:
    """Store the contents of the file ``filename`` in a new file node.

    Parameters
    ----------
    h5file : File or path
        An open file, or the path of a file to open in mode ``'a'`` (and close).
    filename : path
        The file to store.
    where, name
        Where to put the node.  Without ``name``, a group or a path ending in ``/`` takes
        the base name of ``filename``, and another path is split into group and name.  A
        name that is not a Python identifier has its other characters replaced by ``_``;
        the base name of ``filename`` is kept in the node's ``_filename`` attribute.
    overwrite : bool
        Whether to replace an existing node of that name (else OSError).
    title, filters
        The node's title and filters.
    """
    path = Path(filename).resolve()
    if not os.access(path, os.R_OK):
        raise OSError(f"The file '{path}' could not be read")
    if isinstance(h5file, File) and h5file.mode == "r":
        raise OSError(f"The file '{h5file.filename}' is opened read-only")
    where, name = _guess_node_name(where, name, filename)
    own = not isinstance(h5file, File)
    h5 = open_file(h5file, "a") if not isinstance(h5file, File) else h5file
    try:
        try:
            h5.get_node(_child_path(where, name))
        except NoSuchNodeError:
            pass
        else:
            if not overwrite:
                raise OSError(f"Specified node already exists in file '{h5.filename}'")
            h5.remove_node(where, name)
        data = path.read_bytes()
        fnode = new_node(h5, where=where, name=name, title=title, filters=filters)
        fnode.write(data)
        fnode.attrs._filename = path.name
        fnode.close()
    finally:
        if own:
            h5.close()


def _find_filenode(h5: File, where: Any, name: str | None) -> ROFileNode:
    """Open the node ``name`` under ``where``, or the first whose ``_filename`` is ``name``."""
    try:
        return ROFileNode(h5.get_node(_child_path(where, name)))  # type: ignore[arg-type]
    except NoSuchNodeError:
        for candidate in h5.walk_nodes(where, classname="EArray"):
            if getattr(candidate._v_attrs, "_filename", None) == name:
                return ROFileNode(candidate)  # type: ignore[arg-type]
    raise NoSuchNodeError(f"A filenode '{name}' cannot be found at '{where}'")


def read_from_filenode(
    h5file: File | str | os.PathLike[str],
    filename: str | os.PathLike[str],
    where: Group | str,
    name: str | None = None,
    overwrite: bool = False,
    create_target: bool = False,
) -> None:
    """Write the contents of a file node to the file ``filename``.

    Parameters
    ----------
    h5file : File or path
        An open file, or the path of a file to open in mode ``'r'`` (and close).
    filename : path
        The file to write.  A directory, or a path ending in the path separator, gets the
        node's ``_filename`` attribute (else its name) as the file name.
    where, name
        The node; when there is no node ``name`` under ``where``, the first EArray under
        ``where`` whose ``_filename`` attribute is ``name`` (else NoSuchNodeError).
    overwrite : bool
        Whether to replace an existing file (else OSError).
    create_target : bool
        Whether to create the missing directories of ``filename``.
    """
    path = Path(filename).resolve()
    own = not isinstance(h5file, File)
    h5 = open_file(h5file, "r") if not isinstance(h5file, File) else h5file
    try:
        fnode = _find_filenode(h5, where, name)
        if path.is_dir() or os.fspath(filename).endswith(os.path.sep):
            node = fnode.node
            assert node is not None
            path = path / getattr(node._v_attrs, "_filename", node.name)
        if os.access(path, os.R_OK) and not overwrite:
            raise OSError(f"The file '{path}' already exists")
        if create_target:
            path.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(path.parent, os.W_OK):
            raise OSError(f"The file '{filename}' cannot be written to")
        data = fnode.read()
        fnode.close()
        path.write_bytes(data)
    finally:
        if own:
            h5.close()

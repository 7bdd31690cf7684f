"""Pickling files and nodes of read-only files: reopened in the process that unpickles them.

A :class:`~hyperslab.nodes.files.file.File` opened ``'r'``, and every node of it, pickles as
what it takes to open it again: the file's absolute path, its mode, its root User Entry
Point, the settings it was opened with (:class:`~hyperslab.options.FileOptions`) and, for
a node, its path.  Unpickling gives a File of this process opened so (and the node of that
path in it), opened once per process and file: the unpickled nodes of one file, however
many (the tasks of a Dask graph), share one File object.  That is the one kept in this
module's registry, or, in the process that pickled them, any File object still open ``'r'``
on the same file with the same settings (the caller's own, so nothing is opened twice).

The registry is per process (a process started with ``fork`` starts with an empty one:
HDF5 objects are not shared with a child) and holds its Files open until the interpreter
exits, or until :func:`close_reopened_files` closes them.

Files open for writing (``'a'``, ``'r+'``, ``'w'``) and their nodes refuse to be pickled
with a ``TypeError``: another process could not open them (HDF5's file locks keep them out
while this one writes) and would not see what this one has not flushed.  Neither can a
file held in memory (``driver_core_image``), nor a closed file or node.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
from typing import Any

from hyperslab.errors import ClosedFileError, ClosedNodeError
from hyperslab.nodes.files import openfiles

__all__ = ["close_reopened_files", "file_reduction", "node_reduction", "reopen_file",
           "reopen_node"]

_UNPICKLED = frozenset({"others", "driver_core_image"})
"""Settings not pickled: PyTables' other parameters (which do nothing here) and a file
image (the file's whole contents; such files refuse to be pickled)."""

_lock = threading.Lock()
_registry: dict[tuple[Any, ...], Any] = {}  # (realpath, mode, root_uep, settings) -> File
_state = {"pid": os.getpid(), "at_exit": False}


Settings = tuple[tuple[str, Any], ...]
"""A File's settings as pickled: (name of a FileOptions field, value) pairs."""


def _pickle_args(file: Any, what: str) -> tuple[str, str, str, Settings, int]:
    """(absolute path, mode, root_uep, settings, this process's id) of an open read-only
    ``file``.

    Raises
    ------
    TypeError
        If the file is open for writing or held in memory.
    ClosedFileError
        If it is closed.
    """
    if not file.isopen:
        raise ClosedFileError(f"cannot pickle {what}: the file ``{file.filename}`` is closed")
    if file.mode != "r":
        raise TypeError(
            f"cannot pickle {what} of ``{file.filename}``, open for writing (mode "
            f"{file.mode!r}): only files opened read-only pickle (they are reopened where "
            f"they are unpickled).  Close it and reopen it with open_file(path, 'r'), or "
            f"pass the path and node path instead and open the file where it is used"
        )
    options = file._options
    if options.driver_core_image is not None:
        raise TypeError(
            f"cannot pickle {what} of ``{file.filename}``: the file is an in-memory image "
            f"(driver_core_image) that another process cannot open; write it to disk first"
        )
    settings = tuple((field.name, getattr(options, field.name))
                     for field in dataclasses.fields(options) if field.name not in _UNPICKLED)
    return os.path.abspath(file.filename), file.mode, file.root_uep, settings, os.getpid()


def file_reduction(file: Any) -> tuple[Any, tuple[Any, ...]]:
    """What ``File.__reduce__`` returns: :func:`reopen_file` and its arguments."""
    return reopen_file, _pickle_args(file, "a File")


def node_reduction(file: Any, node: Any) -> tuple[Any, tuple[Any, ...]]:
    """What ``Node.__reduce__`` returns for ``node`` of ``file``: :func:`reopen_node` and
    its arguments.

    Raises
    ------
    ClosedNodeError
        If the node object is closed.
    """
    path = node._v_pathname
    if not node._v__isopen:
        raise ClosedNodeError(f"cannot pickle the closed node object {path!r}")
    return reopen_node, (*_pickle_args(file, f"node {path!r}"), path)


def _matches(file: Any, mode: str, root_uep: str, settings: Settings) -> bool:
    options = file._options
    return (file.isopen and file.mode == mode and file.root_uep == root_uep
            and all(getattr(options, name) == value for name, value in settings))


def _open_one(filename: str, mode: str, root_uep: str, settings: Settings, pid: int) -> Any:
    """The File of this process for these arguments (opened on first use); in the process
    ``pid`` that pickled it, a File of the caller's that matches them, if still open."""
    key = (os.path.realpath(filename), mode, root_uep, settings)
    with _lock:
        if _state["pid"] != os.getpid():  # a forked child: the parent's Files are not ours
            _registry.clear()
            _state["pid"] = os.getpid()
        file = _registry.get(key)
        if file is not None and file.isopen:
            return file
        if pid == os.getpid():  # not in a forked child: its inherited Files are the parent's
            for other in openfiles.open_files.get_handlers_by_name(filename):
                if _matches(other, mode, root_uep, settings):
                    return other  # the caller's own File
        from hyperslab.nodes.files.file import File  # file.py is above this module

        file = _registry[key] = File(filename, mode, root_uep=root_uep, **dict(settings))
        if not _state["at_exit"]:  # registered after openfiles' hook, so run before it
            atexit.register(close_reopened_files)
            _state["at_exit"] = True
        return file


def reopen_file(filename: str, mode: str, root_uep: str, settings: Settings, pid: int) -> Any:
    """Unpickle a File: this process's File of ``filename`` opened so (see the module
    docstring)."""
    return _open_one(filename, mode, root_uep, settings, pid)


def reopen_node(filename: str, mode: str, root_uep: str, settings: Settings, pid: int,
                path: str) -> Any:
    """Unpickle a node: the node at ``path`` of this process's File of ``filename``.

    Raises
    ------
    NoSuchNodeError
        If the file has no node there any more.
    """
    return _open_one(filename, mode, root_uep, settings, pid).get_node(path)


def close_reopened_files() -> None:
    """Close the Files this process opened to unpickle files and nodes (their nodes become
    closed; the next unpickled one opens its file again).  Run at exit too."""
    with _lock:
        files = list(_registry.values()) if _state["pid"] == os.getpid() else []
        _registry.clear()
    for file in files:
        file.close()


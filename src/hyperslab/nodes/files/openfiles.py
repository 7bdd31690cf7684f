"""The files this process has open, and which second opens of one are refused.

One :class:`~hyperslab.nodes.files.file.File` object per file is what threads share: it holds the
append buffers, the node objects and their locks (:mod:`hyperslab.nodes.leaves.rwlock`) and the
caches of chunk locations.  A second File object of a file that one of them may change would
keep buffers and caches of its own, and read or write past the first one's, so such opens
are refused with ``ValueError``, with PyTables' messages where PyTables refuses too (its
default ``FILE_OPEN_POLICY``):

- ``'w'`` while the file is open in any mode;
- ``'r'`` while it is open for writing, and ``'a'`` or ``'r+'`` while it is open ``'r'``;
- ``'a'`` or ``'r+'`` while it is open ``'a'`` or ``'r+'`` (PyTables allows this one; its
  File objects share HDF5's buffers, ours would not share their own).

Opening a file ``'r'`` several times is allowed: nothing can change it.

Files still open when the interpreter exits are closed then (:func:`close_at_exit`,
registered with :mod:`atexit` when the first file opens), as PyTables does: pandas'
``HDFStore`` objects, for one, are often never closed.
"""

from __future__ import annotations

import atexit
import os
import threading
import warnings
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hyperslab.errors import UnclosedFileWarning

__all__ = ["OPEN_POLICY", "OpenFiles", "check_and_register", "check_file_access",
           "close_at_exit", "open_files", "unregister"]

OPEN_POLICY = "default"
"""PyTables' name for the rules above (its ``FILE_OPEN_POLICY``): ``"default"``, not
``"strict"`` (which refuses every second open), with the one stricter case listed above."""

_lock = threading.Lock()
# Real path -> the File objects open on it (a File dropped without closing is forgotten).
_open: dict[str, weakref.WeakSet[Any]] = {}
_at_exit: list[bool] = []  # [True] once close_at_exit is registered with atexit


def _key(filename: str) -> str:
    return os.path.realpath(filename)


def _refusal(filename: str, mode: str, open_modes: list[str]) -> str | None:
    if not open_modes:
        return None
    writing = [m for m in open_modes if m != "r"]
    if mode == "w":
        return (f"The file '{filename}' is already opened.  Please close it before reopening "
                f"in write mode.")
    if mode == "r" and writing:
        return (f"The file '{filename}' is already opened, but not in read-only mode (as "
                f"requested).")
    if mode != "r" and len(writing) < len(open_modes):
        return (f"The file '{filename}' is already opened, but in read-only mode.  Please "
                f"close it before reopening in append mode.")
    if mode != "r" and writing:
        return (f"The file '{filename}' is already opened for writing (mode "
                f"{writing[0]!r}) by this process: share that File object between threads "
                f"instead of opening the file again (each File object keeps buffers and "
                f"caches of its own)")
    return None


def check_and_register(file: Any, filename: str, mode: str) -> None:
    """Record ``file`` as open on ``filename`` in ``mode``.

    Raises
    ------
    ValueError
        If another open File object of the same file forbids this mode (see the module
        docstring); nothing is recorded then.
    """
    key = _key(filename)
    with _lock:
        # A File still being opened in another thread counts as open.
        others = [other for other in _open.get(key, ()) if getattr(other, "_isopen", True)]
        message = _refusal(filename, mode, [other.mode for other in others])
        if message is not None:
            raise ValueError(message)
        _open.setdefault(key, weakref.WeakSet()).add(file)
        if not _at_exit:
            atexit.register(close_at_exit)
            _at_exit.append(True)


def unregister(file: Any, filename: str) -> None:
    """Forget ``file`` (closed, or failed to open)."""
    key = _key(filename)
    with _lock:
        files = _open.get(key)
        if files is not None:
            files.discard(file)
            if not files:
                del _open[key]


class OpenFiles:
    """The open File objects of this process by file name (PyTables' ``_open_files``)."""

    def _files(self) -> list[Any]:
        with _lock:
            return [f for files in _open.values() for f in files]

    @property
    def filenames(self) -> list[str]:
        """The names of the files open, one per file."""
        with _lock:
            return sorted({f.filename for files in _open.values() for f in files})

    @property
    def handlers(self) -> list[Any]:
        """Every open File object."""
        return self._files()

    def get_handlers_by_name(self, filename: str) -> list[Any]:
        """The open File objects of ``filename``."""
        with _lock:
            return list(_open.get(_key(filename), ()))

    def close_all(self) -> None:
        """Close every open File object."""
        for file in self._files():
            file.close()

    def __len__(self) -> int:
        return len(self._files())

    def __contains__(self, filename: object) -> bool:
        if not isinstance(filename, (str, os.PathLike)):
            return False
        with _lock:
            return bool(_open.get(_key(os.fspath(filename))))

    def __iter__(self) -> Iterator[str]:
        return iter(self.filenames)


open_files = OpenFiles()
"""The registry of open files (PyTables' ``tables.file._open_files``)."""


def close_at_exit() -> None:
    """Close every file still open, each with an :class:`UnclosedFileWarning` (PyTables'
    exit hook).

    Closing writes what only the File object holds: the rows still buffered by
    ``Table.append``, the real state of the indexes kept dirty in the file while it is
    open, and the removal of the flush marks (:mod:`hyperslab.nodes.files.flushguard`).
    HDF5's own closing at exit would leave the rows out and the indexes dirty.
    """
    for file in open_files.handlers:
        try:  # closed even where warnings are errors
            warnings.warn(UnclosedFileWarning(f"Closing remaining open file: {file.filename}"),
                          stacklevel=1)
        finally:
            file.close()


def check_file_access(filename: str | os.PathLike[str], mode: str = "r") -> None:
    """Check that ``filename`` can be opened in ``mode`` ('r', 'r+', 'a' or 'w'), changing
    nothing (PyTables' ``utils.check_file_access``).

    Raises
    ------
    FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError
        Saying why the file cannot be opened so (all ``OSError``).
    ValueError
        If ``mode`` is not one of the four.
    """
    path = Path(filename).resolve()
    if mode == "r":
        if not os.access(path, os.F_OK):
            raise FileNotFoundError(f"``{path}`` does not exist")
        if not path.is_file():
            raise IsADirectoryError(f"``{path}`` is not a regular file")
        if not os.access(path, os.R_OK):
            raise PermissionError(f"file ``{path}`` exists but it can not be read")
    elif mode == "r+":
        check_file_access(path, "r")
        if not os.access(path, os.W_OK):
            raise PermissionError(f"file ``{path}`` exists but it can not be written")
    elif mode in ("w", "a"):
        if os.access(path, os.F_OK):
            check_file_access(path, "r+")  # replaced or appended to: read and written
            return
        if not os.access(path.parent, os.F_OK):
            raise FileNotFoundError(f"``{path.parent}`` does not exist")
        if not path.parent.is_dir():
            raise NotADirectoryError(f"``{path.parent}`` is not a directory")
        if not os.access(path.parent, os.W_OK):
            raise PermissionError(
                f"directory ``{path.parent}`` exists but it can not be written")
    else:
        raise ValueError(f"invalid mode: {mode!r}")

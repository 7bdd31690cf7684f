"""Exceptions and warnings of hyperslab, with PyTables' names.

Every exception is both ours and a builtin where PyTables makes it so, so that callers can
catch either (``NoSuchNodeError`` is a ``LookupError``).  h5py's builtin errors are
translated into these at the storage boundary, once.
"""

from __future__ import annotations

import re


class HDF5ExtError(RuntimeError):
    """A problem reported by the HDF5 library (PyTables' name).

    Also what reading a damaged chunk raises, whichever path reads it (HDF5's filter
    pipeline or hyperslab's own Blosc2 decoding, whose python-blosc2 errors are
    translated, once, into this): the message names the chunk's coordinates.  A chunk
    past the end of allocation the file's superblock records is refused as HDF5 refuses
    it ("addr overflow ... eoa"), on read-only files too.

    Parameters
    ----------
    *args
        The message.
    h5bt : bool, 'VERBOSE' or None, keyword only
        The back trace policy for this error (None: :attr:`DEFAULT_H5_BACKTRACE_POLICY`).

    Attributes
    ----------
    h5backtrace : list of tuple or None
        None where the policy is False; else the HDF5 error stack behind this error as
        ``(file, line, function, description)`` tuples, outermost first.  h5py reports
        only the outermost and innermost descriptions of HDF5's stack (its message
        ``'Outer (inner)'``), so those are the entries, with file, line and function
        None; empty where no HDF5 call failed (hyperslab found the problem itself).  The
        innermost description is in the message of every error hyperslab translates from
        h5py, which is where PyTables' ``'VERBOSE'`` policy puts the back trace.
    """

    DEFAULT_H5_BACKTRACE_POLICY: bool | str = "VERBOSE"
    """Back trace policy of new errors: False (none kept), True or ``'VERBOSE'`` (kept in
    :attr:`h5backtrace`)."""

    def __init__(self, *args: object, h5bt: bool | str | None = None) -> None:
        super().__init__(*args)
        self._h5bt_policy = self.DEFAULT_H5_BACKTRACE_POLICY if h5bt is None else h5bt

    @property
    def h5backtrace(self) -> list[tuple[str | None, int | None, str | None, str]] | None:
        if not self._h5bt_policy:
            return None
        return _h5py_stack(self)


_H5PY_MESSAGE = re.compile(r"(?s)(?P<outer>[^(]+?) \((?P<inner>.*)\)")


def _h5py_stack(error: BaseException) -> list[tuple[str | None, int | None, str | None, str]]:
    """The HDF5 error descriptions of the first error h5py raised in ``error``'s causes."""
    cause = error.__cause__ or error.__context__
    while cause is not None:
        tb = cause.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        from_h5py = tb is not None and "h5py" in tb.tb_frame.f_code.co_filename
        text = str(cause.args[0]) if cause.args else ""
        match = _H5PY_MESSAGE.fullmatch(text)
        if from_h5py and match:
            return [(None, None, None, match["outer"]), (None, None, None, match["inner"])]
        cause = cause.__cause__ or cause.__context__
    return []


class ClosedNodeError(ValueError):
    """An operation was attempted on a closed (or removed) node."""


class ClosedFileError(ValueError):
    """An operation was attempted on a closed file."""


class FileModeError(ValueError):
    """The file mode does not allow the requested operation (e.g. writing in mode 'r')."""


class NodeError(AttributeError, LookupError):
    """Invalid hierarchy manipulation: a name clash, a bad parent, and so on."""


class NoSuchNodeError(NodeError):
    """The requested node does not exist (also an ``AttributeError`` and ``LookupError``)."""


class UndoRedoError(Exception):
    """Problems with the undo/redo mechanism (kept for PyTables compatibility)."""


class FlavorError(ValueError):
    """An unsupported or unavailable flavor, or flavor conversion, was requested."""


class FiltersError(ValueError):
    """An invalid filter specification, or a filter this installation cannot apply."""


class FilterNotAvailableError(FiltersError, OSError):
    """The dataset uses an HDF5 filter that no installed plugin provides (e.g. LZO)."""


class ChunkError(ValueError):
    """Base class of the direct-chunking errors."""


class NotChunkedError(ChunkError):
    """The dataset is contiguous, so it has no chunks."""


class NotChunkAlignedError(ChunkError):
    """The coordinates are not the start of a chunk."""


class NoSuchChunkError(ChunkError, KeyError):
    """The chunk was never written."""


class ConditionTypeError(NotImplementedError, TypeError):
    """A query condition applies an operation to operand types numexpr cannot combine.

    A ``NotImplementedError`` as in PyTables, and a ``TypeError`` (e.g. a string column
    compared with a number).
    """


# ----------------------------------------------------------------------------- warnings


class NaturalNameWarning(Warning):
    """A node or attribute name is not usable with natural naming."""


class PerformanceWarning(Warning):
    """Something will work, but slowly (e.g. the node cache grew past its hint)."""


class FlavorWarning(Warning):
    """An unsupported flavor was requested; NumPy is used instead."""


class FiltersWarning(Warning):
    """A filter request was changed (e.g. an unavailable complib replaced by zlib)."""


class UndoRedoWarning(Warning):
    """An action that cannot be undone ran while undo/redo was enabled."""


class ExperimentalFeatureWarning(Warning):
    """A feature still experimental, to be used with care, was used."""


class DataTypeWarning(Warning):
    """A data type was converted, or is not fully supported."""


class UnclosedFileWarning(Warning):
    """A file was left open when the interpreter exited."""


class UnflushedRowsWarning(Warning):
    """A leaf has rows past the last flush that completed before its program stopped.

    hyperslab marks every Table and EArray it appends to with the number of rows the last
    completed flush made durable (the attribute ``HS_FLUSHED_ROWS``, removed again when
    the file is closed).  When a leaf that still carries the mark is opened and has more
    rows than the mark says, its writer was killed (or crashed) after appending them and
    before a flush completed: HDF5 may have written the grown extent without the chunks,
    so those rows may read as the fill value (zeros) instead of the appended data, or
    fail to read.  The warning names the leaf and the rows; ``leaf.truncate(n)`` with
    ``n`` the number of flushed rows drops them (and the mark), and reading them is
    allowed: they are not hidden, because PyTables and h5py show them too.  Rows before
    the mark are the flushed ones; see "After a crash" in the README for what a kill
    during a flush can do to them.
    """


class OldIndexWarning(Warning):
    """Indexes in a layout that is no longer read (PyTables 1.x's, or hyperslab's own
    before it wrote PyTables' layout) were found and are ignored."""


__all__ = [
    "ChunkError",
    "ClosedFileError",
    "ClosedNodeError",
    "ConditionTypeError",
    "DataTypeWarning",
    "ExperimentalFeatureWarning",
    "FileModeError",
    "FilterNotAvailableError",
    "FiltersError",
    "FiltersWarning",
    "FlavorError",
    "FlavorWarning",
    "HDF5ExtError",
    "NaturalNameWarning",
    "NoSuchChunkError",
    "NoSuchNodeError",
    "NodeError",
    "NotChunkAlignedError",
    "NotChunkedError",
    "OldIndexWarning",
    "PerformanceWarning",
    "UnclosedFileWarning",
    "UndoRedoError",
    "UndoRedoWarning",
    "UnflushedRowsWarning",
]

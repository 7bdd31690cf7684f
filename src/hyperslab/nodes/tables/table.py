"""Table: a sequence of records (rows) with named, typed, possibly nested columns.

A table is a 1-D chunked HDF5 dataset of a compound type, with PyTables' attributes
(docs/format.md §1).  Rows are read and written as NumPy structured arrays through
:class:`~hyperslab.nodes.tables.recordio.RecordIO`; appended rows wait in a buffer until they fill
whole chunks (written raw, compressed in parallel, for Blosc2 tables) or the table is flushed.

This module holds what a table is (its description, columns, record I/O) and appending; the
rest of its API comes from mixins: reading and iterating
(:mod:`~hyperslab.nodes.tables.reading`), changing rows in place
(:mod:`~hyperslab.nodes.tables.modifying`), queries (:mod:`~hyperslab.nodes.tables.querying`,
which delegates to :mod:`hyperslab.compute.queries`) and indexes
(:mod:`~hyperslab.nodes.tables.indexing`).
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.cols import EnumCol
from hyperslab.nodes.atoms.description import (
    Description,
    default_row,
    flat_columns,
)
from hyperslab.nodes.atoms.enum import Enum
from hyperslab.nodes.atoms.tablelayout import description_from_layout
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.tables.columns import Cols, Column, column_instances
from hyperslab.nodes.tables.indexing import IndexedTable
from hyperslab.nodes.tables.modifying import ModifiableTable
from hyperslab.nodes.tables.querying import QueryableTable
from hyperslab.nodes.tables.reading import ReadableTable
from hyperslab.nodes.tables.recordio import RecordIO
from hyperslab.nodes.tables.row import Row
from hyperslab.nodes.tree.attributeset import AttributeSet
from hyperslab.storage import attributes as raw

if TYPE_CHECKING:
    from hyperslab.nodes.tree.owner import NodeOwner
    from hyperslab.storage.compound import CompoundLayout

_IO_MADE = threading.Lock()
"""Held while a table's RecordIO is made, so that all threads share one."""


def _has_arrays_of_structures(dtype: np.dtype[Any]) -> bool:
    """Whether a record dtype has a field that is an array of records (no column can hold
    one: the description says so)."""
    for field, *_ in (dtype.fields or {}).values():
        if field.base.names is not None and (field.shape or _has_arrays_of_structures(field)):
            return True
    return False


def _leaf_count(dtype: np.dtype[Any]) -> int:
    """The number of leaf columns of a structured dtype (FIELD_<j>_FILL attributes)."""
    fields = dtype.fields
    if fields is None:
        return 1
    return sum(_leaf_count(fields[name][0]) for name in dtype.names or ())


class Table(QueryableTable, ModifiableTable, ReadableTable, IndexedTable, Leaf):
    """A table of records (PyTables' ``Table``).

    Create one with :meth:`File.create_table`.  Rows are appended with :meth:`append` or
    ``table.row``, read with :meth:`read`, indexing, iteration and :attr:`cols`, changed with
    :meth:`modify_rows`, :meth:`modify_column` and ``table[...] = ...``, and searched with
    :meth:`where`, :meth:`read_where` and :meth:`get_where_list` (numexpr conditions).

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> class Particle(hyperslab.IsDescription):
    ...     name = hyperslab.StringCol(8)
    ...     energy = hyperslab.Float64Col()
    >>> path = os.path.join(tempfile.mkdtemp(), "table.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     t = f.create_table("/", "particles", Particle, "some particles")
    ...     t.append([(1.5, b"alpha"), (3.0, b"beta"), (0.5, b"gamma")])  # alphabetical
    ...     print(t.nrows, t.read_where("energy > 1", field="name"))
    3 [b'alpha' b'beta']
    """

    _c_classid: ClassVar[str] = "TABLE"
    _c_version: ClassVar[str] = "2.7"

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self._description_: Description | None = None
        self._io_: RecordIO | None = None
        self._rows = threading.local()  # each thread appends through a Row of its own
        self._cols_: Cols | None = None
        self._colinstances_: dict[str, Column | Cols] | None = None
        self._default_: AnyArray | None = None
        self._buffer: AnyArray | None = None  # appended rows not yet in the file (native)
        self._buffered = 0
        self._updating: set[Row] = set()  # iteration rows with unwritten Row.update()s
        self._nrows_stale = False  # the NROWS attribute lags behind appended rows
        # Rows expected when the table was created in this session (PyTables'
        # _v_expectedrows; new indexes are sized for it): the file's default otherwise.
        self._expectedrows: int = file.params.expected_rows_table

    # ------------------------------------------------------------------ description
    @property
    def _io(self) -> RecordIO:
        dataset = self._dataset
        io = self._io_
        if io is None or io.dataset is not dataset:
            with _IO_MADE:  # one RecordIO (one row count) for every thread
                io = self._io_
                if io is None or io.dataset is not dataset:
                    self._g_layout(required=False)  # a type no layout holds: refused
                    io = self._io_ = RecordIO(dataset, self._engine, self._rwlock)
        return io

    def _g_layout(self, required: bool = True) -> CompoundLayout | None:
        """The layout of the table's records (None for a dataset that is not compound,
        unless ``required``).

        Raises
        ------
        HDF5ExtError
            If the dataset's type has none a table can use (a member NumPy cannot hold,
            such as a variable-length one, or a type damaged in the file; PyTables opens
            such a dataset as UnImplemented), or, if ``required``, is not compound.
        """
        try:
            layout = self._dataset.layout
        except TypeError as exc:
            raise HDF5ExtError(f"cannot read table {self._v_pathname}: {exc}") from exc
        if layout is None and required:
            raise HDF5ExtError(f"the dataset of {self._v_pathname} is not of a compound type")
        return layout

    @property
    def description(self) -> Description:
        """The table's :class:`Description` (columns, types, defaults, positions)."""
        if self._description_ is None:
            layout = self._g_layout()
            assert layout is not None
            self._description_ = description_from_layout(layout, self._field_fills(layout.dtype))
        return self._description_

    def _field_fills(self, dtype: np.dtype[Any]) -> list[Any] | None:
        """Column defaults from the FIELD_<j>_FILL attributes, or None without them."""
        h5id = self._g_h5id
        fills: list[Any] = []
        for j in range(_leaf_count(dtype)):
            try:  # all present as a rule (PyTables writes them all): no listing first
                fills.append(raw.read_attribute(h5id, f"FIELD_{j}_FILL"))
            except KeyError:
                if j == 0:
                    return None
                fills.append(None)
        return fills

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of a row (native byte order)."""
        return self._io.dtype

    @property
    def _v_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the description (PyTables' spelling of :attr:`dtype`)."""
        return self.description._v_dtype

    @property
    def byteorder(self) -> str:
        """Byte order of the rows in the file: 'little', 'big', 'mixed' or 'irrelevant'.

        As PyTables: the order shared by every number, enum and time column (one-byte
        ones included), 'mixed' when they differ, 'irrelevant' without such columns.
        """
        layout = self._g_layout(required=False)
        return layout.byteorder if layout is not None else super().byteorder

    @property
    def colnames(self) -> list[str]:
        """Names of the top-level columns, in order."""
        return list(self.description._v_names)

    @property
    def colpathnames(self) -> list[str]:
        """Path names of the leaf columns (``'nested/x'``), in order."""
        return [col._v_pathname for col in flat_columns(self.description)]

    @property
    def coldtypes(self) -> dict[str, np.dtype[Any]]:
        """Leaf column path name -> NumPy dtype of one cell."""
        return {col._v_pathname: col.dtype for col in flat_columns(self.description)}

    @property
    def coltypes(self) -> dict[str, str]:
        """Leaf column path name -> PyTables type name (``'int32'``, ``'string'``, ...)."""
        return {col._v_pathname: col.type for col in flat_columns(self.description)}

    @property
    def coldflts(self) -> dict[str, Any]:
        """Leaf column path name -> default value."""
        return {col._v_pathname: col.dflt for col in flat_columns(self.description)}

    @property
    def nrows(self) -> int:
        """The number of rows, those still in the append buffer included."""
        io = self._io
        with self._shared():  # not while an append moves rows from the buffer to the file
            return io.nrows + self._buffered

    @property
    def shape(self) -> Shape:
        """``(nrows,)``."""
        return (self.nrows,)

    @property
    def rowsize(self) -> int:
        """Bytes of one row."""
        return int(self.dtype.itemsize)

    @property
    def size_in_memory(self) -> int:
        """Bytes of all the rows in memory."""
        return self.nrows * self.rowsize

    @property
    def extdim(self) -> int:
        """Tables grow along their only dimension."""
        return 0

    @property
    def maindim(self) -> int:
        """Rows are counted along dimension 0."""
        return 0

    @property
    def row(self) -> Row:
        """The table's :class:`Row`, to append rows (``row['x'] = 1; row.append()``).

        The same object each time in one thread; each thread has its own, so that threads
        appending row by row never mix their values.
        """
        row: Row | None = getattr(self._rows, "row", None)
        if row is None:
            row = self._rows.row = Row(self)
        return row

    def _rows_at(self, blocks: Iterable[tuple[Any, AnyArray]], step: int = 1) -> Iterator[Row]:
        """A new row positioned at each record of ``blocks`` in turn."""
        return Row(self)._iterate(blocks, step)

    @property
    def cols(self) -> Cols:
        """Column accessor: ``table.cols.x[:]``, ``table.cols._f_col('nested/x')``."""
        if self._cols_ is None:
            layout = None if self._description_ is not None else self._g_layout(False)
            if layout is not None and not _has_arrays_of_structures(layout.dtype):
                # Names and dtypes from the records; the description (defaults and all) is
                # made when first needed.
                self._cols_ = Cols(self, None, dtype=self._io.dtype)
            else:
                self._cols_ = Cols(self, self.description)
        return self._cols_

    @property
    def colinstances(self) -> dict[str, Column | Cols]:
        """Column path name -> :class:`Column` (or :class:`Cols` for nested groups)."""
        if self._colinstances_ is None:
            self._colinstances_ = column_instances(self.cols)
        return self._colinstances_

    def get_enum(self, colname: str) -> Enum:
        """The :class:`Enum` of enumerated column ``colname``.

        Raises
        ------
        KeyError
            If no column has that path name.
        TypeError
            If the column is not enumerated.
        """
        col = next((c for c in flat_columns(self.description) if c._v_pathname == colname),
                   None)
        if col is None:
            raise KeyError(f"table {self._v_pathname} has no column {colname!r}")
        if not isinstance(col, EnumCol):
            raise TypeError(f"column ``{colname}`` of table ``{self._v_pathname}`` is not of an "
                            f"enumerated type")
        return col.enum

    def col(self, name: str) -> AnyArray:
        """Read column ``name`` (a path name for nested ones) whole."""
        return self.read(field=name)

    def _default_record(self) -> AnyArray:
        """A 0-d native record holding every column's default (a fresh copy)."""
        if self._default_ is None:
            self._default_ = default_row(self.description, self.dtype)
        return self._default_.copy()

    def _row_number(self, key: Any, label: str = "index", where: str | None = None) -> int:
        """Row ``key`` (negative counts from the end) as a row number of the table.

        Raises
        ------
        IndexError
            If it is out of range (``label`` and ``where`` name it in the message).
        """
        nrows = self.nrows
        index = operator.index(key)
        if not -nrows <= index < nrows:
            raise IndexError(f"{label} {index} out of range for {where or self._v_pathname} "
                             f"with {nrows} rows")
        return index % nrows

    def _check_writable_table(self) -> None:
        self._g_check_writable()

    # ------------------------------------------------------------------ appending
    def append(self, rows: Any) -> None:
        """Append ``rows``: a structured array, a list of tuples, or anything NumPy converts.

        Parameters
        ----------
        rows : array_like
            One row (a tuple) or a sequence of rows compatible with the table's description
            (fields by position; nested columns as nested tuples).

        Raises
        ------
        ValueError
            If ``rows`` cannot be converted to the table's row type.  Nothing is written.
        """
        self._check_writable_table()
        records = self._as_records(rows)
        if len(records):
            with self._exclusive():
                self._append_records(records)

    def _as_records(self, rows: Any) -> AnyArray:
        dtype = self.dtype
        try:
            if isinstance(rows, np.ndarray) and rows.dtype.names is not None:
                records = rows.astype(dtype, copy=False) if rows.dtype != dtype else rows
            else:
                records = np.asarray(rows, dtype=dtype)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"rows {rows!r:.100} cannot be converted to the row type of {self._v_pathname} "
                f"({dtype}): {exc}"
            ) from exc
        if records.ndim == 0:
            records = records.reshape(1)
        if records.ndim != 1:
            raise ValueError(
                f"rows for {self._v_pathname} must be one-dimensional, got shape {records.shape}"
            )
        return records

    def _append_records(self, records: AnyArray) -> None:
        """Append native ``records``: whole chunks go to the file now, the rest waits.

        For Blosc2 tables the append buffer holds the rows after the last stored chunk
        boundary: they are topped up in place, written once they complete a chunk, and
        rows covering whole chunks are written straight from ``records`` (no copies).
        Unfiltered tables buffer appends of less than a chunk the same way (one HDF5
        write per chunk instead of one per append); bigger appends are written at once.
        """
        io = self._io
        if not io._fast and not (io.unfiltered and len(records) < io.chunkrows):
            self._store_buffer()
            self._store(records, final=True)
            return
        if self._buffered:
            buffer = self._ensure_buffer()
            stored = io.nrows
            room = -(stored + self._buffered) % io.chunkrows
            take = min(room, len(records))
            buffer[self._buffered : self._buffered + take] = records[:take]
            self._buffered += take
            records = records[take:]
            if (stored + self._buffered) % io.chunkrows:
                return  # still short of a chunk boundary: everything is buffered
            whole, self._buffered = buffer[: self._buffered], 0
            self._store(whole, final=True)
        self._store(records, final=False)

    def _ensure_buffer(self) -> AnyArray:
        """The append buffer: room for one chunk of rows."""
        if self._buffer is None:
            self._buffer = np.empty(self._io.chunkrows, dtype=self.dtype)
        return self._buffer

    def _buffer_record(self, record: AnyArray) -> None:
        """Add one native 0-d record to the append buffer (Row.append)."""
        with self._exclusive():
            buffer = self._ensure_buffer()
            buffer[self._buffered] = record
            self._buffered += 1
            self._v_file._unflushed.add(self)
            io = self._io
            # Full, or up to a chunk boundary (a flush may have stored part of a chunk):
            # the buffer only ever holds rows after the last boundary stored.
            if self._buffered == len(buffer) or not (io.nrows + self._buffered) % io.chunkrows:
                records = buffer[: self._buffered].copy()
                self._buffered = 0
                self._store(records, final=False)

    def _store(self, records: AnyArray, *, final: bool) -> None:
        """Write ``records`` after the last stored row; unless ``final``, only up to the
        last chunk boundary they reach, keeping the rest in the append buffer."""
        io = self._io
        stored = io.nrows
        count = len(records)
        if not final:
            boundary = (stored + count) // io.chunkrows * io.chunkrows
            count = max(0, boundary - stored)
        if count:
            io.append(records[:count])
            # NROWS is written on flush (an HDF5 attribute write costs as much as
            # appending a few thousand rows); the File flushes this table on close.
            self._nrows_stale = True
            self._v_file._unflushed.add(self)
        rest = records[count:]
        if len(rest):  # fewer rows than a chunk (``final`` is False here)
            self._ensure_buffer()[: len(rest)] = rest
            self._buffered = len(rest)
            self._v_file._unflushed.add(self)

    def _write_nrows(self) -> None:
        self._nrows_stale = False
        if self._v_file._options.pytables_sys_attrs:
            raw.write_int_attribute(self._g_h5id, "NROWS", self._io.nrows, "int64")

    @property
    def _v_attrs(self) -> AttributeSet:
        """The table's attributes (PyTables' ``_v_attrs``), with NROWS up to date (buffered
        rows are written first)."""
        if (self._nrows_stale or self._buffered) and self._v_file.mode != "r":
            self._flush_rows()
        return super()._v_attrs

    def _row_updated(self, row: Row) -> None:
        """Note that ``row`` holds changes to write (on flush at the latest)."""
        with self._exclusive():
            self._updating.add(row)
            self._v_file._unflushed.add(self)

    def _store_buffer(self) -> None:
        """Write the rows waiting in the append buffer."""
        if self._buffered:
            assert self._buffer is not None
            records = self._buffer[: self._buffered].copy()
            self._buffered = 0
            self._store(records, final=True)

    def _flush_rows(self) -> None:
        """Write the buffered rows (appends and row updates) to the file.

        Any thread may call it (reads do, when rows are buffered): it holds the table's
        lock exclusive, so the rows other threads append wait for it, and the thread must
        not be reading the table (see :mod:`hyperslab.nodes.leaves.rwlock`).
        """
        with self._exclusive():
            for row in list(self._updating):
                row._flush_updates()
            self._store_buffer()
            if self._nrows_stale:
                self._write_nrows()
            self._indexing.sync()
            self._v_file._unflushed.discard(self)

    def flush(self) -> None:
        """Write buffered rows and HDF5's buffers to the file."""
        if self._v__isopen and self._v_file.mode != "r":
            self._flush_rows()
            self._v_file._guard.flush()  # HDF5's buffers: the whole file's (Leaf.flush)

    # ------------------------------------------------------------------ reprs
    def __repr__(self) -> str:
        if not self.isopen:
            return super().__repr__()
        try:
            self._g_layout()
        except HDF5ExtError as exc:  # a repr says what is wrong rather than fail
            return f"{self._v_pathname} (Table, unreadable)\n  NOTE: {exc}"
        return "\n".join([
            str(self),
            f"  description := {self.description!r}",
            f"  byteorder := {self.byteorder!r}",
            f"  chunkshape := {self.chunkshape!r}",
        ])


__all__ = ["Table"]

"""Table: a sequence of records (rows) with named, typed, possibly nested columns.

A table is a 1-D chunked HDF5 dataset of a compound type, with PyTables' attributes
(FORMAT.md §1).  Rows are read and written as NumPy structured arrays through
:class:`~hyperslab.nodes.tables.recordio.RecordIO`; appended rows wait in a buffer until they fill
whole chunks (written raw, compressed in parallel, for Blosc2 tables) or the table is flushed.
Queries live in :mod:`hyperslab.compute.queries`; the methods here delegate to it.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.cols import EnumCol
from hyperslab.nodes.atoms.description import (
    Description,
    default_row,
    field_of,
    flat_columns,
)
from hyperslab.nodes.atoms.enum import Enum
from hyperslab.nodes.atoms.tablelayout import description_from_layout
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.tables.columns import Cols, Column, column_instances
from hyperslab.nodes.tables.indexing import IndexedTable
from hyperslab.nodes.tables.recordio import RecordIO
from hyperslab.nodes.tables.row import Row
from hyperslab.nodes.tree.attributeset import AttributeSet
from hyperslab.storage import attributes as raw

if TYPE_CHECKING:
    from hyperslab.nodes.tree.owner import NodeOwner
    from hyperslab.storage.compound import CompoundLayout

Result = TypeVar("Result")

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


def _rows_of(key: Any, nrows: int) -> range:
    """Rows of a slice ``key`` over a table of ``nrows`` rows (any step)."""
    return range(*key.indices(nrows))


class Table(IndexedTable, Leaf):
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

    # ------------------------------------------------------------------ reading
    def _ready(self) -> RecordIO:
        """The record I/O, after any buffered appends are in the file."""
        if self._buffered or self._updating:
            self._flush_rows()
        return self._io

    def _field(self, records: AnyArray, field: str | None) -> AnyArray:
        if field is None:
            return records
        return np.ascontiguousarray(field_of(records, field))

    def read(  # type: ignore[override]  # PyTables' order: field comes before out
        self,
        start: int | None = None,
        stop: int | None = None,
        step: int | None = None,
        field: str | None = None,
        out: AnyArray | None = None,
    ) -> Any:
        """Read rows ``start:stop:step`` (slice semantics; any step but 0).

        Parameters
        ----------
        start, stop, step : int, optional
            The rows, as a Python slice.
        field : str, optional
            Read only this column (``'nested/x'`` for nested ones).
        out : numpy.ndarray, optional
            A C-contiguous array of the result's dtype and length to read into.

        Returns
        -------
        numpy.ndarray
            A structured array of rows, or the column ``field``.

        Raises
        ------
        KeyError
            If ``field`` names no column.
        ValueError
            If ``out`` does not fit the result.
        """
        io = self._ready()
        rows = _rows_of(slice(start, stop, step), io.nrows)
        if field is not None:
            field_of(np.zeros(0, self.dtype), field)  # check the name before reading
        if out is not None and field is None and rows.step == 1:
            self._check_out(out, len(rows), self.dtype)
            return io.read_span(rows.start, rows.stop, out) if len(rows) else out
        data = self._field(io.read_rows(rows.start, rows.stop, rows.step), field)
        if out is not None:
            self._check_out(out, len(data), data.dtype, data.shape)
            out[...] = data
            return out
        return self._flavored(data)

    @staticmethod
    def _check_out(
        out: AnyArray, nrows: int, dtype: np.dtype[Any], shape: Shape | None = None
    ) -> None:
        expected = shape if shape is not None else (nrows,)
        if not isinstance(out, np.ndarray) or not out.flags.c_contiguous:
            raise ValueError("output array must be a C-contiguous NumPy array")
        if out.shape != expected or out.dtype != dtype:
            raise ValueError(
                f"output array of shape {out.shape} and dtype {out.dtype} does not fit the "
                f"result of shape {expected} and dtype {dtype}"
            )

    def _coords(self, coords: Any, nrows: int) -> AnyArray:
        """``coords`` (ints, negative from the end, or a boolean mask) as int64 rows."""
        array = np.asarray(coords)
        if array.dtype == np.bool_:
            if array.shape != (nrows,):
                raise IndexError(
                    f"a boolean mask for {self._v_pathname} must have {nrows} elements, not "
                    f"{array.shape}"
                )
            return np.flatnonzero(array)
        if array.size == 0:
            return np.zeros(0, dtype=np.int64)
        if array.dtype.kind not in "iu":
            raise TypeError(f"row coordinates must be integers, not {array.dtype}: {coords!r:.80}")
        result = array.astype(np.int64).reshape(-1)
        result = np.where(result < 0, result + nrows, result)
        bad = (result < 0) | (result >= nrows)
        if bad.any():
            raise IndexError(
                f"row coordinate {array.reshape(-1)[np.argmax(bad)]} is out of range for "
                f"{self._v_pathname} with {nrows} rows"
            )
        return result

    def read_coordinates(self, coords: Any, field: str | None = None) -> AnyArray:
        """Read the rows at ``coords`` (ints in any order, or a boolean mask)."""
        io = self._ready()
        return self._flavored(self._field(io.read_points(self._coords(coords, io.nrows)),
                                          field))

    def __getitem__(self, key: Any) -> Any:
        """Rows by int (a record), slice (any step), int array or boolean mask."""
        io = self._ready()
        nrows = io.nrows
        if isinstance(key, (int, np.integer)):
            index = self._row_number(key)
            return io.read_span(index, index + 1)[0]
        if isinstance(key, slice):
            rows = _rows_of(key, nrows)
            return self._flavored(io.read_rows(rows.start, rows.stop, rows.step))
        if isinstance(key, (list, np.ndarray)):
            return self.read_coordinates(key)
        raise TypeError(f"invalid index or slice for a table: {key!r:.80}")

    # ------------------------------------------------------------------ iterating
    def _iter_blocks(
        self, start: int | None, stop: int | None, step: int | None,
        fields: Sequence[str] | None = None,
    ) -> Iterator[tuple[int, AnyArray]]:
        """Stream rows ``start:stop:step`` in chunk-aligned blocks of native records.

        Yields ``(first, records)``: the number of the first row and the rows of the block.
        """
        io = self._ready()
        rows = _rows_of(slice(start, stop, step), io.nrows)
        return io.blocks(rows.start, rows.stop, rows.step)

    def _map_blocks(
        self, start: int, stop: int, step: int, work: Callable[[int, AnyArray], Result],
        parallel_context: Callable[[], AbstractContextManager[Any]] | None = None,
    ) -> Iterator[Result]:
        """``work(first, records)`` on each block of rows ``start:stop:step`` (normalized,
        ``step`` > 0), in the pool's threads; the results in row order (see
        :meth:`RecordIO.map_blocks`)."""
        return self._ready().map_blocks(start, stop, step, work, parallel_context)

    def _written_runs(self, start: int, stop: int
                      ) -> tuple[list[tuple[int, int]], AnyArray] | None:
        """Runs of rows of ``start:stop`` in written chunks and the fill value's record,
        when most of the range was never written (see :meth:`RecordIO.written_runs`)."""
        return self._ready().written_runs(start, stop)

    def _rows_at(self, blocks: Iterable[tuple[Any, AnyArray]], step: int = 1) -> Iterator[Row]:
        """A new row positioned at each record of ``blocks`` in turn."""
        return Row(self)._iterate(blocks, step)

    def iterrows(
        self, start: int | None = None, stop: int | None = None, step: int | None = None
    ) -> Iterator[Row]:
        """Iterate over rows ``start:stop:step``, reading them in chunk-sized blocks.

        The yielded :class:`Row` is the same object each time, pointing at the current row.
        """
        io = self._ready()
        rows = _rows_of(slice(start, stop, step), io.nrows)
        return self._rows_at(io.blocks(rows.start, rows.stop, rows.step), rows.step)

    def __iter__(self) -> Iterator[Row]:
        return self.iterrows()

    def itersequence(self, sequence: Any) -> Iterator[Row]:
        """Iterate over the rows at the coordinates in ``sequence`` (in its order)."""
        io = self._ready()
        coords = self._coords(sequence, io.nrows)

        def blocks() -> Iterator[tuple[AnyArray, AnyArray]]:
            step = io.block_rows
            for begin in range(0, len(coords), step):
                part = coords[begin : begin + step]
                yield part, io.read_points(part)

        return self._rows_at(blocks())

    # ------------------------------------------------------------------ changing rows
    def _check_range_write(self, start: int | None, stop: int | None, step: int | None,
                           count: int) -> range:
        """PyTables' range rules for modify_*: non-negative start and a step >= 1."""
        begin = 0 if start is None else operator.index(start)
        if begin < 0:
            raise ValueError(f"'start' must have a positive value, not {begin}")
        stride = 1 if step is None else operator.index(step)
        if stride < 1:
            raise ValueError(f"'step' must have a value greater or equal than 1, not {stride}")
        end = begin + (count - 1) * stride + 1 if stop is None else operator.index(stop)
        rows = range(*slice(begin, end, stride).indices(self.nrows))
        if end > self.nrows:
            raise IndexError(
                f"this modification (rows up to {end}) would exceed the length of "
                f"{self._v_pathname} ({self.nrows} rows); giving up"
            )
        if len(rows) != count:
            raise ValueError(
                f"the value has {count} rows but the range {begin}:{end}:{stride} of "
                f"{self._v_pathname} selects {len(rows)}"
            )
        return rows

    def _update_rows(self, rows: range, apply: Any,
                     columns: Sequence[str] | None = None) -> None:
        """Read the rows spanning ``rows``, let ``apply(selected)`` change them, write back
        (the indexes of ``columns``, or of all columns, become dirty)."""
        if len(rows) == 0:
            return
        io = self._ready()  # buffered rows first: writing them may update the indexes
        with self._exclusive():
            self._indexing.touched(columns)
            lo, hi = rows[0], rows[-1] + 1
            span = io.read_span(lo, hi)
            view = span[:: rows.step]
            apply(view)
            io.write_span(lo, span)

    def modify_rows(
        self, start: int | None = None, stop: int | None = None, step: int | None = None,
        rows: Any = None,
    ) -> int:
        """Replace rows ``start:stop:step`` with ``rows``; return how many were changed.

        Raises
        ------
        ValueError
            If ``rows`` does not fit the range or the row type.
        IndexError
            If the range goes past the end of the table.
        """
        self._check_writable_table()
        if rows is None:
            return 0
        records = self._as_records(rows)
        selected = self._check_range_write(start, stop, step, len(records))

        def apply(view: AnyArray) -> None:
            view[...] = records

        self._update_rows(selected, apply)
        return len(records)

    def modify_column(
        self, start: int | None = None, stop: int | None = None, step: int | None = None,
        column: Any = None, colname: str | None = None,
    ) -> int:
        """Replace the values of column ``colname`` in rows ``start:stop:step``.

        Raises
        ------
        TypeError
            If ``colname`` is not a string.
        KeyError
            If it names no column.
        """
        if not isinstance(colname, str):
            raise TypeError(f"the argument colname must be a string, not {colname!r}")
        return self.modify_columns(start, stop, step, [column], [colname])

    def modify_columns(
        self, start: int | None = None, stop: int | None = None, step: int | None = None,
        columns: Any = None, names: Sequence[str] | None = None,
    ) -> int:
        """Replace the values of the columns ``names`` in rows ``start:stop:step``.

        ``columns`` is a sequence of column values (one per name) or a structured array
        with those fields.
        """
        self._check_writable_table()
        if columns is None:
            return 0
        if names is None:
            raise TypeError("modify_columns needs the column names (names=...)")
        names = list(names)
        template = np.zeros(0, self.dtype)
        if isinstance(columns, np.ndarray) and columns.dtype.names is not None:
            values = [columns[name] for name in columns.dtype.names]
        else:
            values = list(columns)
        if len(values) != len(names):
            raise ValueError(f"{len(values)} columns given for {len(names)} names {names}")
        arrays = []
        for name, value in zip(names, values, strict=True):
            cell = field_of(template, name).dtype
            base, shape = cell.subdtype if cell.subdtype is not None else (cell, ())
            try:
                array = np.asarray(value, dtype=base)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"values for column {name!r} cannot be converted to "
                                 f"{cell}: {exc}") from exc
            if array.ndim == len(shape):
                array = array.reshape((1, *array.shape))
            arrays.append(array)
        count = len(arrays[0]) if arrays else 0
        selected = self._check_range_write(start, stop, step, count)

        def apply(view: AnyArray) -> None:
            for name, array in zip(names, arrays, strict=True):
                field_of(view, name)[...] = array

        self._update_rows(selected, apply, names)
        return count

    def _write_coordinates(self, coords: AnyArray, records: AnyArray) -> None:
        """Write native ``records`` at rows ``coords``."""
        io = self._ready()
        with self._exclusive():
            self._indexing.touched()
            io.write_points(coords, records)

    def modify_coordinates(self, coords: Any, rows: Any) -> int:
        """Replace the rows at ``coords`` with ``rows``; return how many were changed."""
        self._check_writable_table()
        io = self._ready()
        points = self._coords(coords, io.nrows)
        records = self._as_records(rows)
        if len(records) == 1 and len(points) != 1:
            records = np.repeat(records, len(points))
        if len(records) != len(points):
            raise ValueError(f"{len(records)} rows given for {len(points)} coordinates")
        with self._exclusive():
            self._indexing.touched()
            io.write_points(points, records)
        return len(points)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Replace rows: by int, slice (step >= 1), int array or boolean mask."""
        self._check_writable_table()
        nrows = self.nrows
        if isinstance(key, (int, np.integer)):
            index = self._row_number(key)
            self.modify_rows(index, index + 1, 1, [value]
                             if not isinstance(value, np.ndarray) or value.ndim == 0
                             else value)
            return
        if isinstance(key, slice):
            rows = _rows_of(key, nrows)
            if rows.step < 0:
                rows = rows[::-1]
                value = self._as_records(value)[::-1]
            self.modify_rows(rows.start, rows.stop, rows.step, value)
            return
        if isinstance(key, (list, np.ndarray)):
            self.modify_coordinates(key, value)
            return
        raise TypeError(f"invalid index or slice for a table: {key!r:.80}")

    def remove_rows(
        self, start: int | None = None, stop: int | None = None, step: int | None = None
    ) -> int:
        """Remove rows ``start:stop:step`` (slice semantics, step >= 1); return how many.

        The rows after them move up; this rewrites the rest of the table.
        """
        self._check_writable_table()
        if step is not None and step < 0:
            raise ValueError(f"slice step cannot be negative: {step}")
        io = self._ready()
        with self._exclusive():
            return self._remove_rows(io, slice(start, stop, step))

    def _remove_rows(self, io: RecordIO, selected: slice) -> int:
        nrows = io.nrows
        rows = _rows_of(selected, nrows)
        if len(rows) == 0:
            return 0
        first = rows[0]
        write_at = first
        self._indexing.touched()
        # Stream the rows kept after the first removed one towards the front.
        for begin in range(first, nrows, io.block_rows):
            end = min(nrows, begin + io.block_rows)
            span = io.read_span(begin, end)
            index = np.arange(begin, end)
            removed = (index >= rows.start) & (index < rows.stop) & (
                (index - rows.start) % rows.step == 0)
            kept = span[~removed]
            io.write_span(write_at, kept)
            write_at += len(kept)
        io.resize(write_at)
        self._write_nrows()
        return nrows - write_at

    def remove_row(self, n: int) -> None:
        """Remove row ``n`` (negative counts from the end)."""
        index = self._row_number(n, "row")
        self.remove_rows(index, index + 1)

    def truncate(self, size: int | Sequence[int]) -> None:
        """Shrink or grow the table to ``size`` rows; new rows hold the column defaults."""
        self._check_writable_table()
        if not isinstance(size, (int, np.integer)):
            values = list(size)
            if len(values) != 1:
                raise ValueError(f"truncate takes a number of rows, not {size!r}")
            size = values[0]
        rows = operator.index(size)
        if rows < 0:
            raise ValueError(f"truncate size must be non-negative, not {rows}")
        io = self._ready()
        with self._exclusive():
            old = io.nrows
            if rows < old:
                self._indexing.touched()
            if rows <= old:
                io.resize(rows)
            else:
                default = self._default_record()
                for begin in range(old, rows, io.block_rows):
                    count = min(io.block_rows, rows - begin)
                    self._store(np.full(count, default, dtype=self.dtype), final=True)
            self._write_nrows()

    # ------------------------------------------------------------------ queries
    def where(
        self, condition: str, condvars: dict[str, Any] | None = None,
        start: int | None = None, stop: int | None = None, step: int | None = None,
    ) -> Iterator[Row]:
        """Iterate over the rows that fulfil ``condition`` (an in-kernel numexpr query).

        Variables of the condition are column names, names in ``condvars`` or, when it is
        None, variables of the calling frame.  Errors in the condition are raised here,
        before any row is produced.

        Examples
        --------
        ``[row['col2'] for row in table.where('(col1 > 0) & (col3 < lim)')]``
        """
        from hyperslab.compute import queries

        return queries.where(self, condition, condvars, start, stop, step, depth=1)

    def read_where(
        self, condition: str, condvars: dict[str, Any] | None = None,
        field: str | None = None, start: int | None = None, stop: int | None = None,
        step: int | None = None,
    ) -> AnyArray:
        """The rows (or column ``field``) that fulfil ``condition``, as an array."""
        from hyperslab.compute import queries

        return queries.read_where(self, condition, condvars, field, start, stop, step, depth=1)

    def get_where_list(
        self, condition: str, condvars: dict[str, Any] | None = None, sort: bool = False,
        start: int | None = None, stop: int | None = None, step: int | None = None,
    ) -> AnyArray:
        """The coordinates (int64) of the rows that fulfil ``condition``."""
        from hyperslab.compute import queries

        return queries.get_where_list(self, condition, condvars, sort, start, stop, step,
                                      depth=1)

    def append_where(
        self, dstTable: Table, condition: str,  # PyTables' name
        condvars: dict[str, Any] | None = None, start: int | None = None,
        stop: int | None = None, step: int | None = None,
    ) -> int:
        """Append the rows that fulfil ``condition`` to ``dstTable``; return how many."""
        from hyperslab.compute import queries

        return queries.append_where(self, dstTable, condition, condvars, start, stop, step,
                                    depth=1)

    def will_query_use_indexing(
        self, condition: str, condvars: dict[str, Any] | None = None
    ) -> frozenset[str]:
        """The indexed columns a query would use (none until indexes exist)."""
        from hyperslab.compute import queries

        return queries.will_query_use_indexing(self, condition, condvars, depth=1)

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

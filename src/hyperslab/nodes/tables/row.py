"""Row: the cursor of table iteration and the buffer of row-by-row appends.

One :class:`Row` belongs to each table (``table.row``).  Outside iteration it fills a private
record that :meth:`Row.append` copies into the table's append buffer.  Inside iteration
(``for row in table``, ``table.where(...)``) it points at one record of a block of rows read
from the file: ``row['col']`` indexes that block's column, so nothing is converted for the
fields nobody reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.nodes.atoms.description import field_of

if TYPE_CHECKING:
    from hyperslab.nodes.tables.table import Table


class Row:
    """The row cursor of a table (PyTables' ``Row``).

    Use it through ``table.row`` to append rows, and as the object yielded by table
    iterators (``iterrows``, ``where``, ``itersequence``, ``for row in table``) to read,
    and with :meth:`update`, change them.  Each iterator has its own Row, so iterations
    of one table may nest.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     t = f.create_table("/", "t", {"x": hyperslab.Int32Col(), "y": hyperslab.Float64Col()})
    ...     row = t.row
    ...     for i in range(3):
    ...         row["x"] = i
    ...         row["y"] = i / 2
    ...         row.append()
    ...     t.flush()
    ...     print([(r["x"], r["y"]) for r in t if r["x"] > 0])
    [(1, 0.5), (2, 1.0)]
    """

    __slots__ = (
        "_columns", "_coords", "_first", "_i", "_iterating", "_records", "_step", "_table",
        "_updates", "_wrec",
    )

    def __init__(self, table: Table) -> None:
        self._table = table
        self._wrec: AnyArray = table._default_record()  # the record being filled
        self._iterating = False
        self._records: AnyArray | None = None  # the block being iterated
        self._columns: dict[Any, list[Any]] = {}  # its scalar columns as lists, by key
        self._coords: AnyArray | None = None  # row numbers of the block, or
        self._first = 0  # the first row number and
        self._step = 1  # the step between rows
        self._i = -1  # position in the block
        self._updates: list[tuple[int, AnyArray]] = []

    # ------------------------------------------------------------------ iteration
    def _iterate(self, blocks: Iterable[tuple[Any, AnyArray]], step: int = 1) -> Iterator[Row]:
        """Yield this row positioned at every record of ``blocks``.

        ``blocks`` yields ``(coords, records)``: ``coords`` is an int64 array of the rows'
        numbers or the number of the first row (the others follow every ``step`` rows).
        """
        self._iterating = True
        try:
            for coords, block in blocks:
                # Rows are served from pieces of the block small enough that the Python
                # values of the columns read stay in the CPU cache.
                for begin in range(0, len(block), _PIECE_ROWS):
                    records = block[begin : begin + _PIECE_ROWS]
                    self._records = records
                    self._columns = {}
                    if isinstance(coords, np.ndarray):
                        self._coords = coords[begin : begin + _PIECE_ROWS]
                    else:
                        self._coords = None
                        self._first = int(coords) + begin * step
                        self._step = step
                    for self._i in range(len(records)):  # the cursor moves itself
                        yield self
                if len(self._updates) >= _UPDATE_FLUSH_ROWS:
                    self._flush_updates()
        finally:
            if self._records is not None and self._i >= 0:
                # The last row read stays readable after the loop, as in PyTables.
                self._wrec[...] = self._records[self._i]
            self._iterating = False
            self._records = None
            self._columns = {}
            self._i = -1
            self._flush_updates()

    @property
    def nrow(self) -> int:
        """The number of the row in the table (-1 outside iteration)."""
        if self._records is None:
            return -1
        if self._coords is not None:
            return int(self._coords[self._i])
        return self._first + self._i * self._step

    @property
    def table(self) -> Table:
        """The table this row belongs to."""
        return self._table

    def _field(self, key: Any) -> AnyArray:
        records = self._records
        assert records is not None
        if isinstance(key, str):
            return field_of(records, key)
        names = records.dtype.names or ()
        if not isinstance(key, int | np.integer):  # as PyTables: a dict, float... is a type error
            raise TypeError(f"a row field is a name or an integer position, not {key!r}")
        try:
            return records[names[key]]
        except IndexError:
            raise KeyError(f"no field at position {key!r}; the fields are {names}") from None

    def __getitem__(self, key: Any) -> Any:
        """The value of field ``key`` (a name, ``'nested/x'`` path or top-level position).

        Scalar cells come as Python scalars (``int``, ``float``, ``bytes``...); a slice of
        positions gives a tuple of values; multidimensional cells and nested records come
        as NumPy copies.
        """
        # Keep this body tiny (no closures): it runs once per row and field, and CPython
        # only inlines small, closure-free __getitem__ calls.
        try:
            return self._columns[key][self._i]
        except (KeyError, TypeError):  # TypeError: a slice (unhashable before 3.12)
            return self._get(key)

    def _get(self, key: Any) -> Any:
        """``self[key]`` when ``key`` has no list of values for the current block yet."""
        if self._records is None:
            return self._read_wrec(key)
        if isinstance(key, slice):
            names = self._records.dtype.names or ()
            return tuple(self[name] for name in names[key])
        column = self._field(key)
        if column.ndim == 1 and column.dtype.names is None:
            # Read once per block as a list: indexing a list is what makes rows fast.
            values = self._columns[key] = column.tolist()
            return values[self._i]
        return column[self._i].copy()

    def _read_wrec(self, key: Any) -> Any:
        if isinstance(key, slice):
            names = self._wrec.dtype.names or ()
            return tuple(self._read_wrec(name) for name in names[key])
        if not isinstance(key, str):
            key = (self._wrec.dtype.names or ())[key]
        value = field_of(self._wrec, key)
        if value.ndim:
            return value.copy()
        # Python scalars, as rows being iterated give them (and PyTables' Row gives both).
        return value[()] if value.dtype.names is not None else value.item()

    def __setitem__(self, key: Any, value: Any) -> None:
        """Set field ``key`` of the current row (iteration) or of the row to append."""
        self._table._check_writable_table()
        records = self._records
        target = self._wrec if records is None else records[self._i : self._i + 1]
        if not isinstance(key, str):
            key = (target.dtype.names or ())[key]
        column = field_of(target, key)
        self._columns = {}  # the block's lists of values may be stale now
        cell = column.reshape((1, *column.shape[target.ndim:]))  # the record's one cell
        try:
            # An element assignment, as PyTables' row does it: NumPy's errors for it are
            # PyTables' (ValueError for text that is no number, TypeError for a sequence
            # or None, OverflowError for an int too big for the column).
            cell[0] = value
        except (ValueError, TypeError, OverflowError) as exc:
            kind = next(k for k in (ValueError, TypeError, OverflowError) if isinstance(exc, k))
            raise kind(
                f"value {value!r:.80} cannot be stored in field {key!r} of "
                f"{self._table._v_pathname} (dtype {column.dtype}): {exc}"
            ) from exc

    def fetch_all_fields(self) -> Any:
        """A copy of the whole current record (a NumPy void scalar).

        Outside iteration this is the record being filled for :meth:`append`.
        """
        if self._records is None:
            return self._wrec[()].copy()
        return self._records[self._i].copy()

    # ------------------------------------------------------------------ writing
    def append(self) -> None:
        """Append the record filled so far to the table's buffer, then reset it to defaults.

        Call ``table.flush()`` after a loop of appends (the table also flushes itself before
        any read and on close).

        Raises
        ------
        NotImplementedError
            In the middle of an iteration of the same table (use :meth:`update`).
        """
        table = self._table
        table._check_writable_table()
        if self._iterating:
            raise NotImplementedError(
                "rows cannot be appended in the middle of a table iterator; use "
                "Row.update() to change the current row"
            )
        table._buffer_record(self._wrec)
        self._wrec[...] = table._default_record()

    def update(self) -> None:
        """Write the changes made to the current row (inside an iterator) to the table.

        Changes are buffered and written by the end of the iteration (or ``table.flush()``).

        Raises
        ------
        NotImplementedError
            Outside an iterator.
        """
        self._table._check_writable_table()
        if self._records is None:
            raise NotImplementedError(
                "Row.update() only works in the middle of a table iterator; use "
                "table.modify_rows() or table[...] = ... otherwise"
            )
        table = self._table
        with table._exclusive():  # a flush in another thread may be taking the updates
            self._updates.append((self.nrow, self._records[self._i : self._i + 1].copy()))
            table._row_updated(self)

    def _flush_updates(self) -> None:
        """Write the rows changed with :meth:`update` (the table calls it on flush)."""
        if self._updates:  # the table holds its lock exclusive (Table._flush_rows)
            updates, self._updates = self._updates, []
            coords = np.array([nrow for nrow, _ in updates], dtype=np.int64)
            records = np.concatenate([rec for _, rec in updates])
            self._table._write_coordinates(coords, records)
        self._table._updating.discard(self)

    def __repr__(self) -> str:
        path = self._table._v_pathname
        if self._records is None:
            return (f"Warning: Row iterator has not been initialized for table:\n  {path}\n"
                    f" You will normally want to use this object in iterator contexts.")
        return f"{path}.row (Row), pointing to row #{self.nrow}"

    __str__ = __repr__


_PIECE_ROWS = 8192
"""Rows of a block whose values are converted to Python lists at a time."""

_UPDATE_FLUSH_ROWS = 65536
"""Rows changed by :meth:`Row.update` that are written together."""


__all__ = ["Row"]

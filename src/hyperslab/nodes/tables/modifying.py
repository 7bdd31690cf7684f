"""Changing the rows of a table in place: modifying rows and columns, removing rows,
truncating (a mixin of :class:`~hyperslab.nodes.tables.table.Table`).

A change makes the indexes of the columns it touches dirty before it writes (see
:mod:`~hyperslab.nodes.tables.indexing`); appending is in
:mod:`~hyperslab.nodes.tables.table`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.nodes.atoms.description import field_of
from hyperslab.nodes.tables.reading import _rows_of

if TYPE_CHECKING:
    from hyperslab.nodes.leaves.leaf import Leaf as TablePart
    from hyperslab.nodes.tables.indexing import TableIndexes
    from hyperslab.nodes.tables.recordio import RecordIO
else:
    TablePart = object  # a Leaf to type checkers (Table is one), a plain mixin at run time


class ModifiableTable(TablePart):
    """Modifying, removing and truncating rows: the part of Table's API that changes them."""

    if TYPE_CHECKING:  # defined by Table and its other parts
        @property
        def _indexing(self) -> TableIndexes: ...

        def _check_writable_table(self) -> None: ...

        def _as_records(self, rows: Any) -> AnyArray: ...

        def _ready(self) -> RecordIO: ...

        def _coords(self, coords: Any, nrows: int) -> AnyArray: ...

        def _row_number(self, key: Any, label: str = "index", where: str | None = None
                        ) -> int: ...

        def _store(self, records: AnyArray, *, final: bool) -> None: ...

        def _write_nrows(self) -> None: ...

        def _default_record(self) -> AnyArray: ...

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

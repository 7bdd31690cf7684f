"""Reading a table: rows by range, coordinates or key, whole or one column, and iterating
(a mixin of :class:`~hyperslab.nodes.tables.table.Table`).

Every read first writes the rows still buffered (``_ready``), then reads through the
table's :class:`~hyperslab.nodes.tables.recordio.RecordIO`: in chunk-aligned blocks, in the
pool's threads where that pays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.nodes.atoms.description import field_of

if TYPE_CHECKING:
    from hyperslab.nodes.leaves.leaf import Leaf as TablePart
    from hyperslab.nodes.tables.recordio import RecordIO
    from hyperslab.nodes.tables.row import Row
else:
    TablePart = object  # a Leaf to type checkers (Table is one), a plain mixin at run time

Result = TypeVar("Result")


def positive_slice(key: slice) -> slice:
    """``key``, refused with PyTables' ValueError where its step is negative (slicing a
    table or a column; ``read`` and ``iterrows`` take negative steps)."""
    if key.step is not None and key.step < 0:
        raise ValueError("slice step cannot be negative")
    return key


def _rows_of(key: Any, nrows: int) -> range:
    """Rows of a slice ``key`` over a table of ``nrows`` rows (any step)."""
    return range(*key.indices(nrows))


class ReadableTable(TablePart):
    """Reading and iterating over rows: the part of Table's API that reads them."""

    if TYPE_CHECKING:  # defined by Table
        _buffered: int
        _updating: set[Row]

        @property
        def _io(self) -> RecordIO: ...

        def _flush_rows(self) -> None: ...

        def _row_number(self, key: Any, label: str = "index", where: str | None = None
                        ) -> int: ...

        def _rows_at(self, blocks: Iterable[tuple[Any, AnyArray]], step: int = 1
                     ) -> Iterator[Row]: ...

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
        if out is not None:
            self._check_out_flavor()
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
        if not isinstance(out, np.ndarray):
            raise ValueError(f"the output array must be a NumPy array, not {type(out)}")
        # PyTables' checks and messages first: byte order, size in bytes, C order.
        if not out.dtype.isnative:
            raise ValueError("output array must be in system's byteorder or results will "
                             "be incorrect")
        need = dtype.itemsize * int(np.prod(expected))
        if out.nbytes != need:
            raise ValueError(f"output array size invalid, got {out.nbytes} bytes, need "
                             f"{need} bytes: it does not fit the result of shape {expected} "
                             f"and dtype {dtype}")
        if not out.flags.c_contiguous:
            raise ValueError("output array not C contiguous")
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
        """Rows by int (a record), slice (a positive step), int array or boolean mask."""
        io = self._ready()
        nrows = io.nrows
        if isinstance(key, (int, np.integer)):
            index = self._row_number(key)
            return self._flavored(io.read_span(index, index + 1)[0])
        if isinstance(key, slice):
            rows = _rows_of(positive_slice(key), nrows)
            return self._flavored(io.read_rows(rows.start, rows.stop, rows.step))
        if isinstance(key, (list, np.ndarray)):  # always NumPy, as in PyTables
            return self._field(io.read_points(self._coords(key, nrows)), None)
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

"""Reading and writing the records of a table's dataset, in the file's layout or natively.

:class:`RecordIO` is the only place that moves table rows between the file and NumPy.  Rows
travel as structured arrays: in the file's layout (its byte order and offsets) inside this
module, in native byte order outside.  Spans of Blosc2 tables go through the chunk engine
(raw chunks, parallel decompression, whole chunks compressed in parallel and written raw);
everything else through HDF5 with the file's own type as memory type (a plain copy).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.chunked.access import write_selection
from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.engine import ChunkEngine, RawKind
from hyperslab.chunked.ordered import in_order
from hyperslab.nodes.atoms.description import field_of
from hyperslab.nodes.leaves.rwlock import ReadWriteLock
from hyperslab.storage.compound import decode_time64, encode_time64
from hyperslab.storage.datasets import Dataset

BLOCK_BYTES = 2 << 20
"""Bytes of rows read at a time when streaming a table (whole chunks, at least one)."""

PREAD_POINTS_MAX = 256
"""Up to this many rows at coordinates, a read-only unfiltered table's dataset reads each
run of consecutive rows with a ``pread`` (as :meth:`~hyperslab.storage.datasets.Dataset.\
read_points` does), more through HDF5's point selection."""

SPAN_BYTES_PER_RUN = 4096
"""A table without Blosc2 reads rows at sorted coordinates as the span from the first to
the last, and takes them from it, where that is cheaper than reading the points: a span
costs ~20 us and a copy of ~6.7 GB/s, a ``pread`` ~0.8 us a run of rows
(:data:`PREAD_POINTS_MAX`), HDF5's point selection ~0.07 us a row.  So the span is read
where its bytes are at most this many times (the runs - :data:`SPAN_FIXED_COUNT`) for
preads, :data:`SPAN_BYTES_PER_POINT` times (the rows - :data:`PREAD_POINTS_MAX`) for a point
selection.  Measured on a 20,000-row, 24-byte-row unfiltered table: 100 rows spread over
9,274 read in 27 us instead of 84, 10,000 over 19,631 in 222 instead of 719."""

SPAN_FIXED_COUNT = 24
"""See :data:`SPAN_BYTES_PER_RUN`."""

SPAN_BYTES_PER_POINT = 512
"""See :data:`SPAN_BYTES_PER_RUN`."""

SPAN_POINTS_MAX_BYTES = 32 << 20
"""Spans read for points are at most this big (else the points are read one by one)."""

Result = TypeVar("Result")


def time64_paths(dtype: np.dtype[Any], time_fields: frozenset[str]) -> list[str]:
    """The Time64 (8-byte time) fields among ``time_fields`` of layout ``dtype``."""
    empty = np.zeros(0, dtype)
    return sorted(p for p in time_fields if field_of(empty, p).dtype.base.itemsize == 8)


def encode_time64_fields(records: AnyArray, paths: list[str]) -> None:
    """Turn the seconds in Time64 fields ``paths`` of ``records`` (file layout, changed in
    place) into the words PyTables stores."""
    for path in paths:
        column = field_of(records, path)
        column[...] = encode_time64(column, column.dtype.base)


def _empty(dtype: np.dtype[Any]) -> AnyArray:
    return np.empty(0, dtype=dtype)


_NO_LOCK: AbstractContextManager[Any] = contextlib.nullcontext()


class RecordIO:
    """Row I/O of one table dataset.

    Parameters
    ----------
    dataset : Dataset
        The table's 1-D compound dataset.
    engine : ChunkEngine
        Its chunk engine.
    lock : ReadWriteLock, optional
        The table's lock (none for a read-only file): every read of rows holds it shared,
        every change exclusive, so that the rows a reader gets are those before or after
        each change (see :mod:`hyperslab.nodes.leaves.rwlock`).
    """

    def __init__(self, dataset: Dataset, engine: ChunkEngine,
                 lock: ReadWriteLock | None = None) -> None:
        self.dataset = dataset
        self.engine = engine
        self.lock = lock
        self.file_dtype: np.dtype[Any] = dataset.dtype
        self.dtype: np.dtype[Any] = (
            self.file_dtype if self.file_dtype.isnative else self.file_dtype.newbyteorder("=")
        )
        chunks = dataset.chunks
        self.chunkrows = int(chunks[0]) if chunks else max(1, BLOCK_BYTES // self.dtype.itemsize)
        self.block_rows = max(1, BLOCK_BYTES // max(1, self.dtype.itemsize))
        self.block_rows = max(self.chunkrows, self.block_rows // self.chunkrows * self.chunkrows)
        self._fast = engine.kind is RawKind.BLOSC2
        self.unfiltered = engine.kind is RawKind.PLAIN
        self._nrows = int(dataset.shape[0])
        # PyTables stores Time64 cells as seconds/microseconds words, not as float64.
        layout = dataset.layout
        self._time64 = [] if layout is None else time64_paths(self.file_dtype,
                                                               layout.time_fields)

    @property
    def nrows(self) -> int:
        """Rows stored in the dataset (kept here: only :meth:`resize` and :meth:`append`
        change it, once the rows are written)."""
        return self._nrows

    def shared(self, owner: int | None = None) -> AbstractContextManager[Any]:
        """Hold the table's lock shared (``owner``: the thread a pool task reads for)."""
        lock = self.lock
        return _NO_LOCK if lock is None else lock.shared(owner)

    def exclusive(self) -> AbstractContextManager[Any]:
        """Hold the table's lock exclusive."""
        lock = self.lock
        return _NO_LOCK if lock is None else lock.exclusive()

    def native(self, records: AnyArray) -> AnyArray:
        """Rows just read (in the file's layout, a buffer of ours) as native values.

        The array itself is returned when it already is native (Time64 cells are decoded
        in place).
        """
        if records.dtype != self.dtype:
            records = records.astype(self.dtype)
        for path in self._time64:
            column = field_of(records, path)
            column[...] = decode_time64(column)
        return records

    def to_file(self, records: AnyArray) -> AnyArray:
        """``records`` as a C-contiguous array in the file's layout (a copy when values
        must be encoded, so the caller's array is never changed)."""
        if not self._time64:
            return np.ascontiguousarray(records, dtype=self.file_dtype)
        data = np.array(records, dtype=self.file_dtype)
        encode_time64_fields(data, self._time64)
        return data

    # ------------------------------------------------------------------ reading
    def read_span(
        self, start: int, stop: int, out: AnyArray | None = None, *, serial: bool = False,
        owner: int | None = None,
    ) -> AnyArray:
        """Rows ``start:stop`` (step 1, within the dataset), in native order.

        ``out``, when given, is a C-contiguous native array of ``stop - start`` rows that the
        rows are read into (returned).  ``serial`` decompresses in the calling thread only
        (for tasks already running in the chunk engine's pool, reading for the thread
        ``owner``).
        """
        with self.shared(owner):
            return self._read_span(start, stop, out, serial)

    def _read_span(
        self, start: int, stop: int, out: AnyArray | None, serial: bool
    ) -> AnyArray:
        count = stop - start
        if count <= 0:
            return _empty(self.dtype) if out is None else out
        if out is None:
            self.check_rows(count, f"rows {start}:{stop}")
        target = out if out is not None and self.dtype == self.file_dtype else None
        box = ((start, stop),)
        if self.engine.serves_read(box):  # Blosc2, or many deflate chunks
            data = self.engine.read_box(box, target, serial=serial)
        else:
            data = self.dataset.read_rows(start, count, 1, target)
        if out is not None and data is not out:
            out[...] = self.native(data)
            return out
        return self.native(data)

    def read_rows(self, start: int, stop: int, step: int) -> AnyArray:
        """Rows of ``range(start, stop, step)`` (normalized, any step but 0), native."""
        rows = range(start, stop, step)
        if len(rows) == 0:
            return _empty(self.dtype)
        if step < 0:
            return self.read_rows(rows[-1], rows[0] + 1, -step)[::-1].copy()
        if step == 1:
            return self.read_span(start, rows[-1] + 1)
        self.check_rows(len(rows), f"rows {start}:{stop}:{step}")
        if step >= self.chunkrows:
            # At most a row per chunk: read as points (HDF5 would visit every chunk
            # between the first row and the last, even those holding none).
            return self.read_points(np.arange(start, stop, step, dtype=np.int64))
        if self._fast:
            out = np.empty(len(rows), dtype=self.dtype)
            filled = 0
            for _first, block in self.blocks(start, rows[-1] + 1, step):
                out[filled : filled + len(block)] = block
                filled += len(block)
            return out
        with self.shared():
            return self.native(self.dataset.read_rows(start, len(rows), step))

    def check_rows(self, count: int, what: str) -> None:
        """Refuse reading ``count`` rows that no machine's memory holds (MemoryError)."""
        check_result_size((count,), self.dtype.itemsize,
                          lambda: f"{what} of {self.dataset.name!r} ({self.nrows} rows)")

    def blocks(self, start: int, stop: int, step: int = 1) -> Iterator[tuple[int, AnyArray]]:
        """Stream rows of ``range(start, stop, step)`` in chunk-aligned blocks.

        Yields ``(first, records)``: the number of the first row of the block and the rows
        (native order, every ``step``-th).  Each block is a fresh array; the next ones are
        read ahead in the chunk engine's pool.
        """
        rows = range(start, stop, step)
        if len(rows) == 0:
            return
        if step < 0:
            for first, block in self._forward_blocks(rows[-1], rows[0] + 1, -step, reverse=True):
                yield first + (len(block) - 1) * -step, block[::-1]
            return
        yield from self._forward_blocks(start, stop, step, reverse=False)

    def _forward_blocks(
        self, start: int, stop: int, step: int, *, reverse: bool
    ) -> Iterator[tuple[int, AnyArray]]:
        spans = self.spans(start, stop, step, reverse=reverse)
        workers = self.engine.workers
        if workers < 2 or self.nspans(start, stop, step) < 2:
            for lo, hi in spans:
                span = self.read_span(lo, hi)
                yield lo, span if step == 1 else span[::step]
            return

        owner = threading.get_ident()  # the pool reads for the caller

        def task(lo: int, hi: int) -> tuple[int, AnyArray]:
            span = self.read_span(lo, hi, serial=True, owner=owner)
            return lo, span if step == 1 else span[::step]

        # The next blocks are read in the pool while the caller works on this one.
        yield from in_order(self.engine.pool, task, spans, workers)

    def spans(self, start: int, stop: int, step: int, *, reverse: bool = False
              ) -> Iterator[tuple[int, int]]:
        """The chunk-aligned blocks holding rows ``range(start, stop, step)`` (``step`` > 0).

        Yields ``(lo, hi)`` pairs in row order (the reverse with ``reverse``): ``lo`` is the
        first selected row of the block and ``hi`` the end of the block (or ``stop``: whole
        chunks decode straight into the output).  Blocks with no selected row are jumped
        over: the spans are generated as they are consumed, as many as the blocks holding
        selected rows, whatever the table's extent.
        """
        rows = range(start, stop, step)
        if not rows:
            return
        block = self.block_rows
        first, last = rows[0], rows[-1]
        lo = last if reverse else first  # a selected row, then the next block's
        while first <= lo <= last:
            base = lo // block * block
            end = min(stop, base + block)
            if reverse:
                lo -= (lo - max(first, base)) // step * step  # the first selected >= base
                yield lo, end
                lo -= step
            else:
                yield lo, end
                lo += ((end - 1 - lo) // step + 1) * step  # past the last selected < end

    def nspans(self, start: int, stop: int, step: int) -> int:
        """How many spans :meth:`spans` yields (at most; computed, not counted)."""
        rows = range(start, stop, step)
        if not rows:
            return 0
        block = self.block_rows
        return min(len(rows), rows[-1] // block - rows[0] // block + 1)

    def map_blocks(
        self,
        start: int,
        stop: int,
        step: int,
        work: Callable[[int, AnyArray], Result],
        parallel_context: Callable[[], AbstractContextManager[Any]] | None = None,
    ) -> Iterator[Result]:
        """``work(first, records)`` for each block of rows ``range(start, stop, step)``.

        The blocks are read and ``work`` runs in the chunk engine's pool, each thread
        reading into a buffer of its own that is reused for its next block: ``records``
        (native, every ``step``-th row from row ``first``) is only valid during the call,
        so ``work`` must return what it keeps as new objects.  The results come in row
        order; a few blocks are worked on ahead of the one being consumed.

        Parameters
        ----------
        start, stop, step : int
            The rows (``step`` > 0).
        work : callable
            Called as ``work(first, records)``, possibly in another thread: it must be
            thread-safe.
        parallel_context : callable, optional
            Returns a context manager entered while blocks are worked on in parallel
            (e.g. to make ``work``'s own library single-threaded).

        Returns
        -------
        Iterator
            The results of ``work``, block after block.
        """
        spans = self.spans(start, stop, step)
        workers = self.engine.workers
        if workers < 2 or self.nspans(start, stop, step) < 2:
            buffer = np.empty(0, dtype=self.dtype)
            for lo, hi in spans:
                if len(buffer) < hi - lo:
                    buffer = np.empty(hi - lo, dtype=self.dtype)
                records = self.read_span(lo, hi, buffer[: hi - lo])
                yield work(lo, records if step == 1 else records[::step])
            return
        buffers = threading.local()
        owner = threading.get_ident()  # the pool reads for the caller

        def task(lo: int, hi: int) -> Result:
            buffer = getattr(buffers, "records", None)
            if buffer is None or len(buffer) < hi - lo:
                buffer = buffers.records = np.empty(self.block_rows, dtype=self.dtype)
            records = self.read_span(lo, hi, buffer[: hi - lo], serial=True, owner=owner)
            return work(lo, records if step == 1 else records[::step])

        with contextlib.ExitStack() as stack:
            if parallel_context is not None:
                stack.enter_context(parallel_context())
            yield from in_order(self.engine.pool, task, spans, 2 * workers)

    def stored_runs(self, start: int, stop: int) -> list[tuple[int, int]] | None:
        """The runs of rows of ``start:stop`` that lie in chunks written to the file, when
        those hold at most half of its chunks; None otherwise (or when the dataset has no
        chunk index), for scans to read everything.

        Every other row reads as the dataset's fill value: a scan may evaluate one of them
        and skip the rest (a damaged extent of 2**40 rows over a few written chunks is then
        scanned in the time its chunks take).
        """
        rows = self.chunkrows
        first, last = start // rows, (stop - 1) // rows
        if stop <= start or last - first < 64 or self.dataset.chunks is None:
            return None
        try:
            with self.shared():
                written = self.dataset.raw_chunks().index().coords[:, 0]
        except (ValueError, OSError):  # not chunked after all, or no index to read
            return None
        chunks = written[(written >= first) & (written <= last)]
        if 2 * len(chunks) > last - first + 1:
            return None
        breaks = np.flatnonzero(np.diff(chunks) != 1) + 1
        return [(max(start, int(part[0]) * rows), min(stop, (int(part[-1]) + 1) * rows))
                for part in np.split(chunks, breaks) if len(part)]

    def written_runs(self, start: int, stop: int
                     ) -> tuple[list[tuple[int, int]], AnyArray] | None:
        """:meth:`stored_runs` of ``start:stop`` and a record of the fill value that the
        other rows read as; None when most of the range's chunks are written."""
        runs = self.stored_runs(start, stop)
        if runs is None:
            return None
        gap = start if not runs or runs[0][0] > start else runs[0][1]
        if gap >= stop:
            return None
        return runs, self.read_span(gap, gap + 1)

    def read_points(self, coords: AnyArray) -> AnyArray:
        """Rows at ``coords`` (int64, within the dataset, any order, repeats allowed)."""
        if len(coords) == 0:
            return _empty(self.dtype)
        inverse = None
        unique = coords.astype(np.int64, copy=False)
        if len(unique) > 1 and not (unique[1:] > unique[:-1]).all():
            unique, inverse = np.unique(unique, return_inverse=True)
        with self.shared():
            if self._fast:
                # Only the Blosc2 blocks holding the rows are decoded (read_points).
                found = self.native(self.engine.read_points(unique))
            else:
                found = self.native(self._points_from_hdf5(unique))
        return found if inverse is None else found[inverse]

    def _span_pays(self, rows: AnyArray, span: int) -> bool:
        """Whether reading the ``span`` bytes around sorted ``rows`` costs less than
        reading the rows (:data:`SPAN_BYTES_PER_RUN`)."""
        if span > SPAN_POINTS_MAX_BYTES:
            return False
        raw = None if self.dataset.chunks is None else self.dataset.raw_chunks()
        preads = raw is not None and raw.uses_pread and not raw.nfilters
        if len(rows) > PREAD_POINTS_MAX or not preads:
            return span <= SPAN_BYTES_PER_POINT * (len(rows) - PREAD_POINTS_MAX)
        if len(rows) <= SPAN_FIXED_COUNT:
            return False
        runs = 1 + int(np.count_nonzero(np.diff(rows) != 1))
        return span <= SPAN_BYTES_PER_RUN * (runs - SPAN_FIXED_COUNT)

    def _points_from_hdf5(self, rows: AnyArray) -> AnyArray:
        """Rows at sorted, unique ``rows`` of a table without Blosc2, in the file's layout:
        taken from the span they lie in where that is cheaper
        (:data:`SPAN_BYTES_PER_RUN`), else read as points."""
        lo, hi = int(rows[0]), int(rows[-1]) + 1
        if not self._span_pays(rows, (hi - lo) * self.file_dtype.itemsize):
            return self.dataset.read_points(rows)
        box = ((lo, hi),)
        if self.engine.serves_read(box):  # many deflate chunks
            data = self.engine.read_box(box, None)
        else:
            data = self.dataset.read_rows(lo, hi - lo, 1, None)
        return data[rows - lo]

    # ------------------------------------------------------------------ writing
    def write_span(self, start: int, records: AnyArray) -> None:
        """Write ``records`` at rows ``start:start+len(records)`` (within the dataset)."""
        if len(records) == 0:
            return
        data = self.to_file(records)
        with self.exclusive():
            if self._fast:
                write_selection(self.dataset, slice(start, start + len(data)), data,
                                self.engine)
            else:
                self.dataset.write_rows(start, data)

    def append(self, records: AnyArray) -> None:
        """Add native ``records`` after the stored rows (the dataset keeps its rows if
        this fails).  :attr:`nrows` counts them once they are written."""
        with self.exclusive():
            start = self._nrows
            if self._fast:
                self.dataset.resize((start + len(records),))
                try:
                    self.write_span(start, records)
                except BaseException:
                    self.resize(start)
                    raise
            else:
                self.dataset.append_rows(start, self.to_file(records))
            self._nrows = start + len(records)

    def write_points(self, coords: AnyArray, records: AnyArray) -> None:
        """Write native ``records[i]`` at row ``coords[i]`` (the last one wins for repeated
        rows)."""
        if len(coords) == 0:
            return
        # Keep the last write of each row, in row order.
        order = np.argsort(coords, kind="stable")
        sorted_coords = coords[order]
        last = np.append(sorted_coords[1:] != sorted_coords[:-1], True)
        coords, records = sorted_coords[last], np.asarray(records)[order][last]
        with self.exclusive():
            if not self._fast:
                self.dataset.write_points(coords, self.to_file(records))
                return
            # Blosc2: update the span of each chunk touched (native values; write_span
            # encodes).
            chunk_of = coords // self.chunkrows
            bounds = np.flatnonzero(np.diff(chunk_of)) + 1
            for part in np.split(np.arange(len(coords)), bounds):
                lo, hi = int(coords[part[0]]), int(coords[part[-1]]) + 1
                span = self.read_span(lo, hi)
                span[coords[part] - lo] = records[part]
                self.write_span(lo, span)

    def resize(self, nrows: int) -> None:
        """Set the number of rows stored in the dataset."""
        with self.exclusive():
            self.dataset.resize((nrows,))
            self._nrows = nrows


__all__ = ["BLOCK_BYTES", "RecordIO"]

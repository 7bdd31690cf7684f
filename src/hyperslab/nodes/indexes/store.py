"""The index of one table column, in PyTables' own layout (:class:`ColumnIndex`).

The layout is PyTables' (:mod:`hyperslab.nodes.indexes.layout`): the column's values cut into
slices, each sorted, with where each value is (its row, or its bucket of rows), and small
caches of each slice's range and chunk bounds.  PyTables opens, queries, updates, dirties
and rebuilds what is written here, and hyperslab uses what PyTables writes: whichever
library changes the table keeps the index in step or marks it dirty, so neither answers
from a stale index.

**Building.** The column is sorted once, out of core (:mod:`hyperslab.nodes.indexes.sort`),
and the sorted values fill the slices in order, which makes the slices as disjoint as the
kind allows: a full index is completely sorted (a CSI) at every ``optlevel``; a medium one
is too, apart from its last, partial slice (which must hold the table's last rows); a
light one within each block of slices; an ultralight one within each slice.  PyTables'
optimizer gets there (or part of the way) by swapping chunks between slices, slowly;
sorting first gets there directly.

**Lookups.** An interval of values is searched in every slice whose range meets it: the
slice's chunk bounds (all of them read once) give the chunk, one read of that chunk the
position.  Full indexes then give the rows; the lighter kinds the buckets of
:attr:`~hyperslab.nodes.indexes.sizes.Geometry.lbucket` rows that hold them, whose rows the
query then reads and tests (as PyTables does).

**Changes** follow PyTables' ``Index.append`` / ``append_last_row``: rows appended to the
table go to new slices once a slice is full, the last slice is sorted again from the
table, and a full index keeps the entries of its last slice.  Nothing extra is stored:
what hyperslab keeps to go faster lives in memory, per :class:`ColumnIndex` object, and is
dropped with it.
"""

from __future__ import annotations

import math
import operator
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.codecs.filters import Filters
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.indexes.layout import (
    count_overlaps,
    decode_buckets,
    index_path,
)
from hyperslab.nodes.indexes.sizes import (
    Geometry,
)
from hyperslab.nodes.indexes.state import State, malformed, open_array, read_state
from hyperslab.nodes.indexes.writer import SliceWriter
from hyperslab.nodes.tree.group import Group
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree

if TYPE_CHECKING:
    from hyperslab.nodes.indexes.source import IndexedColumn, TableSource

Run = tuple[int, int, int]
"""``(slice, start, stop)``: entries ``start .. stop - 1`` of a slice (the last, partial
slice is number :attr:`ColumnIndex.nslices`), in positions of ``indices``."""

TABLE_ADDRESS = "HS_TABLE_ADDRESS"
"""An attribute hyperslab adds to the indexes it builds (PyTables ignores it): the file
address of the table's object header.  An index found beside a table that is not the one
it was built for (another program renamed that table without its indexes and gave the name
to a new one) is then never used."""

_CACHED_CHUNKS = 16  # sorted chunks kept per index object


# ---------------------------------------------------------------------- the index
class ColumnIndex:
    """The index of one table column, in PyTables' layout (see the module docstring).

    Build one with :func:`~hyperslab.nodes.indexes.build.build_index`; :func:`open_index`
    finds one.  :meth:`search` turns an interval of values into runs of entries,
    :meth:`candidate_rows` turns runs into the table rows to test.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> from hyperslab.nodes.indexes.build import build_index
    >>> path = os.path.join(tempfile.mkdtemp(), "indexed.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     t = f.create_table("/", "t", np.dtype([("x", "f8")]))
    ...     t.append(np.array([(3.0,), (np.nan,), (1.0,), (2.0,)], dtype=t.dtype))
    ...     index = build_index(t, "x", kind="full")
    ...     runs = index.search(np.float64(1.5), True, None, False)
    ...     print(index, index.candidate_rows(runs), index.read_sorted(0, 4))
    Index(6, full, shuffle, zlib(1)).is_csi=True [0 3] [ 1.  2.  3. nan]
    """

    def __init__(self, table: TableSource, colpath: str, gid: Any, path: str) -> None:
        self._table = table
        self._colpath = colpath
        self._gid = gid
        self._v_pathname = path
        self._lock = threading.RLock()  # queries may run in several threads
        self._load()

    def _load(self) -> None:
        """(Re)read the state and open the arrays."""
        state, arrays = read_state(self._gid, self._v_pathname, self._table_chunkrows())
        kept = self._table._v_file._guard.kept_dirty(self._gid)
        if kept is not None:  # shown dirty in the file only while this session changes it
            state = state._replace(dirty=kept)
        self._state = state
        self._arrays = arrays
        self._ranges_: AnyArray | None = None
        self._bounds_: AnyArray | None = None
        self._lr_bounds_: AnyArray | None = None
        self._agrees: bool | None = None  # see _edges_agree
        self._chunks: OrderedDict[tuple[int, int], AnyArray] = OrderedDict()
        try:
            address = raw.read_int_attribute(self._gid, TABLE_ADDRESS)
        except (KeyError, TypeError):
            self._foreign = False
        else:
            self._foreign = address != tree.object_address(self._table._g_h5id)

    def _table_chunkrows(self) -> int:
        chunks = self._table.chunkshape
        return int(chunks[0]) if chunks else 1

    # ------------------------------------------------------------------ metadata
    @property
    def table(self) -> TableSource:
        """The indexed table."""
        return self._table

    @property
    def colpath(self) -> str:
        """The path name of the indexed column."""
        return self._colpath

    @property
    def path(self) -> str:
        """Where the index is in the file."""
        return self._v_pathname

    @property
    def state(self) -> State:
        """What the index said of itself when it was last read."""
        return self._state

    @property
    def _v_version(self) -> str:
        """The index format version, as PyTables reports it (its ``VERSION``: ``'2.1'``,
        or ``'2.0'`` for indexes of PyTables Pro 2.0)."""
        return self._state.version

    @property
    def geometry(self) -> Geometry:
        """Its sizes."""
        return self._state.geometry

    @property
    def kind(self) -> str:
        """``'ultralight'``, ``'light'``, ``'medium'`` or ``'full'``."""
        return self._state.geometry.kind

    @property
    def optlevel(self) -> int:
        """The optimization level it was built with (0 to 9)."""
        return self._state.optlevel

    @property
    def exact(self) -> bool:
        """Whether it locates rows (full) rather than buckets of rows."""
        return self._state.geometry.indsize == 8

    @property
    def nslices(self) -> int:
        """Full slices (the last, partial one not counted)."""
        return self._state.nslices

    @property
    def nelements(self) -> int:
        """Rows indexed (rows ``0 .. nelements - 1`` of the table)."""
        return self._state.nelements

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the indexed values (native byte order)."""
        return self._arrays.sorted.dtype

    @property
    def filters(self) -> Filters:
        """The compression of the index (its group's ``FILTERS``)."""
        if raw.has_attribute(self._gid, "FILTERS"):
            return Filters._unpack(raw.read_int_attribute(self._gid, "FILTERS"))
        return Filters()

    @property
    def dirty(self) -> bool:
        """Whether the index may not match the column (its ``DIRTY`` attribute)."""
        return self._state.dirty

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self._table._g_check_writable()
        file = self._table._v_file
        # While this session changes the index, the file shows it dirty until it is closed
        # (flushguard.py, rule 4): the real value is written then.
        if not file._guard.set_kept_dirty(self._gid, bool(value)):
            raw.write_int_attribute(self._gid, "DIRTY", int(bool(value)), "int32")
        self._state = self._state._replace(dirty=bool(value))

    @property
    def stale(self) -> bool:
        """Whether the table's row count differs from the rows indexed (rows appended or
        removed by a program that left the index as it was)."""
        return self.nelements != self._table.nrows

    @property
    def foreign(self) -> bool:
        """Whether hyperslab built the index for another table (see
        :data:`TABLE_ADDRESS`)."""
        return self._foreign

    @property
    def current(self) -> bool:
        """Whether queries and sorted reads may use the index: neither :attr:`dirty` nor
        :attr:`stale` nor :attr:`foreign`."""
        return not self._state.dirty and not self.stale and not self._foreign

    @property
    def searchable(self) -> bool:
        """Whether lookups can trust the order of its slices: not for half floats, which
        PyTables sorts by their bit patterns (negative values and NaNs out of order), in
        slices it builds or appends to any index; not for an index whose slice edges
        disagree with each other (a damaged file: queries scan instead)."""
        return self.dtype != np.float16 and self._edges_agree()

    def _edges_agree(self) -> bool:
        """Whether each slice's ``ranges`` and ``bounds`` are the first values of its
        chunks that ``abounds`` and ``zbounds`` hold too, in order (three arrays written
        apart from each other: damage to one shows; checked once)."""
        agrees = self._agrees
        if agrees is None:
            agrees = self._agrees = self._check_edges()  # HDF5ExtError if arrays are missing
        return agrees

    def _check_edges(self) -> bool:
        nslices = self.nslices
        if not nslices:
            return True
        geometry = self.geometry
        per_slice = geometry.slicesize // geometry.chunksize
        ranges, bounds = self._ranges(), self._bounds()
        starts = open_array(self._gid, self._v_pathname, "abounds", False)
        ends = open_array(self._gid, self._v_pathname, "zbounds", False)
        if min(len(starts), len(ends)) < nslices * per_slice:
            return False
        firsts = starts.read(0, nslices * per_slice).reshape(nslices, per_slice)
        lasts = ends.read(0, nslices * per_slice).reshape(nslices, per_slice)
        # Per slice: first and last value of each chunk, then the slice's last value.
        walk = np.empty((nslices, 2 * per_slice + 1), dtype=firsts.dtype)
        walk[:, 0:-1:2], walk[:, 1:-1:2], walk[:, -1] = firsts, lasts, ranges[:, 1]
        nan = walk.dtype.kind in "fc"
        return bool(np.array_equal(firsts[:, 0], ranges[:, 0], equal_nan=nan)
                    and np.array_equal(firsts[:, 1:], bounds, equal_nan=nan)
                    and np.array_equal(np.sort(walk, axis=1), walk, equal_nan=nan))

    @property
    def is_csi(self) -> bool:
        """Whether the index is completely sorted (PyTables' rules: only full indexes,
        its ``is_csi`` attribute when there is one, else no slice overlaps the next)."""
        if self.nelements == 0 or not self.exact:
            return False
        if raw.has_attribute(self._gid, "is_csi"):
            return bool(raw.read_attribute(self._gid, "is_csi"))
        return self.overlaps() == 0

    def overlaps(self) -> int:
        """How many pairs of slices overlap (PyTables' ``compute_overlaps``)."""
        return count_overlaps(self._all_ranges())

    @property
    def size_on_disk(self) -> int:
        """Bytes the index's arrays take in the file."""
        group = self._table._v_file.get_node(self._v_pathname)
        assert isinstance(group, Group)
        return sum(int(getattr(child, "size_on_disk", 0)) for child in group._f_iter_nodes())

    # ------------------------------------------------------------------ lookups
    def _ranges(self) -> AnyArray:
        """``ranges`` of the full slices (read once)."""
        ranges = self._ranges_
        if ranges is None:
            matrix = open_array(self._gid, self._v_pathname, "ranges", True)
            if matrix.shape[0] < self.nslices or matrix.shape[1] != 2:
                raise malformed(self._v_pathname, f"'ranges' of shape {matrix.shape} for "
                                                  f"{self.nslices} slices")
            ranges = self._ranges_ = matrix.read_rows(0, self.nslices)
        return ranges

    def _bounds(self) -> AnyArray:
        """``bounds`` of the full slices (read once)."""
        bounds = self._bounds_
        if bounds is None:
            matrix = open_array(self._gid, self._v_pathname, "bounds", True)
            nbounds = self.geometry.nbounds
            if matrix.shape[0] < self.nslices or matrix.shape[1] != nbounds:
                raise malformed(self._v_pathname, f"'bounds' of shape {matrix.shape} for "
                                                  f"{self.nslices} slices of {nbounds} "
                                                  f"bounds")
            bounds = self._bounds_ = matrix.read_rows(0, self.nslices)
        return bounds

    def _lr_bounds(self) -> AnyArray:
        """The last row's first value, chunk bounds and last value (after its values in
        ``sortedLR``)."""
        bounds = self._lr_bounds_
        if bounds is None:
            nslr = self._state.nelements_slr
            bounds = self._lr_bounds_ = self._arrays.sorted_lr.read(
                nslr, nslr + self.geometry.last_row_edges(nslr))
        return bounds

    def _all_ranges(self) -> AnyArray:
        """First and last value of every slice, the last row's too."""
        ranges = self._ranges()
        if self._state.nelements_slr:
            lr = self._lr_bounds()
            ranges = np.concatenate([ranges, np.array([[lr[0], lr[-1]]], dtype=ranges.dtype)])
        return ranges

    def _chunk(self, slice_no: int, number: int) -> AnyArray:
        """Chunk ``number`` of the sorted values of slice ``slice_no`` (cached)."""
        key = (slice_no, number)
        with self._lock:
            chunk = self._chunks.get(key)
            if chunk is not None:
                self._chunks.move_to_end(key)
                return chunk
        rcs = self.geometry.rchunksize
        start = number * rcs
        if slice_no < self.nslices:
            chunk = self._arrays.sorted.read_row(
                slice_no, start, min(start + rcs, self.geometry.rslicesize))
        else:
            chunk = self._arrays.sorted_lr.read(start, min(start + rcs,
                                                           self._state.nelements_slr))
        with self._lock:
            self._chunks[key] = chunk
            while len(self._chunks) > _CACHED_CHUNKS:
                self._chunks.popitem(last=False)
        return chunk

    def _slices(self) -> Iterator[tuple[int, Any, Any, AnyArray, int]]:
        """``(slice, first, last, chunk bounds, sorted length)`` of every slice with
        values, the last row last."""
        if self.nslices:
            ranges, bounds = self._ranges(), self._bounds()
            rss = self.geometry.rslicesize
            for number in range(self.nslices):
                yield number, ranges[number, 0], ranges[number, 1], bounds[number], rss
        nslr = self._state.nelements_slr
        if nslr:
            lr = self._lr_bounds()
            yield self.nslices, lr[0], lr[-1], lr[1:-1], nslr

    def _position(self, slice_no: int, first: Any, last: Any, bounds: AnyArray,
                  length: int, value: AnyArray, side: Any) -> int:
        """``searchsorted(sorted values of the slice, value, side)``, reading at most one
        chunk (NaNs sort last, as in both libraries)."""
        where = int(np.searchsorted(np.array([first, last], dtype=self.dtype), value, side))
        if where == 0:
            return 0
        if where == 2:
            return length
        number = int(np.searchsorted(bounds, value, side))
        chunk = self._chunk(slice_no, number)
        return number * self.geometry.rchunksize + int(np.searchsorted(chunk, value, side))

    def _full_run(self, slice_no: int, start: int, stop: int) -> Run:
        """A run of sorted positions of a slice as a run of its entries: with a reduction
        r, a sorted value stands for r entries, so the run widens to every entry that may
        lie between the values found (PyTables' ``get_chunkmap``)."""
        reduction = self.geometry.reduction
        length = (self.geometry.slicesize if slice_no < self.nslices
                  else self._state.nelements_ilr)
        if reduction > 1:
            start = 0 if start == 0 else (start - 1) * reduction + 1
            stop = stop * reduction
        return slice_no, min(start, length), min(stop, length)

    def _bound(self, value: Any) -> AnyArray:
        if value is None:
            return np.empty(0)
        bound = np.asarray(value)
        if bound.ndim or (bound.dtype != self.dtype and not (
                bound.dtype.kind == "S" and self.dtype.kind == "S")):
            raise TypeError(f"index bounds of column {self._colpath!r} must be scalars of "
                            f"its dtype {self.dtype}, not {value!r:.80}")
        return bound

    def search(self, lo: Any, lo_inclusive: bool, hi: Any, hi_inclusive: bool
               ) -> list[Run]:
        """The runs of entries whose value ``v`` may satisfy ``v > lo`` (``>=`` if
        ``lo_inclusive``) and ``v < hi`` (``<=`` if ``hi_inclusive``), NaN excluded.

        ``lo`` or ``hi`` None is unbounded on that side; a NaN bound matches nothing.
        Bounds are NumPy scalars of the column's dtype (bytes for string columns).
        Exactly those entries without a reduction; with one, a few more on each side.

        Raises
        ------
        TypeError
            If a bound is not a scalar of the column's dtype.
        """
        low, high = self._bound(lo), self._bound(hi)
        if any(b.dtype.kind == "f" and np.isnan(b) for b in (low, high) if b.size):
            return []  # nothing compares with NaN
        nan = np.array(np.nan, dtype=self.dtype) if self.dtype.kind == "f" else None
        runs = []
        for number, first, last, bounds, length in self._slices():
            args = (number, first, last, bounds, length)
            start = 0 if lo is None else self._position(
                *args, low, "left" if lo_inclusive else "right")
            if hi is not None:
                stop = self._position(*args, high, "right" if hi_inclusive else "left")
            elif nan is not None:
                stop = self._position(*args, nan, "left")
            else:
                stop = length
            if stop > start or (self.geometry.reduction > 1 and stop >= start):
                run = self._full_run(number, start, stop)
                if run[2] > run[1]:
                    runs.append(run)
        return runs

    def nan_runs(self) -> list[Run]:
        """The runs of entries that may hold NaN (none for other than float columns)."""
        if self.dtype.kind != "f":
            return []
        nan = np.array(np.nan, dtype=self.dtype)
        runs = []
        for number, first, last, bounds, length in self._slices():
            start = self._position(number, first, last, bounds, length, nan, "left")
            # With a reduction, NaNs may follow the last value kept: the run widens.
            run = self._full_run(number, start, length)
            if run[2] > run[1]:
                runs.append(run)
        return runs

    @staticmethod
    def entries(runs: list[Run]) -> int:
        """How many entries ``runs`` hold."""
        return sum(stop - start for _, start, stop in runs)

    def _read_entries(self, slice_no: int, start: int, stop: int) -> AnyArray:
        if slice_no < self.nslices:
            return self._arrays.indices.read_row(slice_no, start, stop)
        return self._arrays.indices_lr.read(start, stop)

    def candidate_rows(self, runs: list[Run], limit: int | None = None) -> AnyArray:
        """The table rows (sorted, unique int64) that the entries of ``runs`` locate: their
        rows (full indexes) or every row of their buckets (the other kinds); with
        ``limit``, at most that many entries are read (a sample)."""
        nrows = self._table.nrows
        parts = []
        left = math.inf if limit is None else limit
        for slice_no, start, stop in runs:
            stop = int(min(stop, start + left))
            if stop <= start:
                break
            left -= stop - start
            entries = self._read_entries(slice_no, start, stop)
            if self.exact:
                parts.append(entries.astype(np.int64))
            else:
                parts.append(decode_buckets(entries, slice_no, self.geometry))
        if not parts:
            return np.empty(0, dtype=np.int64)
        found = sorted_unique(np.concatenate(parts))
        if self.exact:
            return found[(found >= 0) & (found < nrows)]
        return _bucket_rows(found, self.geometry.lbucket, nrows)

    # ------------------------------------------------------------------ sorted order
    @staticmethod
    def _global_runs(start: int, stop: int, width: int) -> Iterator[Run]:
        """Positions ``start .. stop - 1`` of the index's order (slices of ``width``
        positions, then the last row), as runs within slices."""
        position = start
        while position < stop:
            slice_no, offset = divmod(position, width)
            end = min(stop, (slice_no + 1) * width)
            yield slice_no, offset, offset + end - position
            position = end

    def _check_positions(self, start: int, stop: int) -> tuple[int, int]:
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= self.nelements:
            raise IndexError(f"positions {start}..{stop} are not a range within the "
                             f"{self.nelements} entries of the index of {self._colpath!r}")
        return start, stop

    def indices_at(self, start: int, stop: int) -> AnyArray:
        """What ``indices`` holds at positions ``start .. stop - 1`` of the index's order
        (slices, then the last row): rows, for a full index.

        Raises
        ------
        HDF5ExtError
            If the index is malformed: a full index holding a row outside the table.
        """
        start, stop = self._check_positions(start, stop)
        parts = [self._read_entries(*run)
                 for run in self._global_runs(start, stop, self.geometry.slicesize)]
        if not parts:
            return np.empty(0, dtype=self._arrays.indices.dtype)
        entries = np.concatenate(parts)
        if self.exact:  # rows: each must be one of the table's (checked per batch)
            nrows = self._table.nrows
            outside = (entries < 0) | (entries >= nrows)
            if outside.any():
                raise malformed(self._v_pathname, f"its indices hold row "
                                f"{int(entries[outside][0])}, outside the table's {nrows} rows")
        return entries

    @property
    def nsorted(self) -> int:
        """Sorted values kept (one in ``reduction`` of the entries of each slice)."""
        return self.nslices * self.geometry.rslicesize + self._state.nelements_slr

    def sorted_at(self, start: int, stop: int) -> AnyArray:
        """The sorted values kept at positions ``start .. stop - 1`` (slices, then the last
        row; with a reduction, positions of the kept values)."""
        rss = self.geometry.rslicesize
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= self.nsorted:
            raise IndexError(f"positions {start}..{stop} are not a range within the "
                             f"{self.nsorted} sorted values of the index of "
                             f"{self._colpath!r}")
        parts = [self._arrays.sorted.read_row(slice_no, first, end)
                 if slice_no < self.nslices else self._arrays.sorted_lr.read(first, end)
                 for slice_no, first, end in self._global_runs(start, stop, rss)]
        return np.concatenate(parts) if parts else np.empty(0, dtype=self.dtype)

    # ------------------------------------------------------------------ PyTables' API
    @property
    def column(self) -> IndexedColumn:
        """The indexed column (a :class:`~hyperslab.nodes.tables.columns.Column`)."""
        return self._table._indexable_column(self._colpath)

    @property
    def slicesize(self) -> int:
        """Entries per slice."""
        return self.geometry.slicesize

    @property
    def chunksize(self) -> int:
        """Entries per chunk of a slice."""
        return self.geometry.chunksize

    @property
    def blocksize(self) -> int:
        """Entries per block of slices."""
        return self.geometry.blocksize

    @property
    def superblocksize(self) -> int:
        """Entries per superblock."""
        return self.geometry.superblocksize

    @property
    def reduction(self) -> int:
        """One sorted value kept for this many entries."""
        return self.geometry.reduction

    @property
    def indsize(self) -> int:
        """Bytes of one entry of ``indices`` (1, 2, 4 or 8)."""
        return self.geometry.indsize

    def read_sorted(self, start: int | None = None, stop: int | None = None,
                    step: int | None = None) -> AnyArray:
        """The sorted values in ``start:stop:step`` (PyTables' ``Index.read_sorted``: a
        ``start`` alone reads one value; a negative ``step`` reads backwards)."""
        return self._read_range(self.sorted_at, self.nsorted, start, stop, step)

    def read_indices(self, start: int | None = None, stop: int | None = None,
                     step: int | None = None) -> AnyArray:
        """What ``indices`` holds in ``start:stop:step`` of the index's order (PyTables'
        ``Index.read_indices``; rows, for a full index)."""
        return self._read_range(self.indices_at, self.nelements, start, stop, step)

    @staticmethod
    def _read_range(read: Any, length: int, start: int | None, stop: int | None,
                    step: int | None) -> AnyArray:
        positions = index_positions(length, start, stop, step)
        if not positions:
            return read(0, 0)
        lo = min(positions[0], positions[-1])
        block = read(lo, max(positions[0], positions[-1]) + 1)
        return block[positions.start - lo :: positions.step]

    def __getitem__(self, key: Any) -> Any:
        """``indices`` at a position (negative counts from the end) or in a slice."""
        if isinstance(key, slice):
            return self.read_indices(key.start, key.stop, key.step)
        position = operator.index(key)
        if position < 0:
            position += self.nelements
        if not 0 <= position < self.nelements:
            raise IndexError(f"position {key} is out of the {self.nelements} entries of "
                             f"the index of {self._colpath!r}")
        return self.indices_at(position, position + 1)[0]

    def __len__(self) -> int:
        return self.nelements

    # ------------------------------------------------------------------ changing
    def _group(self) -> Group:
        group = self._table._v_file.get_node(self._v_pathname)
        assert isinstance(group, Group)
        return group

    def catch_up(self, read: Any, nrows: int) -> None:
        """Index the table's rows ``nelements .. nrows - 1`` as PyTables' ``Index.append``
        and ``append_last_row`` do: each slice they fill is sorted and added, the rest
        becomes the last row (a full index's last row keeps its entries).

        ``read(lo, hi)`` gives the column's values of rows ``lo .. hi - 1``.  The index is
        dirty while it changes, so an interrupted update never leaves a clean but wrong
        index.
        """
        file = self._table._v_file
        file._check_writable()
        state = self._state
        if nrows <= state.nelements:
            return
        geometry = state.geometry
        was_dirty = state.dirty
        self.dirty = True
        writer = SliceWriter(self._group(), geometry, state.nslices)
        first = start = state.nslices * geometry.slicesize
        after_first = False  # PyTables: 'is_csi' is false once a part follows a slice
        while start < nrows:
            stop = min(nrows, start + geometry.slicesize)
            values = np.asarray(read(start, stop))
            rows = np.arange(start, stop, dtype=np.int64)
            if self.exact and state.nelements_ilr and start == first:
                # A full index's last row keeps its entries (they may be any rows).
                kept = state.nelements_ilr
                values[:kept] = self._arrays.sorted_lr.read(0, kept)
                rows[:kept] = self._arrays.indices_lr.read(0, kept).astype(np.int64)
            order = np.argsort(values, kind="stable")
            after_first = after_first or writer.nslices > 0
            writer.fill(writer.nslices, iter([(values[order], rows[order])]))
            writer.finish()
            start = stop
        if after_first:
            raw.write_attribute(writer.gid, "is_csi", np.False_)
        self._load()
        self.dirty = was_dirty

    def remove(self) -> None:
        """Delete the index from the file (the table's ``_i_`` group stays, as in
        PyTables)."""
        file = self._table._v_file
        file._check_writable()
        file.remove_node(self._group(), recursive=True)

    # ------------------------------------------------------------------ reprs
    def __str__(self) -> str:
        filters = self.filters
        parts = []
        if filters.complevel:
            if filters.shuffle:
                parts.append("shuffle")
            if filters.bitshuffle:
                parts.append("bitshuffle")
            parts.append(f"{filters.complib}({filters.complevel})")
        return (f"Index({self.optlevel}, {self.kind}{', ' if parts else ''}"
                f"{', '.join(parts)}).is_csi={self.is_csi}")

    __repr__ = __str__


def sorted_unique(values: AnyArray) -> AnyArray:
    """``np.unique`` of integers, by sorting (NumPy 2's hashing ``unique`` takes 150 ms
    for a million row numbers; a sort 10, and nothing at all when already in order, as
    the rows of a table sorted by its index are).

    Examples
    --------
    >>> sorted_unique(np.array([5, 1, 5, 3])).tolist(), sorted_unique(np.arange(3)).tolist()
    ([1, 3, 5], [0, 1, 2])
    """
    if len(values) < 2:
        return values
    if not (values[1:] >= values[:-1]).all():
        values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values if keep.all() else values[keep]


def _bucket_rows(buckets: AnyArray, lbucket: int, nrows: int) -> AnyArray:
    """Every row (sorted int64) of the buckets ``buckets`` (sorted, unique) of ``lbucket``
    rows, within ``nrows``."""
    buckets = buckets[(buckets >= 0) & (buckets * lbucket < nrows)]
    if not len(buckets):
        return np.empty(0, dtype=np.int64)
    starts = buckets * lbucket
    lengths = np.minimum(starts + lbucket, nrows) - starts
    offsets = np.arange(int(lengths.sum()), dtype=np.int64)
    firsts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets - firsts


# ---------------------------------------------------------------------- finding indexes
def open_index(table: TableSource, colpath: str, *, required: bool = False) -> ColumnIndex | None:
    """The index of column ``colpath`` of ``table``, or None when it has none.

    A group of another class there (PyTables 1.x's ``CINDEX``) is no index.

    Raises
    ------
    HDF5ExtError
        If the index is malformed (or missing, with ``required``).
    """
    path = index_path(table._v_pathname, colpath)
    gid = _open_group(table, path)
    if gid is None or raw.read_string_attribute(gid, "CLASS") != "INDEX":
        if required:
            raise HDF5ExtError(f"no column index at {path}")
        return None
    return ColumnIndex(table, colpath, gid, path)


def _open_group(table: TableSource, path: str) -> Any:
    """The id of the group at ``path``, below the table's parent group (opened without
    nodes), or None."""
    parent = table.parent
    gid = parent._g_h5id
    for part in path[len(parent._v_pathname):].strip("/").split("/"):
        if tree.link_kind(gid, part) is not None:
            return None  # absent, or a soft or external link
        try:
            gid = tree.open_child(gid, part)
        except KeyError:
            return None
        if tree.kind_of_id(gid) is not tree.Kind.GROUP:
            return None
    return gid


def index_positions(length: int, start: int | None, stop: int | None,
                    step: int | None) -> range:
    """The positions of an index's order that PyTables' ``Index.read_indices(start, stop,
    step)`` (and so ``Table.read_sorted``) reads, ``length`` being the entries.

    Not slice rules: a ``start`` alone reads one position, and a negative ``step`` reads
    ``start:stop`` counted from the end, backwards (``step=-1`` gives the positions of
    ``start:stop`` of the descending order).  Bounds are clipped to ``0 .. length``.
    """
    if start is not None and stop is None:
        stop = operator.index(start) + 1
    first = 0 if start is None else operator.index(start)
    end = length if stop is None else operator.index(stop)
    stride = 1 if step is None else operator.index(step)
    if stride == 0:
        raise ValueError("slice step cannot be zero")
    first, end = min(max(first, 0), length), min(max(end, 0), length)
    if first >= end:
        return range(0)
    if stride < 0:
        return range(length - first - 1, length - end - 1, stride)
    return range(first, end, stride)

__all__ = [
    "TABLE_ADDRESS",
    "ColumnIndex",
    "Run",
    "index_positions",
    "open_index",
    "sorted_unique",
]

"""Dataset I/O through h5py: plain (filter-pipeline) reads and writes, rows of 1-D datasets,
extent changes and raw chunks.

A :class:`Dataset` wraps one HDF5 dataset with exactly the operations the upper layers need:
what it is comes from its base, :class:`~hyperslab.storage.datasetinfo.DatasetInfo`; this
module moves the data, hiding the PyTables conventions h5py does not know (booleans stored
as 8-bit ``H5T_BITFIELD``, compound records in their file layout, NUL-terminated strings)
and keeping the raw-chunk bookkeeping of :class:`~hyperslab.storage.rawchunks.RawChunks`
right after every write and resize.  New datasets are made by :mod:`~hyperslab.storage.create`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from h5py import h5d, h5s, h5t, h5z

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import FilterNotAvailableError, HDF5ExtError, NotChunkedError
from hyperslab.storage import compound
from hyperslab.storage.chunkindex import ChunkIndex, ChunkLocation
from hyperslab.storage.datasetinfo import DatasetInfo
from hyperslab.storage.preads import FileAccess, SparseChunk
from hyperslab.storage.rawchunks import RawChunks

_RAW_CHUNKS_LOCK = threading.Lock()
"""Makes the lazy creation of a dataset's :class:`RawChunks` happen once."""

_RAW_POINTS_MAX = 256
"""Rows read by :meth:`Dataset.read_points` with a pread each (unfiltered, read-only)."""


def _row_runs(rows: list[int], per_chunk: int, size: int) -> list[tuple[tuple[int], int, int]]:
    """``(chunk coords, start byte, byte count)`` of every run of consecutive ``rows``
    within one chunk of ``per_chunk`` rows of ``size`` bytes (a sorted table's hits are
    one run).  A plain loop: for the few rows read with a pread each (up to
    :data:`_RAW_POINTS_MAX`) it costs a fifth of NumPy's diffs at 10 rows, less at 256."""
    runs = []
    first = rows[0]
    chunk = first // per_chunk
    count = 1
    for previous, row in itertools.pairwise(rows):
        if row == previous + 1 and row // per_chunk == chunk:
            count += 1
            continue
        runs.append(((chunk,), (first % per_chunk) * size, count * size))
        first, chunk, count = row, row // per_chunk, 1
    runs.append(((chunk,), (first % per_chunk) * size, count * size))
    return runs


class Dataset(DatasetInfo):
    """One HDF5 dataset, as the upper layers see it.

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open low-level dataset.
    access : FileAccess, optional
        How its file is open (:func:`~hyperslab.storage.preads.file_access`), when the
        caller knows it already: else HDF5 is asked when needed.
    """

    __slots__ = ("_raw", "before_lookup", "before_resize")

    def __init__(self, dsid: h5d.DatasetID, access: FileAccess | None = None) -> None:
        super().__init__(dsid, access)
        self.before_resize: Callable[[Shape], None] | None = None
        """Called with the new shape before every change of the extent (``resize``,
        ``append_rows``): the node layer keeps its flush markers with it."""
        self.before_lookup: Callable[[], None] | None = None
        """Given to :attr:`RawChunks.before_lookup` (set it before the first raw-chunk
        call)."""
        # Raw chunk access and the chunk index: made at the first raw-chunk call.
        self._raw: RawChunks | None = None

    # ------------------------------------------------------------------ I/O
    def read(self, key: Any = ()) -> AnyArray:
        """Read a selection h5py understands and return a NumPy array.

        Compound datasets take ``()``, Ellipsis, ints and positive-step slices only, and are
        read in the file type (raw records of the layout dtype).

        Raises
        ------
        HDF5ExtError
            For a damaged dataset: a contiguous one whose storage is smaller than its
            extent, or a strided `key` of one whose extent HDF5 cannot address.
        """
        self._check_storage()
        self._check_selection(key)
        try:
            if self.is_null:
                return np.empty((0,), dtype=self._dtype)
            if self._layout is not None:
                assert self._mtype is not None
                sel = compound.selection_of(key, self.shape)
                return compound.read_selection(self.dsid, self._mtype, self._dtype, sel)
            if compound.is_big_long_complex(self._dtype.base):
                # h5py reads these through a little-endian pair into a big-endian array:
                # read them into a little-endian one, which that pair describes
                data = self._dset.astype(self._dtype.base.newbyteorder("<"))[key]
            else:
                data = self._dset[key]
        except OSError as exc:
            raise _read_error(self, exc) from exc
        array = np.asarray(data)
        if array.dtype.kind == "S" and array.dtype != self._dtype.base:
            array = array.astype(self._dtype.base)  # h5py returns scalar strings as bytes
        if self._bitfield_bool:
            array = array.view(np.bool_)
        elif self._enum_bool:
            array = array.view(np.int8)
        return array

    def write(self, key: Any, value: AnyArray) -> None:
        """Write ``value`` (already of the dataset's dtype and broadcastable) at ``key``."""
        self._check_selection(key, "write")
        if self._layout is not None:
            assert self._mtype is not None
            sel = compound.selection_of(key, self.shape)
            mtype, dtype = self._mtype, self._dtype
            self._guarded_write(
                key, lambda: compound.write_selection(self.dsid, mtype, dtype, sel, value)
            )
            return
        if self._fixed_string is not None:
            self._write_strings(key, value)
            return
        if self._bitfield_bool:
            value = np.asarray(value, dtype=np.bool_).view(np.uint8)
        elif self._enum_bool:
            value = np.asarray(value, dtype=np.int8).view(np.bool_)
        elif compound.is_big_long_complex(self._dtype.base):
            # h5py writes big-endian ones through a little-endian pair: give it that pair
            value = np.asarray(value).astype(self._dtype.base.newbyteorder("<"))
        raw = self._raw
        try:
            self._dset[key] = value
        except OSError as exc:
            if raw is not None:
                raw.invalidate()  # some chunks may have been written
            raise HDF5ExtError(f"cannot write to dataset {self._dset.name!r}: {exc}") from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.written_through_pipeline(key)

    def _write_strings(self, key: Any, value: AnyArray) -> None:
        """Write fixed-length strings in the file's own string type (see ``_init_plain``);
        a key with one list of indices (h5py's fancy selection) is written item by item."""
        ftype = self._fixed_string
        assert ftype is not None
        items = key if isinstance(key, tuple) else (key,)
        lists = [i for i, item in enumerate(items)
                 if isinstance(item, list | np.ndarray) and np.ndim(item) == 1]
        if lists:
            axis = lists[0]
            data = np.asarray(value, dtype=self._dtype)
            along = data.ndim > axis and data.shape[axis] > 1  # else broadcast
            for position, index in enumerate(np.asarray(items[axis]).tolist()):
                part = (*items[:axis], slice(index, index + 1), *items[axis + 1:])
                self._write_strings(part, np.take(data, [position], axis=axis)
                                    if along else data)
            return
        sel = compound.selection_of(key, self.shape)
        self._guarded_write(
            key, lambda: compound.write_selection(self.dsid, ftype, self._dtype, sel, value))

    def write_all(self, value: AnyArray) -> None:
        """Write the whole dataset from ``value`` (of its shape), skipping h5py's selection code."""
        if (self._bitfield_bool or self._enum_bool or self._layout is not None
                or self._fixed_string is not None):
            self.write((), value)
            return
        data = np.ascontiguousarray(value)
        raw = self._raw
        try:
            self.dsid.write(h5s.ALL, h5s.ALL, data, mtype=self._mtype)  # None: h5py's
        except (OSError, TypeError) as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(f"cannot write to dataset {self._dset.name!r}: {exc}") from exc
        if raw is not None:
            raw.written_through_pipeline(())

    # ------------------------------------------------------------------ rows (1-D)
    def _memory_type(self) -> h5t.TypeID:
        """The memory type of row transfers: the file type when no conversion is needed."""
        mtype = self._mtype
        if mtype is None:
            if self._dtype.hasobject or self._layout_error is not None:
                raise TypeError(f"dataset {self.name!r} of dtype {self._dtype} has no raw rows")
            mtype = self._mtype = h5t.py_create(self._dtype)
        return mtype

    def _nrows(self) -> int:
        shape = self.shape
        if len(shape) != 1:
            raise ValueError(f"dataset {self.name!r} of shape {shape} is not 1-D")
        return shape[0]

    def read_rows(
        self, start: int, count: int, step: int = 1, out: AnyArray | None = None
    ) -> AnyArray:
        """Read rows ``start, start + step, ...`` (`count` of them) of a 1-D dataset.

        Parameters
        ----------
        start, count, step : int
            The first row, the number of rows and the distance between them (>= 1).
        out : numpy.ndarray, optional
            A writeable C-contiguous array of :attr:`dtype` and shape ``(count,)`` to read
            into.

        Returns
        -------
        numpy.ndarray
            `out`, or a new array.

        Raises
        ------
        ValueError
            For a bad `out` or a negative `start`/`count`, a `step` below 1, or a dataset
            that is not 1-D.
        IndexError
            If rows beyond the end are asked for.
        """
        sel = compound.rows_selection(start, count, step, self._nrows())
        out = compound.check_out(out, self._dtype, sel.counts[0])
        self._check_storage()
        if step > 1:
            first = sel.starts[0]
            self._check_selection(slice(first, first + sel.counts[0] * step, step))
        try:
            return compound.read_selection(self.dsid, self._memory_type(), self._dtype, sel, out)
        except OSError as exc:
            raise _read_error(self, exc) from exc

    def read_points(self, coords: Any, out: AnyArray | None = None) -> AnyArray:
        """Read the rows at `coords` (int64 row numbers, any order) of a 1-D dataset.

        `out` is as for :meth:`read_rows`, of shape ``(len(coords),)``.

        Raises
        ------
        IndexError
            Naming a coordinate out of range.
        ValueError
            As :meth:`read_rows`.
        """
        nrows = self._nrows()
        points = compound.check_points(coords, nrows)
        out = compound.check_out(out, self._dtype, points.shape[0])
        self._check_storage()
        self._check_points(points, shape=(nrows,))
        if 0 < points.shape[0] <= _RAW_POINTS_MAX and self._raw_points(points, out):
            return out
        if points.shape[0]:
            mspace, fspace = compound.point_spaces(self.dsid, points)
            try:
                self.dsid.read(mspace, fspace, out, mtype=self._memory_type())
            except OSError as exc:
                raise _read_error(self, exc) from exc
        return out

    def read_elements(self, coords: AnyArray) -> AnyArray:
        """The elements at ``coords``, an ``(n, rank)`` array of in-bounds indices, through
        an HDF5 point selection: a 1-D array of ``n`` elements of :attr:`dtype`.

        HDF5 maps a point selection to chunks point by point, where it maps a strided or
        irregular hyperslab by visiting every chunk of its bounding box: points are what
        a few elements spread over a huge extent must be read as.

        Raises
        ------
        TypeError
            For datasets whose elements have no raw memory type (object dtypes).
        """
        points = np.ascontiguousarray(coords, dtype=np.uint64).reshape(len(coords), -1)
        out = np.empty((points.shape[0],), dtype=self._dtype)
        if not points.shape[0]:
            return out
        self._check_storage()
        self._check_points(points)
        fspace = self.dsid.get_space()
        fspace.select_elements(points)
        mspace = h5s.create_simple((points.shape[0],))
        try:
            self.dsid.read(mspace, fspace, out, mtype=self._memory_type())
        except OSError as exc:
            raise _read_error(self, exc) from exc
        return out

    def _raw_points(self, points: AnyArray, out: AnyArray) -> bool:
        """Read a few rows of an unfiltered compound dataset of a read-only file with one
        ``os.pread`` each (its rows are the file type's bytes, which is what HDF5 would
        copy): a few microseconds a row instead of a point selection.  False where that
        does not apply (the caller reads through HDF5)."""
        if self._layout is None or not self.raw_itemsize_matches:
            return False
        chunks = self.chunks
        raw = self._raw if self._raw is not None else (
            self.raw_chunks() if chunks is not None else None)
        if raw is None or not raw.uses_pread or chunks is None or raw.nfilters:
            return False
        data = raw.read_pieces(_row_runs(points.tolist(), chunks[0], self._dtype.itemsize))
        if data is None:
            return False  # e.g. an unwritten chunk (the fill value: HDF5 knows it)
        out.view(np.uint8).reshape(-1)[:] = np.frombuffer(data, dtype=np.uint8)
        return True

    def write_rows(self, start: int, data: Any, step: int = 1) -> None:
        """Write `data` (a 1-D sequence of rows) at rows ``start, start + step, ...``.

        The rows must exist (resize first to append).

        Raises
        ------
        ValueError, IndexError
            As :meth:`read_rows`.
        """
        values = np.asarray(data, dtype=self._dtype)
        if values.ndim != 1:
            raise ValueError(f"rows to write must be 1-D, not of shape {values.shape}")
        sel = compound.rows_selection(start, values.shape[0], step, self._nrows())
        if not values.shape[0]:
            return
        first = sel.starts[0]
        self._check_selection(slice(first, first + values.shape[0] * step, step), "write")
        mtype, dtype = self._memory_type(), self._dtype
        key = slice(sel.starts[0], sel.starts[0] + (sel.counts[0] - 1) * sel.steps[0] + 1, step)
        self._guarded_write(
            key, lambda: compound.write_selection(self.dsid, mtype, dtype, sel, values)
        )

    def write_points(self, coords: Any, data: Any) -> None:
        """Write `data` (broadcast to ``(len(coords),)``) at the rows `coords`.

        Raises
        ------
        IndexError
            Naming a coordinate out of range.
        ValueError
            If `data` does not broadcast, or the dataset is not 1-D.
        """
        points = compound.check_points(coords, self._nrows())
        values = np.asarray(data, dtype=self._dtype)
        try:
            values = np.ascontiguousarray(np.broadcast_to(values, points.shape))
        except ValueError as exc:
            raise ValueError(
                f"cannot write {values.shape} values at {points.shape[0]} points"
            ) from exc
        if not points.shape[0]:
            return
        self._check_points(points, "write")
        mtype = self._memory_type()

        def transfer() -> None:
            mspace, fspace = compound.point_spaces(self.dsid, points)
            self.dsid.write(mspace, fspace, values, mtype=mtype)

        self._guarded_write((points,), transfer)

    def _guarded_write(self, key: Any, transfer: Any) -> None:
        """Run `transfer` (a write at `key`), keeping the raw-chunk bookkeeping right."""
        raw = self._raw
        try:
            transfer()
        except OSError as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(f"cannot write to dataset {self.name!r}: {exc}") from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.written_through_pipeline(key)

    def append_rows(self, start: int, data: AnyArray) -> None:
        """Grow a 1-D dataset to ``start + len(data)`` rows and write ``data`` there.

        The lean path of table appends: ``data`` must be a C-contiguous 1-D array of the
        dataset's dtype.  On failure the dataset keeps its ``start`` rows.

        Raises
        ------
        TypeError
            If ``data`` is not a C-contiguous 1-D array of the dataset's dtype (nothing is
            changed).
        HDF5ExtError
            If HDF5 refuses the resize or the write.
        """
        if (not isinstance(data, np.ndarray) or data.dtype != self._dtype or data.ndim != 1
                or not data.flags.c_contiguous):
            raise TypeError(
                f"rows appended to dataset {self.name!r} must be a C-contiguous 1-D array "
                f"of {self._dtype}, not {getattr(data, 'dtype', type(data).__name__)} of "
                f"shape {getattr(data, 'shape', None)}"
            )
        count = len(data)
        if self.before_resize is not None:
            self.before_resize((start + count,))
        dsid, raw = self.dsid, self._raw
        try:
            dsid.set_extent((start + count,))
            try:
                fspace = dsid.get_space()
                fspace.select_hyperslab((start,), (count,))
                dsid.write(h5s.create_simple((count,)), fspace, data,
                           mtype=self._memory_type())
            except BaseException:
                dsid.set_extent((start,))
                raise
        except OSError as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(
                f"cannot append {count} rows to dataset {self.name!r}: {exc}"
            ) from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.resized((start + count,))
            raw.written_through_pipeline(slice(start, start + count))

    def resize(self, shape: Shape) -> None:
        """Change the current shape (within ``maxshape``)."""
        if self.before_resize is not None:
            self.before_resize(tuple(shape))
        raw = self._raw
        try:
            self._dset.resize(tuple(shape))
        except (OSError, ValueError) as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(
                f"cannot resize dataset {self._dset.name!r} to {tuple(shape)}: {exc}"
            ) from exc
        if raw is not None:
            raw.resized(shape)

    def flush(self) -> None:
        """Flush the dataset's buffers to the file."""
        self._dset.flush()

    # ------------------------------------------------------------------ raw chunks
    # Chunks are named by grid coordinates: chunk numbers, element start // chunkshape.
    # The machinery (index bookkeeping, pread) is in hyperslab.storage.rawchunks.
    def raw_chunks(self) -> RawChunks:
        """The raw-chunk state of this dataset (made at the first call).

        Raises
        ------
        NotChunkedError
            If the dataset is contiguous or compact.
        """
        raw = self._raw
        if raw is None:
            chunks = self.chunks
            if chunks is None:
                raise NotChunkedError(
                    f"dataset {self._dset.name!r} is not chunked, so it has no raw chunks"
                )
            with _RAW_CHUNKS_LOCK:  # threads reading at once must share one index
                raw = self._raw
                if raw is None:
                    raw = RawChunks(self.dsid, chunks, self._creation_plist(),
                                    self._access, self.shape, self._file_itemsize)
                    raw.before_lookup = self.before_lookup
                    self._raw = raw
        return raw

    @property
    def chunk_grid(self) -> Shape:
        """Chunks per dimension: ``ceil(shape / chunks)`` (NotChunkedError if contiguous)."""
        return self.raw_chunks().grid

    def chunk_location(self, grid_coords: Sequence[int]) -> ChunkLocation | None:
        """Where the chunk at ``grid_coords`` is stored, or None if it was never written.

        Exact after any write or resize made through this object.  A chunk written since
        the index was built may cost one HDF5 look-up (then cached).

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        IndexError
            If ``grid_coords`` is outside the current chunk grid.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.location(grid_coords)

    def chunk_is_written(self, grid_coords: Sequence[int]) -> bool:
        """Whether the chunk at ``grid_coords`` was written (O(1), never asks HDF5).

        Raises
        ------
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.is_written(grid_coords)

    def read_raw_chunk(self, grid_coords: Sequence[int]) -> tuple[bytes, int]:
        """The stored (still filtered) bytes and the filter mask of one chunk.

        On a file open read-only with the sec2 driver the bytes are read with ``os.pread``
        at the indexed offset; otherwise with ``read_direct_chunk``.

        Raises
        ------
        NoSuchChunkError
            If the chunk was never written.
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        HDF5ExtError
            If the chunk cannot be read (e.g. a truncated file).
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read(grid_coords)

    def sparse_chunk_looked_up(self, grid_coords: Sequence[int]) -> SparseChunk | None:
        """One chunk's stored bytes as a :class:`SparseChunk` (read where asked for),
        found without building the chunk index, on files open read-only with the sec2
        driver (HDF5 finds the one chunk): for the first reads after opening.  None where
        that does not apply, or for an unwritten chunk (then use :meth:`chunk_is_written`
        and :meth:`read_raw_chunk`).

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.sparse_looked_up(tuple(int(c) for c in grid_coords))

    def sparse_chunk(self, grid_coords: Sequence[int]) -> SparseChunk | None:
        """One chunk's stored bytes as a :class:`SparseChunk` (read where asked for), on
        files open read-only with the sec2 driver, found with HDF5's look-up right after
        opening and in the chunk index after that.  None where that does not apply, or
        for an unwritten chunk.

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.sparse(tuple(int(c) for c in grid_coords))

    def read_raw_chunk_found_by_hdf5(self, grid_coords: tuple[int, ...]
                                     ) -> tuple[bytes, int] | None:
        """The stored bytes and filter mask of one chunk (grid coordinates in the grid),
        found by HDF5 without building the chunk index, on read-only files: for a few
        single items after opening, until such reads would have paid for building the
        index (see :meth:`~hyperslab.storage.preads.PreadReads.read_found_by_hdf5`).

        None where that does not apply (then use :meth:`read_raw_chunk`, which also says
        whether the chunk was written).

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read_found_by_hdf5(grid_coords)

    def read_raw_chunk_into(self, grid_coords: Sequence[int], buffer: Any) -> int | None:
        """Read one chunk's stored bytes straight into ``buffer`` (writable, exactly the
        stored size), on files open read-only with the sec2 driver: no intermediate bytes.

        Returns the filter mask, or None where that fast read does not apply (then use
        :meth:`read_raw_chunk`).
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read_into(tuple(int(c) for c in grid_coords), buffer)

    def read_raw_range(self, grid_coords: Sequence[int], start: int, nbytes: int) -> bytes:
        """``nbytes`` stored bytes of one chunk from byte ``start`` (e.g. one item).

        Meant for unfiltered chunks.  On read-only files only those bytes are read.

        Raises
        ------
        ValueError
            If the range is not inside the chunk's stored bytes.
        NoSuchChunkError, NotChunkedError, IndexError, HDF5ExtError
            As :meth:`read_raw_chunk`.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read_range(grid_coords, start, nbytes)

    def write_raw_chunk(self, grid_coords: Sequence[int], data: Any, filter_mask: int = 0) -> None:
        """Store ``data`` (bytes-like, already filtered) as one chunk, bypassing filters.

        Raises
        ------
        FileModeError
            If the file is open read-only.
        ValueError
            If ``data`` is empty, not contiguous, or (for a chunk stored unfiltered) not
            exactly one chunk of bytes.
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        HDF5ExtError
            If HDF5 refuses the chunk.
        """
        self.raw_chunks().write(grid_coords, data, filter_mask)

    def chunk_index(self) -> ChunkIndex:
        """An exact snapshot of where every written chunk is (see :class:`ChunkIndex`).

        Built with one ``chunk_iter`` pass the first time, then kept current cheaply.
        """
        return self.raw_chunks().index()

    def invalidate_chunk_index(self) -> None:
        """Forget the chunk index (after writes made outside this object); rebuilt lazily."""
        if self._raw is not None:
            self._raw.invalidate()


def _read_error(dataset: Dataset, exc: OSError) -> Exception:
    """Turn an h5py read error into ours, naming a missing filter when that is the cause."""
    for step in dataset.pipeline():
        if not h5z.filter_avail(step.filter_id):
            name = step.name or f"id {step.filter_id}"
            return FilterNotAvailableError(
                f"cannot read dataset {dataset._dset.name!r}: it needs the HDF5 filter "
                f"{name!r} (id {step.filter_id}), which is not available in this installation"
            )
    return HDF5ExtError(f"cannot read dataset {dataset._dset.name!r}: {exc}")

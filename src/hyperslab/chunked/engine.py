"""The chunk engine: reads and writes that bypass HDF5's filter pipeline.

For a dataset whose pipeline is empty or holds only the Blosc2 filter, whole chunks are
moved as raw bytes (``read_direct_chunk``/``os.pread`` and ``write_direct_chunk``) and
(de)compressed here by python-blosc2, in a pool of threads, straight into or out of the
caller's array; deflate (zlib) chunks, shuffled or not, are inflated in the pool too
(:mod:`~hyperslab.codecs.deflate`).  Which datasets and selections qualify is decided up
front (:attr:`ChunkEngine.kind`, :func:`~hyperslab.chunked.regions.box_of`); everything else, and
chunks that are only partly written, take HDF5's path, which keeps its chunk cache for
small, repeated updates.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.chunkwrites import IN_FLIGHT_PER_WORKER, ChunkWrites
from hyperslab.chunked.deferred import run_planned
from hyperslab.chunked.frameaudit import FrameAudit
from hyperslab.chunked.gather import (
    GatherPiece,
    count_key_chunks,
    gather_pieces,
    whole_chunk_of,
)
from hyperslab.chunked.ordered import batches, in_order
from hyperslab.chunked.pointchunks import DecodedBlocks, PointChunk
from hyperslab.chunked.rawkind import RawKind as RawKind
from hyperslab.chunked.rawkind import raw_kind as raw_kind
from hyperslab.chunked.regions import Box, box_of, byte_runs
from hyperslab.chunked.scratch import blocked_scratch, scratch_bytes, scratch_chunk
from hyperslab.codecs import cframe
from hyperslab.codecs.blockshape import choose_blockshape
from hyperslab.codecs.blosc2_filter import Blosc2Params, decode_chunk
from hyperslab.codecs.cframe_region import (
    BIG_BLOCK_BYTES,
    DecodeJob,
    decode_items,
    decode_region,
    frame_blocks,
    load_frame_structure,
)
from hyperslab.codecs.deflate import DeflateError, DeflatePipeline
from hyperslab.errors import HDF5ExtError, NoSuchChunkError
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.preads import SparseChunk

_PARALLEL_MIN_BYTES = 1 << 18
"""Chunks smaller than this are (de)compressed in the calling thread: a task costs more.

Measured here (2 cores): 160 KB chunks read 1.8x faster serially than in the pool, 780 KB
chunks 1.4x faster in the pool."""

DEFERRED_BATCH = 16
"""Chunks decoded in part wait at most this many at a time: the calling thread loads
their blocks' streams, and the decoding (Blosc2 calls that release the GIL) and copying
run in it and one pool task per other worker (:meth:`ChunkEngine._read_deferred`,
:func:`~hyperslab.chunked.deferred.run_planned`), so the loaded streams of this many
chunks are all the memory held.  Measured here right after opening, the slicing
benchmark's array (2 threads): ``a[25]`` of ``(10, 25, 50, 50)`` chunks in ``(1, 13, 50,
50)`` blocks (16 chunks of 2 blocks) 3.8 ms serially, 4.9 ms a pool task a chunk, 3.2 ms
split; ``a[:, 50]`` (8 chunks of 25 or 50 blocks) 10.1 -> 7.9 ms and 7.9 -> 7.0 ms against
a pool task a chunk; ``a[:, :, 50]`` 22.9 -> 20.7 and 19.8 ms."""

_RAW_READ_MIN_BYTES = 1 << 17
"""Boxes of many chunks smaller than this read faster through HDF5's C loop.

Measured here, a 16 MB read (HDF5's default 1 MB chunk cache, cold): 7 KB chunks 27 ms
(HDF5) vs 56 ms (raw path), 39 KB 14 vs 20 ms, 156 KB 10 vs 9.5 ms, 780 KB 10 vs 5 ms."""

_RAW_READ_FEW_CHUNKS = 4
"""Boxes of at most this many chunks always take the raw path (less overhead than HDF5's)."""

_DEFLATE_MIN_CHUNKS, _DEFLATE_MIN_BYTES, _DEFLATE_PARALLEL_MIN_BYTES = 4, 1 << 20, 1 << 14
"""Reads of deflate chunks go through the pool from this many chunks and bytes inflated on
(smaller ones, and single items, keep HDF5's chunk cache for repeated small reads), chunks
from 16 KB on (inflating costs ~10x more per byte than Blosc2 decoding)."""


_SKIP_FIRST_FILTER = 1
"""A chunk's filter mask bit saying the first (here: the only) filter was not applied."""


_POINT_POOL_MIN_CHUNKS = 4
"""Point reads touching fewer chunks decode them in the calling thread (handing a few small
blocks to the pool costs more than it saves, above all right after opening)."""

_POINT_CACHE_BYTES = 64 << 20
"""Stored bytes of the chunks :meth:`ChunkEngine.read_points` keeps parsed (read-only
files)."""


_TASKS_PER_SLOT = 4
"""A gather of many chunks is cut into about this many pool tasks per task in flight (a
task per chunk costs more than reading a chunk's few selected items)."""


class ChunkEngine(ChunkWrites):
    """Raw-chunk reads and writes of one dataset.

    Parameters
    ----------
    dataset : Dataset
        The dataset (its pipeline decides :attr:`kind` once: it cannot change).
    executor : callable
        Returns the thread pool to (de)compress chunks in (created on first use by the owner).
    workers : int
        The pool's number of threads.
    chunk_cache_bytes : int, optional
        The size of HDF5's chunk cache for the dataset.  Partly written chunks bigger than
        that would be decompressed and recompressed by HDF5's single-threaded filter on
        every write; they are read, updated and rewritten here instead.
    """

    def __init__(
        self, dataset: Dataset, executor: Callable[[], Executor], workers: int,
        chunk_cache_bytes: int | None = None,
    ) -> None:
        self._dataset = dataset
        self._chunk_cache_bytes = chunk_cache_bytes
        self._executor = executor
        self._workers = max(1, workers)
        self.kind = raw_kind(dataset)
        chunks = dataset.chunks
        self._chunkshape: Shape = chunks if chunks is not None else ()
        self._dtype = dataset.dtype
        self._itemsize = self._dtype.itemsize
        self._params: Blosc2Params | None = None
        self._encoders: dict[int, cframe.FrameEncoder] = {}
        self._blockshape: Shape | None = None
        self._fill: Any = None
        self._deflate = (DeflatePipeline.from_steps(dataset.pipeline())
                         if self.kind is RawKind.DEFLATE else None)
        if self.kind is RawKind.BLOSC2:
            try:
                self._params = Blosc2Params.from_cd_values(dataset.pipeline()[0].cd_values)
            except ValueError:
                # Filter parameters that do not parse (a damaged file): HDF5's filter
                # decides what they mean, and reports it if nothing.
                self.kind = None
        # b2nd frames of scalar items can be decoded in part (block by block).
        self._partial_decoding = self.kind is RawKind.BLOSC2 and self._dtype.subdtype is None
        # Whether read_int_item serves this dataset: 1-D, of native numbers (a NumPy
        # scalar is then the result as it is), read through the raw path.
        dtype = self._dtype
        self._int_items = (self.kind in (RawKind.PLAIN, RawKind.BLOSC2)
                           and len(self._chunkshape) == 1 and dtype.kind in "biufc"
                           and dtype.isnative and dtype.subdtype is None)
        # Whether read_item still asks HDF5 for its chunk (no chunk index built yet).
        self._items_via_hdf5 = True
        # Parsed frames of chunks read by read_points on read-only files (nothing can change
        # them): repeated point reads (indexed queries) skip the read and the parsing.
        self._frames: OrderedDict[tuple[int, ...], PointChunk] = OrderedDict()
        self._frames_bytes = 0
        self._frames_lock = threading.Lock()
        # Frames HDF5's filter decodes right, for the reads that go through it (Blosc2:
        # made at the first such read, see filter_decodes; single items never need it).
        self._audit: FrameAudit | None = None

    # ------------------------------------------------------------------ helpers
    @property
    def workers(self) -> int:
        """Threads of the pool chunks are (de)compressed in."""
        return self._workers

    def pool(self) -> Executor:
        """The thread pool (created on first use).  Tasks run in it must not wait on other
        tasks of the pool (read with ``serial=True`` there)."""
        return self._executor()

    @property
    def chunk_nbytes(self) -> int:
        """Bytes of one uncompressed chunk."""
        return math.prod(self._chunkshape) * self._itemsize

    def _fill_value(self) -> Any:
        if self._fill is None:
            value = self._dataset.fillvalue()
            self._fill = np.zeros((), dtype=self._dtype)[()] if value is None else value
        return self._fill

    def _new_chunk(self, fill: bool) -> AnyArray:
        if fill:
            return np.full(self._chunkshape, self._fill_value(), dtype=self._dtype)
        return np.empty(self._chunkshape, dtype=self._dtype)

    def _threads(self, nchunks: int) -> tuple[bool, int]:
        """Whether to use the pool, and Blosc2's threads per chunk, for ``nchunks`` chunks."""
        big = self.chunk_nbytes >= (_DEFLATE_PARALLEL_MIN_BYTES if self._deflate
                                    else _PARALLEL_MIN_BYTES)
        if big and nchunks >= self._workers > 1:
            return True, 1
        return False, self._workers if big else 1

    @property
    def blockshape(self) -> Shape:
        """The b2nd block shape of the chunks this engine writes.

        The one set with :meth:`set_blockshape` (at creation), else that of the chunks
        already stored (the first one's frame), else
        :func:`~hyperslab.codecs.blockshape.choose_blockshape`'s for the chunk shape.
        """
        if self._blockshape is None:
            self._blockshape = self._stored_blockshape() or choose_blockshape(
                self._chunkshape, self._itemsize)
        return self._blockshape

    def set_blockshape(self, blockshape: Sequence[int]) -> None:
        """Write the chunks with b2nd blocks of ``blockshape`` (checked by the caller)."""
        self._blockshape = tuple(int(b) for b in blockshape)
        self._encoders.clear()

    def _stored_blockshape(self) -> Shape | None:
        """The block shape of the first stored chunk, if it is a b2nd frame of ours."""
        try:
            index = self._dataset.chunk_index()
            if not index.nwritten:
                return None
            raw, mask = self._dataset.read_raw_chunk(tuple(int(c) for c in index.coords[0]))
            layout = cframe.parse_frame(raw) if not mask else None
        except (cframe.FrameError, HDF5ExtError, NoSuchChunkError, ValueError, OSError):
            return None
        if layout is None or layout.blockshape is None or layout.shape != self._chunkshape:
            return None
        return tuple(layout.blockshape)

    def frame_encoder(self, nthreads: int = 1) -> cframe.FrameEncoder | None:
        """The encoder of the whole chunks this engine writes (None unless Blosc2)."""
        return self._encoder(nthreads) if self.kind is RawKind.BLOSC2 else None

    # ------------------------------------------------------------------ single items
    def item_index(self, key: Any) -> tuple[int, ...] | None:
        """The non-negative index of ``key`` if it selects one element this engine serves.

        ``key`` must be an int (1-D) or a tuple of one int per dimension; anything else,
        and out-of-bounds ints (whose errors the general path words), gives None.
        """
        if self.kind is None or self._deflate is not None:
            return None  # deflate: HDF5's chunk cache serves repeated item reads
        shape = self._dataset.shape
        if type(key) is int:
            if len(shape) != 1:
                return None
            n = shape[0]
            return ((key + n if key < 0 else key),) if -n <= key < n else None
        if type(key) is not tuple or len(key) != len(shape):
            return None
        index = []
        for k, n in zip(key, shape, strict=True):
            if type(k) is not int or not -n <= k < n:
                return None
            index.append(k + n if k < 0 else k)
        return tuple(index)

    def read_item(self, index: tuple[int, ...]) -> Any:
        """Return the element at ``index`` (non-negative, in bounds) through the raw path."""
        chunkshape = self._chunkshape
        if len(index) == 1:
            g, i = divmod(index[0], chunkshape[0])
            grid: tuple[int, ...] = (g,)
            inner: tuple[int, ...] = (i,)
        else:
            pairs = [divmod(i, c) for i, c in zip(index, chunkshape, strict=True)]
            grid = tuple(p[0] for p in pairs)
            inner = tuple(p[1] for p in pairs)
        return self._read_item_at(grid, inner)

    def read_int_item(self, key: int) -> Any:
        """``dataset[key]`` of a 1-D dataset of native numbers (``key`` an int), or None
        where :meth:`item_index` and :meth:`read_item` must answer (another rank or
        dtype, ``key`` out of bounds, a dataset this engine does not serve).

        The shortest path to one element, for loops of single reads: the same read as
        :meth:`read_item`, without the steps that find out what ``key`` is.
        """
        if not self._int_items:
            return None
        n = self._dataset.shape[0]
        if not -n <= key < n:
            return None
        g, i = divmod(key + n if key < 0 else key, self._chunkshape[0])
        return self._read_item_at((g,), (i,))

    def _read_item_at(self, grid: tuple[int, ...], inner: tuple[int, ...]) -> Any:
        """The element at ``inner`` of the chunk at ``grid`` (see :meth:`read_item`)."""
        chunkshape = self._chunkshape
        dataset = self._dataset
        # Right after opening a read-only file, HDF5 finds the chunk (no index built yet)
        # until such reads would have paid for building the index (ski rental).
        found = None
        if self._items_via_hdf5:
            found = dataset.read_raw_chunk_found_by_hdf5(grid)
            if found is None:  # from now on (or for good) the index is the cheaper way
                self._items_via_hdf5 = False
        try:
            if self.kind is RawKind.PLAIN:
                linear = inner[0] if len(inner) == 1 else int(
                    np.ravel_multi_index(inner, chunkshape))
                start = linear * self._itemsize
                if found is not None and start + self._itemsize <= len(found[0]):
                    return np.frombuffer(found[0], dtype=self._dtype, count=1, offset=start)[0]
                try:
                    raw = dataset.read_raw_range(grid, linear * self._itemsize,
                                                 self._itemsize)
                except NoSuchChunkError:
                    raise  # never written: the fill value (below)
                except ValueError as exc:  # fewer stored bytes than a chunk's: damaged
                    # (HDF5 would return whatever its chunk buffer held past them)
                    raise self._corrupt(grid, exc) from exc
                return np.frombuffer(raw, dtype=self._dtype)[0]
            frame, mask = found if found is not None else dataset.read_raw_chunk(grid)
        except NoSuchChunkError:  # np.full, not np.asarray: a subarray fill keeps its shape
            return np.full((), self._fill_value(), dtype=self._dtype)[()]
        if not mask & _SKIP_FIRST_FILTER:
            try:
                return cframe.decode_item(frame, inner, self._dtype, chunkshape=chunkshape)
            except (ValueError, IndexError):
                pass  # a frame decode_item does not vouch for: decoded whole below
        return self._decoded(frame, mask, grid, 1)[inner]  # (an item of a record is a view)

    def _corrupt(self, grid: tuple[int, ...], exc: Exception) -> HDF5ExtError:
        start = tuple(g * c for g, c in zip(grid, self._chunkshape, strict=True))
        return HDF5ExtError(
            f"cannot decode the chunk at {start} of dataset {self._dataset.name!r}: {exc}"
        )

    # ------------------------------------------------------------------ boxes
    def read_box(
        self, box: Box, out: AnyArray | None = None, *, serial: bool = False
    ) -> AnyArray:
        """Read a box of the dataset into ``out`` or a new array of the box's shape.

        ``out``, when given, must be C-contiguous, of the box's shape (items' trailing axes
        included) and of the dataset's dtype: chunks are decoded straight into it.
        ``serial`` decodes every chunk in the calling thread with one Blosc2 thread (for
        callers that already run in the pool's threads).
        """
        key = tuple(slice(start, stop) for start, stop in box)
        return self.read_gather(key, out, serial=serial)

    def read_whole_chunk(self, key: Any) -> AnyArray | None:
        """``dataset[key]`` in a new array where ``key`` selects one Blosc2 chunk exactly
        (:func:`~hyperslab.chunked.gather.whole_chunk_of`: ``arr[c]`` of one image per
        chunk), decoded with Blosc2's threads, no selection planned; else None."""
        found = (whole_chunk_of(key, self._dataset.shape, self._chunkshape)
                 if self.kind is RawKind.BLOSC2 and self._dtype.subdtype is None else None)
        if found is None:
            return None
        out = np.empty(found[1], dtype=self._dtype)
        self._decode_whole(found[0], out.reshape(self._chunkshape), self._threads(1)[1])
        return out

    def read_gather(
        self, h5key: Sequence[Any], out: AnyArray | None = None, *, serial: bool = False
    ) -> AnyArray:
        """Read a planned selection key into ``out`` or a new array.

        ``h5key`` holds per dimension an int, a slice with a positive step or a sorted
        array of unique indices (see :func:`~hyperslab.chunked.gather.gather_pieces`); the
        result has one axis per dimension, an int being an axis of length 1.  Only the
        chunks holding selected items are read, in parallel; of a chunk whose selected
        items lie in a small part of it, only the Blosc2 blocks of that part are
        decompressed (b2nd partial decoding); whole chunks are decoded straight into
        ``out`` (C-contiguous, of the result's shape and the dataset's dtype).  Unwritten
        chunks give the fill value.

        Raises
        ------
        HDF5ExtError
            If a chunk cannot be decoded (it is named).
        """
        shape = self._dataset.shape
        out_shape, pieces = gather_pieces(h5key, shape, self._chunkshape)
        if out is None:
            check_result_size(out_shape, self._itemsize,
                              lambda: f"a selection of {self._dataset.name!r} of shape {shape}")
            out = np.empty(out_shape, dtype=self._dtype)
        listed = isinstance(pieces, list)
        nchunks = (len(pieces) if isinstance(pieces, list)
                   else count_key_chunks(h5key, shape, self._chunkshape))
        use_pool, nthreads = (False, 1) if serial else self._threads(nchunks)
        if (use_pool and isinstance(pieces, list) and self._partial_decoding
                and not any(piece.full_chunk for piece in pieces)):
            self._read_deferred(pieces, out)
        elif use_pool and listed and self._deflate is None:
            executor = self._executor()
            for future in [executor.submit(self._read_piece, p, out, 1) for p in pieces]:
                future.result()
        elif use_pool:
            # Many chunks: the pieces are planned as they are submitted, a few tasks ahead
            # of the decoding, a batch of pieces a task.
            ahead = self._workers * IN_FLIGHT_PER_WORKER
            per_task = max(1, nchunks // (ahead * _TASKS_PER_SLOT))
            for _ in in_order(self._executor, self._read_pieces,
                              ((batch, out) for batch in batches(pieces, per_task)), ahead):
                pass
        else:
            for piece in pieces:
                self._read_piece(piece, out, nthreads)
        return out

    def _read_deferred(self, pieces: list[GatherPiece], out: AnyArray) -> None:
        """Read pieces of chunks decoded in part: their blocks' streams are loaded here,
        and the decoding and copying run in the pool's threads as each piece is planned,
        and in this one once all are (:func:`~hyperslab.chunked.deferred.run_planned`)."""

        def plan(piece: GatherPiece) -> list[DecodeJob]:
            jobs: list[DecodeJob] = []
            self._read_piece(piece, out, 1, jobs)
            return jobs

        run_planned(pieces, plan, self._workers, self._executor,
                    lambda piece: self._read_piece(piece, out, 1), DEFERRED_BATCH)

    def read_plain_scattered(
        self, h5key: Sequence[Any], out: AnyArray | None = None
    ) -> AnyArray | None:
        """Read a box of an unfiltered dataset of a read-only file with a few
        ``os.preadv`` calls for all its chunks, straight into ``out`` (or a new array).

        This applies where each chunk's part of the box is one run of bytes both in the
        stored chunk and in the output (chunks of one item along the leading dimensions,
        boxes spanning whole chunks along the trailing ones: ``(1, 65, 500)`` chunks of a
        ``(500, 500, 500)`` array, say) and every chunk is written; the runs are then read
        in file order, those adjacent in the file in one call.  ``h5key`` holds ints and
        step-1 slices.  Returns None where this does not apply (nothing was read that
        matters): use :meth:`read_gather`.
        """
        if self.kind is not RawKind.PLAIN:
            return None
        raw = self._dataset.raw_chunks()
        if not raw.uses_pread:
            return None
        box = box_of(h5key, self._dataset.shape)
        if box is None:
            return None
        runs = byte_runs(box, self._chunkshape, self._itemsize)
        if runs is None:
            return None
        shape = tuple(hi - lo for lo, hi in box)
        if out is None:
            out = np.empty(shape, dtype=self._dtype)
        elif (out.shape[: len(shape)] != shape or out.dtype != self._dtype
              or not out.flags.c_contiguous or not out.flags.writeable):
            return None
        if not raw.read_scattered(runs, out.reshape(-1).view(np.uint8)):
            return None
        return out

    def read_points(self, indices: AnyArray) -> AnyArray:
        """The items of a 1-D Blosc2 dataset at sorted, unique ``indices`` (int64).

        Of each chunk holding some, only the Blosc2 blocks holding them are decompressed
        when they are few (a handful of table rows: one small block each instead of a
        chunk of megabytes), else the whole chunk; chunks are read in parallel.

        Raises
        ------
        HDF5ExtError
            If a chunk cannot be decoded (it is named).
        """
        out = np.empty(len(indices), dtype=self._dtype)
        if not len(indices):
            return out
        rows = self._chunkshape[0]
        first = int(indices[0]) // rows
        if first == int(indices[-1]) // rows:  # one chunk (a few rows): no splitting
            out[:] = self._chunk_items((first,), indices - first * rows, self._workers)
            return out
        numbers = indices // rows
        starts = np.flatnonzero(np.diff(numbers)) + 1
        bounds = list(zip(np.append(0, starts).tolist(), np.append(starts, len(indices)).tolist(),
                          strict=True))
        use_pool, nthreads = self._threads(len(bounds))

        def read(lo: int, hi: int) -> None:
            number = int(numbers[lo])
            positions = indices[lo:hi] - number * rows
            out[lo:hi] = self._chunk_items((number,), positions, nthreads)

        if use_pool and len(bounds) >= _POINT_POOL_MIN_CHUNKS:
            ahead = self._workers * IN_FLIGHT_PER_WORKER
            per_task = max(1, len(bounds) // (ahead * _TASKS_PER_SLOT))

            def read_batch(batch: list[tuple[int, int]]) -> None:
                for lo, hi in batch:
                    read(lo, hi)

            for _ in in_order(self._executor, read_batch,
                              ((batch,) for batch in batches(bounds, per_task)), ahead):
                pass
        else:
            for lo, hi in bounds:
                read(lo, hi)
        return out

    def _read_pieces(self, pieces: list[GatherPiece], out: AnyArray) -> None:
        for piece in pieces:
            self._read_piece(piece, out, 1)

    def _chunk_items(self, grid: tuple[int, ...], positions: AnyArray,
                     nthreads: int) -> AnyArray:
        """The items at sorted ``positions`` of one chunk of a 1-D dataset."""
        point = self._point_chunk(grid)
        if point is None:
            return np.full(len(positions), self._fill_value(), dtype=self._dtype)
        if point.blocks is not None:
            load = None if point.sparse is None else point.sparse.load
            try:
                items = decode_items(point.blocks, positions, self._dtype,
                                     store=point.decoded, load=load)
            except cframe.FrameError:
                items = None  # a block that does not decode alone: the whole chunk below
            if items is not None:
                return items
        chunk = self._decoded_to_copy(point.complete_raw(), point.mask, grid, nthreads)
        return chunk[positions]

    def _point_chunk(self, grid: tuple[int, ...]) -> PointChunk | None:
        """A stored chunk and its parsed blocks (cached on read-only files); None if the
        chunk was never written."""
        with self._frames_lock:
            cached = self._frames.get(grid)
            if cached is not None:
                self._frames.move_to_end(grid)
                return cached
        dataset = self._dataset
        # Of a frame (a megabyte), only the blocks holding the rows are read.
        stored = self._stored_bytes(grid, in_part=True)
        if stored is None:
            return None
        raw, mask, sparse = stored
        blocks = None
        if self._decodes_in_part(mask):
            try:
                blocks = frame_blocks(raw, self._dtype, chunkshape=self._chunkshape)
            except cframe.FrameError:
                blocks = None  # a frame the parser does not vouch for: decoded whole
        if blocks is None and sparse is not None:
            sparse.load_all()  # decoded whole
        if not dataset.raw_chunks().uses_pread:
            return PointChunk(raw, mask, blocks, None)
        # A read-only file: the chunk cannot change, keep it.
        point = PointChunk(raw, mask, blocks, DecodedBlocks(), sparse)
        with self._frames_lock:
            self._frames[grid] = point
            self._frames_bytes += len(raw)
            while self._frames_bytes > _POINT_CACHE_BYTES and len(self._frames) > 1:
                _, gone = self._frames.popitem(last=False)
                self._frames_bytes -= len(gone.raw)
        return point

    def _read_whole_piece(self, piece: GatherPiece, target: AnyArray, nthreads: int) -> bool:
        """Read a piece that is a whole chunk with one read (unfiltered) or one
        decompression call, straight into ``target`` where it is C-contiguous, else into
        this thread's chunk buffer and copied: a new bytes object per chunk, or a Blosc2
        context and its buffers per block, is fresh memory, faulted in again wherever
        freed memory goes back to the system at once (dask.distributed's workers set
        ``MALLOC_TRIM_THRESHOLD_`` to 64 KiB).  False where this does not apply."""
        whole = target.shape == tuple(self._chunkshape)
        if not (target.flags.c_contiguous or whole):
            return False
        into = target if target.flags.c_contiguous else scratch_chunk(self._chunkshape,
                                                                      self._dtype)
        if self.kind is RawKind.PLAIN:
            if not self._dataset.chunk_is_written(piece.grid):
                target[...] = self._fill_value()
                return True
            if self._dataset.read_raw_chunk_into(
                    piece.grid, into.reshape(-1).view(np.uint8)) is None:
                return False
        else:
            self._decode_whole(piece.grid, into, nthreads)
        if into is not target:
            target[...] = into
        return True

    def _read_piece(self, piece: GatherPiece, out: AnyArray, nthreads: int,
                    jobs: list[DecodeJob] | None = None) -> None:
        """Read ``piece`` into ``out``; given ``jobs``, decoding blocks straight into
        ``out`` may be left to callables appended to it (see
        :func:`~hyperslab.codecs.cframe_region.decode_region`)."""
        target = out[piece.in_out]
        if piece.full_chunk and self._read_whole_piece(piece, target, nthreads):
            return
        stored = self._stored_bytes(piece.grid, in_part=not piece.full_chunk)
        if stored is None:
            target[...] = self._fill_value()
            return
        raw, mask, sparse = stored
        load = None if sparse is None else sparse.load  # the blocks decode_region needs
        if self._decodes_in_part(mask):
            # Only the blocks holding selected items are decoded (slices, any step),
            # straight into the output; index arrays: the blocks of their bounding box.
            slices = tuple(sel for sel in piece.in_chunk if isinstance(sel, slice))
            sliced = len(slices) == len(piece.in_chunk)
            region = slices if sliced else piece.bounds
            into = target if sliced and target.dtype == self._dtype else None
            try:
                blocks = frame_blocks(raw, self._dtype, chunkshape=self._chunkshape)
                part = None if blocks is None else decode_region(
                    blocks, region, self._dtype, load=load, out=into, big_blocks=BIG_BLOCK_BYTES,
                    jobs=None if into is None else jobs)
            except cframe.FrameError:
                part = None  # not decoded in part: decoded whole below, or reported
            if part is not None:
                if part is not into:
                    target[...] = part if sliced else part[piece.within_bounds()]
                return
            if sparse is not None:
                sparse.load_all()  # too many blocks: decoded whole
        if jobs is not None:  # decoded whole, later, in whichever thread runs the job
            jobs.append(DecodeJob(functools.partial(self._copy_decoded, raw, mask, piece, target),
                                  self.chunk_nbytes))
            return
        self._copy_decoded(raw, mask, piece, target, nthreads)

    def _copy_decoded(self, raw: Any, mask: int, piece: GatherPiece, target: AnyArray,
                      nthreads: int = 1) -> None:
        target[...] = self._decoded_to_copy(raw, mask, piece.grid, nthreads)[piece.in_chunk]

    def _stored_bytes(self, grid: tuple[int, ...], in_part: bool
                      ) -> tuple[Any, int, SparseChunk | None] | None:
        """The stored bytes of a chunk and its filter mask, and the :class:`SparseChunk`
        they are the buffer of while only part of them is read; None if the chunk was
        never written.

        Right after opening a read-only file, HDF5 finds a chunk or two faster than a
        chunk index of the whole dataset is built.  A chunk to be decoded in part
        (``in_part``) whose frame allows it has only its frame's structure read here
        (found either way): the caller loads the streams of the blocks it decodes
        (``sparse.load``), or the rest (``sparse.load_all()``) before decoding it whole.
        """
        dataset = self._dataset
        if in_part and self._partial_decoding:
            sparse = dataset.sparse_chunk(grid)
        else:
            sparse = dataset.sparse_chunk_looked_up(grid)
        if sparse is None:
            if not dataset.chunk_is_written(grid):
                return None
            return (*dataset.read_raw_chunk(grid), None)
        buffer, mask = sparse.buffer, sparse.filter_mask
        if in_part and self._decodes_in_part(mask) and load_frame_structure(buffer,
                                                                            sparse.load):
            return buffer, mask, sparse
        sparse.load_all()
        return buffer, mask, None

    def _decode_whole(self, grid: tuple[int, ...], target: AnyArray, nthreads: int) -> None:
        """Decode the chunk at ``grid`` into ``target`` (C-contiguous; the fill value if never
        written), its stored bytes read into this thread's scratch buffer on read-only
        files (needed only here; fresh memory costs a page fault per 4 KB every time)."""
        dataset = self._dataset
        sparse = dataset.sparse_chunk(grid)
        if sparse is not None:
            sparse.load_all_into(scratch_bytes(sparse.size, "stored"))
            self._decode(sparse.buffer, sparse.filter_mask, target, grid, nthreads)
        elif dataset.chunk_is_written(grid):
            self._decode(*dataset.read_raw_chunk(grid), target, grid, nthreads)
        else:
            target[...] = self._fill_value()

    def _run_parts(self, parts: Sequence[Callable[[], None]]) -> None:
        """Run ``parts`` (the runs of blocks of one chunk to decode, see
        :func:`~hyperslab.codecs.cframe.decode_into`): the first here, the others in the
        pool, or here where the pool has not started them; return once all have run (the
        first error is raised)."""
        pool = self._executor()
        pending = [(pool.submit(part), part) for part in parts[1:]]
        try:
            parts[0]()
            for future, part in pending:
                if future.cancel():  # the pool is busy with other work
                    part()
        finally:  # (after an error, parts not started are dropped)
            for future, _ in pending:
                if not future.cancel():
                    future.exception()  # waits: nothing writes into the chunk after this
        for future, _ in pending:
            if not future.cancelled():
                future.result()

    def _decodes_in_part(self, mask: int) -> bool:
        """Whether a stored chunk of this filter mask can be decoded block by block."""
        return self._partial_decoding and not mask & _SKIP_FIRST_FILTER

    def _decoded(
        self, raw: bytes, mask: int, grid: tuple[int, ...], nthreads: int
    ) -> AnyArray:
        """A stored chunk decoded into a new array of the chunk's shape."""
        chunk = self._new_chunk(fill=False)
        self._decode(raw, mask, chunk, grid, nthreads)
        return chunk

    def _decoded_to_copy(
        self, raw: bytes, mask: int, grid: tuple[int, ...], nthreads: int
    ) -> AnyArray:
        """A stored chunk decoded only to copy items out of, into this thread's scratch
        buffer (:func:`~hyperslab.chunked.scratch.scratch_chunk`: valid until the thread's
        next call; fresh memory would cost a page fault per 4 KB)."""
        chunk = scratch_chunk(self._chunkshape, self._dtype)
        self._decode(raw, mask, chunk, grid, nthreads)
        return chunk

    def _decode(
        self, raw: Any, mask: int, out: AnyArray, grid: tuple[int, ...], nthreads: int
    ) -> None:
        """Decode a stored chunk into ``out`` (a C-contiguous array of the chunk's shape)."""
        if self._deflate is not None:
            try:
                self._deflate.decode_into(raw, mask, out)
            except DeflateError as exc:
                raise self._corrupt(grid, exc) from None
            return
        if self.kind is RawKind.PLAIN or mask & _SKIP_FIRST_FILTER:
            flat = out.reshape(-1).view(np.uint8)
            # HDF5 reads an unfiltered chunk's own size whatever size its (damaged)
            # index entry records: a longer one is read as its first bytes.
            longer = self.kind is RawKind.PLAIN and len(raw) > flat.shape[0]
            if len(raw) != flat.shape[0] and not longer:
                raise self._corrupt(grid, ValueError(
                    f"it holds {len(raw)} bytes, not the {flat.shape[0]} of a chunk"
                ))
            flat[...] = np.frombuffer(raw, dtype=np.uint8, count=flat.shape[0])
            return
        try:
            cframe.decode_into(raw, out, nthreads=nthreads, chunkshape=self._chunkshape,
                               work=blocked_scratch,
                               run_parts=self._run_parts if nthreads > 1 else None)
            return
        except cframe.FrameError as exc:
            fast_error: Exception = exc
        except (ValueError, RuntimeError) as exc:
            raise self._corrupt(grid, exc) from exc
        # Frames the parser does not vouch for (valid ones of other layouts, as
        # python-blosc2 may write them for write_chunk; damaged ones whose damage the
        # filter ignores) are decoded by python-blosc2 itself, as the filter does, which
        # also says what is wrong with the others.
        try:
            out[...] = decode_chunk(raw, self._dtype, self._chunkshape, selection=Ellipsis)
        except (ValueError, RuntimeError) as exc:
            raise self._corrupt(grid, ValueError(
                f"{fast_error}; python-blosc2 cannot decode it either: {exc}")) from exc

    def serves_read(self, box: Box) -> bool:
        """Whether :meth:`read_box` beats HDF5's filter pipeline for ``box``."""
        return self.serves_key(tuple(slice(start, stop) for start, stop in box))

    def filter_decodes(self, h5key: Sequence[Any] | None) -> bool:
        """Whether HDF5's filter pipeline decodes right every stored chunk the planned key
        ``h5key`` (None: the whole dataset) touches; else :meth:`read_gather` must read it
        (see :mod:`~hyperslab.chunked.frameaudit`)."""
        audit = self._audit
        if audit is None:
            if self.kind is not RawKind.BLOSC2:
                return True
            with self._frames_lock:  # threads reading at once share one audit
                audit = self._audit
                if audit is None:
                    audit = self._audit = FrameAudit(self._dataset, self._chunkshape)
        return audit.vouches(h5key)

    def serves_key(self, h5key: Sequence[Any]) -> bool:
        """Whether :meth:`read_gather` beats HDF5's filter pipeline for ``h5key``.

        Blosc2 chunks of a useful size always do (no pipeline, parallel decompression of
        only the blocks needed); many small chunks are faster through HDF5's C loop than
        through Python.
        """
        if self._deflate is not None:  # many chunks inflated at once in the pool
            count = count_key_chunks(h5key, self._dataset.shape, self._chunkshape)
            return (self._workers > 1 and count >= _DEFLATE_MIN_CHUNKS
                    and count * self.chunk_nbytes >= _DEFLATE_MIN_BYTES)
        if self.kind is not RawKind.BLOSC2:
            return False
        if self.chunk_nbytes >= _RAW_READ_MIN_BYTES:
            return True
        return count_key_chunks(h5key, self._dataset.shape,
                                self._chunkshape) <= _RAW_READ_FEW_CHUNKS

"""Raw chunk I/O of one chunked dataset, with a chunk index that is never stale.

:class:`RawChunks` answers "is chunk X written, and where?" in O(1) from a
:class:`~hyperslab.storage.chunkindex.ChunkIndex` built once, and moves a chunk's stored
bytes without HDF5's filter pipeline: ``os.pread`` at the indexed offset when the file is
open read-only with the sec2 driver (no HDF5 call, no h5py lock; the reads of many pieces
at once are in :mod:`~hyperslab.storage.preads`), else ``DatasetID.read_direct_chunk`` /
``write_direct_chunk``.

Staleness rules.  The index (the *base*) is a snapshot; every change made through the owning
:class:`~hyperslab.storage.datasets.Dataset` is recorded next to it instead of rebuilding it:

* an *overlay* dict maps grid coordinates to the chunk's new location, or to None when the
  chunk is written but its address is unknown (HDF5 may have moved it).  Writes through
  the filter pipeline (``Dataset.write``/``write_all``: the chunks their selection touches,
  computed exactly from the key) and ``write_raw_chunk`` add such None entries;
* a *limit* (per dimension, the smallest grid since the base was built) hides base chunks
  that a shrink deleted, even after the dataset grows again; growing needs nothing else
  (look-ups beyond the base's grid are unwritten unless in the overlay);
* a shrink that cuts through chunks makes HDF5 rewrite them (it fills the cut-off part):
  the written chunks on the new edge get None entries.

So ``is_written`` is exact and O(1) without asking HDF5.  A location marked None is resolved
on demand with one ``get_chunk_info_by_coord`` call (which scans HDF5's chunk index: 1/20 to
1/70 of a full ``chunk_iter`` pass, measured); after ``RESOLVE_BUDGET`` such calls since the
last build, the next one rebuilds the base instead (ski rental: never much more than twice
the cost of the better choice).  Reads of raw bytes never need the address on writable files
(``read_direct_chunk`` finds the chunk itself).  Writes that touch more chunks than
``max(OVERLAY_MIN, nwritten // 4)``, keys whose chunks cannot be worked out, failed writes
and any resize of a dataset allocated early (HDF5 then allocates chunks itself) drop the
base: it is rebuilt at the next look-up.  After writes through the pipeline, whose chunks
may still sit in HDF5's chunk cache, HDF5 must write them before it is next asked about
chunks: HDF5 2.0's ``chunk_iter``, ``get_chunk_info_by_coord`` and ``read_direct_chunk``
do it themselves (as verified here); with older versions the dataset is flushed first
(``H5Dflush``).  Either way, chunks rewritten since the last flush reach the file then,
and the space they held may be given to other chunks before the next flush: the owner of
a dataset may set :attr:`RawChunks.before_lookup` to flush the whole file first, in
order (:mod:`hyperslab.nodes.files.flushguard` does, for leaves), and ``H5Dflush`` is avoided
where it can be because it writes one dataset's metadata alone: its new extent would
reach the file ahead of the chunks appended after it.

Read-only files cannot change, so their look-ups skip all of this.  Their chunks are
read with ``os.pread`` only within the end of allocation the superblock records
(:mod:`~hyperslab.storage.superblock`), as HDF5 reads them: when the index (or a single
look-up) finds a chunk past it, the dataset's raw reads go through HDF5 instead, which
refuses that chunk (``HDF5ExtError``) and reads the others.

Speed.  ``location``, ``is_written``, ``read`` and ``read_range`` are instance attributes
set to closures over the current base (:mod:`~hyperslab.storage.fastlookups`; re-made when
the base, the grid or the limit change), which cost about half the Python time of plain
methods: on a million-chunk dataset here, ``read_range`` of one item on a read-only file
takes ~1.7 us (0.75 of them in ``pread``), ``is_written`` ~0.35 us.

State is per :class:`RawChunks` object (one per ``Dataset``): writes made through another
``Dataset`` object of the same HDF5 dataset are not seen (call :meth:`RawChunks.invalidate`).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import h5py
import numpy as np
from h5py import h5d, h5i

from hyperslab._typing import Shape
from hyperslab.errors import (
    ClosedNodeError,
    FileModeError,
    HDF5ExtError,
    NoSuchChunkError,
)
from hyperslab.storage.chunkindex import (
    ChunkIndex,
    ChunkLocation,
    ChunkSet,
    check_grid_coords,
    chunk_keys,
    count_chunks,
    grid_shape,
    touched_chunks,
)
from hyperslab.storage.fastlookups import (
    fast_direct_reads,
    fast_finder,
    fast_lookups,
    fast_preads,
)
from hyperslab.storage.preads import _NOT_ASKED, FileAccess, PreadReads, file_access
from hyperslab.storage.superblock import AllocationEnd

_FLUSH_BEFORE_LOOKUPS = h5py.version.hdf5_version_tuple < (2, 0, 0)
"""Whether HDF5 needs an explicit flush before chunk look-ups and raw reads see the chunks
written through its pipeline (versions before 2.0; see the module docstring)."""

RESOLVE_BUDGET = 16
"""Single-chunk HDF5 look-ups allowed between two full index builds (see the module)."""

OVERLAY_MIN = 4096
"""A write may mark up to ``max(OVERLAY_MIN, nwritten // 4)`` chunks before the index is
dropped and rebuilt later instead."""

_MISSING = object()

# ----------------------------------------------------------------------------- the state


class RawChunks(PreadReads):
    """The chunk index and raw chunk I/O of one chunked dataset (see the module docstring).

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open chunked dataset.
    chunkshape : tuple of int
        Its chunk shape.
    dcpl : h5py.h5p.PropDCID, optional
        Its creation property list, when the caller already has it.
    access : FileAccess, optional
        How its file is open (:func:`file_access`), when the caller already knows.
    shape : tuple of int, optional
        Its current shape, when the caller already knows it.
    itemsize : int, optional
        Bytes of one element in the file, when the caller already knows it.
    """

    __slots__ = (
        "_alloc_early",
        "_allocation",
        "_base",
        "_chunk_nbytes",
        "_chunkshape",
        "_dsid",
        "_fd",
        "_grid",
        "_limit",
        "_limit_is_grid",
        "_lock",
        "_masks",
        "_ndim",
        "_nfilters",
        "_overlay",
        "_pending_flush",
        "_resolves",
        "_shape",
        "_writable",
        "before_lookup",
        "is_written",
        "location",
        "read",
        "read_range",
    )

    # The four look-ups are instance attributes: the general methods (``_location``...)
    # until an index is built, then closures over it (see ``_refresh_fast``), which save
    # about half of the Python overhead of a look-up.
    location: Callable[[Any], ChunkLocation | None]
    """``location(coords)``: where the chunk at grid ``coords`` is, or None if unwritten."""
    is_written: Callable[[Any], bool]
    """``is_written(coords)``: whether the chunk at grid ``coords`` was written (O(1))."""
    read: Callable[[Any], tuple[bytes, int]]
    """``read(coords)``: the stored bytes and filter mask of a chunk."""
    read_range: Callable[[Any, int, int], bytes]
    """``read_range(coords, start, nbytes)``: some of the stored bytes of a chunk."""

    def __init__(self, dsid: h5d.DatasetID, chunkshape: Shape, dcpl: Any = None,
                 access: FileAccess | None = None, shape: Shape | None = None,
                 itemsize: int | None = None) -> None:
        self._dsid = dsid
        self._chunkshape = tuple(int(c) for c in chunkshape)
        self._ndim = len(self._chunkshape)
        self._shape: Shape = tuple(int(s) for s in (dsid.shape if shape is None else shape))
        self._grid = grid_shape(self._shape, self._chunkshape)
        self._base: ChunkIndex | None = None
        self._overlay: dict[tuple[int, ...], ChunkLocation | None] = {}
        # Non-zero filter masks of chunks written raw since opening: HDF5 2.0's
        # read_direct_chunk reports 0 for them until the file is reopened (measured).
        self._masks: dict[tuple[int, ...], int] = {}
        self._limit: Shape = self._grid
        self._limit_is_grid = True
        self._resolves = 0
        self._lookups = 0  # HDF5 look-ups made before any index was built
        self._walked = 0  # chunk index entries those look-ups made HDF5 walk
        self._looked_up: dict[tuple[int, ...], ChunkLocation] = {}  # their answers
        self._hdf5_budget: float | None = None  # of read_found_by_hdf5 (set at its first)
        self._hdf5_extra = 0.0  # the estimated extra cost of each of them (set then too)
        self._tree_at = 0.0  # the budget left when the chunk B-tree's root is looked for
        self._tree: int | None = _NOT_ASKED  # that root (None: there is none to read)
        self._lock = threading.RLock()
        self.before_lookup: Callable[[], None] | None = None
        """Called (instead of flushing the dataset) before HDF5 is asked about chunks
        written through its pipeline: see the module docstring."""
        self._pending_flush = True  # the pipeline may have written before we existed
        if access is None:
            access = file_access(h5i.get_file_id(dsid))
        self._writable = access.writable
        self._fd: int | None = access.fd
        self._allocation: AllocationEnd | None = None
        if access.fd is not None:
            self._pending_flush = False  # nothing can be written
            self._allocation = access.allocation or AllocationEnd(access.fd)
        if dcpl is None:  # the dataset's creation property list (read only)
            dcpl = dsid.get_create_plist()
        self._nfilters = int(dcpl.get_nfilters())
        self._alloc_early = dcpl.get_alloc_time() == h5d.ALLOC_TIME_EARLY
        if itemsize is None:  # bytes of an element in the file
            itemsize = int(dsid.get_type().get_size())
        self._chunk_nbytes = math.prod(self._chunkshape) * itemsize
        self._refresh_fast()

    # ------------------------------------------------------------------ description
    @property
    def grid(self) -> Shape:
        """Chunks per dimension for the current shape."""
        return self._grid

    @property
    def chunkshape(self) -> Shape:
        """The chunk shape in elements."""
        return self._chunkshape

    @property
    def nfilters(self) -> int:
        """The number of filters in the dataset's pipeline."""
        return self._nfilters

    @property
    def uses_pread(self) -> bool:
        """Whether raw reads use ``os.pread`` (a read-only file with the sec2 driver)."""
        return self._fd is not None


    def _name(self) -> str:
        try:
            name = h5i.get_name(self._dsid)
        except Exception:  # a closed or anonymous dataset: the message still helps
            return "(unknown)"
        return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else str(name)

    # ------------------------------------------------------------------ checks
    def _coords(self, coords: Any) -> tuple[int, ...]:
        """``coords`` as a tuple of ints inside the current grid, else IndexError."""
        if type(coords) is tuple and len(coords) == self._ndim:
            for c, g in zip(coords, self._grid):  # noqa: B905  (lengths checked)
                if type(c) is not int or not 0 <= c < g:
                    break
            else:
                return coords
        return check_grid_coords(coords, self._grid, f" of dataset {self._name()!r}")

    def _check_open(self) -> None:
        if not self._dsid.id:
            raise ClosedNodeError("the dataset is closed (its file was closed)")

    def _starts(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(int(c) * s for c, s in zip(coords, self._chunkshape, strict=True))

    def _no_such_chunk(self, coords: tuple[int, ...]) -> NoSuchChunkError:
        return NoSuchChunkError(
            f"chunk {coords} (grid coordinates; starting at element {self._starts(coords)}) "
            f"of dataset {self._name()!r} was never written"
        )

    # ------------------------------------------------------------------ the base index
    def _flush(self) -> None:
        """Push chunks written through the pipeline out of HDF5's chunk cache (HDF5 2.0
        does it in the calls that need it: see the module docstring)."""
        if self._pending_flush:
            self._pending_flush = False
            try:
                if self.before_lookup is not None:
                    self.before_lookup()
                if _FLUSH_BEFORE_LOOKUPS:
                    self._dsid.flush()
            except (OSError, RuntimeError, ValueError) as exc:
                self._pending_flush = True
                raise HDF5ExtError(f"cannot flush dataset {self._name()!r}: {exc}") from exc
            except BaseException:
                self._pending_flush = True
                raise

    def _build(self) -> ChunkIndex:
        """(Re)build the base from the chunk B-tree (read-only files, where it can be
        read) or with one ``chunk_iter`` pass; forget the bookkeeping."""
        with self._lock:
            self._check_open()
            self._flush()
            base = self.index_from_tree() if self._fd is not None else None
            try:
                # Entries out of range (a damaged chunk index) are left out, as HDF5's
                # look-ups leave them out: the other chunks read as HDF5 reads them.
                if base is None:
                    base = ChunkIndex.build(self._dsid, self._shape, self._chunkshape, False)
            except (OSError, RuntimeError, ValueError) as exc:
                raise HDF5ExtError(
                    f"cannot list the chunks of dataset {self._name()!r}: {exc}"
                ) from exc
            if self._allocation is not None and base.nwritten and not self._allocation.covers(
                    int((base.offsets + base.sizes).max())):
                self._fd = None  # chunks past the end of allocation: HDF5 reads (and refuses)
            self._overlay.clear()
            self._limit = self._grid
            self._limit_is_grid = True
            self._resolves = 0
            self._base = base
            self._refresh_fast()
            return base

    def _get_base(self) -> ChunkIndex:
        base = self._base
        if base is None:
            with self._lock:
                base = self._base if self._base is not None else self._build()
        return base

    def _find(self, coords: Any) -> tuple[ChunkIndex, int]:
        """Check ``coords``; return the base and the chunk's row in it (-1: not in it).

        The overlay is not consulted.
        """
        coords = self._coords(coords)
        base = self._base
        if base is None:
            base = self._get_base()
        if not self._limit_is_grid:
            for c, limit in zip(coords, self._limit, strict=True):
                if c >= limit:
                    return base, -1
        rows = base.dense_rows
        if rows is not None and self._ndim == 1:
            return base, rows.item(coords[0])
        return base, base.row(coords)

    def _resolve(self, coords: tuple[int, ...]) -> ChunkLocation | None:
        """Where a chunk whose address is unknown is (one HDF5 look-up, or a rebuild)."""
        with self._lock:
            known = self._overlay.get(coords, _MISSING)
            if known is not None:  # resolved meanwhile, or the base was rebuilt
                return self._location(coords)
            if self._resolves >= RESOLVE_BUDGET:
                self._build()
                return self._location(coords)
            self._flush()
            try:
                info = self._dsid.get_chunk_info_by_coord(self._starts(coords))
            except (OSError, RuntimeError, ValueError) as exc:
                raise HDF5ExtError(
                    f"cannot locate chunk {coords} of dataset {self._name()!r}: {exc}"
                ) from exc
            self._resolves += 1
            if info.byte_offset is None:  # not allocated after all: start again from HDF5
                self._build()
                return self._location(coords)
            location = ChunkLocation(int(info.byte_offset), int(info.size), int(info.filter_mask))
            self._overlay[coords] = location
            return location

    def _refresh_fast(self) -> None:
        """Install the look-ups for the current base, grid and limit (lock held).

        Called whenever one of those changes; the overlay is read by the closures (it is
        never replaced, only changed in place).  Without a base: the general methods.
        """
        base = self._base
        if base is None:
            self.location, self.is_written = self._location, self._is_written
            self.read, self.read_range = self._read, self._read_range
            return
        limit = None if self._limit_is_grid else self._limit
        find = fast_finder(base, self._grid, limit)
        self.location, self.is_written = fast_lookups(
            base, find, self._overlay, self._location, self._is_written
        )
        if self._fd is not None:
            self.read, self.read_range = fast_preads(
                base, find, self._overlay, self._fd, self._dsid, self._read, self._read_range
            )
        else:
            self.read, self.read_range = fast_direct_reads(
                self, find, self._overlay, self._chunkshape, self._read, self._read_range
            )

    # ------------------------------------------------------------------ look-ups
    def _location(self, coords: Any) -> ChunkLocation | None:
        """Where the chunk at grid ``coords`` is stored, or None if it was never written."""
        if self._overlay:
            coords = self._coords(coords)
            known = self._overlay.get(coords, _MISSING)
            if known is not _MISSING:
                return known if known is not None else self._resolve(coords)  # type: ignore[return-value]
        base, row = self._find(coords)
        if row < 0:
            return None
        return ChunkLocation(
            base.offsets.item(row), base.sizes.item(row), base.filter_masks.item(row)
        )

    def _is_written(self, coords: Any) -> bool:
        """Whether the chunk at grid ``coords`` was written (O(1), no HDF5 call)."""
        if self._overlay:
            coords = self._coords(coords)
            if coords in self._overlay:
                return True
        return self._find(coords)[1] >= 0

    def index(self) -> ChunkIndex:
        """An exact snapshot of where every written chunk is."""
        with self._lock:
            self._flush()
            base = self._base
            if base is None:
                return self._build()
            unknown = [k for k, v in self._overlay.items() if v is None]
            if self._resolves + len(unknown) > RESOLVE_BUDGET:
                return self._build()
            for coords in unknown:
                self._resolve(coords)
            base = self._base
            assert base is not None
            if self._overlay or not self._limit_is_grid or base.grid != self._grid:
                base = base.updated(self._overlay, self._grid, self._limit)
                self._base = base
                self._overlay.clear()
                self._limit = self._grid
                self._limit_is_grid = True
                self._refresh_fast()
            return base

    # ------------------------------------------------------------------ raw reads
    def _read(self, coords: Any) -> tuple[bytes, int]:
        """The stored bytes and filter mask of the chunk at grid ``coords``."""
        fd = self._fd
        if fd is None:
            return self._read_hdf5(coords)
        if not self._dsid.id:
            self._check_open()
        base, row = self._find(coords)  # read-only: no overlay
        if row < 0:
            raise self._no_such_chunk(self._coords(coords))
        if self._fd is None:  # the index just built ended raw reads
            return self._read_hdf5(coords)
        size = base.sizes.item(row)
        data = os.pread(fd, size, base.offsets.item(row))
        if len(data) != size:
            raise self._short_read(coords, size, len(data))
        return data, base.filter_masks.item(row)

    def _read_range(self, coords: Any, start: int, nbytes: int) -> bytes:
        """``nbytes`` of the stored bytes of the chunk at grid ``coords``, from ``start``."""
        fd = self._fd
        if fd is None:
            data, _mask = self._read_hdf5(coords)
            self._check_range(coords, start, nbytes, len(data))
            return data[start : start + nbytes]
        if not self._dsid.id:
            self._check_open()
        base, row = self._find(coords)  # read-only: no overlay
        if row < 0:
            raise self._no_such_chunk(self._coords(coords))
        if self._fd is None:  # the index just built ended raw reads
            return self._read_range(coords, start, nbytes)
        size = base.sizes.item(row)
        if start < 0 or nbytes < 0 or start + nbytes > size:
            self._check_range(coords, start, nbytes, size)
        data = os.pread(fd, nbytes, base.offsets.item(row) + start)
        if len(data) != nbytes:
            raise self._short_read(coords, nbytes, len(data))
        return data

    def _check_range(self, coords: Any, start: int, nbytes: int, size: int) -> None:
        if start < 0 or nbytes < 0 or start + nbytes > size:
            raise ValueError(
                f"byte range [{start}, {start + nbytes}) is outside chunk {tuple(coords)} of "
                f"dataset {self._name()!r}, which has {size} stored bytes"
            )

    def _short_read(self, coords: tuple[int, ...], wanted: int, got: int) -> HDF5ExtError:
        return HDF5ExtError(
            f"short read of chunk {coords} of dataset {self._name()!r}: {got} of {wanted} "
            "bytes (is the file truncated?)"
        )

    def _read_hdf5(self, coords: Any) -> tuple[bytes, int]:
        coords = self._coords(coords)
        self._check_open()
        # Asking HDF5 for an unwritten chunk fails in odd ways (h5py may even raise
        # MemoryError for a dataset with no chunk at all): ask the index first.
        if not self._is_written(coords):
            raise self._no_such_chunk(coords)
        if self._pending_flush:
            self._flush()
        try:
            mask, data = self._dsid.read_direct_chunk(self._starts(coords))
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            raise HDF5ExtError(
                f"cannot read chunk {coords} of dataset {self._name()!r}: {exc}"
            ) from exc
        return data, self._masks.get(coords, int(mask))

    # ------------------------------------------------------------------ writes
    def write(self, coords: Any, data: Any, filter_mask: int = 0) -> None:
        """Store ``data`` (bytes-like, already filtered) as the chunk at grid ``coords``."""
        self._check_open()
        coords = self._coords(coords)
        if not self._writable:
            raise FileModeError(
                f"cannot write chunk {coords} of dataset {self._name()!r}: the file is open "
                "read-only"
            )
        nbytes = self._check_chunk_data(coords, data, filter_mask)
        with self._lock:
            try:
                self._dsid.write_direct_chunk(self._starts(coords), data, filter_mask)
            except (OSError, RuntimeError, ValueError, TypeError) as exc:
                self.invalidate()
                raise HDF5ExtError(
                    f"cannot write chunk {coords} ({nbytes} bytes) of dataset "
                    f"{self._name()!r}: {exc}"
                ) from exc
            if filter_mask:
                self._masks[coords] = int(filter_mask)
            else:
                self._masks.pop(coords, None)
            if self._base is not None:
                self._overlay[coords] = None

    def _forget_masks(self, chunks: ChunkSet | None) -> None:
        """Chunks rewritten by HDF5 get the masks it reports again; lock held."""
        if not self._masks:
            return
        if chunks is None:
            self._masks.clear()
            return
        for key in chunk_keys(chunks):
            self._masks.pop(key, None)

    def _forget_pruned_masks(self, old_shape: Shape) -> None:
        """Drop the masks of chunks a shrink deleted or cut (HDF5 rewrites those); lock held."""
        cut = [
            g - 1 if new < old and new % c else g
            for g, new, old, c in zip(self._grid, self._shape, old_shape, self._chunkshape,
                                      strict=True)
        ]
        for key in [k for k in self._masks if any(i >= n for i, n in zip(k, cut, strict=True))]:
            del self._masks[key]

    def _check_chunk_data(self, coords: tuple[int, ...], data: Any, filter_mask: int) -> int:
        """Validate a raw chunk before writing it; return its size in bytes."""
        if not isinstance(filter_mask, int | np.integer) or not 0 <= filter_mask < 2**32:
            raise ValueError(f"filter_mask must be an int in [0, 2**32), not {filter_mask!r}")
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(f"chunk data must be bytes-like, not {type(data).__name__}") from None
        if not view.c_contiguous:
            raise ValueError(f"the data of chunk {coords} is not contiguous in memory")
        nbytes = view.nbytes
        if nbytes == 0:
            raise ValueError(f"cannot write chunk {coords}: the data is empty")
        unfiltered = (
            self._nfilters == 0
            or (int(filter_mask) & ((1 << self._nfilters) - 1)) == (1 << self._nfilters) - 1
        )
        if unfiltered and nbytes != self._chunk_nbytes:
            raise ValueError(
                f"chunk {coords} of dataset {self._name()!r} is stored unfiltered, so it "
                f"must be {self._chunk_nbytes} bytes, not {nbytes}"
            )
        return nbytes

    # ------------------------------------------------------------------ bookkeeping
    def invalidate(self) -> None:
        """Forget the index: it is rebuilt at the next look-up."""
        with self._lock:
            self._base = None
            self._overlay.clear()
            self._limit = self._grid
            self._limit_is_grid = True
            self._pending_flush = self._writable
            self._refresh_fast()

    def _mark(self, chunks: ChunkSet | None) -> None:
        """Record that ``chunks`` were written (address unknown); lock held."""
        base = self._base
        if base is None:
            return
        if chunks is None or count_chunks(chunks) > max(OVERLAY_MIN, base.nwritten // 4):
            self.invalidate()
            return
        self._overlay.update(dict.fromkeys(chunk_keys(chunks)))

    def written_through_pipeline(self, key: Any) -> None:
        """Record a write at ``key`` (an h5py selection) that went through the pipeline."""
        with self._lock:
            self._pending_flush = True
            if self._base is not None or self._masks:
                touched = touched_chunks(key, self._shape, self._chunkshape)
                self._forget_masks(touched)
                if self._base is not None:
                    self._mark(touched)

    def resized(self, shape: Sequence[int]) -> None:
        """Record that the dataset now has ``shape`` (HDF5 pruned or extended it)."""
        with self._lock:
            old_shape = self._shape
            self._shape = tuple(int(s) for s in shape)
            self._grid = grid_shape(self._shape, self._chunkshape)
            if self._masks:
                self._forget_pruned_masks(old_shape)
            base = self._base
            if base is None:
                self._limit = self._grid
                self._refresh_fast()
                return
            if self._alloc_early:
                self.invalidate()
                return
            grid = self._grid
            self._limit = tuple(min(a, b) for a, b in zip(self._limit, grid, strict=True))
            self._limit_is_grid = self._limit == grid
            overlay = self._overlay
            for key in [k for k in overlay if any(c >= g for c, g in zip(k, grid, strict=True))]:
                del overlay[key]
            self._mark_cut_edges(old_shape)
            self._refresh_fast()

    def _mark_cut_edges(self, old_shape: Shape) -> None:
        """Mark the written chunks that a shrink cut through (HDF5 rewrote them); lock held."""
        base = self._base
        assert base is not None
        limit = np.asarray(self._limit, dtype=np.int64)
        for d, (old, new, c) in enumerate(
            zip(old_shape, self._shape, self._chunkshape, strict=True)
        ):
            if not (new < old and new % c and self._grid[d] > 0):
                continue
            edge = self._grid[d] - 1
            rows = (base.coords[:, d] == edge) & np.all(base.coords < limit, axis=1)
            cut = np.asarray([k for k in self._overlay if k[d] == edge], dtype=np.int64)
            self._mark(np.concatenate([cut.reshape(-1, self._ndim), base.coords[rows]]))
            if self._base is None:  # too many: dropped
                return


__all__ = ["OVERLAY_MIN", "RESOLVE_BUDGET", "RawChunks"]

"""Raw chunk reads of read-only files with ``os.pread``: no HDF5 call, no h5py lock.

:class:`FileAccess` (from :func:`file_access`, asked once per file) says how a file is open:
one open read-only with the sec2 driver gives its descriptor and its end of allocation
(:mod:`~hyperslab.storage.superblock`), within which chunks are read as HDF5 reads them.
:class:`PreadReads`, mixed into :class:`~hyperslab.storage.rawchunks.RawChunks`, reads many
pieces of chunks with few calls (a few rows of a table, runs of whole unfiltered chunks in
file order, one chunk straight into a buffer) and, before any chunk index is built, finds a
chunk or two with HDF5's own look-up (within :data:`LOOKUP_BUDGET`,
:data:`LOOKUP_SCAN_FACTOR` and :data:`LOOKUP_SCAN_FLOOR`), as a :class:`SparseChunk` whose
bytes are read only where asked for.  Single items of read-only files (of any driver) are
read before any chunk index is built through HDF5's own look-up of their chunk
(:meth:`PreadReads.read_found_by_hdf5`, ``H5Dread_chunk``, which finds a chunk through
HDF5's chunk index in microseconds), until the reads made would have paid for building the
index (ski rental, see :data:`INDEX_BUILD_SECONDS_PER_CHUNK` and
:data:`TREE_INDEX_SECONDS_PER_CHUNK`).  Each of these reads answers
None (or False) where it does not apply: the caller then reads through
:class:`~hyperslab.storage.rawchunks.RawChunks`, which raises the precise error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from h5py import h5d, h5f, h5fd

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.storage import spans
from hyperslab.storage.chunkindex import ChunkIndex, ChunkLocation
from hyperslab.storage.chunktree import chunks_from_tree, tree_root
from hyperslab.storage.recycled import chunk_buffer
from hyperslab.storage.superblock import AllocationEnd

SCATTER_GAP_MAX = 1 << 20
"""Byte ranges of :meth:`PreadReads.read_scattered` at most this far apart in the file are
read in one call (the gap goes to a scratch buffer): the padding of edge chunks, say."""

try:
    _IOV_MAX = max(16, min(1024, int(os.sysconf("SC_IOV_MAX"))))
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _IOV_MAX = 16
"""Buffers one ``os.preadv`` call may take."""

_FEW_LOOKUPS = 16
"""Chunks :meth:`PreadReads.read_pieces` finds with HDF5's look-up when no chunk index is
built yet (building one lists every chunk: 3 ms for a 10M-row table)."""

LOOKUP_BUDGET = 128
"""HDF5 look-ups a dataset's raw reads make (chunks already looked up are remembered)
before the chunk index is built instead (about 3 ms for a 10M-row table)."""

LOOKUP_SCAN_FACTOR = 4
"""HDF5 answers a look-up by walking its chunk index from the start (on a table of 916
chunks one took 6 us for the first chunk and 35 us for the last; with a million chunks
27-155 ms, when listing them all takes 0.85 s).  So look-ups also stop once they have
walked this many times the number of chunks in the grid: they then never cost much more
than building the index would have."""

LOOKUP_SCAN_FLOOR = 4096
"""...but may walk at least this many entries in all, whatever the grid: listing even a
few chunks costs a fixed ~80-100 us (95 us for 4 chunks, 124 us for 80, 0.7 us a chunk
more at 10,000), and a walked entry 20-30 ns in indexes of that size.  So ``a[25]`` of a
grid of 80 chunks finds its 16 chunks with 16 look-ups (69 us) instead of 9 look-ups and
then an index of them all (0.3 ms)."""


INDEX_BUILD_SECONDS_PER_CHUNK = 1.2e-6
"""Estimated cost of building the chunk index, per chunk of the grid (one ``chunk_iter``
pass: 1.1-1.2 us a chunk measured here at 100k chunks, 1.6-2.1 s for a million)."""

TREE_INDEX_SECONDS = 1.5e-4
TREE_INDEX_SECONDS_PER_CHUNK = 1e-7
"""...and of building it from HDF5's version 1 chunk B-tree where
:mod:`~hyperslab.storage.chunktree` reads it: :data:`TREE_INDEX_SECONDS` (finding the
tree, 60-80 us here right after opening, and checking three chunks against HDF5) plus
this per chunk of the grid (67-95 ns a chunk measured here at 100k chunks, 76-109 ms for
a million).  So a read or two of a small dataset right after opening never look for the
tree: they cost less than it."""

_NOT_ASKED = -1
"""``PreadReads._tree`` before the chunk B-tree's root was looked for."""

HDF5_READ_EXTRA_SECONDS = 6e-6
"""Estimated extra cost of a chunk read through HDF5's look-up (``read_direct_chunk``:
8-10 us here with 100k to 1M chunks, ~2 us with 64) over a read through the built index
(``os.pread`` at the indexed offset: ~1.8 us)."""

HDF5_READ_EXTRA_SECONDS_PER_BYTE = 4e-11
"""Estimated extra cost, per byte of an unfiltered chunk, of reading it whole through HDF5
rather than one item of it through the index (``read_direct_chunk`` of a 1 MB chunk: 46 us
here).  Filtered chunks are read whole either way."""


class SparseChunk:
    """The stored bytes of one chunk of a read-only file, read from the file only where
    :meth:`load` asks for them (ranges are read once).

    Attributes
    ----------
    size : int
        The chunk's stored size, in bytes.
    filter_mask : int
        The chunk's filter mask.
    """

    __slots__ = ("_buffer", "_check", "_complete", "_fd", "_loaded", "_name", "_offset",
                 "filter_mask", "size")

    def __init__(self, fd: int, location: ChunkLocation,
                 name: Callable[[], str] | None = None,
                 check_open: Callable[[], None] | None = None) -> None:
        self._fd = fd
        self._offset = location.offset
        self._name = name
        self._check = check_open
        self.filter_mask = location.filter_mask
        self.size = location.size
        self._buffer: AnyArray | None = None  # made at the first use (see buffer)
        self._loaded: list[tuple[int, int]] = []
        self._complete = False

    @property
    def buffer(self) -> AnyArray:
        """``uint8`` of the chunk's stored size; only loaded ranges hold the chunk's bytes
        (the rest is never touched, so it costs neither reading nor page faults).  Made at
        the first use, over memory used again (:mod:`~hyperslab.storage.recycled`): a
        chunk read whole into a buffer of the caller's (:meth:`load_all_into`) takes none."""
        buffer = self._buffer
        if buffer is None:
            buffer = self._buffer = chunk_buffer(self.size)
        return buffer

    def load(self, start: int, stop: int) -> None:
        """Read bytes ``start .. stop - 1`` of the chunk into :attr:`buffer`, unless one
        earlier load covered them (a frame's chunk header and block starts usually lie in
        the first 4 KiB its header was loaded with).

        Raises
        ------
        ValueError
            If the range is not within the chunk.
        HDF5ExtError
            If the file holds fewer bytes than the range (a truncated file).
        ClosedNodeError
            If the file was closed since.
        """
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= self.size:
            raise ValueError(f"bytes {start}..{stop} are not within a chunk of "
                             f"{self.size} bytes")
        if self._complete or start == stop:
            return
        for first, end in self._loaded:
            if first <= start and stop <= end:
                return
        if self._check is not None:
            self._check()  # the file's descriptor is only ours while the file is open
        wanted = stop - start
        if os.preadv(self._fd, [self.buffer[start:stop].data],
                     self._offset + start) != wanted:
            where = f" of {self._name()}" if self._name is not None else ""
            raise HDF5ExtError(f"the file{where} is shorter than the chunk at byte "
                               f"{self._offset}: it may be truncated")
        self._loaded.append((start, stop))

    def load_all(self) -> None:
        """Read every byte of the chunk."""
        if not self._complete:
            self.load(0, self.size)
            self._complete = True

    def load_all_into(self, buffer: AnyArray) -> None:
        """Read every byte of the chunk into ``buffer``, which becomes :attr:`buffer`.

        For a chunk read whole and needed only while it is decoded: a buffer the caller
        keeps for such reads saves the page fault per 4 KB that fresh memory costs on
        every read (a third of the time of reading a megabyte frame from the page cache).

        Raises
        ------
        ValueError
            If ``buffer`` is not a writeable, C-contiguous ``uint8`` array of the chunk's
            stored size.
        HDF5ExtError, ClosedNodeError
            As :meth:`load`.
        """
        size = self.size
        if (not isinstance(buffer, np.ndarray) or buffer.dtype != np.uint8
                or buffer.shape != (size,) or not buffer.flags.c_contiguous
                or not buffer.flags.writeable):
            raise ValueError(f"a chunk of {size} stored bytes cannot be read into "
                             f"{type(buffer).__name__} {getattr(buffer, 'shape', '')}")
        self._buffer = buffer
        self._loaded = []
        self._complete = False
        self.load_all()


class FileAccess(NamedTuple):
    """How a file is open, as raw chunk I/O needs to know (the same for all its
    datasets: :func:`file_access` asks HDF5 once per file, not once per dataset)."""

    intent: int
    """HDF5's access flags (``h5f.ACC_RDONLY``, ``ACC_RDWR``, SWMR bits)."""
    fd: int | None
    """The descriptor of a file open read-only with the sec2 driver (raw reads with
    ``os.pread``); None otherwise."""
    allocation: AllocationEnd | None = None
    """The file's end of allocation, when `fd` is known (raw reads stay within it)."""

    @property
    def writable(self) -> bool:
        """Whether the file is open for writing."""
        return bool(self.intent & h5f.ACC_RDWR)


def file_access(fid: h5f.FileID) -> FileAccess:
    """The :class:`FileAccess` of the open file ``fid``."""
    intent = fid.get_intent()
    if intent == h5f.ACC_RDONLY and fid.get_access_plist().get_driver() == h5fd.SEC2:
        fd = int(fid.get_vfd_handle())
        return FileAccess(int(intent), fd, AllocationEnd(fd))
    return FileAccess(int(intent), None)


class PreadReads:
    """The reads of read-only files described in the module docstring, mixed into
    :class:`~hyperslab.storage.rawchunks.RawChunks`, whose state they read (declared
    here for the type checker).  Its own state is that of the look-ups made before any
    chunk index is built (set by ``RawChunks.__init__``)."""

    __slots__ = ("_hdf5_budget", "_hdf5_extra", "_looked_up", "_lookups", "_tree",
                 "_tree_at", "_walked")

    _hdf5_budget: float | None
    _hdf5_extra: float
    _tree: int | None
    _tree_at: float
    _looked_up: dict[tuple[int, ...], ChunkLocation]
    _lookups: int
    _walked: int
    # RawChunks' state:
    _allocation: AllocationEnd | None
    _base: ChunkIndex | None
    _chunk_nbytes: int
    _chunkshape: Shape
    _dsid: h5d.DatasetID
    _fd: int | None
    _grid: Shape
    _nfilters: int
    _writable: bool
    location: Callable[[Any], ChunkLocation | None]

    def _name(self) -> str:
        raise NotImplementedError  # pragma: no cover - provided by RawChunks

    def _check_open(self) -> None:
        raise NotImplementedError  # pragma: no cover - provided by RawChunks

    def read_spans(self, starts: Any, length: int) -> Any:
        """``length`` bytes at each file address in ``starts`` (see
        :func:`~hyperslab.storage.spans.read_spans`), on read-only files; None elsewhere."""
        fd = self._fd
        return None if fd is None or not self._dsid.id else spans.read_spans(fd, starts, length)

    def read_pieces(self, pieces: Sequence[tuple[tuple[int, ...], int, int]]) -> bytes | None:
        """The stored bytes of each ``(chunk coords, start, nbytes)``, concatenated, with
        one ``os.pread`` each, on read-only files (a few rows of an unfiltered table).
        None where that does not apply (a writable file, an unwritten chunk, a range past
        a chunk's end, a short read)."""
        fd = self._fd
        if fd is None or not self._dsid.id:
            return None
        # Before the chunk index is built (a query right after opening), a few chunks are
        # found with HDF5's own look-up rather than listing every chunk first; once those
        # look-ups have cost about what building the index costs, the index is built
        # (ski rental: repeated queries then find chunks in ~1 us instead of 6-107 us).
        few = (self._may_look_up()
               and len({coords for coords, _, _ in pieces}) <= _FEW_LOOKUPS)
        location = self._look_up_one if few else self.location
        pread = os.pread
        parts = []
        wanted = 0
        for coords, start, nbytes in pieces:
            found = location(coords)
            if (found is None or start < 0 or nbytes < 0 or start + nbytes > found.size
                    or self._fd is None):  # (an index built just now may end raw reads)
                return None
            parts.append(pread(fd, nbytes, found.offset + start))
            wanted += nbytes
        data = b"".join(parts)
        return data if len(data) == wanted else None

    def read_scattered(self, runs: Sequence[tuple[tuple[int, ...], int, int, int]],
                       target: Any) -> bool:
        """Read runs of stored bytes of whole unfiltered chunks into ``target`` (a
        writable byte buffer) with few ``os.preadv`` calls, on read-only files.

        Each run is ``(chunk coords, start in the chunk, start in target, length)``.  The
        runs are read in file order; runs adjacent in the file, or apart by at most
        :data:`SCATTER_GAP_MAX` bytes (read into a scratch buffer), share a call.

        Returns False where it could not read everything: a writable or closed file, a
        filtered dataset, a chunk outside the grid, unwritten or not stored whole, a run
        outside its chunk or ``target``, a short read.  The caller then reads chunk by
        chunk, which raises the precise error.
        """
        fd = self._fd
        if fd is None or self._nfilters or not self._dsid.id:
            return False
        view = memoryview(target).cast("B")
        whole, limit = self._chunk_nbytes, view.nbytes
        location = self.location
        placed = []
        for coords, start, dest, size in runs:
            try:
                found = location(coords)
            except IndexError:  # outside the grid
                return False
            if (found is None or found.size != whole or start < 0 or size < 0
                    or start + size > whole or dest < 0 or dest + size > limit):
                return False
            placed.append((found.offset + start, dest, size))
        if self._fd is None:  # an index built just now found chunks past the allocation
            return False
        placed.sort()
        preadv = os.preadv
        scratch = view[:0]
        buffers: list[Any] = []
        begin = wanted = 0
        for position, dest, size in placed:
            gap = position - begin - wanted
            if buffers and (gap < 0 or gap > SCATTER_GAP_MAX or len(buffers) >= _IOV_MAX - 1):
                if preadv(fd, buffers, begin) != wanted:
                    return False
                buffers = []
            if not buffers:
                begin, wanted = position, 0
            elif gap:  # a small gap (an edge chunk's padding, say): into the scratch buffer
                if scratch.nbytes < gap:
                    scratch = memoryview(bytearray(max(gap, 2 * scratch.nbytes)))
                buffers.append(scratch[:gap])
                wanted += gap
            buffers.append(view[dest : dest + size])
            wanted += size
        return not buffers or preadv(fd, buffers, begin) == wanted

    def _look_up_one(self, coords: tuple[int, ...]) -> ChunkLocation | None:
        """Where one chunk is, asked of HDF5 (no chunk index needed); None if unwritten.

        Read-only files only: the answers are kept (a repeated query asks again for the
        same chunks), and the look-ups made are counted against :data:`LOOKUP_BUDGET` and
        :data:`LOOKUP_SCAN_FACTOR` (see :meth:`_may_look_up`).
        """
        known = self._looked_up.get(coords)
        if known is not None:
            return known
        self._lookups += 1
        # HDF5 walks the chunks in order up to this one (C order of the grid).
        position = 0
        for coord, extent in zip(coords, self._grid, strict=True):
            position = position * extent + int(coord)
        self._walked += position + 1
        start = tuple(int(c) * n for c, n in zip(coords, self._chunkshape, strict=True))
        try:
            info = self._dsid.get_chunk_info_by_coord(start)
        except (OSError, RuntimeError, ValueError):
            return None
        if info.byte_offset is None or not info.size:
            return None
        found = ChunkLocation(int(info.byte_offset), int(info.size), int(info.filter_mask))
        if self._allocation is not None and not self._allocation.covers(
                found.offset + found.size):
            return None  # past the end of allocation: HDF5 reads it (and refuses it)
        self._looked_up[coords] = found
        return found

    def _may_look_up(self) -> bool:
        """Whether chunks are still found with HDF5's look-up rather than the index (no
        index yet, and the look-ups so far within both budgets)."""
        return (self._base is None and self._lookups < LOOKUP_BUDGET
                and self._walked < max(LOOKUP_SCAN_FACTOR * math.prod(self._grid),
                                       LOOKUP_SCAN_FLOOR))

    def sparse_looked_up(self, coords: tuple[int, ...]) -> SparseChunk | None:
        """One chunk found with HDF5's own look-up, on read-only files before any chunk
        index is built (a query right after opening reads a chunk or two: listing every
        chunk first costs more than the read), as a :class:`SparseChunk` whose bytes are
        read only where asked for (a few rows of a Blosc2 table need its frame's structure
        and a block or two, not the megabyte of the whole frame).

        None where that does not apply (an index exists, the look-up budget is spent, a
        writable file, an unwritten chunk): the caller then uses :attr:`read`.
        """
        fd = self._fd
        if fd is None or not self._may_look_up() or not self._dsid.id:
            return None
        found = self._look_up_one(coords)
        if found is None:
            return None
        return SparseChunk(fd, found, self._name, self._check_open)

    def sparse(self, coords: tuple[int, ...]) -> SparseChunk | None:
        """One chunk of a read-only file as a :class:`SparseChunk`, found with HDF5's
        look-up (:meth:`sparse_looked_up`) while that is cheaper, else in the chunk index:
        a region of a compressed chunk then reads the frame's structure and the streams of
        the blocks it decodes, not the whole chunk.  None where that does not apply (a
        writable file, an unwritten chunk)."""
        found = self.sparse_looked_up(coords)
        if found is not None:
            return found
        fd = self._fd
        if fd is None or not self._dsid.id:
            return None
        location = self.location(coords)
        if location is None or self._fd is None:
            return None
        return SparseChunk(fd, location, self._name, self._check_open)

    def read_found_by_hdf5(self, coords: tuple[int, ...]) -> tuple[bytes, int] | None:
        """The stored bytes and filter mask of the chunk at grid ``coords`` (in the grid),
        found by HDF5 itself (``read_direct_chunk``), on read-only files while no chunk
        index is built: for a few single items right after opening, whose chunks HDF5
        finds in microseconds where listing every chunk first costs a second with a
        million chunks.

        Ski rental: each read spends its estimated extra cost over a read through the
        index (:data:`HDF5_READ_EXTRA_SECONDS`, plus
        :data:`HDF5_READ_EXTRA_SECONDS_PER_BYTE` for unfiltered chunks) from a budget of
        the index's estimated build cost (:data:`INDEX_BUILD_SECONDS_PER_CHUNK` per chunk
        of the grid, or :data:`TREE_INDEX_SECONDS` and :data:`TREE_INDEX_SECONDS_PER_CHUNK`
        where the chunk B-tree can be read: :meth:`index_from_tree`); once it is spent,
        this answers None and the caller's read builds the index.  So reads never cost
        much more than twice what the better choice would have.  (Threads share the budget
        without a lock: a lost update costs one more read through HDF5, never a wrong
        answer.)

        None where that does not apply: an index exists, a writable file, a closed dataset,
        a chunk HDF5 does not find (never written: h5py raises odd errors for it) or cannot
        read.  The caller then reads through the index, which answers exactly or raises
        the precise error.
        """
        budget = self._hdf5_budget
        if budget is None:  # the first such read: the budget is the index's build cost
            cells = math.prod(self._grid)
            budget = INDEX_BUILD_SECONDS_PER_CHUNK * cells
            # Once the reads have cost what reading the chunk B-tree would, ask whether
            # it can be read (not before: a read or two right after opening pay no more).
            self._tree_at = budget - TREE_INDEX_SECONDS - TREE_INDEX_SECONDS_PER_CHUNK * cells
            extra = HDF5_READ_EXTRA_SECONDS
            if not self._nfilters:  # read whole here, one item through the index
                extra += HDF5_READ_EXTRA_SECONDS_PER_BYTE * self._chunk_nbytes
            self._hdf5_extra = extra  # (the same for every read: worked out once)
        extra = self._hdf5_extra
        if budget < extra or self._base is not None or self._writable or not self._dsid.id:
            self._hdf5_budget = budget
            return None
        budget -= extra
        if budget < self._tree_at:
            self._tree_at = -math.inf  # asked once
            if self._tree_root() is not None:  # the index now costs less than these reads
                self._hdf5_budget = 0.0
                return None
        self._hdf5_budget = budget
        shape = self._chunkshape
        start = ((coords[0] * shape[0],) if len(coords) == 1
                 else tuple(c * n for c, n in zip(coords, shape, strict=True)))
        try:
            mask, data = self._dsid.read_direct_chunk(start)
        except (OSError, RuntimeError, ValueError, KeyError, MemoryError):
            return None  # (h5py's MemoryError: a dataset without any chunk stored)
        return data, int(mask)

    def _tree_root(self) -> int | None:
        """The root address of the dataset's chunk B-tree where
        :mod:`~hyperslab.storage.chunktree` can read it (looked for once), else None."""
        root = self._tree
        if root == _NOT_ASKED:
            root = None
            end = None if self._allocation is None else self._allocation.value
            if self._fd is not None and end is not None and self._dsid.id:
                root = tree_root(self._dsid, self._fd, self._chunkshape, end)
            self._tree = root
        return root

    def index_from_tree(self) -> ChunkIndex | None:
        """The chunk index of a read-only file read from the dataset's chunk B-tree
        (:func:`~hyperslab.storage.chunktree.chunks_from_tree`, about a tenth of a
        ``chunk_iter`` pass), or None where that does not apply or the tree does not
        agree with HDF5 (the caller then lists the chunks through HDF5)."""
        root = self._tree_root()
        fd = self._fd
        end = None if self._allocation is None else self._allocation.value
        if root is None or fd is None or end is None:
            return None
        found = chunks_from_tree(self._dsid, fd, root, self._chunkshape, end)
        if found is None:
            return None
        starts, offsets, sizes, masks = found
        coords = starts // np.asarray(self._chunkshape, dtype=np.int64)
        return ChunkIndex.from_arrays(self._chunkshape, self._grid, coords, offsets, sizes,
                                      masks)

    def read_into(self, coords: Any, buffer: Any) -> int | None:
        """Read the stored bytes of one chunk straight into ``buffer`` (a writable byte
        buffer of exactly the chunk's stored size) with ``os.preadv``, on read-only files.

        Returns the chunk's filter mask, or None where this does not apply (a writable
        file, an unwritten chunk, a stored size other than ``len(buffer)``, a short read):
        the caller then reads the chunk with :attr:`read`.
        """
        fd = self._fd
        if fd is None or not self._dsid.id:
            return None
        location = self.location(coords)
        view = memoryview(buffer)
        if location is None or location.size != view.nbytes or self._fd is None:
            return None
        if os.preadv(fd, [view], location.offset) != view.nbytes:
            return None
        return location.filter_mask


__all__ = ["HDF5_READ_EXTRA_SECONDS", "HDF5_READ_EXTRA_SECONDS_PER_BYTE",
           "INDEX_BUILD_SECONDS_PER_CHUNK", "LOOKUP_BUDGET", "LOOKUP_SCAN_FACTOR",
           "LOOKUP_SCAN_FLOOR", "SCATTER_GAP_MAX", "TREE_INDEX_SECONDS",
           "TREE_INDEX_SECONDS_PER_CHUNK", "FileAccess", "PreadReads", "SparseChunk",
           "file_access"]

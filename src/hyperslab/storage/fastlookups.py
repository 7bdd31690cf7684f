"""The fast look-ups and reads that :class:`~hyperslab.storage.rawchunks.RawChunks` installs
over a built chunk index.

Closures with everything they need in local variables: about half the Python overhead of
the general methods.  Anything unusual (coordinates that are not a tuple of ints inside
the grid, an unwritten chunk for a read, a chunk whose address is unknown, a closed file,
a short read, an HDF5 error) is handed to the general method, which redoes the work with
every check and raises the precise error.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from h5py import h5d

from hyperslab._typing import Shape
from hyperslab.storage.chunkindex import ChunkIndex, ChunkLocation


class DirectReadState(Protocol):
    """What the direct reads of :func:`fast_direct_reads` read of their
    :class:`~hyperslab.storage.rawchunks.RawChunks` at each call."""

    _dsid: h5d.DatasetID
    _masks: dict[tuple[int, ...], int]
    _pending_flush: bool


Find = Callable[[Any], int]


def fast_finder(base: ChunkIndex, grid: Shape, limit: Shape | None) -> Find:
    """``find(coords)``: the chunk's row in ``base``; -1: not in it; -2: unusual coords.

    ``limit``: base chunks at or beyond it along any dimension were deleted by a shrink.
    """
    ndim = len(grid)
    row_of = base.row
    if base.dense_rows is not None and ndim == 1:
        item = base.dense_rows.item
        g0 = grid[0]
        l0 = g0 if limit is None else limit[0]

        def find_1d(coords: Any) -> int:
            if type(coords) is tuple and len(coords) == 1:
                c = coords[0]
                if type(c) is int and 0 <= c < g0:
                    return item(c) if c < l0 else -1
            return -2

        return find_1d

    def find(coords: Any) -> int:
        if type(coords) is not tuple or len(coords) != ndim:
            return -2
        for c, g in zip(coords, grid):  # noqa: B905  (lengths checked)
            if type(c) is not int or not 0 <= c < g:
                return -2
        if limit is not None:
            for c, m in zip(coords, limit):  # noqa: B905
                if c >= m:
                    return -1
        return row_of(coords)

    return find


def fast_lookups(
    base: ChunkIndex,
    find: Find,
    overlay: dict[tuple[int, ...], ChunkLocation | None],
    general_location: Callable[[Any], ChunkLocation | None],
    general_is_written: Callable[[Any], bool],
) -> tuple[Callable[[Any], ChunkLocation | None], Callable[[Any], bool]]:
    """Fast ``location`` and ``is_written``."""
    offset_of, size_of, mask_of = base.offsets.item, base.sizes.item, base.filter_masks.item
    new = tuple.__new__

    def location(coords: Any) -> ChunkLocation | None:
        row = find(coords)
        if row == -2 or (overlay and coords in overlay):
            return general_location(coords)
        if row >= 0:
            return new(ChunkLocation, (offset_of(row), size_of(row), mask_of(row)))
        return None

    def is_written(coords: Any) -> bool:
        row = find(coords)
        if row >= 0:
            return True
        if row == -1:
            return bool(overlay) and coords in overlay
        return general_is_written(coords)

    return location, is_written


def fast_preads(
    base: ChunkIndex,
    find: Find,
    overlay: dict[tuple[int, ...], ChunkLocation | None],
    fd: int,
    dsid: h5d.DatasetID,
    general_read: Callable[[Any], tuple[bytes, int]],
    general_read_range: Callable[[Any, int, int], bytes],
) -> tuple[Callable[[Any], tuple[bytes, int]], Callable[[Any, int, int], bytes]]:
    """Fast ``read`` and ``read_range`` with ``os.pread`` (read-only files)."""
    offset_of, size_of, mask_of = base.offsets.item, base.sizes.item, base.filter_masks.item
    pread = os.pread

    def read(coords: Any) -> tuple[bytes, int]:
        row = find(coords)
        if row >= 0 and dsid.id and not overlay:
            size = size_of(row)
            data = pread(fd, size, offset_of(row))
            if len(data) == size:
                return data, mask_of(row)
        return general_read(coords)

    def read_range(coords: Any, start: int, nbytes: int) -> bytes:
        row = find(coords)
        if row >= 0 and dsid.id and not overlay and 0 <= start and 0 <= nbytes:
            if start + nbytes <= size_of(row):
                data = pread(fd, nbytes, offset_of(row) + start)
                if len(data) == nbytes:
                    return data
        return general_read_range(coords, start, nbytes)

    return read, read_range


def fast_direct_reads(
    state: DirectReadState,
    find: Find,
    overlay: dict[tuple[int, ...], ChunkLocation | None],
    chunkshape: Shape,
    general_read: Callable[[Any], tuple[bytes, int]],
    general_read_range: Callable[[Any, int, int], bytes],
) -> tuple[Callable[[Any], tuple[bytes, int]], Callable[[Any, int, int], bytes]]:
    """Fast ``read`` and ``read_range`` with ``read_direct_chunk`` (writable files)."""
    dsid = state._dsid
    direct = dsid.read_direct_chunk
    c0 = chunkshape[0]
    one_dim = len(chunkshape) == 1
    errors = (OSError, RuntimeError, ValueError, KeyError, MemoryError)
    masks = state._masks

    def read(coords: Any) -> tuple[bytes, int]:
        row = find(coords)
        if (row >= 0 or (row == -1 and coords in overlay)) and dsid.id:
            if not state._pending_flush:
                if one_dim:
                    starts: tuple[int, ...] = (coords[0] * c0,)
                else:
                    starts = tuple([c * s for c, s in zip(coords, chunkshape)])  # noqa: B905
                try:
                    mask, data = direct(starts)
                except errors:
                    return general_read(coords)  # raises the precise error
                if masks:
                    mask = masks.get(tuple(coords), mask)
                return data, mask
        return general_read(coords)

    def read_range(coords: Any, start: int, nbytes: int) -> bytes:
        data = read(coords)[0]
        if 0 <= start and 0 <= nbytes and start + nbytes <= len(data):
            return data[start : start + nbytes]
        return general_read_range(coords, start, nbytes)

    return read, read_range

__all__ = ["DirectReadState", "Find", "fast_direct_reads", "fast_finder", "fast_lookups",
           "fast_preads"]

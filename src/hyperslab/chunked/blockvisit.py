"""Visiting the blocks of a chunk as they are decoded, for work that needs no copy of it.

Reductions read a dataset tile by tile; a tile's chunks are decoded into a buffer and the
buffer is then reduced.  For chunks written by others in b2nd blocks that are not C-ordered
slabs of the chunk (hdf5plugin's ``(2, 128, 256)`` blocks of ``(2, 500, 500)`` chunks),
each block is already decoded alone into a per-thread block buffer and copied into place
(:mod:`hyperslab.codecs.cframe_blocks`).  :func:`visit_chunks` hands each decoded block to
the work instead, while it is in the core's cache: no copy of the chunk is written, nor
read again.  Chunks whose blocks are C-ordered slabs decode straight into the caller's
buffer in one call, which a visit would only slow down: they are not visited.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from hyperslab._typing import AnyArray
from hyperslab.chunked.engine import ChunkEngine, RawKind
from hyperslab.chunked.regions import Box
from hyperslab.chunked.scratch import scratch_bytes
from hyperslab.codecs.blockshape import blocks_are_c_order
from hyperslab.codecs.cframe import FrameError
from hyperslab.codecs.cframe_blocks import scratch_block
from hyperslab.codecs.cframe_visit import BlockParts, decompress_block, frame_block_parts

Visit = Callable[[Box, AnyArray], Any]


def visits_blocks(engine: ChunkEngine) -> bool:
    """Whether :func:`visit_chunks` should visit this dataset's chunks: Blosc2 chunks of a
    native, plain dtype, on a file open read-only (read raw with ``os.pread``), the first
    stored one in blocks that are not C-ordered slabs of it (other writers' chunks: those
    of hyperslab decode straight into a tile in one call, which visiting does not beat)."""
    dataset, dtype = engine._dataset, engine._dtype
    if not (engine.kind is RawKind.BLOSC2 and engine._partial_decoding
            and dtype.isnative and not dtype.hasobject and dtype.kind in "biufc"
            and dataset.raw_chunks().uses_pread):
        return False
    chunks = engine._chunkshape
    return not blocks_are_c_order(chunks, chunks, engine.blockshape)


def visit_chunks(engine: ChunkEngine, grids: Sequence[tuple[int, ...]], visit: Visit
                 ) -> list[tuple[int, ...]]:
    """Call ``visit(box, block)`` for each decoded block of the chunks at grid coordinates
    ``grids``, chunk after chunk: ``box`` the block's items in the dataset (per dimension
    ``(start, stop)``, cut at the dataset's edge), ``block`` those items (valid during the
    call).

    Returns the chunks not visited (nothing of them visited): those not stored as such
    frames (unwritten, filtered otherwise, C-ordered blocks, a frame the parser does not
    vouch for), to read the usual way.  ``engine`` must pass :func:`visits_blocks`.

    Raises
    ------
    HDF5ExtError
        If a block does not decompress once others of its chunk were visited (the chunk
        is named).
    """
    others: list[tuple[int, ...]] = []
    for grid in grids:
        planned = _block_parts(engine, grid)
        if planned is None or not _visit_blocks(engine, grid, planned, visit):
            others.append(grid)
    return others


def _visit_blocks(engine: ChunkEngine, grid: tuple[int, ...], planned: BlockParts,
                  visit: Visit) -> bool:
    """Visit the blocks of one chunk; False if its first block does not decompress
    (nothing visited: the usual read decodes it as HDF5's filter would, or says why
    not)."""
    blockshape, parts = planned
    dtype = engine._dtype
    block = scratch_block(math.prod(blockshape) * dtype.itemsize)
    items = block.view(dtype).reshape(blockshape)
    origin = [g * c for g, c in zip(grid, engine._chunkshape, strict=True)]
    shape = engine._dataset.shape
    visited = False
    for box, part in parts:
        starts = [o + p.start for o, p in zip(origin, box, strict=True)]
        stops = [min(o + p.stop, n) for o, p, n in zip(origin, box, shape, strict=True)]
        if any(lo >= hi for lo, hi in zip(starts, stops, strict=True)):
            continue  # a block beyond the dataset's edge
        try:
            decompress_block(part, block)
        except FrameError as exc:
            if not visited:
                return False
            raise engine._corrupt(grid, exc) from None
        visited = True
        visit(tuple(zip(starts, stops, strict=True)),
              items[tuple(slice(0, hi - lo) for lo, hi in zip(starts, stops, strict=True))])
    return True


def _block_parts(engine: ChunkEngine, grid: tuple[int, ...]) -> BlockParts | None:
    """The blocks of the chunk at ``grid`` (its stored bytes read into the calling
    thread's buffer), or None where it is not visited."""
    sparse = engine._dataset.sparse_chunk(grid)
    if sparse is None or not engine._decodes_in_part(sparse.filter_mask):
        return None
    sparse.load_all_into(scratch_bytes(sparse.buffer.shape[0], "stored"))
    try:
        return frame_block_parts(sparse.buffer, engine._dtype.itemsize, engine._chunkshape)
    except FrameError:
        return None  # read the usual way, which reports what is wrong


__all__ = ["Visit", "visit_chunks", "visits_blocks"]

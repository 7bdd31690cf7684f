"""Visiting the blocks of a chunk as they are decoded, for work that needs no copy of it.

Reductions read a dataset tile by tile; a tile's chunks are decoded into a buffer and the
buffer is then reduced.  For chunks written by others in b2nd blocks that are not C-ordered
slabs of the chunk (hdf5plugin's ``(2, 128, 256)`` blocks of ``(2, 500, 500)`` chunks),
a group of blocks is already decoded into a per-thread buffer and each copied into place
(:mod:`hyperslab.codecs.cframe_blocks`).  :func:`visit_chunks` hands each decoded block to
the work instead, while it is in the core's cache: no copy of the chunk is written, nor
read again.  Chunks whose blocks are C-ordered slabs decode straight into the caller's
buffer in one call, which a visit would only slow down: they are not visited.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hyperslab._typing import AnyArray
from hyperslab.chunked.engine import ChunkEngine, RawKind
from hyperslab.chunked.regions import Box
from hyperslab.chunked.scratch import scratch_bytes
from hyperslab.codecs.blockshape import blocks_are_c_order
from hyperslab.codecs.cframe import FrameError
from hyperslab.codecs.cframe_blocks import blocks_per_call, scratch_block
from hyperslab.codecs.cframe_visit import BlockPlan, decompress_blocks, frame_block_plan

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
        planned = _block_plan(engine, grid)
        if planned is None or not _visit_blocks(engine, grid, planned, visit):
            others.append(grid)
    return others


def _visit_blocks(engine: ChunkEngine, grid: tuple[int, ...], planned: BlockPlan,
                  visit: Visit) -> bool:
    """Visit the blocks of one chunk, decoded a group a Blosc2 call
    (:func:`~hyperslab.codecs.cframe_blocks.blocks_per_call`: a context per call); False
    if its first group does not decompress (nothing visited: the usual read decodes it as
    HDF5's filter would, or says why not)."""
    dtype = engine._dtype
    origin = [g * c for g, c in zip(grid, engine._chunkshape, strict=True)]
    shape = engine._dataset.shape
    inside: list[tuple[int, tuple[tuple[int, int], ...]]] = []
    for number, place in planned.boxes:
        starts = [o + p.start for o, p in zip(origin, place, strict=True)]
        stops = [min(o + p.stop, n) for o, p, n in zip(origin, place, shape, strict=True)]
        if all(lo < hi for lo, hi in zip(starts, stops, strict=True)):  # not past the edge
            inside.append((number, tuple(zip(starts, stops, strict=True))))
    blocks = planned.blocks
    per_group = blocks_per_call(blocks.blocksize)
    visited = False
    for first in range(0, len(inside), per_group):
        group = inside[first : first + per_group]
        decoded = scratch_block(len(group) * blocks.blocksize)
        try:
            decompress_blocks(planned, [number for number, _ in group], decoded)
        except FrameError as exc:
            if not visited:
                return False
            raise engine._corrupt(grid, exc) from None
        visited = True
        decoded_blocks = decoded.view(dtype).reshape(len(group), *blocks.blockshape)
        for block, (_, bounds) in zip(decoded_blocks, group, strict=True):
            visit(bounds, block[tuple(slice(0, hi - lo) for lo, hi in bounds)])
    return True


def _block_plan(engine: ChunkEngine, grid: tuple[int, ...]) -> BlockPlan | None:
    """The blocks of the chunk at ``grid`` (its stored bytes read into the calling
    thread's buffer), or None where it is not visited."""
    sparse = engine._dataset.sparse_chunk(grid)
    if sparse is None or not engine._decodes_in_part(sparse.filter_mask):
        return None
    sparse.load_all_into(scratch_bytes(sparse.size, "stored"))
    try:
        return frame_block_plan(sparse.buffer, engine._dtype.itemsize, engine._chunkshape)
    except FrameError:
        return None  # read the usual way, which reports what is wrong


__all__ = ["Visit", "visit_chunks", "visits_blocks"]

"""Decoding a whole b2nd chunk block by block, for blocks that are not the chunk's C order.

A b2nd chunk stores its blocks one after another in C order of the block grid, each
holding its items in C order, over the chunk's shape rounded up to whole blocks (the
*extended* shape).  Where the blocks are slabs of whole trailing rows and nothing is
padded, that is the chunk's own C order, and :func:`~hyperslab.codecs.cframe.decode_into`
decompresses straight into the caller's array.  Other writers' blocks often are not:
hdf5plugin's filter picks ``(32, 32, 64)`` blocks for ``(100, 100, 100)`` chunks, whose
extended shape ``(128, 128, 128)`` holds 2.1 times the chunk's bytes.  Decompressing such
a chunk whole into new memory, reordering it into more new memory and cropping it cost
7.5 ms a chunk here (2 cores, float64, LZ4 level 5) against 2.4 ms for the bare
decompression.

:func:`decode_blocks_into` decodes one block at a time into a buffer kept per thread
(a block is at most a few hundred kilobytes: it stays in the core's L2 cache) and copies
the block's part of the chunk to its place, skipping blocks wholly in the padding; blocks
that are C-contiguous in the output are decoded straight into it.  The same chunk then
costs 2.8 ms, with no new memory.  Each block is cut out as a one-block Blosc2 chunk
(:func:`.cframe_item.block_chunk`), which only chunks whose blocks decode alone allow
(:func:`chunk_blocks`).
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.codecs.cframe_item import CHUNK_HEAD, block_chunk, block_ends

PARTIAL_FILTERS: Final = b"\x00\x01\x02"
"""Per-block filters: none, shuffle, bitshuffle (delta refers to the first block)."""

_scratch = threading.local()
SCRATCH_MAX: Final = 8 << 20
"""Bigger blocks get a new buffer each time (none kept)."""


def scratch_block(nbytes: int) -> AnyArray:
    """A ``uint8`` buffer of ``nbytes`` for a block decoded only to be copied from, kept
    per thread (valid until the thread's next call): a fresh ~100 KB array costs a page
    fault per 4 KB on every read."""
    if nbytes > SCRATCH_MAX:
        return np.empty(nbytes, dtype=np.uint8)
    buffer: AnyArray | None = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.shape[0] < nbytes:
        buffer = _scratch.buffer = np.empty(nbytes, dtype=np.uint8)
    return buffer[:nbytes]


def chunk_blocks(chunk: Any, blocksize: int) -> tuple[AnyArray, AnyArray] | None:
    """Where the compressed streams of each block of a (checked) Blosc2 chunk start and
    end, if its blocks can be decoded alone: an extended header, compressed blocks of
    ``blocksize`` bytes, no special value, per-block filters only.  None otherwise."""
    _, _, flags, _, nbytes, header_blocksize, _ = CHUNK_HEAD.unpack_from(chunk, 0)
    if (
        flags & 0x07 != 0x05  # an extended header with compressed, split-able blocks
        or chunk[30] or chunk[31]
        or bytes(chunk[16:22]).strip(PARTIAL_FILTERS)
        or header_blocksize != blocksize
    ):
        return None
    return block_ends(chunk, -(-nbytes // blocksize))


def _items(array: AnyArray, itemsize: int) -> AnyArray:
    """A flat byte array seen as items of ``itemsize`` (unsigned integers where there is
    one of that size: NumPy copies them faster than opaque items)."""
    if itemsize in (1, 2, 4, 8):
        return array.view(np.dtype(f"u{itemsize}"))
    return array.view(np.dtype((np.void, itemsize)))


def decode_blocks_into(
    chunk: Any,
    flat: AnyArray,
    shape: Shape,
    chunkshape: Shape,
    blockshape: Shape,
    decompress: Callable[[Any, AnyArray], None],
) -> bool:
    """Decode a b2nd chunk into ``flat``, its data in C order, block by block.

    Parameters
    ----------
    chunk : bytes-like
        The frame's Blosc2 chunk, checked against the frame (its item and data sizes
        are those of the extended shape of ``chunkshape`` by ``blockshape``).
    flat : numpy.ndarray
        The output: C-contiguous ``uint8`` of ``prod(shape) * itemsize`` bytes.
    shape, chunkshape, blockshape : tuple of int
        The b2nd array (at most the chunk), chunk and block shapes.
    decompress : callable
        ``decompress(one_block_chunk, out)`` decompresses a one-block chunk into the
        ``uint8`` array ``out``.

    Returns
    -------
    bool
        False if the chunk's blocks cannot be decoded alone (then nothing was written):
        decode it whole.
    """
    nitems = math.prod(shape)
    if not nitems or flat.nbytes % nitems:
        return False
    itemsize = flat.nbytes // nitems
    parts = block_parts(chunk, shape, chunkshape, blockshape, itemsize)
    if parts is None:
        return False
    target = _items(flat, itemsize).reshape(shape)
    blocksize = math.prod(blockshape) * itemsize
    block: AnyArray | None = None
    for box, part in parts:
        place = target[box]
        if place.shape == blockshape and place.flags.c_contiguous:
            decompress(part, place.reshape(-1).view(np.uint8))
            continue
        if block is None:
            block = _items(scratch_block(blocksize), itemsize).reshape(blockshape)
        decompress(part, block.reshape(-1).view(np.uint8))
        place[...] = block[tuple(slice(0, p.stop - p.start) for p in box)]
    return True


def block_parts(chunk: Any, shape: Shape, chunkshape: Shape, blockshape: Shape,
                 itemsize: int) -> list[tuple[tuple[slice, ...], Any]] | None:
    """Each block holding data of a b2nd chunk: its place in the array of ``shape``
    (slices) and its one-block Blosc2 chunk, in the chunk's order; None if the blocks
    cannot be decoded alone (checked before any is listed).  The arguments are those of
    :func:`decode_blocks_into`."""
    items_per_block = math.prod(blockshape)
    if not items_per_block or not math.prod(shape) or itemsize < 1:
        return None
    blocksize = items_per_block * itemsize
    nbytes = CHUNK_HEAD.unpack_from(chunk, 0)[4]
    streams = chunk_blocks(chunk, blocksize)
    if streams is None:
        return None
    begins, ends = streams
    grid = [-(-c // b) for c, b in zip(chunkshape, blockshape, strict=True)]
    if math.prod(grid) * blocksize != nbytes:
        return None
    parts = []
    for number, box in _block_boxes(tuple(shape), tuple(blockshape), tuple(grid)):
        part = block_chunk(chunk, number, int(begins[number]), int(ends[number]), blocksize,
                           nbytes)
        assert part is not None  # block_ends found every block's streams in the chunk
        parts.append((box, part))
    return parts


@functools.lru_cache(maxsize=64)
def _block_boxes(shape: Shape, blockshape: Shape, grid: Shape
                 ) -> tuple[tuple[int, tuple[slice, ...]], ...]:
    """The number and place (slices of the array of ``shape``) of each block of the
    ``grid`` that holds data: the same for every chunk of a dataset but its edge ones,
    listed once (a chunk of 8 blocks took 20 us of Python)."""
    boxes = []
    for number, corner in enumerate(itertools.product(*(range(g) for g in grid))):
        box = tuple(slice(i * b, min((i + 1) * b, n))
                    for i, b, n in zip(corner, blockshape, shape, strict=True))
        if all(part.start < part.stop for part in box):  # not a block of padding only
            boxes.append((number, box))
    return tuple(boxes)


__all__ = ["PARTIAL_FILTERS", "SCRATCH_MAX", "block_parts", "chunk_blocks",
           "decode_blocks_into", "scratch_block"]

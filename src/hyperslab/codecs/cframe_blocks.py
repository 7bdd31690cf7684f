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

:func:`decode_blocks_into` decodes a group of blocks at a time (up to
:data:`TOGETHER_MAX_BYTES`, in one Blosc2 call) into a buffer kept per thread (it stays
in the core's caches) and copies each block's part of the chunk to its place, skipping
blocks wholly in the padding; blocks that are C-contiguous in the output are decoded
straight into it.  The same chunk then costs 2.8 ms, with no new memory.  The blocks are
cut out as a Blosc2 chunk of their own (:func:`.cframe_item.cut_blocks`), which only
chunks whose blocks decode alone allow (:func:`chunk_blocks`).
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.codecs.allocator import allocator_returns_memory
from hyperslab.codecs.cframe_item import CHUNK_HEAD, StreamOffsets, block_ends, cut_blocks

PARTIAL_FILTERS: Final = b"\x00\x01\x02"
"""Per-block filters: none, shuffle, bitshuffle (delta refers to the first block)."""

_scratch = threading.local()
SCRATCH_MAX: Final = 8 << 20
"""Bigger blocks get a new buffer each time (none kept)."""

TOGETHER_MAX_BYTES: Final = 2 << 20
"""Blocks decoded to be copied from (here, and the blocks a selection touches in
:mod:`.cframe_region`) are decoded in groups of at most this many bytes, each group in
one Blosc2 call: a call per block cost a one-block chunk and a Blosc2 context each (~10
us), and a pool thread switches the GIL on every call.  Bigger groups leave the caches
before their items are copied out: the strided read of the slicing benchmark on
PyTables' file (2 MB blocks, which are decoded one by one) took 50 ms in groups of 8 MiB,
46 ms of 1 MiB; ``a[:, 50]`` of hyperslab's (25, 50, 50, 50) chunks (200 KB blocks) 7.1
ms in groups of 2 MiB, 7.5 of 8 MiB.  Whole chunks, one thread: 10 PyTables-written
images of 1024 x 1024 uint16 in (1, 256, 256) blocks (Blosc2 Zstd 5) 14.8 ms a block a
call, 11.4 ms 16 blocks a call."""


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


def blocks_per_call(blocksize: int) -> int:
    """How many blocks of ``blocksize`` bytes to decode in one Blosc2 call: as many as
    fit in :data:`TOGETHER_MAX_BYTES` (at least one), but one where the allocator gives
    freed memory back at once (:mod:`.allocator`): a chunk of several blocks takes a
    Blosc2 context of its own, whose block-sized buffers are fresh pages there every
    time, where a one-block chunk takes the global context (see ``cframe._decompress``)."""
    if allocator_returns_memory():
        return 1
    return max(1, TOGETHER_MAX_BYTES // blocksize)


def chunk_blocks(chunk: Any, blocksize: int) -> tuple[StreamOffsets, StreamOffsets] | None:
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
    run: Callable[[Sequence[Callable[[], None]]], None] | None = None,
    parts: int = 1,
) -> bool:
    """Decode a b2nd chunk into ``flat``, its data in C order, a group of blocks at a time.

    Blocks C-contiguous in the output are decoded straight into it; the others up to
    :data:`TOGETHER_MAX_BYTES` at a time, in one Blosc2 call (a chunk of just those blocks,
    :func:`.cframe_item.cut_blocks`) into a buffer kept per thread, then copied to their
    places; blocks over half that size one at a time.  Given ``run``, the blocks are
    split into ``parts`` runs of consecutive ones, decoded by the callables ``run`` is
    given (it runs them, in several threads, and returns when all have).

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
        ``decompress(blosc2_chunk, out)`` decompresses a Blosc2 chunk (of one block or
        of several) into the ``uint8`` array ``out``.
    run : callable, optional
        ``run(callables)`` calls each callable, each in a thread with its own scratch
        buffer, and returns once all have returned (raising the first error).
    parts : int, default 1
        How many runs of blocks ``run`` gets.

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
    located = locate_blocks(chunk, shape, chunkshape, blockshape, itemsize)
    if located is None:
        return False
    begins, ends, nbytes, boxes = located
    target = _items(flat, itemsize).reshape(shape)
    blocksize = math.prod(blockshape) * itemsize
    decode = functools.partial(_decode_boxes, chunk, target, begins, ends, nbytes,
                               blocksize, itemsize, blockshape, decompress)
    if run is None or parts < 2 or len(boxes) < 2:
        decode(boxes)
        return True
    per_part = -(-len(boxes) // parts)
    run([functools.partial(decode, boxes[first : first + per_part])
         for first in range(0, len(boxes), per_part)])
    return True


def _decode_boxes(chunk: Any, target: AnyArray, begins: StreamOffsets, ends: StreamOffsets,
                  nbytes: int, blocksize: int, itemsize: int, blockshape: Shape,
                  decompress: Callable[[Any, AnyArray], None],
                  boxes: Sequence[tuple[int, tuple[slice, ...]]]) -> None:
    """Decode the blocks ``boxes`` (number, place in ``target``) of a chunk into their
    places (see :func:`decode_blocks_into`)."""
    per_group = blocks_per_call(blocksize)
    block: AnyArray | None = None
    group: list[tuple[int, AnyArray, tuple[slice, ...]]] = []
    for number, box in boxes:
        place = target[box]
        if place.shape == blockshape and place.flags.c_contiguous:
            decompress(_one_block(chunk, number, begins, ends, blocksize, nbytes),
                       place.reshape(-1).view(np.uint8))
        elif per_group < 2:  # big blocks: one at a time
            if block is None:
                block = _items(scratch_block(blocksize), itemsize).reshape(blockshape)
            decompress(_one_block(chunk, number, begins, ends, blocksize, nbytes),
                       block.reshape(-1).view(np.uint8))
            place[...] = block[tuple(slice(0, p.stop - p.start) for p in box)]
        else:
            group.append((number, place, box))
            if len(group) == per_group:
                _decode_group(chunk, group, begins, ends, blocksize, nbytes, itemsize,
                              blockshape, decompress)
                group = []
    if group:
        _decode_group(chunk, group, begins, ends, blocksize, nbytes, itemsize, blockshape,
                      decompress)


def _one_block(chunk: Any, number: int, begins: StreamOffsets, ends: StreamOffsets, blocksize: int,
               nbytes: int) -> bytes:
    """Block ``number`` of a chunk as a one-block Blosc2 chunk."""
    part = cut_blocks(chunk, [number], begins, ends, blocksize, nbytes)
    assert part is not None  # block_ends found every block's streams in the chunk
    return part


def _decode_group(chunk: Any, group: list[tuple[int, AnyArray, tuple[slice, ...]]],
                  begins: StreamOffsets, ends: StreamOffsets, blocksize: int, nbytes: int,
                  itemsize: int, blockshape: Shape,
                  decompress: Callable[[Any, AnyArray], None]) -> None:
    """Decode the blocks of ``group`` (number, place, box) in one call into this thread's
    scratch buffer and copy each to its place."""
    together = cut_blocks(chunk, [n for n, _, _ in group], begins, ends, blocksize, nbytes)
    assert together is not None  # block_ends found every block's streams in the chunk
    decoded = scratch_block(len(group) * blocksize)
    decompress(together, decoded)
    blocks = _items(decoded, itemsize).reshape(len(group), *blockshape)
    for block, (_, place, box) in zip(blocks, group, strict=True):
        place[...] = block[tuple(slice(0, p.stop - p.start) for p in box)]


BlockBoxes = tuple[tuple[int, tuple[slice, ...]], ...]
"""Blocks holding data: each one's number and place (slices of the array)."""


def locate_blocks(chunk: Any, shape: Shape, chunkshape: Shape, blockshape: Shape,
                  itemsize: int) -> tuple[StreamOffsets, StreamOffsets, int, BlockBoxes] | None:
    """Where the streams of each block of a b2nd chunk begin and end, the chunk's
    decoded size, and the number and place (slices of the array of ``shape``) of each
    block holding data, in the chunk's order; None if the blocks cannot be decoded alone
    (checked before any is listed).  The arguments are those of
    :func:`decode_blocks_into`."""
    items_per_block = math.prod(blockshape)
    if not items_per_block or not math.prod(shape) or itemsize < 1:
        return None
    blocksize = items_per_block * itemsize
    nbytes = CHUNK_HEAD.unpack_from(chunk, 0)[4]
    streams = chunk_blocks(chunk, blocksize)
    if streams is None:
        return None
    grid = [-(-c // b) for c, b in zip(chunkshape, blockshape, strict=True)]
    if math.prod(grid) * blocksize != nbytes:
        return None
    return (*streams, nbytes, _block_boxes(tuple(shape), tuple(blockshape), tuple(grid)))


@functools.lru_cache(maxsize=64)
def _block_boxes(shape: Shape, blockshape: Shape, grid: Shape) -> BlockBoxes:
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


__all__ = ["PARTIAL_FILTERS", "SCRATCH_MAX", "TOGETHER_MAX_BYTES", "BlockBoxes",
           "blocks_per_call", "chunk_blocks", "decode_blocks_into", "locate_blocks",
           "scratch_block"]

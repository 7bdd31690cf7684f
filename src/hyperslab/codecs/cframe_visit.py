"""The blocks of other writers' b2nd frames, a group at a time, for work done block by block.

:func:`~hyperslab.codecs.cframe.decode_into` decodes a frame whose blocks are not
C-ordered slabs of its chunk (hdf5plugin's ``(2, 128, 256)`` blocks of ``(2, 500, 500)``
chunks) a group of blocks at a time into a per-thread buffer and copies each into place
(:mod:`.cframe_blocks`).  Work that needs no copy of the chunk (a reduction) takes the
blocks instead (:mod:`hyperslab.chunked.blockvisit`): :func:`frame_block_plan` lists them
after checking the frame, :func:`decompress_blocks` decodes some in one Blosc2 call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from hyperslab._typing import AnyArray
from hyperslab.codecs.cframe import SPECIAL_UNINIT, _byte_view, _check_shape, parse_frame
from hyperslab.codecs.cframe_blocks import BlockBoxes, locate_blocks
from hyperslab.codecs.cframe_region import FrameBlocks


class BlockPlan(NamedTuple):
    """The blocks of a frame to visit (see :func:`frame_block_plan`)."""

    blocks: FrameBlocks
    """The frame's blocks, as a partial read decodes them."""
    boxes: BlockBoxes
    """Each block holding data: its number and its place in the chunk (slices)."""


def frame_block_plan(buf: Any, itemsize: int, chunkshape: Sequence[int]) -> BlockPlan | None:
    """The blocks of a b2nd chunk frame whose blocks are not C-ordered slabs of the chunk
    (other writers' frames), to decode with :func:`decompress_blocks` for work done block
    by block while the blocks are in the core's cache (see
    :mod:`hyperslab.chunked.blockvisit`).  None for every other frame, and where the
    blocks cannot be decoded alone: decode those with :func:`decode_into`.

    Raises
    ------
    FrameError
        If the frame is malformed, or holds a chunk of another shape than ``chunkshape``.
    """
    view = _byte_view(buf)
    layout = parse_frame(view)
    _check_shape(layout, chunkshape)
    if (layout.special or layout.blockshape is None or layout.chunkshape is None
            or layout.typesize != itemsize
            or (layout.c_order and layout.chunk_nbytes == layout.nbytes)):
        return None
    chunk = view[layout.chunk_start : layout.chunk_stop]
    if (chunk[31] >> 4) & 0x07 == SPECIAL_UNINIT:
        return None
    located = locate_blocks(chunk, layout.shape, layout.chunkshape, layout.blockshape,
                            itemsize)
    if located is None:
        return None
    begins, ends, nbytes, boxes = located
    blockshape = tuple(layout.blockshape)
    return BlockPlan(FrameBlocks(chunk, blockshape, tuple(layout.chunkshape),
                                 math.prod(blockshape) * itemsize, nbytes, begins, ends,
                                 layout.chunk_start), boxes)


def decompress_blocks(plan: BlockPlan, numbers: Sequence[int], into: AnyArray) -> None:
    """Decompress blocks ``numbers`` of ``plan`` one after another into ``into`` (``uint8``,
    ``len(numbers)`` blocks' bytes), in one Blosc2 call, in this thread.

    Raises
    ------
    FrameError
        If they do not decompress.
    """
    plan.blocks.decode_many(numbers, into)


__all__ = ["BlockPlan", "decompress_blocks", "frame_block_plan"]

"""The blocks of other writers' b2nd frames, one at a time, for work done block by block.

:func:`~hyperslab.codecs.cframe.decode_into` decodes a frame whose blocks are not
C-ordered slabs of its chunk (hdf5plugin's ``(2, 128, 256)`` blocks of ``(2, 500, 500)``
chunks) block by block into a per-thread buffer and copies each into place
(:mod:`.cframe_blocks`).  Work that needs no copy of the chunk (a reduction) takes the
blocks instead (:mod:`hyperslab.chunked.blockvisit`): :func:`frame_block_parts` lists them
after checking the frame, :func:`decompress_block` decodes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperslab._typing import AnyArray
from hyperslab.codecs.cframe import (
    SPECIAL_UNINIT,
    _byte_view,
    _check_shape,
    _decompress,
    parse_frame,
)
from hyperslab.codecs.cframe_blocks import block_parts

BlockParts = tuple[tuple[int, ...], list[tuple[tuple[slice, ...], Any]]]
"""A frame's block shape, and each block holding data: its place in the chunk (slices)
and its one-block Blosc2 chunk (see :func:`frame_block_parts`)."""


def frame_block_parts(buf: Any, itemsize: int, chunkshape: Sequence[int]
                      ) -> BlockParts | None:
    """The blocks of a b2nd chunk frame whose blocks are not C-ordered slabs of the chunk
    (other writers' frames), each to decode alone with :func:`decompress_block` (into a
    buffer of the block shape) for work done block by block while the block is in the
    core's cache (see :mod:`hyperslab.chunked.blockvisit`).  None for every other frame,
    and where the blocks cannot be decoded alone: decode those with
    :func:`decode_into`.

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
    parts = block_parts(chunk, layout.shape, layout.chunkshape, layout.blockshape, itemsize)
    return None if parts is None else (layout.blockshape, parts)


def decompress_block(part: Any, into: AnyArray) -> None:
    """Decompress a block of :func:`frame_block_parts` into ``into`` (``uint8``, the
    block's bytes), in this thread.

    Raises
    ------
    FrameError
        If it does not decompress.
    """
    _decompress(part, into, 1)


__all__ = ["BlockParts", "decompress_block", "frame_block_parts"]

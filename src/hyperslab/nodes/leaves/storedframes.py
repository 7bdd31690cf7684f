"""The stored chunks (Blosc2 frames, or unfiltered) under a chunk-aligned box of a leaf, for
computations that decode them themselves (:mod:`hyperslab.codecs.cframe_expr`)."""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING, Any, Final

from hyperslab._typing import Shape
from hyperslab.chunked.engine import RawKind
from hyperslab.codecs.cframe_expr import HEADROOM, StoredChunks

if TYPE_CHECKING:
    from hyperslab.nodes.leaves.leaf import Leaf

__all__ = ["aligned_box", "stored_frames"]

MAX_FRAMES_BYTES: Final = 1 << 30
"""Stored bytes read for one call at most (they are all held at once)."""


def aligned_box(leaf: Leaf, corner: Shape, shape: Shape) -> bool:
    """Whether the box of ``shape`` at ``corner`` is whole chunks of ``leaf`` (its far
    edges on chunk boundaries or on the leaf's own edges)."""
    chunkshape = leaf.chunkshape
    if chunkshape is None or len(chunkshape) != len(shape) or 0 in shape:
        return False
    for start, length, chunk, extent in zip(corner, shape, chunkshape, leaf.shape,
                                            strict=True):
        stop = start + length
        if start % chunk or stop > extent or (stop % chunk and stop != extent):
            return False
    return True


def stored_frames(leaf: Leaf, corner: Shape, shape: Shape, slot: int = 0
                  ) -> StoredChunks | None:
    """The stored bytes of every chunk under the box of ``shape`` at ``corner``, in the C
    order of its chunk grid: Blosc2 frames, or unfiltered chunks (each after
    :data:`~hyperslab.codecs.cframe_expr.HEADROOM` free bytes).

    On read-only files they are read (``os.preadv``) into a buffer of the calling thread
    that its next call with the same ``slot`` reuses (fresh memory costs a page fault per
    4 KB), so they are valid until then: operands needed at once take different slots.

    None where they are not the data as such: a dataset with other filters, a non-native
    or non-scalar dtype, a box not made of whole chunks, a chunk never written (its values
    are the fill value), a chunk stored with its filter skipped, or more than
    :data:`MAX_FRAMES_BYTES` of them.
    """
    engine = leaf._engine
    dtype = leaf._dataset.dtype
    if engine.kind not in (RawKind.BLOSC2, RawKind.PLAIN) or not dtype.isnative \
            or dtype.fields is not None or dtype.subdtype is not None \
            or not aligned_box(leaf, corner, shape):
        return None
    chunkshape = leaf.chunkshape
    assert chunkshape is not None
    ranges = [range(start // chunk, -(-(start + length) // chunk))
              for start, length, chunk in zip(corner, shape, chunkshape, strict=True)]
    dataset = leaf._dataset
    with leaf._shared():
        grids = list(itertools.product(*ranges))
        locations = [dataset.chunk_location(grid) for grid in grids]
        if any(loc is None or loc.filter_mask for loc in locations):
            return None
        sizes = [loc.size for loc in locations if loc is not None]
        if sum(sizes) > MAX_FRAMES_BYTES:
            return None
        plain = engine.kind is RawKind.PLAIN
        headroom = HEADROOM if plain else 0
        buffer = _thread_buffer(sum(sizes) + headroom * len(sizes), slot)
        frames: list[Any] = []
        at = 0
        for grid, size in zip(grids, sizes, strict=True):
            view = buffer[at : at + headroom + size]
            at += headroom + size
            if dataset.read_raw_chunk_into(grid, view[headroom:]) is None:  # not read-only
                raw, mask = dataset.read_raw_chunk(grid)
                if mask or len(raw) != size:
                    return None
                view[headroom:] = raw
            frames.append(view)
    return StoredChunks(frames, plain, headroom)


_BUFFERS = threading.local()
"""Each thread's buffers (by slot) for the chunks it reads."""


def _thread_buffer(nbytes: int, slot: int) -> memoryview:
    buffers: dict[int, bytearray] | None = getattr(_BUFFERS, "by_slot", None)
    if buffers is None:
        buffers = _BUFFERS.by_slot = {}
    buffer = buffers.get(slot)
    if buffer is None or len(buffer) < nbytes:
        buffer = buffers[slot] = bytearray(nbytes)
    return memoryview(buffer)[:nbytes]

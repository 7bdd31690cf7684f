"""The stored chunks (Blosc2 frames, or unfiltered) under a chunk-aligned box of a leaf, for
computations that decode them themselves (:mod:`hyperslab.codecs.cframe_expr`)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final

from hyperslab._typing import Shape
from hyperslab.chunked.engine import RawKind
from hyperslab.codecs.cframe_expr import StoredChunks
from hyperslab.errors import NoSuchChunkError

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


def stored_frames(leaf: Leaf, corner: Shape, shape: Shape) -> StoredChunks | None:
    """The stored bytes of every chunk under the box of ``shape`` at ``corner``, in the C
    order of its chunk grid: Blosc2 frames, or unfiltered chunks.

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
    frames: list[Any] = []
    total = 0
    dataset = leaf._dataset
    with leaf._shared():
        for grid in itertools.product(*ranges):
            try:
                raw, mask = dataset.read_raw_chunk(grid)
            except NoSuchChunkError:
                return None
            total += len(raw)
            if mask or total > MAX_FRAMES_BYTES:
                return None
            frames.append(raw)
    return StoredChunks(frames, engine.kind is RawKind.PLAIN)


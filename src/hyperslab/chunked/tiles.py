"""Tiling a dataset into chunk-aligned boxes of a few megabytes, for streaming work.

Reductions and expressions read a dataset box by box: each box is a whole number of
chunks (so it is decoded whole, through the fast path where there is one) and about
``target_bytes`` big, grown from the last dimension first so that boxes are C-contiguous
slabs of the dataset where the chunk shape allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.regions import Box

TILE_BYTES = 8 << 20
"""Default size of a tile: a few chunks of L3, small against the memory of any machine."""


def tile_shape(shape: Shape, chunkshape: Shape | None, itemsize: int,
               target_bytes: int = TILE_BYTES, first: Sequence[int] = ()) -> Shape:
    """The shape of the tiles of a dataset (chunk multiples, at most the dataset's).

    Tiles grow one axis at a time, from the last axis to the first, the axes in ``first``
    before the others: a reduction along those axes then gets tiles long along them, so
    that each tile's partial result (the tile less those axes) is small and stays in
    cache while the tile is summed into it, and there are few partials to combine.

    Examples
    --------
    >>> tile_shape((100, 100, 100), (10, 10, 100), 8, 800_000)
    (10, 100, 100)
    >>> tile_shape((100, 100, 100), (10, 10, 100), 8, 800_000, first=(0,))
    (100, 10, 100)
    >>> tile_shape((1000,), None, 8, 800)
    (100,)
    """
    if not shape:
        return ()
    # Contiguous datasets are tiled in slabs of whole rows.
    unit = tuple(chunkshape) if chunkshape else (1, *shape[1:])
    tile = [max(1, min(u, n)) for u, n in zip(unit, shape, strict=True)]
    budget = max(1, target_bytes // max(1, itemsize))
    ndim = len(shape)
    leading = sorted({a % ndim for a in first if -ndim <= a < ndim}, reverse=True)
    order = leading + [a for a in range(ndim - 1, -1, -1) if a not in leading]
    for axis in order:
        rest = math.prod(tile) // tile[axis]
        fit = max(1, budget // max(1, rest * tile[axis]))
        tile[axis] = min(shape[axis], tile[axis] * fit)
        if tile[axis] < shape[axis]:
            break
    return tuple(max(1, t) for t in tile)


def tiles(shape: Shape, tile: Sequence[int]) -> Iterator[Box]:
    """The boxes of a tiling of ``shape`` by ``tile``, in C order, generated as they are
    consumed (a huge extent has more tiles than memory could list)."""
    if any(n == 0 for n in shape):
        return
    ranges = [range(0, n, t) for n, t in zip(shape, tile, strict=True)]
    for corner in _corners(ranges):  # not itertools.product: it lists its ranges first
        yield tuple((start, min(start + t, n))
                    for start, t, n in zip(corner, tile, shape, strict=True))


def _corners(ranges: Sequence[range]) -> Iterator[tuple[int, ...]]:
    """The product of ``ranges`` in C order, generated lazily."""
    if not ranges:
        yield ()
        return
    for start in ranges[0]:
        for rest in _corners(ranges[1:]):
            yield (start, *rest)


def count_tiles(shape: Shape, tile: Sequence[int]) -> int:
    """How many boxes :func:`tiles` yields.

    Examples
    --------
    >>> count_tiles((10, 7), (4, 7))
    3
    """
    return math.prod(-(-n // t) for n, t in zip(shape, tile, strict=True))


@dataclass(frozen=True)
class Uniform:
    """A tile every element of which is ``value``: a box of chunks never written, which
    read as the dataset's fill value.  Streaming work takes it in closed form (a sum is
    the value times the count), so a box of 2**40 such elements costs what one does.

    Examples
    --------
    >>> tile = Uniform(np.float64(2.0), (3, 4))
    >>> tile.size, tile.materialize().sum()
    (12, np.float64(24.0))
    """

    value: np.generic
    shape: Shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The elements' dtype."""
        return self.value.dtype

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    def materialize(self) -> AnyArray:
        """The tile as a (read-only, broadcast) array."""
        return np.broadcast_to(np.asarray(self.value), self.shape)

    def shrunk(self, axes: Sequence[int]) -> AnyArray:
        """An array of the value, of the tile's shape with ``axes`` of length 1."""
        return np.full(tuple(1 if d in axes else n for d, n in enumerate(self.shape)),
                       self.value, dtype=self.dtype)


__all__ = ["TILE_BYTES", "Uniform", "count_tiles", "tile_shape", "tiles"]

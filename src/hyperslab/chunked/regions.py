"""Chunk geometry: which chunks a box of a dataset touches, and what part of each.

A *box* is a per-dimension ``[start, stop)`` range of a dataset (a selection made of ints and
step-1 slices).  :func:`chunk_pieces` splits it at chunk boundaries into :class:`ChunkPiece`
objects, each saying where the piece lies in the chunk and in the box, and whether it covers
the whole of the chunk that lies inside the dataset (then the chunk can be written without
reading it first).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Sequence

from hyperslab._typing import Shape

Box = tuple[tuple[int, int], ...]
"""Per-dimension ``(start, stop)`` ranges, ``start < stop``."""


@dataclasses.dataclass(frozen=True, slots=True)
class ChunkPiece:
    """The part of one chunk that a box covers.

    Attributes
    ----------
    grid : tuple of int
        The chunk's grid coordinates (chunk numbers along each dimension).
    in_chunk : tuple of slice
        Where the piece lies inside the chunk.
    in_box : tuple of slice
        Where the piece lies inside the box (the output or input array of the box's shape).
    whole : bool
        Whether the piece is all of the chunk that lies inside the dataset.
    full_chunk : bool
        Whether the piece is the full chunk (``whole`` and not an edge chunk).
    """

    grid: tuple[int, ...]
    in_chunk: tuple[slice, ...]
    in_box: tuple[slice, ...]
    whole: bool
    full_chunk: bool


def box_shape(box: Box) -> Shape:
    """The shape of the data a box holds."""
    return tuple(stop - start for start, stop in box)


def _axis_pieces(start: int, stop: int, chunk: int, length: int) -> list[tuple[int, slice, slice,
                                                                              bool, bool]]:
    """The pieces of ``[start, stop)`` along one axis of ``length`` with chunks of ``chunk``."""
    pieces = []
    for number in range(start // chunk, (stop - 1) // chunk + 1):
        chunk_start = number * chunk
        lo = max(start, chunk_start)
        hi = min(stop, chunk_start + chunk)
        inside = min(chunk_start + chunk, length) - chunk_start
        whole = lo == chunk_start and hi - chunk_start == inside
        pieces.append((
            number,
            slice(lo - chunk_start, hi - chunk_start),
            slice(lo - start, hi - start),
            whole,
            whole and inside == chunk,
        ))
    return pieces


def chunk_pieces(box: Box, shape: Shape, chunkshape: Shape) -> Iterator[ChunkPiece]:
    """Split a box of a dataset of ``shape`` into per-chunk pieces, in C order of the grid.

    Examples
    --------
    >>> [(p.grid, p.whole) for p in chunk_pieces(((0, 5),), (5,), (2,))]
    [((0,), True), ((1,), True), ((2,), True)]
    >>> [p.full_chunk for p in chunk_pieces(((0, 5),), (5,), (2,))]
    [True, True, False]
    """
    axes = [
        _axis_pieces(start, stop, chunk, length)
        for (start, stop), chunk, length in zip(box, chunkshape, shape, strict=True)
    ]
    for combo in itertools.product(*axes):
        yield ChunkPiece(
            grid=tuple(p[0] for p in combo),
            in_chunk=tuple(p[1] for p in combo),
            in_box=tuple(p[2] for p in combo),
            whole=all(p[3] for p in combo),
            full_chunk=all(p[4] for p in combo),
        )


def box_of(h5key: Sequence[object], shape: Shape) -> Box | None:
    """The box a planned selection key reads, or None if it is not a box.

    ``h5key`` holds ints and slices with a positive step (see
    :func:`~hyperslab.chunked.selection.plan_selection`); only ints and step-1 slices make a
    box.
    """
    box = []
    for item, length in zip(h5key, shape, strict=True):
        if type(item) is int:
            box.append((item, item + 1))
        elif isinstance(item, slice) and item.step in (None, 1):
            start, stop, _ = item.indices(length)
            if stop <= start:
                return None
            box.append((start, stop))
        else:
            return None
    return tuple(box)


ByteRun = tuple[tuple[int, ...], int, int, int]
"""``(grid coords, start in the chunk, start in the box, length)``, the last three in bytes."""


def byte_runs(box: Box, chunkshape: Shape, itemsize: int) -> list[ByteRun] | None:
    """Each chunk's part of ``box`` as one run of bytes in the stored chunk (C order) and
    in a C-contiguous array of the box's shape, in C order of the chunks; None if some
    chunk's part is not one run.

    That holds when the chunks are one item long along the leading dimensions and the box
    spans exactly one whole chunk along the trailing ones (after the first dimension where
    chunks are longer than one item); the box may start and end anywhere along that one.

    Examples
    --------
    >>> byte_runs(((0, 2), (3, 10)), (1, 4), 1)
    [((0, 0), 3, 0, 1), ((0, 1), 0, 1, 4), ((0, 2), 0, 5, 2), ((1, 0), 3, 7, 1), \
((1, 1), 0, 8, 4), ((1, 2), 0, 12, 2)]
    >>> byte_runs(((0, 2), (0, 3)), (2, 3), 8)               # one whole chunk
    [((0, 0), 0, 0, 48)]
    >>> byte_runs(((0, 4), (0, 3)), (2, 2), 8) is None       # rows split across chunks
    True
    """
    ndim = len(box)
    if ndim == 0 or len(chunkshape) != ndim:
        return None
    lead = next((d for d, c in enumerate(chunkshape) if c > 1), ndim - 1)
    trailing = []
    for d in range(lead + 1, ndim):
        lo, hi = box[d]
        if lo % chunkshape[d] or hi - lo != chunkshape[d]:
            return None
        trailing.append(lo // chunkshape[d])
    run = itemsize * math.prod(chunkshape[lead + 1:])  # bytes of one step along ``lead``
    strides = [itemsize * math.prod(hi - lo for lo, hi in box[d + 1:]) for d in range(lead)]
    lo, hi = box[lead]
    c = chunkshape[lead]
    along = []  # (chunk number, start in the chunk, start in the box, length) along lead
    for number in range(lo // c, (hi - 1) // c + 1):
        begin, end = max(number * c, lo), min(number * c + c, hi)
        along.append((number, (begin - number * c) * run, (begin - lo) * run,
                      (end - begin) * run))
    tail = tuple(trailing)
    if lead == 0:
        return [((number, *tail), start, at, size) for number, start, at, size in along]
    runs: list[ByteRun] = []
    for corner in itertools.product(*(range(b_lo, b_hi) for b_lo, b_hi in box[:lead])):
        base = sum((i - b[0]) * st for i, b, st in zip(corner, box, strides, strict=False))
        runs.extend(((*corner, number, *tail), start, base + at, size)
                    for number, start, at, size in along)
    return runs

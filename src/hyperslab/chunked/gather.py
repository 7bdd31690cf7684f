"""Chunk geometry of any planned selection: which chunks it touches, and what of each.

:mod:`.regions` splits *boxes* (ints and step-1 slices).  This module splits the keys that
:func:`~hyperslab.chunked.selection.plan_selection` produces in general: per dimension an
int, a slice with a positive step, or one sorted array of unique indices.  Each
:class:`GatherPiece` says which items of one chunk are selected (per dimension a slice, with
its step, or an index array, relative to the chunk), the bounding box of those items in the
chunk (what must be decompressed), and where the items land in the output.  The output has
one axis per dataset dimension, an int being an axis of length 1.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import numpy as np

from hyperslab._typing import AnyArray, Shape

AxisSelection = slice | AnyArray
"""What one piece selects along one axis of its chunk: a slice (any positive step) or an
``int64`` array of increasing positions."""


@dataclasses.dataclass(frozen=True, slots=True)
class GatherPiece:
    """The selected items of one chunk.

    Attributes
    ----------
    grid : tuple of int
        The chunk's grid coordinates.
    in_chunk : tuple
        Per dimension, the selected positions in the chunk (:data:`AxisSelection`).
    bounds : tuple of slice
        The step-1 bounding box of those positions in the chunk.
    in_out : tuple of slice
        Where the items land in the output (one axis per dimension).
    full_chunk : bool
        Whether the piece is every item of a chunk lying wholly inside the dataset.
    """

    grid: tuple[int, ...]
    in_chunk: tuple[AxisSelection, ...]
    bounds: tuple[slice, ...]
    in_out: tuple[slice, ...]
    full_chunk: bool

    def within_bounds(self) -> tuple[AxisSelection, ...]:
        """:attr:`in_chunk` relative to :attr:`bounds` (for data decoded for the bounds)."""
        local: list[AxisSelection] = []
        for sel, bound in zip(self.in_chunk, self.bounds, strict=True):
            if isinstance(sel, slice):
                local.append(slice(sel.start - bound.start, sel.stop - bound.start, sel.step))
            else:
                local.append(sel - bound.start)
        return tuple(local)


LISTED_PIECES = 4096
"""Selections touching at most this many chunks have their pieces listed at once (fast);
bigger ones are planned lazily (see :func:`gather_pieces`)."""

_Axis = tuple[int, AxisSelection, slice, slice, bool]
"""One axis of a piece: chunk number, selection in the chunk, bounds, output slice, and
whether it is the whole of a chunk inside the dataset."""


def _slice_axis(item: slice, length: int, chunk: int) -> Iterator[_Axis]:
    """The pieces of a positive-step slice, chunk by chunk.

    Only the chunks holding a selected item are visited (a step longer than the chunks
    jumps over the others), so the work is bounded by the items selected, not by the
    extent.
    """
    start, stop, step = item.indices(length)
    count = len(range(start, stop, step))
    if count == 0:
        return
    last = start + (count - 1) * step
    first = start
    while first <= last:
        number = first // chunk
        base = number * chunk
        end = min(last + 1, base + chunk)
        k = (end - 1 - first) // step + 1
        local_first = first - base
        local_last = local_first + (k - 1) * step
        whole = step == 1 and local_first == 0 and k == chunk and base + chunk <= length
        at = (first - start) // step
        yield (
            number,
            slice(local_first, local_last + 1, step),
            slice(local_first, local_last + 1),
            slice(at, at + k),
            whole,
        )
        first += k * step  # the next selected item: in a later chunk


def _array_axis(indices: AnyArray, length: int, chunk: int) -> Iterator[_Axis]:
    coords = np.asarray(indices, dtype=np.int64)
    if coords.size == 0:
        return
    numbers = coords // chunk
    cuts = np.flatnonzero(np.diff(numbers)) + 1
    begin = 0
    for end in [*cuts.tolist(), len(coords)]:
        number = int(numbers[begin])
        local = coords[begin:end] - number * chunk
        first, last = int(local[0]), int(local[-1])
        whole = (end - begin == chunk and first == 0 and last == chunk - 1
                 and (number + 1) * chunk <= length)
        yield number, local, slice(first, last + 1), slice(begin, end), whole
        begin = end


def _axis_size(item: Any, length: int) -> int:
    """The output length of one axis of a planned key."""
    if isinstance(item, slice):
        return len(range(*item.indices(length)))
    if isinstance(item, np.ndarray):
        return int(item.size)
    return 1


def _axis_pieces(item: Any, length: int, chunk: int) -> Iterator[_Axis]:
    """The pieces of one axis of a planned key, chunk by chunk (lazily)."""
    if isinstance(item, slice):
        yield from _slice_axis(item, length, chunk)
        return
    if isinstance(item, np.ndarray):
        yield from _array_axis(item, length, chunk)
        return
    index = int(item)
    number, local = divmod(index, chunk)
    yield (number, slice(local, local + 1), slice(local, local + 1), slice(0, 1),
           chunk == 1 and index < length)


def _combinations(axes: Sequence[Callable[[], Iterator[_Axis]]]) -> Iterator[tuple[_Axis, ...]]:
    """``itertools.product`` of the axes' pieces, each axis generated afresh when needed
    (nothing is materialized: an axis may have millions of pieces)."""
    if not axes:
        yield ()
        return
    if len(axes) == 1:
        for piece in axes[0]():
            yield (piece,)
        return
    for piece in axes[0]():
        for rest in _combinations(axes[1:]):
            yield (piece, *rest)


def gather_pieces(
    h5key: Sequence[Any], shape: Shape, chunkshape: Shape
) -> tuple[Shape, Iterable[GatherPiece]]:
    """Split a planned selection key into per-chunk pieces, in C order of the grid.

    Only chunks holding selected items are visited, so the work is bounded by what is
    read, whatever the extent.  Selections touching at most :data:`LISTED_PIECES` chunks
    get a list; bigger ones an iterator that plans the pieces as they are consumed (memory
    bounded too).

    Parameters
    ----------
    h5key : sequence
        Per dimension an int, a slice with a positive step, or a sorted array of unique
        indices (as :class:`~hyperslab.chunked.selection.SelectionPlan` holds them).
    shape, chunkshape : tuple of int
        The dataset's shape and chunk shape.

    Returns
    -------
    tuple
        ``(out_shape, pieces)``: the output's shape (one axis per dimension, an int being
        an axis of length 1) and the pieces (a list, or an iterator for many chunks).

    Examples
    --------
    >>> out, pieces = gather_pieces((slice(1, 10, 4),), (10,), (4,))
    >>> out, [(p.grid, p.in_chunk, p.in_out) for p in pieces]
    ((3,), [((0,), (slice(1, 2, 4),), (slice(0, 1, None),)), ((1,), (slice(1, 2, 4),), \
(slice(1, 2, None),)), ((2,), (slice(1, 2, 4),), (slice(2, 3, None),))])
    >>> gather_pieces((), (), ())  # no dimensions: one piece, the whole of it
    ((), [GatherPiece(grid=(), in_chunk=(), bounds=(), in_out=(), full_chunk=True)])
    """
    out_shape = tuple(_axis_size(item, length) for item, length in zip(h5key, shape,
                                                                         strict=True))
    if 0 in out_shape:
        return out_shape, []
    axes = [functools.partial(_axis_pieces, item, length, chunk)
            for item, length, chunk in zip(h5key, shape, chunkshape, strict=True)]
    listed = count_key_chunks(h5key, shape, chunkshape) <= LISTED_PIECES
    # A few chunks (the common case): the axes listed, their product taken at once.
    combos = (itertools.product(*(list(axis()) for axis in axes)) if listed
              else _combinations(axes))
    pieces = (_piece(*zip(*combo, strict=True)) if combo else _SCALAR_PIECE
              for combo in combos)
    return out_shape, list(pieces) if listed else pieces


_SCALAR_PIECE: Final = GatherPiece((), (), (), (), True)
"""The one piece of a key of no dimensions."""


def _piece(grid: tuple[int, ...], in_chunk: tuple[AxisSelection, ...],
           bounds: tuple[slice, ...], in_out: tuple[slice, ...],
           full: tuple[bool, ...]) -> GatherPiece:
    """The piece of one chunk, from its axes' parts (:func:`_axis_pieces`) transposed."""
    return GatherPiece(grid, in_chunk, bounds, in_out, all(full))


def whole_chunk_of(key: Any, shape: Shape, chunkshape: Shape
                   ) -> tuple[tuple[int, ...], Shape] | None:
    """The chunk a key of ints selects exactly, and the shape of the result.

    That is an int, or a tuple of ints, in bounds, for leading dimensions along which the
    chunks hold one item, the chunks spanning the other dimensions whole: ``arr[c]`` of a
    stack of images stored one per chunk.  None for any other key (negative ints count
    from the end, as NumPy's; out-of-bounds ones are left to the general path's errors).

    Examples
    --------
    >>> whole_chunk_of(-1, (10, 4, 6), (1, 4, 6))
    ((9, 0, 0), (4, 6))
    >>> whole_chunk_of((2, 3), (10, 5, 6), (1, 1, 6))
    ((2, 3, 0), (6,))
    >>> whole_chunk_of(2, (10, 4, 6), (1, 2, 6)) is None  # a chunk holds half a row
    True
    """
    ints = (key,) if type(key) is int else key if type(key) is tuple else ()
    count = len(ints)
    if not 0 < count < len(shape) or tuple(chunkshape[count:]) != tuple(shape[count:]):
        return None
    grid = []
    for index, length, chunk in zip(ints, shape, chunkshape, strict=False):
        if type(index) is not int or chunk != 1 or not -length <= index < length:
            return None
        grid.append(index + length if index < 0 else index)
    return (*grid, *(0 for _ in shape[count:])), tuple(shape[count:])


def count_key_chunks(h5key: Sequence[Any], shape: Shape, chunkshape: Shape) -> int:
    """How many chunks a planned selection key touches (at most; a step longer than a
    chunk may skip some)."""
    total = 1
    for item, length, chunk in zip(h5key, shape, chunkshape, strict=True):
        if isinstance(item, slice):
            start, stop, step = item.indices(length)
            count = len(range(start, stop, step))
            if count == 0:
                return 0
            last = start + (count - 1) * step
            total *= min(count, last // chunk - start // chunk + 1)
        elif isinstance(item, np.ndarray):
            total *= len(np.unique(np.asarray(item, dtype=np.int64) // chunk))
    return total


def spans_more_chunks(h5key: Sequence[Any], shape: Shape, chunkshape: Shape) -> bool:
    """Whether a planned selection key selects fewer items than there are chunks in its
    bounding box (a step longer than the chunks, indices far apart).

    HDF5 maps such a hyperslab to chunks by visiting every chunk of the bounding box, which
    on a huge (sparse, or damaged) extent never ends; they must be read chunk by chunk or
    as points instead.

    Examples
    --------
    >>> spans_more_chunks((slice(0, 10**12, 10**9),), (10**12,), (1000,))
    True
    >>> spans_more_chunks((slice(0, 10**6, 3),), (10**6,), (1000,))
    False
    """
    items = 1
    spanned = 1
    for item, length, chunk in zip(h5key, shape, chunkshape, strict=True):
        if isinstance(item, slice):
            start, stop, step = item.indices(length)
            count = len(range(start, stop, step))
            if count == 0:
                return False
            items *= count
            spanned *= (start + (count - 1) * step) // chunk - start // chunk + 1
        elif isinstance(item, np.ndarray):
            if item.size == 0:
                return False
            items *= int(item.size)
            spanned *= int(item[-1]) // chunk - int(item[0]) // chunk + 1
    return spanned > items


def selected_coords(h5key: Sequence[Any], shape: Shape) -> AnyArray:
    """The coordinates of the items a planned selection key selects, in C order: an
    ``(n, rank)`` int64 array (for point reads of a few items)."""
    axes = []
    for item, length in zip(h5key, shape, strict=True):
        if isinstance(item, slice):
            axes.append(np.arange(*item.indices(length), dtype=np.int64))
        elif isinstance(item, np.ndarray):
            axes.append(item.astype(np.int64, copy=False))
        else:
            axes.append(np.array([int(item)], dtype=np.int64))
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=-1)


__all__ = [
    "LISTED_PIECES", "AxisSelection", "GatherPiece", "count_key_chunks",
    "gather_pieces", "selected_coords", "spans_more_chunks", "whole_chunk_of",
]

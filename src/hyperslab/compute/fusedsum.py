"""Sums of expressions over Blosc2 arrays, evaluated inside Blosc2's decompression.

``Expr("a * 2 + sin(a)", ...).sum()`` (and ``mean``) over float64 Blosc2 or unfiltered
arrays of one chunk layout does not decode tiles for numexpr: the stored chunks are handed,
a group of chunk rows at a time, to python-blosc2, whose miniexpr engine evaluates the
expression block by block as it decompresses and sums each block in cache, in its own
threads (:mod:`hyperslab.codecs.cframe_expr`).  Its transcendental functions are SIMD ones
within one ulp of libm's (which NumPy and numexpr call), 3-4x faster; a sum of values
differs from NumPy's by the order of additions, as the tile path's does.

Everything else (other dtypes, operands of other layouts or in memory, chunks never
written or that do not decompress, inputs ranges, an expression miniexpr does not compile, a
process whose allocator gives freed memory back at once) returns None: the caller evaluates
tiles with numexpr as before.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from hyperslab._typing import Shape
from hyperslab.codecs.allocator import allocator_returns_memory
from hyperslab.codecs.cframe_expr import (
    FUSED_DTYPE,
    StoredChunks,
    fusable,
    fused_sum,
    values_sum,
)
from hyperslab.nodes.leaves.reducible import operand_buffers, read_leaf_box
from hyperslab.nodes.leaves.storedframes import aligned_box, stored_frames

__all__ = ["GROUP_BYTES", "MIN_ITEMS", "expression_sum"]

MIN_ITEMS = 1 << 20
"""Smaller expressions are left to numexpr's tiles: they take a few ms at most there, and
the first fused sum of an expression costs 20-40 ms of checks (``sums_as_numexpr``)."""

GROUP_BYTES: Final = 64 << 20
"""Uncompressed bytes of the chunk rows handed to python-blosc2 in one call (at least one
row of chunks)."""


def _placement(value: Any) -> tuple[Any, Shape] | None:
    """The leaf an operand reads and the corner of its box in it: a leaf itself, or a
    :class:`~hyperslab.compute.daskio.exprs.Window` of one; None for anything else."""
    corner = getattr(value, "_corner", None)
    if corner is not None and hasattr(value._leaf, "_engine"):
        return value._leaf, tuple(corner)
    if hasattr(value, "_engine") and hasattr(value, "_dataset") and hasattr(value, "chunkshape"):
        return value, (0,) * len(value.shape)
    return None


def _operands(expr: Any) -> dict[str, tuple[Any, Shape]] | None:
    """Each operand's leaf and corner, if the expression qualifies (module docstring)."""
    shape = tuple(expr.shape)
    if (expr._kwargs or expr.dtype != FUSED_DTYPE or not shape or math.prod(shape) < MIN_ITEMS
            or expr.maindim is None
            or expr._input_range() != (0, shape[expr.maindim], 1)):
        return None
    placed: dict[str, tuple[Any, Shape]] = {}
    chunkshapes = set()
    for name, value in expr._operands.items():
        where = _placement(value)
        if where is None or tuple(value.shape) != shape or np.dtype(value.dtype) != FUSED_DTYPE:
            return None
        leaf, corner = where
        if not aligned_box(leaf, corner, shape):
            return None
        chunkshapes.add(tuple(leaf.chunkshape))
        placed[name] = where
    if len(chunkshapes) != 1 or not fusable(expr.expression, list(placed)):
        return None
    return placed


def expression_sum(expr: Any) -> np.float64 | None:
    """The sum of ``expr``'s values computed by python-blosc2 over its operands' stored
    chunks, or None where that does not apply (see the module docstring).

    python-blosc2 evaluates in as many threads as the first operand's File has workers,
    also within a Dask task: it holds the GIL while it works, so tasks of one process do
    not evaluate at once.  Where the allocator returns freed memory at once
    (:mod:`hyperslab.codecs.allocator`, as in dask.distributed's workers) miniexpr's
    buffers for every stored block (128 KiB and more) would be fresh pages, slower than
    numexpr's tiles: there the values are decoded as reads decode them and evaluated in
    blocks of 16 KiB.
    """
    placed = _operands(expr)
    if placed is None:
        return None
    shape = tuple(expr.shape)
    first_leaf = next(iter(placed.values()))[0]
    chunkshape = first_leaf.chunkshape
    nthreads = first_leaf._engine.workers
    decoded = allocator_returns_memory()
    row_bytes = math.prod(shape[1:]) * chunkshape[0] * FUSED_DTYPE.itemsize
    rows = max(1, GROUP_BYTES // max(1, row_bytes)) * chunkshape[0]
    total = np.float64(0.0)
    for first in range(0, shape[0], rows):
        length = min(rows, shape[0] - first)
        group_shape = (length, *shape[1:])
        if decoded:
            partial = _decoded_sum(expr.expression, placed, first, group_shape, nthreads)
        else:
            partial = _stored_sum(expr.expression, placed, first, group_shape, chunkshape,
                                  nthreads)
        if partial is None:
            return None
        total += partial
    return total


def _stored_sum(expression: str, placed: dict[str, tuple[Any, Shape]], first: int,
                group_shape: Shape, chunkshape: Shape, nthreads: int) -> np.float64 | None:
    """The sum over one group of chunk rows, from the stored chunks."""
    frames: dict[str, StoredChunks] = {}
    for slot, (name, (leaf, corner)) in enumerate(placed.items()):
        found = stored_frames(leaf, (corner[0] + first, *corner[1:]), group_shape, slot)
        if found is None:
            return None
        frames[name] = found
    return fused_sum(expression, frames, group_shape, chunkshape, nthreads)


def _decoded_sum(expression: str, placed: dict[str, tuple[Any, Shape]], first: int,
                 group_shape: Shape, nthreads: int) -> np.float64 | None:
    """The sum over one group of chunk rows, from its values decoded as reads decode them
    (into the thread's buffer for the operand, which the tiles of a Dask task's Window
    use too), copied into Blosc2 chunks of small blocks
    (:func:`~hyperslab.codecs.cframe_expr.values_sum`): where the allocator returns freed
    memory at once, miniexpr's buffers for the stored blocks would be fresh pages."""
    values: dict[str, Any] = {}
    for slot, (name, (leaf, corner)) in enumerate(placed.items()):
        key = tuple(slice(at + (first if axis == 0 else 0),
                          at + (first if axis == 0 else 0) + length)
                    for axis, (at, length) in enumerate(zip(corner, group_shape, strict=True)))
        values[name] = read_leaf_box(leaf, key, True, operand_buffers(slot))
    return values_sum(expression, values, nthreads)

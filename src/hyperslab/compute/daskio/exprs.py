"""``Expr.to_dask()``: an expression over on-disk arrays as a dask array.

Each task evaluates :class:`hyperslab.Expr` on its block, with every on-disk operand seen
through a :class:`Window` (the operand's part under the block): tiles of the block are
read (into buffers the thread reuses), evaluated by numexpr in one pass (no temporaries
the size of the block) and, for ``sum``, ``prod``, ``min``, ``max`` and ``mean``, reduced
while in cache, so a reduction of an expression materializes neither its operands nor its
values.  The graph holds the leaves, which pickle when their file is open read-only: it
runs on any scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from hyperslab._typing import AnyArray
from hyperslab.compute.conditions import serial_numexpr
from hyperslab.compute.daskio.arrays import aligned_chunks, graph_token
from hyperslab.compute.daskio.fused import FusedArray, block_keys, opening_token
from hyperslab.compute.expressions import Expr, is_on_disk
from hyperslab.nodes.leaves.reducible import operand_buffers, read_leaf_box

__all__ = ["ExprArray", "Window", "expr_block_eval", "expr_block_reduce", "expr_to_dask"]

Operands = Mapping[str, Any]
"""An expression's operands by name: leaves (or columns) and NumPy arrays."""

Spec = tuple[str, Operands, dict[str, Any], np.dtype[Any]]
"""What a task needs of an expression: its text, operands, numexpr keywords and result
dtype."""

class Window:
    """An on-disk operand seen through one block: ``leaf[key]`` as an operand of
    :class:`~hyperslab.Expr` (the protocol of :func:`hyperslab.compute.expressions.is_on_disk`),
    its tiles read in the calling thread into a reused buffer."""

    maindim = 0

    def __init__(self, leaf: Any, key: tuple[slice, ...], position: int) -> None:
        self._leaf = leaf
        self._corner = tuple(int(k.start) for k in key)
        self.shape: tuple[int, ...] = tuple(int(k.stop) - int(k.start) for k in key)
        self.dtype: np.dtype[Any] = np.dtype(leaf.dtype)
        self._buffers = operand_buffers(position)

    def _tile_engine(self) -> None:
        """None: the task evaluates its tiles in its own thread (Dask runs the tasks in
        parallel)."""
        return None

    def _tile_chunkshape(self) -> tuple[int, ...] | None:
        chunkshape: tuple[int, ...] | None = self._leaf._tile_chunkshape()
        return chunkshape

    def _read_tile(self, box: tuple[tuple[int, int], ...], step: int = 1) -> AnyArray:
        key = tuple(slice(at + lo, at + hi, step if axis == 0 else 1)
                    for axis, ((lo, hi), at) in enumerate(zip(box, self._corner, strict=True)))
        buffers = self._buffers if step == 1 else None
        return read_leaf_box(self._leaf, key, True, buffers)


def _operand_key(shape: tuple[int, ...], key: tuple[slice, ...]) -> tuple[slice, ...]:
    """The part of an operand of ``shape`` under the result's block ``key`` (NumPy's
    broadcasting: trailing dimensions, length-1 dimensions whole)."""
    offset = len(key) - len(shape)
    return tuple(slice(0, 1) if n == 1 and (k.stop - k.start) != 1 else k
                 for n, k in zip(shape, key[offset:], strict=True))


class _BlockExpr(Expr):
    """The expression on one (non-empty) block of its result, whose shape and dtype are
    known: the whole expression's were found when it was made, so no row is read again to
    find them (a few ms a task, spent decoding the chunks of the block's first row)."""

    def __init__(self, expression: str, uservars: Mapping[str, Any],
                 shape: tuple[int, ...], dtype: np.dtype[Any], kwargs: Mapping[str, Any]
                 ) -> None:
        self._known_shape = shape
        self._known_dtype = dtype
        super().__init__(expression, uservars, **kwargs)

    def _guess_shape(self) -> tuple[int | None, tuple[int, ...], Any]:
        return 0, self._known_shape, np.zeros((), dtype=self._known_dtype)


def _block_expr(spec: Spec, key: tuple[slice, ...]) -> Expr:
    """The expression of ``spec`` on the block ``key`` of its result."""
    expression, operands, kwargs, dtype = spec
    uservars: dict[str, Any] = {}
    for position, (name, value) in enumerate(operands.items()):
        part = _operand_key(tuple(value.shape), key)
        if is_on_disk(value):
            uservars[name] = Window(value, part, position)
        else:
            uservars[name] = np.asarray(value)[part]
    shape = tuple(int(k.stop) - int(k.start) for k in key)
    if 0 in shape:
        return Expr(expression, uservars, **kwargs)
    return _BlockExpr(expression, uservars, shape, dtype, kwargs)


def expr_block_eval(spec: Spec, key: tuple[slice, ...]
                    ) -> AnyArray:
    """A task: the expression's values on the block ``key``."""
    with serial_numexpr():
        return np.asarray(_block_expr(spec, key).eval())


def expr_block_reduce(spec: Spec, key: tuple[slice, ...],
                      op: str, axes: tuple[int, ...], dtype: Any) -> AnyArray:
    """A task: the ``op`` of the expression's values on the block ``key`` along ``axes``
    (kept, of length 1), tile by tile."""
    from hyperslab.compute.reductions import reduce

    with serial_numexpr():
        source = _block_expr(spec, key)._reduction_source()
        return np.asarray(reduce(source, op, axes, dtype=dtype, keepdims=True))


class ExprArray(FusedArray):
    """The dask array of an expression (:meth:`hyperslab.Expr.to_dask`), whose ``sum``,
    ``prod``, ``min``, ``max`` and ``mean`` evaluate and reduce each block in one task."""

    _hyperslab_spec: Spec

    def _block_task(self, key: tuple[slice, ...], op: str, axes: tuple[int, ...],
                    dtype: Any) -> tuple[Any, ...]:
        return (expr_block_reduce, self._hyperslab_spec, key, op, axes, dtype)

    def _files(self) -> list[Any]:
        return [v._v_file for v in self._hyperslab_spec[1].values() if is_on_disk(v)]


def expr_to_dask(expr: Expr, chunks: Any = None) -> ExprArray:
    """A dask array of ``expr``'s result (see :meth:`hyperslab.Expr.to_dask`)."""
    if expr.maindim is None or not expr._broadcasts():
        raise ValueError(f"Expr.to_dask needs operands of at least one dimension that "
                         f"broadcast as NumPy arrays along dimension 0; the operands of "
                         f"{expr.expression!r} have shapes "
                         f"{[tuple(v.shape) for v in expr.values]}")
    if (expr.start, expr.stop, expr.step) != (None, None, None) or expr.out is not None:
        raise ValueError("Expr.to_dask takes the whole result: an inputs range or an "
                         "output set with set_inputs_range/set_output is not used by it; "
                         "slice the dask array instead")
    shape = tuple(expr.shape)
    dtype = np.dtype(expr.dtype)
    operands = dict(zip(expr.names, expr.values, strict=True))
    for name, value in operands.items():
        if is_on_disk(value) and not hasattr(value, "_engine"):
            raise TypeError(f"Expr.to_dask reads arrays (Array, CArray, EArray) and NumPy "
                            f"operands; {name!r} of {expr.expression!r} is "
                            f"{type(value).__name__} (for table columns use "
                            f"Table.to_dask(where=...))")
    full = [v for v in operands.values() if is_on_disk(v) and tuple(v.shape) == shape]
    chunkshape = full[0]._tile_chunkshape() if full else None
    blocks = aligned_chunks(shape, dtype, chunkshape, chunks)
    spec = (expr.expression, operands, dict(expr._kwargs), dtype)
    openings = [opening_token(v._v_file) for v in operands.values() if is_on_disk(v)]
    token = tokenize(expr.expression, _identity(operands), openings, blocks)
    name = f"hyperslab-expr-{token}"
    graph: dict[Any, Any] = {(name, *index): (expr_block_eval, spec, key)
             for index, key in block_keys(blocks)}
    layer = HighLevelGraph.from_collections(name, graph, dependencies=())
    array = ExprArray(layer, name, blocks, meta=np.empty((0,) * len(shape), dtype=dtype))
    array._hyperslab_spec = spec
    return array


def _identity(operands: Operands) -> list[Any]:
    """What names the operands' data in a dask key: a leaf by its file, node and the
    file's state (new for a writable file), an array by its values."""
    return [graph_token(v) if is_on_disk(v) else tokenize(np.asarray(v))
            for v in operands.values()]

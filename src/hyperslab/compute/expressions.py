"""``Expr``: numexpr expressions over on-disk arrays, evaluated tile by tile out of core.

In PyTables' spirit (``tables.Expr``): the operands are array leaves (Array, CArray,
EArray), table columns, NumPy arrays and scalars, of broadcast-compatible shapes.  The
output is cut in tiles aligned to the chunks of the first on-disk operand; for each tile
the matching box of every operand is read (through the fast path, in the File's pool, a
tile per thread), numexpr evaluates the tile (single-threaded in each worker), and the
result lands in a NumPy array (:meth:`Expr.eval`), in a leaf (:meth:`Expr.set_output`) or
in a reduction (``Expr(...).sum(axis=1)``), which never holds the whole result.

Names are resolved from ``uservars`` or, when it is None, from the caller's frame, as in
PyTables.  Unknown names, non-numeric operands and shapes that do not broadcast raise
before any data is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numexpr as ne
import numpy as np

from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.ordered import in_order
from hyperslab.chunked.tiles import count_tiles, tile_shape, tiles
from hyperslab.compute.conditions import caller_namespace, condition_names, serial_numexpr
from hyperslab.nodes.leaves.reducible import Reducible

__all__ = ["Expr"]

Result = TypeVar("Result")
Box = tuple[tuple[int, int], ...]

_TILE_BYTES = 4 << 20
"""Bytes of output per tile."""


def _is_on_disk(value: Any) -> bool:
    return hasattr(value, "_read_tile") and hasattr(value, "shape")


def _names(expression: str) -> tuple[str, ...]:
    """The variable names of ``expression`` (numexpr's function names left out)."""
    try:
        return condition_names(expression)
    except SyntaxError as exc:
        raise ValueError(f"invalid expression {expression!r}: {exc}") from exc


class Expr(Reducible):
    """A numexpr expression over on-disk arrays, evaluated out of core.

    Parameters
    ----------
    expr : str
        A numexpr expression, e.g. ``'a * 2 + sin(b)'``.
    uservars : Mapping, optional
        The operands by name; when None, the names are looked up in the caller's local
        and global variables.

    Raises
    ------
    NameError
        If a name is not found.
    TypeError
        If an operand is not numeric.
    ValueError
        If the expression does not parse or the shapes do not broadcast.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "expr.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     a = f.create_carray("/", "a", obj=np.arange(6.0).reshape(2, 3))
    ...     e = hyperslab.Expr("a * 2 + b", uservars={"a": a, "b": np.array([1.0, 0, 0])})
    ...     print(e.eval().tolist(), e.sum(axis=1))
    [[1.0, 2.0, 4.0], [7.0, 8.0, 10.0]] [ 7. 25.]
    """

    def __init__(self, expr: str, uservars: Mapping[str, Any] | None = None) -> None:
        self.expression = expr
        names = _names(expr)
        if uservars is None:
            local, global_ = caller_namespace(0)
            namespace: Mapping[str, Any] = {**global_, **local}
        else:
            namespace = uservars
        self._operands: dict[str, Any] = {}
        for name in names:
            if name not in namespace:
                raise NameError(f"name {name!r} of expression {expr!r} is not defined")
            value = namespace[name]
            operand = value if _is_on_disk(value) else np.asarray(value)
            dtype = np.dtype(operand.dtype).base
            if dtype.kind not in "biufc":
                raise TypeError(f"operand {name!r} of expression {expr!r} has dtype {dtype}: "
                                "not numeric")
            self._operands[name] = operand
        try:
            self._shape = tuple(np.broadcast_shapes(*(tuple(v.shape)
                                                      for v in self._operands.values())))
        except ValueError:
            shapes = {n: tuple(v.shape) for n, v in self._operands.items()}
            raise ValueError(f"the operands of {expr!r} do not broadcast: {shapes}") from None
        samples = {n: np.zeros(1, dtype=np.dtype(v.dtype).base)
                   for n, v in self._operands.items()}
        try:
            self.dtype: np.dtype[Any] = np.asarray(
                ne.evaluate(expr, local_dict=samples, global_dict={})).dtype
        except (KeyError, TypeError, ValueError, NotImplementedError) as exc:
            raise TypeError(f"cannot evaluate {expr!r} on these operands: {exc}") from exc
        self._range = slice(0, self._shape[0] if self._shape else 0, 1)
        self._output: Any = None

    # ------------------------------------------------------------------ description
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the result (after :meth:`set_inputs_range`)."""
        if not self._shape:
            return ()
        return (len(range(self._range.start, self._range.stop, self._range.step)),
                *self._shape[1:])

    def __repr__(self) -> str:
        return f"Expr({self.expression!r}) -> shape {self.shape}, dtype {self.dtype}"

    def set_inputs_range(self, start: int | None = None, stop: int | None = None,
                         step: int | None = None) -> None:
        """Evaluate only rows ``start:stop:step`` of the main (first) dimension.

        Raises
        ------
        ValueError
            For a step that is not positive, or an expression of scalars.
        """
        if not self._shape:
            raise ValueError("an expression of scalars has no rows to select")
        if step is not None and step <= 0:
            raise ValueError(f"the step of the inputs range must be positive, not {step}")
        self._range = slice(*slice(start, stop, step).indices(self._shape[0]))

    def set_output(self, out: Any) -> None:
        """Write the result of :meth:`eval` into ``out`` (a leaf or a NumPy array of the
        result's shape) instead of a new array.

        Raises
        ------
        ValueError
            If ``out`` has another shape.
        """
        if tuple(out.shape) != self.shape:
            raise ValueError(f"the output has shape {tuple(out.shape)}, the expression "
                             f"gives {self.shape}")
        self._output = out

    # ------------------------------------------------------------------ evaluation
    def eval(self) -> Any:
        """Evaluate the expression: the result as a NumPy array (or the output leaf or
        array given to :meth:`set_output`)."""
        out = self._output
        if out is None:
            check_result_size(self.shape, self.dtype.itemsize,
                              f"the result of the expression {self.expression!r}")
        result = np.empty(self.shape, dtype=self.dtype) if out is None else out
        if not self.shape:
            values = {n: np.asarray(v) for n, v in self._operands.items()}
            return ne.evaluate(self.expression, local_dict=values, global_dict={})[()]
        for box, tile in self._tiles(lambda box, tile: (box, tile)):
            result[tuple(slice(lo, hi) for lo, hi in box)] = tile
        return result

    def _reduction_source(self) -> _ExprTiles:
        return _ExprTiles(self)

    def _tiles(self, work: Callable[[Box, Any], Result]) -> Iterator[Result]:
        """``work(box, values)`` for every tile of the result, in order."""
        shape = self.shape
        if 0 in shape:
            return
        disk = [v for v in self._operands.values() if _is_on_disk(v)]
        tile = _tile_shape(shape, disk[0] if disk else None, self.dtype.itemsize)
        boxes = tiles(shape, tile)

        def task(box: Box) -> Result:
            values = {name: self._operand_tile(value, box)
                      for name, value in self._operands.items()}
            return work(box, ne.evaluate(self.expression, local_dict=values, global_dict={}))

        pool_owner = disk[0] if disk else None
        if pool_owner is None or count_tiles(shape, tile) < 2:
            for box in boxes:
                yield task(box)
            return
        engine = pool_owner._tile_engine()
        with serial_numexpr():
            yield from in_order(engine.pool, task, ((b,) for b in boxes), 2 * engine.workers)

    def _operand_tile(self, value: Any, box: Box) -> Any:
        """The part of an operand the output box needs (broadcast dimensions kept 1)."""
        shape = tuple(value.shape)
        offset = len(self.shape) - len(shape)
        rows = self._range
        local: list[tuple[int, int]] = []
        step = 1
        for axis, length in enumerate(shape):
            lo, hi = box[axis + offset]
            if length == 1 and self._shape[axis + offset] != 1:
                local.append((0, 1))
            elif axis + offset == 0:
                local.append((rows.start + lo * rows.step, rows.start + (hi - 1) * rows.step + 1))
                step = rows.step
            else:
                local.append((lo, hi))
        if _is_on_disk(value):
            return value._read_tile(tuple(local), step)
        key = tuple(slice(lo, hi, step if axis + offset == 0 else 1)
                    for axis, (lo, hi) in enumerate(local))
        return np.asarray(value)[key]


class _ExprTiles:
    """An expression as a source of reduction tiles (see compute.reductions)."""

    def __init__(self, expr: Expr) -> None:
        self._expr = expr
        self.shape = expr.shape
        self.dtype = expr.dtype

    def _map_tiles(self, work: Callable[[Box, Any], Result],
                   along: Sequence[int] = ()) -> Iterator[Result]:
        """The expression's tiles (``along`` is ignored: they follow its operands')."""
        return self._expr._tiles(work)


def _tile_shape(shape: tuple[int, ...], leaf: Any, itemsize: int) -> tuple[int, ...]:
    chunks = leaf._tile_chunkshape() if leaf is not None else None
    if chunks is not None and len(chunks) != len(shape):
        chunks = None
    return tile_shape(shape, chunks, itemsize, _TILE_BYTES)


"""``Expr``: numexpr expressions over on-disk arrays, evaluated out of core.

PyTables' ``tables.Expr``, rule for rule: the operands are array leaves (Array, CArray,
EArray), table columns, NumPy arrays and scalars; the result's main dimension is the one
the on-disk operands share; operands of fewer dimensions are broadcast to every row, and
the shortest length along the main dimension wins.  The result lands in a NumPy array
(:meth:`Expr.eval`), in an output container (:meth:`Expr.set_output`, in a range of its
rows or appended to), in a reduction (``Expr(...).sum(axis=1)``), or comes row by row
(``for row in expr``).

Two ways to compute it, chosen up front (:meth:`Expr._tileable`): when the operands
broadcast as NumPy arrays along dimension 0 and the output is filled whole, the result is
cut in tiles aligned to the chunks of the first on-disk operand, and each tile's box of
every operand is read (fast path, in the File's pool, a tile per thread) and evaluated by
numexpr single-threaded in its worker; otherwise rows are computed in blocks, in order.

Names are resolved from ``uservars`` or, when it is None, from the caller's frame, as in
PyTables.  Unknown names, unsupported operands and shapes that do not broadcast raise
before any data is read beyond one row.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numexpr as ne
import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.ordered import in_order
from hyperslab.chunked.tiles import count_tiles, tile_shape, tiles
from hyperslab.compute.conditions import caller_namespace, condition_names, serial_numexpr
from hyperslab.nodes.leaves.reducible import Reducible

__all__ = ["Expr", "is_on_disk"]

Result = TypeVar("Result")
Box = tuple[tuple[int, int], ...]

_TILE_BYTES = 4 << 20
"""Bytes of output per tile."""


def is_on_disk(value: Any) -> bool:
    """Whether ``value`` is an operand read in tiles (a leaf, a column, or a window of one:
    ``shape``, ``dtype``, ``maindim`` and ``_read_tile``)."""
    return hasattr(value, "_read_tile") and hasattr(value, "shape")


def _names(expression: str) -> tuple[str, ...]:
    """The variable names of ``expression`` (numexpr's function names left out)."""
    try:
        return condition_names(expression)
    except SyntaxError as exc:
        raise ValueError(f"invalid expression {expression!r}: {exc}") from exc


class _Plan(NamedTuple):
    """What :meth:`Expr.eval` computes: the input rows, and where their results go."""

    input_range: range
    out: Any
    o_maindim: int
    o_range: range
    new: bool  # out is a new NumPy array of the result's shape


def _operand(name: str, value: Any, expr: str) -> Any:
    """``value`` as an operand: a leaf or column as it is, anything else as an array.

    Raises
    ------
    TypeError
        For tables, nested columns, other nodes, and values of no number or string type.
    NotImplementedError
        For uint64 values (numexpr has no such type).
    """
    value = getattr(value, "_hyperslab_leaf", value)  # a leaf's to_dask(): the leaf
    if hasattr(value, "_v_colpathnames"):
        raise TypeError(f"variable ``{name}`` refers to a nested column, not allowed in "
                        f"expressions")
    if is_on_disk(value):
        operand = value
    elif hasattr(value, "_v_pathname") or hasattr(value, "_v_file"):
        raise TypeError(f"Unsupported variable type: {value!r:.80} (variable ``{name}`` of "
                        f"{expr!r}): only Array, CArray, EArray, Column and NumPy objects")
    else:
        operand = np.asarray(value)
    dtype = np.dtype(operand.dtype).base
    if dtype == np.dtype(np.uint64):
        raise NotImplementedError(f"variable ``{name}`` refers to a 64-bit unsigned integer "
                                  f"object, that is not yet supported in expressions, sorry")
    if dtype.kind not in "biufcS":
        raise TypeError(f"operand {name!r} of expression {expr!r} has dtype {dtype}: "
                        "not numeric")
    return operand


def _compile(expr: str, operands: Mapping[str, Any], kwargs: Mapping[str, Any]) -> Any:
    """numexpr's compiled ``expr`` for these operands' types, arguments in their order."""
    signature = [(name, ne.necompiler.getType(np.empty(0, np.dtype(v.dtype).base)))
                 for name, v in operands.items()]
    try:
        return ne.NumExpr(expr, signature, **kwargs)
    except (KeyError, TypeError, ValueError, NotImplementedError) as exc:
        strings = [n for n, v in operands.items() if np.dtype(v.dtype).base.kind == "S"]
        if strings:
            raise TypeError(f"cannot evaluate {expr!r}: the strings {strings} are not "
                            f"numeric, they may only be compared ({exc})") from exc
        raise TypeError(f"cannot evaluate {expr!r} on these operands: {exc}") from exc


def _slice_of(rows: range) -> slice:
    """The slice that selects ``rows``."""
    return slice(rows.start, rows.stop if rows.stop >= 0 else None, rows.step)


def _whole(value: Any) -> Any:
    """All of an operand, in memory."""
    if is_on_disk(value):
        return value._read_tile(tuple((0, n) for n in value.shape))
    return value


def _block(value: Any, axis: int, start: int, stop: int, step: int) -> Any:
    """Rows ``start:stop:step`` of an operand along ``axis`` (in memory)."""
    if not is_on_disk(value):
        key = [slice(None)] * (axis + 1)
        key[axis] = slice(start, stop, step)
        return np.asarray(value)[tuple(key)]
    rows = range(start, stop, step)
    if len(rows) == 0:
        box = tuple((0, 0) if a == axis else (0, n) for a, n in enumerate(value.shape))
        return value._read_tile(box)
    box = tuple((rows[0], rows[-1] + 1) if a == axis else (0, n)
                for a, n in enumerate(value.shape))
    if axis == 0:
        return value._read_tile(box, step)
    return value._read_tile(box).take(np.arange(0, rows[-1] + 1 - rows[0], step), axis=axis)


class Expr(Reducible):
    """A numexpr expression over on-disk arrays, evaluated out of core.

    PyTables' ``tables.Expr``, rule for rule: the result's main dimension is the main
    dimension the on-disk operands share (0 when they differ, or for NumPy operands);
    operands of fewer dimensions are broadcast to every row; when the operands' lengths
    along the main dimension differ, the shortest wins.  An output container may be
    smaller (only the rows it holds are computed) or larger (the other rows are left
    alone) than the result, filled in a range of its rows or appended to.

    When the operands broadcast as NumPy arrays along dimension 0 (the common case), the
    result is cut in tiles aligned to the chunks of the first on-disk operand and the
    tiles are computed in the File's pool; otherwise rows are computed in blocks in
    order.

    Reductions (``sum(axis=1)``, ``max()``, ...) evaluate and reduce tile by tile, without
    materializing the result.  The whole ``sum()`` or ``mean()`` of an expression over
    float64 arrays (Blosc2 or unfiltered) of one chunk layout is computed by
    python-blosc2's miniexpr inside the decompression (:mod:`hyperslab.compute.fusedsum`),
    for the operators and functions it computes as numexpr does (its ``sin``, ``exp``...
    are within one ulp of libm's, 3-4x faster).

    Parameters
    ----------
    expr : str
        A numexpr expression, e.g. ``'a * 2 + sin(b)'``.
    uservars : Mapping, optional
        The operands by name; when None, the names are looked up in the caller's local
        and global variables.
    **kwargs
        Passed to numexpr's compiler (``optimization``, ``truediv``).

    Raises
    ------
    NameError
        If a name is not found.
    TypeError
        If an operand is not numeric, is a table, a nested column or another node.
    NotImplementedError
        For uint64 operands (numexpr has no such type), as in PyTables.
    ValueError
        If the expression does not parse or the shapes do not broadcast.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "expr.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     a = f.create_carray("/", "a", obj=np.arange(6.0).reshape(2, 3))
    ...     e = hyperslab.Expr("a * 2 + b", uservars={"a": a, "b": np.array([1.0, 0, 0])})
    ...     print(e.eval().tolist(), e.sum(axis=1), [r.tolist() for r in e])
    [[1.0, 2.0, 4.0], [7.0, 8.0, 10.0]] [ 7. 25.] [[1.0, 2.0, 4.0], [7.0, 8.0, 10.0]]
    """

    def __init__(self, expr: str, uservars: Mapping[str, Any] | None = None,
                 **kwargs: Any) -> None:
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
            self._operands[name] = _operand(name, namespace[name], expr)
        self.names: list[str] = list(names)
        """The names of the expression's variables."""
        self.values: list[Any] = list(self._operands.values())
        """Their values (leaves, columns and NumPy arrays)."""
        self._kwargs = dict(kwargs)
        self._compiled = _compile(expr, self._operands, kwargs)
        self.maindim, self._shape, single_row = self._guess_shape()
        self._single_row_out: Any = single_row
        self.dtype: np.dtype[Any] = np.asarray(single_row).dtype
        self.start: int | None = None
        self.stop: int | None = None
        self.step: int | None = None
        self.out: Any = None
        """The output container given to :meth:`set_output`, or None."""
        self.append_mode = False
        self.o_start: int | None = None
        self.o_stop: int | None = None
        self.o_step: int | None = None

    def _guess_shape(self) -> tuple[int | None, tuple[int, ...], Any]:
        """The main dimension, the result's shape and the result for one row (PyTables'
        rules: see the class docstring)."""
        values = self.values
        maxndim = max((len(v.shape) for v in values), default=0)
        if maxndim == 0:
            return None, (), self._call([np.asarray(v) for v in values])
        maindims = {v.maindim for v in values if is_on_disk(v)}
        maindim = maindims.pop() if len(maindims) == 1 else 0
        row_values, lengths = [], []
        for value in values:
            dims = tuple(value.shape)
            if len(dims) < maxndim:
                row_values.append(_whole(value))
            elif dims[maindim] == 0:
                row_values.append(_whole(value))
                lengths.append(0)
            else:
                row_values.append(_block(value, maindim, 0, 1, 1).take(0, axis=maindim))
                lengths.append(dims[maindim])
        try:
            row = self._call(row_values)
        except ValueError:
            shapes = {n: tuple(v.shape) for n, v in self._operands.items()}
            raise ValueError(f"the operands of {self.expression!r} do not broadcast: "
                             f"{shapes}") from None
        shape = list(np.shape(row))
        if min(lengths) > 0:
            shape.insert(maindim, min(lengths))
        return maindim, tuple(shape), row

    def _call(self, values: Sequence[Any]) -> Any:
        """The compiled expression on ``values`` (in the calling thread only)."""
        return self._compiled(*values)

    # ------------------------------------------------------------------ description
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the result (after :meth:`set_inputs_range`)."""
        if self.maindim is None:
            return self._shape
        start, stop, step = self._input_range()
        shape = list(self._shape)
        shape[self.maindim] = len(range(start, stop, step))
        return tuple(shape)

    def __repr__(self) -> str:
        return f"Expr({self.expression!r}) -> shape {self.shape}, dtype {self.dtype}"

    def set_inputs_range(self, start: int | None = None, stop: int | None = None,
                         step: int | None = None) -> None:
        """Evaluate only rows ``start:stop:step`` of the main dimension of the inputs.

        Raises
        ------
        ValueError
            For a step that is not positive.
        """
        if step is not None and step <= 0:
            raise ValueError(f"the step of the inputs range must be positive, not {step}")
        self.start, self.stop, self.step = start, stop, step

    def _input_range(self) -> tuple[int, int, int]:
        assert self.maindim is not None
        return slice(self.start, self.stop, self.step).indices(self._shape[self.maindim])

    def set_output(self, out: Any, append_mode: bool = False) -> None:
        """Send the result of :meth:`eval` to ``out`` (a leaf, a column or a NumPy array)
        instead of a new array.

        Its shape must be the result's but along its main dimension: a shorter output
        gets only the first rows (only those are computed), a longer one keeps its other
        rows.  With ``append_mode``, the rows are appended to it (an EArray).

        Raises
        ------
        ValueError
            If ``out`` cannot be written to, or cannot be appended to in append mode.
        """
        if not (hasattr(out, "shape") and hasattr(out, "__setitem__")):
            raise ValueError("You need to pass a settable multidimensional container "
                             "as output")
        if append_mode and not hasattr(out, "append"):
            raise ValueError("For activating the ``append`` mode, you need a container "
                             "with an `append()` method (like the `EArray`)")
        self.out = out
        self.append_mode = append_mode

    def set_output_range(self, start: int | None = None, stop: int | None = None,
                         step: int | None = None) -> None:
        """Write the result only to rows ``start:stop:step`` of the output's main
        dimension.

        Raises
        ------
        IndexError
            If no output was given (:meth:`set_output`).
        """
        if self.out is None:
            raise IndexError("You need to pass an output object to `setOut()` first")
        self.o_start, self.o_stop, self.o_step = start, stop, step

    # ------------------------------------------------------------------ evaluation
    def eval(self) -> Any:
        """Evaluate the expression: the result as a NumPy array (or the output given to
        :meth:`set_output`).

        Raises
        ------
        ValueError
            If the output's shape does not match the result's.
        """
        if self.maindim is None:
            return self._single_row_out
        plan = self._plan()
        if len(plan.input_range) == 0:
            if self.start is not None and plan.input_range.start >= plan.input_range.stop:
                return plan.out
            return self._single_row_out
        if self._tileable(plan):
            return self._eval_tiles(plan.out)
        return self._eval_blocks(plan)

    def to_dask(self, chunks: Any = None) -> Any:
        """The expression's result as a dask array, each task evaluating its block.

        Blocks are whole chunks of the first on-disk operand of the result's shape (as
        :meth:`hyperslab.Array.to_dask` cuts them).  A task reads its operands' part tile
        by tile and evaluates the tiles with numexpr; the array's ``sum``, ``prod``,
        ``min``, ``max`` and ``mean`` also reduce each tile while it is in cache, so a
        reduction of the expression materializes neither its operands nor its values.
        Operands may be leaves, their ``to_dask()`` arrays (read as the leaf) and NumPy
        arrays; the graph pickles when the leaves' files are open read-only, so it runs
        on any scheduler.

        Parameters
        ----------
        chunks : optional
            As in :meth:`hyperslab.Array.to_dask`.

        Returns
        -------
        dask.array.Array
            A subclass of it with the fused reductions; arrays derived from it are plain
            dask arrays.

        Raises
        ------
        ValueError
            If the operands do not broadcast as NumPy arrays along dimension 0, the result
            is a scalar, or an inputs range or an output was set.
        ImportError
            If dask is not installed.

        Examples
        --------
        >>> import hyperslab, numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "expr-dask.h5")
        >>> with hyperslab.open_file(path, "w") as f:
        ...     _ = f.create_carray("/", "a", obj=np.arange(12.0).reshape(4, 3),
        ...                         chunkshape=(2, 3))
        >>> with hyperslab.open_file(path) as f:
        ...     e = hyperslab.Expr("a * 2 + 1", uservars={"a": f.root.a})
        ...     print(float(e.to_dask().sum().compute()), e.to_dask().chunks)
        144.0 ((4,), (3,))
        """
        from hyperslab.compute.daskio.arrays import dask_array_module

        dask_array_module()  # a clear ImportError without dask
        from hyperslab.compute.daskio.exprs import expr_to_dask

        return expr_to_dask(self, chunks)

    def __iter__(self) -> Iterator[Any]:
        """The rows of the result (along its first dimension), as NumPy objects; an output
        given to :meth:`set_output` is not used."""
        if self.maindim is None:
            return
        start, stop, step = self._input_range()
        rows = range(start, stop, step)
        if self.maindim != 0:  # rows are along dimension 0 all the same
            yield from self._eval_blocks(self._plan(itermode=True))
            return
        for first in range(0, len(rows), self._rows_per_block()):
            part = rows[first : first + self._rows_per_block()]
            yield from self._call(self._blocks(part))

    def _plan(self, itermode: bool = False) -> _Plan:
        """Rows to compute and where they go (PyTables' rules for the output)."""
        assert self.maindim is not None
        maindim = self.maindim
        input_range = range(*self._input_range())
        shape = list(self._shape)
        shape[maindim] = len(input_range)
        out = self.out
        if itermode or out is None:
            check_result_size(shape, self.dtype.itemsize,
                              f"the result of the expression {self.expression!r}")
            return _Plan(input_range, np.empty(shape, dtype=self.dtype), 0, range(shape[0]),
                         True)
        o_maindim = getattr(out, "maindim", 0) if is_on_disk(out) else 0
        o_shape = list(out.shape)
        o_range = range(*slice(self.o_start, self.o_stop, self.o_step).indices(
            o_shape[o_maindim]))
        o_len = min(o_shape[o_maindim], len(o_range))
        del o_shape[o_maindim]
        rest = shape[:o_maindim] + shape[o_maindim + 1:]
        if o_shape != rest:
            raise ValueError(f"Shape for out container does not match expression: the "
                             f"output has {tuple(out.shape)} along dimension {o_maindim}, "
                             f"the expression gives {tuple(shape)}")
        if not self.append_mode and o_len < shape[o_maindim]:
            # PyTables' rule: the input range is cut to the output's length.
            input_range = range(input_range.start, input_range.start + o_len,
                                input_range.step)
        return _Plan(input_range, out, o_maindim, o_range, False)

    def _tileable(self, plan: _Plan) -> bool:
        """Whether the tiles of the fast path give PyTables' result: every operand
        broadcasts as in NumPy along dimension 0, and the output (if any) is filled
        whole, in order."""
        if (self.append_mode and self.out is not None) or not self._broadcasts():
            return False
        shape = self.shape
        if plan.new:
            return True
        if not (isinstance(plan.out, np.ndarray) or hasattr(plan.out, "extdim")):
            return False  # a column: its rows are written through the general path
        return (plan.o_maindim == 0 and tuple(plan.out.shape) == shape
                and plan.o_range == range(shape[0]) and len(plan.input_range) == shape[0])

    def _broadcasts(self) -> bool:
        """Whether the operands broadcast as NumPy arrays to the result, along
        dimension 0."""
        if self.maindim != 0:
            return False
        try:
            return np.broadcast_shapes(*(tuple(v.shape) for v in self.values)) == self._shape
        except ValueError:
            return False

    def _eval_tiles(self, out: Any) -> Any:
        for box, tile in self._tiles(lambda box, tile: (box, tile)):
            out[tuple(slice(lo, hi) for lo, hi in box)] = tile
        return out

    def _eval_blocks(self, plan: _Plan) -> Any:
        """Compute the rows of ``plan`` block by block, in order."""
        maindim = self.maindim
        assert maindim is not None
        rows, out, o_maindim = plan.input_range, plan.out, plan.o_maindim
        whole = maindim != o_maindim and not self.append_mode
        per_block = len(rows) if whole else self._rows_per_block()
        for first in range(0, len(rows), max(per_block, 1)):
            part = rows[first : first + per_block]
            result = self._call(self._blocks(part))
            if self.append_mode and not plan.new:
                out.append(result)
                continue
            key: list[Any] = [slice(None)] * (o_maindim + 1)
            targets = plan.o_range if whole else plan.o_range[first : first + len(part)]
            key[o_maindim] = _slice_of(targets)
            out[tuple(key) if len(key) > 1 else key[0]] = result  # (columns take slices)
        return out

    def _rows_per_block(self) -> int:
        assert self.maindim is not None
        row_shape = list(self._shape)
        row_shape[self.maindim] = 1
        row_bytes = max(1, int(np.prod(row_shape)) * max(self.dtype.itemsize, 8))
        return max(1, _TILE_BYTES // row_bytes)

    def _blocks(self, rows: range) -> list[Any]:
        """Every operand's values for input ``rows`` (those of fewer dimensions whole)."""
        assert self.maindim is not None
        ndim = len(self._shape)
        return [_block(v, self.maindim, rows.start, rows.stop, rows.step)
                if len(v.shape) == ndim else _whole(v) for v in self.values]

    def _reduction_source(self) -> _ExprTiles:
        return _ExprTiles(self)

    def _tiles(self, work: Callable[[Box, Any], Result], reuse: bool = False
               ) -> Iterator[Result]:
        """``work(box, values)`` for every tile of the result, in order.  With ``reuse``
        (``work`` keeps nothing of ``values`` once it returns: reductions), each thread
        evaluates its tiles into one buffer it keeps, not into fresh memory per tile."""
        shape = self.shape
        if 0 in shape:
            return
        disk = [v for v in self._operands.values() if is_on_disk(v)]
        tile = _tile_shape(shape, disk[0] if disk else None, self.dtype.itemsize)
        boxes = tiles(shape, tile)

        def task(box: Box) -> Result:
            values = {name: self._operand_tile(value, box)
                      for name, value in self._operands.items()}
            out = _tile_out(values, self.dtype) if reuse else None
            # numexpr.evaluate, not the compiled expression: one NumExpr object must not
            # run in two threads at once.
            try:
                result = ne.evaluate(self.expression, local_dict=values, global_dict={},
                                     out=out, **self._kwargs)
            except (TypeError, ValueError):
                if out is None:
                    raise
                # numexpr typed these tiles otherwise than the row the dtype came from:
                # into fresh memory, as without ``reuse``
                result = ne.evaluate(self.expression, local_dict=values, global_dict={},
                                     **self._kwargs)
            return work(box, result)

        engine = disk[0]._tile_engine() if disk else None
        if engine is None or count_tiles(shape, tile) < 2:  # (None: no pool, this thread)
            for box in boxes:
                yield task(box)
            return
        with serial_numexpr():
            yield from in_order(engine.pool, task, ((b,) for b in boxes), 2 * engine.workers)

    def _operand_tile(self, value: Any, box: Box) -> Any:
        """The part of an operand the output box needs (broadcast dimensions kept 1)."""
        shape = tuple(value.shape)
        offset = len(self.shape) - len(shape)
        rows = range(*self._input_range())
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
        if is_on_disk(value):
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

    def _fused_sum(self) -> np.float64 | None:
        """The sum of the expression's values computed inside Blosc2's decompression
        (:mod:`hyperslab.compute.fusedsum`), or None where that does not apply."""
        from hyperslab.compute.fusedsum import expression_sum

        return expression_sum(self._expr)

    def _map_tiles(self, work: Callable[[Box, Any], Result],
                   along: Sequence[int] = ()) -> Iterator[Result]:
        """The expression's tiles (``along`` is ignored: they follow its operands'), or,
        when its operands do not broadcast as NumPy arrays, its whole result as one."""
        expr = self._expr
        if expr.maindim is None or expr._broadcasts():
            return expr._tiles(work, reuse=True)  # reductions keep nothing of a tile
        whole = expr._eval_blocks(expr._plan(itermode=True))
        return iter([work(tuple((0, n) for n in whole.shape), whole)])


_TILE_OUT = threading.local()
"""Each thread's buffer for the values of the tiles it evaluates for reductions."""


def _tile_out(values: Mapping[str, Any], dtype: np.dtype[Any]) -> AnyArray | None:
    """An array of the tile's result shape (the operands' broadcast) and ``dtype`` in this
    thread's kept buffer (fresh memory is a page fault per 4 KB, every time where freed
    memory goes back to the system at once: dask.distributed's workers); None for a
    dtype numexpr gives no ``out=`` of (strings)."""
    if dtype.kind not in "biufc":
        return None
    shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    nbytes = math.prod(shape) * dtype.itemsize
    buffer: AnyArray | None = getattr(_TILE_OUT, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _TILE_OUT.buffer = np.empty(max(nbytes, 1), dtype=np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape)


def _tile_shape(shape: tuple[int, ...], leaf: Any, itemsize: int) -> tuple[int, ...]:
    chunks = leaf._tile_chunkshape() if leaf is not None else None
    if chunks is not None and len(chunks) != len(shape):
        chunks = None
    return tile_shape(shape, chunks, itemsize, _TILE_BYTES)


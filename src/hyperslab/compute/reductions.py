"""Reductions of on-disk arrays, tile by tile: ``sum``, ``prod``, ``mean``, ``std``, ``var``,
``min``, ``max``, ``any``, ``all``, ``argmin``, ``argmax``.

The array is streamed in chunk-aligned tiles of a few megabytes (decoded in parallel by the
source, through the fast path where there is one); each tile is reduced by NumPy along the
requested axes into a partial result the size of the tile's share of the output (small:
it stays in cache).  The folds (sum, prod, min, max, any, all) of results up to
:data:`PER_THREAD_MAX_BYTES` combine each partial in the thread that reduced the tile, into
that thread's own accumulator (partials that land on strided parts of it, hdf5plugin's
blocks summed along axis 0, in contiguous arrays of their own; partials of the
accumulator's dtype reduced into a buffer of the thread), and the calling thread adds the
few accumulators at the end; other partials are combined into the result in the calling
thread, in tile order.  Only a few tiles are in memory at a time.

Combining keeps NumPy's semantics: sums and products add and multiply partials (each tile
summed pairwise by NumPy, so the error is that of NumPy's own blocked summation; per-thread
accumulators change only the order partials are added in, so float sums may differ from
run to run in the last bits, while integers, which wrap, ``min``/``max`` and booleans are
exact); ``min``
and ``max`` propagate NaNs; ``mean`` divides the sum by the count of elements (or of
``where`` elements); ``var``/``std`` merge per-tile counts, means and sums of squared
deviations (Chan et al.'s pairwise update, exact in real arithmetic); ``argmin``/``argmax``
keep the first occurrence, NaNs first, as NumPy does.

The source protocol: ``shape``, ``dtype`` (native) and ``_map_tiles(work, along=())``,
which calls ``work(box, data)`` for every tile (``box`` per-dimension ``(start, stop)``,
``data`` the tile as a native array, valid during the call) and yields the results in C
order of the tiles; ``along`` names the reduced axes, along which tiles should be long
where the source has the choice (small partials, see
:func:`hyperslab.chunked.tiles.tile_shape`).  ``data`` may also be a
:class:`~hyperslab.chunked.tiles.Uniform` tile (chunks never written, all the fill value),
which is reduced in closed form: a sum is the value times the count, a mean the value, a
variance nothing, an arg-reduction the tile's first position; so a damaged extent of 2**40
rows over a few written chunks is reduced in the time those chunks take.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.tiles import Uniform

__all__ = ["OPERATIONS", "reduce"]

OPERATIONS = ("sum", "prod", "mean", "std", "var", "min", "max", "any", "all", "argmin",
              "argmax")

PER_THREAD_MAX_BYTES = 32 << 20
"""Results (of sum, prod, min, max, any, all) up to this size are accumulated per thread
of the pool, in the thread that reduced each tile (:func:`_per_thread`); bigger ones tile by
tile in the calling thread, in order (a copy of a big result per thread costs more memory
than the combining saves)."""

_UFUNCS: dict[str, np.ufunc] = {
    "sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
    "any": np.logical_or, "all": np.logical_and,
}


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple of ints, negative allowed) as sorted positive axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for item in items:
        try:
            index = operator.index(item)
        except TypeError:
            raise TypeError(f"axis must be None, an int or a tuple of ints, not {axis!r}") \
                from None
        if not -ndim <= index < ndim:
            raise np.exceptions.AxisError(index, ndim)
        axes.append(index % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return tuple(sorted(axes))


def _check_numeric(dtype: np.dtype[Any], op: str) -> None:
    if dtype.kind not in "biufc" or dtype.subdtype is not None:
        raise TypeError(f"cannot compute {op} of an array of dtype {dtype}: it is not numeric")


def _kept(box: tuple[tuple[int, int], ...], axes: tuple[int, ...]) -> tuple[Any, ...]:
    """Where a tile's partial goes in a keepdims-shaped result (``...`` for a scalar's: the
    0-d result itself, not a copy of its value, so it can be added into)."""
    if not box:
        return (Ellipsis,)
    return tuple(slice(0, 1) if d in axes else slice(lo, hi) for d, (lo, hi) in enumerate(box))


def _where_tile(where: Any, box: tuple[tuple[int, int], ...]) -> Any:
    if where is None:
        return True
    return where[tuple(slice(lo, hi) for lo, hi in box)]


def reduce(
    source: Any,
    op: str,
    axis: Any = None,
    *,
    dtype: Any = None,
    keepdims: bool = False,
    ddof: int = 0,
    where: Any = None,
    initial: Any = None,
) -> Any:
    """Reduce an on-disk array as NumPy's ``op`` would reduce it in memory.

    Parameters
    ----------
    source
        The array (see the module docstring for the protocol).
    op : str
        One of :data:`OPERATIONS`.
    axis : None, int or tuple of int
        The axes reduced (``argmin``/``argmax``: None or one int).
    dtype : dtype-like, optional
        The accumulator and result dtype (sum, prod, mean, std, var).
    keepdims : bool
        Keep the reduced axes, of length 1.
    ddof : int
        Delta degrees of freedom (std, var).
    where : array_like of bool, optional
        Elements to include; broadcast to the array's shape (not for argmin/argmax).
    initial : scalar, optional
        The starting value (sum, prod, min, max), as in NumPy; ``min``/``max`` of an empty
        selection need one.

    Returns
    -------
    numpy scalar or numpy.ndarray

    Raises
    ------
    ValueError
        For an unknown ``op``, an empty reduction without identity, or a bad ``where``.
    TypeError
        For a non-numeric array or a bad ``axis``.
    numpy.exceptions.AxisError
        For an axis out of range.
    """
    if op not in OPERATIONS:
        raise ValueError(f"unknown reduction {op!r}; known: {', '.join(OPERATIONS)}")
    shape = tuple(source.shape)
    in_dtype = np.dtype(source.dtype)
    _check_numeric(in_dtype, op)
    if op in ("argmin", "argmax"):
        if where is not None:
            raise TypeError(f"{op} does not take a 'where' mask (as in NumPy)")
        return _arg_reduce(source, op, axis, shape, keepdims)
    axes = _axes(axis, len(shape))
    mask = _mask(where, shape)
    kept_shape = tuple(1 if d in axes else n for d, n in enumerate(shape))
    # The partial results are as big as the result (with a few accumulators per item).
    check_result_size(kept_shape, 3 * max(8, in_dtype.itemsize),
                      f"the {op} over axis {axis!r} of an array of shape {shape}")
    fused = _fused(source, op, axes, shape, dtype, mask, initial)
    if fused is not None:
        return _finish(np.full(kept_shape, fused), axes, keepdims)
    if op in ("mean", "std", "var"):
        return _moments(source, op, axes, kept_shape, keepdims, dtype, ddof, mask, in_dtype)
    return _fold(source, op, axes, kept_shape, keepdims, dtype, mask, initial, in_dtype)


def _fused(source: Any, op: str, axes: tuple[int, ...], shape: tuple[int, ...], dtype: Any,
           mask: Any, initial: Any) -> np.float64 | None:
    """The sum or mean of a whole float64 source that computes its sum itself
    (``_fused_sum``: an expression over Blosc2 arrays, :mod:`.fusedsum`), else None."""
    if op not in ("sum", "mean") or mask is not None or initial is not None \
            or len(axes) != len(shape) or not shape or 0 in shape:
        return None
    if dtype is not None and np.dtype(dtype) != np.float64:
        return None
    fused_sum = getattr(source, "_fused_sum", None)
    total = fused_sum() if fused_sum is not None else None
    if total is None:
        return None
    return total if op == "sum" else np.float64(total / math.prod(shape))


def _mask(where: Any, shape: tuple[int, ...]) -> Any:
    """``where`` broadcast to the array's shape (None for no mask)."""
    if where is None or where is True:
        return None
    try:
        return np.broadcast_to(np.asarray(where, dtype=bool), shape)
    except ValueError:
        raise ValueError(
            f"where of shape {np.shape(where)} does not broadcast to the array's shape "
            f"{shape}") from None


def _fold(source: Any, op: str, axes: tuple[int, ...], kept_shape: tuple[int, ...],
          keepdims: bool, dtype: Any, mask: Any, initial: Any,
          in_dtype: np.dtype[Any]) -> Any:
    """sum, prod, min, max, any, all: per-tile ufunc reductions combined by the ufunc."""
    shape = tuple(source.shape)
    ufunc = _UFUNCS[op]
    kwargs: dict[str, Any] = {}
    if op in ("sum", "prod"):
        kwargs["dtype"] = np.dtype(dtype) if dtype is not None else None
        # NumPy's own accumulator dtype, from an empty stand-in
        probe = np.zeros((0,) * len(shape) if shape else (), dtype=in_dtype)
        result_dtype = ufunc.reduce(probe, axis=axes, dtype=kwargs["dtype"]).dtype
    else:
        result_dtype = np.dtype(bool) if op in ("any", "all") else in_dtype
    empty = math.prod(shape[d] for d in axes) == 0 or (
        mask is not None and not mask.any(axis=axes).all())
    if op in ("min", "max") and initial is None and empty:
        raise ValueError(
            f"zero-size array to reduction operation {'minimum' if op == 'min' else 'maximum'}"
            " which has no identity (pass initial=...)")
    # ``initial`` goes into the result once, not into every tile's partial.
    # Half floats combine their tiles' partials in single precision, as NumPy's half
    # loops compute: partials multiplied in half precision overflow in an order NumPy's
    # never sees (one-element tiles: a product of 18 values of about 2 went inf).
    combined = np.dtype(np.float32) if result_dtype == np.float16 else result_dtype
    result = _start(op, ufunc, kept_shape, combined, initial)

    # Partials of the accumulators' dtype may be reduced into a thread's buffer.
    into_scratch = op in ("sum", "prod", "min", "max") and kwargs.get("dtype") in (
        None, combined)

    def work(box: tuple[tuple[int, int], ...], data: Any,
             scratch: Callable[..., np.ndarray] | None = None) -> np.ndarray:
        tile_where = _where_tile(mask, box)
        if isinstance(data, Uniform):
            if tile_where is True:
                return _uniform_fold(op, ufunc, data, axes, kwargs)
            data = data.materialize()
        if (scratch is not None and tile_where is True and into_scratch
                and type(data) is np.ndarray and data.dtype == combined):
            kept = tuple(1 if d in axes else n for d, n in enumerate(data.shape))
            return _reduce_into(ufunc, data, axes, scratch(kept, combined))
        local = dict(kwargs)
        if tile_where is not True:
            local["where"] = tile_where
            if op in ("min", "max"):
                local["initial"] = _neutral(op, data.dtype)
        return ufunc.reduce(data, axis=axes, keepdims=True, **local)

    if math.prod(kept_shape) * combined.itemsize > PER_THREAD_MAX_BYTES:
        for box, partial in _with_boxes(source, work, axes):
            target = result[_kept(box, axes)]
            ufunc(target, partial.astype(combined, copy=False), out=target, casting="unsafe")
    else:
        parts = (part for sums in _per_thread(source, work, axes, lambda: _start(
            op, ufunc, kept_shape, combined, None), ufunc, combined) for part in sums.parts())
        for at, partial in parts:
            target = result[at]
            ufunc(target, partial, out=target)
    return _finish(result.astype(result_dtype, copy=False), axes, keepdims)


def _per_thread(source: Any, work: Callable[..., np.ndarray], axes: tuple[int, ...],
                start: Callable[[], np.ndarray], ufunc: np.ufunc,
                dtype: np.dtype[Any]) -> list[_ThreadSums]:
    """Every tile's ``work`` combined by ``ufunc`` into accumulators of the thread that
    reduced the tile (:class:`_ThreadSums`, of ``dtype``: ``start()`` makes a result-shaped
    one holding the ufunc's identity), in that thread; those of each thread that took part.

    The calling thread then only combines these few: it no longer adds every tile's
    partial while the pool waits for it (a sum along axis 0 of a ``(500, 500, 500)``
    array has 125 partials of 2 MB).  Integer sums and products wrap and ``min``/``max``
    are exact in any order; float sums and products add the same partials in another
    order (each thread's tiles in its order, then the threads'), which only changes the
    rounding, as NumPy's own blocking of a sum does.  ``work(box, data, scratch)`` may
    return its partial in ``scratch(shape, dtype)``, the thread's buffer (valid until its
    next call): it is combined at once.
    """
    accumulators: list[_ThreadSums] = []
    mine = threading.local()
    created = threading.Lock()

    def accumulate(box: tuple[tuple[int, int], ...], data: Any) -> None:
        sums = getattr(mine, "sums", None)
        if sums is None:
            sums = mine.sums = _ThreadSums(start, ufunc, dtype)
            with created:
                accumulators.append(sums)
        sums.add(_kept(box, axes), work(box, data, sums.scratch))

    for _ in _with_boxes(source, accumulate, axes, getattr(source, "visits_blocks", False)):
        pass
    return accumulators


BLOCK_SUMS_MIN_BYTES = 64 << 10
"""Partials from this size on that land on a strided part of a thread's accumulator are
accumulated in a contiguous array of their own (see :class:`_ThreadSums`)."""


class _ThreadSums:
    """One pool thread's accumulator of a fold (see :func:`_per_thread`).

    A partial is combined into a result-shaped array (made on first use), except where
    its part of that array is not contiguous: hdf5plugin's ``(2, 128, 256)`` blocks of a
    ``(500, 500, 500)`` array summed along axis 0 give ``(1, 128, 256)`` partials, rows
    of 2 KB every 4 KB of a 2 MB accumulator, which NumPy adds 4 times slower (14 us)
    than into a contiguous array.  Such partials (of at least
    :data:`BLOCK_SUMS_MIN_BYTES`, of the accumulator's dtype) are combined into a
    contiguous array per place instead, up to as many bytes as the result holds (then
    into the result-shaped array); :meth:`parts` gives each array and its place.
    """

    def __init__(self, start: Callable[[], np.ndarray], ufunc: np.ufunc,
                 dtype: np.dtype[Any]) -> None:
        self._start, self._ufunc, self._dtype = start, ufunc, dtype
        self._whole: np.ndarray | None = None
        self._blocks: dict[tuple[tuple[int, int], ...],
                           tuple[tuple[slice, ...], np.ndarray]] = {}
        self._block_bytes = 0
        self._dense = False  # whether a partial went into the result-shaped array
        self._scratch: np.ndarray | None = None

    def scratch(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
        """An array of ``shape`` in this thread's buffer, valid until the next call."""
        nbytes = math.prod(shape) * dtype.itemsize
        if self._scratch is None or self._scratch.nbytes < nbytes:
            self._scratch = np.empty(nbytes, dtype=np.uint8)
        return self._scratch[:nbytes].view(dtype).reshape(shape)

    def add(self, at: tuple[slice, ...], partial: np.ndarray) -> None:
        """Combine ``partial``, the share of the result at ``at``."""
        ufunc = self._ufunc
        if partial.nbytes >= BLOCK_SUMS_MIN_BYTES and partial.dtype == self._dtype \
                and partial.flags.c_contiguous:
            key = tuple((part.start, part.stop) for part in at)
            held = self._blocks.get(key)
            if held is not None:
                ufunc(held[1], partial, out=held[1])
                return
            if self._whole is None:
                self._whole = self._start()
            target = self._whole[at]
            if not target.flags.c_contiguous \
                    and self._block_bytes + partial.nbytes <= self._whole.nbytes:
                self._blocks[key] = (at, partial.copy())
                self._block_bytes += partial.nbytes
                return
        if self._whole is None:
            self._whole = self._start()
        target = self._whole[at]
        ufunc(target, partial.astype(self._dtype, copy=False), out=target, casting="unsafe")
        self._dense = True

    def parts(self) -> list[tuple[tuple[Any, ...], np.ndarray]]:
        """Each accumulated array and its place in the result."""
        found: list[tuple[tuple[Any, ...], np.ndarray]] = list(self._blocks.values())
        if self._whole is not None and self._dense:
            found.append(((Ellipsis,), self._whole))  # (a view, also of a 0-d result)
        return found


def _reduce_into(ufunc: np.ufunc, data: np.ndarray, axes: tuple[int, ...],
                 out: np.ndarray) -> np.ndarray:
    """``ufunc.reduce(data, axis=axes, keepdims=True)`` into ``out``.  Two to four rows
    along axis 0 alone are combined by the binary ufunc, row after row as NumPy's
    reduction does, in one pass over each row: NumPy's reduction first copies the first
    row (a ``(2, 128, 256)`` float64 block took 13 us instead of 5)."""
    rows = data.shape[0] if data.ndim > 1 else 0
    if axes != (0,) or not 2 <= rows <= 4:
        return ufunc.reduce(data, axis=axes, keepdims=True, out=out)
    row = out[0]
    ufunc(data[0], data[1], out=row)
    for k in range(2, rows):
        ufunc(row, data[k], out=row)
    return out


def _uniform_fold(op: str, ufunc: np.ufunc, tile: Uniform, axes: tuple[int, ...],
                  kwargs: dict[str, Any]) -> np.ndarray:
    """A fold's partial of a uniform tile, in closed form: its value reduced once, then
    added ``count`` times (a product: raised to ``count``; integers wrap as repeated
    additions and products do)."""
    partial = ufunc.reduce(tile.shrunk(axes), axis=axes, keepdims=True, **kwargs)
    count = math.prod(tile.shape[d] for d in axes)
    if op not in ("sum", "prod") or partial.dtype.kind == "b" or count == 1:
        return partial
    if partial.dtype.kind in "fc":  # counts past 2**64 are fine as floats
        number = partial.dtype.type(count)
        return np.multiply(partial, number) if op == "sum" else np.power(partial, number)
    if op == "sum":  # integers wrap: only the count modulo 2**64 matters
        return np.multiply(partial, np.asarray(count % 2**64, dtype=np.uint64).astype(
            partial.dtype))
    # x**n modulo 2**64 depends on n modulo 2**62 for odd x (the unit group's exponent),
    # and is 0 for even x once n >= 64: an exponent past 2**63 is folded keeping both.
    exponent = count if count < 2**63 else 2**62 + count % 2**62
    return np.power(partial, np.asarray(exponent, dtype=np.int64))


def _neutral(op: str, dtype: np.dtype[Any]) -> Any:
    """The value that never wins a min (op 'min') or max, for masked-out tiles."""
    if dtype.kind == "f" or dtype.kind == "c":
        return np.inf if op == "min" else -np.inf
    if dtype.kind == "b":
        return op == "min"
    info = np.iinfo(dtype)
    return info.max if op == "min" else info.min


def _start(op: str, ufunc: np.ufunc, kept_shape: tuple[int, ...], dtype: np.dtype[Any],
           initial: Any) -> np.ndarray:
    if op in ("min", "max"):
        start = initial if initial is not None else _neutral(op, dtype)
        return np.full(kept_shape, start, dtype=dtype)
    identity = ufunc.identity if initial is None else initial
    return np.full(kept_shape, identity, dtype=dtype)


def _finish(result: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        result = result.reshape(tuple(n for d, n in enumerate(result.shape) if d not in axes))
    return result[()] if result.ndim == 0 else result


def _with_boxes(source: Any, work: Callable[..., Any], axes: tuple[int, ...] = (),
                blockwise: bool = False) -> Any:
    """(box, work(box, data)) for every tile, in order, the tiles long along ``axes`` (the
    reduced ones).  The tiles may be reduced in other threads: they get the caller's NumPy
    error handling (``np.errstate`` is per thread).  ``blockwise`` (sources with
    ``visits_blocks``): ``work`` may be called on parts of tiles, as the source decodes
    them, and the tiles yield None."""
    errors = np.geterr()

    def in_caller_state(box: tuple[tuple[int, int], ...], data: np.ndarray) -> Any:
        with np.errstate(**errors):
            return box, work(box, data)

    if blockwise:
        return source._map_tiles(in_caller_state, along=axes, blockwise=True)
    return source._map_tiles(in_caller_state, along=axes)


def _moments(source: Any, op: str, axes: tuple[int, ...], kept_shape: tuple[int, ...],
             keepdims: bool, dtype: Any, ddof: int, mask: Any, in_dtype: np.dtype[Any]) -> Any:
    """mean, var and std: counts, means and sums of squared deviations, merged."""
    out_dtype = None
    if dtype is not None:
        acc = np.dtype(dtype)
    elif in_dtype.kind in "biu":
        acc = np.dtype(np.float64)
    elif in_dtype == np.float16:  # NumPy computes in float32 and returns float16
        acc, out_dtype = np.dtype(np.float32), in_dtype
    else:
        acc = in_dtype
    real = np.zeros((), dtype=acc).real.dtype
    count = np.zeros(kept_shape, dtype=np.int64)
    mean = np.zeros(kept_shape, dtype=acc)
    m2 = np.zeros(kept_shape, dtype=real)

    def work(box: tuple[tuple[int, int], ...], data: Any) -> tuple[Any, Any, Any]:
        return _tile_moments(box, data, axes, mask, acc, real)

    for box, (n_b, mean_b, m2_b) in _with_boxes(source, work, axes):
        at = _kept(box, axes)
        n_a = count[at]
        total = n_a + n_b
        safe = np.maximum(total, 1)
        delta = mean_b - mean[at]
        mean[at] = mean[at] + delta * (n_b / safe)
        # The cross term only where the tile meets earlier ones: a squared difference that
        # overflows to inf times a zero weight would otherwise turn NumPy's inf into nan.
        cross = (delta * delta.conj()).real
        cross = np.multiply(cross, n_a * n_b / safe, out=np.zeros_like(cross), where=n_a > 0)
        m2[at] = m2[at] + m2_b + cross
        count[at] = total
    with np.errstate(invalid="ignore", divide="ignore"):
        if op == "mean":
            result = np.where(count > 0, mean, np.nan).astype(acc, copy=False)
        else:
            variance = (m2 / np.maximum(count - ddof, 0)).astype(real, copy=False)
            variance = np.where(count - ddof > 0, variance, np.nan)
            result = np.sqrt(variance) if op == "std" else variance
            if dtype is not None:
                result = result.astype(np.dtype(dtype), copy=False)
        if out_dtype is not None:
            result = result.astype(out_dtype)
    if (count == 0).any() or (op != "mean" and (count - ddof <= 0).any()):
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice" if op != "mean"
                      else "Mean of empty slice", RuntimeWarning, stacklevel=4)
    return _finish(np.asarray(result), axes, keepdims)


def _tile_moments(box: tuple[tuple[int, int], ...], data: Any, axes: tuple[int, ...],
                  mask: Any, acc: np.dtype[Any], real: np.dtype[Any]
                  ) -> tuple[Any, Any, Any]:
    """A tile's counts, means and sums of squared deviations along ``axes`` (kept
    dimensions of length 1)."""
    tile_where = _where_tile(mask, box)
    if isinstance(data, Uniform):
        if tile_where is True:  # n equal values: their mean, no deviation
            local_mean = data.shrunk(axes).astype(acc)
            n = np.full(local_mean.shape, math.prod(data.shape[d] for d in axes),
                        dtype=np.int64)
            return n, local_mean, np.zeros(local_mean.shape, dtype=real)
        data = data.materialize()
    values = data.astype(acc, copy=False)
    if tile_where is True:
        n = np.full([1 if d in axes else hi - lo for d, (lo, hi) in enumerate(box)],
                    math.prod(box[d][1] - box[d][0] for d in axes), dtype=np.int64)
        local_sum = np.add.reduce(values, axis=axes, keepdims=True, dtype=acc)
        local_mean = local_sum / np.maximum(n, 1)
        deviations = values - local_mean
        local_m2 = np.add.reduce((deviations * deviations.conj()).real, axis=axes,
                                 keepdims=True)
    else:
        n = np.add.reduce(np.broadcast_to(tile_where, values.shape), axis=axes,
                          keepdims=True, dtype=np.int64)
        local_sum = np.add.reduce(values, axis=axes, keepdims=True, dtype=acc,
                                  where=tile_where)
        local_mean = local_sum / np.maximum(n, 1)
        deviations = values - local_mean
        local_m2 = np.add.reduce((deviations * deviations.conj()).real, axis=axes,
                                 keepdims=True, where=tile_where)
    return n, local_mean.astype(acc, copy=False), local_m2


def _arg_reduce(source: Any, op: str, axis: Any, shape: tuple[int, ...],
                keepdims: bool) -> Any:
    """argmin/argmax: the first index of the best value (NaNs win, as in NumPy)."""
    if axis is not None and isinstance(axis, tuple):
        raise TypeError(f"{op} takes None or one int as axis, not {axis!r}")
    if math.prod(shape) == 0:
        raise ValueError(f"attempt to get {op} of an empty sequence")
    better = np.less if op == "argmin" else np.greater
    pick = np.argmin if op == "argmin" else np.argmax
    if axis is None:
        best_value: Any = None
        best_index = -1

        def whole(box: tuple[tuple[int, int], ...], data: Any) -> tuple[Any, int]:
            if isinstance(data, Uniform):  # the first position holds the best value
                return data.value, int(np.ravel_multi_index(tuple(lo for lo, _ in box),
                                                            shape))
            local = int(pick(data))
            position = np.unravel_index(local, data.shape)
            index = int(np.ravel_multi_index(
                tuple(p + lo for p, (lo, _) in zip(position, box, strict=True)), shape))
            return data.reshape(-1)[local], index

        for _, (value, index) in _with_boxes(source, whole):
            if best_value is None or _wins(value, best_value, better) or (
                    _same(value, best_value) and index < best_index):
                best_value, best_index = value, index
        if keepdims:
            return np.full((1,) * len(shape), best_index, dtype=np.intp)
        return np.intp(best_index)
    (ax,) = _axes(axis, len(shape))
    kept_shape = tuple(1 if d == ax else n for d, n in enumerate(shape))
    check_result_size(kept_shape, np.dtype(source.dtype).itemsize + np.dtype(np.intp).itemsize,
                      f"the {op} over axis {axis!r} of an array of shape {shape}")
    values = np.empty(kept_shape, dtype=source.dtype)
    indices = np.full(kept_shape, -1, dtype=np.intp)

    def along(box: tuple[tuple[int, int], ...], data: Any) -> tuple[Any, Any]:
        if isinstance(data, Uniform):  # the first position along the axis wins
            value = data.shrunk((ax,))
            return value, np.full(value.shape, box[ax][0], dtype=np.intp)
        local = pick(data, axis=ax, keepdims=True)
        return np.take_along_axis(data, local, axis=ax), local + box[ax][0]

    for box, (value, index) in _with_boxes(source, along, (ax,)):
        at = _kept(box, (ax,))
        current, current_index = values[at], indices[at]
        wins = (current_index < 0) | _wins(value, current, better)
        current[...] = np.where(wins, value, current)
        current_index[...] = np.where(wins, index, current_index)
    found = indices if keepdims else indices.reshape(
        tuple(n for d, n in enumerate(kept_shape) if d != ax))
    return found[()] if found.ndim == 0 else found


def _wins(value: Any, current: Any, better: np.ufunc) -> Any:
    """Whether ``value`` (seen later) replaces ``current``: strictly better, or a NaN
    against a number (NumPy's arg-reductions return the first NaN)."""
    value_nan = np.isnan(value) if np.asarray(value).dtype.kind in "fc" else False
    current_nan = np.isnan(current) if np.asarray(current).dtype.kind in "fc" else False
    return (better(value, current) & ~current_nan) | (value_nan & ~current_nan)


def _same(value: Any, current: Any) -> bool:
    if np.asarray(value).dtype.kind in "fc" and np.isnan(value) and np.isnan(current):
        return True
    return bool(value == current)

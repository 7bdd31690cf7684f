"""From a NumPy-style selection to what h5py can read, and back.

h5py reads ints, slices with a positive step and one increasing list of indices.  NumPy (and
PyTables' users) also write negative steps, unsorted or repeated indices, boolean masks and
``np.newaxis``.  :func:`plan_selection` turns any of these into an h5py-readable key plus the
few cheap in-memory steps that give NumPy's result: flips for negative steps, a ``take`` for
unsorted or repeated indices, and a reshape for new axes.  Keys with several index arrays
(``a[np.where(a > 0)]``, ``a[(0, 1), (2, 3)]``) or a multidimensional one select elements
by NumPy's rules for advanced indexing: they become the coordinates of those elements
(:attr:`SelectionPlan.points`), read and written as points.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import warnings
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Selection, Shape


@dataclasses.dataclass(frozen=True)
class SelectionPlan:
    """How to serve one selection.

    Attributes
    ----------
    h5key : tuple
        Per-dimension ints, positive-step slices, or one sorted unique index array.
    shape : tuple of int
        Shape of the data ``h5key`` reads (int dimensions dropped).
    flip_axes : tuple of int
        Axes of that data to reverse (selections with a negative step).
    take : tuple of (axis, indices) or None
        A ``np.take`` that puts fancy-indexed data back in the requested order.
    result_shape : tuple of int
        The final shape, new axes included.
    front_axis : int or None
        NumPy's rule for an index array combined with non-adjacent integer indices: the
        axis (of the shape with new axes, in place) that moves to the front of the result.
    empty : bool
        Whether the selection has no element (nothing to read).
    mask : numpy.ndarray or None
        A full-shape boolean mask (read everything, then mask).
    points : numpy.ndarray or None
        ``(n, ndim)`` int64 coordinates of the selected elements, in the order of the
        result (of ``result_shape``, ``n`` elements): a selection only NumPy's advanced
        indexing of several (or multidimensional) index arrays describes.
    """

    h5key: tuple[Any, ...]
    shape: Shape
    flip_axes: tuple[int, ...]
    take: tuple[int, AnyArray] | None
    result_shape: Shape
    empty: bool
    mask: AnyArray | None = None
    front_axis: int | None = None
    points: AnyArray | None = None

    @property
    def inplace_shape(self) -> Shape:
        """The result shape before NumPy's move of the index-array axis to the front."""
        if self.front_axis is None:
            return self.result_shape
        shape = list(self.result_shape[1:])
        shape.insert(self.front_axis, self.result_shape[0])
        return tuple(shape)


def _expand(key: Selection, ndim: int) -> list[Any]:
    """Expand Ellipsis and pad with full slices; keep ``None`` (newaxis) entries."""
    items = list(key) if isinstance(key, tuple) else [key]
    n_ellipsis = sum(1 for k in items if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if n_real > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {n_real} were indexed"
        )
    if n_ellipsis:
        pos = next(i for i, k in enumerate(items) if k is Ellipsis)
        items[pos : pos + 1] = [slice(None)] * (ndim - n_real)
    else:
        items.extend([slice(None)] * (ndim - n_real))
    return items


def _as_index_array(item: Any, length: int, axis: int) -> AnyArray | None:
    """Return a 1-D int64 index array for list/array items, or None for other items."""
    if _is_array_like(item):
        arr = np.asarray(item)
        if isinstance(item, np.ndarray) and arr.dtype.kind not in "iub":
            raise IndexError(
                f"arrays used as indices must be of integer (or boolean) type, not {arr.dtype}"
            )
        if arr.dtype == np.bool_:
            if arr.ndim != 1 or arr.shape[0] != length:
                raise IndexError(
                    f"boolean index of shape {arr.shape} does not match dimension {axis} "
                    f"of length {length}"
                )
            return np.flatnonzero(arr)
        if arr.size == 0:
            return np.empty(0, dtype=np.int64)
        if arr.dtype.kind not in "iu":
            raise IndexError(
                f"arrays used as indices must be of integer (or boolean) type, not {arr.dtype}"
            )
        if arr.ndim != 1:
            # PyTables reads one 2-D key as coordinates, NumPy as indices of axis 0.
            raise IndexError(
                f"only 1-D index arrays are supported, got one of shape {arr.shape}"
            )
        idx = arr.astype(np.int64)
        bad = (idx < -length) | (idx >= length)
        if bad.any():
            raise IndexError(
                f"index {int(idx[bad][0])} is out of bounds for axis {axis} with size {length}"
            )
        return np.where(idx < 0, idx + length, idx)
    return None


def _int_index(item: Any, length: int, axis: int) -> int:
    try:
        value = operator.index(item)
    except TypeError:
        raise IndexError(
            f"only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
            f"integer or boolean arrays are valid indices, not {item!r}"
        ) from None
    if not -length <= value < length:
        raise IndexError(f"index {value} is out of bounds for axis {axis} with size {length}")
    return value + length if value < 0 else value


def _is_array_like(item: Any) -> bool:
    return isinstance(item, (list, tuple, np.ndarray)) or (
        hasattr(item, "__array__") and not np.isscalar(item))


def _several_arrays(key: Selection) -> bool:
    """Whether ``key`` is a tuple holding two index arrays (lists, tuples, arrays) or more:
    NumPy's advanced indexing broadcasts them together into element coordinates (where
    PyTables accepts such a key, the coordinates of ``np.where``, it means the same)."""
    return isinstance(key, tuple) and sum(map(_is_array_like, key)) > 1


def _point_plan(key: Selection, shape: Shape) -> SelectionPlan:
    """The coordinates NumPy's advanced indexing selects with ``key`` (NumPy applies the
    key, and raises its errors, to zero-stride views holding each axis' coordinate: only
    the selected coordinates are ever allocated)."""
    ndim = len(shape)
    picked = []
    for axis, length in enumerate(shape):
        along = np.arange(length, dtype=np.int64).reshape(
            [length if d == axis else 1 for d in range(ndim)])
        picked.append(np.asarray(np.broadcast_to(along, shape)[key]))
    result_shape = picked[0].shape
    points = np.stack([p.reshape(-1) for p in picked], axis=1) if picked else np.empty(
        (0, 0), dtype=np.int64)
    count = int(points.shape[0])
    return SelectionPlan((), (count,), (), None, tuple(result_shape), count == 0,
                         points=points)


def plan_selection(key: Selection, shape: Shape) -> SelectionPlan:
    """Plan how to read ``dataset[key]`` for a dataset of ``shape``.

    Parameters
    ----------
    key : selection
        Ints, slices (any step), Ellipsis, ``None``, 1-D int or bool arrays (several are
        broadcast into element coordinates, as NumPy does), or a boolean mask with the
        dataset's full shape.
    shape : tuple of int
        The dataset's shape.

    Raises
    ------
    IndexError
        For out-of-bounds ints or indices and malformed keys (NumPy's errors).
    """
    if _several_arrays(key):
        return _point_plan(key, shape)
    return _plan_selection(key, shape)


def _plan_selection(key: Selection, shape: Shape) -> SelectionPlan:
    if isinstance(key, np.ndarray) and key.dtype == np.bool_ and key.ndim > 1:
        if key.shape != tuple(shape):
            raise IndexError(
                f"boolean mask of shape {key.shape} does not match the array shape {shape}"
            )
        count = int(key.sum())
        return SelectionPlan((), tuple(shape), (), None, (count,), count == 0, mask=key)
    items = _expand(key, len(shape))
    h5key: list[Any] = []
    data_shape: list[int] = []
    result_shape: list[int] = []
    flips: list[int] = []
    take: tuple[int, AnyArray] | None = None
    fancy_seen = False
    fancy_result_axis: int | None = None
    advanced_at: list[int] = []
    axis = 0
    for position, item in enumerate(items):
        if item is None:
            result_shape.append(1)
            continue
        length = shape[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(length)
            count = len(range(start, stop, step))
            if step < 0 and count:
                first = start + (count - 1) * step
                h5key.append(slice(first, start + 1, -step))
                flips.append(len(data_shape))
            elif count:
                h5key.append(slice(start, stop, step))
            else:
                h5key.append(slice(0, 0, 1))
            data_shape.append(count)
            result_shape.append(count)
        else:
            index = _as_index_array(item, length, axis)
            advanced_at.append(position)
            if index is None:
                h5key.append(_int_index(item, length, axis))
            else:
                if fancy_seen:  # not reached: _several_arrays() said so first
                    raise IndexError("only one index array (list or mask) is allowed per selection")
                fancy_seen = True
                unique, inverse = np.unique(index, return_inverse=True)
                h5key.append(unique)
                if unique.shape[0] != index.shape[0] or (np.diff(index) < 0).any():
                    take = (len(data_shape), inverse.reshape(-1))
                data_shape.append(int(unique.shape[0]))
                fancy_result_axis = len(result_shape)
                result_shape.append(int(index.shape[0]))
        axis += 1
    empty = math.prod(data_shape) == 0 or math.prod(result_shape) == 0
    front_axis = None
    adjacent = not advanced_at or advanced_at == list(
        range(advanced_at[0], advanced_at[-1] + 1)
    )
    if fancy_seen and not adjacent and fancy_result_axis:
        front_axis = fancy_result_axis
        result_shape.insert(0, result_shape.pop(front_axis))
    return SelectionPlan(
        tuple(h5key), tuple(data_shape), tuple(flips), take, tuple(result_shape), empty,
        front_axis=front_axis,
    )


def finish_read(plan: SelectionPlan, data: AnyArray, item_shape: Shape = ()) -> AnyArray:
    """Apply a plan's in-memory steps to the data its ``h5key`` read.

    ``item_shape`` is the shape of each element (HDF5 array types, PyTables' shaped atoms):
    those trailing axes of ``data`` are carried along untouched.
    """
    if plan.mask is not None:
        return data[plan.mask]
    if plan.points is not None:
        return data.reshape(plan.result_shape + item_shape)
    data = data.reshape(plan.shape + item_shape)
    if plan.flip_axes:
        data = np.flip(data, axis=plan.flip_axes)
    if plan.take is not None:
        data = np.take(data, plan.take[1], axis=plan.take[0])
    data = data.reshape(plan.inplace_shape + item_shape)
    if plan.front_axis is not None:
        data = np.moveaxis(data, plan.front_axis, 0)
    return data


def broadcast_value(value: Any, shape: Shape) -> AnyArray:
    """``value`` as a read-only view of ``shape``, by NumPy's rule for assignments:
    broadcasting, after dropping the leading dimensions of length 1 that ``shape`` lacks
    (``a[...] = b`` works for ``a`` of shape (3, 4) and ``b`` of shape (1, 3, 4)).

    Raises
    ------
    ValueError
        If the value does not broadcast to ``shape``.

    Examples
    --------
    >>> broadcast_value(np.ones((1, 1, 2)), (3, 2)).shape
    (3, 2)
    """
    array = np.asarray(value)
    extra = array.ndim - len(shape)
    if extra > 0 and all(dim == 1 for dim in array.shape[:extra]):
        array = array.reshape(array.shape[extra:])
    return np.broadcast_to(array, shape)


def prepare_write(plan: SelectionPlan, value: AnyArray, item_shape: Shape = ()) -> AnyArray:
    """Broadcast ``value`` to the selection and reorder it to match ``plan.h5key``.

    With repeated indices the last value given for an index wins, as in NumPy.
    ``item_shape`` is the shape of each element (trailing axes of ``value``).
    """
    value = broadcast_value(value, plan.result_shape + item_shape)
    if plan.front_axis is not None:
        value = np.moveaxis(value, 0, plan.front_axis)
    value = value.reshape(_without_new_axes(plan) + item_shape)
    if plan.take is not None:
        axis, inverse = plan.take
        # The last occurrence of each unique index wins (NumPy's assignment order).
        last = np.zeros(plan.shape[axis], dtype=np.int64)
        last[inverse] = np.arange(inverse.shape[0])
        value = np.take(value, last, axis=axis)
    if plan.flip_axes:
        value = np.flip(value, axis=plan.flip_axes)
    return np.ascontiguousarray(value)


def _without_new_axes(plan: SelectionPlan) -> Shape:
    """The selection's shape with the ``take`` axis at its requested length."""
    shape = list(plan.shape)
    if plan.take is not None:
        shape[plan.take[0]] = plan.take[1].shape[0]
    return tuple(shape)


def is_idx(index: object) -> bool:
    """Whether ``index`` can be used as one integer index (PyTables' ``utils.is_idx``):
    an int, a NumPy integer, an object with ``__index__`` that is not an array of one or
    more dimensions, or a 0-d integer array.  A bool passes with a DeprecationWarning."""
    if type(index) is int:
        return True
    if hasattr(index, "__index__"):
        if getattr(index, "shape", ()) != ():
            return False
        try:
            operator.index(index)
        except TypeError:
            return False
        if isinstance(index, bool):
            warnings.warn("using a boolean instead of an integer will result in an error in "
                          "the future", DeprecationWarning, stacklevel=2)
        return True
    if isinstance(index, np.integer):
        return True
    return isinstance(index, np.ndarray) and index.shape == () and index.dtype.kind == "i"


def idx2long(index: Any) -> int:
    """``index`` as a Python int (PyTables' ``utils.idx2long``).

    Raises
    ------
    TypeError
        If it cannot be converted.
    """
    try:
        return int(index.item()) if hasattr(index, "item") else int(index)
    except Exception as exc:
        raise TypeError("not an integer type.") from exc

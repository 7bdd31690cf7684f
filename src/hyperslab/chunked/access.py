"""Reading and writing selections of a dataset through the HDF5 filter pipeline.

This is the general path every selection can take; later the fast paths (raw chunks and
blosc2 partial decompression) serve what they can and leave the rest here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Selection, Shape
from hyperslab.chunked.allocation import check_result_size
from hyperslab.chunked.engine import ChunkEngine, RawKind
from hyperslab.chunked.gather import selected_coords, spans_more_chunks
from hyperslab.chunked.regions import Box, box_of, box_shape
from hyperslab.chunked.selection import (
    broadcast_value,
    finish_read,
    plan_selection,
    prepare_write,
)
from hyperslab.storage.datasets import Dataset


def read_selection(
    dataset: Dataset, key: Selection, engine: ChunkEngine | None = None,
    out: AnyArray | None = None,
) -> AnyArray:
    """Return ``dataset[key]`` with NumPy's semantics for ``key``.

    Parameters
    ----------
    dataset : Dataset
        The dataset to read.
    key : selection
        Anything :func:`~hyperslab.chunked.selection.plan_selection` accepts.
    engine : ChunkEngine, optional
        The dataset's raw-chunk engine: every selection of a Blosc2 dataset it serves is
        read through it, the rest through HDF5's filter pipeline.
    out : numpy.ndarray, optional
        A C-contiguous array of the result's shape and the dataset's dtype that the engine
        may decode straight into (then it is returned); otherwise a new array is returned.
    """
    shape = dataset.shape
    if dataset.is_scalar:
        data = dataset.read(())
        return data[key] if key not in ((), Ellipsis) else data
    plan = plan_selection(key, shape)
    if plan.empty:
        return np.empty(plan.result_shape, dtype=dataset.dtype)
    what = lambda: f"a selection of {dataset.name!r} of shape {shape}"  # noqa: E731
    itemsize = dataset.dtype.itemsize
    check_result_size(plan.shape, itemsize, what)  # refused before anything is planned
    check_result_size(plan.result_shape, itemsize, what)
    item_shape = _item_shape(dataset.dtype)
    # Blosc2 chunks: no filter pipeline, parallel decompression of only the blocks the
    # selection touches, whatever the selection; deflate chunks: many inflated at once.
    # Unfiltered chunks gain nothing over HDF5's copy, except single items (see
    # ChunkEngine.read_item).
    fast = engine is not None and engine.kind in (RawKind.BLOSC2, RawKind.DEFLATE)
    if plan.points is not None:
        return finish_read(plan, _read_points(dataset, plan.points), item_shape)
    if plan.mask is not None:
        everything = tuple(slice(None) for _ in shape)
        if fast and engine is not None and (engine.serves_key(everything)
                                            or not engine.filter_decodes(None)):
            return finish_read(plan, engine.read_gather(everything), item_shape)
        return finish_read(plan, dataset.read(()), item_shape)
    sparse = dataset.chunks is not None and spans_more_chunks(plan.h5key, shape,
                                                                dataset.chunks)
    # HDF5 crashes on or misreads strided and point selections far into a huge extent.
    overflows = dataset.selection_overflows(plan.h5key)
    if engine is not None and engine.kind is not None and (sparse or overflows):
        # Few items spread over many chunks: only the chunks holding them are visited.
        return finish_read(plan, engine.read_gather(plan.h5key), item_shape)
    if overflows:
        return finish_read(plan, _read_through_box(dataset, plan.h5key, plan.shape),
                           item_shape)
    if sparse and not dataset.dtype.hasobject:
        # HDF5 would visit every chunk of the selection's bounding box: read points.
        data = dataset.read_elements(selected_coords(plan.h5key, shape))
        return finish_read(plan, data, item_shape)
    if fast and engine is not None and engine.serves_key(plan.h5key):
        box = box_of(plan.h5key, shape)
        if box is not None and out is not None and not plan.flip_axes and _fits(
            out, plan.result_shape + item_shape, dataset.dtype
        ):
            engine.read_box(box, out.reshape(box_shape(box) + item_shape))
            return out
        return finish_read(plan, engine.read_gather(plan.h5key), item_shape)
    if fast and engine is not None and not engine.filter_decodes(plan.h5key):
        # HDF5's filter would leave part of a damaged chunk unwritten: the engine decodes
        # it right or says why it cannot.
        return finish_read(plan, engine.read_gather(plan.h5key), item_shape)
    return finish_read(plan, dataset.read(plan.h5key), item_shape)


_BOX_SLACK = 16
"""A strided selection HDF5 cannot take is read as its bounding box when that holds at most
this many times the selection's items (or ``_BOX_MIN_BYTES``); else it is refused."""
_BOX_MIN_BYTES = 1 << 26


def _read_through_box(dataset: Dataset, h5key: tuple[Any, ...], shape: Shape) -> AnyArray:
    """``dataset.read(h5key)`` as a unit-step box read and a NumPy selection of it.

    Raises
    ------
    HDF5ExtError
        If the box is much bigger than the selection (see ``_BOX_SLACK``).
    """
    box: list[Any] = []
    inner: list[Any] = []
    for item in h5key:
        if isinstance(item, slice):
            first, last = item.start, item.start + (len(range(
                item.start, item.stop, item.step)) - 1) * item.step
            box.append(slice(first, last + 1))
            inner.append(slice(None, None, item.step))
        elif isinstance(item, np.ndarray):
            box.append(slice(int(item[0]), int(item[-1]) + 1))
            inner.append(item - item[0])
        else:
            box.append(item)
    itemsize = dataset.dtype.itemsize
    nbytes = math.prod(b.stop - b.start for b in box if isinstance(b, slice)) * itemsize
    if nbytes > max(_BOX_SLACK * math.prod(shape) * itemsize, _BOX_MIN_BYTES):
        return dataset.read(h5key)  # refused there, naming the selection
    return dataset.read(tuple(box))[tuple(inner)]


def _points_box(dataset: Dataset, points: AnyArray) -> tuple[slice, ...]:
    """The bounding box of ``points``, refused if too big to hold in memory."""
    low, high = points.min(axis=0), points.max(axis=0) + 1
    check_result_size(tuple(int(n) for n in high - low), dataset.dtype.itemsize,
                      lambda: f"the bounding box of a point selection of {dataset.name!r}")
    return tuple(slice(int(lo), int(hi)) for lo, hi in zip(low, high, strict=True))


def _read_points(dataset: Dataset, points: AnyArray) -> AnyArray:
    """The elements at ``points`` (``(n, ndim)``, in bounds), as a 1-D array: an HDF5
    point selection, or for object dtypes (which HDF5 point reads cannot fill) their
    bounding box."""
    if not dataset.dtype.hasobject:
        return dataset.read_elements(points)
    box = _points_box(dataset, points)
    low = np.array([b.start for b in box], dtype=np.int64)
    return dataset.read(box)[tuple((points - low).T)]


def _write_points(dataset: Dataset, points: AnyArray, values: AnyArray) -> None:
    """Write ``values`` (one per point, in order; the last wins for a repeated point) at
    ``points`` by rewriting their bounding box."""
    box = _points_box(dataset, points)
    low = np.array([b.start for b in box], dtype=np.int64)
    data = dataset.read(box)
    data[tuple((points - low).T)] = values
    dataset.write(box, data)


def _fits(out: AnyArray, shape: Shape, dtype: np.dtype[Any]) -> bool:
    """Whether the engine may decode a box of ``shape`` and ``dtype`` straight into ``out``."""
    return (
        out.flags.c_contiguous
        and out.flags.writeable
        and out.dtype == dtype
        and out.shape == shape
    )


def write_selection(
    dataset: Dataset, key: Selection, value: Any, engine: ChunkEngine | None = None
) -> None:
    """Write ``value`` into ``dataset[key]``, broadcasting it as NumPy would.

    With an ``engine`` serving Blosc2 chunks, the chunks a box selection covers whole are
    compressed in parallel and written raw; the rest goes through HDF5's filter pipeline.

    Raises
    ------
    ValueError
        If ``value`` cannot be converted to the dataset's dtype or broadcast to the selection.
    """
    dtype = dataset.dtype
    array = _convert(value, dtype)
    if dataset.is_scalar:
        if key not in ((), Ellipsis):
            raise IndexError(f"a scalar dataset only accepts () or ... as index, not {key!r}")
        dataset.write((), np.broadcast_to(array, _item_shape(dtype)).copy())
        return
    plan = plan_selection(key, dataset.shape)
    if plan.points is not None:
        item_shape = _item_shape(dtype)
        try:
            values = broadcast_value(array, plan.result_shape + item_shape)
        except ValueError as exc:
            raise ValueError(
                f"could not broadcast a value of shape {array.shape} to the selection of "
                f"shape {plan.result_shape + item_shape}"
            ) from exc
        if not plan.empty:
            _write_points(dataset, plan.points,
                          values.reshape(plan.shape + item_shape))
        return
    if plan.mask is not None:
        full = dataset.read(())
        full[plan.mask] = array
        dataset.write((), full)
        return
    try:
        prepared = prepare_write(plan, array, _item_shape(dtype))
    except ValueError as exc:
        raise ValueError(
            f"could not broadcast a value of shape {array.shape} to the selection of shape "
            f"{plan.result_shape + _item_shape(dtype)}"
        ) from exc
    if plan.empty:
        return
    if engine is not None and engine.kind is RawKind.BLOSC2:
        box = box_of(plan.h5key, dataset.shape)
        if box is not None:
            block = prepared.reshape(box_shape(box) + _item_shape(dtype))
            engine.write_box(box, block, lambda part, data: _write_box(dataset, part, data))
            return
    dataset.write(plan.h5key, prepared)


def _write_box(dataset: Dataset, box: Box, data: AnyArray) -> None:
    """Write a box through HDF5's filter pipeline."""
    dataset.write(tuple(slice(start, stop) for start, stop in box), data)


def _item_shape(dtype: np.dtype[Any]) -> Shape:
    """The shape of one element: ``()``, or the subarray shape of an HDF5 array type."""
    return tuple(dtype.subdtype[1]) if dtype.subdtype is not None else ()


def _convert(value: Any, dtype: np.dtype[Any]) -> AnyArray:
    """Convert ``value`` to ``dtype`` with a clear error naming both."""
    try:
        if dtype.subdtype is not None:
            return np.asarray(value, dtype=dtype.subdtype[0])
        return np.asarray(value, dtype=dtype)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"value {value!r:.80} cannot be converted to dtype {dtype}: {exc}"
        ) from exc

"""Up-front checks of a dataset's extent against what HDF5 can address and what its
storage holds.

A damaged dataspace message gives a dataset any extent.  Two consequences are not caught
by HDF5 itself, and each is checked here once per read call (never per chunk or element):

* HDF5's selection arithmetic overflows past 2**64 bytes into an extent: a strided
  hyperslab reaching an element that far (measured with HDF5 2.0.0: ``d[0:33:2, :4]`` of
  a ``(37, 2**57)`` int32 dataset, whose row 32 starts 2**64 bytes in) crashes the process
  (SIGSEGV in ``H5S_select_iter_init``), loops for minutes or fails with a misleading
  error, and a point selection there reads other elements' values; unit-step boxes read
  right.  :func:`key_beyond` and :func:`points_beyond` tell whether a selection goes that
  far, so that the upper layers read it through the raw chunks or as a unit-step box
  instead; :func:`selection_limit_error` is what one raises if it still reaches HDF5.
* A contiguous dataset whose extent outgrew its storage (the layout message records the
  size written).  HDF5 only checks that the data ends before the end of the file, then
  reads the bytes that follow the storage (another object's) or, through its sieve
  buffer, the storage's first bytes again.  :func:`contiguous_shortfall` names it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from h5py import h5d

from hyperslab._typing import Shape
from hyperslab.errors import HDF5ExtError

SELECTION_LIMIT_BYTES = 1 << 63
"""Strided and point selections reaching this many bytes into an extent are refused (half
the 2**64 where HDF5 goes wrong: its signed offsets stop there)."""


def extent_nbytes(shape: Shape, itemsize: int) -> int:
    """The bytes an extent of ``shape`` spans (Python ints: never overflows)."""
    return math.prod(shape) * itemsize


def is_strided(key: Any) -> bool:
    """Whether an h5py selection key has a step other than 1 or an index list (what HDF5
    turns into a strided or irregular hyperslab)."""
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        if isinstance(item, slice):
            if item.step not in (None, 1):
                return True
        elif hasattr(item, "__len__") and not isinstance(item, (str, bytes)):
            return True
    return False


def key_corner(key: Any, shape: Shape) -> tuple[int, ...] | None:
    """The largest index per axis an h5py selection key (ints, positive-step slices,
    index lists, Ellipsis) selects, or None when it selects nothing."""
    items = key if isinstance(key, tuple) else (key,)
    if any(item is Ellipsis for item in items):
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        items = items[:at] + (slice(None),) * (len(shape) - len(items) + 1) + items[at + 1:]
    items = items + (slice(None),) * (len(shape) - len(items))
    corner = []
    for item, n in zip(items, shape, strict=False):
        if isinstance(item, slice):
            picked = range(*item.indices(n))
            if not picked:
                return None
            corner.append(max(picked[0], picked[-1]))
        elif hasattr(item, "__len__"):
            if not len(item):
                return None
            corner.append(int(np.max(item)) % n if n else 0)
        else:
            corner.append(int(item) % n if n else 0)
    return tuple(corner)


def reaches_beyond(shape: Shape, itemsize: int, corner: Sequence[int]) -> bool:
    """Whether the element at ``corner`` ends past :data:`SELECTION_LIMIT_BYTES` into an
    extent of ``shape`` (C order).

    Examples
    --------
    >>> reaches_beyond((37, 2**57), 4, (15, 3))
    False
    >>> reaches_beyond((37, 2**57), 4, (16, 0))
    True
    """
    offset = 0
    for index, n in zip(corner, shape, strict=True):
        offset = offset * n + int(index)
    return (offset + 1) * itemsize > SELECTION_LIMIT_BYTES


def key_beyond(shape: Shape, itemsize: int, key: Any) -> bool:
    """Whether HDF5 would crash on or misread the strided or listed selection ``key`` of an
    extent of ``shape``: a multiplication for extents under the limit (nearly all)."""
    if not is_strided(key) or extent_nbytes(shape, itemsize) <= SELECTION_LIMIT_BYTES:
        return False
    corner = key_corner(key, shape)
    return corner is not None and reaches_beyond(shape, itemsize, corner)


def points_beyond(shape: Shape, itemsize: int, points: Any) -> bool:
    """Whether HDF5 would misread a point selection of ``points`` (an ``(n, rank)`` array
    of in-bounds coordinates) of an extent of ``shape``."""
    if not len(points) or extent_nbytes(shape, itemsize) <= SELECTION_LIMIT_BYTES:
        return False
    corner = np.asarray(points).reshape(len(points), -1).max(axis=0)
    return reaches_beyond(shape, itemsize, corner.tolist())


def selection_limit_error(name: str, shape: Shape, key: Any, verb: str = "read"
                          ) -> HDF5ExtError:
    """The error for a selection :func:`key_beyond` or :func:`points_beyond` refuses."""
    return HDF5ExtError(
        f"cannot {verb} {key!r} of dataset {name!r} of shape {shape}: the selection reaches "
        f"past 2**63 bytes into the extent, where HDF5's strided and point selections "
        "go wrong (is the dataspace damaged?)"
    )


def contiguous_shortfall(dsid: h5d.DatasetID, name: Callable[[], str],
                         shape: Shape) -> str | None:
    """The message of the error for a contiguous dataset whose extent needs more bytes than
    its storage holds, or None (other layouts, storage not allocated yet, or enough of it).
    ``name()`` gives the dataset's name for the message (only then: it costs an HDF5 call).

    Compact datasets need no check: HDF5 refuses to open one whose data buffer does not
    match its extent.
    """
    if dsid.get_create_plist().get_layout() != h5d.CONTIGUOUS or dsid.get_offset() is None:
        return None  # not allocated yet (reads give the fill value), or external storage
    itemsize = dsid.get_type().get_size()
    needed = extent_nbytes(shape, itemsize)
    stored = int(dsid.get_storage_size())
    if stored >= needed:
        return None
    return (
        f"cannot read dataset {name()!r}: its extent {shape} of {itemsize}-byte elements needs "
        f"{needed} bytes, but its contiguous storage holds {stored}: the file is damaged"
    )


__all__ = [
    "SELECTION_LIMIT_BYTES", "contiguous_shortfall", "extent_nbytes", "is_strided",
    "key_beyond", "key_corner", "points_beyond", "reaches_beyond", "selection_limit_error",
]

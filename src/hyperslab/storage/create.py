"""Dataset creation: plain datasets (arrays) and table datasets (compound records).

The upper layers give a filter pipeline as plain ``(filter_id, flags, cd_values)`` steps in
PyTables' order, a fill value and a chunk shape; the datasets are made as PyTables makes
them (booleans as 8-bit ``H5T_BITFIELD``, ``H5D_FILL_TIME_ALLOC`` without a fill value,
tables as 1-D extendible datasets of the compound type of
:func:`~hyperslab.storage.compound.compound_file_type`) and returned wrapped in a
:class:`~hyperslab.storage.datasets.Dataset`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t, h5z

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import FilterNotAvailableError, HDF5ExtError
from hyperslab.storage import compound
from hyperslab.storage.compound import compound_file_type, exact_fill, set_raw_fill_value
from hyperslab.storage.datasetinfo import UNLIMITED
from hyperslab.storage.datasets import Dataset


def _file_type(dtype: np.dtype[Any]) -> h5t.TypeID:
    """The HDF5 file type PyTables would use for ``dtype``."""
    if dtype.kind == "b":
        return h5t.STD_B8BE.copy() if dtype.byteorder == ">" else h5t.STD_B8LE.copy()
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return h5t.array_create(_file_type(base), shape)
    members = None if dtype.metadata is None else dtype.metadata.get("enum")
    if members is not None:  # members in the dict's order (h5py's own type sorts them)
        htype = h5t.enum_create(_file_type(np.dtype(dtype.str)))
        for name, value in members.items():
            htype.enum_insert(name.encode("utf-8", "surrogateescape"), int(value))
        return htype
    if compound.is_big_long_complex(dtype):
        return compound.big_long_complex_type(dtype)
    return h5t.py_create(dtype, logical=True)


def _fill_array(fillvalue: Any, dtype: np.dtype[Any]) -> AnyArray:
    """A 0-d array holding ``fillvalue`` that h5py's ``set_fill_value`` converts correctly.

    Fixed-length strings go through h5py's variable-length string type (a 0-d ``S`` array is
    not converted correctly: the fill value would be garbage); booleans through ``uint8``.
    """
    if dtype.kind == "S":
        fill = np.empty((), dtype=h5py.string_dtype("ascii"))
        fill[()] = np.asarray(fillvalue, dtype=dtype).item()
        return fill
    fill = np.asarray(fillvalue, dtype=dtype)
    if dtype.kind == "b":
        fill = fill.view(np.uint8)
    return np.ascontiguousarray(fill).reshape(())


def _space(shape: Shape, maxshape: Sequence[int | None] | None) -> h5s.SpaceID:
    if maxshape is None:
        return h5s.create_simple(tuple(shape)) if shape != () else h5s.create(h5s.SCALAR)
    dims_max = tuple(UNLIMITED if m is None else m for m in maxshape)
    return h5s.create_simple(tuple(shape), dims_max)


def create_dataset(
    gid: h5py.h5g.GroupID,
    name: str,
    *,
    shape: Shape,
    dtype: np.dtype[Any],
    maxshape: Sequence[int | None] | None = None,
    chunks: Shape | None = None,
    pipeline: Sequence[tuple[int, int, tuple[int, ...]]] = (),
    fillvalue: Any = None,
    track_times: bool = True,
    htype: h5t.TypeID | None = None,
) -> Dataset:
    """Create a dataset and return it wrapped.

    Parameters
    ----------
    gid : h5py.h5g.GroupID
        The parent group.
    name : str
        The link name.
    shape : tuple of int
        The initial shape; ``()`` makes a scalar dataspace.
    dtype : numpy.dtype
        The element type (bool is stored as an 8-bit bitfield, as PyTables does; h5py's
        ``{"enum": members}`` metadata makes an HDF5 enum type, its members in that order).
    maxshape : sequence of int or None, optional
        The maximum shape; ``None`` entries are unlimited.
    chunks : tuple of int, optional
        The chunk shape; required with filters or unlimited dimensions.
    pipeline : sequence of (filter_id, flags, cd_values)
        The filters, applied in this order on write.
    fillvalue : scalar, optional
        The fill value of unwritten elements.  Without one, a chunked dataset gets
        ``H5D_FILL_TIME_ALLOC`` (zeros written when chunks are allocated), as in PyTables.
    track_times : bool
        Whether HDF5 records times in the object header.
    htype : h5py.h5t.TypeID, optional
        The file type, when ``dtype`` cannot say it (variable-length types); ``dtype`` is
        then used for nothing else.

    Raises
    ------
    FilterNotAvailableError
        If a filter of the pipeline is not available in this HDF5.
    HDF5ExtError
        If HDF5 refuses to create the dataset.
    """
    for filter_id, _flags, _cd in pipeline:
        check_filter_available(filter_id)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_obj_track_times(track_times)
    if chunks is not None:
        dcpl.set_chunk(tuple(int(c) for c in chunks))
    for filter_id, flags, cd_values in pipeline:
        dcpl.set_filter(int(filter_id), int(flags), tuple(int(v) for v in cd_values))
    if fillvalue is not None:
        if dtype.subdtype is not None:
            # h5py cannot convert a fill value to an H5T_ARRAY type; HDF5's default fill is
            # zeros, so only a zero fill value can be honoured.
            if np.any(np.asarray(fillvalue, dtype=dtype.subdtype[0])):
                raise NotImplementedError(
                    f"cannot create dataset {name!r} with the non-zero fill value "
                    f"{fillvalue!r} for elements of shape {dtype.subdtype[1]}: HDF5 array "
                    f"types only get zero fill values here"
                )
        else:
            dcpl.set_fill_value(_fill_array(fillvalue, np.dtype(dtype)))
    elif chunks is not None:
        dcpl.set_fill_time(h5d.FILL_TIME_ALLOC)  # what PyTables does without a fill value
    try:
        dsid = h5d.create(
            gid,
            name.encode("utf-8", "surrogateescape"),
            _file_type(np.dtype(dtype)) if htype is None else htype,
            _space(shape, maxshape),
            dcpl=dcpl,
        )
    except (OSError, ValueError) as exc:
        raise HDF5ExtError(f"cannot create dataset {name!r}: {exc}") from exc
    return Dataset(dsid)


def check_filter_available(filter_id: int) -> None:
    """Raise :class:`FilterNotAvailableError` unless HDF5 can apply filter ``filter_id``."""
    if not h5z.filter_avail(int(filter_id)):
        raise FilterNotAvailableError(
            f"the HDF5 filter with id {filter_id} is not available in this installation"
        )


def create_table_dataset(
    gid: h5py.h5g.GroupID,
    name: str,
    *,
    dtype: np.dtype[Any],
    time_fields: frozenset[str] = frozenset(),
    enums: Mapping[str, Mapping[str, int]] | None = None,
    chunks: Shape,
    pipeline: Sequence[tuple[int, int, tuple[int, ...]]] = (),
    fill_row: AnyArray | None = None,
    track_times: bool = True,
    byteorder: str | None = None,
) -> Dataset:
    """Create an empty, extendible table dataset and return it wrapped.

    The dataset is 1-D of shape ``(0,)``, maxshape ``(None,)``, chunked, of the compound
    type :func:`~hyperslab.storage.compound.compound_file_type` makes.

    Parameters
    ----------
    gid : h5py.h5g.GroupID
        The parent group.
    name : str
        The link name.
    dtype : numpy.dtype
        The layout dtype of the records.
    time_fields, enums
        As for :func:`~hyperslab.storage.compound.compound_file_type`.
    chunks : tuple of int
        The chunk shape (one int).
    pipeline : sequence of (filter_id, flags, cd_values)
        The filters, applied in this order on write.
    fill_row : numpy.ndarray, optional
        A 0-d array of `dtype`: the dataset's fill value.  h5py can only give HDF5 a fill
        value of a type it makes itself, so the fill value is set only when HDF5's
        conversion reproduces `fill_row` byte for byte: that fails when a time or bitfield
        (bool) field is non-zero, or a string field is full-length.  Then, as without
        `fill_row`, no fill value is set and chunks are zero-filled when allocated
        (``H5D_FILL_TIME_ALLOC``); tables keep their defaults in ``FIELD_<j>_FILL``.
    track_times : bool
        Whether HDF5 records times in the object header.
    byteorder : {'little', 'big'}, optional
        As for :func:`~hyperslab.storage.compound.compound_file_type`.

    Raises
    ------
    TypeError
        As :func:`~hyperslab.storage.compound.compound_file_type`.
    FilterNotAvailableError
        If a filter of the pipeline is not available in this HDF5.
    HDF5ExtError
        If HDF5 refuses to create the dataset.
    """
    dtype = np.dtype(dtype)
    ftype = compound_file_type(dtype, time_fields=time_fields, enums=enums,
                               byteorder=byteorder)
    for filter_id, _flags, _cd in pipeline:
        check_filter_available(filter_id)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_obj_track_times(track_times)
    dcpl.set_chunk(tuple(int(c) for c in chunks))
    for filter_id, flags, cd_values in pipeline:
        dcpl.set_filter(int(filter_id), int(flags), tuple(int(v) for v in cd_values))
    fill = None
    exact = False
    if fill_row is not None:
        row = np.asarray(fill_row, dtype=dtype)
        if row.shape != ():
            raise ValueError(f"the fill row must be a 0-d array, not of shape {row.shape}")
        exact = set_raw_fill_value(dcpl, ftype, np.ascontiguousarray(row))
        fill = None if exact else exact_fill(ftype, row)
    if isinstance(fill, np.ndarray):
        dcpl.set_fill_value(fill)
    elif not exact:
        dcpl.set_fill_time(h5d.FILL_TIME_ALLOC)
    dapl = None
    if not pipeline:
        # Unfiltered chunks are written by HDF5 straight from the caller's buffer when
        # they do not go through the chunk cache (HDF5 2 copies them into it first).
        dapl = h5p.create(h5p.DATASET_ACCESS)
        dapl.set_chunk_cache(0, 0, 0.0)
    try:
        dsid = h5d.create(
            gid, name.encode("utf-8", "surrogateescape"), ftype,
            h5s.create_simple((0,), (h5s.UNLIMITED,)), dcpl=dcpl, dapl=dapl,
        )
    except (OSError, ValueError) as exc:
        raise HDF5ExtError(f"cannot create table dataset {name!r}: {exc}") from exc
    return Dataset(dsid)


__all__ = ["check_filter_available", "create_dataset", "create_table_dataset"]

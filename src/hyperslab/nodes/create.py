"""Creating leaves: shapes, atoms, filters, chunk shapes and PyTables' system attributes."""

from __future__ import annotations

from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.chunkshape import (
    compute_chunkshape,
    compute_maxshape_carray,
    validate_chunkshape,
)
from hyperslab.codecs.filters import Filters
from hyperslab.codecs.ids import filter_name, plugin_hint
from hyperslab.codecs.pipeline import filters_to_pipeline
from hyperslab.errors import FilterNotAvailableError
from hyperslab.nodes.atom import Atom
from hyperslab.storage import attributes as raw
from hyperslab.storage.datasets import Dataset, check_filter_available, create_dataset

_PYTHON_FLAVOR_TYPES = (list, tuple, int, float, complex, bool, str, bytes)


def as_data(obj: Any, atom: Atom | None) -> tuple[AnyArray, str]:
    """Convert ``obj`` to an array (of ``atom``'s dtype if given) and tell its flavor.

    Raises
    ------
    TypeError
        For object, unicode or ragged data, which HDF5 arrays cannot hold.
    """
    flavor = "python" if isinstance(obj, _PYTHON_FLAVOR_TYPES) else "numpy"
    try:
        data = np.asarray(obj) if atom is None else np.asarray(obj, dtype=atom.dtype.base)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"cannot convert {obj!r:.80} into an array: {exc}") from exc
    if data.dtype.kind in "OUV" and not data.dtype.fields and data.dtype.kind != "c":
        raise TypeError(
            f"arrays of dtype {data.dtype} (object, unicode or void) cannot be stored in an "
            f"Array; convert them first (e.g. unicode to bytes with .astype('S'))"
        )
    return data, flavor


def with_byteorder(dtype: np.dtype[Any], byteorder: str | None) -> np.dtype[Any]:
    """``dtype`` in byte order ``byteorder`` ('little', 'big', or None to keep it).

    Raises
    ------
    ValueError
        For any other byteorder.
    """
    if byteorder is None:
        return dtype
    if byteorder not in ("little", "big"):
        raise ValueError(f"byteorder must be 'little', 'big' or None, not {byteorder!r}")
    return dtype.newbyteorder("<" if byteorder == "little" else ">")


def check_pipeline_available(filters: Filters) -> None:
    """Raise :class:`FilterNotAvailableError` naming the complib if it cannot be written."""
    for step in filters_to_pipeline(filters, 1, (1,)):
        try:
            check_filter_available(step.filter_id)
        except FilterNotAvailableError:
            raise FilterNotAvailableError(
                f"cannot write with complib {filters.complib!r}: the HDF5 filter "
                f"{filter_name(step.filter_id)!r} (id {step.filter_id}) is not available; "
                f"{plugin_hint(step.filter_id)}"
            ) from None


def write_leaf_sys_attrs(
    h5id: Any, classid: str, version: str, title: str, *, flavor: str | None = None,
    extdim: int | None = None,
) -> None:
    """Write PyTables' system attributes of a leaf (FORMAT.md §3.1)."""
    raw.write_sys_string(h5id, "CLASS", classid)
    raw.write_sys_string(h5id, "VERSION", version)
    raw.write_sys_string(h5id, "TITLE", title)
    if extdim is not None:
        raw.write_int_attribute(h5id, "EXTDIM", extdim, "int32")
    if flavor is not None:
        raw.write_sys_string(h5id, "FLAVOR", flavor)


def create_array_dataset(
    parent_id: Any, name: str, data: AnyArray, *, track_times: bool
) -> Dataset:
    """Create a contiguous dataset holding ``data`` (PyTables' Array)."""
    if data.size == 0:
        # HDF5 cannot create an empty contiguous dataset of every shape: chunk it, fixed.
        chunks = tuple(max(1, d) for d in data.shape) if data.ndim else None
        dataset = create_dataset(
            parent_id, name, shape=data.shape, dtype=data.dtype, maxshape=data.shape,
            chunks=chunks, track_times=track_times,
        )
        return dataset
    dataset = create_dataset(
        parent_id, name, shape=data.shape, dtype=data.dtype, track_times=track_times
    )
    dataset.write((), np.ascontiguousarray(data))
    return dataset


def chunked_layout(
    shape: Shape,
    atom: Atom,
    filters: Filters,
    *,
    maindim: int,
    expectedrows: int,
    chunkshape: Any,
    classname: str,
) -> Shape:
    """The chunk shape of a new CArray/EArray: validated ``chunkshape`` or computed."""
    if chunkshape is not None:
        return validate_chunkshape(chunkshape, shape)
    return compute_chunkshape(
        shape,
        atom.dtype.itemsize,
        maindim=maindim,
        expectedrows=expectedrows,
        complib=filters.complib if filters.complevel else None,
        classname=classname,
    )


def create_chunked_dataset(
    parent_id: Any,
    name: str,
    *,
    shape: Shape,
    atom: Atom,
    filters: Filters,
    chunkshape: Shape,
    extdim: int | None,
    byteorder: str | None,
    track_times: bool,
) -> Dataset:
    """Create the dataset of a CArray (``extdim`` None) or an EArray."""
    dtype = with_byteorder(atom.dtype.base if atom.dtype.subdtype else atom.dtype, byteorder)
    full_shape = tuple(shape) + tuple(atom.shape)
    full_chunks = tuple(chunkshape) + tuple(atom.shape)
    if extdim is None:
        maxshape: list[int | None] = list(compute_maxshape_carray(full_shape, full_chunks))
    else:
        maxshape = list(full_shape)
        maxshape[extdim] = None
    check_pipeline_available(filters)
    pipeline = [
        (s.filter_id, s.flags, s.cd_values)
        for s in filters_to_pipeline(filters, dtype.itemsize, full_chunks)
    ]
    return create_dataset(
        parent_id, name, shape=full_shape, dtype=dtype, maxshape=maxshape, chunks=full_chunks,
        pipeline=pipeline, fillvalue=atom.dflt, track_times=track_times,
    )


def filled(atom: Atom, shape: Any) -> AnyArray:
    """An array of ``shape`` (plus the atom's own shape) filled with the atom's default."""
    full = tuple(int(d) for d in _as_shape(shape)) + tuple(atom.shape)
    base = atom.dtype.base if atom.dtype.subdtype else atom.dtype
    return np.full(full, atom.dflt, dtype=base)


def _as_shape(shape: Any) -> Shape:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        result = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, not {shape!r}") from None
    if any(d < 0 for d in result):
        raise ValueError(f"shape dimensions must be non-negative, got {result}")
    return result


def resolve_atom_shape(
    atom: Atom | None, shape: Any, obj: Any, *, extendable: bool
) -> tuple[Atom, Shape, AnyArray | None]:
    """The atom, shape and initial data of a new CArray/EArray from PyTables' arguments.

    With ``obj`` the atom and shape come from it (checked against any given); an EArray's
    shape gets its first dimension set to 0 and ``obj`` is appended after creation.

    Raises
    ------
    TypeError
        If neither ``obj`` nor ``atom`` and ``shape`` are given.
    ValueError
        If ``obj`` disagrees with the given ``atom`` or ``shape``.
    """
    if obj is None:
        if atom is None or shape is None:
            raise TypeError("if the obj parameter is not specified, atom and shape parameters "
                            "must be")
        if not isinstance(atom, Atom):
            raise TypeError(f"atom must be an Atom instance, not {atom!r}")
        return atom, _as_shape(shape), None
    data, _flavor = as_data(obj, None)
    obj_atom = Atom.from_dtype(data.dtype)
    if atom is not None and atom.dtype.base != data.dtype:
        data = data.astype(atom.dtype.base)
        obj_atom = atom
    data_shape = data.shape
    if extendable:
        if not data_shape:
            raise ValueError("obj for an EArray must have at least one dimension")
        data_shape = (0, *data_shape[1:])
    if shape is not None and _as_shape(shape) != data_shape:
        raise ValueError(
            f"the shape of obj {data.shape} is not consistent with the shape argument "
            f"{_as_shape(shape)}"
        )
    return obj_atom, data_shape, data


def extendable_dim(shape: Shape) -> int:
    """The index of the single zero dimension of an EArray's shape.

    Raises
    ------
    ValueError
        If ``shape`` has no zero dimension or more than one.
    """
    zeros = [i for i, d in enumerate(shape) if d == 0]
    if len(zeros) != 1:
        raise ValueError(
            f"when creating EArrays, you need to set one of the dimensions of the shape to 0 "
            f"(and only one); the shape given is {tuple(shape)}"
        )
    return zeros[0]

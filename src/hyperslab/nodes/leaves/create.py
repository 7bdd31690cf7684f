"""Creating leaves: shapes, atoms, filters, chunk shapes and PyTables' system attributes."""

from __future__ import annotations

import operator
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
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.storage import attributes as raw
from hyperslab.storage.create import check_filter_available, create_dataset
from hyperslab.storage.datasets import Dataset

_PYTHON_FLAVOR_TYPES = (list, tuple, int, float, complex, bool, str, bytes)


def as_data(obj: Any, atom: Atom | None) -> tuple[AnyArray, str]:
    """Convert ``obj`` to an array (of ``atom``'s dtype if given) and tell its flavor.

    Raises
    ------
    TypeError
        For object, unicode or ragged data, which HDF5 arrays cannot hold.
    """
    python = isinstance(obj, _PYTHON_FLAVOR_TYPES) and not isinstance(obj, np.generic)
    flavor = "python" if python else "numpy"
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
    """Write PyTables' system attributes of a leaf (docs/format.md §3.1).

    Like PyTables, the strings of chunked arrays (CARRAY, EARRAY) are marked ASCII.
    """
    ascii = classid in ("CARRAY", "EARRAY")
    raw.write_sys_string(h5id, "CLASS", classid, ascii=ascii)
    raw.write_sys_string(h5id, "VERSION", version, ascii=ascii)
    raw.write_sys_string(h5id, "TITLE", title, ascii=ascii)
    if extdim is not None:
        raw.write_int_attribute(h5id, "EXTDIM", extdim, "int32")
    if flavor is not None:
        raw.write_sys_string(h5id, "FLAVOR", flavor)


def create_array_dataset(
    parent_id: Any, name: str, data: AnyArray, *, track_times: bool
) -> Dataset:
    """Create a contiguous dataset holding ``data`` (PyTables' Array)."""
    dataset = create_dataset(
        parent_id, name, shape=data.shape, dtype=data.dtype, track_times=track_times
    )
    if data.size:  # an empty array is an empty contiguous dataset, as PyTables makes it
        dataset.write_all(data)
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


def check_blockshape(blockshape: Any, chunkshape: Shape, filters: Filters) -> Shape | None:
    """A ``blockshape`` for ``create_carray``/``create_earray`` checked against the chunk
    shape and filters (None stays None: the engine chooses).

    Raises
    ------
    ValueError
        If the filters do not compress with Blosc2 alone, or ``blockshape`` is not one
        positive int per dimension, each at most the chunk's.
    """
    if blockshape is None:
        return None
    if not (filters.complevel and (filters.complib or "").startswith("blosc2")
            and not filters.fletcher32
            and filters.least_significant_digit is None):
        raise ValueError(
            f"blockshape {blockshape!r} needs Blosc2 compression as the only filter, not "
            f"{filters!r}"
        )
    try:
        blocks = tuple(operator.index(b) for b in blockshape)
    except TypeError:
        raise ValueError(f"blockshape must be a sequence of ints, not {blockshape!r}") from None
    if len(blocks) != len(chunkshape) or any(
        not 1 <= b <= c for b, c in zip(blocks, chunkshape, strict=True)
    ):
        raise ValueError(
            f"blockshape {blockshape!r} must have one dimension per chunk dimension, each "
            f"from 1 to the chunk's (chunkshape {chunkshape})"
        )
    return blocks


def enum_members(atom: Atom) -> dict[str, int]:
    """The members of an enumerated atom in the order PyTables gives its HDF5 enum type
    (the default member first, then the others in the Enum's order)."""
    enum = atom.enum  # type: ignore[attr-defined]
    default = atom._defname  # type: ignore[attr-defined]
    members = {default: int(enum[default])}
    members.update((name, int(value)) for name, value in enum if name != default)
    return members


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
    """Create the dataset of a CArray (``extdim`` None) or an EArray.

    As in PyTables, a shaped atom (``Int32Atom(shape=(2,))``) becomes an HDF5 array type:
    the dataset has the leaf's ``shape`` and each element holds ``atom.shape`` values.
    """
    base = with_byteorder(atom.dtype.base, byteorder)
    if atom.kind == "enum":  # an HDF5 enum type, as PyTables writes it
        base = np.dtype(base, metadata={"enum": enum_members(atom)})
    dtype = np.dtype((base, atom.shape)) if atom.shape else base
    if extdim is None:
        maxshape: list[int | None] = list(compute_maxshape_carray(shape, chunkshape))
    else:
        maxshape = list(shape)
        maxshape[extdim] = None
    check_pipeline_available(filters)
    pipeline = [
        (s.filter_id, s.flags, s.cd_values)
        for s in filters_to_pipeline(
            filters, dtype.itemsize, chunkshape, basetypesize=base.itemsize,
            classname="CARRAY" if extdim is None else "EARRAY",
        )
    ]
    # PyTables sets a fill value only for a true default or an array one (shaped atoms).
    dflt = atom.dflt
    fillvalue = dflt if isinstance(dflt, np.ndarray) or dflt else None
    return create_dataset(
        parent_id, name, shape=shape, dtype=dtype, maxshape=maxshape, chunks=chunkshape,
        pipeline=pipeline, fillvalue=fillvalue, track_times=track_times,
    )


def filled(atom: Atom, shape: Any) -> AnyArray:
    """The initial data of an Array made from ``atom`` and ``shape`` (no ``obj``).

    Zeros of ``shape`` plus the atom's own shape: PyTables ignores the atom's ``dflt``
    here (it does use it as the fill value of CArrays and EArrays).
    """
    full = tuple(int(d) for d in _as_shape(shape)) + tuple(atom.shape)
    base = atom.dtype.base if atom.dtype.subdtype else atom.dtype
    return np.zeros(full, dtype=base)


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
        If neither ``obj`` nor ``atom`` is given, or ``atom`` has a shape while ``obj`` is
        given (as in PyTables).
    ValueError
        If ``atom`` is given without ``shape`` (PyTables' type), ``obj`` disagrees with the
        given ``shape``, or a CArray's shape has a zero dimension.
    """
    if obj is None:
        if atom is not None and shape is None:
            raise ValueError("you must specify a non-empty shape: without the obj parameter, "
                             "both the atom and shape parameters must be given")
        if atom is None or shape is None:
            raise TypeError("the obj parameter, or both the atom and shape parameters, must "
                            "be given")
        if not isinstance(atom, Atom):
            raise TypeError(f"atom must be an Atom instance, not {atom!r}")
        return atom, _checked_carray_shape(_as_shape(shape), extendable), None
    if atom is not None and atom.shape:
        raise TypeError(
            f"the atom parameter {atom!r} is not consistent with the data type of the obj "
            f"parameter: an obj gives atoms without shape (its dims are the leaf's dims)"
        )
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
    return obj_atom, _checked_carray_shape(data_shape, extendable), data


def _checked_carray_shape(shape: Shape, extendable: bool) -> Shape:
    """``shape``, unless a CArray would get a zero dimension (PyTables refuses those)."""
    if not extendable and 0 in shape:
        raise ValueError(
            f"shape parameter cannot have zero-dimensions: {tuple(shape)} (use an EArray "
            f"for data that grows from nothing)"
        )
    return shape


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

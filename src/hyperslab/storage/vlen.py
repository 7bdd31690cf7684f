"""Variable-length datasets: the rows of PyTables' VLArrays as HDF5 ``H5T_VLEN`` elements.

A VLArray is a 1-D, extendible, chunked dataset whose element type is ``H5T_VLEN`` of the
atom's type (an ``H5T_ARRAY`` of it for shaped atoms; 8-bit ``H5T_BITFIELD`` for bools,
``H5T_TIME`` for times, as PyTables writes them).  Each dataset element is one row: a run of
any number of atoms.

Writing builds HDF5's own ``hvl_t`` records (``{size_t len; void *p}``, the public layout of
a variable-length element in memory) pointing into NumPy buffers that stay alive for the
call, and hands them to ``H5Dwrite`` with the file's own vlen type as the memory type: no
conversion takes place, so every element type works (h5py's vlen conversion refuses array
and time elements), and the bytes written are the rows' bytes in the file's byte order.

One convention is PyTables' and not HDF5's: PyTables gives HDF5 the file's own array
type as the memory type of shaped atoms, so their bytes are stored unconverted, in the
writing machine's order, even under a type that declares the other order
(``byteorder='big'`` on a little-endian machine).  PyTables reads them back the same way;
so does this module (:func:`element_dtype` gives shaped elements the native order), and
PyTables and hyperslab read each other's such files alike (h5py reads the declared order).

Reading goes through h5py's vlen conversion (rows become 1-D NumPy arrays it owns).  h5py
copies the file's bytes and labels numbers with the native byte order whatever the file's:
rows are reinterpreted with the element's file dtype (:func:`element_dtype`), which is
right whether h5py labels them or not.  h5py cannot read ``H5T_TIME`` elements at all:
they are read without conversion, with the file's vlen type as the memory type, through
HDF5's ``H5Dread`` and ``H5Treclaim`` (reached through ``ctypes``, as
:func:`~hyperslab.storage.compound.set_raw_fill_value` reaches ``H5Pset_fill_value``).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import Any

import h5py
import numpy as np
from h5py import h5s, h5t

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.storage.compound import _TIME_TYPES, _hdf5_library
from hyperslab.storage.create import _file_type, create_dataset
from hyperslab.storage.datasets import Dataset

try:  # h5py's lock around every HDF5 call: it has no public name, and HDF5 calls made
    # here through ctypes must hold it too (h5py's HDF5 is not thread-safe)
    from h5py._objects import phil as _h5py_lock
except ImportError:  # pragma: no cover - another h5py layout
    _h5py_lock = None

HVL_T = np.dtype([("len", np.uintp), ("p", np.uintp)])
"""The memory layout of one HDF5 variable-length element (``hvl_t``)."""


def element_file_type(dtype: np.dtype[Any], *, time: bool = False) -> h5t.TypeID:
    """The HDF5 type of one atom of a VLArray row, as PyTables writes it.

    Parameters
    ----------
    dtype : numpy.dtype
        The atom's dtype in the file's byte order: a subarray dtype for shaped atoms,
        h5py's enum metadata for enums; bool is stored as an 8-bit bitfield.
    time : bool
        Store ``int32``/``float64`` as PyTables' ``H5T_TIME`` types (Time32/Time64 atoms),
        always in the machine's byte order, as PyTables does whatever the VLArray's
        ``byteorder`` (it never sets the order of a time type).
    """
    base, shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
    if time:
        wanted = np.dtype(base).newbyteorder("=")
        element = next((t.copy() for t, layout in _TIME_TYPES if np.dtype(layout) == wanted),
                       None)
        if element is None:
            raise TypeError(f"time atoms are stored as int32 or float64, not {base}")
    elif base.metadata is not None and base.metadata.get("enum") is not None:
        # Members in the order given (h5py would sort them by name): PyTables' default first.
        element = h5t.enum_create(_file_type(np.dtype(base.str)))
        for name, value in base.metadata["enum"].items():
            element.enum_insert(name.encode("utf-8", "surrogateescape"), int(value))
    elif base.kind == "S":
        element = h5t.C_S1.copy()  # PyTables' strings: NUL-terminated
        element.set_size(base.itemsize)
        element.set_strpad(h5t.STR_NULLTERM)
    else:
        element = _file_type(np.dtype(base))
    return h5t.array_create(element, shape) if shape else element


def create_vlen_dataset(
    gid: h5py.h5g.GroupID,
    name: str,
    element: h5t.TypeID,
    *,
    chunkshape: Shape,
    pipeline: Sequence[tuple[int, int, tuple[int, ...]]] = (),
    track_times: bool = True,
) -> Dataset:
    """Create an empty, extendible 1-D dataset of ``H5T_VLEN`` of ``element``.

    Raises
    ------
    FilterNotAvailableError
        If a filter of the pipeline is not available in this HDF5.
    HDF5ExtError
        If HDF5 refuses to create the dataset.
    """
    return create_dataset(gid, name, shape=(0,), dtype=np.dtype(object), maxshape=(None,),
                          chunks=tuple(chunkshape), pipeline=pipeline,
                          track_times=track_times, htype=h5t.vlen_create(element))


def _super_type(dataset: Dataset) -> h5t.TypeID:
    vlen = dataset.dsid.get_type()
    if vlen.get_class() != h5t.VLEN:
        raise TypeError(f"dataset {dataset.name!r} is not of a variable-length type")
    return vlen.get_super()


def _innermost(htype: h5t.TypeID) -> h5t.TypeID:
    while htype.get_class() == h5t.ARRAY:
        htype = htype.get_super()
    return htype


def element_class(dataset: Dataset) -> str:
    """The HDF5 class of the innermost element type (``'TIME'``, ``'BITFIELD'``, ...)."""
    names = {h5t.TIME: "TIME", h5t.BITFIELD: "BITFIELD", h5t.ENUM: "ENUM",
             h5t.STRING: "STRING", h5t.INTEGER: "INTEGER", h5t.FLOAT: "FLOAT",
             h5t.COMPOUND: "COMPOUND", h5t.OPAQUE: "OPAQUE", h5t.VLEN: "VLEN",
             h5t.REFERENCE: "REFERENCE"}
    return names.get(_innermost(_super_type(dataset)).get_class(), "UNKNOWN")


def element_order(dataset: Dataset) -> str | None:
    """Byte order of the innermost element type: 'little', 'big', or None if it has none
    (one-byte types, strings)."""
    htype = _innermost(_super_type(dataset))
    if htype.get_class() == h5t.ENUM:
        htype = htype.get_super()
    elif htype.get_class() == h5t.COMPOUND:  # complex numbers: their parts' order
        assert isinstance(htype, h5t.TypeCompoundID)
        htype = htype.get_member_type(0)
    if htype.get_size() == 1:
        return None
    try:
        order = htype.get_order()
    except (AttributeError, ValueError, RuntimeError):
        if htype.get_class() != h5t.TIME:
            return None
        order = next((h5t.ORDER_LE if layout[0] == "<" else h5t.ORDER_BE
                      for t, layout in _TIME_TYPES if htype.equal(t)), None)
    return {h5t.ORDER_LE: "little", h5t.ORDER_BE: "big"}.get(order)


def element_dtype(dataset: Dataset) -> np.dtype[Any]:
    """The dtype of one atom of a row, in the order its bytes are stored.

    That is the file type's order, but for shaped atoms the native one (see the module
    docstring).  Shaped atoms give a subarray dtype, enums h5py's enum metadata, bitfields ``uint8``
    and times ``int32``/``float64`` (their layouts).

    Raises
    ------
    TypeError
        If the dataset is not variable-length, or its elements have no NumPy equivalent.
    """
    htype = _super_type(dataset)
    inner = _innermost(htype)
    if inner.get_class() == h5t.TIME:
        base = next((np.dtype(layout) for t, layout in _TIME_TYPES if inner.equal(t)), None)
        if base is None:
            raise TypeError(f"dataset {dataset.name!r} holds a time type PyTables never writes")
        if htype.get_class() == h5t.ARRAY:
            assert isinstance(htype, h5t.TypeArrayID)
            return np.dtype((base, tuple(htype.get_array_dims())))
        return base
    try:
        dtype = np.dtype(htype.dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"dataset {dataset.name!r} has elements of no NumPy type: {exc}") \
            from exc
    if dtype.subdtype is not None and dtype.subdtype[0].byteorder in "<>":
        # PyTables hands HDF5 the file's array type as the memory type of shaped atoms:
        # their bytes are stored in the writer's (native) order whatever the type says.
        return np.dtype((dtype.subdtype[0].newbyteorder("="), dtype.subdtype[1]))
    return dtype


def read_rows(dataset: Dataset, start: int, count: int, step: int = 1) -> list[AnyArray]:
    """Read ``count`` rows from ``start`` by ``step``, each an array of its atoms.

    A row of ``n`` atoms of shape ``s`` is an array of shape ``(n, *s)`` in the file's byte
    order (bitfields as ``uint8``, times as their stored words).

    Raises
    ------
    NotImplementedError
        For ``H5T_TIME`` elements where HDF5's C library cannot be reached (not Linux).
    HDF5ExtError
        If HDF5 cannot read the rows.
    """
    if count <= 0:
        return []
    dtype = element_dtype(dataset)
    dsid = dataset.dsid
    fspace = dsid.get_space()
    fspace.select_hyperslab((start,), (count,), (step,))
    if element_class(dataset) == "TIME":
        return _read_unconverted(dataset, fspace, count, dtype)
    out = np.empty((count,), dtype=object)
    try:
        dsid.read(h5s.create_simple((count,)), fspace, out,
                  h5t.py_create(h5py.vlen_dtype(dtype)))
    except (OSError, TypeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot read rows of dataset {dataset.name!r}: {exc}") from exc
    base, shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
    rows = []
    for row in out:
        data = np.asarray(row)
        if data.dtype.itemsize == base.itemsize and data.dtype.kind in "biufc":
            data = data.view(base.newbyteorder("=") if base.byteorder == "|" else base)
        rows.append(data.reshape((-1, *shape)))
    return rows


def _read_unconverted(dataset: Dataset, fspace: h5s.SpaceID, count: int,
                      dtype: np.dtype[Any]) -> list[AnyArray]:
    """Rows read with the file's own vlen type as the memory type: HDF5 converts nothing
    (h5py's vlen conversion refuses ``H5T_TIME`` elements, and HDF5 has no conversion
    from them to numbers) and fills ``hvl_t`` records with buffers it allocates, from
    which the bytes are copied before ``H5Treclaim`` frees them.

    ``H5Dread`` is called directly: h5py's ``DatasetID.read`` would read vlen data into a
    buffer of its own first and convert it, which leaks a copy of every row (measured: the
    size of the data at each read).  It runs under h5py's lock, as every HDF5 call of h5py
    does (its HDF5 is not thread-safe).
    """
    library = _vlen_functions()
    if library is None or _h5py_lock is None:
        raise NotImplementedError(
            f"reading dataset {dataset.name!r}: variable-length data of HDF5 time types "
            f"(PyTables' Time32Atom/Time64Atom VLArrays) needs HDF5's C library, which was "
            f"not found in this process")
    dsid = dataset.dsid
    mtype = dsid.get_type()
    mspace = h5s.create_simple((count,))
    records = np.zeros((count,), dtype=HVL_T)
    base, shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
    with _h5py_lock:
        status = library.H5Dread(dsid.id, mtype.id, mspace.id, fspace.id, _H5P_DEFAULT,
                                 records.ctypes.data)
        try:
            if status < 0:
                raise HDF5ExtError(f"cannot read rows of dataset {dataset.name!r}")
            rows = []
            for length, pointer in records.tolist():
                row = np.empty((length, *shape), dtype=base)
                if length:
                    ctypes.memmove(row.ctypes.data, pointer, row.nbytes)
                rows.append(row)
            return rows
        finally:  # whatever HDF5 allocated (records it did not fill are empty)
            library.H5Treclaim(mtype.id, mspace.id, _H5P_DEFAULT, records.ctypes.data)


_H5P_DEFAULT = 0
"""HDF5's ``H5P_DEFAULT`` property list."""

@functools.cache
def _vlen_functions() -> Any:
    """h5py's HDF5 library with ``H5Dread`` and ``H5Treclaim`` typed for ``ctypes``, or
    None where it cannot be found."""
    library = _hdf5_library()
    if library is None:
        return None
    try:
        read, reclaim = library.H5Dread, library.H5Treclaim
    except AttributeError:
        return None
    read.argtypes = (ctypes.c_int64,) * 5 + (ctypes.c_void_p,)
    read.restype = ctypes.c_int
    reclaim.argtypes = (ctypes.c_int64,) * 3 + (ctypes.c_void_p,)
    reclaim.restype = ctypes.c_int
    return library


def write_rows(dataset: Dataset, start: int, rows: Sequence[AnyArray]) -> None:
    """Write ``rows`` (arrays of the element dtype in the file's byte order, first axis the
    atoms of the row) as the rows from ``start``; the dataset must already hold them.

    Raises
    ------
    HDF5ExtError
        If HDF5 cannot write the rows.
    """
    if not rows:
        return
    keep = [np.ascontiguousarray(row) for row in rows]
    records = np.zeros((len(keep),), dtype=HVL_T)
    for i, row in enumerate(keep):
        n = row.shape[0] if row.ndim else 1
        records[i] = (n, row.ctypes.data if n and row.size else 0)
    dsid = dataset.dsid
    fspace = dsid.get_space()
    fspace.select_hyperslab((start,), (len(keep),))
    try:
        dsid.write(h5s.create_simple((len(keep),)), fspace, records, dsid.get_type())
    except (OSError, TypeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot write rows of dataset {dataset.name!r}: {exc}") from exc
    finally:
        del keep  # the buffers HDF5 read from live until here


def append_rows(dataset: Dataset, rows: Sequence[AnyArray]) -> None:
    """Extend the dataset by ``len(rows)`` rows and write them; on failure the extent is
    restored."""
    old = dataset.shape[0]
    dataset.resize((old + len(rows),))
    try:
        write_rows(dataset, old, rows)
    except BaseException:
        dataset.resize((old,))
        raise


def memory_size(dataset: Dataset) -> int:
    """Bytes all the rows take in memory (HDF5's ``H5Dvlen_get_buf_size``)."""
    nrows = dataset.shape[0]
    total = 0
    block = 4096
    for first in range(0, nrows, block):
        total += sum(r.nbytes for r in read_rows(dataset, first, min(block, nrows - first)))
    return total


__all__ = [
    "HVL_T",
    "append_rows",
    "create_vlen_dataset",
    "element_class",
    "element_dtype",
    "element_file_type",
    "element_order",
    "memory_size",
    "read_rows",
    "write_rows",
]

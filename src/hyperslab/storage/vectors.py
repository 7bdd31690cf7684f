"""One-dimensional datasets read by ranges with the fewest HDF5 calls.

A :class:`Vector` is what the arrays of a column index need right after a file is
opened: their dtype, length and chunk length, and ranges of them in native byte order.
Opening one costs four HDF5 calls (a :class:`~hyperslab.storage.datasets.Dataset`, which
serves every kind of dataset, costs about three times as much), and a read is one
hyperslab transfer straight into the returned array.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from h5py import h5a, h5d, h5s, h5t

from hyperslab._typing import AnyArray
from hyperslab.errors import HDF5ExtError


class Vector:
    """A 1-D dataset of numbers, booleans or fixed-length byte strings, read by ranges.

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open dataset.
    name : str
        What error messages call it (e.g. its path).

    Raises
    ------
    TypeError
        If ``dsid`` is not a 1-D dataset of integers, floats, one-byte bitfields (PyTables'
        booleans) or fixed-length strings.

    Examples
    --------
    >>> import h5py, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "v.h5")
    >>> with h5py.File(path, "w") as f:
    ...     _ = f.create_dataset("v", data=np.arange(10, dtype=">i4"), chunks=(4,))
    >>> with h5py.File(path, "r") as f:
    ...     v = Vector(f["v"].id, "/v")
    ...     print(len(v), v.chunks, v.dtype, v.read(3, 6))
    10 (4,) int32 [3 4 5]
    """

    __slots__ = ("_dsid", "_mtype", "_name", "chunks", "dtype")

    def __init__(self, dsid: Any, name: str) -> None:
        self._name = name
        self._dsid = dsid
        self.dtype: np.dtype[Any]
        self.chunks: tuple[int, ...] | None
        _, self.dtype, self._mtype, self.chunks = _describe(dsid, name, 1)

    def __len__(self) -> int:
        return int(self._dsid.get_space().shape[0])

    @property
    def dsid(self) -> Any:
        """The open dataset (its attributes are read through it)."""
        return self._dsid

    def read(self, start: int, stop: int) -> AnyArray:
        """Elements ``start .. stop - 1``, in native byte order.

        Raises
        ------
        IndexError
            If the range is not within the dataset.
        HDF5ExtError
            If HDF5 cannot read it (a corrupt chunk, a missing filter...).
        """
        start, stop = int(start), int(stop)
        fspace = self._dsid.get_space()
        length = int(fspace.shape[0])
        if not 0 <= start <= stop <= length:
            raise IndexError(f"elements {start}..{stop} are not within the {length} of "
                             f"{self._name}")
        out = np.empty(stop - start, dtype=self.dtype)
        if stop > start:
            fspace.select_hyperslab((start,), (stop - start,))
            try:
                self._dsid.read(h5s.create_simple((stop - start,)), fspace, out,
                                mtype=self._mtype)
            except OSError as exc:
                raise HDF5ExtError(f"cannot read elements {start}..{stop} of {self._name}: "
                                   f"{exc}") from exc
        return out


class Matrix:
    """A 2-D dataset of numbers, booleans or fixed-length byte strings, read by runs of one
    row or by whole rows (the ``sorted``, ``indices``, ``ranges`` and ``bounds`` arrays of
    a PyTables index: one row per slice).

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open dataset.
    name : str
        What error messages call it (e.g. its path).

    Raises
    ------
    TypeError
        If ``dsid`` is not a 2-D dataset of the types a :class:`Vector` reads.

    Examples
    --------
    >>> import h5py, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.h5")
    >>> with h5py.File(path, "w") as f:
    ...     _ = f.create_dataset("m", data=np.arange(12, dtype=">u2").reshape(3, 4))
    >>> with h5py.File(path, "r") as f:
    ...     m = Matrix(f["m"].id, "/m")
    ...     print(m.shape, m.dtype, m.read_row(1, 1, 3), m.read_rows(2, 3).tolist())
    (3, 4) uint16 [5 6] [[8, 9, 10, 11]]
    """

    __slots__ = ("_dsid", "_mtype", "_name", "chunks", "dtype", "shape")

    def __init__(self, dsid: Any, name: str) -> None:
        self._name = name
        self._dsid = dsid
        self.dtype: np.dtype[Any]
        self.chunks: tuple[int, ...] | None
        shape, self.dtype, self._mtype, self.chunks = _describe(dsid, name, 2)
        self.shape: tuple[int, int] = (shape[0], shape[1])

    @property
    def dsid(self) -> Any:
        """The open dataset."""
        return self._dsid

    def read_row(self, row: int, start: int, stop: int) -> AnyArray:
        """Elements ``start .. stop - 1`` of row ``row``, in native byte order.

        Raises
        ------
        IndexError
            If they are not within the dataset.
        HDF5ExtError
            If HDF5 cannot read them (a corrupt chunk, a missing filter...).
        """
        row, start, stop = int(row), int(start), int(stop)
        nrows, ncols = self.shape
        if not (0 <= row < nrows and 0 <= start <= stop <= ncols):
            raise IndexError(f"row {row}, elements {start}..{stop} are not within the "
                             f"{nrows} x {ncols} of {self._name}")
        return self._read((row, start), (1, stop - start)).reshape(stop - start)

    def read_rows(self, start: int, stop: int) -> AnyArray:
        """Rows ``start .. stop - 1``, whole, in native byte order.

        Raises
        ------
        IndexError
            If they are not within the dataset.
        HDF5ExtError
            If HDF5 cannot read them.
        """
        start, stop = int(start), int(stop)
        nrows, ncols = self.shape
        if not 0 <= start <= stop <= nrows:
            raise IndexError(f"rows {start}..{stop} are not within the {nrows} of "
                             f"{self._name}")
        return self._read((start, 0), (stop - start, ncols))

    def _read(self, offset: tuple[int, int], count: tuple[int, int]) -> AnyArray:
        out = np.empty(count, dtype=self.dtype)
        if out.size:
            fspace = self._dsid.get_space()
            fspace.select_hyperslab(offset, count)
            try:
                self._dsid.read(h5s.create_simple(count), fspace, out, mtype=self._mtype)
            except OSError as exc:
                raise HDF5ExtError(f"cannot read {count} elements at {offset} of "
                                   f"{self._name}: {exc}") from exc
        return out


def _describe(dsid: Any, name: str, ndim: int
              ) -> tuple[tuple[int, ...], np.dtype[Any], h5t.TypeID, tuple[int, ...] | None]:
    """Shape, native dtype, memory type and chunk shape of a dataset of ``ndim``
    dimensions.

    Raises
    ------
    TypeError
        If ``dsid`` is not a dataset of ``ndim`` dimensions of the types read here.
    """
    if not isinstance(dsid, h5d.DatasetID):
        raise TypeError(f"{name} is not a dataset")
    space = dsid.get_space()
    if space.get_simple_extent_ndims() != ndim:
        raise TypeError(f"{name} is not {('one', 'two')[ndim - 1]}-dimensional")
    dtype, mtype = _memory_type(dsid.get_type(), name)
    dcpl = dsid.get_create_plist()
    chunks = tuple(dcpl.get_chunk()) if dcpl.get_layout() == h5d.CHUNKED else None
    return tuple(int(n) for n in space.shape), dtype, mtype, chunks


@functools.cache
def _native_type(dtype: np.dtype[Any]) -> h5t.TypeID:
    """The HDF5 memory type of a native number dtype, made once (a read only names it:
    a new type per read would cost an HDF5 type copy and an h5py id each time)."""
    return h5t.py_create(dtype)


def _memory_type(ftype: h5t.TypeID, name: str) -> tuple[np.dtype[Any], h5t.TypeID]:
    """The native dtype that elements of the stored type ``ftype`` are read as, and the
    HDF5 memory type that reads them so.

    Raises
    ------
    TypeError
        If ``ftype`` is not an integer, a float, a one-byte bitfield (PyTables' booleans)
        or a fixed-length string.
    """
    if ftype.get_class() == h5t.BITFIELD and ftype.get_size() == 1:
        return np.dtype(bool), ftype  # PyTables' booleans: bytes 0 or 1
    try:
        file_dtype = np.dtype(ftype.dtype)
    except (ValueError, TypeError) as exc:  # e.g. a damaged float type h5py cannot map
        raise TypeError(f"{name} holds a type NumPy has no dtype for: {exc}") from exc
    if file_dtype.kind in "iuf" and file_dtype.shape == ():
        native = file_dtype.newbyteorder("=")
        return native, _native_type(native)  # HDF5 swaps bytes where needed
    if file_dtype.kind == "S":
        return file_dtype, ftype  # the stored bytes as they are
    raise TypeError(f"{name} holds {file_dtype}, not numbers or byte strings")


def read_vector_attribute(oid: Any, name: str) -> AnyArray:
    """A 1-D attribute of numbers, booleans or fixed-length byte strings, read whole in
    native byte order (the types a :class:`Vector` reads; an attribute lives in its
    object's header, so reading it opens no dataset).

    Raises
    ------
    KeyError
        If the object has no attribute ``name``.
    TypeError
        If the attribute is not 1-D or holds other types.
    """
    try:
        attr = h5a.open(oid, name.encode("utf-8"))
    except KeyError:
        raise KeyError(f"attribute {name!r} does not exist") from None
    space = attr.get_space()
    if space.get_simple_extent_type() == h5s.NULL:
        shape: tuple[int, ...] = (0,)
    else:
        shape = tuple(space.shape)
    if len(shape) != 1:
        raise TypeError(f"attribute {name!r} is not one-dimensional: shape {shape}")
    dtype, mtype = _memory_type(attr.get_type(), f"attribute {name!r}")
    out = np.empty(shape[0], dtype=dtype)
    if shape[0]:
        attr.read(out, mtype=mtype)
    return out


__all__ = ["Matrix", "Vector", "read_vector_attribute"]

"""One-dimensional datasets read by ranges with the fewest HDF5 calls.

A :class:`Vector` is what the arrays of a column index need right after a file is
opened: their dtype, length and chunk length, and ranges of them in native byte order.
Opening one costs four HDF5 calls (a :class:`~hyperslab.storage.datasets.Dataset`, which
serves every kind of dataset, costs about three times as much), and a read is one
hyperslab transfer straight into the returned array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from h5py import h5d, h5s, h5t

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
        if not isinstance(dsid, h5d.DatasetID):
            raise TypeError(f"{name} is not a dataset")
        if dsid.get_space().get_simple_extent_ndims() != 1:
            raise TypeError(f"{name} is not one-dimensional")
        self._dsid = dsid
        file_dtype = np.dtype(dsid.dtype)
        ftype = dsid.get_type()
        if ftype.get_class() == h5t.BITFIELD and ftype.get_size() == 1:
            self.dtype: np.dtype[Any] = np.dtype(bool)  # PyTables' booleans: bytes 0 or 1
            self._mtype = ftype
        elif file_dtype.kind in "iuf" and file_dtype.shape == ():
            self.dtype = file_dtype.newbyteorder("=")
            self._mtype = h5t.py_create(self.dtype)  # HDF5 swaps bytes where needed
        elif file_dtype.kind == "S":
            self.dtype = file_dtype
            self._mtype = ftype  # the stored bytes as they are
        else:
            raise TypeError(f"{name} holds {file_dtype}, not numbers or byte strings")
        dcpl = dsid.get_create_plist()
        chunked = dcpl.get_layout() == h5d.CHUNKED
        self.chunks: tuple[int, ...] | None = tuple(dcpl.get_chunk()) if chunked else None

    def __len__(self) -> int:
        return int(self._dsid.get_space().shape[0])

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


__all__ = ["Vector"]

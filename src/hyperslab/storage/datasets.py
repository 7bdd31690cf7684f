"""Dataset creation, inspection and plain (filter-pipeline) I/O through h5py.

A :class:`Dataset` wraps one HDF5 dataset with exactly the operations the upper layers need.
It hides two PyTables conventions h5py does not know: booleans stored as 8-bit
``H5T_BITFIELD`` (h5py would read them as ``uint8``), and filter pipelines given as plain
``(filter_id, flags, cd_values)`` steps in PyTables' order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t, h5z

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import FilterNotAvailableError, HDF5ExtError

UNLIMITED = h5s.UNLIMITED


class RawFilter(NamedTuple):
    """One step of an HDF5 filter pipeline as stored in the file."""

    filter_id: int
    flags: int
    cd_values: tuple[int, ...]
    name: str


def _file_type(dtype: np.dtype[Any]) -> h5t.TypeID:
    """The HDF5 file type PyTables would use for ``dtype``."""
    if dtype.kind == "b":
        return h5t.STD_B8BE.copy() if dtype.byteorder == ">" else h5t.STD_B8LE.copy()
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return h5t.array_create(_file_type(base), shape)
    return h5t.py_create(dtype, logical=True)


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
        The element type (bool is stored as an 8-bit bitfield, as PyTables does).
    maxshape : sequence of int or None, optional
        The maximum shape; ``None`` entries are unlimited.
    chunks : tuple of int, optional
        The chunk shape; required with filters or unlimited dimensions.
    pipeline : sequence of (filter_id, flags, cd_values)
        The filters, applied in this order on write.
    fillvalue : scalar, optional
        The fill value of unwritten elements.
    track_times : bool
        Whether HDF5 records times in the object header.

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
        fill = np.asarray(fillvalue, dtype=dtype)
        if dtype.kind == "b":
            fill = fill.view(np.uint8)
        dcpl.set_fill_value(np.ascontiguousarray(fill).reshape(()))
    try:
        dsid = h5d.create(
            gid,
            name.encode("utf-8", "surrogateescape"),
            _file_type(np.dtype(dtype)),
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


class Dataset:
    """One HDF5 dataset, as the upper layers see it.

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open low-level dataset.
    """

    __slots__ = ("_bitfield_bool", "_dset", "_dtype", "dsid")

    def __init__(self, dsid: h5d.DatasetID) -> None:
        self.dsid = dsid
        self._dset = h5py.Dataset(dsid)
        htype = dsid.get_type()
        self._bitfield_bool = htype.get_class() == h5t.BITFIELD and htype.get_size() == 1
        self._dtype: np.dtype[Any] = (
            np.dtype("?") if self._bitfield_bool else np.dtype(self._dset.dtype)
        )

    # ------------------------------------------------------------------ description
    @property
    def shape(self) -> Shape:
        """The current shape."""
        return tuple(self._dset.shape)

    @property
    def maxshape(self) -> tuple[int | None, ...]:
        """The maximum shape (``None`` for unlimited dimensions)."""
        maxshape = self._dset.maxshape
        return tuple(maxshape) if maxshape is not None else ()

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element dtype as NumPy sees it (bitfield booleans as ``bool``)."""
        return self._dtype

    @property
    def hdf5_class(self) -> str:
        """The HDF5 type class name of the elements (``'BITFIELD'``, ``'ENUM'``, ...)."""
        names = {
            h5t.INTEGER: "INTEGER",
            h5t.FLOAT: "FLOAT",
            h5t.STRING: "STRING",
            h5t.BITFIELD: "BITFIELD",
            h5t.OPAQUE: "OPAQUE",
            h5t.COMPOUND: "COMPOUND",
            h5t.ENUM: "ENUM",
            h5t.ARRAY: "ARRAY",
            h5t.VLEN: "VLEN",
            h5t.REFERENCE: "REFERENCE",
            h5t.TIME: "TIME",
        }
        return names.get(self.dsid.get_type().get_class(), "UNKNOWN")

    @property
    def chunks(self) -> Shape | None:
        """The chunk shape, or None for contiguous and compact datasets."""
        chunks = self._dset.chunks
        return tuple(chunks) if chunks is not None else None

    @property
    def is_scalar(self) -> bool:
        """Whether the dataspace is scalar (PyTables' 0-d arrays)."""
        return bool(self.dsid.get_space().get_simple_extent_type() == h5s.SCALAR)

    @property
    def is_null(self) -> bool:
        """Whether the dataspace is null (no elements, no shape)."""
        return bool(self.dsid.get_space().get_simple_extent_type() == h5s.NULL)

    def pipeline(self) -> tuple[RawFilter, ...]:
        """The filter pipeline as stored in the file, in application order."""
        dcpl = self.dsid.get_create_plist()
        steps = []
        for i in range(dcpl.get_nfilters()):
            filter_id, flags, cd_values, name = dcpl.get_filter(i)
            steps.append(
                RawFilter(
                    int(filter_id),
                    int(flags),
                    tuple(int(v) for v in cd_values),
                    name.decode("ascii", "replace") if isinstance(name, bytes) else str(name),
                )
            )
        return tuple(steps)

    def fillvalue(self) -> Any:
        """The dataset's fill value as a NumPy scalar (or array for subarray atoms)."""
        value = self._dset.fillvalue
        if self._bitfield_bool:
            return np.bool_(bool(value))
        return value

    def storage_size(self) -> int:
        """Bytes allocated in the file for the data (compressed size)."""
        return int(self.dsid.get_storage_size())

    def nbytes(self) -> int:
        """Bytes of the data uncompressed."""
        return int(math.prod(self.shape)) * self._dtype.itemsize

    # ------------------------------------------------------------------ I/O
    def read(self, key: Any = ()) -> AnyArray:
        """Read a selection h5py understands and return a NumPy array."""
        try:
            if self.is_null:
                return np.empty((0,), dtype=self._dtype)
            data = self._dset[key]
        except OSError as exc:
            raise _read_error(self, exc) from exc
        array = np.asarray(data)
        if self._bitfield_bool:
            array = array.view(np.bool_)
        return array

    def read_into(self, out: AnyArray, key: Any = ()) -> None:
        """Read a selection into a contiguous array ``out`` of the right shape and dtype."""
        dest = out.view(np.uint8) if self._bitfield_bool else out
        try:
            self._dset.read_direct(dest, source_sel=key if key != () else None)
        except OSError as exc:
            raise _read_error(self, exc) from exc

    def write(self, key: Any, value: AnyArray) -> None:
        """Write ``value`` (already of the dataset's dtype and broadcastable) at ``key``."""
        if self._bitfield_bool:
            value = np.asarray(value, dtype=np.bool_).view(np.uint8)
        try:
            self._dset[key] = value
        except OSError as exc:
            raise HDF5ExtError(f"cannot write to dataset {self._dset.name!r}: {exc}") from exc

    def resize(self, shape: Shape) -> None:
        """Change the current shape (within ``maxshape``)."""
        try:
            self._dset.resize(tuple(shape))
        except (OSError, ValueError) as exc:
            raise HDF5ExtError(
                f"cannot resize dataset {self._dset.name!r} to {tuple(shape)}: {exc}"
            ) from exc

    def flush(self) -> None:
        """Flush the dataset's buffers to the file."""
        self._dset.flush()


def _read_error(dataset: Dataset, exc: OSError) -> Exception:
    """Turn an h5py read error into ours, naming a missing filter when that is the cause."""
    for step in dataset.pipeline():
        if not h5z.filter_avail(step.filter_id):
            name = step.name or f"id {step.filter_id}"
            return FilterNotAvailableError(
                f"cannot read dataset {dataset._dset.name!r}: it needs the HDF5 filter "
                f"{name!r} (id {step.filter_id}), which is not available in this installation"
            )
    return HDF5ExtError(f"cannot read dataset {dataset._dset.name!r}: {exc}")

"""Dataset creation, inspection and plain (filter-pipeline) I/O through h5py.

A :class:`Dataset` wraps one HDF5 dataset with exactly the operations the upper layers need.
It hides two PyTables conventions h5py does not know: booleans stored as 8-bit
``H5T_BITFIELD`` (h5py would read them as ``uint8``), and filter pipelines given as plain
``(filter_id, flags, cd_values)`` steps in PyTables' order.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import h5py
import numpy as np
from h5py import h5d, h5f, h5i, h5p, h5s, h5t, h5z

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import FilterNotAvailableError, HDF5ExtError, NotChunkedError
from hyperslab.storage import compound, extent
from hyperslab.storage.chunkindex import ChunkIndex, ChunkLocation
from hyperslab.storage.preads import FileAccess, SparseChunk
from hyperslab.storage.rawchunks import RawChunks

UNLIMITED = h5s.UNLIMITED

_UNSET = object()

_RAW_CHUNKS_LOCK = threading.Lock()
"""Makes the lazy creation of a dataset's :class:`RawChunks` happen once."""


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


def _innermost(htype: h5t.TypeID) -> h5t.TypeID:
    """The element type inside any H5T_ARRAY nesting (PyTables' shaped atoms)."""
    while htype.get_class() == h5t.ARRAY:
        htype = htype.get_super()
    return htype


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
        The fill value of unwritten elements.  Without one, a chunked dataset gets
        ``H5D_FILL_TIME_ALLOC`` (zeros written when chunks are allocated), as in PyTables.
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


_RAW_POINTS_MAX = 256
"""Rows read by :meth:`Dataset.read_points` with a pread each (unfiltered, read-only)."""


def _row_runs(rows: list[int], per_chunk: int, size: int) -> list[tuple[tuple[int], int, int]]:
    """``(chunk coords, start byte, byte count)`` of every run of consecutive ``rows``
    within one chunk of ``per_chunk`` rows of ``size`` bytes (a sorted table's hits are
    one run).  A plain loop: for the few rows read with a pread each (up to
    :data:`_RAW_POINTS_MAX`) it costs a fifth of NumPy's diffs at 10 rows, less at 256."""
    runs = []
    first = rows[0]
    chunk = first // per_chunk
    count = 1
    for previous, row in itertools.pairwise(rows):
        if row == previous + 1 and row // per_chunk == chunk:
            count += 1
            continue
        runs.append(((chunk,), (first % per_chunk) * size, count * size))
        first, chunk, count = row, row // per_chunk, 1
    runs.append(((chunk,), (first % per_chunk) * size, count * size))
    return runs


class Dataset:
    """One HDF5 dataset, as the upper layers see it.

    Parameters
    ----------
    dsid : h5py.h5d.DatasetID
        The open low-level dataset.
    access : FileAccess, optional
        How its file is open (:func:`~hyperslab.storage.preads.file_access`), when the
        caller knows it already: else HDF5 is asked when needed.
    """

    __slots__ = (
        "_access",
        "_bitfield_bool",
        "_chunks",
        "_dcpl",
        "_dset",
        "_dtype",
        "_enum_bool",
        "_extent",
        "_fill_row",
        "_fixed_string",
        "_itemsize_matches",
        "_layout",
        "_layout_error",
        "_mtype",
        "_pipeline",
        "_raw",
        "_read_only",
        "_shape",
        "_shortfall",
        "before_lookup",
        "before_resize",
        "dsid",
    )

    def __init__(self, dsid: h5d.DatasetID, access: FileAccess | None = None) -> None:
        self.dsid = dsid
        self._access = access
        self._dset = h5py.Dataset(dsid)
        self.before_resize: Callable[[Shape], None] | None = None
        """Called with the new shape before every change of the extent (``resize``,
        ``append_rows``): the node layer keeps its flush markers with it."""
        self.before_lookup: Callable[[], None] | None = None
        """Given to :attr:`RawChunks.before_lookup` (set it before the first raw-chunk
        call)."""
        self._fill_row: AnyArray | object | None = _UNSET
        self._itemsize_matches: bool | None = None
        self._layout: compound.CompoundLayout | None = None
        self._layout_error: TypeError | None = None
        self._mtype: h5t.TypeID | None = None
        self._fixed_string: h5t.TypeID | None = None
        self._pipeline: tuple[RawFilter, ...] | None = None
        self._dcpl: h5p.PropDCID | None = None
        self._dtype: np.dtype[Any]
        ftype = dsid.get_type()
        if ftype.get_class() == h5t.COMPOUND and compound.complex_dtype_of(ftype) is None:
            self._init_compound(ftype)
        else:
            self._init_plain(ftype)
        # Scalar, simple or null: fixed at creation (resizing keeps a dataspace simple).
        self._extent = int(dsid.get_space().get_simple_extent_type())
        # Raw chunk access and the chunk index: made at the first raw-chunk call.
        self._raw: RawChunks | None = None
        # Facts that cannot change, read once: the chunk shape; the shape when the file is
        # open read-only (h5py's Dataset asks HDF5 each time, ~10 us).
        self._chunks: Shape | object | None = _UNSET
        self._read_only: bool | None = None
        self._shape: Shape | None = None
        self._shortfall: str | object | None = _UNSET

    def _init_compound(self, ftype: h5t.TypeID) -> None:
        """Compound datasets: all I/O in the file type, viewed as the layout dtype."""
        self._bitfield_bool = self._enum_bool = False
        try:
            self._layout = compound.layout_of_type(ftype)
        except TypeError as exc:
            self._layout_error = exc  # e.g. a vlen member: the node is UnImplemented
            try:
                self._dtype = np.dtype(self._dset.dtype)
            except (TypeError, ValueError):
                self._dtype = np.dtype(f"V{ftype.get_size()}")
            return
        self._dtype = self._layout.dtype
        self._mtype = ftype

    def _init_plain(self, ftype: h5t.TypeID) -> None:
        inner = _innermost(ftype)
        self._bitfield_bool = inner.get_class() == h5t.BITFIELD and inner.get_size() == 1
        dtype = np.dtype(self._dset.dtype)
        # h5py's bools are an int8 enum {FALSE, TRUE}: PyTables reads them as int8 (EnumAtom)
        self._enum_bool = inner.get_class() == h5t.ENUM and dtype.base.kind == "b"
        if self._bitfield_bool or self._enum_bool:
            base = np.dtype("?" if self._bitfield_bool else "i1")
            dtype = np.dtype((base, dtype.subdtype[1])) if dtype.subdtype else base
            self._mtype = ftype  # same bytes as `dtype`: no conversion
        elif (ftype.get_class() == h5t.STRING and not ftype.is_variable_str()
              and ftype.get_strpad() != h5t.STR_NULLPAD):
            # PyTables' strings are NUL-terminated: written through NumPy's NUL-padded
            # type, HDF5 would cut a value of the full width to make room for a NUL.
            # Written as the file's own type they keep every byte, as PyTables writes them.
            self._fixed_string = self._mtype = ftype
        self._dtype = dtype

    # ------------------------------------------------------------------ description
    @property
    def name(self) -> str:
        """The dataset's path in its file (``''`` for an anonymous dataset)."""
        name = self._dset.name
        return "" if name is None else str(name)

    @property
    def shape(self) -> Shape:
        """The current shape."""
        shape = self._shape
        if shape is None:
            shape = tuple(self._dset.shape)
            if self._read_only is None:
                access = self._access
                intent = (h5i.get_file_id(self.dsid).get_intent() if access is None
                          else access.intent)
                self._read_only = intent == h5f.ACC_RDONLY  # SWMR readers see it change
            if self._read_only:
                self._shape = shape
        return shape

    @property
    def read_only(self) -> bool:
        """Whether its file is open read-only (then nothing can change the dataset)."""
        if self._read_only is None:
            _ = self.shape  # asks the file once
        return bool(self._read_only)

    @property
    def maxshape(self) -> tuple[int | None, ...]:
        """The maximum shape (``None`` for unlimited dimensions)."""
        maxshape = self._dset.maxshape
        return tuple(maxshape) if maxshape is not None else ()

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element dtype as NumPy sees it (bitfield booleans as ``bool``).

        For compound datasets, the layout dtype (see :class:`CompoundLayout`).
        """
        return self._dtype

    @property
    def layout(self) -> compound.CompoundLayout | None:
        """The record layout of a compound dataset; None for other datasets.

        Complex numbers (compounds ``(r, i)``) are not compound datasets here.

        Raises
        ------
        TypeError
            If the compound type has members without a layout dtype (vlen, references, or
            a type damaged in the file).
        """
        if self._layout_error is not None:
            raise TypeError(
                f"dataset {self.name!r} has an unsupported compound type: {self._layout_error}"
            )
        return self._layout

    @property
    def raw_dtype(self) -> np.dtype[Any]:
        """The dtype as h5py reads it, with h5py's metadata (enums, vlens, references).

        For compound types h5py cannot map (time members), the layout dtype.
        """
        if self._layout is not None:
            try:
                return np.dtype(self._dset.dtype)
            except (TypeError, ValueError):
                return self._layout.dtype
        return np.dtype(self._dset.dtype)

    @property
    def raw_itemsize_matches(self) -> bool:
        """Whether an element takes as many bytes in the file as in :attr:`dtype`.

        When it does not (HDF5 converts the type on read, e.g. a long double written on
        another platform), raw chunk bytes cannot be viewed as :attr:`dtype`.
        """
        matches = self._itemsize_matches
        if matches is None:  # the type cannot change: asked once (an HDF5 call, ~50 us)
            matches = self._itemsize_matches = (
                int(self.dsid.get_type().get_size()) == self._dtype.itemsize)
        return matches

    @property
    def hdf5_class(self) -> str:
        """The HDF5 type class name of the elements (``'BITFIELD'``, ``'ENUM'``, ...).

        For array types (PyTables' shaped atoms) this is the class of the innermost element.
        """
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
        return names.get(_innermost(self.dsid.get_type()).get_class(), "UNKNOWN")

    @property
    def hdf5_order(self) -> str | None:
        """Byte order of the innermost element type: 'little', 'big', or None if it has none."""
        htype = _innermost(self.dsid.get_type())
        if htype.get_class() == h5t.ENUM:
            htype = htype.get_super()  # an enum's order is its integer base type's
        try:
            order = htype.get_order()
        except (AttributeError, ValueError, RuntimeError):
            return None  # strings, compounds, ... have no byte order
        return {h5t.ORDER_LE: "little", h5t.ORDER_BE: "big"}.get(order)

    @property
    def chunks(self) -> Shape | None:
        """The chunk shape, or None for contiguous and compact datasets."""
        chunks = self._chunks
        if chunks is _UNSET:
            dcpl = self._creation_plist()
            chunks = self._chunks = (
                tuple(int(n) for n in dcpl.get_chunk())
                if dcpl.get_layout() == h5d.CHUNKED else None)
        return chunks  # type: ignore[return-value]

    def _creation_plist(self) -> h5p.PropDCID:
        """The dataset creation property list, fetched once (to read from, never to change:
        chunk shape, filters and allocation are fixed at creation)."""
        dcpl = self._dcpl
        if dcpl is None:
            dcpl = self._dcpl = self.dsid.get_create_plist()
        return dcpl

    @property
    def is_scalar(self) -> bool:
        """Whether the dataspace is scalar (PyTables' 0-d arrays)."""
        return self._extent == h5s.SCALAR

    @property
    def is_null(self) -> bool:
        """Whether the dataspace is null (no elements, no shape)."""
        return self._extent == h5s.NULL

    def pipeline(self) -> tuple[RawFilter, ...]:
        """The filter pipeline as stored in the file, in application order (read once: a
        dataset's pipeline is fixed at its creation)."""
        steps = self._pipeline
        if steps is None:
            steps = self._pipeline = self._read_pipeline()
        return steps

    def _read_pipeline(self) -> tuple[RawFilter, ...]:
        dcpl = self._creation_plist()
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
        """The dataset's fill value as a NumPy scalar (or array for subarray atoms).

        Returns None when the dataset defines no fill value.  For compound datasets, the
        fill row: a 0-d array of the layout dtype (read once).
        """
        if self._layout is not None:
            fill = self._fill_row
            if fill is _UNSET:
                fill = self._fill_row = compound.read_fill_row(self.dsid, self._layout)
            return fill
        dcpl = self.dsid.get_create_plist()
        if dcpl.fill_value_defined() == h5d.FILL_VALUE_UNDEFINED:
            return None
        if self._dtype.subdtype is not None:
            value = self._array_fillvalue(dcpl)
        else:
            value = self._dset.fillvalue
        if self._bitfield_bool:
            return np.asarray(value).astype(np.bool_)[()]
        if self._enum_bool:
            return np.asarray(value).astype(np.int8)[()]
        return value

    def _array_fillvalue(self, dcpl: h5p.PropDCID) -> AnyArray:
        """The fill value of an H5T_ARRAY dataset.

        HDF5 cannot convert an array-typed fill value to a NumPy memory type, so an empty
        dataset with the same type and creation properties (filters removed, nothing is
        written) is made in a memory-only file and one unwritten element is read.
        """
        for i in reversed(range(dcpl.get_nfilters())):
            dcpl.remove_filter(dcpl.get_filter(i)[0])
        dcpl.set_fill_time(h5d.FILL_TIME_ALLOC)
        rank = self.dsid.get_space().get_simple_extent_ndims()
        if dcpl.get_layout() == h5d.CHUNKED:
            space = h5s.create_simple((1,) * rank, (UNLIMITED,) * rank)
        else:
            dcpl.set_layout(h5d.CONTIGUOUS)
            space = h5s.create_simple((1,) * rank) if rank else h5s.create(h5s.SCALAR)
        with h5py.File("fillvalue", "w", driver="core", backing_store=False) as scratch:
            dsid = h5d.create(scratch.id, b"fill", self.dsid.get_type(), space, dcpl=dcpl)
            return np.asarray(h5py.Dataset(dsid)[(0,) * rank])

    def selection_overflows(self, key: Any) -> bool:
        """Whether HDF5 would crash on or misread the strided or listed selection ``key``
        (one reaching 2**63 bytes into a huge extent, see :mod:`.extent`): it must be read
        through the raw chunks or as a unit-step box instead."""
        return extent.key_beyond(self.shape, self._dtype.itemsize, key)

    def _check_storage(self) -> None:
        """Refuse reads of a contiguous dataset whose storage is smaller than its extent
        (checked once: neither can change)."""
        message = self._shortfall
        if message is _UNSET:
            message = self._shortfall = (
                None if self.chunks is not None or self.is_null
                else extent.contiguous_shortfall(self.dsid, self.name, self.shape))
        if message is not None:
            raise HDF5ExtError(message)

    def _check_selection(self, key: Any, verb: str = "read") -> None:
        """Refuse a strided selection HDF5 would crash on (see :mod:`.extent`)."""
        if self.selection_overflows(key):
            raise extent.selection_limit_error(self.name, self.shape, key, verb)

    def _check_points(self, points: AnyArray, verb: str = "read",
                      shape: Shape | None = None) -> None:
        """Refuse a point selection HDF5 would misread (see :mod:`.extent`)."""
        shape = self.shape if shape is None else shape
        if extent.points_beyond(shape, self._dtype.itemsize, points):
            raise extent.selection_limit_error(self.name, shape, "points", verb)

    def storage_size(self) -> int:
        """Bytes allocated in the file for the data (compressed size)."""
        return int(self.dsid.get_storage_size())

    def nbytes(self) -> int:
        """Bytes of the data uncompressed."""
        return int(math.prod(self.shape)) * self._dtype.itemsize

    # ------------------------------------------------------------------ I/O
    def read(self, key: Any = ()) -> AnyArray:
        """Read a selection h5py understands and return a NumPy array.

        Compound datasets take ``()``, Ellipsis, ints and positive-step slices only, and are
        read in the file type (raw records of the layout dtype).

        Raises
        ------
        HDF5ExtError
            For a damaged dataset: a contiguous one whose storage is smaller than its
            extent, or a strided `key` of one whose extent HDF5 cannot address.
        """
        self._check_storage()
        self._check_selection(key)
        try:
            if self.is_null:
                return np.empty((0,), dtype=self._dtype)
            if self._layout is not None:
                assert self._mtype is not None
                sel = compound.selection_of(key, self.shape)
                return compound.read_selection(self.dsid, self._mtype, self._dtype, sel)
            data = self._dset[key]
        except OSError as exc:
            raise _read_error(self, exc) from exc
        array = np.asarray(data)
        if array.dtype.kind == "S" and array.dtype != self._dtype.base:
            array = array.astype(self._dtype.base)  # h5py returns scalar strings as bytes
        if self._bitfield_bool:
            array = array.view(np.bool_)
        elif self._enum_bool:
            array = array.view(np.int8)
        return array

    def write(self, key: Any, value: AnyArray) -> None:
        """Write ``value`` (already of the dataset's dtype and broadcastable) at ``key``."""
        self._check_selection(key, "write")
        if self._layout is not None:
            assert self._mtype is not None
            sel = compound.selection_of(key, self.shape)
            mtype, dtype = self._mtype, self._dtype
            self._guarded_write(
                key, lambda: compound.write_selection(self.dsid, mtype, dtype, sel, value)
            )
            return
        if self._fixed_string is not None:
            self._write_strings(key, value)
            return
        if self._bitfield_bool:
            value = np.asarray(value, dtype=np.bool_).view(np.uint8)
        elif self._enum_bool:
            value = np.asarray(value, dtype=np.int8).view(np.bool_)
        raw = self._raw
        try:
            self._dset[key] = value
        except OSError as exc:
            if raw is not None:
                raw.invalidate()  # some chunks may have been written
            raise HDF5ExtError(f"cannot write to dataset {self._dset.name!r}: {exc}") from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.written_through_pipeline(key)

    def _write_strings(self, key: Any, value: AnyArray) -> None:
        """Write fixed-length strings in the file's own string type (see ``_init_plain``);
        a key with one list of indices (h5py's fancy selection) is written item by item."""
        ftype = self._fixed_string
        assert ftype is not None
        items = key if isinstance(key, tuple) else (key,)
        lists = [i for i, item in enumerate(items)
                 if isinstance(item, list | np.ndarray) and np.ndim(item) == 1]
        if lists:
            axis = lists[0]
            data = np.asarray(value, dtype=self._dtype)
            along = data.ndim > axis and data.shape[axis] > 1  # else broadcast
            for position, index in enumerate(np.asarray(items[axis]).tolist()):
                part = (*items[:axis], slice(index, index + 1), *items[axis + 1:])
                self._write_strings(part, np.take(data, [position], axis=axis)
                                    if along else data)
            return
        sel = compound.selection_of(key, self.shape)
        self._guarded_write(
            key, lambda: compound.write_selection(self.dsid, ftype, self._dtype, sel, value))

    def write_all(self, value: AnyArray) -> None:
        """Write the whole dataset from ``value`` (of its shape), skipping h5py's selection code."""
        if (self._bitfield_bool or self._enum_bool or self._layout is not None
                or self._fixed_string is not None):
            self.write((), value)
            return
        data = np.ascontiguousarray(value)
        raw = self._raw
        try:
            self.dsid.write(h5s.ALL, h5s.ALL, data)
        except (OSError, TypeError) as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(f"cannot write to dataset {self._dset.name!r}: {exc}") from exc
        if raw is not None:
            raw.written_through_pipeline(())

    # ------------------------------------------------------------------ rows (1-D)
    def _memory_type(self) -> h5t.TypeID:
        """The memory type of row transfers: the file type when no conversion is needed."""
        mtype = self._mtype
        if mtype is None:
            if self._dtype.hasobject or self._layout_error is not None:
                raise TypeError(f"dataset {self.name!r} of dtype {self._dtype} has no raw rows")
            mtype = self._mtype = h5t.py_create(self._dtype)
        return mtype

    def _nrows(self) -> int:
        shape = self.shape
        if len(shape) != 1:
            raise ValueError(f"dataset {self.name!r} of shape {shape} is not 1-D")
        return shape[0]

    def read_rows(
        self, start: int, count: int, step: int = 1, out: AnyArray | None = None
    ) -> AnyArray:
        """Read rows ``start, start + step, ...`` (`count` of them) of a 1-D dataset.

        Parameters
        ----------
        start, count, step : int
            The first row, the number of rows and the distance between them (>= 1).
        out : numpy.ndarray, optional
            A writeable C-contiguous array of :attr:`dtype` and shape ``(count,)`` to read
            into.

        Returns
        -------
        numpy.ndarray
            `out`, or a new array.

        Raises
        ------
        ValueError
            For a bad `out` or a negative `start`/`count`, a `step` below 1, or a dataset
            that is not 1-D.
        IndexError
            If rows beyond the end are asked for.
        """
        sel = compound.rows_selection(start, count, step, self._nrows())
        out = compound.check_out(out, self._dtype, sel.counts[0])
        self._check_storage()
        if step > 1:
            first = sel.starts[0]
            self._check_selection(slice(first, first + sel.counts[0] * step, step))
        try:
            return compound.read_selection(self.dsid, self._memory_type(), self._dtype, sel, out)
        except OSError as exc:
            raise _read_error(self, exc) from exc

    def read_points(self, coords: Any, out: AnyArray | None = None) -> AnyArray:
        """Read the rows at `coords` (int64 row numbers, any order) of a 1-D dataset.

        `out` is as for :meth:`read_rows`, of shape ``(len(coords),)``.

        Raises
        ------
        IndexError
            Naming a coordinate out of range.
        ValueError
            As :meth:`read_rows`.
        """
        nrows = self._nrows()
        points = compound.check_points(coords, nrows)
        out = compound.check_out(out, self._dtype, points.shape[0])
        self._check_storage()
        self._check_points(points, shape=(nrows,))
        if 0 < points.shape[0] <= _RAW_POINTS_MAX and self._raw_points(points, out):
            return out
        if points.shape[0]:
            mspace, fspace = compound.point_spaces(self.dsid, points)
            try:
                self.dsid.read(mspace, fspace, out, mtype=self._memory_type())
            except OSError as exc:
                raise _read_error(self, exc) from exc
        return out

    def read_elements(self, coords: AnyArray) -> AnyArray:
        """The elements at ``coords``, an ``(n, rank)`` array of in-bounds indices, through
        an HDF5 point selection: a 1-D array of ``n`` elements of :attr:`dtype`.

        HDF5 maps a point selection to chunks point by point, where it maps a strided or
        irregular hyperslab by visiting every chunk of its bounding box: points are what
        a few elements spread over a huge extent must be read as.

        Raises
        ------
        TypeError
            For datasets whose elements have no raw memory type (object dtypes).
        """
        points = np.ascontiguousarray(coords, dtype=np.uint64).reshape(len(coords), -1)
        out = np.empty((points.shape[0],), dtype=self._dtype)
        if not points.shape[0]:
            return out
        self._check_storage()
        self._check_points(points)
        fspace = self.dsid.get_space()
        fspace.select_elements(points)
        mspace = h5s.create_simple((points.shape[0],))
        try:
            self.dsid.read(mspace, fspace, out, mtype=self._memory_type())
        except OSError as exc:
            raise _read_error(self, exc) from exc
        return out

    def _raw_points(self, points: AnyArray, out: AnyArray) -> bool:
        """Read a few rows of an unfiltered compound dataset of a read-only file with one
        ``os.pread`` each (its rows are the file type's bytes, which is what HDF5 would
        copy): a few microseconds a row instead of a point selection.  False where that
        does not apply (the caller reads through HDF5)."""
        if self._layout is None or not self.raw_itemsize_matches:
            return False
        chunks = self.chunks
        raw = self._raw if self._raw is not None else (
            self.raw_chunks() if chunks is not None else None)
        if raw is None or not raw.uses_pread or chunks is None or raw.nfilters:
            return False
        data = raw.read_pieces(_row_runs(points.tolist(), chunks[0], self._dtype.itemsize))
        if data is None:
            return False  # e.g. an unwritten chunk (the fill value: HDF5 knows it)
        out.view(np.uint8).reshape(-1)[:] = np.frombuffer(data, dtype=np.uint8)
        return True

    def write_rows(self, start: int, data: Any, step: int = 1) -> None:
        """Write `data` (a 1-D sequence of rows) at rows ``start, start + step, ...``.

        The rows must exist (resize first to append).

        Raises
        ------
        ValueError, IndexError
            As :meth:`read_rows`.
        """
        values = np.asarray(data, dtype=self._dtype)
        if values.ndim != 1:
            raise ValueError(f"rows to write must be 1-D, not of shape {values.shape}")
        sel = compound.rows_selection(start, values.shape[0], step, self._nrows())
        if not values.shape[0]:
            return
        first = sel.starts[0]
        self._check_selection(slice(first, first + values.shape[0] * step, step), "write")
        mtype, dtype = self._memory_type(), self._dtype
        key = slice(sel.starts[0], sel.starts[0] + (sel.counts[0] - 1) * sel.steps[0] + 1, step)
        self._guarded_write(
            key, lambda: compound.write_selection(self.dsid, mtype, dtype, sel, values)
        )

    def write_points(self, coords: Any, data: Any) -> None:
        """Write `data` (broadcast to ``(len(coords),)``) at the rows `coords`.

        Raises
        ------
        IndexError
            Naming a coordinate out of range.
        ValueError
            If `data` does not broadcast, or the dataset is not 1-D.
        """
        points = compound.check_points(coords, self._nrows())
        values = np.asarray(data, dtype=self._dtype)
        try:
            values = np.ascontiguousarray(np.broadcast_to(values, points.shape))
        except ValueError as exc:
            raise ValueError(
                f"cannot write {values.shape} values at {points.shape[0]} points"
            ) from exc
        if not points.shape[0]:
            return
        self._check_points(points, "write")
        mtype = self._memory_type()

        def transfer() -> None:
            mspace, fspace = compound.point_spaces(self.dsid, points)
            self.dsid.write(mspace, fspace, values, mtype=mtype)

        self._guarded_write((points,), transfer)

    def _guarded_write(self, key: Any, transfer: Any) -> None:
        """Run `transfer` (a write at `key`), keeping the raw-chunk bookkeeping right."""
        raw = self._raw
        try:
            transfer()
        except OSError as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(f"cannot write to dataset {self.name!r}: {exc}") from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.written_through_pipeline(key)

    def append_rows(self, start: int, data: AnyArray) -> None:
        """Grow a 1-D dataset to ``start + len(data)`` rows and write ``data`` there.

        The lean path of table appends: ``data`` must be a C-contiguous 1-D array of the
        dataset's dtype.  On failure the dataset keeps its ``start`` rows.

        Raises
        ------
        TypeError
            If ``data`` is not a C-contiguous 1-D array of the dataset's dtype (nothing is
            changed).
        HDF5ExtError
            If HDF5 refuses the resize or the write.
        """
        if (not isinstance(data, np.ndarray) or data.dtype != self._dtype or data.ndim != 1
                or not data.flags.c_contiguous):
            raise TypeError(
                f"rows appended to dataset {self.name!r} must be a C-contiguous 1-D array "
                f"of {self._dtype}, not {getattr(data, 'dtype', type(data).__name__)} of "
                f"shape {getattr(data, 'shape', None)}"
            )
        count = len(data)
        if self.before_resize is not None:
            self.before_resize((start + count,))
        dsid, raw = self.dsid, self._raw
        try:
            dsid.set_extent((start + count,))
            try:
                fspace = dsid.get_space()
                fspace.select_hyperslab((start,), (count,))
                dsid.write(h5s.create_simple((count,)), fspace, data,
                           mtype=self._memory_type())
            except BaseException:
                dsid.set_extent((start,))
                raise
        except OSError as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(
                f"cannot append {count} rows to dataset {self.name!r}: {exc}"
            ) from exc
        except BaseException:
            if raw is not None:
                raw.invalidate()
            raise
        if raw is not None:
            raw.resized((start + count,))
            raw.written_through_pipeline(slice(start, start + count))

    def resize(self, shape: Shape) -> None:
        """Change the current shape (within ``maxshape``)."""
        if self.before_resize is not None:
            self.before_resize(tuple(shape))
        raw = self._raw
        try:
            self._dset.resize(tuple(shape))
        except (OSError, ValueError) as exc:
            if raw is not None:
                raw.invalidate()
            raise HDF5ExtError(
                f"cannot resize dataset {self._dset.name!r} to {tuple(shape)}: {exc}"
            ) from exc
        if raw is not None:
            raw.resized(shape)

    def flush(self) -> None:
        """Flush the dataset's buffers to the file."""
        self._dset.flush()

    # ------------------------------------------------------------------ raw chunks
    # Chunks are named by grid coordinates: chunk numbers, element start // chunkshape.
    # The machinery (index bookkeeping, pread) is in hyperslab.storage.rawchunks.
    def raw_chunks(self) -> RawChunks:
        """The raw-chunk state of this dataset (made at the first call).

        Raises
        ------
        NotChunkedError
            If the dataset is contiguous or compact.
        """
        raw = self._raw
        if raw is None:
            chunks = self.chunks
            if chunks is None:
                raise NotChunkedError(
                    f"dataset {self._dset.name!r} is not chunked, so it has no raw chunks"
                )
            with _RAW_CHUNKS_LOCK:  # threads reading at once must share one index
                raw = self._raw
                if raw is None:
                    raw = RawChunks(self.dsid, chunks, self._creation_plist(),
                                    self._access, self.shape)
                    raw.before_lookup = self.before_lookup
                    self._raw = raw
        return raw

    @property
    def chunk_grid(self) -> Shape:
        """Chunks per dimension: ``ceil(shape / chunks)`` (NotChunkedError if contiguous)."""
        return self.raw_chunks().grid

    def chunk_location(self, grid_coords: Sequence[int]) -> ChunkLocation | None:
        """Where the chunk at ``grid_coords`` is stored, or None if it was never written.

        Exact after any write or resize made through this object.  A chunk written since
        the index was built may cost one HDF5 look-up (then cached).

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        IndexError
            If ``grid_coords`` is outside the current chunk grid.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.location(grid_coords)

    def chunk_is_written(self, grid_coords: Sequence[int]) -> bool:
        """Whether the chunk at ``grid_coords`` was written (O(1), never asks HDF5).

        Raises
        ------
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.is_written(grid_coords)

    def read_raw_chunk(self, grid_coords: Sequence[int]) -> tuple[bytes, int]:
        """The stored (still filtered) bytes and the filter mask of one chunk.

        On a file open read-only with the sec2 driver the bytes are read with ``os.pread``
        at the indexed offset; otherwise with ``read_direct_chunk``.

        Raises
        ------
        NoSuchChunkError
            If the chunk was never written.
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        HDF5ExtError
            If the chunk cannot be read (e.g. a truncated file).
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read(grid_coords)

    def sparse_chunk_looked_up(self, grid_coords: Sequence[int]) -> SparseChunk | None:
        """One chunk's stored bytes as a :class:`SparseChunk` (read where asked for),
        found without building the chunk index, on files open read-only with the sec2
        driver (HDF5 finds the one chunk): for the first reads after opening.  None where
        that does not apply, or for an unwritten chunk (then use :meth:`chunk_is_written`
        and :meth:`read_raw_chunk`).

        Raises
        ------
        NotChunkedError
            If the dataset is not chunked.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.sparse_looked_up(tuple(int(c) for c in grid_coords))

    def read_raw_chunk_into(self, grid_coords: Sequence[int], buffer: Any) -> int | None:
        """Read one chunk's stored bytes straight into ``buffer`` (writable, exactly the
        stored size), on files open read-only with the sec2 driver: no intermediate bytes.

        Returns the filter mask, or None where that fast read does not apply (then use
        :meth:`read_raw_chunk`).
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read_into(tuple(int(c) for c in grid_coords), buffer)

    def read_raw_range(self, grid_coords: Sequence[int], start: int, nbytes: int) -> bytes:
        """``nbytes`` stored bytes of one chunk from byte ``start`` (e.g. one item).

        Meant for unfiltered chunks.  On read-only files only those bytes are read.

        Raises
        ------
        ValueError
            If the range is not inside the chunk's stored bytes.
        NoSuchChunkError, NotChunkedError, IndexError, HDF5ExtError
            As :meth:`read_raw_chunk`.
        """
        raw = self._raw
        if raw is None:
            raw = self.raw_chunks()
        return raw.read_range(grid_coords, start, nbytes)

    def write_raw_chunk(self, grid_coords: Sequence[int], data: Any, filter_mask: int = 0) -> None:
        """Store ``data`` (bytes-like, already filtered) as one chunk, bypassing filters.

        Raises
        ------
        FileModeError
            If the file is open read-only.
        ValueError
            If ``data`` is empty, not contiguous, or (for a chunk stored unfiltered) not
            exactly one chunk of bytes.
        NotChunkedError, IndexError
            As :meth:`chunk_location`.
        HDF5ExtError
            If HDF5 refuses the chunk.
        """
        self.raw_chunks().write(grid_coords, data, filter_mask)

    def chunk_index(self) -> ChunkIndex:
        """An exact snapshot of where every written chunk is (see :class:`ChunkIndex`).

        Built with one ``chunk_iter`` pass the first time, then kept current cheaply.
        """
        return self.raw_chunks().index()

    def invalidate_chunk_index(self) -> None:
        """Forget the chunk index (after writes made outside this object); rebuilt lazily."""
        if self._raw is not None:
            self._raw.invalidate()


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

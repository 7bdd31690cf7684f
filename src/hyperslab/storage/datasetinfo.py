"""What a dataset is, as the upper layers see it: the base of
:class:`~hyperslab.storage.datasets.Dataset`.

:class:`DatasetInfo` reads, once where they cannot change, the facts about one HDF5 dataset:
its element type as NumPy sees it (with the PyTables convention h5py does not know:
booleans stored as 8-bit ``H5T_BITFIELD``, which h5py would read as ``uint8``; compound
records through their :class:`~hyperslab.storage.compound.CompoundLayout`), its shape and
dataspace, chunk shape, filter pipeline as stored (:class:`RawFilter` steps) and fill value,
and the selections HDF5 cannot address in its extent (:mod:`~hyperslab.storage.extent`).
Moving data in and out is the job of :class:`~hyperslab.storage.datasets.Dataset`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import h5py
import numpy as np
from h5py import h5d, h5f, h5i, h5p, h5s, h5t

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.storage import compound, extent
from hyperslab.storage.preads import FileAccess

UNLIMITED = h5s.UNLIMITED

_UNSET = object()


class RawFilter(NamedTuple):
    """One step of an HDF5 filter pipeline as stored in the file."""

    filter_id: int
    flags: int
    cd_values: tuple[int, ...]
    name: str


def _innermost(htype: h5t.TypeID) -> h5t.TypeID:
    """The element type inside any H5T_ARRAY nesting (PyTables' shaped atoms)."""
    while htype.get_class() == h5t.ARRAY:
        htype = htype.get_super()
    return htype


_NUMBER_NAMES: dict[int, tuple[tuple[str, str, tuple[int, ...]], ...]] = {
    h5t.INTEGER: (("STD_I", "i", (1, 2, 4, 8)), ("STD_U", "u", (1, 2, 4, 8))),
    h5t.FLOAT: (("IEEE_F", "f", (4, 8)),),
}
"""HDF5's standard integer and IEEE float types by class: name prefix, NumPy kind and
sizes (``STD_I8LE`` is ``<i1``...)."""

_NumberKey = tuple[int, int, int]
_NUMBER_TYPES: dict[_NumberKey, tuple[tuple[h5t.TypeID, np.dtype[Any]], ...]] = {}
"""The standard types of one (class, size, byte order), with their dtype, made at the
first dataset of that key: (HDF5 type, dtype) pairs."""


def _number_types(type_class: int, size: int, order: int) -> tuple[
        tuple[h5t.TypeID, np.dtype[Any]], ...]:
    """HDF5's standard types of class ``type_class``, ``size`` bytes and byte ``order``,
    each with the dtype h5py gives it.

    Made from the names, with no HDF5 call and no h5py type conversion (building them all
    with ``TypeID.dtype`` cost 150 us of a process's first read, measured); the dtypes
    are h5py's own (tested against ``TypeID.dtype`` for every standard type).
    """
    key = (type_class, size, order)
    types = _NUMBER_TYPES.get(key)
    if types is None:  # made whole, then published: threads see all of it or none
        suffix, sign = ("LE", "<") if order == h5t.ORDER_LE else ("BE", ">")
        made: list[tuple[h5t.TypeID, np.dtype[Any]]] = []
        if order in (h5t.ORDER_LE, h5t.ORDER_BE):
            for prefix, kind, sizes in _NUMBER_NAMES.get(type_class, ()):
                if size in sizes:
                    made.append((getattr(h5t, f"{prefix}{size * 8}{suffix}"),
                                 np.dtype(f"{sign}{kind}{size}")))
        types = _NUMBER_TYPES[key] = tuple(made)
    return types


def _standard_dtype(ftype: h5t.TypeID, type_class: int, size: int) -> np.dtype[Any] | None:
    """The dtype h5py gives ``ftype`` when it is one of HDF5's standard integer or IEEE
    float types, else None.

    h5py's conversion of a float type reads its fields, bias and precision and compares
    them with NumPy's floats (~20 us of a dataset's first read, measured); one ``H5Tequal``
    with the standard type of the same class, size and order says the same exactly (equal
    types convert alike), and its dtype is h5py's own answer for that standard type.
    """
    if type_class != h5t.INTEGER and type_class != h5t.FLOAT:
        return None
    for std, dtype in _number_types(type_class, size, ftype.get_order()):
        if ftype.equal(std):
            return dtype
    return None


class DatasetInfo:
    """What one HDF5 dataset is (see the module docstring): the base of
    :class:`~hyperslab.storage.datasets.Dataset`, which documents the parameters."""

    __slots__ = (
        "_access",
        "_bitfield_bool",
        "_chunks",
        "_dcpl",
        "_dset_",
        "_dtype",
        "_enum_bool",
        "_extent",
        "_file_itemsize",
        "_fill_row",
        "_fixed_string",
        "_itemsize_matches",
        "_layout",
        "_layout_error",
        "_mtype",
        "_pipeline",
        "_read_only",
        "_shape",
        "_shortfall",
        "dsid",
    )

    def __init__(self, dsid: h5d.DatasetID, access: FileAccess | None = None) -> None:
        self.dsid = dsid
        self._access = access
        self._dset_: h5py.Dataset | None = None  # made when first needed (~7 us)
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
        self._file_itemsize = int(ftype.get_size())
        type_class = ftype.get_class()
        if type_class == h5t.COMPOUND and compound.complex_dtype_of(ftype) is None:
            self._init_compound(ftype)
        else:
            self._init_plain(ftype, _standard_dtype(ftype, type_class, self._file_itemsize))
        # Scalar, simple or null: fixed at creation (resizing keeps a dataspace simple).
        space = dsid.get_space()
        self._extent = int(space.get_simple_extent_type())
        # Facts that cannot change, read once: the chunk shape; the shape when the file is
        # open read-only (h5py's Dataset asks HDF5 each time, ~10 us), here from the
        # dataspace just read when the caller said how the file is open.
        self._chunks: Shape | object | None = _UNSET
        self._read_only: bool | None = None
        self._shape: Shape | None = None
        if access is not None:
            self._read_only = access.intent == h5f.ACC_RDONLY  # SWMR readers see it change
            dims = space.shape  # None for a null dataspace: left to `shape`
            if self._read_only and dims is not None:
                self._shape = tuple(dims)
        self._shortfall: str | object | None = _UNSET

    @property
    def _dset(self) -> h5py.Dataset:
        """h5py's high-level Dataset over :attr:`dsid`, for the I/O it does best (made at
        the first use: a leaf read one item at a time never needs it)."""
        dset = self._dset_
        if dset is None:
            dset = self._dset_ = h5py.Dataset(self.dsid)
        return dset

    def _init_compound(self, ftype: h5t.TypeID) -> None:
        """Compound datasets: all I/O in the file type, viewed as the layout dtype."""
        self._bitfield_bool = self._enum_bool = False
        try:
            self._layout = compound.layout_of_type(ftype)
        except TypeError as exc:
            self._layout_error = exc  # e.g. a vlen member: the node is UnImplemented
            try:
                self._dtype = np.dtype(self.dsid.dtype)
            except (TypeError, ValueError):
                self._dtype = np.dtype(f"V{ftype.get_size()}")
            return
        self._dtype = self._layout.dtype
        self._mtype = ftype

    def _init_plain(self, ftype: h5t.TypeID, standard: np.dtype[Any] | None) -> None:
        if standard is not None:  # a plain number: nothing below applies to it
            self._bitfield_bool = self._enum_bool = False
            self._dtype = standard
            return
        inner = _innermost(ftype)
        self._bitfield_bool = inner.get_class() == h5t.BITFIELD and inner.get_size() == 1
        try:
            # What h5py's Dataset.dtype returns (DatasetID.dtype is get_type().dtype):
            # from the type read already, not a second H5Dget_type (~10 us cold).
            dtype = np.dtype(ftype.dtype)
        except TypeError:
            if ftype.get_class() != h5t.VLEN:
                raise
            dtype = np.dtype(object)  # a vlen of H5T_TIME: see storage/vlen.py
        # h5py's bools are an int8 enum {FALSE, TRUE}: PyTables reads them as int8 (EnumAtom)
        self._enum_bool = inner.get_class() == h5t.ENUM and dtype.base.kind == "b"
        if self._bitfield_bool or self._enum_bool:
            base = np.dtype("?" if self._bitfield_bool else "i1")
            dtype = np.dtype((base, dtype.subdtype[1])) if dtype.subdtype else base
            self._mtype = ftype  # same bytes as `dtype`: no conversion
        elif compound.is_big_long_complex(dtype) and ftype.get_class() == h5t.COMPOUND:
            self._mtype = ftype  # h5py's own type for it is a little-endian pair
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
            shape = tuple(self.dsid.shape)  # what h5py's Dataset.shape returns
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
        # h5py's Dataset.maxshape, without making h5py's Dataset
        dims = self.dsid.get_space().get_simple_extent_dims(True)
        if dims is None:
            return ()
        return tuple(None if n == UNLIMITED else int(n) for n in dims)

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
        if matches is None:  # the type cannot change: its size was read on opening
            matches = self._itemsize_matches = self._file_itemsize == self._dtype.itemsize
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
                else extent.contiguous_shortfall(self.dsid, lambda: self.name, self.shape))
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


__all__ = ["UNLIMITED", "DatasetInfo", "RawFilter"]

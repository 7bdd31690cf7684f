"""Compound (table) datasets: their layout, their HDF5 type, and raw-layout I/O.

PyTables stores a table as a 1-D chunked dataset of an HDF5 compound type whose members may
be of classes h5py cannot map to NumPy (``H5T_TIME``) or maps differently from PyTables
(8-bit ``H5T_BITFIELD`` booleans, which h5py reads as ``uint8``; fixed ``NULLTERM`` strings,
which h5py converts from its ``NULLPAD`` ones by dropping the last character of
full-length values).  So compound datasets are never read or written through h5py's dtype
mapping: every transfer uses the file type itself as the memory type (HDF5's no-op
conversion, a ``memcpy``) and the bytes are viewed as the *layout dtype*
(:class:`CompoundLayout`), the NumPy structured dtype with exactly the file's layout.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t

from hyperslab._typing import AnyArray, Shape

_TIME_TYPES: tuple[tuple[h5t.TypeID, str], ...] = (
    (h5t.UNIX_D32LE, "<i4"),
    (h5t.UNIX_D32BE, ">i4"),
    (h5t.UNIX_D64LE, "<f8"),
    (h5t.UNIX_D64BE, ">f8"),
)
"""The H5T_TIME types PyTables writes (Time32Col, Time64Col) and their layout dtypes."""


_COMPLEX_PART_SIZES = frozenset(
    [4, 8] + [np.dtype(np.longdouble).itemsize] * (np.dtype(np.longdouble).itemsize > 8))
"""Sizes of the floats of the complex numbers NumPy has: single, double and, where the
platform has them, long double (PyTables' complex192/complex256 are pairs of native long
doubles, as h5py's are)."""


class CompoundLayout(NamedTuple):
    """How the records of a compound dataset are laid out, as NumPy sees them.

    Attributes
    ----------
    dtype : numpy.dtype
        The *layout dtype*: the structured dtype with the file's names, offsets, itemsize
        and byte orders.  8-bit bitfields are ``?``, 4- and 8-byte times ``int32`` and
        ``float64``, enums their base integer type, ``(r, i)`` float pairs complex.
    time_fields : frozenset of str
        Paths (``'a'``, ``'nested/x'``) of the leaf fields stored as ``H5T_TIME``.
    bitfield_fields : frozenset of str
        Paths of the leaf fields stored as 8-bit ``H5T_BITFIELD`` (PyTables' booleans).
    enums : mapping
        Leaf path -> ``{member name: value}`` in HDF5's member order, for every
        ``H5T_ENUM`` leaf (h5py's booleans, an int8 enum ``{FALSE, TRUE}``, included).
    """

    dtype: np.dtype[Any]
    time_fields: frozenset[str]
    bitfield_fields: frozenset[str]
    enums: Mapping[str, Mapping[str, int]]
    byteorder: str = "irrelevant"
    """PyTables' byte order of the table: 'little' or 'big' when every number, enum and
    time member (one-byte ones included) has that order, 'mixed' when they differ,
    'irrelevant' when there are none."""


# ---------------------------------------------------------------------- file -> layout
class _Collect:
    """What a walk over a compound type gathers besides the dtype."""

    def __init__(self) -> None:
        self.time: set[str] = set()
        self.bitfield: set[str] = set()
        self.enums: dict[str, dict[str, int]] = {}
        self.orders: list[int] = []  # HDF5 byte orders of the members PyTables counts


def _decode(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _is_complex_pair(htype: h5t.TypeCompoundID) -> np.dtype[Any] | None:
    """The complex dtype of a compound ``(r, i)`` of two equal floats, or None."""
    if htype.get_nmembers() != 2:
        return None
    if [htype.get_member_name(i) for i in range(2)] != [b"r", b"i"]:
        return None
    real, imag = htype.get_member_type(0), htype.get_member_type(1)
    if real.get_class() != h5t.FLOAT or not real.equal(imag):
        return None
    size = real.get_size()
    if size not in _COMPLEX_PART_SIZES or htype.get_size() != 2 * size:
        return None
    if htype.get_member_offset(0) != 0 or htype.get_member_offset(1) != size:
        return None
    base = real.dtype
    if not real.equal(h5t.py_create(base)):
        return None
    return np.dtype(f"{base.byteorder}c{2 * size}")


def _byte_order(htype: h5t.TypeID, cls: int) -> list[int]:
    """HDF5 byte order of a number, enum or time member (what PyTables' byteorder counts):
    one order, or none for other members."""
    if cls in (h5t.INTEGER, h5t.FLOAT):
        return [int(htype.get_order())]
    if cls == h5t.ENUM:
        return [int(htype.get_super().get_order())]
    if cls == h5t.TIME:  # h5py's time types have no get_order
        big = any(htype.equal(t) for t in (h5t.UNIX_D32BE, h5t.UNIX_D64BE))
        return [h5t.ORDER_BE if big else h5t.ORDER_LE]
    return []


def _standard_numbers() -> dict[bytes, np.dtype[Any]]:
    """The dtypes of the standard integer and float types of either byte order, by the
    serialized type (``H5Tencode``): table members are almost always one of these."""
    found: dict[bytes, np.dtype[Any]] = {}
    for code in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"):
        for order in "<>":
            dtype = np.dtype(order + code)
            found.setdefault(h5t.py_create(dtype).encode(), dtype)
    return found


_STANDARD_NUMBERS = _standard_numbers()


def _number_dtype(htype: h5t.TypeID) -> np.dtype[Any] | None:
    """The dtype of a standard integer or float type (None for non-standard ones)."""
    known = _STANDARD_NUMBERS.get(htype.encode())
    if known is not None:
        return known
    dtype = np.dtype(htype.dtype)
    if htype.get_size() == 1:  # a byte's order is irrelevant (PyTables' big tables)
        htype = htype.copy()
        htype.set_order(h5t.ORDER_LE)
    return dtype if htype.equal(h5t.py_create(dtype)) else None


def _leaf_dtype(htype: h5t.TypeID, path: str, found: _Collect) -> np.dtype[Any]:
    """The layout dtype of one member type (recursing into compounds and arrays)."""
    cls = htype.get_class()
    found.orders.extend(_byte_order(htype, cls))
    if cls in (h5t.INTEGER, h5t.FLOAT):
        dtype = _number_dtype(htype)
        if dtype is not None:
            return dtype
    elif cls == h5t.BITFIELD and htype.get_size() == 1:
        found.bitfield.add(path)
        return np.dtype("?")
    elif cls == h5t.TIME:
        for time_type, layout in _TIME_TYPES:
            if htype.equal(time_type):
                found.time.add(path)
                return np.dtype(layout)
    elif cls == h5t.ENUM:
        assert isinstance(htype, h5t.TypeEnumID)
        found.enums[path] = {
            _decode(htype.get_member_name(i)): int(htype.get_member_value(i))
            for i in range(htype.get_nmembers())
        }
        return _leaf_dtype(htype.get_super(), path, _Collect())
    elif cls == h5t.STRING and not htype.is_variable_str():
        return np.dtype(f"S{htype.get_size()}")
    elif cls == h5t.ARRAY:
        assert isinstance(htype, h5t.TypeArrayID)
        base = _leaf_dtype(htype.get_super(), path, found)
        return np.dtype((base, tuple(int(d) for d in htype.get_array_dims())))
    elif cls == h5t.COMPOUND:
        assert isinstance(htype, h5t.TypeCompoundID)
        complex_dtype = _is_complex_pair(htype)
        if complex_dtype is not None:
            found.orders.append(htype.get_member_type(0).get_order())
            return complex_dtype
        return _compound_dtype(htype, path, found)
    raise TypeError(
        f"the HDF5 type of field {path!r} ({type(htype).__name__}, size {htype.get_size()}) "
        f"has no NumPy equivalent usable in a table"
    )


def _compound_dtype(htype: h5t.TypeCompoundID, prefix: str, found: _Collect) -> np.dtype[Any]:
    names, formats, offsets = [], [], []
    for i in range(htype.get_nmembers()):
        name = _decode(htype.get_member_name(i))
        names.append(name)
        formats.append(_leaf_dtype(htype.get_member_type(i), _join(prefix, name), found))
        offsets.append(int(htype.get_member_offset(i)))
    # Fields in offset order, as PyTables' descriptions (and rows: ``row[0]``) have them,
    # whatever the order of the members in the file; the bytes are the same.
    order = sorted(range(len(names)), key=offsets.__getitem__)
    return np.dtype({"names": [names[i] for i in order], "formats": [formats[i] for i in order],
                     "offsets": [offsets[i] for i in order], "itemsize": htype.get_size()})


def layout_of_type(htype: h5t.TypeID) -> CompoundLayout:
    """The :class:`CompoundLayout` of a compound HDF5 type.

    Raises
    ------
    TypeError
        If `htype` is not a compound type, or one of its members has no layout dtype
        (variable-length types and strings, references, opaque, bitfields wider than 8 bits,
        non-standard integers or floats...); the message names the member.
    """
    if htype.get_class() != h5t.COMPOUND:
        raise TypeError(f"expected an HDF5 compound type, not {type(htype).__name__}")
    assert isinstance(htype, h5t.TypeCompoundID)
    try:
        encoded = htype.encode()
    except (OSError, RuntimeError, ValueError):  # a type HDF5 cannot serialize
        return _parsed_layout(htype)
    # The layout follows from the type alone, which its encoding describes whole: a table
    # opened again (each query right after opening a file) skips the member-by-member
    # parse, a tenth of a millisecond for four columns.
    known = _known_layouts.get(encoded)
    if known is None:
        known = _parsed_layout(htype)
        with _known_layouts_lock:
            _known_layouts[encoded] = known
            while len(_known_layouts) > _KNOWN_LAYOUTS:
                del _known_layouts[next(iter(_known_layouts))]
    return known


_KNOWN_LAYOUTS = 256
"""Layouts kept by :func:`layout_of_type`, by encoded HDF5 type (oldest dropped first)."""

_known_layouts: dict[bytes, CompoundLayout] = {}
_known_layouts_lock = threading.Lock()


def _parsed_layout(htype: h5t.TypeCompoundID) -> CompoundLayout:
    found = _Collect()
    dtype = _compound_dtype(htype, "", found)
    orders = {"little" if order == h5t.ORDER_LE else "big" for order in found.orders}
    byteorder = orders.pop() if len(orders) == 1 else "mixed" if orders else "irrelevant"
    enums = MappingProxyType({path: MappingProxyType(members)
                              for path, members in found.enums.items()})
    return CompoundLayout(
        dtype, frozenset(found.time), frozenset(found.bitfield), enums, byteorder
    )


# ---------------------------------------------------------------------- layout -> file
def is_big_long_complex(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a big-endian long double complex, which h5py gets wrong: its
    type for it is a pair of little-endian floats (see :func:`big_long_complex_type`)."""
    return dtype.kind == "c" and dtype.byteorder == ">" and dtype.itemsize > 16


def big_long_complex_type(dtype: np.dtype[Any]) -> h5t.TypeCompoundID:
    """The HDF5 type PyTables writes for a big-endian long double complex `dtype`: a
    compound ``(r, i)`` of two big-endian long doubles."""
    part = h5t.py_create(np.dtype(f">f{dtype.itemsize // 2}"))
    pair = h5t.create(h5t.COMPOUND, dtype.itemsize)
    pair.insert(b"r", 0, part)
    pair.insert(b"i", dtype.itemsize // 2, part)
    return pair


def _number_type(dtype: np.dtype[Any], byte_order: int | None) -> h5t.TypeID:
    """h5py's type for a number dtype; one-byte ints get ``byte_order`` (PyTables gives
    them the table's order)."""
    if is_big_long_complex(dtype):
        return big_long_complex_type(dtype)
    htype = h5t.py_create(dtype)
    if byte_order is not None and dtype.itemsize == 1 and dtype.kind in "iu":
        htype = htype.copy()
        htype.set_order(byte_order)
    return htype


def _member_type(
    dtype: np.dtype[Any], path: str, time_fields: frozenset[str],
    enums: Mapping[str, Mapping[str, int]], byte_order: int | None = None,
) -> h5t.TypeID:
    """The HDF5 type of the field at `path` of layout dtype `dtype`."""
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return h5t.array_create(
            _member_type(base, path, time_fields, enums, byte_order), shape)
    if dtype.names is not None:
        return _compound_type(dtype, path, time_fields, enums, byte_order)
    if path in time_fields:
        for time_type, layout in _TIME_TYPES:
            if dtype == np.dtype(layout):
                return time_type.copy()
        raise TypeError(f"time field {path!r} must be int32 or float64, not {dtype}")
    if path in enums:
        if dtype.kind not in "iu":
            raise TypeError(f"enum field {path!r} must have an integer dtype, not {dtype}")
        enum = h5t.enum_create(_number_type(dtype, byte_order))
        for name, value in enums[path].items():
            enum.enum_insert(name.encode("utf-8", "surrogateescape"), int(value))
        return enum
    kind = dtype.kind
    if kind == "b":
        return h5t.STD_B8LE.copy()
    if kind == "S" and dtype.itemsize > 0:
        string = h5t.C_S1.copy()
        string.set_size(dtype.itemsize)
        string.set_strpad(h5t.STR_NULLTERM)
        return string
    if (kind in "iuf" and dtype.itemsize <= 16) or (kind == "c" and dtype.itemsize <= 32):
        return _number_type(dtype, byte_order)  # complex: h5py's (r, i) pair, PyTables' too
    raise TypeError(f"field {path!r} has the dtype {dtype}, which an HDF5 table cannot hold")


def _compound_type(
    dtype: np.dtype[Any], prefix: str, time_fields: frozenset[str],
    enums: Mapping[str, Mapping[str, int]], byte_order: int | None = None,
) -> h5t.TypeCompoundID:
    assert dtype.names is not None and dtype.fields is not None
    compound = h5t.create(h5t.COMPOUND, dtype.itemsize)
    for name in dtype.names:
        field, offset = dtype.fields[name][:2]
        member = _member_type(field, _join(prefix, name), time_fields, enums, byte_order)
        compound.insert(name.encode("utf-8", "surrogateescape"), offset, member)
    return compound


def compound_file_type(
    dtype: np.dtype[Any], *, time_fields: frozenset[str] = frozenset(),
    enums: Mapping[str, Mapping[str, int]] | None = None, byteorder: str | None = None,
) -> h5t.TypeCompoundID:
    """The HDF5 compound type PyTables would write for the layout dtype `dtype`.

    Offsets, itemsize and byte orders are `dtype`'s.  Booleans become 8-bit bitfields
    (``STD_B8LE``), fields of `time_fields` ``UNIX_D32*``/``UNIX_D64*`` times (int32 and
    float64 fields, in the field's byte order), fields of `enums` enums over their integer
    dtype with the members in the mapping's order, strings ``NULLTERM`` C strings, complex
    numbers compounds ``(r, i)``, subarray fields HDF5 array types.

    Parameters
    ----------
    dtype : numpy.dtype
        A structured dtype.
    time_fields : frozenset of str
        Paths (``'a'``, ``'nested/x'``) of the fields to store as times.
    enums : mapping, optional
        Path -> ``{member name: value}`` of the fields to store as enums.
    byteorder : {'little', 'big'}, optional
        The table's byte order, given to one-byte integers and enums (which NumPy cannot
        mark) as PyTables does; None keeps HDF5's little-endian default.

    Raises
    ------
    TypeError
        If `dtype` is not structured or a field's dtype cannot be stored in a table
        (object, unicode, datetime64, void...); the message names the field.
    """
    dtype = np.dtype(dtype)
    if dtype.names is None or dtype.subdtype is not None:
        raise TypeError(f"a table needs a structured dtype, not {dtype}")
    order = {None: None, "little": h5t.ORDER_LE, "big": h5t.ORDER_BE}[byteorder]
    return _compound_type(dtype, "", frozenset(time_fields), enums or {}, order)


# ---------------------------------------------------------------------- fill values
@functools.cache
def _hdf5_library() -> ctypes.CDLL | None:
    """The HDF5 C library h5py runs on (already loaded in this process), or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "/libhdf5" in line}
    except OSError:
        return None  # not Linux: fill values then go through h5py's conversion only
    core = [p for p in paths if os.path.basename(p).startswith(("libhdf5.", "libhdf5-"))]
    # Other packages may bring their own HDF5 (PyTables' wheels do): take h5py's.
    own = [p for p in core if "h5py" in p] or [p for p in core if "/tables" not in p]
    core = own if len(core) > 1 else core
    if len(core) != 1:
        return None
    try:
        library = ctypes.CDLL(core[0])
        function = library.H5Pset_fill_value
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
    function.restype = ctypes.c_int
    return library


def set_raw_fill_value(dcpl: h5p.PropDCID, ftype: h5t.TypeID, row: AnyArray) -> bool:
    """Set the fill value of ``dcpl`` to the bytes of ``row``, stored as type ``ftype``.

    h5py converts fill values from types it makes itself, which cannot be bitfields or
    times, and makes ``NULLPAD`` strings; PyTables gives HDF5 the file type itself.  This
    does the same through HDF5's ``H5Pset_fill_value``, which h5py's library exports.
    Returns False (nothing set) where that library cannot be found.
    """
    if row.nbytes != ftype.get_size():
        raise ValueError(f"a fill row of {row.nbytes} bytes for a type of {ftype.get_size()}")
    library = _hdf5_library()
    if library is None:
        return False
    status = library.H5Pset_fill_value(dcpl.id, ftype.id, row.ctypes.data)
    return bool(status >= 0)


def _fill_dtype(htype: h5t.TypeID, dtype: np.dtype[Any], value: Any) -> np.dtype[Any] | None:
    """The dtype from which h5py's fill-value conversion gives `value` exactly, or None.

    h5py converts fill values from the type it makes for the array's dtype: it cannot make
    times or bitfields, and its strings are ``NULLPAD`` (a full-length value loses its last
    character in a ``NULLTERM`` field).  Such members are left out (HDF5 zeroes them).
    """
    cls = htype.get_class()
    if cls == h5t.COMPOUND and dtype.names is not None:
        assert isinstance(htype, h5t.TypeCompoundID)
        fields = []
        for i in range(htype.get_nmembers()):
            name = _decode(htype.get_member_name(i))
            sub = _fill_dtype(htype.get_member_type(i), dtype[name], value[name])
            if sub is not None:
                fields.append((name, sub))
        return np.dtype(fields) if fields else None
    if cls in (h5t.INTEGER, h5t.FLOAT, h5t.COMPOUND):  # a compound here is a complex pair
        return dtype
    if cls == h5t.ENUM:
        assert isinstance(htype, h5t.TypeEnumID)
        members = {
            _decode(htype.get_member_name(i)): int(htype.get_member_value(i))
            for i in range(htype.get_nmembers())
        }
        if int(value) not in members.values():
            return None
        return h5py.enum_dtype(members, basetype=dtype)
    if cls == h5t.STRING:
        return dtype if len(bytes(value)) < dtype.itemsize else None
    if cls == h5t.ARRAY:
        assert dtype.subdtype is not None and isinstance(htype, h5t.TypeArrayID)
        base_class = htype.get_super().get_class()
        base = dtype.subdtype[0]
        if base_class in (h5t.INTEGER, h5t.FLOAT) or (
            base_class == h5t.STRING and all(len(v) < base.itemsize for v in np.ravel(value))
        ):
            return dtype
    return None


def _copy_fields(src: AnyArray, dst: AnyArray) -> None:
    """Copy the fields `dst` and `src` share from `src` to `dst`, recursively."""
    assert dst.dtype.names is not None and src.dtype.names is not None
    for name in (n for n in dst.dtype.names if n in src.dtype.names):
        if dst.dtype.fields is not None and dst.dtype.fields[name][0].names is not None:
            _copy_fields(src[name], dst[name])
        else:
            dst[name] = src[name]


def exact_fill(htype: h5t.TypeID, row: AnyArray) -> AnyArray | None:
    """A 0-d array h5py's ``set_fill_value`` turns into `row`'s bytes exactly, or None."""
    mem = _fill_dtype(htype, row.dtype, row[()])
    if mem is None:
        return None  # nothing h5py can convert: HDF5's default fill (zeros) at best
    fill = np.zeros((), dtype=mem)
    _copy_fields(row, fill)
    check = np.zeros((), dtype=row.dtype)
    _copy_fields(fill, check)  # what HDF5 will store: left-out members zeroed
    return fill if check.tobytes() == row.tobytes() else None


def read_fill_row(dsid: h5d.DatasetID, layout: CompoundLayout) -> AnyArray | None:
    """The fill value of a compound dataset as a 0-d array of the layout dtype.

    None when the dataset defines no fill value.  h5py cannot read a fill value in the file
    type, so a one-row dataset with the same type and fill value is made in a memory-only
    file, and its unwritten row read.
    """
    dcpl = dsid.get_create_plist()
    defined = dcpl.fill_value_defined()
    if defined == h5d.FILL_VALUE_UNDEFINED:
        return None
    if defined == h5d.FILL_VALUE_DEFAULT:
        return np.zeros((), dtype=layout.dtype)
    for i in reversed(range(dcpl.get_nfilters())):
        dcpl.remove_filter(dcpl.get_filter(i)[0])
    dcpl.set_layout(h5d.CONTIGUOUS)
    ftype = dsid.get_type()
    out = np.zeros((1,), dtype=layout.dtype)
    with h5py.File("fillrow", "w", driver="core", backing_store=False) as scratch:
        fill = h5d.create(scratch.id, b"fill", ftype, h5s.create_simple((1,)), dcpl=dcpl)
        fill.read(h5s.ALL, h5s.ALL, out, mtype=ftype)
    return out.reshape(())


# ---------------------------------------------------------------------- selections
class Selection(NamedTuple):
    """A regular hyperslab: what an int/slice key selects, and the result's shape."""

    starts: tuple[int, ...]
    counts: tuple[int, ...]
    steps: tuple[int, ...]
    shape: Shape


def selection_of(key: Any, shape: Shape) -> Selection:
    """Normalize `key` (``()``, Ellipsis, ints, positive-step slices) against `shape`.

    Raises
    ------
    IndexError
        For an out-of-range int or too many indices.
    ValueError
        For a slice with a step that is not positive.
    TypeError
        For any other kind of index (lists, arrays, field names...).
    """
    items = key if isinstance(key, tuple) else (key,)
    if any(item is Ellipsis for item in items):
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        fill = (slice(None),) * max(0, len(shape) - len(items) + 1)
        items = items[:at] + fill + items[at + 1:]
    if len(items) > len(shape):
        raise IndexError(f"too many indices {key!r} for a dataset of shape {shape}")
    items = items + (slice(None),) * (len(shape) - len(items))
    start, count, step, out = [], [], [], []
    for axis, (item, n) in enumerate(zip(items, shape, strict=True)):
        if isinstance(item, slice):
            first, stop, stride = item.indices(n)
            if stride <= 0:
                raise ValueError(f"slice steps must be positive, not {item.step!r}")
            size = len(range(first, stop, stride))
            start.append(first if size else 0)
            count.append(size)
            step.append(stride)
            out.append(size)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            index = int(item) + n if item < 0 else int(item)
            if not 0 <= index < n:
                raise IndexError(
                    f"index {int(item)} is out of range for axis {axis} with size {n}"
                )
            start.append(index)
            count.append(1)
            step.append(1)
        else:
            raise TypeError(f"unsupported index {item!r} for a compound dataset")
    return Selection(tuple(start), tuple(count), tuple(step), tuple(out))


def _spaces(dsid: h5d.DatasetID, sel: Selection) -> tuple[h5s.SpaceID, h5s.SpaceID]:
    """(memory space, file space) for a non-empty selection."""
    if not sel.counts:
        return h5s.ALL, h5s.ALL
    fspace = dsid.get_space()
    stride = None if all(s == 1 for s in sel.steps) else sel.steps
    fspace.select_hyperslab(sel.starts, sel.counts, stride)
    return h5s.create_simple(sel.counts), fspace


def read_selection(
    dsid: h5d.DatasetID, mtype: h5t.TypeID, dtype: np.dtype[Any], sel: Selection,
    out: AnyArray | None = None,
) -> AnyArray:
    """Read `sel` with memory type `mtype` into `out` or a new array of `dtype`.

    `out`, when given, must be C-contiguous, of `dtype` and of ``sel.counts``'s size.
    """
    if out is None:
        out = np.empty(sel.counts, dtype=dtype)
    if 0 not in sel.counts:
        mspace, fspace = _spaces(dsid, sel)
        dsid.read(mspace, fspace, out, mtype=mtype)
    return out if out.shape == sel.shape else out.reshape(sel.shape)


def write_selection(
    dsid: h5d.DatasetID, mtype: h5t.TypeID, dtype: np.dtype[Any], sel: Selection, value: Any
) -> None:
    """Write `value` (broadcast to the selection's shape, cast to `dtype`) at `sel`."""
    data = np.asarray(value, dtype=dtype)
    try:
        data = np.broadcast_to(data, sel.shape)
    except ValueError as exc:
        raise ValueError(
            f"cannot write a value of shape {data.shape} into a selection of shape {sel.shape}"
        ) from exc
    if 0 in sel.counts:
        return
    data = np.ascontiguousarray(data).reshape(sel.counts)
    mspace, fspace = _spaces(dsid, sel)
    dsid.write(mspace, fspace, data, mtype=mtype)


def check_points(coords: Any, nrows: int) -> AnyArray:
    """`coords` as a 1-D int64 array, checked to be row numbers in ``[0, nrows)``.

    Raises
    ------
    IndexError
        Naming the first coordinate out of range.
    """
    points = np.asarray(coords)
    if points.dtype.kind not in "iu" and points.size:
        raise TypeError(f"point coordinates must be integers, not {points.dtype}")
    points = points.astype(np.int64, copy=False).reshape(-1)
    if points.size:
        bad = np.flatnonzero((points < 0) | (points >= nrows))
        if bad.size:
            raise IndexError(
                f"coordinate {int(points[bad[0]])} is out of range for {nrows} rows"
            )
    return points


def point_spaces(dsid: h5d.DatasetID, points: AnyArray) -> tuple[h5s.SpaceID, h5s.SpaceID]:
    """(memory space, file space) selecting the rows `points` (non-empty, checked)."""
    fspace = dsid.get_space()
    fspace.select_elements(np.ascontiguousarray(points.reshape(-1, 1), dtype=np.uint64))
    return h5s.create_simple((points.shape[0],)), fspace


def rows_selection(start: int, count: int, step: int, nrows: int) -> Selection:
    """The selection of rows ``start, start + step, ...`` (`count` of them), checked.

    Raises
    ------
    ValueError
        For a negative `start` or `count`, or a `step` below 1.
    IndexError
        If the last row is not below `nrows`.
    """
    start, count, step = int(start), int(count), int(step)
    if start < 0 or count < 0 or step < 1:
        raise ValueError(
            f"rows need start >= 0, count >= 0 and step >= 1, not start={start}, "
            f"count={count}, step={step}"
        )
    if count and start + (count - 1) * step >= nrows:
        raise IndexError(
            f"rows {start} to {start + (count - 1) * step} (step {step}) are out of range "
            f"for {nrows} rows"
        )
    return Selection((start,), (count,), (step,), (count,))


def check_out(out: AnyArray | None, dtype: np.dtype[Any], count: int) -> AnyArray:
    """`out` if it can receive `count` rows of `dtype` (a new array when None).

    Raises
    ------
    ValueError
        If `out` is not a writeable, C-contiguous array of `dtype` and shape ``(count,)``.
    """
    if out is None:
        return np.empty((count,), dtype=dtype)
    if (
        not isinstance(out, np.ndarray) or out.dtype != dtype or out.shape != (count,)
        or not out.flags.c_contiguous or not out.flags.writeable
    ):
        raise ValueError(
            f"out must be a writeable C-contiguous array of dtype {dtype} and shape "
            f"({count},), not {getattr(out, 'dtype', type(out))} of shape "
            f"{getattr(out, 'shape', None)}"
        )
    return out


def complex_dtype_of(htype: h5t.TypeID) -> np.dtype[Any] | None:
    """The complex dtype of a compound ``(r, i)`` type (h5py's and PyTables' complex)."""
    if htype.get_class() != h5t.COMPOUND:
        return None
    assert isinstance(htype, h5t.TypeCompoundID)
    return _is_complex_pair(htype)


def decode_time64(stored: AnyArray) -> AnyArray:
    """PyTables' Time64 values from the 8-byte words it stores in tables and arrays.

    PyTables does not store a Time64 as the float64 the HDF5 ``UNIX_D64`` type suggests:
    each value is a "timeval32", a 64-bit integer (in the field's byte order) whose high 32
    bits are the whole seconds and whose low 32 bits the microseconds (both signed).  HDF5
    fill values and ``FIELD_<j>_FILL`` attributes hold plain float64s, though.

    Parameters
    ----------
    stored : numpy.ndarray
        Float64 values as read (any byte order, any shape).

    Returns
    -------
    numpy.ndarray
        Native float64 seconds: ``seconds + 1e-6 * microseconds``.
    """
    stored = np.asarray(stored)
    words = stored.view(stored.dtype.byteorder.replace("|", "=") + "i8").astype(np.int64)
    micro = (words & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return 1e-6 * micro + (words >> 32)


def encode_time64(seconds: AnyArray, dtype: np.dtype[Any] | str = "=f8") -> AnyArray:
    """The words PyTables stores for Time64 `seconds` (the inverse of :func:`decode_time64`).

    Returns a float64 array of `dtype`'s byte order holding the timeval32 bit patterns.
    """
    values = np.asarray(seconds, dtype=np.float64)
    whole = np.trunc(values)
    fraction = (values - whole) * 1e6
    micro = (np.sign(fraction) * np.floor(np.abs(fraction) + 0.5)).astype(np.int64)
    words = (whole.astype(np.int64) << 32) | (micro & 0xFFFFFFFF)
    order = np.dtype(dtype).byteorder.replace("|", "=")
    return words.astype(order + "i8").view(order + "f8")

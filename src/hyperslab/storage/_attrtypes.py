"""HDF5 attribute types <-> NumPy: memory plans for reading, file types and payloads for writing.

Private helpers of `hyperslab.storage.attributes`, which holds the policy (what PyTables
stores for a Python value, what it returns on reading), and of `hyperslab.storage.attrread`,
which decodes stored values; this module only maps HDF5 types to NumPy dtypes and back.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeAlias

import numpy as np
from h5py import h5s, h5t

H5Type: TypeAlias = Any
"""An h5py ``TypeID``."""

SCALAR_SPACE = h5s.create(h5s.SCALAR)
NULL_SPACE = h5s.create(h5s.NULL)

# Immutable-by-convention HDF5 types shared by every call: never modify a cached type.
_string_types: dict[tuple[int, int, int], H5Type] = {}
_string_dtypes: dict[int, np.dtype[Any]] = {}
_scalar_types: dict[np.dtype[Any], H5Type] = {}


def string_type(size: int, cset: int, pad: int = h5t.STR_NULLTERM) -> H5Type:
    """A cached fixed-length C string type (``size`` bytes, given charset and padding)."""
    key = (size, cset, pad)
    stype = _string_types.get(key)
    if stype is None:
        stype = h5t.C_S1.copy()
        stype.set_size(size)
        stype.set_strpad(pad)
        stype.set_cset(cset)
        _string_types[key] = stype
    return stype


def bytes_dtype(size: int) -> np.dtype[Any]:
    """The cached NumPy dtype ``S<size>``."""
    dtype = _string_dtypes.get(size)
    if dtype is None:
        dtype = _string_dtypes[size] = np.dtype(f"S{size}")
    return dtype


# ----------------------------------------------------------------------------- reading


def _is_complex_compound(ftype: H5Type) -> bool:
    """PyTables' ``is_complex``: a compound of two floats named ``r`` and ``i``."""
    return bool(
        ftype.get_nmembers() == 2
        and ftype.get_member_name(0) == b"r"
        and ftype.get_member_name(1) == b"i"
        and ftype.get_member_class(0) == h5t.FLOAT
        and ftype.get_member_class(1) == h5t.FLOAT
    )


def _is_h5py_bool(ftype: H5Type) -> bool:
    count = ftype.get_nmembers()
    members = {ftype.get_member_name(i): ftype.get_member_value(i) for i in range(count)}
    return members == {b"FALSE": 0, b"TRUE": 1}


def _plain_dtype(text: str) -> np.dtype[Any] | None:
    try:
        return np.dtype(text)
    except TypeError:
        return None


def _native_plan(dtype: np.dtype[Any] | None) -> tuple[np.dtype[Any], H5Type] | None:
    if dtype is None:
        return None
    return dtype, h5t.py_create(dtype)


def _compound_plan(ftype: H5Type) -> tuple[np.dtype[Any], H5Type] | None:
    size = ftype.get_size()
    if _is_complex_compound(ftype):
        return _native_plan(_plain_dtype(f"c{size}"))
    names, formats, offsets, members = [], [], [], []
    for i in range(ftype.get_nmembers()):
        plan = memory_plan(ftype.get_member_type(i))
        if plan is None:
            return None
        raw_name = ftype.get_member_name(i)
        names.append(raw_name.decode("utf-8"))
        formats.append(plan[0])
        offsets.append(ftype.get_member_offset(i))
        members.append((raw_name, plan[1]))
    dtype = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size})
    mtype = h5t.create(h5t.COMPOUND, size)
    for (raw_name, member_type), offset in zip(members, offsets, strict=True):
        mtype.insert(raw_name, offset, member_type)
    return dtype, mtype


def _enum_plan(ftype: H5Type) -> tuple[np.dtype[Any], H5Type] | None:
    if _is_h5py_bool(ftype):
        return np.dtype(bool), h5t.py_create(np.dtype(bool))
    base = memory_plan(ftype.get_super())
    if base is None:
        return None
    # Read the base integers: a native enum with the same members, then view as integers.
    mtype = h5t.enum_create(base[1])
    for i in range(ftype.get_nmembers()):
        mtype.enum_insert(ftype.get_member_name(i), ftype.get_member_value(i))
    return base[0], mtype


def memory_plan(ftype: H5Type) -> tuple[np.dtype[Any], H5Type] | None:
    """NumPy dtype and HDF5 memory type to read `ftype` natively, or None if unsupported.

    Fixed-length strings are read with their own file type (raw bytes, no conversion);
    numbers with the native type of the same size, so HDF5 fixes the byte order.
    """
    cls = ftype.get_class()
    size = ftype.get_size()
    if cls == h5t.INTEGER:
        kind = "i" if ftype.get_sign() == h5t.SGN_2 else "u"
        return _native_plan(_plain_dtype(f"{kind}{size}") if size in (1, 2, 4, 8) else None)
    if cls == h5t.FLOAT:
        return _native_plan(_plain_dtype(f"f{size}"))
    if cls == h5t.BITFIELD:
        native_bits = {1: h5t.NATIVE_B8, 2: h5t.NATIVE_B16, 4: h5t.NATIVE_B32, 8: h5t.NATIVE_B64}
        if size not in native_bits:
            return None
        return np.dtype(bool if size == 1 else f"u{size}"), native_bits[size]
    if cls == h5t.STRING:
        return None if ftype.is_variable_str() else (bytes_dtype(size), ftype)
    if cls == h5t.COMPOUND:
        return _compound_plan(ftype)
    if cls == h5t.ARRAY:
        base = memory_plan(ftype.get_super())
        if base is None:
            return None
        dims = ftype.get_array_dims()
        return np.dtype((base[0], dims)), h5t.array_create(base[1], dims)
    if cls == h5t.ENUM:
        return _enum_plan(ftype)
    if cls == getattr(h5t, "COMPLEX", None):  # HDF5 >= 2.0 native complex class
        return _complex_class_plan(size)
    return None


def _complex_class_plan(size: int) -> tuple[np.dtype[Any], H5Type] | None:
    natives = {
        8: getattr(h5t, "NATIVE_FLOAT_COMPLEX", None),
        16: getattr(h5t, "NATIVE_DOUBLE_COMPLEX", None),
        np.dtype(np.clongdouble).itemsize: getattr(h5t, "NATIVE_LDOUBLE_COMPLEX", None),
    }
    mtype = natives.get(size)
    if mtype is None or mtype.get_size() != size:
        return None
    return np.dtype(f"c{size}"), mtype


# ----------------------------------------------------------------------------- writing


def atom_type(dtype: np.dtype[Any], name: str) -> H5Type:
    """The HDF5 file type PyTables' ``atom_to_hdf5_type`` gives a (non-structured) dtype."""
    if dtype.subdtype is not None:
        base, dims = dtype.subdtype
        return h5t.array_create(atom_type(base, name), dims)
    if dtype.fields is not None:
        return _compound_type(dtype, name)
    ftype = _scalar_types.get(dtype)
    if ftype is not None:
        return ftype
    if dtype.kind == "b":
        ftype = h5t.STD_B8LE.copy()
    elif dtype.kind == "S":
        ftype = string_type(max(dtype.itemsize, 1), h5t.CSET_ASCII)
    elif dtype.kind in "iufc":
        ftype = h5t.py_create(dtype)
    else:
        raise TypeError(f"attribute {name!r}: cannot store a field of dtype {dtype} in HDF5")
    _scalar_types[dtype] = ftype
    return ftype


def _compound_type(dtype: np.dtype[Any], name: str) -> H5Type:
    ctype = h5t.create(h5t.COMPOUND, dtype.itemsize)
    assert dtype.fields is not None
    for field, (fdtype, offset, *_) in dtype.fields.items():
        ctype.insert(field.encode("utf-8"), offset, atom_type(fdtype, name))
    return ctype


def storage_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The layout PyTables' ``Description`` gives a structured dtype.

    Fields keep their offsets but are ordered by offset, trailing padding is dropped and
    ``U<n>`` fields become ``S<n>``.
    """
    if dtype.subdtype is not None:
        return np.dtype((storage_dtype(dtype.subdtype[0]), dtype.subdtype[1]))
    if dtype.fields is None:
        return np.dtype(f"S{dtype.itemsize // 4}") if dtype.kind == "U" else dtype
    fields = sorted(dtype.fields.items(), key=lambda item: item[1][1])
    formats = [storage_dtype(spec[0]) for _, spec in fields]
    offsets = [spec[1] for _, spec in fields]
    ends = [off + fmt.itemsize for off, fmt in zip(offsets, formats, strict=True)]
    return np.dtype(
        {
            "names": [field for field, _ in fields],
            "formats": formats,
            "offsets": offsets,
            "itemsize": max(ends, default=0),
        }
    )


def _copy_fields(out: np.ndarray[Any, Any], value: np.ndarray[Any, Any]) -> None:
    """Assign structured `value` to `out` field by field, by name (NumPy casts by position)."""
    assert value.dtype.names is not None
    for field in value.dtype.names:
        if value.dtype[field].base.names is not None:
            _copy_fields(out[field], value[field])
        else:
            out[field] = value[field]


class Payload(NamedTuple):
    """Everything needed to create an attribute; `mtype` describes `data` in memory."""

    ftype: H5Type
    space: Any
    data: Any  # ndarray, or None for an H5S_NULL dataspace
    mtype: H5Type


def string_payload(raw: bytes, cset: int) -> Payload:
    """PyTables' ``H5ATTRset_attribute_string``: no NUL, H5S_NULL when empty."""
    if not raw:
        stype = string_type(1, cset)
        return Payload(stype, NULL_SPACE, None, stype)
    stype = string_type(len(raw), cset)
    return Payload(stype, SCALAR_SPACE, np.array(raw, dtype=bytes_dtype(len(raw))), stype)


def array_payload(value: np.ndarray[Any, Any], name: str) -> Payload:
    if value.dtype.kind == "V":
        if value.dtype.fields is None:
            raise TypeError(f"attribute {name!r}: cannot store unstructured void {value.dtype}")
        storage = np.zeros(value.shape, dtype=storage_dtype(value.dtype))
        _copy_fields(storage, value)
        value = storage
    ftype = atom_type(value.dtype, name)
    data = np.array(value, order="C", copy=True)
    space = SCALAR_SPACE if data.ndim == 0 else h5s.create_simple(data.shape)
    return Payload(ftype, space, data, ftype)


# ----------------------------------------------------------------------------- copying


def _has_vlen(ftype: H5Type) -> bool:
    cls = ftype.get_class()
    if cls == h5t.VLEN:
        return True
    if cls == h5t.STRING:
        return bool(ftype.is_variable_str())
    if cls == h5t.COMPOUND:
        return any(_has_vlen(ftype.get_member_type(i)) for i in range(ftype.get_nmembers()))
    if cls == h5t.ARRAY:
        return _has_vlen(ftype.get_super())
    return False


def raw_payload(attr: Any) -> Payload:
    """A payload reproducing `attr` exactly (type, dataspace and value), anywhere."""
    ftype = attr.get_type().copy()  # a transient copy, even of a committed datatype
    space = attr.get_space()
    if space.get_simple_extent_type() == h5s.NULL:
        return Payload(ftype, space, None, ftype)
    shape = space.shape
    if _has_vlen(ftype):
        data = np.empty(shape, dtype=ftype.dtype)
        if data.size:
            attr.read(data)
        return Payload(ftype, space, data, h5t.py_create(data.dtype))
    data = np.zeros(shape, dtype=np.dtype((np.void, ftype.get_size())))
    if data.size:
        attr.read(data, mtype=ftype)
    return Payload(ftype, space, data, ftype)

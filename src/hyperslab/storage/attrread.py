"""Reading the value stored in one open HDF5 attribute, as NumPy sees it.

The decoding half of :mod:`~hyperslab.storage.attributes` (which opens the attributes and
applies PyTables' rules to what is read here: unpickling, system attributes as ``str``):
scalar numbers through cached memory plans, fixed- and variable-length strings (UTF-8 as
``numpy.str_``, ASCII as ``numpy.bytes_``), ``H5S_NULL`` dataspaces, arrays and compounds
through the memory plans of :mod:`~hyperslab.storage._attrtypes`, and the fast path for
scalar string attributes (:func:`read_string`).  Unsupported HDF5 types read as None with a
:class:`~hyperslab.errors.DataTypeWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from h5py import h5s, h5t

from hyperslab.errors import DataTypeWarning
from hyperslab.storage._attrtypes import H5Type, bytes_dtype, memory_plan, string_type

_FAST_STRING_MAX = 256  # read_string_attribute's buffer is (size, size) bytes


def _unsupported(name: str, ftype: H5Type) -> None:
    warnings.warn(
        f"unsupported type for attribute {name!r} (HDF5 class {ftype.get_class()}); "
        "it reads as None",
        DataTypeWarning,
        stacklevel=3,
    )


def _vlen_item(item: Any, utf8: bool) -> Any:
    raw = item.encode("utf-8", "surrogateescape") if isinstance(item, str) else bytes(item)
    return _utf8_value(raw) if utf8 else np.bytes_(raw.rstrip(b"\x00"))


def _utf8_value(raw: bytes) -> Any:
    """A UTF-8 string value as ``numpy.str_``; bytes that are not UTF-8 (a damaged or
    mislabelled attribute) come back as they are, as ``numpy.bytes_``, with a warning."""
    try:
        return np.str_(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        warnings.warn(
            f"a string attribute labelled UTF-8 holds bytes that are not UTF-8 ({exc}); "
            f"it reads as bytes", DataTypeWarning, stacklevel=5)
        return np.bytes_(raw)


def _read_vlen_strings(attr: Any, ftype: H5Type, shape: tuple[int, ...]) -> Any:
    """Variable-length strings: ``str_``/``bytes_`` scalars, or object arrays of them."""
    utf8 = ftype.get_cset() == h5t.CSET_UTF8
    buf = np.empty(shape, dtype=np.dtype("O", metadata={"vlen": str if utf8 else bytes}))
    if buf.size:
        attr.read(buf)
    if shape == ():
        return _vlen_item(buf[()], utf8)
    out = np.empty(shape, dtype=object)
    for index, item in np.ndenumerate(buf):
        out[index] = str(_vlen_item(item, utf8)) if utf8 else bytes(_vlen_item(item, utf8))
    return out


def _read_fixed_string(attr: Any, ftype: H5Type) -> Any:
    """Scalar fixed-length string: raw bytes, trailing NULs stripped."""
    buf = np.empty((), dtype=bytes_dtype(ftype.get_size()))
    attr.read(buf, mtype=ftype)
    raw = buf.tobytes().rstrip(b"\x00")
    if ftype.get_cset() == h5t.CSET_UTF8:
        return _utf8_value(raw)
    return np.bytes_(raw)


def _null_value(name: str, ftype: H5Type) -> Any:
    if ftype.get_class() == h5t.STRING:
        return np.str_("") if ftype.get_cset() == h5t.CSET_UTF8 else np.bytes_(b"")
    plan = memory_plan(ftype)
    if plan is None:
        _unsupported(name, ftype)
        return None
    return np.zeros((), dtype=plan[0])[()]


_NUMBER_PLANS: dict[tuple[int, int, int], tuple[np.dtype[Any], H5Type]] = {}
"""Memory plans of scalar integers and floats by (class, size, sign): most attributes are
one of a few number types, and a plan costs more than the read itself."""


def _number_plan(cls: int, ftype: H5Type) -> tuple[np.dtype[Any], H5Type] | None:
    key = (cls, ftype.get_size(), ftype.get_sign() if cls == h5t.INTEGER else -1)
    plan = _NUMBER_PLANS.get(key)
    if plan is None:
        plan = memory_plan(ftype)
        if plan is not None:
            _NUMBER_PLANS[key] = plan
    return plan


def read_stored(attr: Any, name: str) -> Any:
    """The stored value as PyTables' ``_g_getattr`` sees it (before unpickling)."""
    ftype = attr.get_type()
    space = attr.get_space()
    cls = ftype.get_class()
    if (cls == h5t.INTEGER or cls == h5t.FLOAT) and (
            space.get_simple_extent_type() == h5s.SCALAR):  # the common case, fast
        plan = _number_plan(cls, ftype)
        if plan is not None:
            number = np.empty((), dtype=plan[0])  # one element of the memory type's size
            attr.read(number, mtype=plan[1])
            return number[()]
    if space.get_simple_extent_type() == h5s.NULL:
        return _null_value(name, ftype)
    shape = space.shape
    if ftype.get_class() == h5t.STRING:
        if ftype.is_variable_str():
            return _read_vlen_strings(attr, ftype, shape)
        if shape == ():
            return _read_fixed_string(attr, ftype)
    plan = memory_plan(ftype)
    if plan is None:
        _unsupported(name, ftype)
        return None
    dtype, mtype = plan
    # A raw buffer of exactly the attribute's element count and memory element size:
    # h5py does not check buffer sizes, so the shape must come from the dataspace.
    buf = np.zeros(shape, dtype=np.dtype((np.void, mtype.get_size())))
    if buf.size:
        attr.read(buf, mtype=mtype)
    value = buf.view(dtype)
    return value[()] if shape == () else value


def _string_slow(attr: Any, name: str) -> str:
    ftype = attr.get_type()
    if ftype.get_class() != h5t.STRING:
        raise TypeError(f"attribute {name!r} is not a string (HDF5 class {ftype.get_class()})")
    space = attr.get_space()
    if space.get_simple_extent_type() == h5s.NULL:
        return ""
    if space.shape != ():
        raise TypeError(f"attribute {name!r} is a string array of shape {space.shape}")
    if ftype.is_variable_str():
        value: Any = _read_vlen_strings(attr, ftype, ())
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    else:
        buf = np.empty((), dtype=bytes_dtype(ftype.get_size()))
        attr.read(buf, mtype=ftype)
        raw = buf.tobytes()
        if ftype.get_strpad() == h5t.STR_SPACEPAD:
            raw = raw.rstrip(b" ")
    return _text(raw.split(b"\x00", 1)[0])


def _text(raw: bytes) -> str:
    """A system string: bytes that are not UTF-8 (a damaged file) are replaced with
    U+FFFD, so that a title or a class name can still be shown and compared."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def read_string(attr: Any, name: str) -> str:
    """The value of a scalar string attribute as ``str`` (the rules of
    :func:`~hyperslab.storage.attributes.read_string_attribute`): one read with a cached
    memory type where it can, else the exact, slower path.

    The memory type takes the stored string's character set: HDF5 does not convert
    between ASCII and UTF-8, and PyTables and h5py store ``CLASS`` as ASCII (a failed
    read costs an h5py exception, ~10 us cold, and the slow path after it).
    """
    try:
        size = attr.get_storage_size()
    except RuntimeError:  # h5py raises when HDF5 reports 0 bytes (H5S_NULL, no elements)
        return _string_slow(attr, name)
    if size > _FAST_STRING_MAX:
        return _string_slow(attr, name)
    ftype = attr.get_type()
    if (not isinstance(ftype, h5t.TypeStringID) or ftype.is_variable_str()
            or attr.get_space().get_simple_extent_type() != h5s.SCALAR):
        return _string_slow(attr, name)  # (a one-element array reads as a scalar here)
    buf = np.zeros(size, dtype=bytes_dtype(size))
    try:
        attr.read(buf, mtype=string_type(size, ftype.get_cset(), h5t.STR_NULLPAD))
    except (OSError, TypeError, ValueError):  # no conversion path (a character set unknown)
        return _string_slow(attr, name)
    raw = buf.tobytes()
    if raw[size:].strip(b"\x00"):
        return _string_slow(attr, name)
    return _text(raw[:size].split(b"\x00", 1)[0])


__all__ = ["read_stored", "read_string"]

"""HDF5 attributes, written and read exactly as PyTables writes and reads them.

This module (with :mod:`~hyperslab.storage.attrread`, which decodes the value an open
attribute holds, and :mod:`~hyperslab.storage._attrtypes`, which maps HDF5 types to NumPy)
is the only code in hyperslab that touches HDF5 attributes.  Every function takes an h5py
low-level object id (``h5py.h5g.GroupID`` or ``h5py.h5d.DatasetID``, e.g. ``h5py_group.id``)
and uses h5py's low-level API (``h5a``, ``h5t``, ``h5s``), which is several times faster
than ``obj.attrs``.

What PyTables writes for a Python value (``AttributeSet._g__setattr`` and
``hdf5extension.AttributeSet._g_setattr``, verified on files):

* ``str`` and ``numpy.str_`` (and 0-d ``U`` arrays): a fixed-length string of
  ``len(value.encode('utf-8'))`` bytes with no NUL, ``H5T_STR_NULLTERM``, UTF-8 character
  set, scalar dataspace; ``''`` is a 1-byte string type with an ``H5S_NULL`` dataspace.
* ``bytes``: a NumPy ``S`` string (``b''`` becomes ``S1``), ASCII, ``H5T_STR_NULLTERM``.
* ``int`` -> ``int64`` (``uint64`` above 2**63 - 1, a pickled object array above 2**64 - 1),
  ``float`` -> ``float64``, ``complex`` -> ``complex128`` (compound ``r``, ``i``),
  ``bool`` -> an 8-bit ``H5T_BITFIELD``; NumPy scalars and arrays of kinds ``b i u f c S V``
  keep their dtype and byte order (structured arrays become compounds).
* Everything else, including lists, tuples, dicts, ``None``, ``U`` arrays with
  ``ndim > 0``, object and datetime arrays, is stored as ``pickle.dumps(value, 0)`` in a
  fixed-length ASCII string.  On reading, an ASCII scalar string that ends with ``b'.'``
  is unpickled, and kept as it is if unpickling fails (PyTables' rule).

Deliberate differences from PyTables' reader, each a bug there:

* Big-endian numbers are returned with their true value, as native-order NumPy values
  (PyTables reads them into a native buffer without conversion: byte-swapped garbage).
* HDF5 enums are returned as their base integers, h5py's ``FALSE``/``TRUE`` enum as
  ``numpy.bool_`` (PyTables warns and returns ``None``).
* Trailing NULs of fixed-length UTF-8 strings are stripped, as PyTables already does
  for ASCII strings.
* A numeric attribute with an ``H5S_NULL`` dataspace reads as zero (PyTables returns an
  uninitialized value).

``FILTERS`` is returned as the packed integer: turning it into a ``Filters`` object is the
job of the node layer.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterable
from typing import Any, TypeAlias

import numpy as np
from h5py import h5, h5a, h5f, h5i, h5s, h5t

from hyperslab._typing import AnyArray
from hyperslab.errors import FileModeError, HDF5ExtError
from hyperslab.storage._attrtypes import (
    SCALAR_SPACE,
    Payload,
    array_payload,
    atom_type,
    raw_payload,
    string_payload,
)
from hyperslab.storage.attrread import read_stored, read_string

H5ObjectID: TypeAlias = Any
"""An h5py low-level object id: ``h5py.h5g.GroupID`` or ``h5py.h5d.DatasetID``."""

SYS_ATTRS: frozenset[str] = frozenset(
    "CLASS VERSION TITLE NROWS EXTDIM ENCODING PYTABLES_FORMAT_VERSION FLAVOR FILTERS "
    "AUTO_INDEX DIRTY NODE_TYPE NODE_TYPE_VERSION PSEUDOATOM".split()
)
"""Names PyTables treats as system attributes (``tables.attributeset.SYS_ATTRS``)."""

SYS_ATTR_PREFIXES: tuple[str, ...] = ("FIELD_",)
"""Prefixes of system attribute names (``FIELD_<i>_NAME``, ``FIELD_<i>_FILL``, ...)."""

INT32_SYS_ATTRS: frozenset[str] = frozenset({"EXTDIM", "AUTO_INDEX", "DIRTY", "NODE_TYPE_VERSION"})
"""System attributes PyTables always stores as ``int32``."""

INT64_SYS_ATTRS: frozenset[str] = frozenset({"NROWS"})
"""System attributes PyTables always stores as ``int64``."""

_FIELD_FILL_RE = re.compile(r"^FIELD_[0-9]+_FILL$")
_PY_SCALAR_TYPES = (bool, bytes, int, float, complex, str, np.str_)
_NATIVE_KINDS = frozenset("VSbiufc")
_TMP_SUFFIX = b"\x7fhyperslab-replacing"

_H5_ERRORS = (OSError, RuntimeError, ValueError, KeyError)  # what h5py raises on failures
_READ_ERRORS = (OSError, RuntimeError, ValueError)
"""What h5py raises when HDF5 fails to read metadata (a damaged file): translated into
:class:`~hyperslab.errors.HDF5ExtError` (``KeyError`` means a missing attribute)."""


def is_sys_attr_name(name: str) -> bool:
    """Tell whether PyTables treats `name` as a system attribute.

    Parameters
    ----------
    name : str
        An attribute name.

    Returns
    -------
    bool
        True for the names in `SYS_ATTRS` and those starting with ``FIELD_``.
    """
    return name in SYS_ATTRS or name.startswith(SYS_ATTR_PREFIXES)


# ----------------------------------------------------------------------------- helpers


def _encode_name(name: str) -> bytes:
    """A name as HDF5 stores it: UTF-8 (names that are not, listed by
    :func:`attribute_names` with ``surrogateescape``, go back to their bytes)."""
    if not isinstance(name, str):
        raise TypeError(f"attribute names must be str, not {type(name).__name__}: {name!r}")
    return name.encode("utf-8", "surrogateescape")


def _decode_name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _object_name(oid: H5ObjectID) -> str:
    """The path of an object, for messages (``'?'`` where HDF5 cannot tell it)."""
    try:
        name = h5i.get_name(oid)
    except Exception:  # the object is damaged: the message names the attribute only
        return "?"
    return "?" if name is None else _decode_name(name)


def _read_error(oid: H5ObjectID, action: str, exc: Exception) -> HDF5ExtError:
    """What HDF5 reported (through one of h5py's builtin exceptions) while reading
    attributes, as the error PyTables raises for the HDF5 library's failures."""
    return HDF5ExtError(f"cannot {action} of node {_object_name(oid)!r}: {exc}")


def _open(oid: H5ObjectID, name: str) -> Any:
    bname = _encode_name(name)
    try:
        return h5a.open(oid, bname)
    except KeyError as exc:
        # h5py says KeyError for a missing attribute and for one HDF5 cannot decode.
        if not has_attribute(oid, name):
            raise KeyError(f"attribute {name!r} does not exist") from None
        raise _read_error(oid, f"open attribute {name!r}", exc) from exc
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"open attribute {name!r}", exc) from exc


def _is_read_only(oid: H5ObjectID) -> bool:
    try:
        return bool(h5i.get_file_id(oid).get_intent() == h5f.ACC_RDONLY)
    except Exception:  # the id itself is unusable: let the original error speak
        return False


def _write_error(oid: H5ObjectID, action: str, name: str, exc: Exception) -> Exception:
    if _is_read_only(oid):
        return FileModeError(f"cannot {action} attribute {name!r}: the file is read-only")
    return HDF5ExtError(f"cannot {action} attribute {name!r}: {exc}")


# ----------------------------------------------------------------------------- reading


def _unpickle(value: np.bytes_) -> Any:
    try:
        return pickle.loads(value)
    except UnicodeDecodeError:
        # Pickled by Python 2: PyTables retries with latin1, then bytes.
        for encoding in ("latin1", "bytes"):
            try:
                return pickle.loads(value, encoding=encoding)
            except Exception:
                continue
        return value
    except Exception:
        return value


def _as_pytables_value(name: str, value: Any) -> Any:
    """Apply ``AttributeSet.__getattr__``'s rules: unpickling and sys-attr decoding."""
    if type(value) is np.bytes_ and value.endswith(b"."):
        if value == b"0.":
            return value
        result = _unpickle(value)
        if isinstance(result, str) and result == "":
            result = np.str_("")
        return result
    if isinstance(value, bytes) and (
        name == "TITLE" or (is_sys_attr_name(name) and not _FIELD_FILL_RE.match(name))
    ):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value  # not text (a damaged file): the bytes, as they are
    return value


def read_attribute(oid: H5ObjectID, name: str) -> Any:
    """Read an attribute and return what PyTables' ``node._v_attrs[name]`` returns.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name.

    Returns
    -------
    object
        ``numpy.str_`` for UTF-8 strings, ``numpy.bytes_`` for ASCII strings (``''`` /
        ``b''`` for an ``H5S_NULL`` dataspace), NumPy scalars for scalar numbers and
        compounds, NumPy arrays otherwise (``object`` arrays for variable-length strings),
        unpickled objects for pickles, ``str`` for byte-string system attributes.
        Unsupported HDF5 types (references, variable-length sequences, opaque, time) read
        as None with a `DataTypeWarning`, as in PyTables.

    Raises
    ------
    KeyError
        If the attribute does not exist.
    """
    attr = _open(oid, name)
    try:
        stored = read_stored(attr, name)
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"read attribute {name!r}", exc) from exc
    return _as_pytables_value(name, stored)


def read_attribute_of(gid: H5ObjectID, obj_name: str, name: str) -> Any:
    """Read attribute ``name`` of the object linked as ``obj_name`` in group ``gid``.

    The object itself is not opened (HDF5 reads its header only), which makes this several
    times cheaper than opening a dataset to read, say, its ``CLASS``.

    Parameters
    ----------
    gid : h5py GroupID
        The parent group.
    obj_name : str
        The child's link name (external links are followed by HDF5: do not pass them).
    name : str
        The attribute name.

    Returns
    -------
    object or None
        What `read_attribute` would return, or None if there is no such attribute (or no
        such child, or a dangling soft link).
    """
    try:
        attr = h5a.open(gid, _encode_name(name), obj_name=_encode_name(obj_name))
        stored = read_stored(attr, name)
    except KeyError:
        return None
    except _READ_ERRORS as exc:
        raise _read_error(gid, f"read attribute {name!r} of {obj_name!r}", exc) from exc
    return _as_pytables_value(name, stored)


def read_string_attribute(oid: H5ObjectID, name: str) -> str | None:
    """Read a string attribute fast (the hot path for ``CLASS``, ``TITLE``, ``VERSION``).

    Any string type is accepted: fixed or variable length, ASCII or UTF-8, scalar or
    ``H5S_NULL`` (which reads as ``''``).  The value is decoded as UTF-8 and follows
    HDF5's C-string rules: it ends at the first NUL, and space padding is dropped.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name.

    Returns
    -------
    str or None
        The string, or None if the attribute does not exist.

    Raises
    ------
    TypeError
        If the attribute is not a scalar string.

    Notes
    -----
    The common case (a scalar fixed-length string, ASCII or UTF-8, as PyTables writes
    them) takes one ``H5Aopen``, one ``H5Aget_storage_size``, a look at its type and
    dataspace and one ``H5Aread`` with a cached NUL-padded memory type of the storage size
    and the string's character set (HDF5 converts none into the other).  Anything else
    (variable length, empty, arrays) falls back to an exact, slower path.
    """
    try:
        attr = h5a.open(oid, _encode_name(name))
        return read_string(attr, name)
    except KeyError:
        return None
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"read attribute {name!r}", exc) from exc


def read_string_attribute_of(oid: H5ObjectID, child: str, name: str) -> str | None:
    """Read a string attribute of a group's child without opening the child.

    The fast way to classify nodes by ``CLASS``: one ``H5Aopen_by_name``, with the same
    fast path and rules as `read_string_attribute`.

    Parameters
    ----------
    oid : h5py GroupID
        The parent group.
    child : str
        The child's link name (hard or soft link; external links are followed by HDF5,
        so callers should not pass them).
    name : str
        The attribute name.

    Returns
    -------
    str or None
        The string, or None if the child or the attribute does not exist (or a soft
        link dangles).

    Raises
    ------
    TypeError
        If the attribute is not a scalar string.
    """
    try:
        attr = h5a.open(oid, _encode_name(name), obj_name=_encode_name(child))
        return read_string(attr, name)
    except KeyError:
        return None
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"read attribute {name!r} of {child!r}", exc) from exc


# ----------------------------------------------------------------------------- writing


def _payload(name: str, value: Any) -> Payload:
    """What PyTables writes for `value` under `name`."""
    if name in INT32_SYS_ATTRS:
        value = np.array(value, dtype=np.int32)
    elif name in INT64_SYS_ATTRS:
        value = np.array(value, dtype=np.int64)
    elif type(value) in _PY_SCALAR_TYPES:
        value = np.array(value)
    if isinstance(value, np.generic):
        value = np.array(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in _NATIVE_KINDS:
            return array_payload(value, name)
        if value.dtype.kind == "U" and value.shape == ():
            return string_payload(str(value[()]).encode("utf-8"), h5t.CSET_UTF8)
    return string_payload(pickle.dumps(value, 0), h5t.CSET_ASCII)


def _create(oid: H5ObjectID, bname: bytes, payload: Payload) -> None:
    attr = h5a.create(oid, bname, payload.ftype, payload.space)
    if payload.data is not None and payload.data.size:
        try:
            attr.write(payload.data, mtype=payload.mtype)
        except BaseException:
            attr.close()
            h5a.delete(oid, bname)
            raise


def _replace(oid: H5ObjectID, bname: bytes, payload: Payload) -> None:
    """Replace an existing attribute; the old one survives any failure."""
    tmp = bname + _TMP_SUFFIX
    if h5a.exists(oid, tmp):
        h5a.delete(oid, tmp)
    try:
        _create(oid, tmp, payload)
    except _H5_ERRORS:
        if _is_read_only(oid):
            raise
        # Perhaps no room for both (64 KiB object header messages): delete, then create,
        # as PyTables does, restoring the old attribute if the new one fails anyway.
        old = raw_payload(h5a.open(oid, bname))
        h5a.delete(oid, bname)
        try:
            _create(oid, bname, payload)
        except BaseException:
            _create(oid, bname, old)
            raise
        return
    h5a.delete(oid, bname)
    h5a.rename(oid, tmp, bname)


def _store(oid: H5ObjectID, name: str, payload: Payload, action: str = "write") -> None:
    """Create or replace an attribute, translating HDF5's errors."""
    bname = _encode_name(name)
    try:
        if h5a.exists(oid, bname):
            _replace(oid, bname, payload)
        else:
            _create(oid, bname, payload)
    except _H5_ERRORS as exc:
        raise _write_error(oid, action, name, exc) from exc


def write_attribute(oid: H5ObjectID, name: str, value: Any) -> None:
    """Write `value` as PyTables' ``node._v_attrs[name] = value`` does.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name; an existing attribute is replaced, whatever its type.
    value : object
        Any value: see the module docstring for what is stored.  ``EXTDIM``,
        ``AUTO_INDEX``, ``DIRTY`` and ``NODE_TYPE_VERSION`` are stored as ``int32`` and
        ``NROWS`` as ``int64``, as PyTables does; ``FILTERS`` must already be packed.

    Raises
    ------
    TypeError
        For structured arrays with fields HDF5 cannot hold (objects, raw void).
    pickle.PicklingError
        If `value` has to be pickled and cannot be.
    FileModeError
        If the file is read-only.
    HDF5ExtError
        If HDF5 refuses the attribute.  The file is unchanged on any error.
    """
    if type(value) is str and name not in INT32_SYS_ATTRS and name not in INT64_SYS_ATTRS:
        write_sys_string(oid, name, value)  # the common case, without the dispatch
        return
    _store(oid, name, _payload(name, value))


def write_sys_string(oid: H5ObjectID, name: str, value: str, *, ascii: bool = False) -> None:
    """Write a system string (``CLASS``, ``VERSION``, ``TITLE``, ...) as PyTables does.

    The type is a fixed-length UTF-8 C string of ``len(value.encode())`` bytes (no NUL),
    ``H5T_STR_NULLTERM``, scalar dataspace; ``''`` gets an ``H5S_NULL`` dataspace.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name; an existing attribute is replaced.
    value : str
        The string.
    ascii : bool
        Mark the string as ASCII instead of UTF-8 (PyTables does so for the CLASS, VERSION
        and TITLE of new CArrays and EArrays); the bytes are UTF-8 either way.

    Raises
    ------
    TypeError
        If `value` is not a str.
    """
    if not isinstance(value, str):
        raise TypeError(f"attribute {name!r}: expected a str, got {type(value).__name__}")
    cset = h5t.CSET_ASCII if ascii and value.isascii() else h5t.CSET_UTF8
    _store(oid, name, string_payload(value.encode("utf-8"), cset))


_INT64 = np.dtype(np.int64)


def read_int_attribute(oid: H5ObjectID, name: str) -> int:
    """Read an integer attribute of the library's own metadata fast (about half the cost
    of :func:`read_attribute`): its type and shape are not looked at first.

    HDF5 converts any integer (or float) type to int64; an array attribute gives its first
    element (the buffer holds as many elements as the attribute has bytes, so a longer
    attribute cannot overrun it).

    Raises
    ------
    KeyError
        If the attribute does not exist.
    TypeError
        If it holds something HDF5 cannot convert to an integer (a string...).
    """
    attr = _open(oid, name)
    try:
        values = np.zeros(max(1, int(attr.get_storage_size())), dtype=_INT64)
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"read attribute {name!r}", exc) from exc
    try:
        attr.read(values, mtype=h5t.NATIVE_INT64)
    except (OSError, TypeError, ValueError) as exc:
        raise TypeError(f"attribute {name!r} is not an integer: {exc}") from None
    return int(values[0])


def write_int_attribute(oid: H5ObjectID, name: str, value: int, dtype: Any) -> None:
    """Write a scalar integer system attribute (``EXTDIM`` int32, ``NROWS`` int64, ...).

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name; an existing attribute is replaced.
    value : int
        The value; it must fit `dtype`.
    dtype : numpy dtype-like
        An integer (or bool) dtype, e.g. ``numpy.int32``.

    Raises
    ------
    TypeError
        If `dtype` is not an integer dtype.
    OverflowError
        If `value` does not fit in `dtype`.
    """
    np_dtype = np.dtype(dtype)
    if np_dtype.kind not in "iub":
        raise TypeError(f"attribute {name!r}: {np_dtype} is not an integer dtype")
    data = np.array(value, dtype=np_dtype)
    if data.ndim != 0:
        raise TypeError(f"attribute {name!r}: expected a scalar, got shape {data.shape}")
    ftype = atom_type(np_dtype, name)
    if _overwrite_scalar(oid, name, ftype, data):
        return
    _store(oid, name, Payload(ftype, SCALAR_SPACE, data, ftype))


def _overwrite_scalar(oid: H5ObjectID, name: str, ftype: h5t.TypeID, data: AnyArray) -> bool:
    """Write ``data`` over an existing scalar attribute of type ``ftype`` (a table's NROWS
    after each append), in place; False when there is none such to overwrite."""
    bname = _encode_name(name)
    try:
        if not h5a.exists(oid, bname):
            return False
        attr = h5a.open(oid, bname)
        if attr.get_space().get_simple_extent_type() != h5s.SCALAR or not attr.get_type().equal(
            ftype
        ):
            return False
        attr.write(data, mtype=ftype)
    except _H5_ERRORS as exc:
        raise _write_error(oid, "write", name, exc) from exc
    return True


# ----------------------------------------------------------------------------- management


def attribute_names(oid: H5ObjectID) -> list[str]:
    """List the attribute names of an object, in increasing name order.

    The order is HDF5's name index (byte order of the UTF-8 names, which is code point
    order: the same as ``sorted()``), whether or not creation order is tracked.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.

    Returns
    -------
    list of str
        The names.
    """
    names: list[bytes] = []
    try:
        h5a.iterate(oid, names.append, index_type=h5.INDEX_NAME, order=h5.ITER_INC)
    except _READ_ERRORS as exc:
        raise _read_error(oid, "list the attributes", exc) from exc
    return [_decode_name(raw) for raw in names]


def has_attribute(oid: H5ObjectID, name: str) -> bool:
    """Tell whether the object has an attribute called `name`.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name.

    Returns
    -------
    bool
        True if it exists.
    """
    bname = _encode_name(name)
    try:
        return bool(h5a.exists(oid, bname))
    except _READ_ERRORS as exc:
        raise _read_error(oid, f"look for attribute {name!r}", exc) from exc


def delete_attribute(oid: H5ObjectID, name: str) -> None:
    """Delete an attribute.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    name : str
        The attribute name.

    Raises
    ------
    KeyError
        If the attribute does not exist.
    """
    bname = _encode_name(name)
    if not has_attribute(oid, name):
        raise KeyError(f"attribute {name!r} does not exist")
    try:
        h5a.delete(oid, bname)
    except _H5_ERRORS as exc:
        raise _write_error(oid, "delete", name, exc) from exc


def rename_attribute(oid: H5ObjectID, old: str, new: str) -> None:
    """Rename an attribute, keeping its stored type and value as they are.

    An attribute already called `new` is replaced, as PyTables' ``_f_rename`` does.

    Parameters
    ----------
    oid : h5py ObjectID
        The group or dataset id.
    old, new : str
        The current and the new name.

    Raises
    ------
    KeyError
        If `old` does not exist.
    """
    bold, bnew = _encode_name(old), _encode_name(new)
    if not has_attribute(oid, old):
        raise KeyError(f"attribute {old!r} does not exist")
    if bold == bnew:
        return
    try:
        if h5a.exists(oid, bnew):
            h5a.delete(oid, bnew)
        h5a.rename(oid, bold, bnew)
    except _H5_ERRORS as exc:
        raise _write_error(oid, "rename", old, exc) from exc


def copy_attributes(
    src_oid: H5ObjectID, dst_oid: H5ObjectID, names: Iterable[str] | None = None
) -> None:
    """Copy attributes byte for byte (same type, dataspace and value) to another object.

    Parameters
    ----------
    src_oid, dst_oid : h5py ObjectID
        The source and destination groups or datasets (possibly in different files).
    names : iterable of str, optional
        The attributes to copy; all of them when omitted.  Existing attributes of the
        destination with these names are replaced.

    Raises
    ------
    KeyError
        If a name is missing in the source; nothing is copied then.
    """
    names = attribute_names(src_oid) if names is None else list(names)
    payloads = [(name, raw_payload(_open(src_oid, name))) for name in names]
    for name, payload in payloads:
        _store(dst_oid, name, payload, "copy")


def copy_attribute(src_oid: H5ObjectID, name: str, dst_oid: H5ObjectID, newname: str) -> None:
    """Copy one attribute byte for byte under another name (PyTables' undo log keeps
    attribute values this way), replacing an attribute ``newname`` of the destination.

    Raises
    ------
    KeyError
        If the source has no attribute ``name``.
    """
    _store(dst_oid, newname, raw_payload(_open(src_oid, name)), "copy")


__all__ = [
    "INT32_SYS_ATTRS",
    "INT64_SYS_ATTRS",
    "SYS_ATTRS",
    "SYS_ATTR_PREFIXES",
    "attribute_names",
    "copy_attribute",
    "copy_attributes",
    "delete_attribute",
    "has_attribute",
    "is_sys_attr_name",
    "read_attribute",
    "read_attribute_of",
    "read_int_attribute",
    "read_string_attribute",
    "read_string_attribute_of",
    "rename_attribute",
    "write_attribute",
    "write_int_attribute",
    "write_sys_string",
]

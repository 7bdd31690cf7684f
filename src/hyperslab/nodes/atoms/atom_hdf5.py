"""The atom PyTables reports for an HDF5 dataset type, as h5py describes it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hyperslab._typing import DTypeLike
from hyperslab.nodes.atoms.atom import (
    Atom,
    BoolAtom,
    ComplexAtom,
    EnumAtom,
    Int8Atom,
    ReferenceAtom,
)
from hyperslab.nodes.atoms.enum import Enum

_HDF5_CLASSES = frozenset(
    "INTEGER FLOAT TIME STRING BITFIELD OPAQUE COMPOUND REFERENCE ENUM VLEN ARRAY".split()
)


def _unsupported(h5class: str, dtype: np.dtype[Any]) -> TypeError:
    return TypeError(f"the HDF5 class ``H5T_{h5class}`` is not supported yet: {dtype!r}")


def _complex_or_error(dtype: np.dtype[Any]) -> Atom:
    # PyTables takes a compound of float fields named ('r', 'i') as complex.
    fields: Mapping[str, Any] = dtype.fields or {}
    if list(fields) == ["r", "i"] and all(f[0].kind == "f" for f in fields.values()):
        return ComplexAtom(2 * max(f[0].itemsize for f in fields.values()))
    raise _unsupported("COMPOUND", dtype)


def _element_atom(dtype: np.dtype[Any], h5class: str | None) -> Atom:
    """Atom of a scalar element type (neither subarray nor vlen)."""
    metadata: Mapping[str, Any] = dtype.metadata or {}
    if h5class == "BITFIELD":
        return BoolAtom()
    if h5class == "TIME":
        return Atom.from_kind("time", dtype.itemsize)
    if "ref" in metadata:
        if getattr(metadata["ref"], "__name__", None) != "Reference":
            raise _unsupported("REFERENCE", dtype)
        return ReferenceAtom()
    if "enum" in metadata:
        # PyTables names the first member (in HDF5's member order) as the default.
        members = metadata["enum"]
        enum = Enum({name: dtype.type(value) for name, value in members.items()})
        return EnumAtom(enum, next(iter(members)), Atom.from_dtype(dtype))
    if dtype.names is not None:
        return _complex_or_error(dtype)
    if h5class == "OPAQUE" or dtype.kind in "VMm":  # h5py: void, datetime64 -> OPAQUE
        raise _unsupported("OPAQUE", dtype)
    if dtype.kind == "b":
        # h5py writes bools as an int8 ENUM {FALSE: 0, TRUE: 1} and reads it back as bool.
        enum = Enum({"FALSE": np.int8(0), "TRUE": np.int8(1)})
        return EnumAtom(enum, "FALSE", Int8Atom())
    if dtype.kind == "O":
        raise TypeError(f"object dtype without h5py vlen or reference metadata: {dtype!r}")
    return Atom.from_dtype(dtype)


def atom_from_hdf5_dtype(
    dtype: DTypeLike, *, hdf5_class: str | None = None, dflt: Any = None
) -> Atom:
    """Return the atom PyTables reports for a dataset whose type h5py reads as `dtype`.

    Parameters
    ----------
    dtype : numpy.dtype
        The dtype h5py reports (with h5py's metadata for enums, vlens and references).
    hdf5_class : str, optional
        HDF5 class of the innermost element type (through ARRAY and VLEN), for what
        the dtype cannot tell: ``'BITFIELD'`` (PyTables' bools, read by h5py as
        uint8) gives BoolAtom, ``'TIME'`` gives Time32Atom or Time64Atom by item size
        (h5py cannot read TIME types: pass any dtype of that size).  Case and an
        ``'H5T_'`` prefix are ignored.
    dflt : object, optional
        The dataset's fill value: it becomes the atom's ``dflt`` as in PyTables (for an
        EnumAtom the default *name* stays the first member's).  None keeps the default.

    Returns
    -------
    Atom
        Byte order is dropped (``'>f8'`` gives Float64Atom); subarray dtypes give shaped
        atoms; a vlen dtype gives the atom of its elements (as VLArray reports it);
        h5py's bools (an int8 ENUM) give PyTables' EnumAtom of FALSE/TRUE.

    Raises
    ------
    TypeError
        What PyTables cannot load as an atom (vlen strings, region references,
        compounds other than complex, opaque types): the node is then UnImplemented.
    ValueError
        An unknown `hdf5_class`.
    """
    dtype = np.dtype(dtype)
    h5class = None if hdf5_class is None else hdf5_class.upper().removeprefix("H5T_")
    if h5class is not None and h5class not in _HDF5_CLASSES:
        raise ValueError(f"unknown HDF5 type class: {hdf5_class!r}")
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        atom = atom_from_hdf5_dtype(base, hdf5_class=h5class).copy(shape=shape)
    else:
        metadata: Mapping[str, Any] = dtype.metadata or {}
        element = metadata.get("vlen")
        if element is str or element is bytes:
            raise TypeError("variable length strings are not supported yet")
        if element is not None:
            atom = atom_from_hdf5_dtype(element, hdf5_class=h5class)
        else:
            atom = _element_atom(dtype, h5class)
    if dflt is not None and atom.dtype.base.kind != "O":
        _set_fill_value(atom, dflt)
    return atom


def _set_fill_value(atom: Atom, fill: Any) -> None:
    """Make a dataset's fill value the atom's default, as PyTables does on opening."""
    value = np.asarray(fill)
    if value.dtype.names == ("r", "i"):  # a complex compound h5py did not convert
        value = value["r"] + 1j * value["i"]
    value = np.array(value, dtype=atom.dtype.base)
    atom.dflt = value[()] if atom.shape == () else np.broadcast_to(value, atom.shape).copy()


__all__ = ["atom_from_hdf5_dtype"]

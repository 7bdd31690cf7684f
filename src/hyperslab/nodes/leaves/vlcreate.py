"""Creating VLArrays: the checks, chunk shape, element type and attributes PyTables uses."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from hyperslab._typing import Shape
from hyperslab.chunked.chunkshape import calc_chunksize
from hyperslab.codecs.filters import Filters
from hyperslab.codecs.pipeline import filters_to_pipeline
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.atoms.pseudoatom import PseudoAtom
from hyperslab.nodes.leaves.create import check_pipeline_available, with_byteorder
from hyperslab.nodes.leaves.vlarray import VLArray, storage_atom
from hyperslab.storage import attributes as raw
from hyperslab.storage import vlen
from hyperslab.storage.datasets import Dataset

_NO_ORDER_TYPES = frozenset({"string", "bool", "int8", "uint8", "object"})
"""Atom types whose byte order PyTables calls irrelevant."""

_SHUFFLE = 2
"""HDF5's shuffle filter id."""


def checked_atom(atom: Any) -> Atom | PseudoAtom:
    """``atom``, if a VLArray can hold it.

    Raises
    ------
    ValueError
        If ``atom`` is None or one of its dimensions is zero (as in PyTables).
    TypeError
        If ``atom`` is no atom.
    """
    if atom is None:
        raise ValueError("atom parameter cannot be None")
    if not isinstance(atom, (Atom, PseudoAtom)):
        raise TypeError(f"atom must be an Atom or a pseudo-atom, not {atom!r}")
    if 0 in tuple(atom.shape):
        raise ValueError("When creating VLArrays, none of the dimensions of the Atom "
                         "instance can be zero.")
    return atom


def checked_chunkshape(chunkshape: Any) -> Shape | None:
    """A VLArray's ``chunkshape`` argument as a 1-tuple (None stays None).

    Raises
    ------
    TypeError
        If it is neither an int nor a sequence.
    ValueError
        If its rank is not 1 or its size not positive.
    """
    if chunkshape is None:
        return None
    if isinstance(chunkshape, (int, np.integer)):
        chunkshape = (chunkshape,)
    try:
        shape = tuple(chunkshape)
    except TypeError:
        raise TypeError("`chunkshape` parameter must be an integer or sequence and you "
                        f"passed a {type(chunkshape)}") from None
    if len(shape) != 1:
        raise ValueError(f"`chunkshape` rank (length) must be 1: {shape!r}")
    if int(shape[0]) < 1:
        raise ValueError(f"`chunkshape` must be positive: {shape!r}")
    return (int(shape[0]),)


def default_chunkshape(atom: Atom | PseudoAtom, expectedrows: int) -> Shape:
    """PyTables' chunk shape for a VLArray: sized by the item size of one base element."""
    elemsize = storage_atom(atom).itemsize
    chunksize = calc_chunksize(expectedrows * elemsize / 1024**2)
    return (max(1, chunksize // elemsize),)


def element_dtype(atom: Atom | PseudoAtom, byteorder: str | None) -> np.dtype[Any]:
    """The dtype of one stored atom in the file's byte order (enums with h5py's metadata)."""
    stored = storage_atom(atom)
    base = stored.dtype.base
    members: dict[str, int] = {}
    if stored.kind == "enum":  # the default member first: PyTables' HDF5 member order
        default = stored._defname  # type: ignore[attr-defined]
        members[default] = int(stored.enum[default])  # type: ignore[attr-defined]
        members.update((name, int(value)) for name, value in stored.enum  # type: ignore[attr-defined]
                       if name != default)
        base = np.dtype(base, metadata={"enum": members})
    if stored.type not in _NO_ORDER_TYPES and base.kind not in "SUb":
        order = byteorder or sys.byteorder
        base = with_byteorder(base, order)
        if stored.kind == "enum":
            base = np.dtype(base, metadata={"enum": members})
    return np.dtype((base, tuple(stored.shape))) if stored.shape else base


def create_vlarray_dataset(
    parent_id: Any, name: str, atom: Atom | PseudoAtom, *, title: str, filters: Filters,
    chunkshape: Shape, byteorder: str | None, track_times: bool, sys_attrs: bool,
) -> Dataset:
    """Create the dataset of a new VLArray with its system attributes.

    Raises
    ------
    HDF5ExtError
        If the filters cannot apply to a VLArray (Blosc2, as in PyTables) or HDF5 refuses
        the dataset (Fletcher32 on variable-length data).
    ValueError
        For an invalid ``byteorder``.
    """
    if filters.complevel and (filters.complib or "").startswith("blosc2"):
        raise HDF5ExtError(f"Problems creating the VLArray: compression library "
                           f"{filters.complib!r} is not supported for VLArrays")
    stored = storage_atom(atom)
    dtype = element_dtype(atom, byteorder)
    element = vlen.element_file_type(dtype, time=stored.kind == "time")
    check_pipeline_available(filters)
    # HDF5 does not run the filters' set_local on variable-length data: PyTables' HDF5
    # shuffle step keeps no cd_values (it would get the type size there).
    pipeline = [(s.filter_id, s.flags, () if s.filter_id == _SHUFFLE else s.cd_values)
                for s in filters_to_pipeline(filters, stored.itemsize, chunkshape,
                                             classname="VLARRAY")]
    dataset = vlen.create_vlen_dataset(parent_id, name, element, chunkshape=chunkshape,
                                       pipeline=pipeline, track_times=track_times)
    if sys_attrs:
        raw.write_sys_string(dataset.dsid, "CLASS", VLArray._c_classid)
        raw.write_sys_string(dataset.dsid, "VERSION", VLArray._c_version)
        raw.write_sys_string(dataset.dsid, "TITLE", title)
    if isinstance(atom, PseudoAtom):
        raw.write_sys_string(dataset.dsid, "PSEUDOATOM", atom.kind)
    return dataset
